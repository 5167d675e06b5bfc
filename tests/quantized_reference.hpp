// References for the quantised caches' tests (rope/quantized.hpp), written from each format's
// definition: fp8 as the nearest of the 256 codes decoded in double, int8 from its formula,
// ggml's q8_0 and q4_0 reference quantisers transcribed; and each format as the tests loop over
// it (Format<K>: a name, the scales a cache takes, the reference on one head).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include <Eigen/Core>

#include <rope/rope.hpp>

namespace rope_test {

using rope::BlockQ4_0;
using rope::BlockQ8_0;
using rope::CacheScales;
using rope::Float8E4M3;
using rope::Float8E5M2;

// ---- references --------------------------------------------------------------------------

struct Fp8Format {
  int exponent_bits, mantissa_bits, bias;
  bool e4m3;  // E4M3FN: no infinities, only S.1111.111 is NaN
};
inline constexpr Fp8Format kE4M3{4, 3, 7, true};
inline constexpr Fp8Format kE5M2{5, 2, 15, false};

// The value of a code of 7 bits (no sign) in the format; NaN for NaN codes, infinity for E5M2's.
inline double fp8_value(std::uint32_t code, const Fp8Format& f) {
  const std::uint32_t exponent = code >> f.mantissa_bits;
  const std::uint32_t mantissa = code & ((1u << f.mantissa_bits) - 1);
  const std::uint32_t top = (1u << f.exponent_bits) - 1;
  if (f.e4m3 && exponent == top && mantissa == (1u << f.mantissa_bits) - 1) return std::nan("");
  if (!f.e4m3 && exponent == top)
    return mantissa == 0 ? std::numeric_limits<double>::infinity() : std::nan("");
  const double m = double(mantissa) / double(1u << f.mantissa_bits);
  return exponent == 0 ? std::ldexp(m, 1 - f.bias) : std::ldexp(1 + m, int(exponent) - f.bias);
}

// v in the format by the definition: NaN to NaN; otherwise |v| saturated at the largest finite
// value, then the nearest code (ties: the even code), v's sign.
inline std::uint8_t reference_fp8(float v, const Fp8Format& f) {
  const std::uint32_t sign = std::signbit(v) ? 0x80u : 0u;
  if (std::isnan(v)) return std::uint8_t(sign | 0x7Fu);
  double largest = 0;
  for (std::uint32_t c = 0; c < 0x80; ++c) {
    const double x = fp8_value(c, f);
    if (std::isfinite(x)) largest = std::max(largest, x);
  }
  const double a = std::min(std::fabs(double(v)), largest);
  std::uint32_t best = 0;
  double best_error = std::numeric_limits<double>::infinity();
  for (std::uint32_t c = 0; c < 0x80; ++c) {
    const double x = fp8_value(c, f);
    if (!std::isfinite(x)) continue;
    const double error = std::fabs(x - a);
    if (error < best_error || (error == best_error && c % 2 == 0)) best = c, best_error = error;
  }
  return std::uint8_t(sign | best);
}

inline std::uint16_t half_bits(float v) {
  return Eigen::numext::bit_cast<std::uint16_t>(Eigen::half(v));
}

// ggml's quantize_row_q8_0_ref on one block, transcribed (volatile: no fused multiply-add may
// join the product to what follows, as in ggml's ISO C build).
inline BlockQ8_0 ggml_q8_0(const float* x) {
  BlockQ8_0 y{};
  float amax = 0.0f;
  for (int j = 0; j < 32; ++j) amax = amax > std::fabs(x[j]) ? amax : std::fabs(x[j]);
  const float d = amax / ((1 << 7) - 1);
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  y.d = half_bits(d);
  for (int j = 0; j < 32; ++j) {
    const volatile float x0 = x[j] * id;
    y.q[j] = static_cast<std::int8_t>(std::round(x0));
  }
  return y;
}

// ggml's quantize_row_q4_0_ref on one block, transcribed.
inline BlockQ4_0 ggml_q4_0(const float* x) {
  BlockQ4_0 y{};
  float amax = 0.0f, max = 0.0f;
  for (int j = 0; j < 32; ++j) {
    if (amax < std::fabs(x[j])) {
      amax = std::fabs(x[j]);
      max = x[j];
    }
  }
  const float d = max / -8;
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  y.d = half_bits(d);
  for (int j = 0; j < 16; ++j) {
    const volatile float x0 = x[j] * id;
    const volatile float x1 = x[16 + j] * id;
    const std::uint8_t xi0 = std::uint8_t(std::min(15, int(static_cast<std::int8_t>(x0 + 8.5f))));
    const std::uint8_t xi1 = std::uint8_t(std::min(15, int(static_cast<std::int8_t>(x1 + 8.5f))));
    y.q[j] = std::uint8_t(xi0 | (xi1 << 4));
  }
  return y;
}

// The int8 format as docs/api.md states it: s = max|x| / 127, q = x / s to nearest even (0 where
// s is 0).
inline float reference_int8(const float* x, std::size_t d, std::int8_t* q) {
  float amax = 0.0f;
  for (std::size_t i = 0; i < d; ++i) amax = std::max(amax, std::fabs(x[i]));
  const float s = amax / 127.0f;
  for (std::size_t i = 0; i < d; ++i) {
    q[i] = s == 0.0f
               ? std::int8_t(0)
               : static_cast<std::int8_t>(std::nearbyint(std::clamp(x[i] / s, -127.0f, 127.0f)));
  }
  return s;
}

// ---- the formats as the tests loop over them ----------------------------------------------

template <class K>
struct Format;
template <>
struct Format<Float8E4M3> {
  static constexpr const char* name = "fp8 e4m3";
  static CacheScales scales(std::vector<float>&) { return CacheScales::tensor(0.0625); }
  static void quantize(const float* x, std::size_t d, Float8E4M3* y, float*) {
    for (std::size_t i = 0; i < d; ++i) y[i].bits = reference_fp8(x[i] / 0.0625f, kE4M3);
  }
};
template <>
struct Format<Float8E5M2> {
  static constexpr const char* name = "fp8 e5m2";
  static CacheScales scales(std::vector<float>&) { return CacheScales::tensor(3.0); }
  static void quantize(const float* x, std::size_t d, Float8E5M2* y, float*) {
    for (std::size_t i = 0; i < d; ++i) y[i].bits = reference_fp8(x[i] / 3.0f, kE5M2);
  }
};
template <>
struct Format<std::int8_t> {
  static constexpr const char* name = "int8";
  static CacheScales scales(std::vector<float>& per_row) {
    return CacheScales::rows(per_row.data(), per_row.size());
  }
  static void quantize(const float* x, std::size_t d, std::int8_t* y, float* s) {
    *s = reference_int8(x, d, y);
  }
};
template <>
struct Format<BlockQ8_0> {
  static constexpr const char* name = "q8_0";
  static CacheScales scales(std::vector<float>&) { return {}; }
  static void quantize(const float* x, std::size_t d, BlockQ8_0* y, float*) {
    for (std::size_t b = 0; b < d / 32; ++b) y[b] = ggml_q8_0(x + 32 * b);
  }
};
template <>
struct Format<BlockQ4_0> {
  static constexpr const char* name = "q4_0";
  static CacheScales scales(std::vector<float>&) { return {}; }
  static void quantize(const float* x, std::size_t d, BlockQ4_0* y, float*) {
    for (std::size_t b = 0; b < d / 32; ++b) y[b] = ggml_q4_0(x + 32 * b);
  }
};

// The scales a cache of K takes in the tests: its format's (an int8 cache's in per_row, one per
// row and head), none for a float or 16-bit cache.
template <class K>
CacheScales scales_of(std::vector<float>& per_row) {
  if constexpr (rope::is_quantized_v<K>) {
    return Format<K>::scales(per_row);
  } else {
    static_cast<void>(per_row);
    return {};
  }
}

enum class SlotKind { same_rows, int32, int64, ring };

template <class K>
bool same_bytes(const std::vector<K>& a, const std::vector<K>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(K)) == 0;
}

}  // namespace rope_test
