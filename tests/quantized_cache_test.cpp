// Keys rotated straight into quantised caches (rope/quantized.hpp): fp8 E4M3FN and E5M2 with a
// scale for the tensor, int8 with a scale per row and head, ggml's q8_0 and q4_0 blocks. Each
// format's quantiser is checked against a reference written here from its definition (fp8: the
// nearest of the 256 codes, decoded from the format, found in double; q8_0 and q4_0: ggml's
// reference quantisers transcribed), and the fused call bit for bit against the separate passes
// it replaces: the keys rotated into a float cache at the same slots by this library, then each
// written row quantised by the reference. Then the errors.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include <Eigen/Core>
#include <catch2/catch.hpp>

#include <rope/detail/quantize.hpp>
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
using rope::Slots;
using rope::View;
using namespace rope_test;  // the references

// The fused call into a cache of K against the separate passes: the keys rotated by this library
// into a float cache at the same slots, each written row quantised by the reference.
template <class T, class K>
void check_quantized(std::size_t tokens, std::size_t d, std::size_t rotary_dim, Layout layout,
                     SlotKind kind, bool norm, std::size_t threads) {
  const std::size_t q_heads = 4, k_heads = 2, per = rope::values_per_element_v<K>;
  rope::Options options;
  options.head_size = d;
  options.layout = layout;
  options.rotary_dim = rotary_dim;
  options.max_positions = 256;  // some positions past it: rows computed on the fly
  const rope::Rotary<T> rot(options);
  std::mt19937_64 rng(tokens * 7 + d);
  // Keys of magnitude up to 4, and a few large or tiny heads: the scales, saturation and fp8's
  // subnormals are reached.
  auto q_in = rope_test::random_vector<T>(tokens * q_heads * d, rng);
  auto k_in = rope_test::random_vector<T>(tokens * k_heads * d, rng);
  for (std::size_t i = 0; i < k_in.size(); ++i) {
    const float scale = (i / d) % 5 == 3 ? 900.0f : ((i / d) % 5 == 4 ? 1e-3f : 4.0f);
    k_in[i] = T(float(k_in[i]) * scale);
  }
  std::vector<std::int64_t> positions(tokens);
  for (std::size_t t = 0; t < tokens; ++t) positions[t] = std::int64_t(t * 37 % 300);

  const std::size_t rows = kind == SlotKind::same_rows ? tokens : 2 * tokens + 1;
  std::vector<std::int64_t> slot(tokens);
  std::vector<std::int32_t> slot32(tokens);
  const std::uint64_t ring_first = 3 * tokens - 1;
  for (std::size_t t = 0; t < tokens; ++t) {
    slot[t] = kind == SlotKind::same_rows ? std::int64_t(t)
              : kind == SlotKind::ring    ? std::int64_t((ring_first + t) % rows)
              : t % 3 == 1                ? -1
                                          : std::int64_t((2 * t + 1) % rows);
    slot32[t] = std::int32_t(slot[t]);
  }
  Slots slots;
  if (kind == SlotKind::int32) slots = Slots(slot32.data(), tokens);
  if (kind == SlotKind::int64) slots = Slots(slot.data(), tokens);
  if (kind == SlotKind::ring) slots = Slots::ring(ring_first);

  std::vector<T> weight(d);
  for (std::size_t i = 0; i < d; ++i) weight[i] = T(0.5f + float(i % 7) / 8);
  const rope::Norm<T> k_norm =
      norm ? rope::Norm<T>{rope::NormKind::rms, weight.data(), d, 1e-6} : rope::Norm<T>{};

  // Fused.
  K filler;
  std::memset(&filler, 0x5A, sizeof filler);  // bytes the call must leave where it writes no row
  std::vector<K> cache(rows * k_heads * d / per, filler);
  std::vector<float> per_row(rows * k_heads, -1.0f);
  std::vector<T> q_fused = q_in;
  rope::KeyCache<K> to{View<K>::contiguous(cache.data(), rows, k_heads, d / per), slots,
                       Format<K>::scales(per_row)};
  rope::Call call;
  call.execution.threads = threads;
  rot.apply_qk(rope::Queries<T>(View<T>::contiguous(q_fused.data(), tokens, q_heads, d)),
               rope::Keys<T, K>(View<const T>::contiguous(k_in.data(), tokens, k_heads, d), to)
                   .normalized(k_norm),
               positions.data(), call);

  // Separate: rotate into a float cache at the slots, then quantise each written row.
  std::vector<float> floats(rows * k_heads * d, 0.0f);
  std::vector<T> q_separate = q_in;
  rot.apply_qk(
      rope::Queries<T>(View<T>::contiguous(q_separate.data(), tokens, q_heads, d)),
      rope::Keys<T, float>(View<const T>::contiguous(k_in.data(), tokens, k_heads, d),
                           {View<float>::contiguous(floats.data(), rows, k_heads, d), slots})
          .normalized(k_norm),
      positions.data());
  std::vector<K> expected(cache.size(), filler);
  std::vector<float> expected_scales(per_row.size(), -1.0f);
  for (std::size_t t = 0; t < tokens; ++t) {
    if (slot[t] < 0) continue;
    const std::size_t r = std::size_t(slot[t]);
    for (std::size_t h = 0; h < k_heads; ++h) {
      Format<K>::quantize(floats.data() + (r * k_heads + h) * d, d,
                          expected.data() + (r * k_heads + h) * d / per,
                          &expected_scales[r * k_heads + h]);
    }
  }
  CAPTURE(Format<K>::name, tokens, d, rotary_dim, int(layout), int(kind), norm, threads);
  REQUIRE(same_bytes(q_fused, q_separate));
  REQUIRE(same_bytes(cache, expected));
  if (std::is_same_v<K, std::int8_t>) REQUIRE(same_bytes(per_row, expected_scales));
}

template <class T, class K>
void check_all_shapes() {
  for (const Layout layout : {Layout::interleaved, Layout::half_split}) {
    for (const SlotKind kind :
         {SlotKind::same_rows, SlotKind::int32, SlotKind::int64, SlotKind::ring}) {
      check_quantized<T, K>(5, 64, 0, layout, kind, false, 1);
      check_quantized<T, K>(3, 128, 0, layout, kind, true, 1);
    }
    check_quantized<T, K>(7, 96, 32, layout, SlotKind::int64, false, 1);  // a partial slice
    check_quantized<T, K>(40, 64, 0, layout, SlotKind::ring, true, 2);    // two threads
  }
}

}  // namespace

TEST_CASE("fp8: every rounding boundary and edge to the nearest code, ties to even, saturated",
          "[quantized]") {
  for (const auto& [format, name] : {std::pair{kE4M3, "e4m3"}, std::pair{kE5M2, "e5m2"}}) {
    // The values, the midpoints between neighbours and the floats either side of each, beyond
    // the largest value, zeros, infinities, NaN and float subnormals.
    std::vector<float> inputs = {0.0f,    -0.0f, INFINITY, -INFINITY, std::nanf(""), 1e-40f,
                                 -1e-45f, 1e30f, -1e30f,   500.0f,    60000.0f,      65536.0f};
    std::vector<double> values;
    for (std::uint32_t c = 0; c < 0x80; ++c) {
      if (std::isfinite(fp8_value(c, format))) values.push_back(fp8_value(c, format));
    }
    std::sort(values.begin(), values.end());
    for (std::size_t i = 0; i < values.size(); ++i) {
      const double mid =
          i + 1 < values.size() ? (values[i] + values[i + 1]) / 2 : values[i] * 1.0625;
      for (const double x : {values[i], mid}) {
        const float f = float(x);  // exact: at most 5 significant bits
        for (const float v : {f, std::nextafter(f, 0.0f), std::nextafter(f, INFINITY)}) {
          inputs.push_back(v);
          inputs.push_back(-v);
        }
      }
    }
    std::mt19937_64 rng(5);
    std::uniform_real_distribution<double> exponent(-20, 20);
    for (int i = 0; i < 20000; ++i) inputs.push_back(float(std::exp2(exponent(rng))));
    for (const float v : inputs) {
      const std::uint8_t got =
          format.e4m3 ? rope::detail::to_fp8<Float8E4M3>(v) : rope::detail::to_fp8<Float8E5M2>(v);
      const std::uint8_t want = reference_fp8(v, format);
      CAPTURE(name, v, int(got), int(want));
      if (std::isnan(v)) {
        REQUIRE(std::isnan(fp8_value(got & 0x7Fu, format)));
        REQUIRE((got & 0x80u) == (want & 0x80u));
      } else {
        REQUIRE(got == want);
      }
    }
  }
}

TEMPLATE_TEST_CASE(
    "quantised key caches: the fused call is bit for bit rotate into float, the "
    "reference quantiser, scatter",
    "[quantized]", Float8E4M3, Float8E5M2, std::int8_t, BlockQ8_0, BlockQ4_0) {
  check_all_shapes<float, TestType>();
  check_all_shapes<Eigen::half, TestType>();
  check_all_shapes<Eigen::bfloat16, TestType>();
}

TEST_CASE("quantised key caches: q8_0 and q4_0 rows decode to the rotated keys within half a step",
          "[quantized]") {
  // Independent of the transcriptions: decoding the blocks (x = d·q, x = d·(q − 8)) gives the
  // float rotation back within half a quantisation step plus the scale's binary16 rounding.
  const std::size_t d = 64, tokens = 3;
  rope::Options options;
  options.head_size = d;
  const rope::Rotary<float> rot(options);
  std::mt19937_64 rng(9);
  const auto k = rope_test::random_vector<float>(tokens * d, rng);
  std::vector<float> q(tokens * d, 0.0f), floats(tokens * d);
  std::vector<BlockQ8_0> q8(tokens * d / 32);
  std::vector<BlockQ4_0> q4(tokens * d / 32);
  const std::int64_t positions[] = {3, 1000, 70000};
  const auto keys = View<const float>::contiguous(k.data(), tokens, 1, d);
  const auto queries = View<float>::contiguous(q.data(), tokens, 1, d);
  rot.apply_qk(
      queries,
      rope::Keys<float, float>(keys, {View<float>::contiguous(floats.data(), tokens, 1, d)}),
      positions);
  rot.apply_qk(queries,
               rope::Keys<float, BlockQ8_0>(
                   keys, {View<BlockQ8_0>::contiguous(q8.data(), tokens, 1, d / 32)}),
               positions);
  rot.apply_qk(queries,
               rope::Keys<float, BlockQ4_0>(
                   keys, {View<BlockQ4_0>::contiguous(q4.data(), tokens, 1, d / 32)}),
               positions);
  for (std::size_t b = 0; b < q8.size(); ++b) {
    const float d8 = float(Eigen::numext::bit_cast<Eigen::half>(q8[b].d));
    const float d4 = float(Eigen::numext::bit_cast<Eigen::half>(q4[b].d));
    for (std::size_t j = 0; j < 32; ++j) {
      const float x = floats[32 * b + j];
      const int nibble = j < 16 ? q4[b].q[j] & 0x0F : q4[b].q[j - 16] >> 4;
      // Half a step (a whole one where q4_0 clips its top code), and the scale's rounding to
      // binary16, 2^-11 of it times the largest code (2^-10 covers the float arithmetic too).
      REQUIRE(std::fabs(d8 * q8[b].q[j] - x) <= std::fabs(d8) * (0.5f + 127 * 0x1p-10f));
      REQUIRE(std::fabs(d4 * float(nibble - 8) - x) <= std::fabs(d4) * (1.0f + 8 * 0x1p-10f));
    }
  }
}

// ---- errors ---------------------------------------------------------------------------------

namespace {

// A call of 3 tokens, 2 query heads and 1 key head of 64 floats into a quantised cache of 4 rows
// of K; each test case breaks one requirement and checks that nothing was written.
template <class K>
struct QuantizedErrorCall {
  static constexpr std::size_t d = 64, tokens = 3, q_heads = 2, k_heads = 1, rows = 4;
  static constexpr std::size_t per = rope::values_per_element_v<K>;
  rope::Rotary<float> rot{[] {
    rope::Options o;
    o.head_size = d;
    return o;
  }()};
  std::vector<float> q = std::vector<float>(tokens * q_heads * d, 0.5f);
  std::vector<float> k = std::vector<float>(tokens * k_heads * d, 0.25f);
  std::vector<unsigned char> cache =
      std::vector<unsigned char>(rows * k_heads * d / per * sizeof(K), 0x33);
  std::vector<float> scales = std::vector<float>(rows * k_heads, -2.0f);
  std::vector<std::int64_t> positions = {0, 1, 2};
  std::vector<std::int64_t> slots = {3, 0, 2};

  View<float> q_view() { return View<float>::contiguous(q.data(), tokens, q_heads, d); }
  View<K> cache_view(std::size_t head = d / per) {
    return View<K>::contiguous(reinterpret_cast<K*>(cache.data()), rows, k_heads, head);
  }
  void call(const CacheScales& s, std::size_t head_size = d) {
    const auto keys = View<const float>::contiguous(k.data(), tokens, k_heads, head_size);
    const auto queries = View<float>::contiguous(q.data(), tokens, q_heads, head_size);
    if (head_size == d) {
      rot.apply_qk(rope::Queries<float>(queries),
                   rope::Keys<float, K>(keys, {cache_view(), Slots(slots.data(), tokens), s}),
                   positions.data());
    } else {
      rope::Options o;
      o.head_size = head_size;
      const rope::Rotary<float> other(o);
      other.apply_qk(rope::Queries<float>(queries),
                     rope::Keys<float, K>(keys, {cache_view(1), Slots(slots.data(), tokens), s}),
                     positions.data());
    }
  }
  void require_untouched() const {
    REQUIRE(q == std::vector<float>(tokens * q_heads * d, 0.5f));
    REQUIRE(k == std::vector<float>(tokens * k_heads * d, 0.25f));
    REQUIRE(cache == std::vector<unsigned char>(cache.size(), 0x33));
    REQUIRE(scales == std::vector<float>(rows * k_heads, -2.0f));
  }
};

}  // namespace

TEST_CASE("quantised cache errors: an fp8 scale finite, > 0 and a normal float", "[errors][E82]") {
  for (const double bad : {0.0, -1.0, std::nan(""), HUGE_VAL, 1e-40, 1e39}) {
    QuantizedErrorCall<Float8E4M3> c;
    CAPTURE(bad);
    rope_test::require_invalid([&] { c.call(CacheScales::tensor(bad)); },
                               {"the fp8 cache's scale", "must be finite and > 0"}, "rope: ");
    c.require_untouched();
  }
  QuantizedErrorCall<Float8E5M2> c;
  rope_test::require_invalid([&] { c.call(CacheScales::tensor(-0.5)); },
                             {"the fp8 cache's scale -0.5 must be finite and > 0"});
  c.require_untouched();
}

TEST_CASE("quantised cache errors: an int8 cache's scales given, one per row and head",
          "[errors][E83]") {
  QuantizedErrorCall<std::int8_t> c;
  rope_test::require_invalid([&] { c.call({}); }, {"an int8 cache needs its scales array"});
  c.require_untouched();
  rope_test::require_invalid(
      [&] { c.call(CacheScales::rows(c.scales.data(), 3)); },
      {"the int8 cache's scales array holds 3 scales but the cache's 4 rows x 1 heads need 4"});
  c.require_untouched();
}

TEST_CASE("quantised cache errors: a block cache's head size a multiple of 32", "[errors][E84]") {
  QuantizedErrorCall<BlockQ8_0> c8;
  rope_test::require_invalid(
      [&] { c8.call({}, 16); },
      {"the cache's blocks hold 32 values each, but the head size 16 is not a multiple of 32"});
  c8.require_untouched();
  QuantizedErrorCall<BlockQ4_0> c4;
  rope_test::require_invalid([&] { c4.call({}, 48); }, {"the head size 48 is not a multiple"});
  c4.require_untouched();
}

TEST_CASE("quantised cache errors: scales only for the caches that take them", "[errors][E85]") {
  QuantizedErrorCall<BlockQ8_0> blocks;
  rope_test::require_invalid([&] { blocks.call(CacheScales::tensor(2.0)); },
                             {"a scale 2 for a cache that takes none"});
  blocks.require_untouched();
  QuantizedErrorCall<Float8E4M3> fp8;
  rope_test::require_invalid([&] { fp8.call(CacheScales::rows(fp8.scales.data(), 4)); },
                             {"scales per row for a cache that takes none"});
  fp8.require_untouched();
  // A float cache: the plain KeyCache with a scale.
  QuantizedErrorCall<Float8E4M3> plain;
  std::vector<float> floats(16 * 64, 1.0f);
  rope_test::require_invalid(
      [&] {
        plain.rot.apply_qk(
            rope::Queries<float>(plain.q_view()),
            rope::Keys<float, float>(View<const float>::contiguous(plain.k.data(), 3, 1, 64),
                                     {View<float>::contiguous(floats.data(), 16, 1, 64),
                                      Slots(plain.slots.data(), 3), CacheScales::tensor(0.5)}),
            plain.positions.data());
      },
      {"a scale 0.5 for a cache that takes none"});
  plain.require_untouched();
  REQUIRE(floats == std::vector<float>(16 * 64, 1.0f));
}

TEST_CASE("quantised cache errors: an int8 cache's scales share no byte with the call's buffers",
          "[errors][E86]") {
  QuantizedErrorCall<std::int8_t> c;
  const std::vector<float> k_before = c.k;
  rope_test::require_invalid([&] { c.call(CacheScales::rows(c.k.data(), 4)); },
                             {"the int8 cache's scales", "share bytes with k"});
  c.require_untouched();
  rope_test::require_invalid(
      [&] { c.call(CacheScales::rows(reinterpret_cast<float*>(c.slots.data()), 4)); },
      {"share bytes with the slot array"});
  c.require_untouched();
}
