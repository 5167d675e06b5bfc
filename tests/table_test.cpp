// The frequencies θ_j and the cos/sin table against long double evaluations of their formulas.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include <catch2/catch.hpp>

#include <rope/rope.hpp>

namespace {

using rope::Layout;

// The positions the table's accuracy contract is stated for.
const double kContractPositions[] = {0, 1, 65536, 1048576, 16777215, 2147483647};

// cos and sin of the double angle m·θ_j (θ_j the double nearest base^(−2j/d), the product
// rounded to double: the angle the contract fixes), evaluated in long double and rounded once
// to T.
template <class T>
void expected_entry(double m, std::size_t j, std::size_t d, double base, T& c, T& s) {
  const long double x = -2.0L * static_cast<long double>(j) / static_cast<long double>(d);
  const double theta = static_cast<double>(std::exp(x * std::log(static_cast<long double>(base))));
  const double angle = m * theta;
  c = static_cast<T>(std::cos(static_cast<long double>(angle)));
  s = static_cast<T>(std::sin(static_cast<long double>(angle)));
}

// cos and sin of the exact angle m·θ_j (m < 2^53): m·θ_j = hi + lo exactly (lo by one fma), and
// cos hi·cos lo − sin hi·sin lo, sin hi·cos lo + cos hi·sin lo in long double, rounded once to
// float (a float table's rows come from angle sums, which are of the exact angle).
void exact_entry(double m, double theta, float& c, float& s) {
  const double hi = m * theta, lo = std::fma(m, theta, -hi);
  const long double ch = std::cos(static_cast<long double>(hi));
  const long double sh = std::sin(static_cast<long double>(hi));
  const long double cl = std::cos(static_cast<long double>(lo));
  const long double sl = std::sin(static_cast<long double>(lo));
  c = static_cast<float>(ch * cl - sh * sl);
  s = static_cast<float>(sh * cl + ch * sl);
}

}  // namespace

TEST_CASE("inverse_frequencies: theta_j = base^(-2j/d) within 1 ulp", "[frequencies]") {
  for (const double base : {10000.0, 500000.0, 1000000.0}) {
    for (const std::size_t d : {2U, 6U, 64U, 128U, 130U, 256U}) {
      const std::vector<double> theta = rope::inverse_frequencies(d, base);
      REQUIRE(theta.size() == d / 2);
      for (std::size_t j = 0; j < d / 2; ++j) {
        // exp(x·ln base) in long double: a few ulps of long double (2^-64), far below half an
        // ulp of double, so rounding it to double gives the nearest double but for near-ties.
        const long double x = -2.0L * static_cast<long double>(j) / static_cast<long double>(d);
        const long double exact = std::exp(x * std::log(static_cast<long double>(base)));
        INFO("base " << base << ", d " << d << ", j " << j);
        CHECK_THAT(theta[j], Catch::Matchers::WithinULP(static_cast<double>(exact), 1));
      }
    }
  }
}

TEMPLATE_TEST_CASE("Table: entries are within 1 ulp of cos and sin of the double angle", "[table]",
                   float, double) {
  using T = TestType;
  const std::size_t d = 128;
  const double base = 10000.0;
  const std::vector<double> theta = rope::inverse_frequencies(d, base);
  for (const Layout layout : {Layout::interleaved, Layout::half_split}) {
    for (const double m : kContractPositions) {
      std::vector<T> row(d);
      rope::Table<T>::compute_row(layout, theta, m, row.data());
      for (std::size_t j = 0; j < d / 2; ++j) {
        T c, s;
        expected_entry<T>(m, j, d, base, c, s);
        const T got_c = layout == Layout::interleaved ? row[2 * j] : row[j];
        const T got_s = layout == Layout::interleaved ? row[2 * j + 1] : row[d / 2 + j];
        INFO(rope::to_string(layout) << ", position " << m << ", pair " << j);
        CHECK_THAT(got_c, Catch::Matchers::WithinULP(c, 1));
        CHECK_THAT(got_s, Catch::Matchers::WithinULP(s, 1));
      }
    }
  }
}

TEST_CASE("Table: a table of 2^24 rows holds the same entries at its last row", "[table][large]") {
  // Within 1 ulp of float of the exact angle's values (docs/numerics.md: half an ulp plus
  // 11·n·2^−53, n ≤ 4 factors here). d = 4 keeps the table at 2^24 × 4 floats = 256 MiB.
  const std::size_t d = 4, rows = std::size_t{1} << 24;
  const std::vector<double> theta = rope::inverse_frequencies(d);
  const rope::Table<float> table(Layout::half_split, theta, rows);
  REQUIRE(table.positions() == rows);
  for (const double m : kContractPositions) {
    if (m >= double(rows)) continue;
    for (std::size_t j = 0; j < d / 2; ++j) {
      float c, s;
      exact_entry(m, theta[j], c, s);
      INFO("position " << m << ", pair " << j);
      CHECK_THAT(table.cos(std::size_t(m), j), Catch::Matchers::WithinULP(c, 1));
      CHECK_THAT(table.sin(std::size_t(m), j), Catch::Matchers::WithinULP(s, 1));
    }
  }
}

TEST_CASE("Table: rows are laid out per layout and cos()/sin() read them back", "[table]") {
  const std::size_t d = 6;
  const std::vector<double> theta = rope::inverse_frequencies(d);
  for (const Layout layout : {Layout::interleaved, Layout::half_split}) {
    const rope::Table<double> table(layout, theta, 10);
    REQUIRE(table.head_size() == d);
    REQUIRE(table.layout() == layout);
    for (std::size_t m = 0; m < 10; ++m) {
      std::vector<double> row(d);
      rope::Table<double>::compute_row(layout, theta, double(m), row.data());
      REQUIRE(std::vector<double>(table.row(m), table.row(m) + d) == row);
      for (std::size_t j = 0; j < d / 2; ++j) {
        REQUIRE(table.cos(m, j) == std::cos(double(m) * theta[j]));
        REQUIRE(table.sin(m, j) == std::sin(double(m) * theta[j]));
        // [c0 s0 c1 s1 ..] or [c0 c1 .. | s0 s1 ..]
        const std::size_t ci = layout == Layout::interleaved ? 2 * j : j;
        const std::size_t si = layout == Layout::interleaved ? 2 * j + 1 : d / 2 + j;
        REQUIRE(row[ci] == table.cos(m, j));
        REQUIRE(row[si] == table.sin(m, j));
      }
    }
  }
}
