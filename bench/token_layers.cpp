// What a token costs above the kernel: Rotary::apply in place on heads of 256 (Gemma's size)
// against the same heads rotated token by token by the kernel alone (rotate_half_split, what the
// kernel pointer of a call reaches) on a table of the same shape, at 1 to 512 tokens of 1 to 40
// heads. The difference per token is the call's layers above the kernel: its checks, the walk or
// the direct loop, the positions, the row's lookup, the kernel pointer (docs/design.md, "The
// kernels"). Internal: it calls rope::detail, which has no stable interface.
//
//   token_layers --benchmark_filter=x8/ --benchmark_repetitions=5
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include <Eigen/Core>
#include <benchmark/benchmark.h>

#include <rope/rope.hpp>

#include "buffers.hpp"

namespace {

constexpr std::size_t kHeadSize = 256, kHalf = kHeadSize / 2;

void count(benchmark::State& state, std::size_t tokens, std::size_t heads) {
  const auto n = static_cast<std::int64_t>(tokens * heads * kHeadSize);
  state.SetBytesProcessed(state.iterations() * 2 * n * static_cast<std::int64_t>(sizeof(float)));
  state.counters["ns per token"] = benchmark::Counter(
      static_cast<double>(tokens),
      benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

void apply(benchmark::State& state, std::size_t heads, std::size_t tokens) {
  rope::Options options;
  options.head_size = kHeadSize;
  const rope::Rotary<float> rot(options);
  auto x = bench::filled<float>(tokens * heads * kHeadSize);
  const auto positions = bench::positions_for(tokens);
  for (auto _ : state) {
    rot.apply(x.data(), tokens, heads, positions.data());
    benchmark::ClobberMemory();
  }
  count(state, tokens, heads);
}

// The kernel alone, on rows [cos | sin] of angles that keep the heads' norms (as the table's do:
// no value drifts towards the subnormals over the iterations).
void kernel(benchmark::State& state, std::size_t heads, std::size_t tokens) {
  using rope::detail::TokenHeads;
  auto x = bench::filled<float>(tokens * heads * kHeadSize);
  std::vector<float> table(tokens * kHeadSize);
  for (std::size_t m = 0; m < tokens; ++m) {
    for (std::size_t j = 0; j < kHalf; ++j) {
      const double angle = 0.001 * static_cast<double>(m * kHalf + j);
      table[m * kHeadSize + j] = static_cast<float>(std::cos(angle));
      table[m * kHeadSize + kHalf + j] = static_cast<float>(std::sin(angle));
    }
  }
  const auto half = static_cast<Eigen::Index>(kHalf);
  for (auto _ : state) {
    for (std::size_t t = 0; t < tokens; ++t) {
      float* heads_of_t = x.data() + t * heads * kHeadSize;
      const TokenHeads<float> token{heads_of_t, kHeadSize, heads_of_t, kHeadSize, heads};
      rope::detail::rotate_half_split<Eigen::Dynamic>(token, table.data() + t * kHeadSize, half,
                                                      half, half, false);
    }
    benchmark::ClobberMemory();
  }
  count(state, tokens, heads);
}

void register_all() {
  for (const std::size_t heads : std::initializer_list<std::size_t>{1, 2, 8, 40}) {
    for (const std::size_t tokens : std::initializer_list<std::size_t>{1, 16, 32, 512}) {
      const std::string shape = "d256x" + std::to_string(heads) + "/t" + std::to_string(tokens);
      benchmark::RegisterBenchmark(("apply/" + shape).c_str(), apply, heads, tokens);
      benchmark::RegisterBenchmark(("kernel/" + shape).c_str(), kernel, heads, tokens);
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
