// The value loops of a call: multiplying, converting and copying runs of values, and which
// coordinates of a head rotate (Slice) and which are only copied, converted or scaled. They do
// not rotate; the walk (walk.hpp) calls them around the kernels, and rope::scale_queries and
// rope::normalize_heads use them alone.
#pragma once

#include <rope/config.hpp>
#if !defined(ROPE_BELOW_CXX17)  // config.hpp stops older standards with one #error

#include <array>
#include <cstddef>
#include <cstring>

#include <Eigen/Core>

#include <rope/detail/kernels.hpp>
#include <rope/detail/packet.hpp>
#include <rope/scalar.hpp>

namespace rope {
inline namespace ROPE_DETAIL_ISA {
namespace detail {

// Multiplies `count` values of T at `values` by s, in C = compute_t<T>, rounded once: whole
// registers of the kernels' type, then one value at a time, with the same bits (one product of
// exactly widened values, rounded to nearest even).
template <class T>
void scale_values(T* values, std::size_t count, double s) {
  using C = compute_t<T>;
  using P = ValueRegister<T>;
  constexpr std::size_t L = static_cast<std::size_t>(Registers<T>::kValues);
  const C factor = static_cast<C>(s);
  P k;
  if constexpr (Registers<T>::kEach == 2) {  // a Split
    k = {Eigen::internal::pset1<simd::Packet<float>>(factor),
         Eigen::internal::pset1<simd::Packet<float>>(factor)};
  } else {
    k = Eigen::internal::pset1<P>(factor);
  }
  std::size_t i = 0;
  for (; i + L <= count; i += L) simd::store(values + i, simd::mul(simd::load<P>(values + i), k));
  for (; i < count; ++i) values[i] = static_cast<T>(static_cast<C>(values[i]) * factor);
}

// Converts `count` values of S at `from` into D at `to`, rounded once to nearest even: whole
// registers of C = compute_t<S>, then one value at a time, with the same bits.
template <class S, class D>
void convert_values(const S* from, D* to, std::size_t count) {
  using C = compute_t<S>;
  using P = simd::Packet<C>;
  constexpr std::size_t L = static_cast<std::size_t>(simd::kLanes<C>);
  std::size_t i = 0;
  for (; i + L <= count; i += L) simd::store(to + i, simd::load<P>(from + i));
  for (; i < count; ++i) to[i] = static_cast<D>(static_cast<C>(from[i]));
}
// Which coordinates of a head rotate: the first `pairs` pairs of the slice [offset,
// offset + rotary_dim) of head_size. pairs is rotary_dim/2 but where the last pairs have θ = 0;
// those are left alone, so in half_split the slice has a gap [pairs, h) in each half
// (h = rotary_dim/2), and in interleaved the slice ends at offset + 2·pairs.
//
// Half_split pairs within blocks (Axes::with_pairs_within_blocks): `blocks` > 0 blocks of
// block_pairs[b] pairs each (an array its Rotary owns), adding up to pairs = h (no gap); block b
// is an ordinary half_split head of its own 2·block_pairs[b] coordinates, after the blocks before
// it.
struct Slice {
  std::size_t offset;
  std::size_t rotary_dim;
  std::size_t head_size;
  std::size_t pairs;
  std::size_t blocks = 0;
  const std::size_t* block_pairs = nullptr;
  // How far the call's bytes reach past the caches: set by the walk (walk.hpp), read by the
  // kernels to choose their passes over a token's heads (kernels.hpp). The bits are the same
  // whatever it is.
  Reach reach = Reach::cache;
  std::size_t half() const noexcept { return rotary_dim / 2; }
  bool whole() const noexcept { return rotary_dim == head_size && pairs == half(); }
  // The runs of coordinates the kernel does not reach, {first, count} in elements: before the
  // slice, after it, and the pairs [pairs, h) at the end of each half (empty for interleaved).
  struct Run {
    std::size_t first, count;
  };
  std::array<Run, 4> outside() const noexcept {
    const std::size_t end = offset + rotary_dim, gap = half() - pairs;
    return {{{0, offset},
             {end, head_size - end},
             {offset + pairs, gap},
             {offset + half() + pairs, gap}}};
  }
};

// Copies the coordinates that do not rotate of `count` heads of `size`-byte values, head n
// from src + n·src_stride to dst + n·dst_stride (strides in bytes); a head that is its own
// destination (in place) is left as it is.
inline void copy_outside_slice(const unsigned char* src, std::size_t src_stride, unsigned char* dst,
                               std::size_t dst_stride, std::size_t count, std::size_t size,
                               const Slice& slice) {
  const std::array<Slice::Run, 4> runs = slice.outside();
  for (std::size_t n = 0; n < count; ++n) {
    const unsigned char* x = src + n * src_stride;
    unsigned char* y = dst + n * dst_stride;
    if (x == y) continue;
    for (const Slice::Run& run : runs) {
      if (run.count != 0) std::memcpy(y + run.first * size, x + run.first * size, run.count * size);
    }
  }
}

template <class T>
void scale_outside_slice(unsigned char* heads, std::size_t stride, std::size_t count,
                         const Slice& slice, double s) {
  const std::array<Slice::Run, 4> runs = slice.outside();
  for (std::size_t n = 0; n < count; ++n) {
    T* y = reinterpret_cast<T*>(heads + n * stride);
    for (const Slice::Run& run : runs) scale_values(y + run.first, run.count, s);
  }
}

// copy_outside_slice for heads of S written as D.
template <class S, class D>
void convert_outside_slice(const unsigned char* src, std::size_t src_stride, unsigned char* dst,
                           std::size_t dst_stride, std::size_t count, const Slice& slice) {
  const std::array<Slice::Run, 4> runs = slice.outside();
  for (std::size_t n = 0; n < count; ++n) {
    const S* x = reinterpret_cast<const S*>(src + n * src_stride);
    D* y = reinterpret_cast<D*>(dst + n * dst_stride);
    for (const Slice::Run& run : runs) convert_values(x + run.first, y + run.first, run.count);
  }
}

}  // namespace detail
}  // namespace ROPE_DETAIL_ISA
}  // namespace rope

#endif  // !ROPE_BELOW_CXX17
