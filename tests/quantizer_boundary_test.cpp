// The quantisers on their rounding boundaries. Each format rounds a product (q8_0, q4_0: x·id)
// or a quotient (int8, fp8: x / s) to float and then to a code, and random keys reach a value
// whose rounded product lies exactly on the line between two codes about once in 2^21. Here the
// inputs are constructed to lie there: for every boundary of every code, the floats x whose
// rounded x·id (x / s) is the boundary itself or the float either side of it. Each goes through
// the library's own path (keys rotated at position 0, the identity, into a cache of the format)
// and must give the reference's bytes (tests/quantized_reference.hpp: ggml's reference
// quantisers transcribed with every product rounded, fp8 by the nearest code found in double).
//
// CMake builds this file twice: in the test programs with the build's flags, and in
// rope_contraction_tests with -ffp-contract=fast, where the compiler may fuse any product with
// the sum after it; the bits must not change (docs/numerics.md).
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include <catch2/catch.hpp>

#include <rope/rope.hpp>

#include "quantized_reference.hpp"

namespace {

using rope::BlockQ4_0;
using rope::BlockQ8_0;
using rope::Float8E4M3;
using rope::Float8E5M2;
using rope::View;
using namespace rope_test;  // the references

float next_up(float v) { return std::nextafter(v, std::numeric_limits<float>::infinity()); }
float next_down(float v) { return std::nextafter(v, -std::numeric_limits<float>::infinity()); }

// x·y and x / y rounded once to float: the double product of two floats is exact, and a double
// quotient rounded to float is the float quotient (53 ≥ 2·24 + 2 bits).
float product(float x, float y) { return static_cast<float>(double(x) * double(y)); }
float quotient(float x, float y) { return static_cast<float>(double(x) / double(y)); }

// The boundary inputs of one line t between two codes: floats x near x0 (a first guess at the
// x whose result is t) whose rounded result op(x) is next_down(t), t or next_up(t), with |x| at
// most `limit` (the block's or head's largest magnitude, which sets its scale). Returns how many
// land exactly on t.
template <class Op>
int boundary_inputs(float t, float x0, float limit, Op op, std::vector<float>& out) {
  int exact = 0;
  float x = x0;
  for (int i = 0; i < 24; ++i) x = next_down(x);
  for (int i = 0; i < 48; ++i, x = next_up(x)) {
    const float r = op(x);
    if (std::fabs(x) >= limit || !(r == t || r == next_down(t) || r == next_up(t))) continue;
    out.push_back(x);
    exact += r == t ? 1 : 0;
  }
  return exact;
}

// Rows of `width` floats, each row the first value `lead` (the row's or block's largest
// magnitude) followed by width − 1 of `inputs`, the last row padded with zeros.
void put_in_rows(float lead, const std::vector<float>& inputs, std::size_t width,
                 std::vector<float>& rows) {
  for (std::size_t i = 0; i < inputs.size(); i += width - 1) {
    rows.push_back(lead);
    for (std::size_t k = 0; k < width - 1; ++k) {
      rows.push_back(i + k < inputs.size() ? inputs[i + k] : 0.0f);
    }
  }
}

// The keys (d = 128 values per token, one head) rotated at position 0 into a cache of K through
// the fused call, against Format<K>'s reference quantiser on the same floats.
template <class K>
void check_through_rotary(std::vector<float> keys) {
  constexpr std::size_t d = 128, per = rope::values_per_element_v<K>;
  while (keys.size() % d != 0) keys.push_back(0.0f);
  const std::size_t tokens = keys.size() / d;
  rope::Options options;
  options.head_size = d;
  const rope::Rotary<float> rot(options);
  const std::vector<std::int64_t> positions(tokens, 0);
  std::vector<float> queries(tokens * d, 1.0f);
  // Position 0 is the identity to the last bit (docs/numerics.md), so the quantiser sees `keys`.
  std::vector<float> floats(keys.size(), -1.0f);
  rot.apply_qk(rope::Queries<float>(View<float>::contiguous(queries.data(), tokens, 1, d)),
               rope::Keys<float, float>(View<const float>::contiguous(keys.data(), tokens, 1, d),
                                        {View<float>::contiguous(floats.data(), tokens, 1, d)}),
               positions.data());
  REQUIRE(std::memcmp(floats.data(), keys.data(), keys.size() * sizeof(float)) == 0);

  std::vector<K> cache(tokens * d / per);
  std::vector<float> per_row(tokens, -1.0f);
  rot.apply_qk(rope::Queries<float>(View<float>::contiguous(queries.data(), tokens, 1, d)),
               rope::Keys<float, K>(View<const float>::contiguous(keys.data(), tokens, 1, d),
                                    {View<K>::contiguous(cache.data(), tokens, 1, d / per),
                                     rope::Slots{}, Format<K>::scales(per_row)}),
               positions.data());
  std::vector<K> expected(cache.size());
  std::vector<float> expected_scales(tokens, -1.0f);
  for (std::size_t t = 0; t < tokens; ++t) {
    Format<K>::quantize(keys.data() + t * d, d, expected.data() + t * d / per, &expected_scales[t]);
  }
  std::size_t first_difference = 0;  // the token, for the message
  while (first_difference < tokens &&
         std::memcmp(cache.data() + first_difference * d / per,
                     expected.data() + first_difference * d / per, d / per * sizeof(K)) == 0) {
    ++first_difference;
  }
  INFO(Format<K>::name << ": token " << first_difference << " of " << tokens << " differs");
  REQUIRE(same_bytes(cache, expected));
  REQUIRE(same_bytes(per_row, expected_scales));
}

// Largest magnitudes that set a block's or head's scale: binary16-exact values and random ones,
// of both signs (q4_0's sign of the largest value is its scale's).
std::vector<float> leads(std::mt19937_64& rng, int count) {
  std::vector<float> out = {1.0f, -1.0f, 3.0f, -2.3958707f, 0.1f, -7.75f, 1000.0f, -1e-3f};
  std::uniform_real_distribution<float> mantissa(1.0f, 2.0f);
  std::uniform_int_distribution<int> exponent(-12, 12);
  while (static_cast<int>(out.size()) < count) {
    const float v = std::ldexp(mantissa(rng), exponent(rng));
    out.push_back(out.size() % 2 == 0 ? v : -v);
  }
  return out;
}

}  // namespace

TEST_CASE("q4_0: x*id on every code's boundary and one float either side gives ggml's codes",
          "[quantized][boundary]") {
  // ggml: q = min(15, trunc(fl(fl(x·id) + 8.5))), so the lines between codes k − 1 and k are
  // where fl(x·id) + 8.5 reaches k: x·id = k − 8.5 for k = 1 .. 15 (16 is where 15 saturates).
  std::mt19937_64 rng(47);
  std::vector<float> keys;
  std::vector<int> exact(17, 0);
  for (const float m : leads(rng, 24)) {
    const float d = m / -8.0f, id = 1.0f / d;
    std::vector<float> inputs;
    for (std::size_t k = 1; k <= 16; ++k) {
      const float t = static_cast<float>(k) - 8.5f;
      exact[k] += boundary_inputs(
          t, quotient(t, id), std::fabs(m), [id](float x) { return product(x, id); }, inputs);
    }
    put_in_rows(m, inputs, 32, keys);
  }
  for (std::size_t k = 1; k <= 16; ++k) {
    INFO("the line below code " << k);
    CHECK(exact[k] > 0);
  }
  INFO(keys.size() << " values");
  check_through_rotary<BlockQ4_0>(keys);
}

TEST_CASE("q8_0: x*id on every code's boundary and one float either side gives ggml's codes",
          "[quantized][boundary]") {
  // ggml: q = round(fl(x·id)), halves away from zero: the lines are x·id = ±(k + 0.5) for
  // k = 0 .. 126.
  std::mt19937_64 rng(48);
  std::vector<float> keys;
  std::vector<int> exact(127, 0);
  for (const float m : leads(rng, 12)) {
    const float d = std::fabs(m) / 127.0f, id = 1.0f / d;
    std::vector<float> inputs;
    for (std::size_t k = 0; k <= 126; ++k) {
      for (const float t : {static_cast<float>(k) + 0.5f, -static_cast<float>(k) - 0.5f}) {
        exact[k] += boundary_inputs(
            t, quotient(t, id), std::fabs(m), [id](float x) { return product(x, id); }, inputs);
      }
    }
    put_in_rows(m, inputs, 32, keys);
  }
  for (std::size_t k = 0; k <= 126; ++k) {
    INFO("the lines at +-" << k << ".5");
    CHECK(exact[k] > 0);
  }
  check_through_rotary<BlockQ8_0>(keys);
}

TEST_CASE("int8: x/s on every code's boundary and one float either side rounds to nearest even",
          "[quantized][boundary]") {
  // s = max|x| / 127, q = fl(x / s) to nearest even: the lines are x / s = ±(k + 0.5).
  std::mt19937_64 rng(49);
  std::vector<float> keys;
  std::vector<int> exact(127, 0);
  for (const float m : leads(rng, 12)) {
    const float s = std::fabs(m) / 127.0f;
    std::vector<float> inputs;
    for (std::size_t k = 0; k <= 126; ++k) {
      for (const float t : {static_cast<float>(k) + 0.5f, -static_cast<float>(k) - 0.5f}) {
        exact[k] += boundary_inputs(
            t, product(t, s), std::fabs(m), [s](float x) { return quotient(x, s); }, inputs);
      }
    }
    put_in_rows(m, inputs, 128, keys);
  }
  for (std::size_t k = 0; k <= 126; ++k) {
    INFO("the lines at +-" << k << ".5");
    CHECK(exact[k] > 0);
  }
  check_through_rotary<std::int8_t>(keys);
}

TEMPLATE_TEST_CASE("fp8: x/s on every code's boundary and one float either side gives the nearest",
                   "[quantized][boundary]", Float8E4M3, Float8E5M2) {
  // The lines are the midpoints between neighbouring finite codes' values (both signs), and
  // the largest finite value, past which |x / s| saturates. s is the tests' scale of the format.
  const Fp8Format format = std::is_same_v<TestType, Float8E4M3> ? kE4M3 : kE5M2;
  std::vector<float> per_row;
  const float s = static_cast<float>(Format<TestType>::scales(per_row).scale);
  std::vector<double> values;
  for (std::uint32_t code = 0; code < 0x80; ++code) {
    const double v = fp8_value(code, format);
    if (std::isfinite(v)) values.push_back(v);
  }
  std::vector<float> inputs;
  int lines = 0, exact_lines = 0;
  const float limit = std::numeric_limits<float>::max();
  for (std::size_t i = 0; i < values.size(); ++i) {
    const double line = i + 1 < values.size() ? (values[i] + values[i + 1]) / 2 : values[i];
    for (const float t : {static_cast<float>(line), -static_cast<float>(line)}) {
      ++lines;
      exact_lines +=
          boundary_inputs(
              t, product(t, s), limit, [s](float x) { return quotient(x, s); }, inputs) > 0
              ? 1
              : 0;
    }
  }
  CHECK(exact_lines == lines);
  check_through_rotary<TestType>(inputs);
}
