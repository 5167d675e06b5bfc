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

}  // namespace rope
