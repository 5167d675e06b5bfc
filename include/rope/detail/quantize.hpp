// The quantisers of rope/quantized.hpp's cache types, from heads of float, and their loads back to
// float (for the context shift), as the walk calls them (QuantizeJob, jobs.hpp). Each is the
// formula docs/api.md states for its format, one value at a time in plain loops the compiler
// vectorises.
//
// Where a formula rounds a product and then adds to it (q4_0's x·id + 8.5), the product is
// rounded_product(): a float product followed by a sum is what compilers contract into one fused
// multiply-add, whose single rounding changes the code. The other formulas divide (int8, fp8),
// add nothing to their product (q8_0, the decoders) or add to a product that is exact (fp8's
// subnormals, a power of two times a value of at most 2^M).
#pragma once

#include <rope/config.hpp>
#if !defined(ROPE_BELOW_CXX17)  // config.hpp stops older standards with one #error

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include <Eigen/Core>

#include <rope/detail/jobs.hpp>
#include <rope/detail/packet.hpp>
#include <rope/key_cache.hpp>
#include <rope/quantized.hpp>

namespace rope {
inline namespace ROPE_DETAIL_ISA {
namespace detail {

inline std::uint32_t float_bits(float v) noexcept {
  std::uint32_t u;
  std::memcpy(&u, &v, sizeof u);
  return u;
}

// x·y rounded to float, as a value no later addition is fused with. With FMA instructions at
// hand, g++ (outside ISO mode, its default) and clang with -ffp-contract=fast fuse a float product
// into the sum that uses it, across statements and through a detour in double (g++ narrows
// (float)((double)p + 8.5) back to p + 8.5f, then fuses it with p's product): one rounding where
// the format has two, and a code one less on some inputs on q4_0's boundaries (docs/design.md).
// An fma is never fused again, and fma(x, y, +0) is the rounded product (but for an exact −0,
// which becomes +0: no code here tells them apart). Without FMA there is nothing to fuse into.
inline float rounded_product(float x, float y) noexcept {
#if defined(__FMA__) || defined(__ARM_FEATURE_FMA)
  return std::fma(x, y, 0.0f);
#else
  return x * y;
#endif
}

// The two fp8 formats: exponent bias, mantissa bits, largest finite value.
template <class F>
struct Fp8;
template <>
struct Fp8<Float8E4M3> {
  static constexpr int bias = 7, mantissa = 3;
  static constexpr float max = 448.0f;
};
template <>
struct Fp8<Float8E5M2> {
  static constexpr int bias = 15, mantissa = 2;
  static constexpr float max = 57344.0f;
};

// v in the fp8 format F: |v| saturated at F's largest value, then rounded to nearest even; NaN
// stays NaN (0x7F with v's sign).
template <class F>
std::uint8_t to_fp8(float v) noexcept {
  constexpr int M = Fp8<F>::mantissa, B = Fp8<F>::bias;
  constexpr float smallest_normal = 1.0f / static_cast<float>(1 << (B - 1));
  const std::uint32_t sign = (float_bits(v) >> 24) & 0x80u;
  const float a = std::fabs(v);
  const bool nan = !(a == a);
  const float c = a < Fp8<F>::max ? a : Fp8<F>::max;
  // A normal value: the float's exponent and mantissa rounded to M bits, ties to even (a carry
  // out of the mantissa moves into the exponent), then the exponent rebiased.
  const std::uint32_t b = float_bits(c);
  const std::uint32_t rounded = (b + (1u << (22 - M)) - 1u + ((b >> (23 - M)) & 1u)) >> (23 - M);
  const std::uint32_t normal = rounded - ((127u - B) << M);
  // Below the smallest normal: c in units of the smallest subnormal, rounded to nearest even by
  // the addition of 2^23 (c·2^(B−1+M) is exact and at most 2^M).
  const float units = c * static_cast<float>(1 << (B - 1 + M)) + 8388608.0f;
  const std::uint32_t subnormal = float_bits(units) - 0x4B000000u;
  const std::uint32_t code = c < smallest_normal ? subnormal : normal;
  return static_cast<std::uint8_t>(sign | (nan ? 0x7Fu : code));
}

// ---- the stores, one per cache type -------------------------------------------------------

// fp8: each value x / scale in F.
template <class F>
void store_fp8(const QuantizeJob& job, const float* heads, std::size_t count, unsigned char* dst,
               std::size_t dst_stride, std::size_t) {
  const std::size_t d = job.head_size;
  for (std::size_t n = 0; n < count; ++n) {
    const float* x = heads + n * d;
    unsigned char* y = dst + n * dst_stride;
    for (std::size_t i = 0; i < d; ++i) y[i] = to_fp8<F>(x[i] / job.scale);
  }
}

// The largest and the smallest of n values, a register of them at a time (a NaN among them
// gives unspecified results).
struct Extremes {
  float high, low;
  // The largest magnitude, +0 for zeros.
  float magnitude() const noexcept { return std::fabs(high > -low ? high : low); }
};
inline Extremes extremes(const float* x, std::size_t n) {
  using P = simd::Packet<float>;
  constexpr std::size_t L = static_cast<std::size_t>(simd::kLanes<float>);
  Extremes e{x[0], x[0]};
  const std::size_t whole = n / L * L;  // values in whole registers
  if (whole != 0) {
    P high = simd::load<P>(x), low = high;
    for (std::size_t i = L; i < whole; i += L) {
      const P v = simd::load<P>(x + i);
      high = simd::max(high, v);
      low = simd::min(low, v);
    }
    e = {simd::reduce_max(high), simd::reduce_min(low)};
  }
  for (std::size_t i = whole; i < n; ++i) {
    e.high = simd::max(e.high, x[i]);
    e.low = simd::min(e.low, x[i]);
  }
  return e;
}

// int8, one scale per head: s = max|x| / 127, q = x / s to nearest even (0 where s is 0 or x is
// NaN), s written to per_row[r · heads + n]. The quotient is rounded before the addition of
// 1.5·2^23 that rounds it to an integer (no multiply to fuse with).
inline void store_int8(const QuantizeJob& job, const float* heads, std::size_t count,
                       unsigned char* dst, std::size_t dst_stride, std::size_t r) {
  const std::size_t d = job.head_size;
  for (std::size_t n = 0; n < count; ++n) {
    const float* x = heads + n * d;
    auto* y = reinterpret_cast<std::int8_t*>(dst + n * dst_stride);
    const float s = extremes(x, d).magnitude() / 127.0f;
    for (std::size_t i = 0; i < d; ++i) {
      const float v = x[i] / s;
      const float clamped = v < -127.0f ? -127.0f : (v > 127.0f ? 127.0f : v);
      const std::int32_t q =
          static_cast<std::int32_t>(float_bits(clamped + 12582912.0f) - 0x4B400000u);
      y[i] = static_cast<std::int8_t>(v == v ? q : 0);
    }
    job.per_row[r * job.heads + n] = s;
  }
}

// ggml's q8_0 of 32 values: d = max|x| / 127, id = 1/d (0 where d is 0), q = x·id rounded half
// away from zero: sign · ((trunc(|2v|) + 1) >> 1) for v = x·id, which needs no addition to the
// product (2v is exact).
//
// Blocks are written to their bytes in the cache as two stores, the scale's and the codes': a
// block put together on the stack and then copied reads its 34 bytes back across two stores of
// different widths, which the CPU cannot forward (a third of the time of a store, measured).
inline void q8_0_block(const float* x, unsigned char* block) {
  const float d = extremes(x, 32).magnitude() / 127.0f;
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  const std::uint16_t scale = simd::half_bits(d);
  std::int8_t q[32];
  for (int j = 0; j < 32; ++j) {
    const float v = rounded_product(x[j], id);
    const float twice = std::fabs(v * 2.0f);
    const std::int32_t n = twice < 256.0f ? static_cast<std::int32_t>(twice) : 0;  // NaN: 0
    const std::int32_t magnitude = (n + 1) >> 1;
    q[j] = static_cast<std::int8_t>(v < 0.0f ? -magnitude : magnitude);
  }
  std::memcpy(block + offsetof(BlockQ8_0, d), &scale, sizeof scale);
  std::memcpy(block + offsetof(BlockQ8_0, q), q, sizeof q);
}

// ggml's q4_0 of 32 values: m the first value of the largest magnitude (its sign kept),
// d = m / −8, id = 1/d (0 where d is 0), q = min(15, trunc(x·id + 8.5)), value j in the low
// nibble of byte j and value j + 16 in its high nibble; x·id rounded before the sum, as ggml's
// ISO C rounds it (rounded_product).
inline void q4_0_block(const float* x, unsigned char* block) {
  // The largest and smallest values say the sign of the largest magnitude, unless both reach it
  // (then the first of them, found by a scan; +0 for a block of zeros, as ggml starts from it).
  const Extremes e = extremes(x, 32);
  const float high = e.high, low = e.low;
  float max = high > -low ? high : low;
  if (high == -low) {
    max = 0.0f;
    for (int j = 0; j < 32 && high != 0.0f; ++j) {
      if (std::fabs(x[j]) == high) {
        max = x[j];
        break;
      }
    }
  }
  const float d = max / -8.0f;
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  const std::uint16_t scale = simd::half_bits(d);
  // Both nibbles of a byte in 32-bit lanes, narrowed once (bytes shifted apart do not vectorise).
  const auto code = [id](float v) {
    const float y = rounded_product(v, id) + 8.5f;
    const float in_range = y >= 0.0f ? (y < 15.0f ? y : 15.0f) : 0.0f;  // NaN: 0
    return static_cast<std::int32_t>(in_range);
  };
  std::uint8_t nibbles[16];
  for (int j = 0; j < 16; ++j) {
    nibbles[j] = static_cast<std::uint8_t>(code(x[j]) | (code(x[j + 16]) << 4));
  }
  std::memcpy(block + offsetof(BlockQ4_0, d), &scale, sizeof scale);
  std::memcpy(block + offsetof(BlockQ4_0, q), nibbles, sizeof nibbles);
}

template <class Block, void (*Quantize)(const float*, unsigned char*)>
void store_blocks(const QuantizeJob& job, const float* heads, std::size_t count, unsigned char* dst,
                  std::size_t dst_stride, std::size_t) {
  const std::size_t d = job.head_size;
  for (std::size_t n = 0; n < count; ++n) {
    for (std::size_t b = 0; b < d / 32; ++b) {
      Quantize(heads + n * d + 32 * b, dst + n * dst_stride + b * sizeof(Block));
    }
  }
}

// ---- the loads: a cache row's heads back to float, for the context shift ------------------

// Each value as its format defines it, one product rounded once: an fp8 code's value times the
// tensor's scale; int8's q times its row and head's scale; q8_0's d·q and q4_0's d·(q − 8), d
// the block's binary16 scale (ggml's dequantize_row_q8_0 and dequantize_row_q4_0). Head n of the
// row at src + n·src_stride bytes into heads + n·head_size.
// Each code's value in F, decoded once per program (a row's load looks them up).
template <class F>
const float* fp8_values() {
  static const std::array<float, 256> values = [] {
    std::array<float, 256> v{};
    for (std::size_t code = 0; code < 256; ++code) {
      v[code] = to_float(F{static_cast<std::uint8_t>(code)});
    }
    return v;
  }();
  return values.data();
}

template <class F>
void load_fp8(const QuantizeJob& job, const unsigned char* src, std::size_t src_stride,
              std::size_t count, std::size_t, float* heads) {
  const std::size_t d = job.head_size;
  const float* value = fp8_values<F>();
  for (std::size_t n = 0; n < count; ++n) {
    for (std::size_t i = 0; i < d; ++i)
      heads[n * d + i] = value[src[n * src_stride + i]] * job.scale;
  }
}

inline void load_int8(const QuantizeJob& job, const unsigned char* src, std::size_t src_stride,
                      std::size_t count, std::size_t r, float* heads) {
  const std::size_t d = job.head_size;
  for (std::size_t n = 0; n < count; ++n) {
    const float s = job.per_row[r * job.heads + n];
    const auto* q = reinterpret_cast<const std::int8_t*>(src + n * src_stride);
    for (std::size_t i = 0; i < d; ++i) heads[n * d + i] = static_cast<float>(q[i]) * s;
  }
}

inline float float_of_half(std::uint16_t bits) noexcept {
  return static_cast<float>(Eigen::numext::bit_cast<Eigen::half>(bits));
}

inline void q8_0_load(const unsigned char* block, float* x) {
  std::uint16_t bits;
  std::memcpy(&bits, block + offsetof(BlockQ8_0, d), sizeof bits);
  const float d = float_of_half(bits);
  const auto* q = reinterpret_cast<const std::int8_t*>(block + offsetof(BlockQ8_0, q));
  for (int j = 0; j < 32; ++j) x[j] = static_cast<float>(q[j]) * d;
}

inline void q4_0_load(const unsigned char* block, float* x) {
  std::uint16_t bits;
  std::memcpy(&bits, block + offsetof(BlockQ4_0, d), sizeof bits);
  const float d = float_of_half(bits);
  const unsigned char* q = block + offsetof(BlockQ4_0, q);
  for (int j = 0; j < 16; ++j) {
    x[j] = static_cast<float>((q[j] & 0x0F) - 8) * d;
    x[j + 16] = static_cast<float>((q[j] >> 4) - 8) * d;
  }
}

template <class Block, void (*Load)(const unsigned char*, float*)>
void load_blocks(const QuantizeJob& job, const unsigned char* src, std::size_t src_stride,
                 std::size_t count, std::size_t, float* heads) {
  const std::size_t d = job.head_size;
  for (std::size_t n = 0; n < count; ++n) {
    for (std::size_t b = 0; b < d / 32; ++b) {
      Load(src + n * src_stride + b * sizeof(Block), heads + n * d + 32 * b);
    }
  }
}

// The QuantizeJob of a cache of K (quantised) for heads of head_size, `heads` per row.
template <class K>
QuantizeJob quantize_job(const CacheScales& scales, std::size_t head_size,
                         std::size_t heads) noexcept {
  QuantizeJob job{head_size, static_cast<float>(scales.scale), scales.per_row, heads, nullptr,
                  nullptr};
  if constexpr (std::is_same_v<K, Float8E4M3> || std::is_same_v<K, Float8E5M2>) {
    job.store = &store_fp8<K>;
    job.load = &load_fp8<K>;
  } else if constexpr (std::is_same_v<K, std::int8_t>) {
    job.store = &store_int8;
    job.load = &load_int8;
  } else if constexpr (std::is_same_v<K, BlockQ8_0>) {
    job.store = &store_blocks<BlockQ8_0, &q8_0_block>;
    job.load = &load_blocks<BlockQ8_0, &q8_0_load>;
  } else {
    static_assert(std::is_same_v<K, BlockQ4_0>, "a quantised cache type of rope/quantized.hpp");
    job.store = &store_blocks<BlockQ4_0, &q4_0_block>;
    job.load = &load_blocks<BlockQ4_0, &q4_0_load>;
  }
  return job;
}

}  // namespace detail
}  // namespace ROPE_DETAIL_ISA
}  // namespace rope

#endif  // !ROPE_BELOW_CXX17
