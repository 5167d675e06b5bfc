// Run-time dispatch, as an engine that ships one x86-64 binary does: the same rope call compiled
// for AVX2 (dispatch_target.cpp with -march=haswell) and for AVX-512 (-march=skylake-avx512),
// linked into one program, and the one this CPU runs picked from its features. This file is
// compiled for the x86-64 baseline. Each target the CPU can run is checked against the float64
// reference; the program exits non-zero if a check fails.
#include "dispatch.hpp"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <numeric>
#include <vector>

#include <rope/rope.hpp>

namespace {

constexpr std::size_t kTokens = 5, kHeads = 4, kD = dispatch::kHeadSize;

// Rotates one batch with `target` and returns the largest error against rope::reference.
double worst_error(const dispatch::Target& target) {
  std::vector<float> x(kTokens * kHeads * kD);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.37F * static_cast<float>(i));
  std::vector<std::int64_t> positions(kTokens);
  std::iota(positions.begin(), positions.end(), 1000);
  std::vector<float> y = x;
  target.rotate(y.data(), kTokens, kHeads, positions.data());
  double worst = 0;
  std::vector<double> head(kD);
  for (std::size_t t = 0; t < kTokens; ++t) {
    for (std::size_t h = 0; h < kHeads; ++h) {
      const std::size_t at = (t * kHeads + h) * kD;
      for (std::size_t i = 0; i < kD; ++i) head[i] = static_cast<double>(x[at + i]);
      rope::reference::rotate_half_split(head.data(), kD, static_cast<double>(positions[t]),
                                         dispatch::options().base);
      for (std::size_t i = 0; i < kD; ++i) {
        worst = std::fmax(worst, std::fabs(head[i] - static_cast<double>(y[at + i])));
      }
    }
  }
  return worst;
}

}  // namespace

int main() {
  __builtin_cpu_init();
  const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  const bool avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
                      __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl");
  const dispatch::Target targets[] = {dispatch_avx2(), dispatch_avx512()};
  const bool runs[] = {avx2, avx512};
  bool ok = targets[0].library_code != targets[1].library_code;
  std::printf("rope code of the two objects is %s\n",
              ok ? "distinct (one namespace per instruction set)" : "MERGED by the linker");
  // One coordinate a·c − b·s with |a|, |b| <= 1: cos and sin rounded to float, two products and
  // a difference each rounded once, so |error| <= (|a| + |b|)·3u + u <= 8u, u = 2^-24.
  const double bound = 8 * std::ldexp(1.0, -24);
  for (int i = 0; i < 2; ++i) {
    if (!runs[i]) {
      std::printf("%-22s not run: this CPU lacks it\n", targets[i].isa);
      continue;
    }
    const double error = worst_error(targets[i]);
    std::printf("%-22s max |error| vs float64 reference %.2e (bound %.2e)\n", targets[i].isa, error,
                bound);
    ok = ok && error <= bound;
  }
  const dispatch::Target* chosen = avx512 ? &targets[1] : avx2 ? &targets[0] : nullptr;
  std::printf("this CPU runs: %s\n", chosen ? chosen->isa : "neither (baseline only)");
  return ok ? 0 : 1;
}
