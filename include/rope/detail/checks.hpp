// Argument checks of the public entry points. Each costs O(tokens) at most and runs before any
// element is written, so a call that throws leaves the caller's buffers untouched.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include <rope/config.hpp>
#include <rope/execution.hpp>
#include <rope/positions.hpp>
#include <rope/view.hpp>

namespace rope::detail {

inline std::string str(std::size_t n) { return std::to_string(n); }

// Rows of `head_size` elements at data + t·token_stride + h·head_stride must not overlap: along
// the axis with the smaller stride a row must fit in its stride, and along the other axis the
// whole run of the first axis must fit.
template <class T>
void check_view(const char* name, const View<T>& view, std::size_t head_size) {
  if (view.data() == nullptr) {
    ROPE_THROW(std::invalid_argument, std::string("rope: ") + name + " is a null pointer");
  }
  const bool many_tokens = view.tokens() > 1, many_heads = view.heads() > 1;
  const bool heads_inner =
      !many_tokens || (many_heads && view.head_stride() <= view.token_stride());
  const char* inner_name = heads_inner ? "head_stride" : "token_stride";
  const std::size_t inner = heads_inner ? view.head_stride() : view.token_stride();
  const std::size_t inner_count = heads_inner ? view.heads() : view.tokens();
  const std::size_t outer = heads_inner ? view.token_stride() : view.head_stride();
  if ((heads_inner ? many_heads : many_tokens) && inner < head_size) {
    ROPE_THROW(std::invalid_argument, std::string("rope: ") + name + " " + inner_name + " " +
                                          str(inner) + " is smaller than the head size " +
                                          str(head_size) + ": heads would overlap");
  }
  if (many_tokens && many_heads && outer < inner_count * inner) {
    ROPE_THROW(std::invalid_argument,
               std::string("rope: ") + name + " " + (heads_inner ? "token_stride" : "head_stride") +
                   " " + str(outer) + " is smaller than " + str(inner_count) + " x " + inner_name +
                   " " + str(inner) + " = " + str(inner_count * inner) + ": heads would overlap");
  }
}

inline void check_head_size(std::size_t head_size) {
  if (head_size == 0 || head_size % 2 != 0) {
    ROPE_THROW(std::invalid_argument,
               "rope: head_size " + str(head_size) + " must be even and at least 2");
  }
}

// The head size must be even, and the rotated slice [offset, offset + rotary_dim) even and inside
// the head; rotary_dim 0 means the whole head. Returns the rotary_dim.
inline std::size_t checked_rotary_dim(std::size_t head_size, std::size_t rotary_dim,
                                      std::size_t offset) {
  check_head_size(head_size);
  const std::size_t dim = rotary_dim == 0 ? head_size : rotary_dim;
  if (dim % 2 != 0) {
    ROPE_THROW(std::invalid_argument, "rope: rotary_dim " + str(dim) + " must be even");
  }
  if (offset > head_size || dim > head_size - offset) {
    ROPE_THROW(std::invalid_argument, "rope: rotary_offset " + str(offset) + " + rotary_dim " +
                                          str(dim) + " exceeds the head size " + str(head_size));
  }
  return dim;
}

template <class T>
void check_same_shape(const View<const T>& src, const View<T>& dst) {
  if (src.tokens() != dst.tokens() || src.heads() != dst.heads()) {
    ROPE_THROW(std::invalid_argument, "rope: src is " + str(src.tokens()) + " tokens x " +
                                          str(src.heads()) + " heads but dst is " +
                                          str(dst.tokens()) + " tokens x " + str(dst.heads()) +
                                          " heads");
  }
}

/// The largest position: angles m·θ_j are computed in double, exact for integers up to 2^53.
inline constexpr std::int64_t kMaxPosition = (std::int64_t{1} << 53) - 1;

inline void check_position(std::int64_t position, std::size_t token) {
  if (position < 0 || position > kMaxPosition) {
    ROPE_THROW(std::out_of_range,
               "rope: position " + std::to_string(position) + " of token " + str(token) +
                   " is outside [0, 2^53 - 1 = " + std::to_string(kMaxPosition) + "]");
  }
}

// A shift by delta rotates by |delta| positions, forward or inverse.
inline void check_shift(std::int64_t delta) {
  if (delta < -kMaxPosition || delta > kMaxPosition) {
    ROPE_THROW(std::out_of_range, "rope: shift delta " + std::to_string(delta) +
                                      " is outside [-(2^53 - 1), 2^53 - 1]");
  }
}

// Checks the positions of tokens [range.first, range.last) and returns the largest (−1 for an
// empty range).
inline std::int64_t check_positions(const Positions& positions, TokenRange range) {
  if (positions.is_null()) {
    ROPE_THROW(std::invalid_argument, "rope: positions is a null pointer");
  }
  std::int64_t largest = -1;
  positions.visit([&](auto position_of) {
    for (std::size_t t = range.first; t < range.last; ++t) {
      const std::int64_t position = position_of(t);
      check_position(position, t);
      largest = std::max(largest, position);
    }
  });
  return largest;
}

inline void check_range(TokenRange range, std::size_t tokens) {
  if (range.first > range.last || range.last > tokens) {
    ROPE_THROW(std::out_of_range, "rope: token range [" + str(range.first) + ", " +
                                      str(range.last) + ") is not inside the " + str(tokens) +
                                      " tokens of the batch");
  }
}

/// Streaming stores write whole cache lines: dst must start on one.
inline constexpr std::size_t kStreamingAlignment = 64;

template <class T>
void check_streaming(const View<const T>& src, const View<T>& dst) {
  if (src.data() == dst.data()) {
    ROPE_THROW(std::invalid_argument,
               "rope: streaming stores are for out-of-place calls, but src and dst are the same "
               "buffer");
  }
  const auto misalignment = reinterpret_cast<std::uintptr_t>(dst.data()) % kStreamingAlignment;
  if (misalignment != 0) {
    ROPE_THROW(std::invalid_argument, "rope: streaming stores need dst aligned to " +
                                          str(kStreamingAlignment) + " bytes, but dst is " +
                                          str(misalignment) + " bytes past a boundary");
  }
}

}  // namespace rope::detail
