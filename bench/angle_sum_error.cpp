// The worst error of the rows past the table against cos and sin of the exact angle, at positions
// around 2^20, 2^24, 2^31, 2^40 and 2^53 − 1, beside the bound docs/numerics.md states for them:
// half an ulp of float (float rows) plus 11·n·2^−53·scale, n the position's factors.
//
// Head 128, bases 10^4 and 5·10^5, scale 1 and YaRN's 1.208, both layouts; 4096 consecutive
// positions from each start. The exact values are cos hi·cos lo − sin hi·sin lo (and the sine's
// twin) in long double, m·θ_j = hi + lo exactly. Prints, per type and start, the worst error
// beyond the rounding to the type (in units of 2^−53) and the smallest bound of that start's
// positions, and the worst error of the double angle fl(m·θ_j) (Table::compute_row) beside it.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <type_traits>
#include <vector>

#include <rope/rope.hpp>

namespace {

int factors_of(std::uint64_t m) {
  int n = 1;
  for (m >>= 7; m != 0; m >>= 7) n += (m & 127) != 0 ? 1 : 0;
  return n;
}

// Half the spacing of T at |v| (0 for double: the bound is of the double value itself).
template <class T>
long double rounding(long double v) {
  if (!std::is_same_v<T, float>) return 0.0L;
  const double a = static_cast<double>(std::fabs(v));
  const int e = a < static_cast<double>(std::numeric_limits<float>::min()) ? -126 : std::ilogb(a);
  return std::ldexp(0.5L, e - 23);
}

template <class T>
void report(const char* type) {
  const std::uint64_t starts[] = {(1ULL << 20) - 2048, (1ULL << 24) - 2048, (1ULL << 31) - 2048,
                                  (1ULL << 40) - 2048, rope::kMaxPosition - 4095};
  const long double u = std::ldexp(1.0L, -53);
  for (const std::uint64_t start : starts) {
    long double worst = 0, worst_double_angle = 0;
    int most_factors = 0;
    for (const double base : {10000.0, 500000.0}) {
      for (const double scale : {1.0, 1.2079441541679836}) {
        const std::vector<double> theta = rope::inverse_frequencies(128, base);
        for (const rope::Layout layout : {rope::Layout::interleaved, rope::Layout::half_split}) {
          const rope::Table<T> table(layout, theta, 16, scale);
          std::vector<T> row(128), direct(128);
          for (std::uint64_t m = start; m < start + 4096; ++m) {
            table.write_row(m, row.data());
            rope::Table<T>::compute_row(layout, theta, static_cast<double>(m), direct.data(),
                                        scale);
            most_factors = std::max(most_factors, factors_of(m));
            for (std::size_t j = 0; j < 64; ++j) {
              const double md = static_cast<double>(m);
              const double hi = md * theta[j], lo = std::fma(md, theta[j], -hi);
              const long double ch = std::cos(static_cast<long double>(hi));
              const long double sh = std::sin(static_cast<long double>(hi));
              const long double cl = std::cos(static_cast<long double>(lo));
              const long double sl = std::sin(static_cast<long double>(lo));
              const long double s_ld = static_cast<long double>(scale);
              const long double exact[2] = {s_ld * (ch * cl - sh * sl), s_ld * (sh * cl + ch * sl)};
              const std::size_t at[2] = {layout == rope::Layout::interleaved ? 2 * j : j,
                                         layout == rope::Layout::interleaved ? 2 * j + 1 : 64 + j};
              for (int k = 0; k < 2; ++k) {
                const long double e = std::fabs(static_cast<long double>(row[at[k]]) - exact[k]) -
                                      rounding<T>(exact[k]);
                const long double d =
                    std::fabs(static_cast<long double>(direct[at[k]]) - exact[k]) -
                    rounding<T>(exact[k]);
                worst = std::max(worst, e / (s_ld * u));
                worst_double_angle = std::max(worst_double_angle, d / (s_ld * u));
              }
            }
          }
        }
      }
    }
    std::printf(
        "%-6s from %20llu: worst %8.2f u·scale beyond the rounding, bound 11·%d = %3d; "
        "the double angle %.3Le u·scale\n",
        type, static_cast<unsigned long long>(start), static_cast<double>(worst), most_factors,
        11 * most_factors, worst_double_angle);
  }
}

}  // namespace

int main() {
  report<float>("float");
  report<double>("double");
  return 0;
}
