// Layout comparison: rope's kernels against the memory-bandwidth limit and the scalar loop.
//
// Cost model, per element of q/k rotated in place: one load and one store of T (2·sizeof(T)
// bytes), plus the token's table row (d values of T, read once for all 40 heads of the token);
// 3 flops (a pair takes 4 multiplies and 2 additions). At 3 flops per 8 bytes (float) RoPE is
// bound by memory bandwidth, so the yardstick, "the limit", is a vectorised pass over the same
// bytes: x[i] *= k in place, dst[i] = src[i] out of place. glibc memcpy is shown beside it; on
// shared virtual machines it is erratic at small sizes, so no ratio is taken against it.
//
// Shape: head size 128, 32 query + 8 key heads (Llama 3 8B); 1 token (a decode step, at position
// 4000) and 512 tokens (a prefill, positions 0..511). The table prints the median of the
// repetitions and time ratios between kernels of the same run.
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include <Eigen/Core>
#include <benchmark/benchmark.h>

#include <rope/rope.hpp>

#include "scalar_kernels.hpp"

namespace {

using rope::Layout;

constexpr std::size_t kHeadSize = 128, kHeads = 32 + 8, kTablePositions = 8192;
constexpr std::int64_t kDecodePosition = 4000;
const std::size_t kTokens[] = {1, 512};
const Layout kLayouts[] = {Layout::interleaved, Layout::half_split};

template <class T>
const char* type_name() {
  return sizeof(T) == 4 ? "float" : "double";
}

template <class T>
using Buffer = std::vector<T, Eigen::aligned_allocator<T>>;

// The q/k heads of `tokens` tokens, a second buffer for out-of-place runs, and the positions.
template <class T>
struct Batch {
  explicit Batch(std::size_t token_count)
      : tokens(token_count),
        size(tokens * kHeads * kHeadSize),
        x(size),
        y(size),
        positions(tokens) {
    std::mt19937 rng(1);
    std::uniform_real_distribution<double> uniform(-1.0, 1.0);
    for (T& v : x) v = static_cast<T>(uniform(rng));
    if (tokens == 1) {
      positions[0] = kDecodePosition;
    } else {
      std::iota(positions.begin(), positions.end(), std::int64_t{0});
    }
  }
  // Bytes a pass reads and writes: each element once each way.
  std::int64_t bytes() const { return std::int64_t(2 * size * sizeof(T)); }

  std::size_t tokens, size;
  Buffer<T> x, y;
  std::vector<std::int64_t> positions;
};

template <class T>
void count(benchmark::State& state, const Batch<T>& batch) {
  state.SetBytesProcessed(state.iterations() * batch.bytes());
  state.SetItemsProcessed(state.iterations() * std::int64_t(batch.size));
}

template <class T>
rope::Rotary<T, kHeadSize> make_rotary(Layout layout) {
  rope::Options options;
  options.layout = layout;
  options.max_positions = kTablePositions;
  return rope::Rotary<T, kHeadSize>(options);
}

template <class T>
using ArrayX = Eigen::Array<T, Eigen::Dynamic, 1>;

// --- baselines -------------------------------------------------------------------------------

// The in-place limit: read and write every element once, x[i] *= k, vectorised by Eigen.
template <class T>
void limit_in_place(benchmark::State& state, std::size_t tokens) {
  Batch<T> batch(tokens);
  Eigen::Map<ArrayX<T>> x(batch.x.data(), Eigen::Index(batch.size));
  T k = 1;
  benchmark::DoNotOptimize(k);  // the compiler may not drop the multiply by a known 1
  for (auto _ : state) {
    x *= k;
    benchmark::ClobberMemory();
  }
  count(state, batch);
}

// The out-of-place limit: a vectorised copy loop.
template <class T>
void limit_copy(benchmark::State& state, std::size_t tokens) {
  Batch<T> batch(tokens);
  const Eigen::Map<const ArrayX<T>> src(batch.x.data(), Eigen::Index(batch.size));
  Eigen::Map<ArrayX<T>> dst(batch.y.data(), Eigen::Index(batch.size));
  for (auto _ : state) {
    dst = src;
    benchmark::ClobberMemory();
  }
  count(state, batch);
}

template <class T>
void glibc_memcpy(benchmark::State& state, std::size_t tokens) {
  Batch<T> batch(tokens);
  for (auto _ : state) {
    std::memcpy(batch.y.data(), batch.x.data(), batch.size * sizeof(T));
    benchmark::ClobberMemory();
  }
  count(state, batch);
}

// rope::reference's loops, not auto-vectorised, reading separate cos and sin tables.
template <class T>
void scalar(benchmark::State& state, Layout layout, std::size_t tokens) {
  Batch<T> batch(tokens);
  const auto rot = make_rotary<T>(Layout::half_split);  // rows [cos | sin]: split them
  Buffer<T> cos(kTablePositions * kHeadSize / 2), sin(cos.size());
  for (std::size_t m = 0; m < kTablePositions; ++m) {
    std::copy_n(rot.table().row(m), kHeadSize / 2, cos.data() + m * kHeadSize / 2);
    std::copy_n(rot.table().row(m) + kHeadSize / 2, kHeadSize / 2, sin.data() + m * kHeadSize / 2);
  }
  for (auto _ : state) {
    rope_bench::scalar_apply(layout, batch.x.data(), tokens, kHeads, kHeadSize,
                             batch.positions.data(), cos.data(), sin.data());
    benchmark::ClobberMemory();
  }
  count(state, batch);
}

// What a first Eigen version writes, one head at a time with public expressions: the
// interleaved pairs as complex numbers times e^{iφ}; the half_split halves as arrays, in blocks
// of 64 bytes loaded before they are overwritten. rope's kernels replaced these (docs/design.md).
template <class T>
void eigen_expression(benchmark::State& state, Layout layout, std::size_t tokens) {
  Batch<T> batch(tokens);
  const auto rot = make_rotary<T>(layout);
  constexpr Eigen::Index kHalf = kHeadSize / 2, kBlock = 64 / sizeof(T);
  using Pairs = Eigen::Array<std::complex<T>, kHalf, 1>;
  using Block = Eigen::Array<T, kBlock, 1>;
  for (auto _ : state) {
    for (std::size_t t = 0; t < tokens; ++t) {
      const T* row = rot.table().row(std::size_t(batch.positions[t]));
      for (std::size_t h = 0; h < kHeads; ++h) {
        T* head = batch.x.data() + (t * kHeads + h) * kHeadSize;
        if (layout == Layout::interleaved) {
          Eigen::Map<Pairs> z(reinterpret_cast<std::complex<T>*>(head));
          z *= Eigen::Map<const Pairs>(reinterpret_cast<const std::complex<T>*>(row));
        } else {
          for (Eigen::Index j = 0; j < kHalf; j += kBlock) {
            const Block a = Block::Map(head + j), b = Block::Map(head + kHalf + j);
            const Block c = Block::Map(row + j), s = Block::Map(row + kHalf + j);
            Block::Map(head + j) = a * c - b * s;
            Block::Map(head + kHalf + j) = b * c + a * s;
          }
        }
      }
    }
    benchmark::ClobberMemory();
  }
  count(state, batch);
}

// --- rope --------------------------------------------------------------------------------------

template <class T>
void apply_in_place(benchmark::State& state, Layout layout, std::size_t tokens) {
  Batch<T> batch(tokens);
  const auto rot = make_rotary<T>(layout);
  for (auto _ : state) {
    rot.apply(batch.x.data(), tokens, kHeads, batch.positions.data());
    benchmark::ClobberMemory();
  }
  count(state, batch);
}

template <class T>
void apply_out_of_place(benchmark::State& state, Layout layout, std::size_t tokens) {
  Batch<T> batch(tokens);
  const auto rot = make_rotary<T>(layout);
  for (auto _ : state) {
    rot.apply(batch.x.data(), batch.y.data(), tokens, kHeads, batch.positions.data());
    benchmark::ClobberMemory();
  }
  count(state, batch);
}

// --- registration and the summary table ---------------------------------------------------------

std::string name(const std::string& kernel, const char* type, std::size_t tokens) {
  return kernel + "/" + type + "/" + std::to_string(tokens);
}

template <class T>
void register_type() {
  const char* type = type_name<T>();
  for (const std::size_t tokens : kTokens) {
    benchmark::RegisterBenchmark(name("limit_in_place", type, tokens).c_str(), limit_in_place<T>,
                                 tokens);
    benchmark::RegisterBenchmark(name("limit_copy", type, tokens).c_str(), limit_copy<T>, tokens);
    benchmark::RegisterBenchmark(name("memcpy", type, tokens).c_str(), glibc_memcpy<T>, tokens);
    for (const Layout layout : kLayouts) {
      const std::string l = rope::to_string(layout);
      benchmark::RegisterBenchmark(name("apply/" + l, type, tokens).c_str(), apply_in_place<T>,
                                   layout, tokens);
      benchmark::RegisterBenchmark(name("apply_out_of_place/" + l, type, tokens).c_str(),
                                   apply_out_of_place<T>, layout, tokens);
      benchmark::RegisterBenchmark(name("scalar/" + l, type, tokens).c_str(), scalar<T>, layout,
                                   tokens);
      benchmark::RegisterBenchmark(name("eigen_expression/" + l, type, tokens).c_str(),
                                   eigen_expression<T>, layout, tokens);
    }
  }
}

// Prints the run as usual and keeps each benchmark's median (or only) real time for the table.
class SummaryReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& run : runs) {
      const bool median = run.run_type == Run::RT_Aggregate && run.aggregate_name == "median";
      const bool only = run.run_type == Run::RT_Iteration && run.repetitions <= 1;
      if (median || only) {
        nanoseconds_[run.run_name.str()] =
            run.GetAdjustedRealTime() * benchmark::GetTimeUnitMultiplier(benchmark::kNanosecond) /
            benchmark::GetTimeUnitMultiplier(run.time_unit);
      }
    }
    ConsoleReporter::ReportRuns(runs);
  }

  void print_summary() const {
    std::printf("\nLayout comparison, head size %zu, %zu heads (32 q + 8 k); median real time.\n",
                kHeadSize, kHeads);
    std::printf(
        "x limit: time / time of the limit pass over the same bytes (x *= k in place, a\n"
        "vectorised copy out of place). scalar/this: scalar loop time / this time.\n\n");
    std::printf("%-6s %6s  %-32s %10s %8s %8s %12s\n", "dtype", "tokens", "kernel", "ns", "GB/s",
                "x limit", "scalar/this");
    for (const char* type : {"float", "double"}) {
      for (const std::size_t tokens : kTokens) {
        const std::size_t bytes =
            2 * tokens * kHeads * kHeadSize * (std::string(type) == "float" ? 4 : 8);
        const auto time = [&](const std::string& kernel) {
          const auto it = nanoseconds_.find(name(kernel, type, tokens));
          return it == nanoseconds_.end() ? std::nan("") : it->second;
        };
        const auto row = [&](const std::string& kernel, const std::string& limit,
                             const std::string& scalar_kernel) {
          const double ns = time(kernel);
          if (std::isnan(ns)) return;
          std::printf("%-6s %6zu  %-32s %10.0f %8.1f %8.2f", type, tokens, kernel.c_str(), ns,
                      double(bytes) / ns, ns / time(limit));
          if (scalar_kernel.empty()) {
            std::printf("\n");
          } else {
            std::printf(" %12.2f\n", time(scalar_kernel) / ns);
          }
        };
        row("limit_in_place", "limit_in_place", "");
        row("limit_copy", "limit_copy", "");
        row("memcpy", "limit_copy", "");
        for (const Layout layout : kLayouts) {
          const std::string l = rope::to_string(layout);
          row("apply/" + l, "limit_in_place", "scalar/" + l);
          row("apply_out_of_place/" + l, "limit_copy", "scalar/" + l);
          row("scalar/" + l, "limit_in_place", "scalar/" + l);
          row("eigen_expression/" + l, "limit_in_place", "scalar/" + l);
        }
      }
    }
  }

 private:
  std::map<std::string, double> nanoseconds_;
};

}  // namespace

int main(int argc, char** argv) {
  register_type<float>();
  register_type<double>();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  SummaryReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  reporter.print_summary();
  benchmark::Shutdown();
  return 0;
}
