// Argument checks of the public entry points. Each costs O(tokens) at most and runs before any
// element is written, so a call that throws leaves the caller's buffers untouched.
#pragma once

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

// Whether a view's heads are laid out head after head within a token (the smaller stride is the
// head stride): then addresses grow with h first, then with t.
template <class T>
bool heads_inner(const View<T>& view) {
  return view.tokens() <= 1 || (view.heads() > 1 && view.head_stride() <= view.token_stride());
}

// Rows of `head_size` elements at data + t·token_stride + h·head_stride must not overlap: along
// the axis with the smaller stride a row must fit in its stride, and along the other axis the
// whole run of the first axis must fit.
template <class T>
void check_view(const char* name, const View<T>& view, std::size_t head_size) {
  if (view.tokens() == 0 || view.heads() == 0) return;  // no heads: nothing is read or written
  if (view.data() == nullptr) {
    ROPE_THROW(std::invalid_argument, std::string("rope: ") + name + " is a null pointer");
  }
  const bool many_tokens = view.tokens() > 1, many_heads = view.heads() > 1;
  const bool heads_inner = detail::heads_inner(view);
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

// The heads of a view that passed check_view, as byte addresses: head (t, h) covers
// [start + t·token + h·head, + length). Walked in address order (index i = the i-th lowest head),
// they are disjoint intervals.
struct HeadIntervals {
  std::int64_t start, token, head, length;
  std::size_t tokens, heads;
  bool heads_inner;

  template <class T>
  HeadIntervals(const View<T>& view, std::size_t head_size)
      : start(static_cast<std::int64_t>(reinterpret_cast<std::uintptr_t>(view.data()))),
        token(static_cast<std::int64_t>(view.token_stride() * sizeof(T))),
        head(static_cast<std::int64_t>(view.head_stride() * sizeof(T))),
        length(static_cast<std::int64_t>(head_size * sizeof(T))),
        tokens(view.tokens()),
        heads(view.heads()),
        heads_inner(detail::heads_inner(view)) {}

  std::size_t count() const { return tokens * heads; }
  std::size_t token_of(std::size_t i) const { return heads_inner ? i / heads : i % tokens; }
  std::size_t head_of(std::size_t i) const { return heads_inner ? i % heads : i / tokens; }
  std::int64_t address(std::size_t i) const {
    return start + static_cast<std::int64_t>(token_of(i)) * token +
           static_cast<std::int64_t>(head_of(i)) * head;
  }
  // One past the last byte of the highest head.
  std::int64_t end() const { return address(count() - 1) + length; }
};

// The first heads (i of a, j of b, in address order) that share a byte, found by merging the two
// sorted interval lists in O(a.count() + b.count()); false if there are none. With `in_place`, a
// head of a on the very bytes of the same (token, head) of b is not a conflict; `token_offset` is
// added to b's token indices for that comparison.
inline bool find_overlap(const HeadIntervals& a, const HeadIntervals& b, bool in_place,
                         std::int64_t token_offset, std::size_t& i, std::size_t& j) {
  for (i = 0, j = 0; i < a.count() && j < b.count();) {
    const std::int64_t x = a.address(i), y = b.address(j);
    const bool same_head = in_place && x == y && a.head_of(i) == b.head_of(j) &&
                           static_cast<std::int64_t>(a.token_of(i)) ==
                               static_cast<std::int64_t>(b.token_of(j)) + token_offset;
    if (!same_head && x < y + b.length && y < x + a.length) return true;
    if (same_head) {
      ++i, ++j;
    } else if (x + a.length <= y + b.length) {
      ++i;  // a's head ends first: no later head of b can reach back to it
    } else {
      ++j;
    }
  }
  return false;
}

// Finds heads of a and b that overlap, as (token, head) of each; false if there are none (heads
// on the same bytes as the same (token, head) of the other view do not count with `in_place`).
//
// Buffers far apart cost O(1). Views that interleave with the same token stride, both token
// major (q and k of a fused QKV buffer), cost O(heads): token t of a meets token t + k of b the
// same way for every t, and since a token's heads span at most one token stride, only two
// values of k can meet. Other interleavings are merged head by head, O(tokens · heads).
inline bool overlapping_heads(const HeadIntervals& a, const HeadIntervals& b, bool in_place,
                              std::size_t (&at)[2], std::size_t (&bt)[2]) {
  if (a.count() == 0 || b.count() == 0 || a.end() <= b.start || b.end() <= a.start) return false;
  std::size_t i = 0, j = 0;
  const bool periodic = (a.heads_inner || a.heads == 1) && (b.heads_inner || b.heads == 1) &&
                        a.tokens == b.tokens && a.tokens > 1 && a.token == b.token;
  if (!periodic) {
    if (!find_overlap(a, b, in_place, 0, i, j)) return false;
    at[0] = a.token_of(i), at[1] = a.head_of(i), bt[0] = b.token_of(j), bt[1] = b.head_of(j);
    return true;
  }
  // Token 0 of a against token k of b, for the k (|k| < tokens) whose spans can intersect:
  // b.start + k·token < a.start + a_span and a.start < b.start + k·token + b_span.
  const std::int64_t stride = a.token;
  const auto span = [](const HeadIntervals& v) {
    return static_cast<std::int64_t>(v.heads - 1) * v.head + v.length;
  };
  HeadIntervals one_a = a, one_b = b;
  one_a.tokens = one_b.tokens = 1;
  one_a.heads_inner = one_b.heads_inner = true;
  const std::int64_t lowest = (a.start - b.start - span(b)) / stride - 1;
  for (std::int64_t k = lowest; k <= lowest + 3; ++k) {
    const std::int64_t tokens = static_cast<std::int64_t>(a.tokens);
    if (k <= -tokens || k >= tokens) continue;
    one_b.start = b.start + k * stride;
    if (!find_overlap(one_a, one_b, in_place, k, i, j)) continue;
    const std::int64_t t = k < 0 ? -k : 0;  // the first token pair (t, t + k) inside both views
    at[0] = static_cast<std::size_t>(t), at[1] = i;
    bt[0] = static_cast<std::size_t>(t + k), bt[1] = j;
    return true;
  }
  return false;
}

// Each head of src must share no byte with dst but for the same (token, head) of dst at the
// same address (in place); q and k must share no byte at all.
template <class T, class U>
void check_disjoint(const char* a_name, const View<T>& a, const char* b_name, const View<U>& b,
                    std::size_t head_size, bool in_place_allowed) {
  const bool same_heads =
      static_cast<const void*>(a.data()) == static_cast<const void*>(b.data()) &&
      (a.tokens() <= 1 || a.token_stride() == b.token_stride()) &&
      (a.heads() <= 1 || a.head_stride() == b.head_stride());
  if (same_heads && in_place_allowed) return;  // in place: O(1)
  std::size_t at[2], bt[2];
  if (!overlapping_heads(HeadIntervals(a, head_size), HeadIntervals(b, head_size), in_place_allowed,
                         at, bt)) {
    return;
  }
  ROPE_THROW(std::invalid_argument,
             std::string("rope: ") + a_name + " head (token " + str(at[0]) + ", head " +
                 str(at[1]) + ") overlaps " + b_name + " head (token " + str(bt[0]) + ", head " +
                 str(bt[1]) + "): " + a_name + " and " + b_name +
                 (in_place_allowed ? " must be the same heads (in place) or disjoint"
                                   : " must be disjoint"));
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

// Checks the positions of tokens [range.first, range.last); an empty range reads none.
inline void check_positions(const Positions& positions, TokenRange range) {
  if (positions.is_null() && range.first < range.last) {
    ROPE_THROW(std::invalid_argument, "rope: positions is a null pointer");
  }
  positions.visit([&](auto position_of) {
    for (std::size_t t = range.first; t < range.last; ++t) check_position(position_of(t), t);
  });
}

// Multi-axis positions: as many axes as the Rotary has, each coordinate in [0, 2^53 − 1].
inline void check_axis_positions(const AxisPositions& positions, TokenRange range,
                                 std::size_t axes) {
  if (range.first == range.last) return;
  if (positions.is_null()) {
    ROPE_THROW(std::invalid_argument, "rope: positions is a null pointer");
  }
  if (positions.axes() != axes) {
    ROPE_THROW(std::invalid_argument, "rope: the positions have " + str(positions.axes()) +
                                          " coordinates per token but the Rotary has " + str(axes) +
                                          " axes");
  }
  for (std::size_t t = range.first; t < range.last; ++t) {
    for (std::size_t a = 0; a < axes; ++a) {
      const std::int64_t p = positions(t, a);
      if (p < 0 || p > kMaxPosition) {
        ROPE_THROW(std::out_of_range,
                   "rope: coordinate " + str(a) + " of token " + str(t) + ", " + std::to_string(p) +
                       ", is outside [0, 2^53 - 1 = " + std::to_string(kMaxPosition) + "]");
      }
    }
  }
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
