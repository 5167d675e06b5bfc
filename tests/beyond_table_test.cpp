// Positions past the table: their rows are computed on the fly, the same way as the table's, so
// the results are the same to the last bit and equally accurate at any position up to 2^53 − 1.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <random>
#include <thread>
#include <type_traits>
#include <vector>

#include <catch2/catch.hpp>

#include <rope/rope.hpp>

#include "support.hpp"

// (A double table's own rows are compute_row's, its rows past the end the angle sums': the test
// below bounds those.)
TEMPLATE_TEST_CASE("Rotary: a position past the table gets the row the table would hold",
                   "[beyond]", float, Eigen::half, Eigen::bfloat16) {
  using T = TestType;
  std::mt19937_64 rng(900 + sizeof(T));
  for (const rope::Layout layout : {rope::Layout::interleaved, rope::Layout::half_split}) {
    INFO(rope::to_string(layout));
    rope::Options options{96, 500000.0, layout, 4096};
    options.scaling = rope::Yarn{8.0, 2048};  // an attention factor ≠ 1 must reach both paths
    const rope::Rotary<T, 96> large(options);
    options.max_positions = 16;
    const rope::Rotary<T, 96> small(options);
    const std::size_t tokens = 6, heads = 2, n = tokens * heads * 96;
    const std::vector<std::int64_t> positions = {0, 15, 16, 17, 1000, 4095};
    const std::vector<T> input = rope_test::random_vector<T>(n, rng);
    std::vector<T> from_table = input, computed = input;
    large.apply(from_table.data(), tokens, heads, positions.data());
    small.apply(computed.data(), tokens, heads, positions.data());
    REQUIRE(computed == from_table);
  }
}

TEMPLATE_TEST_CASE("Rotary: positions up to 2^31 - 1 match the float64 reference", "[beyond]",
                   float, double) {
  using T = TestType;
  std::mt19937_64 rng(901 + sizeof(T));
  const std::vector<std::int64_t> positions = {0,       1,        65535,     65536,
                                               1000000, 16777215, 1LL << 30, 2147483647};
  for (const rope::Layout layout : {rope::Layout::interleaved, rope::Layout::half_split}) {
    INFO(rope::to_string(layout));
    const rope::Rotary<T> rot({128, 10000.0, layout, 64});
    const std::size_t tokens = positions.size(), heads = 2, n = tokens * heads * 128;
    const std::vector<T> input = rope_test::random_vector<T>(n, rng);
    for (const rope::Direction dir : {rope::Direction::forward, rope::Direction::inverse}) {
      std::vector<T> x = input;
      rot.apply(x.data(), tokens, heads, positions.data(), dir);
      rope_test::require_rotation_of<T>(
          rope::View<const T>::contiguous(input.data(), tokens, heads, 128),
          rope::View<const T>::contiguous(x.data(), tokens, heads, 128), 128, layout, positions,
          dir);
    }
  }
}

namespace {

// The factors of a float row at position m from the angle sums (docs/numerics.md): the digit of
// m in base 128 at level 0, and each higher digit that is not 0.
int factors_of(std::uint64_t m) {
  int n = 1;
  for (m >>= 7; m != 0; m >>= 7) n += (m & 127) != 0 ? 1 : 0;
  return n;
}

// The spacing of floats at magnitude a (a ≥ 0): 2^(e − 23) for a normal float of exponent e.
double float_ulp(double a) {
  if (a < static_cast<double>(std::numeric_limits<float>::min())) return std::ldexp(1.0, -149);
  return std::ldexp(1.0, std::ilogb(a) - 23);
}

}  // namespace

TEMPLATE_TEST_CASE(
    "Table: rows at positions up to 2^53 - 1 are within the bound of the exact angle",
    "[beyond][table]", float, double) {
  // The exact angle m·θ_j is hi + lo (hi = fl(m·θ_j), lo = the fma residual: exact, m < 2^53);
  // its cos and sin, cos hi·cos lo − sin hi·sin lo and sin hi·cos lo + cos hi·sin lo, evaluated
  // in long double: four values within an ulp of long double and three roundings, below 2^−60.
  // Against it, docs/numerics.md bounds an entry from the angle sums by 11·n·2^−53·scale (n the
  // factors of the position), and a float entry by half an ulp of float more.
  using T = TestType;
  const std::uint64_t kMax = rope::kMaxPosition;
  const std::uint64_t positions[] = {(1ULL << 20) - 1, 1ULL << 20, (1ULL << 20) + 12345,
                                     (1ULL << 24) - 1, 1ULL << 24, (1ULL << 24) + 12345,
                                     (1ULL << 31) - 1, 1ULL << 31, (1ULL << 31) + 98765,
                                     (1ULL << 40) - 1, 1ULL << 40, (1ULL << 40) + 4242424,
                                     kMax - 1000,      kMax - 1,   kMax};
  for (const double base : {10000.0, 500000.0}) {
    for (const double scale : {1.0, 1.2079441541679836}) {  // YaRN's 0.1·ln 8 + 1
      const std::vector<double> theta = rope::inverse_frequencies(128, base);
      for (const rope::Layout layout : {rope::Layout::interleaved, rope::Layout::half_split}) {
        const rope::Table<T> table(layout, theta, 16, scale);
        std::vector<T> row(128);
        for (const std::uint64_t m : positions) {
          table.write_row(m, row.data());
          const long double scale_ld = static_cast<long double>(scale);
          const long double slack =
              11.0L * factors_of(m) * std::ldexp(1.0L, -53) * scale_ld + std::ldexp(1.0L, -60);
          for (std::size_t j = 0; j < 64; ++j) {
            const double md = static_cast<double>(m);
            const double hi = md * theta[j], lo = std::fma(md, theta[j], -hi);
            const long double ch = std::cos(static_cast<long double>(hi));
            const long double sh = std::sin(static_cast<long double>(hi));
            const long double cl = std::cos(static_cast<long double>(lo));
            const long double sl = std::sin(static_cast<long double>(lo));
            const long double c = scale_ld * (ch * cl - sh * sl);
            const long double s = scale_ld * (sh * cl + ch * sl);
            const std::size_t ci = layout == rope::Layout::interleaved ? 2 * j : j;
            const std::size_t si = layout == rope::Layout::interleaved ? 2 * j + 1 : 64 + j;
            // The rounding to T: half an ulp of float; none for double (the sums' own).
            const auto rounding = [&](long double v) {
              return std::is_same_v<T, float>
                         ? 0.5L * static_cast<long double>(
                                      float_ulp(static_cast<double>(std::fabs(v) + slack)))
                         : 0.0L;
            };
            INFO(rope::to_string(layout) << ", base " << base << ", scale " << scale
                                         << ", position " << m << ", pair " << j);
            CHECK(std::fabs(static_cast<long double>(row[ci]) - c) <= rounding(c) + slack);
            CHECK(std::fabs(static_cast<long double>(row[si]) - s) <= rounding(s) + slack);
          }
        }
      }
    }
  }
}

TEST_CASE("Table: write_row past a float table is bit for bit a longer table's row",
          "[beyond][table]") {
  const std::vector<double> theta = rope::inverse_frequencies(128, 500000.0);
  for (const rope::Layout layout : {rope::Layout::interleaved, rope::Layout::half_split}) {
    const rope::Table<float> longer(layout, theta, 70000, 1.2);
    const rope::Table<float> shorter(layout, theta, 16, 1.2);
    REQUIRE(shorter.angle_sum_bytes() > 0);
    REQUIRE(shorter.angle_sum_bytes() <= std::size_t{1} << 20);  // head 128: at most 1 MiB
    std::vector<float> row(128);
    for (std::uint64_t m = 0; m < 70000; m += 7) {
      shorter.write_row(m, row.data());
      INFO(rope::to_string(layout) << ", position " << m);
      REQUIRE(std::equal(row.begin(), row.end(), longer.row(m)));
    }
  }
}

TEST_CASE("Table: rows past the table do not depend on the rows asked before, in any thread",
          "[beyond][table]") {
  // Each thread keeps the product of the last position's higher factors; two tables of other
  // frequencies, asked in turn at positions that share their higher digits, in another order and
  // from two threads, must each give the rows the first pass gave.
  const rope::Table<float> a(rope::Layout::half_split, rope::inverse_frequencies(128, 10000.0), 16);
  const rope::Table<float> b(rope::Layout::interleaved, rope::inverse_frequencies(128, 500000.0),
                             16, 1.2);
  std::vector<std::uint64_t> positions;
  for (std::uint64_t m = (1ULL << 31) + 100; m < (1ULL << 31) + 400; m += 3) positions.push_back(m);
  positions.push_back(70000);
  positions.push_back(rope::kMaxPosition);
  const auto rows_of = [&](const rope::Table<float>& table, const std::vector<std::uint64_t>& ms) {
    std::vector<float> out(ms.size() * 128);
    for (std::size_t i = 0; i < ms.size(); ++i) table.write_row(ms[i], out.data() + i * 128);
    return out;
  };
  const std::vector<float> first_a = rows_of(a, positions), first_b = rows_of(b, positions);
  std::vector<std::uint64_t> reversed(positions.rbegin(), positions.rend());
  std::vector<float> turns_a(positions.size() * 128), turns_b(positions.size() * 128);
  for (std::size_t i = 0; i < reversed.size(); ++i) {  // a and b in turn: each replaces the other's
    const std::size_t k = positions.size() - 1 - i;
    a.write_row(reversed[i], turns_a.data() + k * 128);
    b.write_row(reversed[i], turns_b.data() + k * 128);
  }
  REQUIRE(turns_a == first_a);
  REQUIRE(turns_b == first_b);
  std::vector<float> thread_a, thread_b;
  std::thread other([&] { thread_a = rows_of(a, positions); });
  thread_b = rows_of(b, positions);
  other.join();
  REQUIRE(thread_a == first_a);
  REQUIRE(thread_b == first_b);
}

TEST_CASE("Rotary: a row kept from an earlier call is the row of the position asked",
          "[beyond][kept]") {
  // Each thread keeps the last rows it formed past a table, up to 512 of them, consecutive
  // positions in consecutive slots (detail/kept_rows.hpp). Calls of three tables in turn (two of
  // head 128 with other frequencies and layouts, one of head 64, asked first by a new thread), at
  // repeated positions, at positions 512 apart in one call (one slot for any number of slots up to
  // 512) and over more positions than slots, from two threads: each must equal the call of a
  // table that holds its rows (a float table's rows past its end are its own rows' bits).
  struct Case {
    rope::Options options;
    rope::Rotary<float> small, large;
    explicit Case(rope::Options o)
        : options(o), small(with_rows(o, 16)), large(with_rows(o, 5000)) {}
    static rope::Options with_rows(rope::Options o, std::size_t rows) {
      o.max_positions = rows;
      return o;
    }
  };
  Case a(rope::Options{128, 10000.0, rope::Layout::half_split, 0});
  rope::Options ob{128, 500000.0, rope::Layout::interleaved, 0};
  ob.scaling = rope::Yarn{8.0, 2048};
  Case b(ob);
  Case c(rope::Options{64, 10000.0, rope::Layout::half_split, 0});
  const std::size_t heads = 3;
  std::mt19937_64 rng(907);
  const auto check = [&](const Case& k, const std::vector<std::int64_t>& positions) {
    const std::size_t tokens = positions.size(), d = k.options.head_size;
    const std::vector<float> input = rope_test::random_vector<float>(tokens * heads * d, rng);
    std::vector<float> kept = input, held = input;
    k.small.apply(kept.data(), tokens, heads, positions.data());
    k.large.apply(held.data(), tokens, heads, positions.data());
    return kept == held;
  };
  std::vector<std::int64_t> run(600);
  for (std::size_t t = 0; t < run.size(); ++t) run[t] = 4000 + static_cast<std::int64_t>(t);
  const std::vector<std::vector<std::int64_t>> calls = {
      {100}, {100}, {612}, {100, 612, 1124, 100}, {4999, 4487}, run, run, {4001}};
  const auto turns = [&]() {
    bool all = true;
    for (const std::vector<std::int64_t>& positions : calls) {
      for (const Case* k : {&c, &a, &a, &b, &a, &c, &b}) all = check(*k, positions) && all;
    }
    return all;
  };
  REQUIRE(turns());
  bool other_thread = false;
  std::thread other([&] { other_thread = turns(); });
  other.join();
  REQUIRE(other_thread);
}

TEST_CASE("Rotary: a row kept for one table is never taken for another's", "[beyond][kept]") {
  // Tables whose numbers are equal modulo the slots (512 at most) put a row of one position in
  // one slot: 1024 tables of head 4, the first 512 of base 10^4 and the others of base 5·10^5,
  // each asked for position 1000 in turn, so that table i + 512 finds table i's row in its slot.
  const auto options = [](double base, std::size_t rows) {
    return rope::Options{4, base, rope::Layout::half_split, rows};
  };
  std::vector<rope::Rotary<float>> tables;
  for (std::size_t i = 0; i < 1024; ++i) tables.emplace_back(options(i < 512 ? 1e4 : 5e5, 1));
  const rope::Rotary<float> held_low(options(1e4, 1001)), held_high(options(5e5, 1001));
  const std::int64_t position = 1000;
  const auto rotated = [&](const rope::Rotary<float>& rot) {
    std::vector<float> x = {0.75f, -0.5f, 0.25f, 1.0f};
    rot.apply(x.data(), 1, 1, &position);
    return x;
  };
  const std::vector<float> low = rotated(held_low), high = rotated(held_high);
  REQUIRE(low != high);
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < tables.size(); ++i) {
    if (rotated(tables[i]) != (i < 512 ? low : high)) ++wrong;
  }
  REQUIRE(wrong == 0);
}
