// The order in which a half_split kernel touches cache lines, apart from its arithmetic: why heads
// of 256 floats take longer per byte than heads of 128 (docs/design.md, "The kernels").
//
//   streams/<load|store|update>/apart<B>/kib<K>   K KiB walked in blocks of 2·D lines, D = B/64:
//       lines k, k + D, k + 1, k + D + 1 for k = 0, 2, .. (a half_split head's pairs are h·4
//       bytes apart), each line loaded (summed), stored, or loaded, multiplied and stored back;
//   streams/<...>/apart0/kib<K>                   the same lines in order (one stream);
//   heads/<pairs|a_first|prefetch>/d<d>/t<T>      T tokens of 8 KiB of heads of d floats rotated
//       in place by the kernels' half_split loop (chunks of up to a quarter of the registers of
//       cos and as many of sin, the pairs of a chunk of every head): `pairs` loads a register of
//       each half and stores both, register after register (the kernel of one token's order);
//       `a_first` loads the chunk's first-half registers of a head, then each second-half
//       register, storing both (the run functions' order); `prefetch` is `pairs` after a
//       prefetch of the next head's lines of the chunk, first half then second;
//   limit/t<T>                                    x *= k over the same bytes.
//
// Same instructions per byte at every head size; what differs is which lines are touched in
// turn. Internal: it uses rope::detail's packet functions, which have no stable interface.
//
//   line_streams --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>

#include <Eigen/Core>
#include <benchmark/benchmark.h>

#include <rope/rope.hpp>

#include "buffers.hpp"

namespace {

namespace simd = rope::detail::simd;
using P = simd::Packet<float>;
constexpr std::size_t kLanes = static_cast<std::size_t>(simd::kLanes<float>);
constexpr std::size_t kLineFloats = 64 / sizeof(float);
constexpr std::size_t kTokenFloats = 8192 / sizeof(float);
// The kernels' chunk of a half_split head: a quarter of the registers of cos, as many of sin.
constexpr std::size_t kChunk = simd::kRegisters / 4;

enum class Access { load, store, update };

void count(benchmark::State& state, std::size_t floats) {
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(floats * sizeof(float)));
  state.counters["ns per KiB"] = benchmark::Counter(
      static_cast<double>(floats * sizeof(float)) / 1024.0,
      benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

template <Access A>
void line(float* p, P& sum, const P& k) {
  for (std::size_t i = 0; i < kLineFloats; i += kLanes) {
    if constexpr (A == Access::load) {
      sum = simd::add(sum, simd::load<P>(p + i));
    } else if constexpr (A == Access::store) {
      simd::store(p + i, k);
    } else {
      simd::store(p + i, simd::mul(simd::load<P>(p + i), k));
    }
  }
}

// Blocks of 2·d lines (d even): lines j, j + d, j + 1, j + d + 1 for j = 0, 2, .., d − 2; d = 0
// walks the lines in order, four at a time. Four sums, so that the loads do not wait on one add.
template <Access A>
void streams(benchmark::State& state, std::size_t kib, std::size_t d) {
  const std::size_t n = kib * 1024 / sizeof(float);
  auto x = bench::filled<float>(n);
  const P k = simd::load<P>(x.data());  // a value the compiler cannot fold
  P sum[4] = {k, k, k, k};
  const std::size_t block = (d == 0 ? 4 : 2 * d) * kLineFloats;
  const std::size_t second = d == 0 ? 1 : d;  // the step's second line, from its first
  for (auto _ : state) {
    for (std::size_t b = 0; b + block <= n; b += block) {
      for (std::size_t j = 0; j < std::max<std::size_t>(d, 2); j += 2) {
        float* y = x.data() + b + j * kLineFloats;
        float* z = y + second * kLineFloats;
        line<A>(y, sum[0], k);
        line<A>(z, sum[1], k);
        line<A>(d == 0 ? z + kLineFloats : y + kLineFloats, sum[2], k);
        line<A>(d == 0 ? z + 2 * kLineFloats : z + kLineFloats, sum[3], k);
      }
    }
    benchmark::DoNotOptimize(sum);
    benchmark::ClobberMemory();
  }
  count(state, n);
}

enum class Form { pairs, a_first, prefetch };

// N registers of pairs of every head of every token, half h apart, against one row [c | s].
template <std::size_t N, Form F>
void rotate(float* x, const float* row, std::size_t tokens, std::size_t heads, std::size_t h) {
  constexpr std::size_t L = kLanes;
  for (std::size_t t = 0; t < tokens; ++t) {
    for (std::size_t j = 0; j < h; j += N * L) {
      P c[N], s[N];
      for (std::size_t r = 0; r < N; ++r) {
        c[r] = simd::load<P>(row + j + r * L);
        s[r] = simd::load<P>(row + h + j + r * L);
      }
      float* y = x + t * kTokenFloats + j;
      for (std::size_t m = 0; m < heads; ++m, y += 2 * h) {
        if constexpr (F == Form::prefetch) {
          for (std::size_t r = 0; r < N; ++r) __builtin_prefetch(y + 2 * h + r * L);
          for (std::size_t r = 0; r < N; ++r) __builtin_prefetch(y + 3 * h + r * L);
        }
        if constexpr (F == Form::a_first) {
          P a[N];
          for (std::size_t r = 0; r < N; ++r) a[r] = simd::load<P>(y + r * L);
          __asm__ __volatile__("" : : : "memory");  // the first half's loads before the second's
          for (std::size_t r = 0; r < N; ++r) {
            const P b = simd::load<P>(y + h + r * L);
            simd::store(y + r * L, simd::nmadd(b, s[r], simd::mul(a[r], c[r])));
            simd::store(y + h + r * L, simd::madd(a[r], s[r], simd::mul(b, c[r])));
          }
        } else {
          for (std::size_t r = 0; r < N; ++r) {
            const P a = simd::load<P>(y + r * L), b = simd::load<P>(y + h + r * L);
            simd::store(y + r * L, simd::nmadd(b, s[r], simd::mul(a, c[r])));
            simd::store(y + h + r * L, simd::madd(a, s[r], simd::mul(b, c[r])));
          }
        }
      }
    }
  }
}

template <Form F>
void heads(benchmark::State& state, std::size_t d, std::size_t tokens) {
  const std::size_t h = d / 2, n = tokens * kTokenFloats;
  auto x = bench::filled<float>(n);
  // cos = sin = √½: a rotation, so that the values keep their size over the iterations.
  const bench::Buffer<float> row(d, 0.70710678F);
  const std::size_t registers = h / kLanes;
  for (auto _ : state) {
    if (registers >= kChunk) {
      rotate<kChunk, F>(x.data(), row.data(), tokens, kTokenFloats / d, h);
    } else if (registers * 2 == kChunk) {
      rotate<kChunk / 2, F>(x.data(), row.data(), tokens, kTokenFloats / d, h);
    } else {
      rotate<kChunk / 4, F>(x.data(), row.data(), tokens, kTokenFloats / d, h);
    }
    benchmark::ClobberMemory();
  }
  count(state, n);
}

void limit(benchmark::State& state, std::size_t tokens) {
  const std::size_t n = tokens * kTokenFloats;
  auto x = bench::filled<float>(n);
  const P k = simd::load<P>(x.data() + n - kLanes);
  for (auto _ : state) {
    for (std::size_t i = 0; i + 4 * kLanes <= n; i += 4 * kLanes) {
      for (std::size_t r = 0; r < 4; ++r) {
        simd::store(x.data() + i + r * kLanes,
                    simd::mul(simd::load<P>(x.data() + i + r * kLanes), k));
      }
    }
    benchmark::ClobberMemory();
  }
  count(state, n);
}

void register_all() {
  using Entry = std::pair<const char*, void (*)(benchmark::State&, std::size_t, std::size_t)>;
  for (const Entry& e :
       {Entry{"load", streams<Access::load>}, Entry{"store", streams<Access::store>},
        Entry{"update", streams<Access::update>}}) {
    for (const std::size_t kib : std::initializer_list<std::size_t>{32, 128, 8192}) {
      for (const std::size_t d : std::initializer_list<std::size_t>{0, 2, 4, 6, 8, 16}) {
        const std::string name = std::string("streams/") + e.first + "/apart" +
                                 std::to_string(d * 64) + "/kib" + std::to_string(kib);
        benchmark::RegisterBenchmark(name.c_str(), e.second, kib, d);
      }
    }
  }
  for (const std::size_t tokens : std::initializer_list<std::size_t>{4, 16, 512, 4096}) {
    const std::string t = "/t" + std::to_string(tokens);
    benchmark::RegisterBenchmark(("limit" + t).c_str(), limit, tokens);
    for (const std::size_t d : std::initializer_list<std::size_t>{64, 128, 256, 512}) {
      const std::string shape = "/d" + std::to_string(d) + t;
      benchmark::RegisterBenchmark(("heads/pairs" + shape).c_str(), heads<Form::pairs>, d, tokens);
      benchmark::RegisterBenchmark(("heads/a_first" + shape).c_str(), heads<Form::a_first>, d,
                                   tokens);
      benchmark::RegisterBenchmark(("heads/prefetch" + shape).c_str(), heads<Form::prefetch>, d,
                                   tokens);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  register_all();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
