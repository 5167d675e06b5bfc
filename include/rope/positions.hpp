// The position of each token in a call: one coordinate per token, or several (multi-axis RoPE).
#pragma once

#include <rope/config.hpp>
#if !defined(ROPE_BELOW_CXX17)  // config.hpp stops older standards with one #error

#include <cstddef>
#include <cstdint>

namespace rope {
inline namespace ROPE_DETAIL_ISA {

/// The largest position (and cache row, and shift) any call takes: 2^53 − 1. Angles m·θ_j are
/// computed in double, in which every integer up to 2^53 is exact.
inline constexpr std::int64_t kMaxPosition = (std::int64_t{1} << 53) - 1;

/// Where each token of a call sits: one coordinate per token, as an int64 array (PyTorch's
/// position_ids), an int32 array (llama.cpp and most engines) or the run first, first + 1, ...;
/// or several coordinates per token for multi-axis RoPE (Options::axes), coordinate a of token t
/// at data[a·axis_stride + t·token_stride].
///
///     rot.apply(x, tokens, heads, position_ids);                        // const int64_t*
///     rot.apply(x, tokens, heads, rope::Positions::consecutive(past));  // past, past + 1, ...
///     // HuggingFace's multi-axis position_ids of shape (3, tokens):
///     rot.apply(x, tokens, heads, rope::Positions::axis_major(position_ids, 3, tokens));
///
/// A double array holds fractional coordinates (LTX-Video's normalised grid): a Rotary computes
/// each token's row from them (cos and sin of the double angle x·θ_j, each within one ulp of the
/// compute type) instead of reading its table. The integer arrays read the table's rows; a
/// CachedRotary and a query scale, whose rows and factors are indexed by position, refuse a double
/// array.
///
/// Token t of a call is the t-th head row of its View, counted over the batch: token t of a
/// View of B sequences of S tokens is token t mod S of sequence t / S, so an array holds B·S
/// entries, [batch][seq]; consecutive(first) restarts at `first` in every sequence.
///
/// Holds a pointer, not a copy: the array must outlive the call it is passed to.
class Positions {
 public:
  /// positions[t] is the position of token t.
  Positions(const std::int64_t* positions) noexcept  // NOLINT(google-explicit-constructor)
      : int64_(positions) {}
  /// positions[t] is the position of token t.
  Positions(const std::int32_t* positions) noexcept  // NOLINT(google-explicit-constructor)
      : int32_(positions) {}
  /// positions[t] is the fractional position of token t.
  Positions(const double* positions) noexcept  // NOLINT(google-explicit-constructor)
      : double_(positions) {}

  /// `axes` coordinates per token: coordinate a of token t is data[a·axis_stride +
  /// t·token_stride].
  Positions(const std::int64_t* data, std::size_t axes, std::size_t axis_stride,
            std::size_t token_stride) noexcept
      : int64_(data), axes_(axes), axis_stride_(axis_stride), token_stride_(token_stride) {}
  Positions(const std::int32_t* data, std::size_t axes, std::size_t axis_stride,
            std::size_t token_stride) noexcept
      : int32_(data), axes_(axes), axis_stride_(axis_stride), token_stride_(token_stride) {}
  Positions(const double* data, std::size_t axes, std::size_t axis_stride,
            std::size_t token_stride) noexcept
      : double_(data), axes_(axes), axis_stride_(axis_stride), token_stride_(token_stride) {}

  /// Token t is at position first + t (first + t mod S in a batch of sequences of S tokens).
  static Positions consecutive(std::int64_t first) noexcept {
    Positions p(static_cast<const std::int64_t*>(nullptr));
    p.first_ = first;
    p.consecutive_ = true;
    return p;
  }

  /// [axes][tokens]: all tokens' coordinate 0, then all tokens' coordinate 1, ... (HuggingFace's
  /// position_ids of shape (3, seq), vLLM's positions [3][tokens]).
  template <class Int>
  static Positions axis_major(const Int* data, std::size_t axes, std::size_t tokens) noexcept {
    return Positions(data, axes, tokens, 1);
  }
  /// [tokens][axes]: the coordinates of token 0, then those of token 1, ...
  template <class Int>
  static Positions token_major(const Int* data, std::size_t axes) noexcept {
    return Positions(data, axes, 1, axes);
  }

  /// Coordinates per token: 1 but for multi-axis positions.
  std::size_t axes() const noexcept { return axes_; }
  /// Whether an array is expected but none was given.
  bool is_null() const noexcept {
    return !consecutive_ && int64_ == nullptr && int32_ == nullptr && double_ == nullptr;
  }
  bool is_consecutive() const noexcept { return consecutive_; }
  /// Whether the coordinates are doubles (fractional positions).
  bool is_fractional() const noexcept { return double_ != nullptr; }
  /// The first position of consecutive(first).
  std::int64_t first() const noexcept { return first_; }
  /// The array (nullptr for consecutive positions), its element size and its strides.
  const void* data() const noexcept {
    if (double_ != nullptr) return double_;
    return int64_ != nullptr ? static_cast<const void*>(int64_) : static_cast<const void*>(int32_);
  }
  std::size_t element_size() const noexcept {
    if (double_ != nullptr) return sizeof(double);
    return int64_ != nullptr ? sizeof(std::int64_t) : sizeof(std::int32_t);
  }
  std::size_t axis_stride() const noexcept { return axis_stride_; }
  std::size_t token_stride() const noexcept { return token_stride_; }

  /// Coordinate `axis` of token `token` of one sequence (consecutive: first + token).
  /// Unchecked. Integer positions only: 0 for fractional ones, which coordinate() reads (this
  /// is read for every token, and a conversion here cost the integer calls 1–2 %).
  std::int64_t operator()(std::size_t token, std::size_t axis = 0) const noexcept {
    if (consecutive_) return first_ + static_cast<std::int64_t>(token);
    const std::size_t i = axis * axis_stride_ + token * token_stride_;
    if (int64_ != nullptr) return int64_[i];
    return int32_ != nullptr ? std::int64_t{int32_[i]} : 0;
  }

  /// Coordinate `axis` of token `token` of a call whose sequences are `sequence` tokens long.
  std::int64_t at(std::size_t token, std::size_t axis, std::size_t sequence) const noexcept {
    if (consecutive_) return first_ + static_cast<std::int64_t>(token % sequence);
    return (*this)(token, axis);
  }

  /// The same coordinate as a double, fractional or not. Unchecked.
  double coordinate(std::size_t token, std::size_t axis, std::size_t sequence) const noexcept {
    if (double_ == nullptr) return static_cast<double>(at(token, axis, sequence));
    return double_[axis * axis_stride_ + token * token_stride_];
  }

 private:
  const std::int64_t* int64_ = nullptr;
  const std::int32_t* int32_ = nullptr;
  const double* double_ = nullptr;
  std::size_t axes_ = 1;
  std::size_t axis_stride_ = 0;
  std::size_t token_stride_ = 1;
  std::int64_t first_ = 0;
  bool consecutive_ = false;
};

}  // namespace ROPE_DETAIL_ISA
}  // namespace rope

#endif  // !ROPE_BELOW_CXX17
