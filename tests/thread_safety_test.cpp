// One const Rotary shared by 8 threads, each rotating its own buffers concurrently: the results
// are bitwise those of one thread. Run under ThreadSanitizer by rope_tsan_tests, which also
// reports any data race inside the library (the table is only read after construction).
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

#include <Eigen/Core>
#include <catch2/catch.hpp>

#include <rope/rope.hpp>

#include "support.hpp"

TEMPLATE_TEST_CASE("Rotary: 8 threads sharing one const Rotary get the bits of one thread",
                   "[threads][tsan]", float, Eigen::half) {
  using T = TestType;
  constexpr std::size_t kThreads = 8, tokens = 24, heads = 4, kv_heads = 2, d = 128;
  rope::Options options{d, 500000.0, rope::Layout::half_split, 64};
  options.scaling = rope::Llama3{};
  const rope::Rotary<T, d> rot(options);

  // Each thread: its own q (out of place) and fused q/k (in place), positions in and past the
  // table, so that threads compute past-table rows at the same time.
  std::mt19937_64 rng(8);
  std::vector<std::vector<T>> inputs, qk_inputs;
  std::vector<std::vector<std::int64_t>> positions;
  for (std::size_t i = 0; i < kThreads; ++i) {
    inputs.push_back(rope_test::random_vector<T>(tokens * heads * d, rng));
    qk_inputs.push_back(rope_test::random_vector<T>(tokens * (heads + kv_heads) * d, rng));
    std::vector<std::int64_t> p(tokens);
    for (std::size_t t = 0; t < tokens; ++t) p[t] = std::int64_t(i * 16 + t * 3);
    positions.push_back(p);
  }
  const auto run = [&](std::size_t i, std::vector<T>& out, std::vector<T>& qk) {
    rot.apply(rope_test::contiguous(inputs[i].data(), tokens, heads, rot.head_size()),
              rope_test::contiguous(out.data(), tokens, heads, rot.head_size()),
              positions[i].data());
    const std::size_t row = (heads + kv_heads) * d;
    rot.apply_qk(rope::View<T>(qk.data(), tokens, heads, row, d),
                 rope::View<T>(qk.data() + heads * d, tokens, kv_heads, row, d),
                 positions[i].data());
    rot.shift(rope::View<T>(qk.data() + heads * d, tokens, kv_heads, row, d), -3);
  };

  std::vector<std::vector<T>> alone(kThreads, std::vector<T>(tokens * heads * d));
  std::vector<std::vector<T>> alone_qk = qk_inputs;
  for (std::size_t i = 0; i < kThreads; ++i) run(i, alone[i], alone_qk[i]);

  std::vector<std::vector<T>> shared(kThreads, std::vector<T>(tokens * heads * d));
  std::vector<std::vector<T>> shared_qk = qk_inputs;
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      for (int repeat = 0; repeat < 4; ++repeat) {  // overlap the threads' work in time
        shared_qk[i] = qk_inputs[i];
        run(i, shared[i], shared_qk[i]);
      }
    });
  }
  for (auto& thread : threads) thread.join();
  for (std::size_t i = 0; i < kThreads; ++i) {
    INFO("thread " << i);
    REQUIRE(std::memcmp(shared[i].data(), alone[i].data(), alone[i].size() * sizeof(T)) == 0);
    REQUIRE(std::memcmp(shared_qk[i].data(), alone_qk[i].data(), alone_qk[i].size() * sizeof(T)) ==
            0);
  }
}
