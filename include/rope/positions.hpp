// The position of each token in a batch.
#pragma once

#include <cstddef>
#include <cstdint>

namespace rope {

/// Where each token of a call sits in its sequence: an array with one position per token, as
/// int64 (PyTorch's position_ids) or int32 (llama.cpp and most engines), or the run
/// first, first+1, ... (prefill from a cache offset, or a decode step).
///
///     rot.apply(x, tokens, heads, position_ids);                        // const int64_t*
///     rot.apply(x, tokens, heads, rope::Positions::consecutive(past));  // past, past+1, ...
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

  /// Token t is at position first + t.
  static Positions consecutive(std::int64_t first) noexcept {
    Positions p(static_cast<const std::int64_t*>(nullptr));
    p.first_ = first;
    p.consecutive_ = true;
    return p;
  }

  /// Whether an array is expected but none was given.
  bool is_null() const noexcept { return !consecutive_ && int64_ == nullptr && int32_ == nullptr; }

  /// Calls f with a callable `position(t) -> std::int64_t`, a different type for each kind of
  /// Positions, so that a loop inside f is compiled once per kind and chooses nothing per token.
  template <class F>
  decltype(auto) visit(F&& f) const {
    if (consecutive_) return f([first = first_](std::size_t t) { return first + std::int64_t(t); });
    if (int32_ != nullptr) return f([p = int32_](std::size_t t) { return std::int64_t{p[t]}; });
    return f([p = int64_](std::size_t t) { return p[t]; });
  }

 private:
  const std::int64_t* int64_ = nullptr;
  const std::int32_t* int32_ = nullptr;
  std::int64_t first_ = 0;
  bool consecutive_ = false;
};

/// Several coordinates per token, for multi-axis RoPE (see Axes): coordinate a of token t is
/// data[a·axis_stride + t·token_stride], int64 or int32.
///
///     // HuggingFace's position_ids of shape (3, tokens), vLLM's positions [3][tokens]:
///     rot.apply(x, tokens, heads, rope::AxisPositions::axis_major(position_ids, 3, tokens));
///     // (t, h, w) triples one after another, as rope::MultimodalPositions builds them:
///     rot.apply(x, tokens, heads, rope::AxisPositions::token_major(triples, 3));
///
/// Holds a pointer, not a copy: the array must outlive the call it is passed to.
class AxisPositions {
 public:
  AxisPositions(const std::int64_t* data, std::size_t axes, std::size_t axis_stride,
                std::size_t token_stride) noexcept
      : int64_(data), axes_(axes), axis_stride_(axis_stride), token_stride_(token_stride) {}
  AxisPositions(const std::int32_t* data, std::size_t axes, std::size_t axis_stride,
                std::size_t token_stride) noexcept
      : int32_(data), axes_(axes), axis_stride_(axis_stride), token_stride_(token_stride) {}

  /// [axes][tokens]: all tokens' coordinate 0, then all tokens' coordinate 1, ...
  template <class Int>
  static AxisPositions axis_major(const Int* data, std::size_t axes, std::size_t tokens) noexcept {
    return AxisPositions(data, axes, tokens, 1);
  }
  /// [tokens][axes]: the coordinates of token 0, then those of token 1, ...
  template <class Int>
  static AxisPositions token_major(const Int* data, std::size_t axes) noexcept {
    return AxisPositions(data, axes, 1, axes);
  }

  std::size_t axes() const noexcept { return axes_; }
  bool is_null() const noexcept { return int64_ == nullptr && int32_ == nullptr; }

  /// Coordinate `axis` of token `token`.
  std::int64_t operator()(std::size_t token, std::size_t axis) const noexcept {
    const std::size_t i = axis * axis_stride_ + token * token_stride_;
    return int64_ != nullptr ? int64_[i] : std::int64_t{int32_[i]};
  }

 private:
  const std::int64_t* int64_ = nullptr;
  const std::int32_t* int32_ = nullptr;
  std::size_t axes_;
  std::size_t axis_stride_;
  std::size_t token_stride_;
};

}  // namespace rope
