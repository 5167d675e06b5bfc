// Proportional RoPE (Gemma 4's full-attention layers): a head of 512 of which 64 of 256 pairs
// rotate (θ_j = 0 for the others), 16 query + 2 key heads per token ([tokens][18][512]), float
// and bfloat16, decode (1 token at position 4000) and prefill (512 tokens at 0..511), in place.
//
// Against:
//  - full:   the same head with every pair rotating (Unscaled, base 1e6): what a RoPE that treats
//            θ = 0 as an angle of 0 costs;
//  - limit:  a vectorised pass that reads and writes the bytes the call must touch in place, the
//            rotating quarter of each head (x[i] *= k on those coordinates, in float);
//  - limit_whole: the same pass over the whole head.
//
//     build/release/bench/proportional_bench --benchmark_min_time=0.2
#include <cstdint>
#include <string>
#include <vector>

#include <Eigen/Core>
#include <benchmark/benchmark.h>

#include <rope/rope.hpp>

#include "buffers.hpp"

namespace {

constexpr std::size_t kHeadSize = 512, kHeads = 18, kRotating = 64;  // pairs of 256

using bench::Buffer;
using bench::filled;
using bench::positions_for;

// Bytes per iteration: the whole buffer read and written, so that rates compare across rows.
template <class T>
void count(benchmark::State& state, std::size_t tokens) {
  const auto n = static_cast<std::int64_t>(tokens * kHeads * kHeadSize);
  state.SetBytesProcessed(state.iterations() * 2 * n * static_cast<std::int64_t>(sizeof(T)));
}

template <class T>
void rotate(benchmark::State& state, rope::Layout layout, std::size_t tokens, bool proportional) {
  rope::Options options{kHeadSize, 1e6, layout, 8192};
  if (proportional) options.scaling = rope::Proportional{0.25, 1.0};
  const rope::Rotary<T, static_cast<int>(kHeadSize)> rot(options);
  Buffer<T> x = filled<T>(tokens * kHeads * kHeadSize);
  const auto positions = positions_for(tokens);
  for (auto _ : state) {
    rot.apply(x.data(), tokens, kHeads, positions.data());
    benchmark::ClobberMemory();
  }
  count<T>(state, tokens);
}

// x[i] *= k, in float, on the coordinates a layout's rotating pairs occupy (whole: all of them).
template <class T>
void limit(benchmark::State& state, rope::Layout layout, std::size_t tokens, bool whole) {
  const std::size_t floats_per_head = kHeadSize * sizeof(T) / sizeof(float);
  const std::size_t heads = tokens * kHeads;
  Buffer<float> x = filled<float>(heads * floats_per_head);
  using Array = Eigen::Array<float, Eigen::Dynamic, 1>;
  const Eigen::Index part = Eigen::Index(2 * kRotating * sizeof(T) / sizeof(float));
  float k = 1;
  benchmark::DoNotOptimize(k);  // the compiler may not drop the multiply by a known 1
  for (auto _ : state) {
    for (std::size_t h = 0; h < heads; ++h) {
      float* head = x.data() + h * floats_per_head;
      if (whole) {
        Eigen::Map<Array>(head, Eigen::Index(floats_per_head)) *= k;
      } else if (layout == rope::Layout::interleaved) {
        Eigen::Map<Array>(head, part) *= k;
      } else {  // the first kRotating coordinates of each half
        Eigen::Map<Array>(head, part / 2) *= k;
        Eigen::Map<Array>(head + floats_per_head / 2, part / 2) *= k;
      }
    }
    benchmark::ClobberMemory();
  }
  count<T>(state, tokens);
}

template <class T>
void register_type(const char* type) {
  for (const std::size_t tokens : {std::size_t{1}, std::size_t{512}}) {
    for (const rope::Layout layout : {rope::Layout::half_split, rope::Layout::interleaved}) {
      const std::string shape =
          std::string(type) + "/" + rope::to_string(layout) + "/t" + std::to_string(tokens);
      benchmark::RegisterBenchmark(("proportional/" + shape).c_str(), rotate<T>, layout, tokens,
                                   true);
      benchmark::RegisterBenchmark(("full/" + shape).c_str(), rotate<T>, layout, tokens, false);
      benchmark::RegisterBenchmark(("limit/" + shape).c_str(), limit<T>, layout, tokens, false);
      benchmark::RegisterBenchmark(("limit_whole/" + shape).c_str(), limit<T>, layout, tokens,
                                   true);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  register_type<float>("float");
  register_type<Eigen::bfloat16>("bfloat16");
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
