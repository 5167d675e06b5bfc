// Scaling schemes: θ_j and the attention factor of each against an independent float64
// implementation written here from the formulas (HuggingFace's rope_type definitions), for real
// checkpoint configurations; the attention factor in Rotary's table; bad parameters.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include <rope/rope.hpp>

#include "support.hpp"

namespace {

constexpr double kPi = 3.141592653589793238462643383279502884;

// θ_j as HuggingFace writes it: 1 / base^(2j/d), in double.
std::vector<double> plain_theta(std::size_t d, double base) {
  std::vector<double> theta(d / 2);
  for (std::size_t j = 0; j < d / 2; ++j)
    theta[j] = 1.0 / std::pow(base, double(2 * j) / double(d));
  return theta;
}

// Relative agreement of two evaluations of a scheme's θ_j with effective base b. This file's
// side: the exponent 2j/d rounded in double, amplified by ln(b), plus pow (≤ 1 ulp = 2u) and
// the division (u); the library's side: θ_j within u, its effective base rounded once (≤ u).
// Each side then applies at most 4 roundings of the scheme's own arithmetic (a division by the
// factor, a ramp or blend weight, two products and a sum). (ln b + 3 + 2 + 8)·u, rounded up to
// (2·ln b + 16)·u.
double theta_tolerance(double effective_base) {
  return (2 * std::log(effective_base) + 16) * rope_test::unit_roundoff<double>;
}

void require_theta(const std::vector<double>& got, const std::vector<double>& expected,
                   double effective_base) {
  REQUIRE(got.size() == expected.size());
  for (std::size_t j = 0; j < got.size(); ++j) {
    INFO("pair " << j);
    CHECK_THAT(got[j], Catch::Matchers::WithinRel(expected[j], theta_tolerance(effective_base)));
  }
}

// HuggingFace's get_mscale.
double mscale_of(double scale, double mscale = 1.0) {
  return scale <= 1 ? 1.0 : 0.1 * mscale * std::log(scale) + 1.0;
}

// YaRN's θ_j written from the formulas: correction dims, ramp, blend.
std::vector<double> yarn_theta(std::size_t d, double base, double factor, double l0,
                               double beta_fast, double beta_slow, bool truncate) {
  const auto correction = [&](double turns) {
    return double(d) * std::log(l0 / (turns * 2 * kPi)) / (2 * std::log(base));
  };
  double low = correction(beta_fast), high = correction(beta_slow);
  if (truncate) {
    low = std::floor(low);
    high = std::ceil(high);
  }
  low = std::max(low, 0.0);
  high = std::min(high, double(d) - 1);
  if (low == high) high += 0.001;
  std::vector<double> theta = plain_theta(d, base);
  for (std::size_t j = 0; j < theta.size(); ++j) {
    double ramp = (double(j) - low) / (high - low);
    ramp = ramp < 0 ? 0 : (ramp > 1 ? 1 : ramp);
    const double interpolated = theta[j] / factor, extrapolated = theta[j];
    theta[j] = interpolated * ramp + extrapolated * (1 - ramp);
  }
  return theta;
}

}  // namespace

TEST_CASE("scaling: Linear, NTK-aware, dynamic NTK and per-pair factors", "[scaling]") {
  const std::size_t d = 128;
  const double base = 10000.0;
  const std::vector<double> plain = plain_theta(d, base);

  SECTION("Unscaled") {
    const auto f = rope::frequencies(d, base, rope::Unscaled{});
    require_theta(f.theta, plain, base);
    REQUIRE(f.attention_factor == 1.0);
  }
  SECTION("Linear: theta / factor") {
    std::vector<double> expected = plain;
    for (double& t : expected) t /= 4.0;
    const auto f = rope::frequencies(d, base, rope::Linear{4.0});
    require_theta(f.theta, expected, base);
    REQUIRE(f.attention_factor == 1.0);
  }
  SECTION("NTK-aware: base * factor^(d/(d-2))") {
    const double scaled = base * std::pow(8.0, double(d) / double(d - 2));
    require_theta(rope::frequencies(d, base, rope::NTKAware{8.0}).theta, plain_theta(d, scaled),
                  scaled);
  }
  SECTION("dynamic NTK: unscaled up to max_position_embeddings, then a length-dependent base") {
    const rope::DynamicNTK dynamic{2.0, 4096};
    require_theta(rope::frequencies(d, base, dynamic, 4096).theta, plain, base);
    require_theta(rope::frequencies(d, base, dynamic, 100).theta, plain, base);
    const double length = 10000;
    const double scaled =
        base * std::pow(2.0 * length / 4096 - (2.0 - 1), double(d) / double(d - 2));
    require_theta(rope::frequencies(d, base, dynamic, length).theta, plain_theta(d, scaled),
                  scaled);
  }
  SECTION("per-pair factors (ggml freq_factors) and caller-supplied theta") {
    std::vector<double> factors(d / 2), expected = plain, given(d / 2);
    for (std::size_t j = 0; j < d / 2; ++j) {
      factors[j] = 1.0 + 0.25 * double(j % 5);
      expected[j] /= factors[j];
      given[j] = 0.5 / double(j + 1);
    }
    require_theta(rope::frequencies(d, base, rope::FrequencyFactors{factors}).theta, expected,
                  base);
    REQUIRE(rope::frequencies(d, base, rope::InverseFrequencies{given}).theta == given);
  }
}

TEST_CASE("scaling: YaRN, generic (factor 16, L0 4096) and DeepSeek-V2 (factor 40, d 64)",
          "[scaling][yarn]") {
  SECTION("factor 16, original context 4096, head 128: attention factor 0.1 ln 16 + 1") {
    rope::Yarn yarn;
    yarn.factor = 16;
    yarn.original_max_position_embeddings = 4096;
    const auto f = rope::frequencies(128, 10000.0, yarn);
    require_theta(f.theta, yarn_theta(128, 10000.0, 16, 4096, 32, 1, true), 10000.0);
    CHECK_THAT(f.attention_factor,
               Catch::Matchers::WithinRel(0.1 * std::log(16.0) + 1, rope_test::gamma<double>(4)));
    // The first pairs (short wavelengths) are kept, the last (long) interpolated by 16.
    const std::vector<double> plain = plain_theta(128, 10000.0);
    CHECK(f.theta.front() == plain.front());
    CHECK_THAT(f.theta.back(), Catch::Matchers::WithinRel(plain.back() / 16, 1e-15));

    yarn.truncate = false;
    require_theta(rope::frequencies(128, 10000.0, yarn).theta,
                  yarn_theta(128, 10000.0, 16, 4096, 32, 1, false), 10000.0);
    yarn.attention_factor = 1.5;
    REQUIRE(rope::frequencies(128, 10000.0, yarn).attention_factor == 1.5);
  }
  SECTION("DeepSeek-V2: factor 40, mscale = mscale_all_dim = 1, rotary head 64") {
    rope::Yarn yarn;
    yarn.factor = 40;
    yarn.original_max_position_embeddings = 4096;
    yarn.mscale = 1.0;
    yarn.mscale_all_dim = 1.0;
    const auto f = rope::frequencies(64, 10000.0, yarn);
    require_theta(f.theta, yarn_theta(64, 10000.0, 40, 4096, 32, 1, true), 10000.0);
    // mscale(40, 1) / mscale(40, 1): exactly 1
    REQUIRE(f.attention_factor == mscale_of(40, 1.0) / mscale_of(40, 1.0));
    yarn.mscale_all_dim = 0.707;
    CHECK_THAT(rope::frequencies(64, 10000.0, yarn).attention_factor,
               Catch::Matchers::WithinRel(mscale_of(40, 1.0) / mscale_of(40, 0.707),
                                          rope_test::gamma<double>(8)));
  }
}

TEST_CASE("scaling: Llama 3.1 8B (base 500000, factor 8, low 1, high 4, L0 8192)",
          "[scaling][llama3]") {
  const std::size_t d = 128;
  const double base = 500000.0, factor = 8, low = 1, high = 4, l0 = 8192;
  std::vector<double> expected = plain_theta(d, base);
  std::size_t kept = 0, divided = 0, blended = 0;
  for (double& t : expected) {
    const double wavelength = 2 * kPi / t;
    if (wavelength < l0 / high) {
      ++kept;
    } else if (wavelength > l0 / low) {
      t /= factor;
      ++divided;
    } else {
      const double smooth = (l0 / wavelength - low) / (high - low);
      t = (1 - smooth) * t / factor + smooth * t;
      ++blended;
    }
  }
  INFO("kept " << kept << ", divided " << divided << ", blended " << blended);
  REQUIRE(kept > 0);  // the configuration exercises all three regions
  REQUIRE(divided > 0);
  REQUIRE(blended > 0);
  const auto f = rope::frequencies(d, base, rope::Llama3{factor, low, high, l0});
  require_theta(f.theta, expected, base);
  REQUIRE(f.attention_factor == 1.0);
}

TEST_CASE("scaling: LongRoPE with Phi-3-mini-128k shapes (d 96, 48 factors each)",
          "[scaling][longrope]") {
  const std::size_t d = 96;
  const double base = 10000.0, l0 = 4096, max_positions = 131072;
  rope::LongRope longrope;
  for (std::size_t j = 0; j < d / 2; ++j) {
    longrope.short_factor.push_back(1.0 + 0.01 * double(j));
    longrope.long_factor.push_back(1.0 + 0.5 * double(j));
  }
  longrope.original_max_position_embeddings = l0;
  longrope.max_position_embeddings = max_positions;
  const std::vector<double> plain = plain_theta(d, base);
  const double attention = std::sqrt(1 + std::log(max_positions / l0) / std::log(l0));
  for (const double length : {100.0, 4096.0, 4097.0, 100000.0}) {
    INFO("sequence length " << length);
    const auto& ext = length > l0 ? longrope.long_factor : longrope.short_factor;
    std::vector<double> expected(d / 2);
    for (std::size_t j = 0; j < d / 2; ++j) expected[j] = 1.0 / (ext[j] / plain[j]);
    const auto f = rope::frequencies(d, base, longrope, length);
    require_theta(f.theta, expected, base);
    CHECK_THAT(f.attention_factor,
               Catch::Matchers::WithinRel(attention, rope_test::gamma<double>(8)));
  }
  longrope.attention_factor = 1.25;
  REQUIRE(rope::frequencies(d, base, longrope, 10).attention_factor == 1.25);
  longrope.attention_factor.reset();
  longrope.factor = 1.0;  // no extension: no attention scaling
  REQUIRE(rope::frequencies(d, base, longrope, 10).attention_factor == 1.0);
}

TEST_CASE("Rotary: a scaling scheme's theta and attention factor reach the table",
          "[scaling][rotary]") {
  for (const rope::Layout layout : {rope::Layout::interleaved, rope::Layout::half_split}) {
    INFO(rope::to_string(layout));
    rope::Options options{64, 10000.0, layout, 4096};
    const rope::Rotary<float, 64> plain(options);
    options.scaling = rope::Linear{4.0};
    const rope::Rotary<float, 64> linear(options);
    // θ/4 is exact, so position 4m under Linear{4} has exactly the angles of position m.
    for (std::size_t m = 0; m < 1024; m += 37) {
      REQUIRE(std::equal(linear.table().row(4 * m), linear.table().row(4 * m) + 64,
                         plain.table().row(m)));
    }

    rope::Yarn yarn;
    yarn.factor = 16;
    options.scaling = yarn;
    const rope::Rotary<double, 64> scaled(options);
    REQUIRE(scaled.attention_factor() == rope::frequencies(64, 10000.0, yarn).attention_factor);
    REQUIRE(scaled.inverse_frequencies() == rope::frequencies(64, 10000.0, yarn).theta);
    for (const std::size_t m : {std::size_t{1}, std::size_t{100}, std::size_t{4095}}) {
      for (std::size_t j = 0; j < 32; ++j) {
        // attention·cos(φ) in double, then rounded once: the scaled entry is within 1 ulp of
        // the long double product.
        const auto angle = static_cast<long double>(double(m) * scaled.inverse_frequencies()[j]);
        const auto a = static_cast<long double>(scaled.attention_factor());
        CHECK_THAT(scaled.table().cos(m, j),
                   Catch::Matchers::WithinULP(double(a * std::cos(angle)), 1));
        CHECK_THAT(scaled.table().sin(m, j),
                   Catch::Matchers::WithinULP(double(a * std::sin(angle)), 1));
      }
    }
  }
}
