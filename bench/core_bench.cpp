// The core grid: what an engine calls on every layer, in a few seconds of benchmarking.
//
// Decode (1 token at position 4000) and prefill (512 tokens at 0..511) of Llama 3 8B's heads
// (32 query + 8 key heads of 128, one [tokens][40][128] buffer); float and Eigen::half; both
// layouts; in place (rot.apply(x, tokens, heads, positions)) and out of place (a View src and a
// View dst); the head size fixed at compile time (Rotary<T, 128>) and taken at run time
// (Rotary<T> with Options::head_size = 128, what an engine that loads models uses).
//
// Cost model as in layout_bench.cpp: each element is read and written once (2·sizeof(T) bytes),
// 3 flops, so the yardstick is a vectorised pass over the same bytes: x[i] *= k in place, a copy
// loop out of place. Only calls whose spelling is the same in every release are used, so that
// binaries built from different versions of the library can be run one after the other.
#include <cstdint>
#include <string>
#include <vector>

#include <Eigen/Core>
#include <benchmark/benchmark.h>

#include <rope/rope.hpp>

#include "buffers.hpp"

namespace {

constexpr std::size_t kHeadSize = 128, kHeads = 40;

using bench::Buffer;
using bench::filled;
using bench::positions_for;

template <class T>
void count(benchmark::State& state, std::size_t tokens) {
  const auto n = static_cast<std::int64_t>(tokens * kHeads * kHeadSize);
  state.SetBytesProcessed(state.iterations() * 2 * n * static_cast<std::int64_t>(sizeof(T)));
}

// The limits: a vectorised pass in float over the same bytes (for half too: Eigen's 16-bit
// array arithmetic is not vectorised), x[i] *= k in place, a copy loop out of place.
template <class T>
void limit(benchmark::State& state, std::size_t tokens, bool in_place) {
  const std::size_t n = tokens * kHeads * kHeadSize * sizeof(T) / sizeof(float);
  Buffer<float> x = filled<float>(n), y(n);
  using Array = Eigen::Array<float, Eigen::Dynamic, 1>;
  float k = 1;
  benchmark::DoNotOptimize(k);  // the compiler may not drop the multiply by a known 1
  for (auto _ : state) {
    if (in_place) {
      Eigen::Map<Array>(x.data(), Eigen::Index(n)) *= k;
    } else {
      Eigen::Map<Array>(y.data(), Eigen::Index(n)) =
          Eigen::Map<const Array>(x.data(), Eigen::Index(n));
    }
    benchmark::ClobberMemory();
  }
  count<T>(state, tokens);
}

template <class T, int Dim>
void rotate(benchmark::State& state, rope::Layout layout, std::size_t tokens, bool in_place) {
  rope::Options options;
  options.layout = layout;
  options.head_size = kHeadSize;
  options.max_positions = 8192;
  const rope::Rotary<T, Dim> rot(options);
  const std::size_t n = tokens * kHeads * kHeadSize;
  Buffer<T> x = filled<T>(n), y(n);
  const auto positions = positions_for(tokens);
  const auto src = rope::View<const T>::contiguous(x.data(), tokens, kHeads, kHeadSize);
  const auto dst = rope::View<T>::contiguous(y.data(), tokens, kHeads, kHeadSize);
  for (auto _ : state) {
    if (in_place) {
      rot.apply(x.data(), tokens, kHeads, positions.data());
    } else {
      rot.apply(src, dst, positions.data());
    }
    benchmark::ClobberMemory();
  }
  count<T>(state, tokens);
}

template <class T>
void register_type(const char* type) {
  for (const std::size_t tokens : {std::size_t{1}, std::size_t{512}}) {
    const std::string shape = std::string(type) + "/t" + std::to_string(tokens);
    benchmark::RegisterBenchmark(("limit_in_place/" + shape).c_str(), limit<T>, tokens, true);
    benchmark::RegisterBenchmark(("limit_copy/" + shape).c_str(), limit<T>, tokens, false);
    for (const rope::Layout layout : {rope::Layout::interleaved, rope::Layout::half_split}) {
      for (const bool in_place : {true, false}) {
        const std::string call = std::string(in_place ? "in_place/" : "out_of_place/") +
                                 rope::to_string(layout) + "/" + shape;
        benchmark::RegisterBenchmark(("fixed/" + call).c_str(), rotate<T, 128>, layout, tokens,
                                     in_place);
        benchmark::RegisterBenchmark(("dynamic/" + call).c_str(), rotate<T, Eigen::Dynamic>, layout,
                                     tokens, in_place);
      }
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  register_type<float>("float");
  register_type<Eigen::half>("half");
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
