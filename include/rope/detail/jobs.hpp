// The jobs of a call, as the walk (walk.hpp) takes them: the views a call reads and writes, with
// their element types erased, and the erased interfaces of what is compiled per type: the
// kernels (from kernels.hpp), the copies and scalings outside the rotated slice (values.hpp) and
// the normalisations (norm.hpp). A job is a plain struct of named fields; an extra of a fused
// call is one more field here and one more step in the walk.
#pragma once

#include <rope/config.hpp>
#if !defined(ROPE_BELOW_CXX17)  // config.hpp stops older standards with one #error

#include <algorithm>
#include <cstddef>

#include <Eigen/Core>

#include <rope/detail/geometry.hpp>
#include <rope/detail/kernels.hpp>
#include <rope/detail/values.hpp>
#include <rope/key_cache.hpp>
#include <rope/layout.hpp>
#include <rope/qk_norm.hpp>
#include <rope/scalar.hpp>

namespace rope {
inline namespace ROPE_DETAIL_ISA {
namespace detail {

// Copies the coordinates outside the rotated slice of `count` heads from src into dst (head n at
// src + n·src_stride and dst + n·dst_stride bytes), converting them where the types differ.
using CopyOutside = void (*)(const unsigned char* src, std::size_t src_stride, unsigned char* dst,
                             std::size_t dst_stride, std::size_t count, const Slice& slice);

// Multiplies the coordinates outside the rotated slice of `count` heads of T by s (head n at
// heads + n·stride bytes): a scaled job's coordinates that the kernel does not reach.
using ScaleOutside = void (*)(unsigned char* heads, std::size_t stride, std::size_t count,
                              const Slice& slice, double s);

// The heads of one token as a kernel of walk's takes them: TokenHeads with its type erased and
// its strides in bytes.
struct AnyHeads {
  const void* src;
  std::size_t src_stride;  // bytes
  void* dst;
  std::size_t dst_stride;  // bytes
  std::size_t count;
};

// A kernel of walk's: rotate_interleaved or rotate_half_split for one head size and type,
// behind a signature without either, so that the walk needs neither. It rotates the pairs of
// the slice (the heads start at the slice's offset): the first slice.pairs pairs, half_split
// ones slice.half() apart, or within the slice's blocks.
using Kernel = void (*)(const AnyHeads& heads, const void* row, const Slice& slice, bool inverse);

// The heads of a run of tokens of the same views: token t's heads as `heads` (its first token's),
// moved by t·src_token and t·dst_token bytes, rotated against rows[t].
struct AnyRun {
  AnyHeads heads;
  std::size_t tokens;
  std::size_t src_token;  // bytes
  std::size_t dst_token;  // bytes
  const void* const* rows;
};

// A kernel for a run of tokens: a Kernel's work for each, in one call (a direct call's tokens,
// Core::apply_direct). A call through a Kernel for each token (the pointer, the views' heads,
// the dispatch over chunk widths, each chunk's call) cost more than a head of 256 takes
// (docs/design.md, "The kernels").
using RunKernel = void (*)(const AnyRun& run, const Slice& slice, bool inverse);

// A job's normalisation (qk_norm.hpp), with its type erased: the functions of detail/norm.hpp for
// the job's T (and the destination's D). Heads are at `heads` + n·stride bytes; r holds one
// factor per head, in C = compute_t<T>.
//   factors   each head's r (the same r for all of a token's heads, for rms_projection);
//   before    heads [first, first + count) normalised with their r into `out`, head_size apart;
//   after     such heads scaled by their r in place (l2_after);
//   store     such heads converted into dst (head n at dst + n·dst_stride bytes).
struct NormJob {
  NormKind kind;
  const void* weight;
  std::size_t weight_size;
  double epsilon;
  std::size_t head_size;
  void (*factors)(const NormJob& norm, const unsigned char* heads, std::size_t stride,
                  std::size_t count, unsigned char* r);
  void (*before)(const NormJob& norm, const unsigned char* heads, std::size_t stride,
                 std::size_t first, std::size_t count, const unsigned char* r, unsigned char* out);
  void (*after)(const NormJob& norm, unsigned char* heads, std::size_t count,
                const unsigned char* r);
  void (*store)(const NormJob& norm, const unsigned char* heads, std::size_t count,
                unsigned char* dst, std::size_t dst_stride);
};

// How a cache's element type stores values: as they are (float, 16-bit), or quantised as fp8,
// int8 with a scale per row and head, or ggml's blocks of 32.
enum class Quantization { none, fp8, int8, blocks };

// Converts `count` heads of head_size values, head n from src + n·src_stride to dst + n·dst_stride
// (strides in bytes), into the destination's type: a values job's store, which does not rotate.
using CopyHeads = void (*)(const unsigned char* src, std::size_t src_stride, unsigned char* dst,
                           std::size_t dst_stride, std::size_t count, std::size_t head_size);

// A job into a quantised cache (rope/quantized.hpp): the job's kernel, copy and norm write its
// heads in float, into a buffer of the walk's; `store` quantises `count` such heads (head n at
// heads + n·head_size) into a cache row (head n at dst + n·dst_stride bytes), the row's index
// r naming where an int8 cache's scales go (per_row[r · heads + n]).
struct QuantizeJob {
  std::size_t head_size;
  float scale;     // fp8: the values stored are x / scale
  float* per_row;  // int8: the scale of each (row, head)
  std::size_t heads;
  void (*store)(const QuantizeJob& job, const float* heads, std::size_t count, unsigned char* dst,
                std::size_t dst_stride, std::size_t r);
  // The inverse, for a shift in place: `count` heads of row r (head n at src + n·src_stride
  // bytes) back to float (head n at heads + n·head_size).
  void (*load)(const QuantizeJob& job, const unsigned char* src, std::size_t src_stride,
               std::size_t count, std::size_t r, float* heads);
};

// Heads a normalised job takes at a time through its buffer: 4 KiB of them, so that the buffer
// stays in L1 beside the token's heads.
inline std::size_t norm_group(std::size_t bytes_per_head) noexcept {
  return std::max<std::size_t>(1, 4096 / bytes_per_head);
}

// The heads one call rotates: src and dst have the same shape (dst may equal src). A job with
// scales (the queries of apply_qk with a QueryScale) multiplies token t by scales[t]: its row
// is scaled before the kernel reads it, and scale_outside scales what the kernel leaves.
//
// A job into a cache (the keys of a fused apply_qk) has its own kernel, from the keys' type to
// the cache's, and copy_outside to convert the coordinates the kernel does not reach; its slots
// give token t's row of dst (negative: skipped). Without them the job uses the call's kernel,
// copies bytes, and writes token t to row t. Into a quantised cache, its kernel and copy write
// float, and `quantize` takes the float heads into dst. A values job (Keys::values) rotates
// nothing: `copy` converts its heads into dst's type (float, for a quantised dst), at the slots.
struct Job {
  // A constructor, not an aggregate: the fields it leaves null are written once, where g++
  // zeroed a fused call's whole jobs first (docs/measurements/2026-12-03-amd-epyc-roles.md).
  Job(const Geometry& source, const Geometry& destination) noexcept
      : src(source), dst(destination) {}
  // A view in place, its geometry built in the job from the view's fields: copying a Geometry is
  // a 96-byte block move, which g++ tuned for AMD's cores makes a `rep movs` (tens of cycles).
  template <class T>
  explicit Job(const View<T>& in_place) noexcept : src(in_place), dst(in_place) {}

  Geometry src;
  Geometry dst;
  const double* scales = nullptr;
  ScaleOutside scale_outside = nullptr;
  Kernel kernel = nullptr;
  CopyOutside copy_outside = nullptr;
  const Slots* slots = nullptr;
  Coordinates coordinates = {};  // of dst's heads (a cache's)
  const NormJob* norm = nullptr;
  const QuantizeJob* quantize = nullptr;
  bool quantized_source = false;  // a shift of quantised keys: src loaded by quantize->load
  CopyHeads copy = nullptr;       // a values job
};

// One token's heads against its row: a Kernel's body, and each token's of a RunKernel.
template <int Half, class S, class D, Layout L>
ROPE_DETAIL_INLINE void rotate_token(const TokenHeads<S, D>& typed, const void* row,
                                     const Slice& slice, bool inverse) {
  const auto* r = static_cast<const compute_t<S>*>(row);
  const auto pairs = static_cast<Index>(slice.pairs);
  if constexpr (L == Layout::interleaved) {
    rotate_interleaved<Half>(typed, r, pairs, inverse, slice.reach);
  } else if (slice.blocks == 0) {
    rotate_half_split<Half>(typed, r, pairs, pairs, static_cast<Index>(slice.half()), inverse,
                            slice.reach);
  } else {
    rotate_half_split_blocks<Half>(typed, r, slice.block_pairs, slice.blocks, pairs, inverse,
                                   slice.reach);
  }
}

template <int Half, class S, class D, Layout L>
void kernel(const AnyHeads& heads, const void* row, const Slice& slice, bool inverse) {
  const TokenHeads<S, D> typed{static_cast<const S*>(heads.src), heads.src_stride / sizeof(S),
                               static_cast<D*>(heads.dst), heads.dst_stride / sizeof(D),
                               heads.count};
  rotate_token<Half, S, D, L>(typed, row, slice, inverse);
}

template <int Half, class S, class D, Layout L>
void run_kernel(const AnyRun& run, const Slice& slice, bool inverse) {
  const AnyHeads& heads = run.heads;
  const TokenRun<S, D> typed{
      TokenHeads<S, D>{static_cast<const S*>(heads.src), heads.src_stride / sizeof(S),
                       static_cast<D*>(heads.dst), heads.dst_stride / sizeof(D), heads.count},
      run.tokens, run.src_token / sizeof(S), run.dst_token / sizeof(D), run.rows};
  const auto pairs = static_cast<Index>(slice.pairs);
  // Beyond the cache (Reach::one_pass), targets of 32 registers take the chunks they take in it
  // (kOnePassTargets); past the last-level cache, other chunks, token by token below.
  const bool cache_chunks =
      slice.reach == Reach::cache || (!kOnePassTargets && slice.reach == Reach::one_pass);
  if (cache_chunks && slice.blocks == 0) {
    if constexpr (L == Layout::interleaved) {
      return rotate_interleaved_run<Half>(typed, pairs, inverse);
    } else {
      return rotate_half_split_run<Half>(typed, pairs, pairs, static_cast<Index>(slice.half()),
                                         inverse);
    }
  }
  for (std::size_t t = 0; t < run.tokens; ++t) {
    rotate_token<Half, S, D, L>(typed.token(t), run.rows[t], slice, inverse);
  }
}

// The kernel of a layout, for heads of at most Half pairs (or Eigen::Dynamic) of S, written as D.
template <int Half, class S, class D = S>
Kernel kernel_for(Layout layout) noexcept {
  return layout == Layout::interleaved ? &kernel<Half, S, D, Layout::interleaved>
                                       : &kernel<Half, S, D, Layout::half_split>;
}

// The run kernel of a layout, as kernel_for.
template <int Half, class S, class D = S>
RunKernel run_kernel_for(Layout layout) noexcept {
  return layout == Layout::interleaved ? &run_kernel<Half, S, D, Layout::interleaved>
                                       : &run_kernel<Half, S, D, Layout::half_split>;
}

}  // namespace detail
}  // namespace ROPE_DETAIL_ISA
}  // namespace rope

#endif  // !ROPE_BELOW_CXX17
