// Context shift on quantised keys in place (Rotary::shift of a View<K>, K of rope/quantized.hpp).
// Bit for bit against the separate passes it replaces: each row decoded by a reference written
// here from the format (fp8 codes decoded in double, ggml's dequantize_row_q8_0 / q4_0
// transcribed), shifted in float by this library's shift, and quantised again by the references
// of quantized_reference.hpp. Then the error after 1 to 8 shifts against the float64 rotation
// of the original keys to their new positions, within the bound docs/numerics.md derives, and
// beside the error of keys recomputed at the new positions and quantised once. Then the errors.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <random>
#include <type_traits>
#include <vector>

#include <Eigen/Core>
#include <catch2/catch.hpp>

#include <rope/rope.hpp>

#include "quantized_reference.hpp"
#include "support.hpp"

namespace {

using rope::BlockQ4_0;
using rope::BlockQ8_0;
using rope::CacheScales;
using rope::Float8E4M3;
using rope::Float8E5M2;
using rope::Layout;
using rope::View;
using rope_test::Format;
using rope_test::same_bytes;

float float_of_half(std::uint16_t bits) {
  return static_cast<float>(Eigen::numext::bit_cast<Eigen::half>(bits));
}

// One head of K back to float, from the format's definition: the product of two floats,
// rounded once (`scale`: fp8's tensor scale, or int8's scale of this row and head).
template <class K>
void reference_load(const K* y, std::size_t d, float scale, float* x) {
  if constexpr (std::is_same_v<K, Float8E4M3> || std::is_same_v<K, Float8E5M2>) {
    const rope_test::Fp8Format& f =
        std::is_same_v<K, Float8E4M3> ? rope_test::kE4M3 : rope_test::kE5M2;
    for (std::size_t i = 0; i < d; ++i) {
      const double magnitude = rope_test::fp8_value(y[i].bits & 0x7Fu, f);
      const float v = float((y[i].bits & 0x80u) != 0 ? -magnitude : magnitude);
      x[i] = v * scale;
    }
  } else if constexpr (std::is_same_v<K, std::int8_t>) {
    for (std::size_t i = 0; i < d; ++i) x[i] = float(y[i]) * scale;
  } else if constexpr (std::is_same_v<K, BlockQ8_0>) {  // ggml's dequantize_row_q8_0
    for (std::size_t b = 0; b < d / 32; ++b) {
      const float dd = float_of_half(y[b].d);
      for (int j = 0; j < 32; ++j) x[32 * b + std::size_t(j)] = float(y[b].q[j]) * dd;
    }
  } else {  // ggml's dequantize_row_q4_0
    for (std::size_t b = 0; b < d / 32; ++b) {
      const float dd = float_of_half(y[b].d);
      for (int j = 0; j < 16; ++j) {
        const int x0 = (y[b].q[j] & 0x0F) - 8, x1 = (y[b].q[j] >> 4) - 8;
        x[32 * b + std::size_t(j)] = float(x0) * dd;
        x[32 * b + std::size_t(j) + 16] = float(x1) * dd;
      }
    }
  }
}

// A cache of `rows` rows of `heads` heads of d values of K, its int8 scales, and its tensor scale.
template <class K>
struct QuantizedKeys {
  static constexpr std::size_t per = rope::values_per_element_v<K>;
  std::size_t rows, heads, d;
  std::vector<K> cache;
  std::vector<float> per_row;
  CacheScales scales;

  QuantizedKeys(std::size_t r, std::size_t h, std::size_t size, const std::vector<float>& x)
      : rows(r), heads(h), d(size), cache(r * h * size / per), per_row(r * h) {
    scales = Format<K>::scales(per_row);
    for (std::size_t n = 0; n < rows * heads; ++n) {
      Format<K>::quantize(x.data() + n * d, d, cache.data() + n * d / per, &per_row[n]);
    }
  }
  QuantizedKeys(const QuantizedKeys& other)
      : rows(other.rows),
        heads(other.heads),
        d(other.d),
        cache(other.cache),
        per_row(other.per_row),
        scales(Format<K>::scales(per_row)) {}  // its own scales array
  QuantizedKeys& operator=(const QuantizedKeys&) = delete;
  View<K> view() { return View<K>::contiguous(cache.data(), rows, heads, d / per); }
  // Every head back to float.
  std::vector<float> load() const {
    std::vector<float> x(rows * heads * d);
    for (std::size_t n = 0; n < rows * heads; ++n) {
      const float s = std::is_same_v<K, std::int8_t> ? per_row[n] : float(scales.scale);
      reference_load(cache.data() + n * d / per, d, s, x.data() + n * d);
    }
    return x;
  }
};

// Keys of magnitude up to `size`, a few heads 100 times smaller (blocks and rows of small scale).
std::vector<float> random_keys(std::size_t count, std::size_t d, float size, std::mt19937_64& rng) {
  std::uniform_real_distribution<float> u(-size, size);
  std::vector<float> x(count);
  for (std::size_t i = 0; i < count; ++i) x[i] = u(rng) * ((i / d) % 4 == 3 ? 0.01f : 1.0f);
  return x;
}

// shift(View<K>) against load, shift in float by this library, quantise, for rows [first, last)
// of a cache on `threads` threads (other rows untouched).
template <class K>
void check_shift_bits(std::size_t d, std::size_t rotary_dim, Layout layout, std::int64_t delta,
                      std::size_t threads) {
  const std::size_t rows = 7, heads = 3, first = 1, last = 6;
  rope::Options options;
  options.head_size = d;
  options.rotary_dim = rotary_dim;
  options.layout = layout;
  const rope::Rotary<float> rot(options);
  std::mt19937_64 rng(d + std::size_t(layout) + std::size_t(delta & 0xFF));
  const std::vector<float> x = random_keys(rows * heads * d, d, 3.0f, rng);
  QuantizedKeys<K> shifted(rows, heads, d, x);
  QuantizedKeys<K> expected = shifted;
  rope::Call call;
  call.tokens = rope::TokenRange{first, last};
  call.execution.threads = threads;
  rot.shift(shifted.view(), shifted.scales, delta, call);

  // The separate passes: decode, shift in float, quantise each head of the range again.
  std::vector<float> floats = expected.load();
  rot.shift(View<float>::contiguous(floats.data(), rows, heads, d), delta, call);
  for (std::size_t n = first * heads; n < last * heads; ++n) {
    Format<K>::quantize(floats.data() + n * d, d, expected.cache.data() + n * d / expected.per,
                        &expected.per_row[n]);
  }
  CAPTURE(d, rotary_dim, int(layout), delta, threads);
  REQUIRE(same_bytes(shifted.cache, expected.cache));
  REQUIRE(same_bytes(shifted.per_row, expected.per_row));
}

template <class K>
void check_all_shifts() {
  for (const Layout layout : {Layout::interleaved, Layout::half_split}) {
    for (const std::int64_t delta : {std::int64_t(5), std::int64_t(-300), std::int64_t(1) << 40}) {
      check_shift_bits<K>(64, 0, layout, delta, 1);
      check_shift_bits<K>(128, 0, layout, delta, 2);
    }
    check_shift_bits<K>(96, 32, layout, 17, 1);  // a partial rotation: the rest requantised too
  }
}

// The largest error per coordinate that quantising a head x of K adds, from the format's step:
// q8_0 half a step d = max|x|/127 of its block, plus d's rounding to binary16 over up to 127
// steps; q4_0 a whole step |d| = max|x|/8 (the value at +8 steps is stored as 7) plus d's
// rounding over 8 steps; int8 half a step s = max|x|/127; fp8 half a unit in the last place of
// x/s (2^-4 of it for E4M3's 3 mantissa bits, 2^-3 for E5M2's 2), at least half the smallest
// subnormal (2^-10 and 2^-17), times s. Each with a margin of 2^-20 for the float arithmetic.
template <class K>
double quantization_error(const float* x, std::size_t d, double fp8_scale) {
  double bound = 0;
  for (std::size_t b = 0; b < d; b += 32) {
    double amax = 0;
    const std::size_t n = std::is_same_v<K, BlockQ8_0> || std::is_same_v<K, BlockQ4_0> ? 32 : d;
    if (b % n != 0) continue;
    for (std::size_t i = b; i < b + n; ++i) amax = std::max(amax, std::fabs(double(x[i])));
    double e = 0;
    if constexpr (std::is_same_v<K, BlockQ8_0>) e = amax / 127 * (0.5 + 127 * 0x1p-11);
    if constexpr (std::is_same_v<K, BlockQ4_0>) e = amax / 8 * (1.0 + 8 * 0x1p-11);
    if constexpr (std::is_same_v<K, std::int8_t>) e = amax / 127 * 0.5;
    if constexpr (std::is_same_v<K, Float8E4M3>) e = amax * 0x1p-4 + fp8_scale * 0x1p-10;
    if constexpr (std::is_same_v<K, Float8E5M2>) e = amax * 0x1p-3 + fp8_scale * 0x1p-17;
    bound = std::max(bound, e * (1 + 0x1p-20));
  }
  return bound;
}

// Keys rotated to m0 and quantised, then shifted by delta n times: after each shift every decoded
// coordinate against the float64 rotation of the original keys to m0 + n·delta. A pair's error is
// a vector that each later shift rotates (its length kept, up to float's rounding), and each
// quantisation adds at most √2·e to it (e the largest error per coordinate, above), so after n
// shifts each coordinate is within √2·(e_0 + … + e_n) plus the float rotations' rounding
// (8 units of 2^-24 of the head's largest pair per shift).
template <class K>
void check_shift_error(Layout layout, double fp8_scale) {
  constexpr std::size_t d = 128, heads = 4, rows = 1;
  const double m0 = 100, delta = 37;
  rope::Options options;
  options.head_size = d;
  options.layout = layout;
  const rope::Rotary<float> rot(options);
  std::mt19937_64 rng(11 + std::size_t(layout));
  const std::vector<float> x0 = random_keys(rows * heads * d, d, 4.0f, rng);
  const auto rotated_to = [&](double position) {
    std::vector<double> y(x0.begin(), x0.end());
    for (std::size_t h = 0; h < heads; ++h) {
      if (layout == Layout::interleaved) {
        rope::reference::rotate_interleaved(y.data() + h * d, d, position);
      } else {
        rope::reference::rotate_half_split(y.data() + h * d, d, position);
      }
    }
    return y;
  };
  const auto as_float = [](const std::vector<double>& y) {
    return std::vector<float>(y.begin(), y.end());
  };
  std::vector<float> start = as_float(rotated_to(m0));
  QuantizedKeys<K> keys(rows, heads, d, start);
  double largest_pair = 0;
  for (std::size_t i = 0; i < x0.size(); ++i) {
    largest_pair = std::max(largest_pair, std::sqrt(2.0) * std::fabs(double(x0[i])));
  }
  double sum_e = 0;  // e_0 + … + e_n, per head the largest
  for (std::size_t h = 0; h < heads; ++h) {
    sum_e = std::max(sum_e, quantization_error<K>(start.data() + h * d, d, fp8_scale));
  }
  for (int n = 1; n <= 8; ++n) {
    // e_n from the keys as this shift quantises them: the decoded keys rotated (bounded by the
    // reference plus the error so far).
    const std::vector<float> before = keys.load();
    std::vector<float> turned = before;
    rot.shift(View<float>::contiguous(turned.data(), rows, heads, d), std::int64_t(delta));
    double e_n = 0;
    for (std::size_t h = 0; h < heads; ++h) {
      e_n = std::max(e_n, quantization_error<K>(turned.data() + h * d, d, fp8_scale));
    }
    sum_e += e_n;
    rot.shift(keys.view(), keys.scales, std::int64_t(delta));
    const std::vector<double> exact = rotated_to(m0 + n * delta);
    const std::vector<float> got = keys.load();
    const double bound = std::sqrt(2.0) * sum_e + n * 8 * 0x1p-24 * largest_pair;
    double worst = 0;
    for (std::size_t i = 0; i < got.size(); ++i) {
      worst = std::max(worst, std::fabs(double(got[i]) - exact[i]));
    }
    // Keys recomputed at the new position and quantised once, for comparison.
    const std::vector<float> again = as_float(exact);
    const QuantizedKeys<K> recomputed(rows, heads, d, again);
    double recomputed_worst = 0;
    const std::vector<float> r = recomputed.load();
    for (std::size_t i = 0; i < r.size(); ++i) {
      recomputed_worst = std::max(recomputed_worst, std::fabs(double(r[i]) - exact[i]));
    }
    CAPTURE(n, worst, bound, recomputed_worst, int(layout));
    REQUIRE(worst <= bound);
    REQUIRE(worst > 0);  // the shifts do round: the check is not vacuous
  }
}

}  // namespace

TEST_CASE("quantised shift: bit for bit decode, shift in float, quantise", "[quantized][shift]") {
  check_all_shifts<Float8E4M3>();
  check_all_shifts<Float8E5M2>();
  check_all_shifts<std::int8_t>();
  check_all_shifts<BlockQ8_0>();
  check_all_shifts<BlockQ4_0>();
}

TEST_CASE("quantised shift: error after n shifts within the bound", "[quantized][shift]") {
  for (const Layout layout : {Layout::interleaved, Layout::half_split}) {
    check_shift_error<BlockQ8_0>(layout, 1.0);
    check_shift_error<BlockQ4_0>(layout, 1.0);
    check_shift_error<std::int8_t>(layout, 1.0);
    check_shift_error<Float8E4M3>(layout, 0.0625);  // the scales of Format<K>
    check_shift_error<Float8E5M2>(layout, 3.0);
  }
}

// ---- errors --------------------------------------------------------------------------------

namespace {

// A shift of 4 rows × 1 head of 64 keys of K, the cache filled, to be found untouched.
template <class K>
struct ShiftErrorCall {
  static constexpr std::size_t per = rope::values_per_element_v<K>;
  rope::Rotary<float> rot{[] {
    rope::Options o;
    o.head_size = 64;
    return o;
  }()};
  std::vector<unsigned char> cache = std::vector<unsigned char>(4 * 64 / per * sizeof(K), 0x21);
  std::vector<float> scales = std::vector<float>(4, 0.5f);
  View<K> view(std::size_t head = 64 / per) {
    return View<K>::contiguous(reinterpret_cast<K*>(cache.data()), 4, 1, head);
  }
  void require_untouched() const {
    REQUIRE(cache == std::vector<unsigned char>(cache.size(), 0x21));
    REQUIRE(scales == std::vector<float>(4, 0.5f));
  }
};

}  // namespace

TEST_CASE("quantised shift errors: whole blocks", "[errors][E84]") {
  ShiftErrorCall<BlockQ4_0> c;
  rope::Options o;
  o.head_size = 48;
  const rope::Rotary<float> rot48(o);
  rope_test::require_invalid(
      [&] { rot48.shift(c.view(1), {}, 3); },
      {"the key cache's blocks hold 32 values each, but the head size 48 is not a multiple of "
       "32"});
  c.require_untouched();
}

TEST_CASE("quantised shift errors: the scales the format takes", "[errors][E82][E83][E85][E86]") {
  ShiftErrorCall<Float8E4M3> fp8;
  rope_test::require_invalid([&] { fp8.rot.shift(fp8.view(), CacheScales::tensor(-1.0), 3); },
                             {"the fp8 key cache's scale -1 must be finite and > 0"});
  fp8.require_untouched();
  ShiftErrorCall<std::int8_t> int8;
  rope_test::require_invalid([&] { int8.rot.shift(int8.view(), {}, 3); },
                             {"an int8 key cache needs its scales array"});
  rope_test::require_invalid(
      [&] { int8.rot.shift(int8.view(), CacheScales::rows(int8.scales.data(), 3), 3); },
      {"holds 3 scales but the key cache's 4 rows x 1 heads need 4"});
  rope_test::require_invalid(
      [&] {
        int8.rot.shift(int8.view(),
                       CacheScales::rows(reinterpret_cast<float*>(int8.cache.data()), 4), 3);
      },
      {"the int8 key cache's scales", "share bytes with the keys"});
  int8.require_untouched();
  ShiftErrorCall<BlockQ8_0> blocks;
  rope_test::require_invalid([&] { blocks.rot.shift(blocks.view(), CacheScales::tensor(2.0), 3); },
                             {"a scale 2 for a key cache that takes none"});
  blocks.require_untouched();
}

TEST_CASE("quantised shift errors: delta as a shift's", "[errors][E34]") {
  ShiftErrorCall<BlockQ8_0> c;
  rope_test::require_out_of_range([&] { c.rot.shift(c.view(), {}, std::int64_t(1) << 60); },
                                  {"delta"});
  c.require_untouched();
}
