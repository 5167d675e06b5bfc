// The float64 reference (rope/reference.hpp) and Rotary against independent formulations of the
// same rotation: the dense block-diagonal matrix, complex multiplication, the coordinate
// permutation between the two layouts, and worked examples.
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

#include <catch2/catch.hpp>

#include <rope/rope.hpp>

#include "support.hpp"

namespace {

using rope::Layout;
using rope_test::coordinate_bound;
using rope_test::partner;

// θ_j written the way HuggingFace does, 1 / base^(2j/d), not the library's base^(−2j/d).
double theta(std::size_t j, std::size_t d, double base = 10000.0) {
  return 1.0 / std::pow(base, double(2 * j) / double(d));
}

// R_m: identity except for a 2×2 rotation block [[c, −s], [s, c]] on each pair's coordinates.
std::vector<std::vector<double>> dense_rotation(std::size_t d, double m, Layout layout) {
  std::vector<std::vector<double>> r(d, std::vector<double>(d, 0.0));
  for (std::size_t j = 0; j < d / 2; ++j) {
    const std::size_t a = layout == Layout::interleaved ? 2 * j : j;
    const std::size_t b = layout == Layout::interleaved ? 2 * j + 1 : j + d / 2;
    const double c = std::cos(m * theta(j, d)), s = std::sin(m * theta(j, d));
    r[a][a] = c;
    r[a][b] = -s;
    r[b][a] = s;
    r[b][b] = c;
  }
  return r;
}

std::vector<double> multiply(const std::vector<std::vector<double>>& r,
                             const std::vector<double>& x) {
  std::vector<double> y(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    long double sum = 0;
    for (std::size_t k = 0; k < x.size(); ++k)
      sum += static_cast<long double>(r[i][k]) * static_cast<long double>(x[k]);
    y[i] = double(sum);
  }
  return y;
}

// Rotates one head with a Rotary<T> built for the layout, returning it as double. Positions up
// to 1000 read the table; later ones (65535, 10^6) their row computed on the fly, bit for bit as
// a table row (beyond_table_test.cpp), without building tables of 2^16 rows and more.
template <class T>
std::vector<double> rotary_head(const std::vector<double>& x, Layout layout, std::int64_t m) {
  const rope::Rotary<T> rot(
      {x.size(), 10000.0, layout, std::min<std::size_t>(std::size_t(m) + 1, 1001)});
  std::vector<T> head(x.begin(), x.end());
  rot.apply(head.data(), 1, 1, rope::Positions::consecutive(m));
  return std::vector<double>(head.begin(), head.end());
}

template <class T>
void require_close(const std::vector<double>& got, const std::vector<double>& expected,
                   const std::vector<double>& input, Layout layout, double position,
                   double extra = 0) {
  const std::size_t d = input.size();
  for (std::size_t i = 0; i < d; ++i) {
    const double pair_abs = std::abs(input[i]) + std::abs(input[partner(i, d, layout)]);
    INFO("coordinate " << i << " of " << d << ", position " << position << ", "
                       << rope::to_string(layout));
    CHECK_THAT(got[i], Catch::Matchers::WithinAbs(expected[i],
                                                  coordinate_bound<T>(pair_abs, position) + extra));
  }
}

const std::size_t kDims[] = {2, 4, 6, 8, 64, 96, 128, 130, 256};
const std::int64_t kReferencePositions[] = {0, 1, 7, 1000, 65535, 1000000};

}  // namespace

TEST_CASE("reference and Rotary equal the dense block-diagonal rotation matrix",
          "[reference][matrix]") {
  std::mt19937_64 rng(1);
  for (const Layout layout : {Layout::interleaved, Layout::half_split}) {
    for (const std::size_t d : kDims) {
      for (const std::int64_t m : kReferencePositions) {
        const std::vector<double> x = rope_test::random_vector<double>(d, rng);
        const std::vector<double> expected = multiply(dense_rotation(d, double(m), layout), x);
        require_close<double>(
            rope_test::reference_head(x, layout, m, rope::Direction::forward, 10000.0), expected, x,
            layout, double(m));
        const std::vector<float> rounded(x.begin(), x.end());
        const std::vector<double> x_as_float(rounded.begin(), rounded.end());
        require_close<float>(rotary_head<float>(x_as_float, layout, m),
                             multiply(dense_rotation(d, double(m), layout), x_as_float), x_as_float,
                             layout, double(m));
        require_close<double>(rotary_head<double>(x, layout, m), expected, x, layout, double(m));
      }
    }
  }
}

TEST_CASE("interleaved rotation is complex multiplication by e^{i m theta_j}",
          "[reference][complex]") {
  std::mt19937_64 rng(2);
  for (const std::size_t d : kDims) {
    for (const std::int64_t m : kReferencePositions) {
      const std::vector<double> x = rope_test::random_vector<double>(d, rng);
      std::vector<double> expected(d);
      for (std::size_t j = 0; j < d / 2; ++j) {
        const std::complex<double> z(x[2 * j], x[2 * j + 1]);
        const std::complex<double> w = z * std::polar(1.0, double(m) * theta(j, d));
        expected[2 * j] = w.real();
        expected[2 * j + 1] = w.imag();
      }
      require_close<double>(
          rope_test::reference_head(x, Layout::interleaved, m, rope::Direction::forward, 10000.0),
          expected, x, Layout::interleaved, double(m));
      require_close<double>(rotary_head<double>(x, Layout::interleaved, m), expected, x,
                            Layout::interleaved, double(m));
    }
  }
}

TEST_CASE("half_split equals interleaved after moving coordinate i to 2i and i + d/2 to 2i + 1",
          "[reference][layout]") {
  std::mt19937_64 rng(3);
  for (const std::size_t d : kDims) {
    for (const std::int64_t m : {std::int64_t{0}, std::int64_t{3}, std::int64_t{4095}}) {
      const std::vector<double> x = rope_test::random_vector<double>(d, rng);
      std::vector<double> permuted(d);
      for (std::size_t i = 0; i < d / 2; ++i) {
        permuted[2 * i] = x[i];
        permuted[2 * i + 1] = x[i + d / 2];
      }
      const auto forward = rope::Direction::forward;
      // The reference evaluates the same expressions on the same pairs: equal to the last bit.
      const auto half = rope_test::reference_head(x, Layout::half_split, m, forward, 10000.0);
      const auto inter =
          rope_test::reference_head(permuted, Layout::interleaved, m, forward, 10000.0);
      for (std::size_t i = 0; i < d / 2; ++i) {
        REQUIRE(inter[2 * i] == half[i]);
        REQUIRE(inter[2 * i + 1] == half[i + d / 2]);
      }
      // Rotary's kernels differ per layout (order of operations, FMA contraction): each is within
      // coordinate_bound of the exact value, so they are within twice that of each other.
      const std::vector<float> xf(x.begin(), x.end()), pf(permuted.begin(), permuted.end());
      const std::vector<double> x32(xf.begin(), xf.end()), p32(pf.begin(), pf.end());
      const auto half32 = rotary_head<float>(x32, Layout::half_split, m);
      const auto inter32 = rotary_head<float>(p32, Layout::interleaved, m);
      for (std::size_t i = 0; i < d / 2; ++i) {
        const double pair_abs = std::abs(x32[i]) + std::abs(x32[i + d / 2]);
        const double bound = 2 * coordinate_bound<float>(pair_abs, double(m));
        CHECK_THAT(inter32[2 * i], Catch::Matchers::WithinAbs(half32[i], bound));
        CHECK_THAT(inter32[2 * i + 1], Catch::Matchers::WithinAbs(half32[i + d / 2], bound));
      }
    }
  }
}

TEST_CASE("worked example: d = 4, x = [0.2, 0.1, -0.3, 0.7] at position 1, base 10000",
          "[reference][example]") {
  // θ = (1, 0.01). Expected values evaluated by hand from the pair formula
  // (a·cos − b·sin, b·cos + a·sin) with cos 1 = 0.5403023059, sin 1 = 0.8414709848,
  // cos 0.01 = 0.9999500004, sin 0.01 = 0.0099998333, and quoted to 10 decimals.
  constexpr double kQuoted = 0.5e-10;  // rounding of the quoted values
  const std::vector<double> x = {0.2, 0.1, -0.3, 0.7};
  const std::vector<double> interleaved = {0.0239133627, 0.2223244275, -0.3069848835,
                                           0.6969650503};  // pairs (0.2, 0.1), (−0.3, 0.7)
  const std::vector<double> half_split = {0.3605017566, 0.0929951167, 0.0062035052,
                                          0.7009649836};  // pairs (0.2, −0.3), (0.1, 0.7)
  const auto forward = rope::Direction::forward;
  require_close<double>(rope_test::reference_head(x, Layout::interleaved, 1, forward, 10000.0),
                        interleaved, x, Layout::interleaved, 1, kQuoted);
  require_close<double>(rope_test::reference_head(x, Layout::half_split, 1, forward, 10000.0),
                        half_split, x, Layout::half_split, 1, kQuoted);
  require_close<double>(rotary_head<double>(x, Layout::interleaved, 1), interleaved, x,
                        Layout::interleaved, 1, kQuoted);
  require_close<double>(rotary_head<double>(x, Layout::half_split, 1), half_split, x,
                        Layout::half_split, 1, kQuoted);
  // float input: 0.2f etc. differ from 0.2 by up to u(float)·|x|, moving each output by at most
  // u(float)·(|a| + |b|) more.
  const std::vector<float> xf(x.begin(), x.end());
  const std::vector<double> x32(xf.begin(), xf.end());
  for (const Layout layout : {Layout::interleaved, Layout::half_split}) {
    const auto& expected = layout == Layout::interleaved ? interleaved : half_split;
    const auto got = rotary_head<float>(x32, layout, 1);
    for (std::size_t i = 0; i < 4; ++i) {
      const double pair_abs = std::abs(x[i]) + std::abs(x[partner(i, 4, layout)]);
      const double bound = coordinate_bound<float>(pair_abs, 1) +
                           rope_test::unit_roundoff<float> * pair_abs + kQuoted;
      CHECK_THAT(got[i], Catch::Matchers::WithinAbs(expected[i], bound));
    }
  }
}

TEST_CASE("worked example: the 2-D vector [1, 2] turns by exactly m radians at position m",
          "[reference][example]") {
  // d = 2: θ_0 = base^0 = 1, so position m turns the vector by m radians (57.2958° per step).
  const double start = std::atan2(2.0, 1.0);
  for (const Layout layout : {Layout::interleaved, Layout::half_split}) {
    const rope::Rotary<double, 2> rot({0, 10000.0, layout, 8});
    for (std::int64_t m = 1; m <= 3; ++m) {
      Eigen::Vector2d v(1.0, 2.0);
      v = rot.rotated(v, m);
      const double turned = std::remainder(std::atan2(v[1], v[0]) - start, 2 * M_PI);
      const double expected = std::remainder(double(m), 2 * M_PI);  // 1, 2, 3 − 2π... radians
      INFO("position " << m << ": turned " << turned * 180 / M_PI << " degrees");
      // The rotated coordinates err by ≤ γ_3·(|a| + |b|) = γ_3·3 each (cos m and sin m rounded
      // once, two products and a sum), which turns the direction of a vector of norm √5 by at
      // most √2·3·γ_3/√5 < 2·γ_3 = 6u; atan2 adds ≤ 1 ulp of a result below π (≤ 4u), and the
      // difference and remainder ≤ 2 more ulps of π (≤ 8u): 18u in all.
      CHECK_THAT(turned,
                 Catch::Matchers::WithinAbs(expected, 18 * rope_test::unit_roundoff<double>));
      // The published figures: 57.3°, 114.6°, 171.9° for m = 1, 2, 3 (one decimal).
      CHECK_THAT(turned * 180 / M_PI, Catch::Matchers::WithinAbs(57.3 * double(m), 0.05));
      CHECK_THAT(v.norm(), Catch::Matchers::WithinRel(std::sqrt(5.0), rope_test::gamma<double>(8)));
    }
  }
}
