// The kernels: rotate every head of one token, and walk a batch token by token.
//
// For each pair (a, b) of a head and its table entry (c, s) = (cos φ, sin φ), φ = m·θ_j:
//
//     forward  R_m:   (a, b) -> (a·c − b·s,  b·c + a·s)
//     inverse  R_mᵀ:  (a, b) -> (a·c + b·s,  b·c − a·s)      (R_mᵀ = R_{−m}: s negated)
//
// All heads of a token share one table row, so each kernel loads a chunk of the row into
// registers once and rotates that chunk of every head against it (docs/design.md has the
// measurements that chose this over one head at a time). A kernel reads each part of a head
// before it writes that part, so src and dst may be the same memory (in place).
//
// T is the stored type; the arithmetic is in C = compute_t<T>: T itself for float and double,
// float for Eigen::half and Eigen::bfloat16, whose values are widened on load and rounded to
// nearest even on store (simd::load, simd::store). The table row is always of C.
//
// Stores is Stores::ordinary, or Stores::streaming for non-temporal stores (out of place only).
#pragma once

#include <algorithm>
#include <complex>
#include <cstddef>
#include <type_traits>

#include <Eigen/Core>

#include <rope/detail/packet.hpp>
#include <rope/execution.hpp>
#include <rope/layout.hpp>
#include <rope/scalar.hpp>
#include <rope/table.hpp>
#include <rope/view.hpp>

namespace rope::detail {

using Eigen::Index;

enum class Stores { ordinary, streaming };

template <Stores W, class T, class P>
void put(T* to, const P& value) {
  if constexpr (W == Stores::streaming) {
    simd::store_streaming(to, value);
  } else {
    simd::store(to, value);
  }
}

// The heads of one token: head n is read at src + n·src_stride, written at dst + n·dst_stride.
template <class T>
struct TokenHeads {
  const T* src;
  std::size_t src_stride;
  T* dst;
  std::size_t dst_stride;
  std::size_t count;
};

// Calls chunk(std::integral_constant<int, N>, j) for pairs [j, j + N·lanes) while they fit in
// h, then with N/2, .., 1 registers. Returns the first pair not covered.
template <int N, Index Lanes, class Chunk>
Index for_each_chunk(Index h, Index j, const Chunk& chunk) {
  for (; j + N * Lanes <= h; j += N * Lanes) chunk(std::integral_constant<int, N>{}, j);
  if constexpr (N > 1) {
    return for_each_chunk<N / 2, Lanes>(h, j, chunk);
  } else {
    return j;
  }
}

// ---- half_split ----------------------------------------------------------------------------
// Pair j is (x[j], x[j + h]), h = d/2; the table row is [c0 c1 .. c_{h−1} | s0 s1 .. s_{h−1}]:
//
//   x = [ a0  a1  ..  a_{h−1} | b0  b1  ..  b_{h−1} ]
//   y = [ a·c − b·s           | b·c + a·s           ]      lane by lane: no shuffle

// Pairs [j, j + N·L) of every head, N registers of cos and N of sin held across the heads.
template <int N, Direction D, Stores W, class T>
void half_split_chunk(const TokenHeads<T>& heads, const compute_t<T>* row, Index h, Index j) {
  using P = simd::Packet<compute_t<T>>;
  constexpr Index L = simd::kLanes<compute_t<T>>;
  P c[N], s[N];
  for (int k = 0; k < N; ++k) {
    c[k] = simd::load<P>(row + j + k * L);
    s[k] = simd::load<P>(row + h + j + k * L);
    if constexpr (D == Direction::inverse) s[k] = simd::negate(s[k]);
  }
  // Locals, not heads.*: the stores below may alias any memory, which would force a reload.
  const std::size_t src_stride = heads.src_stride, dst_stride = heads.dst_stride;
  const T* x = heads.src;
  T* y = heads.dst;
  for (std::size_t n = heads.count; n > 0; --n, x += src_stride, y += dst_stride) {
    for (int k = 0; k < N; ++k) {
      const Index i = j + k * L;
      const P a = simd::load<P>(x + i), b = simd::load<P>(x + h + i);
      put<W>(y + i, simd::sub(simd::mul(a, c[k]), simd::mul(b, s[k])));
      put<W>(y + h + i, simd::add(simd::mul(b, c[k]), simd::mul(a, s[k])));
    }
  }
}

// Half is h when the head size is fixed at compile time (loop bounds become constants).
template <int Half, Direction D, Stores W, class T>
void rotate_half_split(const TokenHeads<T>& heads, const compute_t<T>* row, Index half) {
  using C = compute_t<T>;
  const Index h = Half == Eigen::Dynamic ? half : Half;
  // Main part: cos and sin registers take at most half the register file.
  const Index done = for_each_chunk<simd::kRegisters / 4, simd::kLanes<C>>(
      h, 0, [&](auto n, Index j) { half_split_chunk<decltype(n)::value, D, W>(heads, row, h, j); });
  // Remainder: the last h mod kLanes pairs, one at a time.
  for (std::size_t n = 0; n < heads.count && done < h; ++n) {
    const T* x = heads.src + n * heads.src_stride;
    T* y = heads.dst + n * heads.dst_stride;
    for (Index j = done; j < h; ++j) {
      const C a = C(x[j]), b = C(x[h + j]);
      const C c = row[j], s = D == Direction::forward ? row[h + j] : -row[h + j];
      y[j] = T(a * c - b * s);
      y[h + j] = T(b * c + a * s);
    }
  }
}

// ---- interleaved ---------------------------------------------------------------------------
// Pair j is (x[2j], x[2j+1]) = the complex number z_j = x[2j] + i·x[2j+1]; the table row
// [c0 s0 c1 s1 ..] is e^{iφ_j}. The rotation is the complex product y_j = z_j · e^{iφ_j}
// (inverse: z_j · conj(e^{iφ_j})), which Eigen's complex packets compute per register as
//
//   z = [ a0  b0  a1  b1 .. ]
//   y = [a0 a0 a1 a1 ..]·[c0 s0 c1 s1 ..]  ∓±  [b0 b0 b1 b1 ..]·[s0 c0 s1 c1 ..]
//     = [a0·c0 − b0·s0,  a0·s0 + b0·c0, ..]
//
// simd::load reads a register of complex pairs from the head's T values (std::complex<C> has
// the size and alignment of C[2]), so a head needs no more alignment than T (docs/design.md).

// Pairs [j, j + N·L) of every head, N registers of e^{iφ} held across the heads.
template <int N, Direction D, Stores W, class T>
void interleaved_chunk(const TokenHeads<T>& heads, const compute_t<T>* row, Index j) {
  using Z = simd::ComplexPacket<compute_t<T>>;
  constexpr Index L = simd::kLanes<std::complex<compute_t<T>>>;
  Z e[N];
  for (int k = 0; k < N; ++k) {
    e[k] = simd::load<Z>(row + 2 * (j + k * L));
    if constexpr (D == Direction::inverse) e[k] = simd::conjugate(e[k]);
  }
  // Locals, not heads.*: the stores below may alias any memory, which would force a reload.
  const std::size_t src_stride = heads.src_stride, dst_stride = heads.dst_stride;
  const T* x = heads.src;
  T* y = heads.dst;
  for (std::size_t n = heads.count; n > 0; --n, x += src_stride, y += dst_stride) {
    for (int k = 0; k < N; ++k) {
      const Index i = 2 * (j + k * L);  // pair j + k·L starts at coordinate i
      put<W>(y + i, simd::mul(simd::load<Z>(x + i), e[k]));
    }
  }
}

template <int Half, Direction D, Stores W, class T>
void rotate_interleaved(const TokenHeads<T>& heads, const compute_t<T>* row, Index half) {
  using C = compute_t<T>;
  const Index h = Half == Eigen::Dynamic ? half : Half;
  // Main part: e^{iφ} registers take at most half the register file.
  const Index done = for_each_chunk<simd::kRegisters / 2, simd::kLanes<std::complex<C>>>(
      h, 0, [&](auto n, Index j) { interleaved_chunk<decltype(n)::value, D, W>(heads, row, j); });
  // Remainder: pairs not covered by whole registers, one at a time.
  for (std::size_t n = 0; n < heads.count && done < h; ++n) {
    const T* x = heads.src + n * heads.src_stride;
    T* y = heads.dst + n * heads.dst_stride;
    for (Index j = done; j < h; ++j) {
      const C a = C(x[2 * j]), b = C(x[2 * j + 1]);
      const C c = row[2 * j], s = D == Direction::forward ? row[2 * j + 1] : -row[2 * j + 1];
      y[2 * j] = T(a * c - b * s);
      y[2 * j + 1] = T(b * c + a * s);
    }
  }
}

// ---- the batch walk --------------------------------------------------------------------------

// The heads one call rotates: src and dst have the same tokens and heads (dst may equal src).
template <class T>
struct Job {
  View<const T> src;
  View<T> dst;
};

// Which coordinates of a head rotate: [offset, offset + rotary_dim) of head_size.
struct Slice {
  std::size_t offset;
  std::size_t rotary_dim;
  std::size_t head_size;
};

// Out of place with a partial slice: copies token t's coordinates outside the slice.
template <class T>
void copy_outside_slice(const Job<T>& job, std::size_t t, const Slice& slice) {
  const std::size_t end = slice.offset + slice.rotary_dim;
  for (std::size_t h = 0; h < job.src.heads(); ++h) {
    const T* x = job.src.head(t, h);
    T* y = job.dst.head(t, h);
    std::copy(x, x + slice.offset, y);
    std::copy(x + end, x + slice.head_size, y + end);
  }
}

// Rotates every head of every job, token by token, so that a token's table row is read from
// memory once for all its heads (q and k of a token in one pass). row_of(t) is token t's row.
// Out of place, the coordinates outside the slice are copied from src to dst in the same pass.
template <class Kernel, class T, class RowOf>
void rotate_tokens(Kernel kernel, RowOf row_of, const Job<T>* jobs, std::size_t job_count,
                   TokenRange tokens, const Slice& slice) {
  const bool whole_head = slice.rotary_dim == slice.head_size;
  for (std::size_t t = tokens.first; t < tokens.last; ++t) {
    const compute_t<T>* row = row_of(t);
    for (std::size_t i = 0; i < job_count; ++i) {
      const Job<T>& job = jobs[i];
      if (job.src.heads() == 0) continue;
      kernel(
          TokenHeads<T>{job.src.head(t, 0) + slice.offset, job.src.head_stride(),
                        job.dst.head(t, 0) + slice.offset, job.dst.head_stride(), job.src.heads()},
          row);
      if (!whole_head && job.src.data() != job.dst.data()) copy_outside_slice(job, t, slice);
    }
  }
}

// Rotates every job with the kernel of `layout`, for a slice of slice.rotary_dim coordinates;
// Half is rotary_dim/2 when fixed at compile time, else Eigen::Dynamic. Called once per call
// (per thread): the layout, direction and kind of store are chosen here, outside every loop.
template <int Half, Direction D, Stores W, class T, class RowOf>
void rotate_layout(Layout layout, RowOf row_of, const Job<T>* jobs, std::size_t job_count,
                   TokenRange tokens, const Slice& slice) {
  using C = compute_t<T>;
  const auto half = static_cast<Index>(slice.rotary_dim / 2);
  if (layout == Layout::interleaved) {
    const auto kernel = [half](const TokenHeads<T>& heads, const C* row) {
      rotate_interleaved<Half, D, W>(heads, row, half);
    };
    rotate_tokens(kernel, row_of, jobs, job_count, tokens, slice);
  } else {
    const auto kernel = [half](const TokenHeads<T>& heads, const C* row) {
      rotate_half_split<Half, D, W>(heads, row, half);
    };
    rotate_tokens(kernel, row_of, jobs, job_count, tokens, slice);
  }
  if constexpr (W == Stores::streaming) simd::fence();
}

}  // namespace rope::detail
