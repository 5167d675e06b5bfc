// The kernels: rotate every head of one token against its row.
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
// The direction is a run-time flag: it negates sin (conjugates e^{iφ}) as a chunk of the row is
// loaded into registers, once per token for all its heads. The walk over tokens is in walk.hpp.
#pragma once

#include <rope/config.hpp>
#if !defined(ROPE_BELOW_CXX17)  // config.hpp stops older standards with one #error

#include <algorithm>
#include <complex>
#include <cstddef>
#include <type_traits>
#include <utility>

#include <Eigen/Core>

#include <rope/detail/packet.hpp>
#include <rope/scalar.hpp>

namespace rope {
inline namespace ROPE_DETAIL_ISA {
namespace detail {

using Eigen::Index;

// The heads of one token: head n is read at src + n·src_stride (strides in elements), written at
// dst + n·dst_stride. S and D differ only for keys written into a cache of another type (float
// keys into a half cache, say); both compute in the same C.
template <class S, class D = S>
struct TokenHeads {
  static_assert(std::is_same_v<compute_t<S>, compute_t<D>>, "S and D compute in the same type");
  const S* src;
  std::size_t src_stride;
  D* dst;
  std::size_t dst_stride;
  std::size_t count;
};

// What a kernel computes in for stored type T: registers of compute_t<T> (complex ones for
// interleaved pairs), or for bfloat16 on AVX2 and AVX-512 a Split, two registers of float that
// widen and narrow 2·kLanes values at once (packet.hpp).
template <class T, bool = simd::native::splits<T>()>
struct Registers {
  using Values = simd::Packet<compute_t<T>>;
  using Pairs = simd::ComplexPacket<compute_t<T>>;
  static constexpr int kEach = 1;  // SIMD registers in one of them
  static constexpr Index kValues = simd::kLanes<compute_t<T>>;
  static constexpr Index kPairs = simd::kLanes<std::complex<compute_t<T>>>;
};
template <class T>
struct Registers<T, true> {
  using Values = simd::Split;
  using Pairs = simd::Split;
  static constexpr int kEach = 2;
  static constexpr Index kValues = 2 * simd::kLanes<float>;
  static constexpr Index kPairs = simd::kLanes<float>;
};
template <class T>
using ValueRegister = typename Registers<T>::Values;
template <class T>
using PairRegister = typename Registers<T>::Pairs;

// The registers of a kernel from S to D: T's own, but a Split only where both sides split (a
// Split is stored to its own 16-bit type only; bfloat16 keys into a half cache go through plain
// registers of float, widened and narrowed one register at a time).
template <class S, class D>
using KernelRegisters = Registers<S, simd::native::splits<S>() && std::is_same_v<S, D>>;

// The register width of a kernel's main loop: Budget registers of the row's chunk, but no more
// than a head of at most Half pairs can use (Half fixed at compile time, or Eigen::Dynamic).
template <int Budget, Index Lanes, int Half>
inline constexpr int kWide = Half == Eigen::Dynamic
                                 ? Budget
                                 : static_cast<int>(std::clamp<Index>(Half / Lanes, 1, Budget));

// Calls chunk(std::integral_constant<int, N>{}, j) for the pairs [j, j + N·Lanes) of [0, h)
// with N registers while they fit, from N = Wide down to Wide/2, .., 1, and returns the first
// pair not covered (fewer than Lanes pairs are left to the caller). Each call is one pass over
// a token's heads, so halving the width keeps a head to at most log2(Wide) + 1 passes (the
// chunk widths measured: docs/design.md, "The kernels").
template <int Wide, Index Lanes, class Chunk>
Index for_each_chunk(Index h, Index j, const Chunk& chunk) {
  for (; j + Wide * Lanes <= h; j += Wide * Lanes) chunk(std::integral_constant<int, Wide>{}, j);
  if constexpr (Wide > 1) {
    return for_each_chunk<Wide / 2, Lanes>(h, j, chunk);
  } else {
    return j;
  }
}

// How far a call's bytes reach (walk.hpp's thresholds), and what the kernels do about it:
//   cache     up to kOnePassBytes: each token's heads in passes of what the registers hold;
//   one_pass  more: each head in one pass where twice the registers cover it, the rest of the
//             row read from the stack (each pass over a token's heads would be a trip to the
//             last-level cache or to memory);
//   memory    more than kMemoryBytes: as one_pass, and on targets of 16-float registers
//             (AVX-512) half_split float in registers of half the width and the interleaved
//             heads that fill the register file in one pass, not two (rotate_interleaved).
enum class Reach : unsigned char { cache, one_pass, memory };

// Targets whose kernels may take a head in one pass (Reach::one_pass): those of 16 registers
// (AVX2 and SSE; measured with AVX2), where the registers that hold the row cover a head of 128
// in two passes. AVX-512's 32 cover heads of up to 256 in one pass already, and the wider chunks,
// compiled for heads whose size is known at run time, cost its one-token calls 2–5 % measured.
// AArch64's 32 registers of 128 bits take two passes at 128 too; not measured here (it runs
// only under qemu), so its kernels are as they were.
inline constexpr bool kOnePassTargets = simd::kRegisters <= 16;

// Half_split float out of the last-level cache (Reach::memory) in registers of half the width,
// where the target's hold 16 floats (AVX-512): on a Zen 5 the 256-bit registers took 0.81–0.91 of
// the 512-bit ones' time in place from 1024 to 8192 tokens, but 1.09–1.15 × in the caches (128
// and 512 tokens): docs/design.md, "Registers of half the width out of the last-level cache".
template <class S, class D>
inline constexpr bool kMemoryRegisters =
    simd::kLanes<float> == 16 && std::is_same_v<std::pair<S, D>, std::pair<float, float>>;

// ---- half_split ----------------------------------------------------------------------------
// Pair j is (x[j], x[j + h]), h = d/2; the table row is [c0 c1 .. c_{n−1} | s0 s1 .. s_{n−1}]
// for the n <= h pairs that rotate (n < h when the last pairs have θ = 0 and are left alone):
//
//   x = [ a0  a1  ..  a_{h−1} | b0  b1  ..  b_{h−1} ]
//   y = [ a·c − b·s           | b·c + a·s           ]      lane by lane: no shuffle

// Pairs [j, j + N·L) of every head, N registers of cos and N of sin held across the heads; the
// row holds n cosines, then n sines.
template <int N, class S, class D, class P = typename KernelRegisters<S, D>::Values>
void half_split_chunk(const TokenHeads<S, D>& heads, const compute_t<S>* row, Index n_row, Index h,
                      Index j, bool inverse) {
  constexpr Index L = simd::kValues<P>;
  P c[N], s[N];
  ROPE_DETAIL_UNROLL
  for (int k = 0; k < N; ++k) {
    c[k] = simd::load<P>(row + j + k * L);
    s[k] = simd::load<P>(row + n_row + j + k * L);
    if (inverse) s[k] = simd::negate(s[k]);
  }
  // Locals, not heads.*: the stores below may alias any memory, which would force a reload.
  const std::size_t src_stride = heads.src_stride, dst_stride = heads.dst_stride;
  const S* x = heads.src;
  D* y = heads.dst;
  for (std::size_t n = heads.count; n > 0; --n, x += src_stride, y += dst_stride) {
    for (int k = 0; k < N; ++k) {
      const Index i = j + k * L;
      const P a = simd::load<P>(x + i), b = simd::load<P>(x + h + i);
      simd::store(y + i, simd::nmadd(b, s[k], simd::mul(a, c[k])));     // a·c − b·s
      simd::store(y + h + i, simd::madd(a, s[k], simd::mul(b, c[k])));  // b·c + a·s
    }
  }
}

// The pairs [done, n) of every head, fewer than one register: copied into a zero-padded
// one-register head [a | b] and rotated by half_split_chunk<1> against the padded row [c | s],
// so that their bits come from the same packet arithmetic as the other pairs.
template <class S, class D>
void remainder_half_split(const TokenHeads<S, D>& heads, const compute_t<S>* row, Index n,
                          Index n_row, Index h, Index done, bool inverse) {
  using C = compute_t<S>;
  constexpr Index L = KernelRegisters<S, D>::kValues;
  const Index r = n - done;
  alignas(64) C cs[2 * L] = {};
  std::copy(row + done, row + n, cs);
  std::copy(row + n_row + done, row + n_row + n, cs + L);
  alignas(64) S ab[2 * L] = {};
  alignas(64) D out[2 * L] = {};
  for (std::size_t k = 0; k < heads.count; ++k) {
    const S* x = heads.src + k * heads.src_stride;
    D* y = heads.dst + k * heads.dst_stride;
    std::copy(x + done, x + done + r, ab);
    std::copy(x + h + done, x + h + done + r, ab + L);
    half_split_chunk<1>(TokenHeads<S, D>{ab, 0, out, 0, 1}, cs, L, L, 0, inverse);
    std::copy(out, out + r, y + done);
    std::copy(out + L, out + L + r, y + h + done);
  }
}

// Heads taken at a time where a head's last pairs are rotated as one register that overlaps the
// main part's last (overlapping_tail): the windows of 8 heads take 1 KiB of inputs and 1 KiB of
// outputs.
inline constexpr std::size_t kTailGroup = 8;

// A head of n pairs whose last r = n mod L pairs do not fill a register, n >= L: the register of
// pairs [n − L, n), which overlaps the main part's last, through the same packet arithmetic.
// Per group of heads: each head's windows of inputs (`windows` of them, W elements each, at
// offsets first + window·second) are copied out before the main part writes the head (in place),
// rotated by `tail` from those copies, then stored after the main part. The overlapping lanes
// get the bits the main part gave them (the same inputs, row entries and arithmetic); no lane
// is written with anything else, and nothing outside the windows is read or written.
template <std::size_t W, std::size_t Windows, class S, class D, class Main, class Tail>
void overlapping_tail(const TokenHeads<S, D>& heads, Index first, Index second,
                      const Main& whole_registers, const Tail& tail) {
  alignas(64) S in[kTailGroup * Windows * W];
  alignas(64) D out[kTailGroup * Windows * W];
  for (std::size_t g = 0; g < heads.count; g += kTailGroup) {
    const std::size_t count = std::min(kTailGroup, heads.count - g);
    const TokenHeads<S, D> group{heads.src + g * heads.src_stride, heads.src_stride,
                                 heads.dst + g * heads.dst_stride, heads.dst_stride, count};
    for (std::size_t k = 0; k < count; ++k) {
      for (std::size_t w = 0; w < Windows; ++w) {
        const S* x = group.src + k * group.src_stride + first + static_cast<Index>(w) * second;
        std::copy_n(x, W, in + (k * Windows + w) * W);
      }
    }
    whole_registers(group);
    tail(TokenHeads<S, D>{in, Windows * W, out, Windows * W, count});
    for (std::size_t k = 0; k < count; ++k) {
      for (std::size_t w = 0; w < Windows; ++w) {
        D* y = group.dst + k * group.dst_stride + first + static_cast<Index>(w) * second;
        std::copy_n(out + (k * Windows + w) * W, W, y);
      }
    }
  }
}

// The first n pairs (j, j + h) of every head, n <= h, against the row's cosines row[0, n) and
// sines row[n_row, n_row + n); the coordinates of the pairs [n, h) are not touched. Half bounds n
// at compile time (n <= Half, from a fixed Dim), or is Eigen::Dynamic; it only prunes the
// register widths that cannot fit.
template <int Half, class S, class D>
void rotate_half_split(const TokenHeads<S, D>& heads, const compute_t<S>* row, Index n, Index n_row,
                       Index h, bool inverse, Reach reach = Reach::cache) {
  using R = KernelRegisters<S, D>;
  constexpr Index L = R::kValues;
  // Main part: cos and sin registers take at most half the register file; beyond the cache, up
  // to all of it where that covers the head in one pass; out of the last-level cache, registers
  // of half the width where they cover it in one pass (kMemoryRegisters).
  constexpr int kPass = kWide<simd::kRegisters / 4 / R::kEach, L, Half>;
  constexpr int kHead = kWide<simd::kRegisters / 2 / R::kEach, L, Half>;
  const auto whole_registers = [&](const TokenHeads<S, D>& group) {
    const auto chunk = [&](auto w, Index j) {
      half_split_chunk<decltype(w)::value>(group, row, n_row, h, j, inverse);
    };
    if constexpr (kOnePassTargets && kHead > kPass) {
      if (reach != Reach::cache && n > kPass * L && n <= kHead * L) {
        return for_each_chunk<kHead, L>(n, 0, chunk);
      }
    }
    if constexpr (kMemoryRegisters<S, D>) {
      using M = typename Eigen::internal::packet_traits<float>::half;
      constexpr Index kHalfL = simd::kLanes<float> / 2;  // the floats M holds
      constexpr int kMemoryPass = kWide<simd::kRegisters / 4, kHalfL, Half>;
      if (reach == Reach::memory && n % kHalfL == 0 && n <= kMemoryPass * kHalfL) {
        return for_each_chunk<kMemoryPass, kHalfL>(n, 0, [&](auto w, Index j) {
          half_split_chunk<decltype(w)::value, S, D, M>(group, row, n_row, h, j, inverse);
        });
      }
    }
    return for_each_chunk<kPass, L>(n, 0, chunk);
  };
  // The last pairs, where n is not a multiple of L: one register [n − L, n) overlapping the main
  // part's last, its halves [n − L, n) and [h + n − L, h + n) of each head (heads of at least L
  // pairs); else, for smaller heads, the last r < L pairs on copies padded with zeros. Both go
  // through the same packet arithmetic as the main part. A scalar loop here would be vectorised
  // by the compiler behind a run-time alias check, and with a·c − b·s contracted into FMAs
  // differently in its two versions, a pair's bits would depend on the buffers' addresses.
  if (n % L != 0 && n >= L) {
    overlapping_tail<static_cast<std::size_t>(L), 2>(
        heads, n - L, h, whole_registers, [&](const TokenHeads<S, D>& windows) {
          half_split_chunk<1>(windows, row + (n - L), n_row, L, 0, inverse);
        });
    return;
  }
  const Index done = whole_registers(heads);
  if (done < n) remainder_half_split(heads, row, n, n_row, h, done, inverse);
}

// Half_split pairs within blocks (Axes::with_pairs_within_blocks): block b, of n_b =
// block_pairs[b] pairs, is the head's coordinates [2·p_b, 2·p_b + 2·n_b), p_b the pairs of the
// blocks before it, rotated as a half_split head of its own, pairs (2·p_b + i, 2·p_b + n_b + i),
// against the row's pairs [p_b, p_b + n_b). One pass over the heads per block.
template <int Half, class S, class D>
void rotate_half_split_blocks(const TokenHeads<S, D>& heads, const compute_t<S>* row,
                              const std::size_t* block_pairs, std::size_t blocks, Index n_row,
                              bool inverse, Reach reach = Reach::cache) {
  std::size_t first = 0;
  for (std::size_t b = 0; b < blocks; ++b) {
    const TokenHeads<S, D> block{heads.src + 2 * first, heads.src_stride, heads.dst + 2 * first,
                                 heads.dst_stride, heads.count};
    const auto n = static_cast<Index>(block_pairs[b]);
    rotate_half_split<Half>(block, row + first, n, n_row, n, inverse, reach);
    first += block_pairs[b];
  }
}

// ---- interleaved ---------------------------------------------------------------------------
// Pair j is (x[2j], x[2j+1]) = the complex number z_j = x[2j] + i·x[2j+1]; the table row
// [c0 s0 c1 s1 ..] is e^{iφ_j}. The rotation is the complex product y_j = z_j · e^{iφ_j}
// (inverse: z_j · conj(e^{iφ_j})):
//
//   z = [ a0  b0  a1  b1 .. ]
//   y = [ a0·c0 − b0·s0,  b0·c0 + a0·s0, .. ]
//
// Each register of the row is prepared once per token and each register of every head turned by
// it (simd::prepare, simd::turn: packet.hpp has the two forms, which targets take which, and
// which product each rounds).
//
// simd::load reads a register of complex pairs from the head's T values (std::complex<C> has
// the size and alignment of C[2]), so a head needs no more alignment than T (docs/design.md).

// Pairs [j, j + N·L) of every head, N prepared registers of e^{iφ} held across the heads.
template <int N, class S, class D>
void interleaved_chunk(const TokenHeads<S, D>& heads, const compute_t<S>* row, Index j,
                       bool inverse) {
  using Z = typename KernelRegisters<S, D>::Pairs;
  constexpr Index L = KernelRegisters<S, D>::kPairs;
  simd::Turn<Z> e[N];
  ROPE_DETAIL_UNROLL
  for (int k = 0; k < N; ++k) e[k] = simd::prepare(simd::load<Z>(row + 2 * (j + k * L)), inverse);
  // Locals, not heads.*: the stores below may alias any memory, which would force a reload.
  const std::size_t src_stride = heads.src_stride, dst_stride = heads.dst_stride;
  const S* x = heads.src;
  D* y = heads.dst;
  for (std::size_t n = heads.count; n > 0; --n, x += src_stride, y += dst_stride) {
    for (int k = 0; k < N; ++k) {
      const Index i = 2 * (j + k * L);  // pair j + k·L starts at coordinate i
      simd::store(y + i, simd::turn(simd::load<Z>(x + i), e[k]));
    }
  }
}

// The pairs [done, h) of every head, fewer than one register: rotated by interleaved_chunk<1>
// in a zero-padded copy, as for half_split.
template <class S, class D>
void remainder_interleaved(const TokenHeads<S, D>& heads, const compute_t<S>* row, Index h,
                           Index done, bool inverse) {
  using C = compute_t<S>;
  constexpr Index L = KernelRegisters<S, D>::kPairs;
  alignas(64) C e[2 * L] = {};
  std::copy(row + 2 * done, row + 2 * h, e);
  alignas(64) S z[2 * L] = {};
  alignas(64) D out[2 * L] = {};
  for (std::size_t n = 0; n < heads.count; ++n) {
    const S* x = heads.src + n * heads.src_stride;
    D* y = heads.dst + n * heads.dst_stride;
    std::copy(x + 2 * done, x + 2 * h, z);
    interleaved_chunk<1>(TokenHeads<S, D>{z, 0, out, 0, 1}, e, 0, inverse);
    std::copy(out, out + 2 * (h - done), y + 2 * done);
  }
}

template <int Half, class S, class D>
void rotate_interleaved(const TokenHeads<S, D>& heads, const compute_t<S>* row, Index h,
                        bool inverse, Reach reach = Reach::cache) {
  using R = KernelRegisters<S, D>;
  constexpr Index L = R::kPairs;
  // Main part: N registers of pairs per pass, N at most half the register file. Prepared, each
  // register of the row takes two (cos and sin, or e and its swapped copy), all of the register
  // file where N is half of it: the compiler reads what does not fit from the stack. Beyond the
  // cache, twice that where it covers the head in one pass (kOnePassTargets). On AVX-512, a head
  // that takes all of them (float heads of 256, double of 128) goes in passes of half as many,
  // kept in registers, but out of the last-level cache, where each pass more is a trip to memory
  // (docs/design.md, "Passes of half the registers").
  constexpr int kPass = kWide<simd::kRegisters / 2 / R::kEach, L, Half>;
  constexpr int kHead = kWide<simd::kRegisters / R::kEach, L, Half>;
  const auto whole_registers = [&](const TokenHeads<S, D>& group) {
    const auto chunk = [&](auto n, Index j) {
      interleaved_chunk<decltype(n)::value>(group, row, j, inverse);
    };
    if constexpr (kOnePassTargets && kHead > kPass) {
      if (reach != Reach::cache && h > kPass * L && h <= kHead * L) {
        return for_each_chunk<kHead, L>(h, 0, chunk);
      }
    }
    if constexpr (simd::kLanes<float> == 16 && R::kEach == 1 && kPass > 1) {
      if (reach != Reach::memory && h > kPass / 2 * L) {
        return for_each_chunk<kPass / 2, L>(h, 0, chunk);
      }
    }
    return for_each_chunk<kPass, L>(h, 0, chunk);
  };
  // The pairs not covered by whole registers: one register [h − L, h) overlapping the main
  // part's last (heads of at least L pairs), else one zero-padded register, as for half_split.
  if (h % L != 0 && h >= L) {
    overlapping_tail<static_cast<std::size_t>(2 * L), 1>(
        heads, 2 * (h - L), 0, whole_registers, [&](const TokenHeads<S, D>& windows) {
          interleaved_chunk<1>(windows, row + 2 * (h - L), 0, inverse);
        });
    return;
  }
  const Index done = whole_registers(heads);
  if (done < h) remainder_interleaved(heads, row, h, done, inverse);
}

// ---- runs of tokens --------------------------------------------------------------------------
// A direct call's tokens come to the kernels in runs (Core::apply_direct): each token's row
// loaded and its heads rotated inside one loop over the run, where the head is covered by
// chunks of one width (heads of 64, 128 and 256; not 72 or 80), not through a call per token of
// rotate_half_split or rotate_interleaved. Each token's pairs get the same packet arithmetic as
// there, so the same bits.

// The heads of a run of tokens: token t's heads are `heads` moved by t·src_token and t·dst_token
// elements, rotated against the row rows[t] (of compute_t<S>).
template <class S, class D = S>
struct TokenRun {
  TokenHeads<S, D> heads;
  std::size_t tokens;
  std::size_t src_token;
  std::size_t dst_token;
  const void* const* rows;

  TokenHeads<S, D> token(std::size_t t) const {
    return {heads.src + t * src_token, heads.src_stride, heads.dst + t * dst_token,
            heads.dst_stride, heads.count};
  }
  const compute_t<S>* row(std::size_t t) const { return static_cast<const compute_t<S>*>(rows[t]); }
};

// Calls run(std::integral_constant<int, N>{}) with the one width N that chunks of Wide, Wide/2,
// .., 1 registers of Lanes pairs would cover h pairs with (for_each_chunk), and returns true; false
// where it would take two widths or leave pairs over.
template <int Wide, Index Lanes, class Run>
bool in_one_width(Index h, const Run& run) {
  if (h >= Wide * Lanes) {
    if (h % (Wide * Lanes) != 0) return false;
    run(std::integral_constant<int, Wide>{});
    return true;
  }
  if constexpr (Wide > 1) {
    return in_one_width<Wide / 2, Lanes>(h, run);
  } else {
    return false;
  }
}

// half_split_chunk<N> over the pairs [0, n) of every head of every token of the run, n a multiple
// of N·L. The registers' offsets are constants from x (or x + h) and y: no index registers, which
// g++ otherwise runs out of for N = 8 beside the loops over tokens and chunks. A head's registers
// of its first half are loaded before those of its second: where the halves are 512 bytes or
// more apart (float heads of 256, double of 128), lines taken from the second-level cache in
// turns between two places that far apart took 1.2–1.6 times as long as lines closer together on
// a Zen 5 (bench/line_streams.cpp; docs/design.md, "The kernels").
template <int N, class S, class D>
ROPE_DETAIL_NOINLINE void half_split_run(const TokenRun<S, D>& run, Index n, Index n_row, Index h,
                                         bool inverse) {
  using P = typename KernelRegisters<S, D>::Values;
  constexpr Index L = KernelRegisters<S, D>::kValues;
  const std::size_t src_stride = run.heads.src_stride, dst_stride = run.heads.dst_stride;
  for (std::size_t t = 0; t < run.tokens; ++t) {
    const compute_t<S>* row = run.row(t);
    for (Index j = 0; j < n; j += N * L) {
      P c[N], s[N];
      ROPE_DETAIL_UNROLL
      for (int k = 0; k < N; ++k) {
        c[k] = simd::load<P>(row + j + k * L);
        s[k] = simd::load<P>(row + n_row + j + k * L);
        if (inverse) s[k] = simd::negate(s[k]);
      }
      const S* x = run.heads.src + t * run.src_token + j;
      D* y = run.heads.dst + t * run.dst_token + j;
      for (std::size_t m = run.heads.count; m > 0; --m, x += src_stride, y += dst_stride) {
        P a[N];
        ROPE_DETAIL_UNROLL
        for (int k = 0; k < N; ++k) a[k] = simd::load<P>(x + k * L);
        ROPE_DETAIL_IN_ORDER;
        for (int k = 0; k < N; ++k) {
          const P b = simd::load<P>(x + h + k * L);
          simd::store(y + k * L, simd::nmadd(b, s[k], simd::mul(a[k], c[k])));     // a·c − b·s
          simd::store(y + h + k * L, simd::madd(a[k], s[k], simd::mul(b, c[k])));  // b·c + a·s
        }
      }
    }
  }
}

// rotate_half_split for each token of a run (Reach::cache).
template <int Half, class S, class D>
void rotate_half_split_run(const TokenRun<S, D>& run, Index n, Index n_row, Index h, bool inverse) {
  using R = KernelRegisters<S, D>;
  constexpr Index L = R::kValues;
  constexpr int kPass = kWide<simd::kRegisters / 4 / R::kEach, L, Half>;
  const bool done = in_one_width<kPass, L>(
      n, [&](auto w) { half_split_run<decltype(w)::value>(run, n, n_row, h, inverse); });
  if (done) return;
  for (std::size_t t = 0; t < run.tokens; ++t) {
    rotate_half_split<Half>(run.token(t), run.row(t), n, n_row, h, inverse);
  }
}

// interleaved_chunk<N> over the pairs [0, h) of every head of every token of the run, h a
// multiple of N·L, the registers at constant offsets as in half_split_run.
template <int N, class S, class D>
ROPE_DETAIL_NOINLINE void interleaved_run(const TokenRun<S, D>& run, Index h, bool inverse) {
  using Z = typename KernelRegisters<S, D>::Pairs;
  constexpr Index L = KernelRegisters<S, D>::kPairs;
  const std::size_t src_stride = run.heads.src_stride, dst_stride = run.heads.dst_stride;
  for (std::size_t t = 0; t < run.tokens; ++t) {
    const compute_t<S>* row = run.row(t);
    for (Index j = 0; j < h; j += N * L) {
      simd::Turn<Z> e[N];
      ROPE_DETAIL_UNROLL
      for (int k = 0; k < N; ++k) {
        e[k] = simd::prepare(simd::load<Z>(row + 2 * (j + k * L)), inverse);
      }
      const S* x = run.heads.src + t * run.src_token + 2 * j;
      D* y = run.heads.dst + t * run.dst_token + 2 * j;
      for (std::size_t m = run.heads.count; m > 0; --m, x += src_stride, y += dst_stride) {
        for (int k = 0; k < N; ++k) {
          simd::store(y + 2 * k * L, simd::turn(simd::load<Z>(x + 2 * k * L), e[k]));
        }
      }
    }
  }
}

// rotate_interleaved for each token of a run (Reach::cache), its widths as there.
template <int Half, class S, class D>
void rotate_interleaved_run(const TokenRun<S, D>& run, Index h, bool inverse) {
  using R = KernelRegisters<S, D>;
  constexpr Index L = R::kPairs;
  constexpr int kPass = kWide<simd::kRegisters / 2 / R::kEach, L, Half>;
  constexpr int kHalfPass = kPass > 1 ? kPass / 2 : 1;
  constexpr bool kHalves = simd::kLanes<float> == 16 && R::kEach == 1 && kPass > 1;
  const auto one_run = [&](auto w) { interleaved_run<decltype(w)::value>(run, h, inverse); };
  const bool done = kHalves && h > kHalfPass * L ? in_one_width<kHalfPass, L>(h, one_run)
                                                 : in_one_width<kPass, L>(h, one_run);
  if (done) return;
  for (std::size_t t = 0; t < run.tokens; ++t) {
    rotate_interleaved<Half>(run.token(t), run.row(t), h, inverse);
  }
}

}  // namespace detail
}  // namespace ROPE_DETAIL_ISA
}  // namespace rope

#endif  // !ROPE_BELOW_CXX17
