// The quantised element types a key cache may hold: OCP fp8, int8 with a scale per head, and
// ggml's blocks of 32. A fused call rotates the keys in float and quantises each value once,
// as "rotate into a float cache, then quantise the row" would (docs/api.md, "Quantised key
// caches", gives each format's formula).
#pragma once

#include <rope/config.hpp>
#if !defined(ROPE_BELOW_CXX17)  // config.hpp stops older standards with one #error

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <type_traits>

namespace rope {
inline namespace ROPE_DETAIL_ISA {

/// One OCP 8-bit float as stored, E4M3FN: 4 exponent bits (bias 7), 3 mantissa bits, no
/// infinities; ±448 at most; 0x7F and 0xFF are NaN. A cache of them holds x / scale rounded to
/// nearest even, saturated at ±448.
struct Float8E4M3 {
  std::uint8_t bits;
};
/// E5M2: 5 exponent bits (bias 15), 2 mantissa bits, as IEEE binary16's upper byte; the cache
/// holds x / scale rounded to nearest even, saturated at ±57344 (never an infinity).
struct Float8E5M2 {
  std::uint8_t bits;
};

/// ggml's q8_0 block: 32 values x ≈ d·q, d the scale as IEEE binary16 bits and q int8 (34
/// bytes, the layout of ggml's block_q8_0).
struct BlockQ8_0 {
  std::uint16_t d;
  std::int8_t q[32];
};
/// ggml's q4_0 block: 32 values x ≈ d·(q − 8), q 4 bits: value j in the low nibble of byte j,
/// value j + 16 in its high nibble (18 bytes, the layout of ggml's block_q4_0).
struct BlockQ4_0 {
  std::uint16_t d;
  std::uint8_t q[16];
};

/// The value an fp8 code holds: exact in float; NaN for NaN codes, E5M2's infinities infinite.
inline float to_float(Float8E4M3 v) noexcept {
  const int exponent = (v.bits >> 3) & 0xF, mantissa = v.bits & 0x7;
  const float sign = (v.bits & 0x80) != 0 ? -1.0f : 1.0f;
  if (exponent == 0xF && mantissa == 0x7) return std::numeric_limits<float>::quiet_NaN();
  return sign * (exponent == 0 ? std::ldexp(float(mantissa), -9)
                               : std::ldexp(float(8 + mantissa), exponent - 10));
}
inline float to_float(Float8E5M2 v) noexcept {
  const int exponent = (v.bits >> 2) & 0x1F, mantissa = v.bits & 0x3;
  const float sign = (v.bits & 0x80) != 0 ? -1.0f : 1.0f;
  if (exponent == 0x1F) {
    return mantissa == 0 ? sign * std::numeric_limits<float>::infinity()
                         : std::numeric_limits<float>::quiet_NaN();
  }
  return sign * (exponent == 0 ? std::ldexp(float(mantissa), -16)
                               : std::ldexp(float(4 + mantissa), exponent - 17));
}

static_assert(sizeof(BlockQ8_0) == 34 && sizeof(BlockQ4_0) == 18, "ggml's block sizes");

/// The cache element types that need a quantiser: the two fp8 formats, std::int8_t (a scale per
/// row and head, in CacheScales) and the two block types.
template <class K>
inline constexpr bool is_quantized_v =
    std::is_same_v<K, Float8E4M3> || std::is_same_v<K, Float8E5M2> ||
    std::is_same_v<K, std::int8_t> || std::is_same_v<K, BlockQ8_0> || std::is_same_v<K, BlockQ4_0>;

/// Coordinates per element of K: 32 for a block type, 1 otherwise. A cache view of blocks has
/// heads of head_size / 32 elements.
template <class K>
inline constexpr std::size_t values_per_element_v =
    std::is_same_v<K, BlockQ8_0> || std::is_same_v<K, BlockQ4_0> ? 32 : 1;

}  // namespace ROPE_DETAIL_ISA
}  // namespace rope

#endif  // !ROPE_BELOW_CXX17
