// Argument checks of the public entry points. Each costs O(tokens) at most and runs before any
// element is written, so a call that throws leaves the caller's buffers untouched.
//
// The checks see a view through its Geometry (addresses in bytes), not its element type, so a
// program compiles them once whatever types it rotates.
#pragma once

#include <rope/config.hpp>
#if !defined(ROPE_BELOW_CXX17)  // config.hpp stops older standards with one #error

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include <rope/detail/geometry.hpp>
#include <rope/execution.hpp>
#include <rope/key_cache.hpp>
#include <rope/positions.hpp>
#include <rope/qk_norm.hpp>
#include <rope/view.hpp>

namespace rope {
inline namespace ROPE_DETAIL_ISA {
namespace detail {

// Whether a view's heads are laid out head after head within a token (the smaller stride is the
// head stride): then addresses grow with h first, then with t.
inline bool heads_inner(const Geometry& view) {
  return view.tokens <= 1 || (view.heads > 1 && view.head_stride <= view.token_stride);
}

/// The farthest a view may reach from its first element, in bytes (PTRDIFF_MAX).
inline constexpr std::size_t kMaxViewBytes = static_cast<std::size_t>(PTRDIFF_MAX);
// 2^28 on a 64-bit target: 3 runs of (kSmall − 1)² steps of 8 bytes, and a head, stay below
// kMaxViewBytes / 4.
inline constexpr std::size_t kSmall = std::size_t{1} << (sizeof(std::size_t) * 8 / 2 - 4);

// The strides are unsigned: a negative stride cast to size_t is near 2^64 and would reach below
// data. Each stride's run, and the view's whole extent, must stay within kMaxViewBytes of data,
// and data plus the extent must not wrap around the address space.
inline void check_extent(const char* name, const Geometry& view, std::size_t head_size) {
  // Elements of at most 8 bytes, and counts, steps and a head size all below kSmall, keep the
  // extent below kMaxViewBytes / 4: no quotient is needed to know that. The common case; the
  // divisions it skips were most of a decode call's checks.
  const bool small =
      view.element <= 8 && (head_size | view.batches | view.batch_step | view.tokens |
                            view.token_step | view.heads | view.head_step) < kSmall;
  if (!small && head_size > kMaxViewBytes / view.element) {
    invalid("rope: %s heads of %zu elements exceed %zu bytes", name, head_size, kMaxViewBytes);
  }
  std::size_t extent = head_size * view.element;
  // The axes one at a time, from the view's own fields: an array of them, which the compiler
  // filled with vector loads of fields the caller had just stored one by one, stalled each
  // call on those stores (a sixth of a one-head call's time).
  const auto add_run = [&](const char* stride, std::size_t count, std::size_t step) {
    if (count <= 1) return;
    if (!small && step > kMaxViewBytes / view.element / (count - 1)) {
      invalid(
          "rope: %s %s %zu reaches %zu x %zu elements past the first: more than %zu bytes (a "
          "stride that wraps around, as a negative one cast to size_t, is not supported)",
          name, stride, step, count - 1, step, kMaxViewBytes);
    }
    const std::size_t run = step * view.element * (count - 1);
    if (run > kMaxViewBytes - extent) {
      invalid("rope: %s spans more than %zu bytes from its first element", name, kMaxViewBytes);
    }
    extent += run;
  };
  add_run("batch_stride", view.batches, view.batch_step);
  add_run("token_stride", view.tokens, view.token_step);
  add_run("head_stride", view.heads, view.head_step);
  if (view.data > UINTPTR_MAX - extent) {
    invalid("rope: %s at %#zx spans %zu bytes: past the end of the address space", name,
            static_cast<std::size_t>(view.data), extent);
  }
}

// The reach of a view whose heads reach `extent` elements from their first (check_view's and
// check_strided_view's): its rows counted in a size_t, its data given, its strides' runs within
// kMaxViewBytes (check_extent), and the buffer's length, where given, holding its last head.
// False for a view without heads: nothing is read or written.
ROPE_DETAIL_INLINE bool check_reach(const char* name, const Geometry& view, std::size_t extent) {
  if (view.batches > 1 && view.tokens != 0 && view.batches > SIZE_MAX / view.tokens) {
    invalid("rope: %s has %zu sequences x %zu tokens: more rows than a size_t counts", name,
            view.batches, view.tokens);
  }
  if (view.rows() == 0 || view.heads == 0) return false;
  if (view.data == 0) invalid("rope: %s is a null pointer", name);
  check_extent(name, view, extent);
  if (view.buffer != View<char>::unknown) {  // after check_extent: end() does not wrap around
    const std::size_t needed = view.span_elements(extent);
    if (needed > view.buffer) {
      invalid("rope: %s needs %zu elements from its first, but its buffer holds %zu", name, needed,
              view.buffer);
    }
  }
  return true;
}

// Sequences follow one another: batch_stride at least the span of one sequence, for heads that
// reach `extent` elements.
ROPE_DETAIL_INLINE void check_sequences_apart(const char* name, const Geometry& view,
                                              std::size_t extent) {
  if (view.batches > 1 && view.batch_stride < view.span(extent)) {
    invalid(
        "rope: %s batch_stride %zu is smaller than the span of one sequence, %zu elements: "
        "sequences would overlap",
        name, view.elements(view.batch_stride), view.elements(view.span(extent)));
  }
}

// Rows of `head_size` elements at data + t·token_stride + h·head_stride must not overlap: along
// the axis with the smaller stride a row must fit in its stride, and along the other axis the
// whole run of the first axis must fit. Sequences follow one another: batch_stride at least the
// span of one sequence.
ROPE_DETAIL_NOINLINE inline void check_view(const char* name, const Geometry& view,
                                            std::size_t head_size) {
  if (!check_reach(name, view, head_size)) return;
  const bool many_tokens = view.tokens > 1, many_heads = view.heads > 1;
  const bool inner_heads = heads_inner(view);
  const char* inner_name = inner_heads ? "head_stride" : "token_stride";
  const std::size_t inner = inner_heads ? view.head_step : view.token_step;
  const std::size_t inner_count = inner_heads ? view.heads : view.tokens;
  const std::size_t outer = inner_heads ? view.token_step : view.head_step;
  if ((inner_heads ? many_heads : many_tokens) && inner < head_size) {
    invalid("rope: %s %s %zu is smaller than the head size %zu: heads would overlap", name,
            inner_name, inner, head_size);
  }
  if (many_tokens && many_heads && outer < inner_count * inner) {
    invalid("rope: %s %s %zu is smaller than %zu x %s %zu = %zu: heads would overlap", name,
            inner_heads ? "token_stride" : "head_stride", outer, inner_count, inner_name, inner,
            inner_count * inner);
  }
  check_sequences_apart(name, view, head_size);
}

// A cache view whose heads' coordinates `c` strides (not contiguous): check_view's reach and
// sequences for heads of c.extent(head_size) elements, but heads that may interleave. Its heads do
// not share an element where the three axes (coordinate runs, tokens, heads), taken from the
// smallest stride up, each step past what the axes below it span; sequences follow one another.
// A cache of blocks cannot have such coordinates (E89, first).
ROPE_DETAIL_COLD ROPE_DETAIL_NOINLINE inline void check_strided_view(const char* name,
                                                                     const Geometry& view,
                                                                     std::size_t head_size,
                                                                     const Coordinates& c,
                                                                     bool blocks) {
  if (blocks) {
    invalid(
        "rope: the %s's heads are blocks of 32 values, contiguous: they take no strided "
        "coordinates (Coordinates::strided, Coordinates::runs)",
        name);
  }
  if (c.stride < c.run) {
    invalid(
        "rope: the %s's coordinates in runs of %zu, %zu apart, would overlap: the stride "
        "must be at least the run",
        name, c.run, c.stride);
  }
  const std::size_t runs = head_size == 0 ? 0 : (head_size - 1) / c.run;  // runs past the first
  if (runs != 0 && c.stride > kMaxViewBytes / view.element / runs) {
    invalid(
        "rope: the %s's coordinate stride %zu reaches %zu x %zu elements past a head's first: "
        "more than %zu bytes",
        name, c.stride, runs, c.stride, kMaxViewBytes);
  }
  const std::size_t extent = c.extent(head_size);
  if (!check_reach(name, view, extent)) return;
  struct Axis {
    const char* name;
    std::size_t step, count;
  };
  Axis axes[3] = {{"coordinate stride", c.stride, runs + 1},
                  {"token_stride", view.token_step, view.tokens},
                  {"head_stride", view.head_step, view.heads}};
  std::sort(axes, axes + 3, [](const Axis& a, const Axis& b) { return a.step < b.step; });
  std::size_t spanned = std::min(c.run, head_size);  // elements the axes below reach
  for (const Axis& a : axes) {
    if (a.count <= 1) continue;
    if (a.step < spanned) {
      invalid(
          "rope: %s %s %zu is smaller than %zu, the elements the strides below it span: "
          "heads would overlap",
          name, a.name, a.step, spanned);
    }
    spanned += (a.count - 1) * a.step;
  }
  check_sequences_apart(name, view, extent);
}

// The head size must be even, and the rotated slice [offset, offset + rotary_dim) even and inside
// the head; rotary_dim 0 means the whole head. Returns the rotary_dim.
ROPE_DETAIL_COLD inline std::size_t checked_rotary_dim(std::size_t head_size,
                                                       std::size_t rotary_dim, std::size_t offset) {
  check_head_size(head_size);
  const std::size_t dim = rotary_dim == 0 ? head_size : rotary_dim;
  if (dim % 2 != 0) invalid("rope: rotary_dim %zu must be even", dim);
  if (offset > head_size || dim > head_size - offset) {
    invalid("rope: rotary_offset %zu + rotary_dim %zu exceeds the head size %zu", offset, dim,
            head_size);
  }
  return dim;
}

// The pairs that rotate: all but a trailing run of θ_j = 0, pairs that do not rotate (the
// proportional scheme's). A θ_j = 0 before a θ_k > 0 is an error, and so is θ all 0: the kernels
// leave only the last pairs alone, so that those come out bit for bit unchanged.
ROPE_DETAIL_COLD inline std::size_t rotating_pairs(const std::vector<double>& theta) {
  std::size_t n = theta.size();
  while (n > 0 && theta[n - 1] == 0.0) --n;
  if (n == 0) {
    invalid("rope: all %zu theta_j are 0: no pair rotates (a layer without RoPE needs no Rotary)",
            theta.size());
  }
  for (std::size_t j = 0; j < n; ++j) {
    if (theta[j] == 0.0) {
      invalid(
          "rope: theta_%zu is 0 but theta_%zu is not: pairs that do not rotate must be the last", j,
          n - 1);
    }
  }
  return n;
}

// The error of check_same_shape.
[[noreturn]] ROPE_DETAIL_COLD inline void different_shapes(const char* a_name, const Geometry& a,
                                                           const char* b_name, const Geometry& b) {
  if (a.batches == 1 && b.batches == 1) {
    invalid("rope: %s is %zu tokens x %zu heads but %s is %zu tokens x %zu heads", a_name, a.tokens,
            a.heads, b_name, b.tokens, b.heads);
  }
  invalid(
      "rope: %s is %zu sequences x %zu tokens x %zu heads but %s is %zu sequences x %zu "
      "tokens x %zu heads",
      a_name, a.batches, a.tokens, a.heads, b_name, b.batches, b.tokens, b.heads);
}

inline void check_same_shape(const char* a_name, const Geometry& a, const char* b_name,
                             const Geometry& b) {
  if (a.batches != b.batches || a.tokens != b.tokens || a.heads != b.heads) {
    different_shapes(a_name, a, b_name, b);
  }
}

// The heads of one sequence of a view that passed check_view, as byte addresses: head (t, h)
// covers [start + t·token + h·head, + length). Walked in address order (index i = the i-th
// lowest head), they are disjoint intervals.
struct HeadIntervals {
  std::int64_t start, token, head, length;
  std::size_t tokens, heads;
  bool heads_inner;

  HeadIntervals(const Geometry& view, std::size_t head_size)
      : start(static_cast<std::int64_t>(view.data)),
        token(static_cast<std::int64_t>(view.token_stride)),
        head(static_cast<std::int64_t>(view.head_stride)),
        length(static_cast<std::int64_t>(head_size * view.element)),
        tokens(view.tokens),
        heads(view.heads),
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
ROPE_DETAIL_COLD inline bool find_overlap(const HeadIntervals& a, const HeadIntervals& b,
                                          bool in_place, std::int64_t token_offset, std::size_t& i,
                                          std::size_t& j) {
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
ROPE_DETAIL_COLD inline bool overlapping_heads(const HeadIntervals& a, const HeadIntervals& b,
                                               bool in_place, std::size_t (&at)[2],
                                               std::size_t (&bt)[2]) {
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

// check_disjoint past its O(1) cases (below), compiled for size: it runs only for views with
// heads whose extents meet and that are not the same heads. A head of a is a_head elements, one
// of b b_head (they differ for a cache of blocks).
ROPE_DETAIL_COLD ROPE_DETAIL_NOINLINE inline void check_heads_disjoint(
    const char* a_name, const Geometry& a, std::size_t a_head, const char* b_name,
    const Geometry& b, std::size_t b_head, bool in_place_allowed) {
  const auto first = [](const Geometry& v, std::size_t batch) {
    return v.data + batch * v.batch_stride;
  };
  const auto meet = [&](std::size_t i, std::size_t i_last, std::size_t j, std::size_t j_last) {
    return first(a, i) < first(b, j_last) + b.span(b_head) &&
           first(b, j) < first(a, i_last) + a.span(a_head);
  };
  for (std::size_t i = 0; i < a.batches; ++i) {
    for (std::size_t j = 0; j < b.batches; ++j) {
      if (!meet(i, i, j, j)) continue;
      std::size_t at[2], bt[2];
      if (!overlapping_heads(HeadIntervals(a.sequence(i), a_head),
                             HeadIntervals(b.sequence(j), b_head), in_place_allowed && i == j, at,
                             bt)) {
        continue;
      }
      invalid(
          "rope: %s head (token %zu, head %zu) overlaps %s head (token %zu, head %zu): %s and "
          "%s %s",
          a_name, i * a.tokens + at[0], at[1], b_name, j * b.tokens + bt[0], bt[1], a_name, b_name,
          in_place_allowed ? "must be the same heads (in place) or disjoint" : "must be disjoint");
    }
  }
}

// Whether b's heads are a's, at the same addresses: an in-place pair.
ROPE_DETAIL_INLINE bool same_heads(const Geometry& a, const Geometry& b) noexcept {
  return a.data == b.data && (a.batches <= 1 || a.batch_stride == b.batch_stride) &&
         (a.tokens <= 1 || a.token_stride == b.token_stride) &&
         (a.heads <= 1 || a.head_stride == b.head_stride);
}

// Whether b is a, as a check sees it: the same heads, shape and buffer. A call in place checks
// one of the two.
ROPE_DETAIL_INLINE bool same_view(const Geometry& a, const Geometry& b) noexcept {
  return same_heads(a, b) && a.batches == b.batches && a.tokens == b.tokens && a.heads == b.heads &&
         a.element == b.element && a.buffer == b.buffer;
}

// Each head of a must share no byte with b but for the same (token, head) of b at the same
// address (in place, with in_place_allowed); q and k must share no byte at all. Views of several
// sequences are checked sequence against sequence where their extents meet (token indices in the
// message are counted over the batch). Views that passed check_view. The O(1) cases are decided
// here, inline: a call's views are usually in place or far apart, and a decode step would
// otherwise spend more on the pairs of a fused call than on rotating its keys.
inline void check_disjoint(const char* a_name, const Geometry& a, std::size_t a_head,
                           const char* b_name, const Geometry& b, std::size_t b_head,
                           bool in_place_allowed) {
  if (a.rows() == 0 || a.heads == 0 || b.rows() == 0 || b.heads == 0) return;  // no heads
  if (in_place_allowed && same_heads(a, b)) return;                            // in place
  if (a.data >= b.end(b_head) || b.data >= a.end(a_head)) return;              // far apart
  check_heads_disjoint(a_name, a, a_head, b_name, b, b_head, in_place_allowed);
}
inline void check_disjoint(const char* a_name, const Geometry& a, const char* b_name,
                           const Geometry& b, std::size_t head_size, bool in_place_allowed) {
  check_disjoint(a_name, a, head_size, b_name, b, head_size, in_place_allowed);
}

inline void check_position(std::int64_t position, std::size_t token) {
  if (position < 0 || position > kMaxPosition) {
    out_of_range("rope: position %lld of token %zu is outside [0, 2^53 - 1 = %lld]",
                 static_cast<long long>(position), token, static_cast<long long>(kMaxPosition));
  }
}

// A shift by delta rotates by |delta| positions, forward or inverse.
inline void check_shift(std::int64_t delta) {
  if (delta < -kMaxPosition || delta > kMaxPosition) {
    out_of_range("rope: shift delta %lld is outside [-(2^53 - 1), 2^53 - 1]",
                 static_cast<long long>(delta));
  }
}

// The bytes [begin, end) an index array's entries of tokens [first, last) lie in; empty for
// none.
struct IndexBytes {
  std::uintptr_t begin = 0, end = 0;
};
inline IndexBytes index_bytes(const void* data, std::size_t element, std::size_t lowest,
                              std::size_t highest) {
  const auto base = reinterpret_cast<std::uintptr_t>(data);
  return {base + lowest * element, base + (highest + 1) * element};
}
// A positions array's entries for the tokens of range (coordinate 0 to the last it has).
inline IndexBytes index_bytes(const Positions& positions, TokenRange range) {
  if (positions.data() == nullptr || range.first == range.last) return {};
  return index_bytes(positions.data(), positions.element_size(),
                     range.first * positions.token_stride(),
                     (positions.axes() - 1) * positions.axis_stride() +
                         (range.last - 1) * positions.token_stride());
}
// Whether slots name their rows through a block table (Slots::paged).
inline bool is_paged(const Slots& slots) noexcept {
  return slots.kind() == Slots::Kind::paged || slots.kind() == Slots::Kind::paged_tokens;
}

// The arrays a Slots reads for the tokens of range (keys of `tokens` tokens per sequence), with
// their names: the slot array, or a page table's table and index arrays. None for a ring or
// rows t.
struct SlotArrays {
  const char* name[3];
  IndexBytes bytes[3];
  std::size_t count = 0;
};
inline SlotArrays slot_arrays(const Slots& slots, TokenRange range, std::size_t tokens) {
  SlotArrays a;
  const auto add = [&a](const char* name, IndexBytes bytes) {
    a.name[a.count] = name;
    a.bytes[a.count++] = bytes;
  };
  if (range.first == range.last) return a;
  const std::size_t first = range.first, last = range.last - 1;
  if (slots.data() != nullptr) {
    add("slot", index_bytes(slots.data(), slots.element_size(), first, last));
  } else if (is_paged(slots)) {
    const PageTable& p = slots.pages();
    if (p.table != nullptr && p.sequences != 0 && p.stride != 0) {
      add("page table", index_bytes(p.table, sizeof(std::int32_t), 0, p.sequences * p.stride - 1));
    }
    if (slots.kind() == Slots::Kind::paged) {
      add("first index",
          index_bytes(slots.indices(), sizeof(std::int32_t), first / tokens, last / tokens));
    } else {
      add("index", index_bytes(slots.indices(), sizeof(std::int32_t), first, last));
      add("sequence", index_bytes(slots.sequences(), sizeof(std::int32_t), first, last));
    }
  }
  return a;
}

// An index array that a call reads must not lie in a view it writes: the walk reads each entry
// again after the checks, and a head written before would change it (E78). By extent: an array
// in the gaps of a strided view is refused too.
ROPE_DETAIL_COLD inline void check_index_outside(const char* index, IndexBytes bytes,
                                                 const char* name, const Geometry& view,
                                                 std::size_t head_size) {
  if (bytes.begin == bytes.end || view.rows() == 0 || view.heads == 0) return;
  const std::uintptr_t end = view.end(head_size);
  if (bytes.begin < end && view.data < bytes.end) {
    invalid(
        "rope: the %s array's %zu bytes lie inside %s, %zu bytes from its first element: it "
        "would be read after %s is written (pass a copy)",
        index, static_cast<std::size_t>(bytes.end - bytes.begin), name,
        static_cast<std::size_t>(bytes.begin > view.data ? bytes.begin - view.data : 0), name);
  }
}

// Fractional coordinates (Positions of doubles): each in [0, 2^53 − 1], or, for the multi-axis
// coordinates of a Rotary with signed ones (a one-axis map's own coordinate included, as
// LTX-2's audio RoPE has it), in [−(2^53 − 1), 2^53 − 1]; NaN is in neither.
ROPE_DETAIL_COLD ROPE_DETAIL_NOINLINE inline void check_fractional(const Positions& positions,
                                                                   TokenRange range,
                                                                   std::size_t sequence,
                                                                   std::size_t axes,
                                                                   bool negative) {
  const auto limit = static_cast<double>(kMaxPosition);
  const bool signs = negative && (positions.axes() != 1 || axes == 1);
  for (std::size_t t = range.first; t < range.last; ++t) {
    for (std::size_t a = 0; a < positions.axes(); ++a) {
      const double x = positions.coordinate(t, a, sequence);
      if (!(x >= (signs ? -limit : 0.0) && x <= limit)) {
        out_of_range(
            "rope: fractional coordinate %zu of token %zu, %.17g, is outside [%s, 2^53 - 1]", a, t,
            x, signs ? "-(2^53 - 1)" : "0");
      }
    }
  }
}

// A query scale's factor is a function of an integer position: fractional positions have none.
ROPE_DETAIL_COLD inline void check_scaled_positions(const Positions& positions, TokenRange range) {
  if (positions.is_fractional() && range.first != range.last) {
    invalid(
        "rope: a query scale is a function of integer positions: fractional positions (a "
        "Positions of doubles) take no query scale");
  }
}

// Checks the positions of tokens [range.first, range.last) of a call whose sequences have
// `sequence` tokens, for a Rotary of `axes` axes: one coordinate per token, or `axes`; each in
// [0, 2^53 − 1], or, for multi-axis coordinates of a Rotary with signed ones (`negative`), in
// [−(2^53 − 1), 2^53 − 1]. An empty range reads none.
// (coordinates false: only that the positions exist and have a usable number of axes; a
// CachedRotary checks its row indices against its cache instead.)
ROPE_DETAIL_COLD ROPE_DETAIL_NOINLINE inline void check_positions(
    const Positions& positions, TokenRange range, std::size_t sequence, std::size_t axes,
    bool coordinates = true, bool negative = false) {
  if (range.first == range.last) return;
  if (positions.is_null()) invalid("rope: positions is a null pointer");
  if (positions.axes() == 0) invalid("rope: the positions have 0 coordinates per token");
  if (positions.axes() != 1 && positions.axes() != axes) {
    invalid("rope: the positions have %zu coordinates per token but the Rotary has %zu axes",
            positions.axes(), axes);
  }
  if (!coordinates) return;
  if (positions.is_fractional()) {
    return check_fractional(positions, range, sequence, axes, negative);
  }
  if (positions.is_consecutive()) {
    // first + t mod sequence rises within a sequence: O(1), the first token outside [0, 2^53 − 1]
    // found from the range's ends (a sum that would wrap around int64 is named as a sum).
    const std::int64_t first = positions.first();
    std::size_t bad = range.last;  // the first token out of range, if any
    const std::size_t start = range.first - range.first % sequence;  // its sequence's token 0
    if (first < 0) {
      const auto below = static_cast<std::uint64_t>(-(first + 1)) + 1;  // tokens with p < 0
      bad = range.first % sequence < below ? range.first : start + sequence;
    } else if (first > kMaxPosition) {
      bad = range.first;
    } else if (static_cast<std::uint64_t>(kMaxPosition - first) < sequence - 1) {
      const std::size_t room = static_cast<std::size_t>(kMaxPosition - first);
      bad = range.first % sequence > room ? range.first : start + room + 1;
    }
    if (bad < range.last) {
      const std::size_t offset = bad % sequence;
      if (first >= 0 && offset > static_cast<std::uint64_t>(INT64_MAX - first)) {
        out_of_range("rope: position %lld + %zu of token %zu is outside [0, 2^53 - 1 = %lld]",
                     static_cast<long long>(first), offset, bad,
                     static_cast<long long>(kMaxPosition));
      }
      check_position(first + static_cast<std::int64_t>(offset), bad);
    }
    return;
  }
  if (positions.axes() == 1) {
    for (std::size_t t = range.first; t < range.last; ++t) {
      check_position(positions.at(t, 0, sequence), t);
    }
    return;
  }
  const std::int64_t lowest = negative ? -kMaxPosition : 0;
  for (std::size_t t = range.first; t < range.last; ++t) {
    for (std::size_t a = 0; a < axes; ++a) {
      const std::int64_t p = positions.at(t, a, sequence);
      if (p < lowest || p > kMaxPosition) {
        if (negative) {
          out_of_range(
              "rope: coordinate %zu of token %zu, %lld, is outside [-(2^53 - 1), 2^53 - 1 = %lld]",
              a, t, static_cast<long long>(p), static_cast<long long>(kMaxPosition));
        }
        out_of_range("rope: coordinate %zu of token %zu, %lld, is outside [0, 2^53 - 1 = %lld]", a,
                     t, static_cast<long long>(p), static_cast<long long>(kMaxPosition));
      }
    }
  }
}

inline void check_range(TokenRange range, std::size_t tokens) {
  if (range.first > range.last || range.last > tokens) {
    out_of_range("rope: token range [%zu, %zu) is not inside the %zu tokens of the batch",
                 range.first, range.last, tokens);
  }
}

/// Streaming stores write whole cache lines: dst must start on one.
inline constexpr std::size_t kStreamingAlignment = 64;

ROPE_DETAIL_COLD inline void check_streaming(const Geometry& src, const Geometry& dst) {
  if (src.data == dst.data) {
    invalid(
        "rope: streaming stores are for out-of-place calls, but src and dst are the same "
        "buffer");
  }
  const std::size_t misalignment = dst.data % kStreamingAlignment;
  if (misalignment != 0) {
    invalid(
        "rope: streaming stores need dst aligned to %zu bytes, but dst is %zu bytes past a "
        "boundary",
        kStreamingAlignment, misalignment);
  }
}

// The checks of apply(src, dst, positions, call), in the order docs/errors.md lists them;
// returns the call's token range.
//
// Not inlined (nor the other two entries below): compiled once, not into every rotating member
// of every (T, Dim). The search for overlapping heads, which runs only when two views' extents
// meet, is compiled for size.
ROPE_DETAIL_NOINLINE inline TokenRange check_apply(const Geometry& src, const Geometry& dst,
                                                   std::size_t head_size,
                                                   const Positions& positions, std::size_t axes,
                                                   const Call& call, bool coordinates = true,
                                                   bool negative = false) {
  check_direction(call.direction);
  check_view("src", src, head_size);
  const bool in_place = same_view(src, dst);
  if (!in_place) {
    check_view("dst", dst, head_size);
    check_same_shape("src", src, "dst", dst);
    check_disjoint("src", src, "dst", dst, head_size, true);
  }
  const TokenRange range = call.range(src.rows());
  check_range(range, src.rows());
  check_positions(positions, range, src.tokens, axes, coordinates, negative);
  check_index_outside("positions", index_bytes(positions, range), "dst", dst, head_size);
  if (call.execution.streaming_stores) check_streaming(src, dst);
  return range;
}

// A paged Slots' block table and index arrays (E91 for what is missing, E92 for an index
// outside it or a page past the cache's `rows`) for the tokens of range, of keys of `sequences`
// sequences of `tokens` tokens. A page inside the cache bounds page · block_size by rows, so the
// rows Slots::row() computes from it cannot overflow.
ROPE_DETAIL_COLD ROPE_DETAIL_NOINLINE inline void check_pages(const Slots& slots,
                                                              std::size_t sequences,
                                                              std::size_t tokens, std::size_t rows,
                                                              TokenRange range) {
  const PageTable& p = slots.pages();
  const bool per_token = slots.kind() == Slots::Kind::paged_tokens;
  if (range.first == range.last) return;  // no token: nothing is read
  if (p.table == nullptr) invalid("rope: the page table is a null pointer");
  if (p.block_size == 0 || p.stride == 0) {
    invalid("rope: the page table has block_size %zu and stride %zu: both must be > 0",
            p.block_size, p.stride);
  }
  if (p.sequences > kMaxViewBytes / sizeof(std::int32_t) / p.stride) {
    invalid("rope: the page table's %zu sequences x %zu pages exceed %zu bytes", p.sequences,
            p.stride, kMaxViewBytes);
  }
  if (!per_token && p.sequences < sequences) {
    invalid("rope: the page table has %zu sequences but k has %zu", p.sequences, sequences);
  }
  if (per_token && slots.size() != sequences * tokens) {
    invalid("rope: %zu paged entries given for the %zu tokens of k", slots.size(),
            sequences * tokens);
  }
  if (slots.indices() == nullptr || (per_token && slots.sequences() == nullptr)) {
    invalid("rope: the paged slots' %s array is a null pointer",
            slots.indices() == nullptr ? (per_token ? "index" : "first") : "sequence");
  }
  for (std::size_t t = range.first; t < range.last; ++t) {
    const std::size_t b = per_token ? 0 : t / tokens;
    const std::int64_t sequence = per_token ? slots.sequences()[t] : static_cast<std::int64_t>(b);
    const std::int64_t index =
        per_token ? std::int64_t{slots.indices()[t]}
                  : std::int64_t{slots.indices()[b]} + static_cast<std::int64_t>(t % tokens);
    if (sequence < 0 || static_cast<std::uint64_t>(sequence) >= p.sequences) {
      out_of_range("rope: token %zu is of sequence %lld, outside the page table's [0, %zu)", t,
                   static_cast<long long>(sequence), p.sequences);
    }
    if (index < 0 || static_cast<std::uint64_t>(index) / p.block_size >= p.stride) {
      out_of_range(
          "rope: token %zu is at index %lld of its sequence, outside the %zu pages x %zu rows its "
          "row of the page table holds",
          t, static_cast<long long>(index), p.stride, p.block_size);
    }
    const std::int32_t page = p.table[static_cast<std::size_t>(sequence) * p.stride +
                                      static_cast<std::uint64_t>(index) / p.block_size];
    if (page >= 0 && (rows == 0 || static_cast<std::size_t>(page) > (rows - 1) / p.block_size)) {
      out_of_range("rope: token %zu is on page %d, past the cache's %zu rows (%zu rows a page)", t,
                   static_cast<int>(page), rows, p.block_size);
    }
  }
}

// The slots of the tokens of range into a cache of `rows` rows, for keys of `sequences`
// sequences of `tokens` tokens: given for every token of the call, inside the cache or negative
// (skipped), and no row written twice.
ROPE_DETAIL_COLD ROPE_DETAIL_NOINLINE inline void check_slots(const Slots& slots,
                                                              std::size_t sequences,
                                                              std::size_t tokens, std::size_t rows,
                                                              TokenRange range) {
  const std::size_t count = range.last - range.first;
  if (slots.kind() == Slots::Kind::ring) {
    if (count > rows) {
      invalid("rope: a ring of %zu cache rows cannot take the %zu tokens of the call", rows, count);
    }
    return;
  }
  if (is_paged(slots)) {
    check_pages(slots, sequences, tokens, rows, range);
  } else {
    if (slots.size() != sequences * tokens) {
      invalid("rope: %zu slots given for the %zu tokens of k", slots.size(), sequences * tokens);
    }
    if (slots.data() == nullptr && count != 0) invalid("rope: the slot array is a null pointer");
  }
  for (std::size_t t = range.first; t < range.last; ++t) {
    const std::int64_t slot = slots.row(t, rows, tokens);
    if (slot >= 0 && static_cast<std::uint64_t>(slot) >= rows) {
      out_of_range("rope: slot %lld of token %zu is outside the cache's rows [0, %zu)",
                   static_cast<long long>(slot), t, rows);
    }
  }
  if (count < 2) return;  // a decode step: no row can be taken twice, nothing to allocate
  std::vector<std::pair<std::int64_t, std::size_t>> taken;  // (row, token), sorted
  taken.reserve(count);
  for (std::size_t t = range.first; t < range.last; ++t) {
    const std::int64_t slot = slots.row(t, rows, tokens);
    if (slot >= 0) taken.emplace_back(slot, t);
  }
  std::sort(taken.begin(), taken.end());
  for (std::size_t i = 1; i < taken.size(); ++i) {
    if (taken[i].first == taken[i - 1].first) {
      invalid("rope: tokens %zu and %zu both have slot %lld: each cache row takes one token",
              taken[i - 1].second, taken[i].second, static_cast<long long>(taken[i].first));
    }
  }
}

// A role's normalisation (qk_norm.hpp) for views of `heads` heads: its weight of the length its
// kind takes (none for l2_after), and ε finite and > 0.
ROPE_DETAIL_COLD ROPE_DETAIL_NOINLINE inline void check_norm(const char* role, NormKind kind,
                                                             const void* weight,
                                                             std::size_t weight_size,
                                                             double epsilon, std::size_t head_size,
                                                             std::size_t heads) {
  if (static_cast<int>(kind) < 0 || static_cast<int>(kind) > static_cast<int>(NormKind::l2_after)) {
    invalid(
        "rope: %s norm kind %d is not a NormKind (none, rms, rms_one_plus, rms_projection, "
        "l2_after)",
        role, static_cast<int>(kind));
  }
  if (kind == NormKind::none) return;
  if (kind == NormKind::l2_after) {
    if (weight != nullptr || weight_size != 0) {
      invalid("rope: %s norm l2_after takes no weight, but %zu values were given", role,
              weight_size);
    }
  } else {
    const bool projection = kind == NormKind::rms_projection;
    const std::size_t size = projection ? heads * head_size : head_size;
    if (weight_size != size) {
      if (projection) {
        invalid("rope: %s norm weight has %zu values but heads x head size is %zu x %zu = %zu",
                role, weight_size, heads, head_size, size);
      }
      invalid("rope: %s norm weight has %zu values but the head size is %zu", role, weight_size,
              head_size);
    }
    if (weight == nullptr && size != 0) invalid("rope: %s norm weight is a null pointer", role);
  }
  if (!(std::isfinite(epsilon) && epsilon > 0)) {
    invalid("rope: %s norm epsilon %g must be finite and > 0", role, epsilon);
  }
  if (epsilon < static_cast<double>(std::numeric_limits<float>::min())) {
    invalid("rope: %s norm epsilon %g is below the smallest normal float %g: it would vanish", role,
            epsilon, static_cast<double>(std::numeric_limits<float>::min()));
  }
}

// The checks of shift(keys, delta, call); returns the call's token range.
ROPE_DETAIL_NOINLINE inline TokenRange check_shift_call(const Geometry& keys, std::size_t head_size,
                                                        std::int64_t delta, const Call& call) {
  check_direction(call.direction);
  check_view("keys", keys, head_size);
  check_shift(delta);
  const TokenRange range = call.range(keys.rows());
  check_range(range, keys.rows());
  if (call.execution.streaming_stores) check_streaming(keys, keys);
  return range;
}

}  // namespace detail
}  // namespace ROPE_DETAIL_ISA
}  // namespace rope

#endif  // !ROPE_BELOW_CXX17
