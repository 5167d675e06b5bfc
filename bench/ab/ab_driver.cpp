// Times the builds of bench/ab/ab_caller.cpp against each other in one process (run by
// bench/ab/compare.sh, which builds them):
//
//   ab_driver [--rounds N] [--batch-us U] [--filter TEXT] [--list] [--limit]
//             BASE.so:label OTHER.so:label ...
//
// For each row whose name contains TEXT (every row without --filter but those of 1024 tokens and
// more), every build makes its Rotary and rotates the same buffers, which are refilled before each
// round. A round times one batch of calls (repeated until the batch takes U µs, 2000 by default,
// as the base build calibrates it) per build, the builds in a new random order each round.
// Per build the row prints the base build's median time per call and, for each other build, the
// median over the rounds of its time over the base's in the same round, with the quartiles.
// Pass a copy of the base build as the first other build (compare.sh's "control"): its ratio shows
// what the machine's noise alone gives. With --limit, each round also times the row's limit (a
// pass over the same bytes, ab_limit in the base build) in the shuffled order, and a column gives
// the base build's time over it, "× the limit" measured round by round.
#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <dlfcn.h>

namespace {

struct Build {
  std::string label;
  int (*rows)();
  const char* (*name)(int);
  std::size_t (*bytes)(int, int);
  void (*fill)(int, void* const*);
  void* (*make)(int);
  void (*run)(void*, void* const*, long);
  void (*release)(void*);
  bool (*limit)(int, void* const*, long);
};

template <class F>
F symbol(void* library, const char* name, const std::string& path) {
  void* s = dlsym(library, name);
  if (s == nullptr) {
    std::fprintf(stderr, "ab_driver: %s has no %s\n", path.c_str(), name);
    std::exit(2);
  }
  F f;
  std::memcpy(&f, &s, sizeof(f));
  return f;
}

Build load(const std::string& argument) {
  const std::size_t colon = argument.rfind(':');
  const std::string path = colon == std::string::npos ? argument : argument.substr(0, colon);
  Build b;
  b.label = colon == std::string::npos ? path : argument.substr(colon + 1);
  // RTLD_LOCAL: each build keeps its own symbols (they are hidden in the objects as well).
  void* library = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    std::fprintf(stderr, "ab_driver: %s\n", dlerror());
    std::exit(2);
  }
  b.rows = symbol<int (*)()>(library, "ab_rows", path);
  b.name = symbol<const char* (*)(int)>(library, "ab_name", path);
  b.bytes = symbol<std::size_t (*)(int, int)>(library, "ab_bytes", path);
  b.fill = symbol<void (*)(int, void* const*)>(library, "ab_fill", path);
  b.make = symbol<void* (*)(int)>(library, "ab_make", path);
  b.run = symbol<void (*)(void*, void* const*, long)>(library, "ab_run", path);
  b.release = symbol<void (*)(void*)>(library, "ab_free", path);
  b.limit = symbol<bool (*)(int, void* const*, long)>(library, "ab_limit", path);
  return b;
}

template <class F>
double seconds(const F& f) {
  const auto start = std::chrono::steady_clock::now();
  f();
  const auto stop = std::chrono::steady_clock::now();
  return std::chrono::duration<double>(stop - start).count();
}
double seconds(const Build& b, void* made, void* const* buffers, long repeat) {
  return seconds([&] { b.run(made, buffers, repeat); });
}

// The q-quantile of sorted values, linearly interpolated.
double quantile(const std::vector<double>& sorted, double q) {
  const double at = q * double(sorted.size() - 1);
  const auto i = std::size_t(at);
  if (i + 1 >= sorted.size()) return sorted.back();
  return sorted[i] + (at - double(i)) * (sorted[i + 1] - sorted[i]);
}

struct Aligned {
  void* data = nullptr;
  explicit Aligned(std::size_t bytes) {
    if (bytes != 0 && posix_memalign(&data, 64, bytes) != 0) data = nullptr;
    if (bytes != 0 && data == nullptr) {
      std::fprintf(stderr, "ab_driver: out of memory (%zu bytes)\n", bytes);
      std::exit(2);
    }
  }
  ~Aligned() { std::free(data); }
  Aligned(const Aligned&) = delete;
  Aligned& operator=(const Aligned&) = delete;
};

}  // namespace

int main(int argc, char** argv) {
  int rounds = 61;
  double batch_us = 2000;
  std::string filter;
  bool list = false, filtered = false, limit = false;
  std::vector<Build> builds;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--rounds" && i + 1 < argc) {
      rounds = std::max(1, std::atoi(argv[++i]));
    } else if (a == "--batch-us" && i + 1 < argc) {
      batch_us = std::max(10.0, std::atof(argv[++i]));
    } else if (a == "--filter" && i + 1 < argc) {
      filter = argv[++i];
      filtered = true;
    } else if (a == "--list") {
      list = true;
    } else if (a == "--limit") {
      limit = true;
    } else {
      builds.push_back(load(a));
    }
  }
  if (builds.empty() || (builds.size() < 2 && !list)) {
    std::fprintf(stderr,
                 "usage: ab_driver [--rounds N] [--batch-us U] [--filter TEXT] [--list] "
                 "[--limit] BASE.so[:label] OTHER.so[:label] ...\n");
    return 2;
  }
  const Build& base = builds[0];
  for (const Build& b : builds) {
    if (b.rows() != base.rows()) {
      std::fprintf(stderr, "ab_driver: %s has %d rows, %s %d: built from different callers\n",
                   b.label.c_str(), b.rows(), base.label.c_str(), base.rows());
      return 2;
    }
  }
  if (!list) {
    std::printf("| row | %s (ns per call) |", base.label.c_str());
    if (limit) std::printf(" %s / limit: median [q1, q3] |", base.label.c_str());
    for (std::size_t v = 1; v < builds.size(); ++v) {
      std::printf(" %s / %s: median [q1, q3] |", builds[v].label.c_str(), base.label.c_str());
    }
    std::printf("\n| --- | ---: |");
    if (limit) std::printf(" ---: |");
    for (std::size_t v = 1; v < builds.size(); ++v) std::printf(" ---: |");
    std::printf("\n");
  }
  std::mt19937 shuffle(20261205);
  for (int row = 0; row < base.rows(); ++row) {
    const std::string name = base.name(row);
    const bool wanted = filtered ? name.find(filter) != std::string::npos
                                 : name.find("/t1024") == std::string::npos &&
                                       name.find("/t2048") == std::string::npos &&
                                       name.find("/t4096") == std::string::npos &&
                                       name.find("/t8192") == std::string::npos;
    if (!wanted) continue;
    if (list) {
      std::printf("%s\n", name.c_str());
      continue;
    }
    Aligned x(base.bytes(row, 0)), dst(base.bytes(row, 1)), positions(base.bytes(row, 2)),
        pristine(base.bytes(row, 0));
    void* const buffers[3] = {x.data, dst.data, positions.data};
    base.fill(row, buffers);
    std::memcpy(pristine.data, x.data, base.bytes(row, 0));
    std::vector<void*> made;
    for (const Build& b : builds) made.push_back(b.make(row));
    // Warm every build once; the base's calls per batch from its time for a few calls.
    for (std::size_t v = 0; v < builds.size(); ++v) seconds(builds[v], made[v], buffers, 3);
    long repeat = 1;
    while (seconds(base, made[0], buffers, repeat) < batch_us * 1e-6 / 4 && repeat < (1L << 30)) {
      repeat *= 2;
    }
    repeat = std::max(1L, long(double(repeat) * batch_us * 1e-6 /
                               std::max(1e-9, seconds(base, made[0], buffers, repeat))));
    // The limit takes the place v = builds.size() in the shuffled order, where the row has one;
    // ratio[0] is the base build over it, ratio[v] build v over the base.
    const bool with_limit = limit && base.limit(row, buffers, 3);
    std::vector<std::vector<double>> ratio(builds.size());
    std::vector<double> base_time;
    std::vector<std::size_t> order(builds.size() + (with_limit ? 1 : 0));
    for (std::size_t v = 0; v < order.size(); ++v) order[v] = v;
    for (int r = 0; r < rounds; ++r) {
      std::memcpy(x.data, pristine.data, base.bytes(row, 0));
      std::shuffle(order.begin(), order.end(), shuffle);
      std::vector<double> t(order.size());
      for (const std::size_t v : order) {
        t[v] = v == builds.size() ? seconds([&] { base.limit(row, buffers, repeat); })
                                  : seconds(builds[v], made[v], buffers, repeat);
      }
      base_time.push_back(t[0] / double(repeat));
      for (std::size_t v = 1; v < builds.size(); ++v) ratio[v].push_back(t[v] / t[0]);
      if (with_limit) ratio[0].push_back(t[0] / t[builds.size()]);
    }
    std::sort(base_time.begin(), base_time.end());
    std::printf("| %s | %.0f |", name.c_str(), quantile(base_time, 0.5) * 1e9);
    if (with_limit) {
      std::sort(ratio[0].begin(), ratio[0].end());
      std::printf(" %.3f [%.3f, %.3f] |", quantile(ratio[0], 0.5), quantile(ratio[0], 0.25),
                  quantile(ratio[0], 0.75));
    } else if (limit) {
      std::printf(" |");
    }
    for (std::size_t v = 1; v < builds.size(); ++v) {
      std::sort(ratio[v].begin(), ratio[v].end());
      std::printf(" %.3f [%.3f, %.3f] |", quantile(ratio[v], 0.5), quantile(ratio[v], 0.25),
                  quantile(ratio[v], 0.75));
    }
    std::printf("\n");
    std::fflush(stdout);
    for (std::size_t v = 0; v < builds.size(); ++v) builds[v].release(made[v]);
  }
  return 0;
}
