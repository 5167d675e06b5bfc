// Where in-place RoPE spends its time out of every cache: 98 304 tokens × 40 heads × 128 floats
// (1.9 GiB, tens of times any current last-level cache), against the pass that only reads and
// writes the same buffer (x *= k), with the table row of each token coming from memory, from
// cache or from L1, and past the table. docs/measurements/out-of-cache.md has
// the command and the figures. Needs 4 GiB.
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <vector>

#include <Eigen/Core>
#include <benchmark/benchmark.h>

#include <rope/rope.hpp>

namespace {

constexpr std::size_t kTokens = 98304, kHeads = 40, kHeadSize = 128;
constexpr std::size_t kElements = kTokens * kHeads * kHeadSize;

using Buffer = std::vector<float, Eigen::aligned_allocator<float>>;

Buffer& x() {
  static Buffer buffer(kElements, 0.5F);
  return buffer;
}
Buffer& y() {
  static Buffer buffer(kElements, 0.5F);
  return buffer;
}

enum class Rows { streamed, cached, one, past_table };

// Positions and table size for each kind of row: a table of every position (a 512-byte row per
// token read from memory), positions t mod 8192 of a table of 8192 (4 MiB, stays in cache), every
// position 0 (one row), or positions 0..98 303 past a table of 8192 rows (computed per token).
struct Case {
  std::vector<std::int64_t> positions;
  std::size_t table_rows;
};
Case make_case(Rows rows) {
  Case c{std::vector<std::int64_t>(kTokens), rows == Rows::streamed ? kTokens : 8192};
  std::iota(c.positions.begin(), c.positions.end(), std::int64_t{0});
  for (auto& p : c.positions) {
    if (rows == Rows::cached) p %= 8192;
    if (rows == Rows::one) p = 0;
  }
  return c;
}

rope::Rotary<float, kHeadSize> make_rotary(rope::Layout layout, std::size_t table_rows) {
  rope::Options options;
  options.layout = layout;
  options.max_positions = table_rows;
  return rope::Rotary<float, kHeadSize>(options);
}

void limit_in_place(benchmark::State& state) {
  Eigen::Map<Eigen::ArrayXf> a(x().data(), Eigen::Index(kElements));
  float k = 1;
  benchmark::DoNotOptimize(k);
  for (auto _ : state) {
    a *= k;
    benchmark::ClobberMemory();
  }
}

void limit_copy(benchmark::State& state) {
  Eigen::Map<const Eigen::ArrayXf> a(x().data(), Eigen::Index(kElements));
  Eigen::Map<Eigen::ArrayXf> b(y().data(), Eigen::Index(kElements));
  for (auto _ : state) {
    b = a;
    benchmark::ClobberMemory();
  }
}

void in_place(benchmark::State& state, rope::Layout layout, Rows rows) {
  const Case c = make_case(rows);
  const auto rot = make_rotary(layout, c.table_rows);
  for (auto _ : state) {
    rot.apply(x().data(), kTokens, kHeads, c.positions.data());
    benchmark::ClobberMemory();
  }
}

// The kernel alone, token by token against one row, without the call's checks and walk: what
// the access pattern and arithmetic of a head cost out of cache, apart from the library around
// them.
void kernel_only(benchmark::State& state, rope::Layout layout, Rows rows) {
  static_cast<void>(rows);
  const auto rot = make_rotary(layout, 1);
  const float* row = rot.table().row(0);
  const rope::detail::Kernel kernel = rope::detail::kernel_for<kHeadSize / 2, float>(layout);
  constexpr std::size_t kToken = kHeads * kHeadSize, kHeadBytes = kHeadSize * sizeof(float);
  const rope::detail::Slice slice{0, kHeadSize, kHeadSize, kHeadSize / 2};
  for (auto _ : state) {
    for (std::size_t t = 0; t < kTokens; ++t) {
      float* token = x().data() + t * kToken;
      kernel(rope::detail::AnyHeads{token, kHeadBytes, token, kHeadBytes, kHeads}, row, slice,
             false);
    }
    benchmark::ClobberMemory();
  }
}

void out_of_place(benchmark::State& state, rope::Layout layout, Rows rows) {
  const Case c = make_case(rows);
  const auto rot = make_rotary(layout, c.table_rows);
  const auto src = rope::View<const float>::contiguous(x().data(), kTokens, kHeads, kHeadSize);
  const auto dst = rope::View<float>::contiguous(y().data(), kTokens, kHeads, kHeadSize);
  for (auto _ : state) {
    rot.apply(src, dst, c.positions.data());
    benchmark::ClobberMemory();
  }
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::RegisterBenchmark("limit_in_place", limit_in_place)->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("limit_copy", limit_copy)->Unit(benchmark::kMillisecond);
  struct Named {
    const char* name;
    void (*run)(benchmark::State&, rope::Layout, Rows);
    rope::Layout layout;
    Rows rows;
  };
  using rope::Layout;
  const Named cases[] = {
      {"in_place/half_split_rows_streamed", in_place, Layout::half_split, Rows::streamed},
      {"in_place/interleaved_rows_streamed", in_place, Layout::interleaved, Rows::streamed},
      {"in_place/half_split_rows_cached", in_place, Layout::half_split, Rows::cached},
      {"in_place/half_split_one_row", in_place, Layout::half_split, Rows::one},
      {"in_place/interleaved_one_row", in_place, Layout::interleaved, Rows::one},
      {"in_place/half_split_past_table", in_place, Layout::half_split, Rows::past_table},
      {"kernel_only/half_split_one_row", kernel_only, Layout::half_split, Rows::one},
      {"kernel_only/interleaved_one_row", kernel_only, Layout::interleaved, Rows::one},
      {"out_of_place/half_split_rows_streamed", out_of_place, Layout::half_split, Rows::streamed},
      {"out_of_place/interleaved_rows_streamed", out_of_place, Layout::interleaved,
       Rows::streamed}};
  for (const Named& c : cases) {
    benchmark::RegisterBenchmark(c.name, c.run, c.layout, c.rows)->Unit(benchmark::kMillisecond);
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
