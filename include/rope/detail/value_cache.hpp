// The values of a fused call (Keys::values) with their cache's element type erased: how the walk
// stores heads of T into a cache of V (converted, or into float and then quantised), so that no
// code of the call depends on V. The role's constructor picks the functions for its (T, V).
#pragma once

#include <rope/config.hpp>
#if !defined(ROPE_BELOW_CXX17)  // config.hpp stops older standards with one #error

#include <cstddef>
#include <cstring>
#include <type_traits>

#include <rope/detail/geometry.hpp>
#include <rope/detail/jobs.hpp>
#include <rope/detail/quantize.hpp>
#include <rope/detail/values.hpp>
#include <rope/key_cache.hpp>
#include <rope/quantized.hpp>
#include <rope/scalar.hpp>

namespace rope {
inline namespace ROPE_DETAIL_ISA {
namespace detail {

template <class K>
constexpr Quantization quantization_of() noexcept {
  if constexpr (!is_quantized_v<K>) {
    return Quantization::none;
  } else if constexpr (std::is_same_v<K, std::int8_t>) {
    return Quantization::int8;
  } else {
    return values_per_element_v<K> == 32 ? Quantization::blocks : Quantization::fp8;
  }
}

// Elements of a cache head of head_size values: a block holds 32 of them, others one.
constexpr std::size_t cache_head(Quantization q, std::size_t head_size) noexcept {
  return q == Quantization::blocks ? head_size / 32 : head_size;
}

// `count` heads of S into D (CopyHeads): one run where both sides' heads are contiguous, else
// head by head; converted as convert_values does, copied where the types are one.
template <class S, class D>
void copy_heads(const unsigned char* src, std::size_t src_stride, unsigned char* dst,
                std::size_t dst_stride, std::size_t count, std::size_t head_size) {
  const bool run = src_stride == head_size * sizeof(S) && dst_stride == head_size * sizeof(D);
  const std::size_t runs = run ? 1 : count, length = run ? count * head_size : head_size;
  for (std::size_t n = 0; n < runs; ++n) {
    const auto* x = reinterpret_cast<const S*>(src + n * src_stride);
    auto* y = reinterpret_cast<D*>(dst + n * dst_stride);
    if constexpr (std::is_same_v<S, D>) {
      std::memcpy(y, x, length * sizeof(S));
    } else {
      convert_values(x, y, length);
    }
  }
}

// How heads of T go into a cache of V: `copy` converts them to V, or to float for a quantised V,
// whose `quantizer` makes the job that stores float heads as V.
struct ValueFormat {
  Quantization quantization;
  CopyHeads copy;
  QuantizeJob (*quantizer)(const CacheScales& scales, std::size_t head_size, std::size_t heads);
};

template <class V>
constexpr auto quantizer_of() noexcept {
  QuantizeJob (*quantizer)(const CacheScales&, std::size_t, std::size_t) = nullptr;
  if constexpr (is_quantized_v<V>) quantizer = &quantize_job<V>;
  return quantizer;
}

template <class T, class V>
inline constexpr ValueFormat value_format = {
    quantization_of<V>(), &copy_heads<T, std::conditional_t<is_quantized_v<V>, float, V>>,
    quantizer_of<V>()};

// A ValueCache<V> with V erased.
struct ErasedCache {
  Geometry rows;
  CacheScales scales;
  std::size_t head_size;  // 0: the keys'
  Coordinates coordinates;
  const ValueFormat* format;
};

}  // namespace detail
}  // namespace ROPE_DETAIL_ISA
}  // namespace rope

#endif  // !ROPE_BELOW_CXX17
