// Rows past the table against rows in it: what a long context costs when max_positions is small.
//
// Llama 3 8B's heads (32 query + 8 key heads of 128, one [tokens][40][128] buffer), in place, at
// 1, 16 and 512 tokens, float and Eigen::half, both layouts. Each call's tokens sit at
// consecutive positions starting at `first`:
//
//   in_table/...           first 3000, a table of 4096 rows (the rows read from a table in cache)
//   big_table/...          first 70 000, a table of 74 100 rows (36 MiB: what holding every
//                          position of a long context costs, rows read from memory)
//   past_table/<first>     a table of 4096 rows and first 70 000, 2^24 + 12 345,
//                          2^31 + 98 765, 2^40 + 4 242 424 or 2^53 − 5000: every row computed
//                          from the angle sums (3, 3, 4, 5 and 8 factors: the lowest digit of
//                          base 128 and each higher one that is not 0; the cost grows with them)
//
// Each thread keeps the last 32 rows it formed past a table (detail/kept_rows.hpp): a call
// repeated at the same positions, as these rows repeat it (and as an engine's layers repeat a
// decode step), takes them as it takes table rows. The `fresh` rows move every call to new
// positions (the next `tokens` positions, over 4096 of them from `first`, the in-table rows too),
// so that every row past the table is formed: what the first layer of a step pays.
//
//   paired/<where>/...     the in_table call and the past_table call of one shape in turn, each
//                          timed over a batch of at least ~8 µs: counters `ratio` (the median of
//                          the batches' past/in ratios), `q1` and `q3` (its quartiles). A machine
//                          whose speed drifts moves both calls of a pair alike.
//
// The ratio of a past_table row to the in_table row of the same shape is the cost of a long
// context without a long table. The limit (x[i] *= k over the same bytes, in float for half too,
// as in core_bench.cpp) says how far both are from the memory traffic.
#include <algorithm>
#include <chrono>
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

template <class T>
void count(benchmark::State& state, std::size_t tokens) {
  const auto n = static_cast<std::int64_t>(tokens * kHeads * kHeadSize);
  state.SetBytesProcessed(state.iterations() * 2 * n * static_cast<std::int64_t>(sizeof(T)));
}

template <class T>
void limit(benchmark::State& state, std::size_t tokens) {
  const std::size_t n = tokens * kHeads * kHeadSize * sizeof(T) / sizeof(float);
  Buffer<float> x = filled<float>(n);
  using Array = Eigen::Array<float, Eigen::Dynamic, 1>;
  float k = 1;
  benchmark::DoNotOptimize(k);  // the compiler may not drop the multiply by a known 1
  for (auto _ : state) {
    Eigen::Map<Array>(x.data(), Eigen::Index(n)) *= k;
    benchmark::ClobberMemory();
  }
  count<T>(state, tokens);
}

// One call's shape: a Rotary with `table` rows, its buffer and its positions, from `first`;
// next() moves a fresh call's positions on by `tokens`, within 4096 positions of `first`.
template <class T>
struct Call {
  rope::Rotary<T, kHeadSize> rot;
  std::size_t tokens;
  std::int64_t first;
  Buffer<T> x;
  std::vector<std::int64_t> positions;

  Call(rope::Layout layout, std::size_t tokens_, std::size_t table, std::int64_t first_)
      : rot(options(layout, table)),
        tokens(tokens_),
        first(first_),
        x(filled<T>(tokens_ * kHeads * kHeadSize)),
        positions(tokens_) {
    for (std::size_t t = 0; t < tokens; ++t) positions[t] = first + static_cast<std::int64_t>(t);
  }
  static rope::Options options(rope::Layout layout, std::size_t table) {
    rope::Options o;
    o.layout = layout;
    o.max_positions = table;
    return o;
  }
  void run() {
    rot.apply(x.data(), tokens, kHeads, positions.data());
    benchmark::ClobberMemory();
  }
  void next() {
    const auto step = static_cast<std::int64_t>(tokens);
    const std::int64_t start =
        positions[0] + step + step > first + 4096 ? first : positions[0] + step;
    for (std::size_t t = 0; t < tokens; ++t) positions[t] = start + static_cast<std::int64_t>(t);
  }
};

template <class T>
void rotate(benchmark::State& state, rope::Layout layout, std::size_t tokens, std::size_t table,
            std::int64_t first, bool fresh) {
  Call<T> call(layout, tokens, table, first);
  for (auto _ : state) {
    call.run();
    if (fresh) call.next();
  }
  count<T>(state, tokens);
}

// The in_table call (first 0 when fresh, else 3000) and the past_table call of one shape in
// turn; see the file's comment.
template <class T>
void paired(benchmark::State& state, rope::Layout layout, std::size_t tokens, std::int64_t first,
            bool fresh) {
  Call<T> in(layout, tokens, 4096, fresh ? 0 : 3000), past(layout, tokens, 4096, first);
  const std::size_t batch = std::max<std::size_t>(1, 64 / tokens);  // ~8 µs or more
  using Clock = std::chrono::steady_clock;
  const auto time = [&](Call<T>& call) {
    const Clock::time_point start = Clock::now();
    for (std::size_t i = 0; i < batch; ++i) {
      call.run();
      if (fresh) call.next();
    }
    return std::chrono::duration<double>(Clock::now() - start).count();
  };
  std::vector<double> ratios;
  for (auto _ : state) {
    const double a = time(in);
    ratios.push_back(time(past) / a);
  }
  std::sort(ratios.begin(), ratios.end());
  const auto at = [&](double q) {
    return ratios[static_cast<std::size_t>(q * double(ratios.size() - 1))];
  };
  state.counters["ratio"] = at(0.5);
  state.counters["q1"] = at(0.25);
  state.counters["q3"] = at(0.75);
}

// One row alone: Table<float>::write_row of a position past the table (the angle sums), against
// copying the in-table row of position 3000 (what the rotation reads instead), head 128.
void row_alone(benchmark::State& state, rope::Layout layout, std::int64_t first) {
  const rope::Table<float> table(layout, rope::inverse_frequencies(128, 500000.0), 4096);
  std::vector<float> row(128);
  auto m = static_cast<std::uint64_t>(first);
  for (auto _ : state) {
    if (first < 4096) {
      std::copy(table.row(m), table.row(m) + 128, row.data());
    } else {
      table.write_row(m, row.data());
    }
    benchmark::DoNotOptimize(row.data());
    benchmark::ClobberMemory();
    m = m + 1 == static_cast<std::uint64_t>(first) + 512 ? static_cast<std::uint64_t>(first)
                                                         : m + 1;
  }
}

// Constructing a Rotary of head 128 with the default 4096-row table: the table's rows and the
// angle sums' 1017 levels (float and double tables build them).
template <class T>
void construct(benchmark::State& state) {
  for (auto _ : state) {
    const rope::Rotary<T, kHeadSize> rot;
    benchmark::DoNotOptimize(&rot);
  }
}

template <class T>
void register_type(const std::string& type) {
  struct Where {
    std::string name;
    std::size_t table;
    std::int64_t first;
  };
  const Where wheres[] = {{"in_table", 4096, 3000},
                          {"big_table", 74100, 70000},
                          {"past_table/70000", 4096, 70000},
                          {"past_table/2^24", 4096, (std::int64_t{1} << 24) + 12345},
                          {"past_table/2^31", 4096, (std::int64_t{1} << 31) + 98765},
                          {"past_table/2^40", 4096, (std::int64_t{1} << 40) + 4242424},
                          {"past_table/2^53", 4096, (std::int64_t{1} << 53) - 5000}};
  for (const std::size_t tokens : {1, 16, 512}) {
    const std::string shape = "/" + type + "/d128x40/t" + std::to_string(tokens);
    benchmark::RegisterBenchmark(("limit_in_place" + shape).c_str(), limit<T>, tokens);
    for (const rope::Layout layout : {rope::Layout::interleaved, rope::Layout::half_split}) {
      for (const bool fresh : {false, true}) {
        for (const Where& w : wheres) {
          const std::string name =
              (fresh ? "fresh/" : "") + w.name + "/" + rope::to_string(layout) + shape;
          const std::int64_t first = fresh && w.first == 3000 ? 0 : w.first;
          benchmark::RegisterBenchmark(name.c_str(), rotate<T>, layout, tokens, w.table, first,
                                       fresh);
          if (w.table == 4096 && w.first != 3000) {
            benchmark::RegisterBenchmark(("paired/" + name).c_str(), paired<T>, layout, tokens,
                                         w.first, fresh);
          }
        }
      }
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  for (const rope::Layout layout : {rope::Layout::interleaved, rope::Layout::half_split}) {
    const std::string name = std::string("/") + rope::to_string(layout) + "/float/d128";
    benchmark::RegisterBenchmark(("row_alone/in_table" + name).c_str(), row_alone, layout, 3000);
    for (const std::int64_t first :
         {std::int64_t{70000}, (std::int64_t{1} << 31) + 98765, (std::int64_t{1} << 53) - 1024}) {
      benchmark::RegisterBenchmark(("row_alone/past_table/" + std::to_string(first) + name).c_str(),
                                   row_alone, layout, first);
    }
  }
  benchmark::RegisterBenchmark("construct/float/d128", construct<float>);
  benchmark::RegisterBenchmark("construct/double/d128", construct<double>);
  register_type<float>("float");
  register_type<Eigen::half>("half");
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
