// 16-bit storage, threads, token ranges, streaming stores and buffer alignment: each fast path
// must give bitwise the result of the plain path (or, for Eigen::half and bfloat16, the float
// rotation rounded once), so the reference tests of the plain path cover them too.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <Eigen/Core>
#include <catch2/catch.hpp>

#include <rope/rope.hpp>

#include "support.hpp"

namespace {

using rope::Direction;
using rope::Execution;
using rope::Layout;
using rope::TokenRange;
using rope::View;

template <class T>
using Buffer = rope_test::LineAligned<T>;

// Bitwise equality, so that −0 ≠ +0 and NaN payloads count; a difference is reported with the
// first element that differs.
template <class T, class A, class B>
bool same_bits(const A& a, const B& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (std::memcmp(&a[i], &b[i], sizeof(T)) != 0) {
      UNSCOPED_INFO("element " << i << " differs: " << double(a[i]) << " against " << double(b[i]));
      return false;
    }
  }
  return true;
}

constexpr std::size_t kTable = 64;

// Positions inside and past the table (past-table rows are computed per thread).
std::vector<std::int64_t> some_positions(std::size_t tokens, std::mt19937_64& rng) {
  std::uniform_int_distribution<std::int64_t> any(0, 3 * kTable);
  std::vector<std::int64_t> positions(tokens);
  for (auto& p : positions) p = any(rng);
  return positions;
}

rope::Options options_for(std::size_t d, Layout layout, std::size_t rotary_dim = 0) {
  rope::Options options;
  options.head_size = d;
  options.layout = layout;
  options.max_positions = kTable;
  options.rotary_dim = rotary_dim;
  return options;
}

}  // namespace

TEMPLATE_TEST_CASE("16-bit storage: the float rotation of the widened values, rounded once",
                   "[execution][storage]", Eigen::half, Eigen::bfloat16) {
  using T = TestType;
  std::mt19937_64 rng(7);
  const std::size_t tokens = 6, heads = 5;
  for (const std::size_t d : {2U, 6U, 34U, 64U, 128U, 130U}) {
    for (const Layout layout : {Layout::interleaved, Layout::half_split}) {
      for (const Direction dir : {Direction::forward, Direction::inverse}) {
        INFO("d " << d << ", " << rope::to_string(layout)
                  << (dir == Direction::forward ? ", forward" : ", inverse"));
        const rope::Rotary<T> narrow(options_for(d, layout));
        const rope::Rotary<float> wide(options_for(d, layout));
        const std::size_t n = tokens * heads * d;
        const std::vector<T> x = rope_test::random_vector<T>(n, rng);
        std::vector<float> widened(x.begin(), x.end());
        const auto positions = some_positions(tokens, rng);

        std::vector<T> got = x;
        narrow.apply(got.data(), tokens, heads, positions.data(), dir);
        wide.apply(widened.data(), tokens, heads, positions.data(), dir);
        std::vector<T> expected(n);
        for (std::size_t i = 0; i < n; ++i) expected[i] = T(widened[i]);  // nearest even
        REQUIRE(same_bits<T>(got, expected));
      }
    }
  }
}

TEMPLATE_TEST_CASE("Execution::threads: bitwise the single-threaded result", "[execution][threads]",
                   float, double, Eigen::half) {
  using T = TestType;
  std::mt19937_64 rng(11);
  const std::size_t tokens = 37, heads = 3, d = 66;  // 37 tokens split unevenly
  const std::size_t n = tokens * heads * d;
  for (const Layout layout : {Layout::interleaved, Layout::half_split}) {
    for (const std::size_t rotary_dim : {std::size_t{0}, std::size_t{32}}) {
      const rope::Rotary<T> rot(options_for(d, layout, rotary_dim));
      const std::vector<T> x = rope_test::random_vector<T>(n, rng);
      const auto positions = some_positions(tokens, rng);
      std::vector<T> one = x;
      rot.apply(one.data(), tokens, heads, positions.data());
      std::vector<T> one_out(n, T(0));
      rot.apply(rope_test::contiguous(x.data(), tokens, heads, rot.head_size()),
                rope_test::contiguous(one_out.data(), tokens, heads, rot.head_size()),
                positions.data());
      REQUIRE(same_bits<T>(one_out, one));  // in place and out of place: the same bits

      for (const std::size_t threads : {0U, 2U, 3U, 5U, 8U, 64U}) {
        INFO(rope::to_string(layout)
             << ", rotary_dim " << rotary_dim << ", " << threads << " threads");
        Execution execution;
        execution.threads = threads;
        execution.min_bytes_per_thread = 1;  // split even this small batch
        std::vector<T> many = x;
        rot.apply(many.data(), tokens, heads, positions.data(),
                  {Direction::forward, {}, execution});
        REQUIRE(same_bits<T>(many, one));
        std::vector<T> many_out(n, T(0));
        rot.apply(rope_test::contiguous(x.data(), tokens, heads, rot.head_size()),
                  rope_test::contiguous(many_out.data(), tokens, heads, rot.head_size()),
                  positions.data(), {Direction::forward, {}, execution});
        REQUIRE(same_bits<T>(many_out, one_out));

        // q and k of different head counts, split over threads in one fused call.
        std::vector<T> q = x, k(x.begin(), x.begin() + std::ptrdiff_t(tokens * d));
        std::vector<T> q_one = q, k_one = k;
        rot.apply_qk(View<T>::contiguous(q_one.data(), tokens, heads, d),
                     View<T>::contiguous(k_one.data(), tokens, 1, d), positions.data());
        rot.apply_qk(View<T>::contiguous(q.data(), tokens, heads, d),
                     View<T>::contiguous(k.data(), tokens, 1, d), positions.data(),
                     {Direction::forward, {}, execution});
        REQUIRE(same_bits<T>(q, q_one));
        REQUIRE(same_bits<T>(k, k_one));
      }
    }
  }
}

TEST_CASE("Execution::threads: small work stays on fewer threads", "[execution][threads]") {
  // Observable through the split only by its result; what is tested here is the count rule.
  Execution execution;
  execution.threads = 8;
  execution.min_bytes_per_thread = 1000;
  CHECK(rope::detail::thread_count(execution, 1, 1'000'000) == 1);    // one token
  CHECK(rope::detail::thread_count(execution, 100, 999) == 1);        // too little work
  CHECK(rope::detail::thread_count(execution, 100, 3'500) == 3);      // 3 threads' worth
  CHECK(rope::detail::thread_count(execution, 100, 1'000'000) == 8);  // as asked
  execution.threads = 1;
  CHECK(rope::detail::thread_count(execution, 100, 1'000'000) == 1);
  // 0: one per hardware thread, as the standard library counts them.
  execution.threads = 0;
  const std::size_t hardware = std::max(1U, std::thread::hardware_concurrency());
  CHECK(rope::detail::hardware_threads() == hardware);
  CHECK(rope::detail::thread_count(execution, 1000, 1'000'000) ==
        std::min<std::size_t>(hardware, 1000));
}

TEMPLATE_TEST_CASE("TokenRange: disjoint ranges compose to the whole batch", "[execution][range]",
                   float, Eigen::bfloat16) {
  using T = TestType;
  std::mt19937_64 rng(13);
  const std::size_t tokens = 10, heads = 2, d = 8, n = tokens * heads * d;
  const rope::Rotary<T> rot(options_for(d, Layout::interleaved));
  const std::vector<T> x = rope_test::random_vector<T>(n, rng);
  const auto positions = some_positions(tokens, rng);
  const auto src = View<const T>::contiguous(x.data(), tokens, heads, d);

  std::vector<T> whole(n, T(0));
  rot.apply(src, View<T>::contiguous(whole.data(), tokens, heads, d), positions.data());

  std::vector<T> pieces(n, T(0));
  const auto dst = View<T>::contiguous(pieces.data(), tokens, heads, d);
  rot.apply(src, dst, positions.data(), TokenRange{4, 10});
  for (std::size_t i = 0; i < 4 * heads * d; ++i) REQUIRE(pieces[i] == T(0));  // not yet written
  rot.apply(src, dst, positions.data(), TokenRange{0, 4});
  rot.apply(src, dst, positions.data(), TokenRange{7, 7});  // empty: nothing to do
  REQUIRE(same_bits<T>(pieces, whole));

  // In place over ranges, through apply_qk.
  std::vector<T> q = x, k = x;
  const auto qv = View<T>::contiguous(q.data(), tokens, heads, d);
  const auto kv = View<T>::contiguous(k.data(), tokens, heads, d);
  rot.apply_qk(qv, kv, positions.data(), TokenRange{0, 3});
  rot.apply_qk(qv, kv, positions.data(), TokenRange{3, 10});
  REQUIRE(same_bits<T>(q, whole));
  REQUIRE(same_bits<T>(k, whole));

  // Only the range's positions are read: a bad position outside the range is not an error.
  std::vector<std::int64_t> partly_bad = positions;
  partly_bad[9] = -1;
  REQUIRE_NOTHROW(rot.apply(src, dst, partly_bad.data(), TokenRange{0, 9}));
  REQUIRE_THROWS_AS(rot.apply(src, dst, partly_bad.data(), TokenRange{0, 10}), std::out_of_range);

  using Catch::Matchers::Contains;
  REQUIRE_THROWS_AS(rot.apply(src, dst, positions.data(), TokenRange{3, 11}), std::out_of_range);
  REQUIRE_THROWS_WITH(rot.apply(src, dst, positions.data(), TokenRange{3, 11}),
                      Contains("[3, 11)") && Contains("10 tokens"));
  REQUIRE_THROWS_AS(rot.apply(src, dst, positions.data(), TokenRange{5, 4}), std::out_of_range);
  REQUIRE_THROWS_WITH(rot.apply(src, dst, positions.data(), TokenRange{5, 4}), Contains("[5, 4)"));
  REQUIRE_THROWS_AS(rot.apply_qk(qv, kv, positions.data(), TokenRange{0, 12}), std::out_of_range);
  REQUIRE_THROWS_WITH(rot.apply_qk(qv, kv, positions.data(), TokenRange{0, 12}),
                      Contains("[0, 12)"));
}

TEMPLATE_TEST_CASE("Execution::streaming_stores: bitwise the ordinary-store result",
                   "[execution][streaming]", float, double, Eigen::half, Eigen::bfloat16) {
  using T = TestType;
  std::mt19937_64 rng(17);
  const std::size_t tokens = 9, heads = 3;
  Execution streaming;
  streaming.streaming_stores = true;
  for (const std::size_t d : {6U, 64U, 128U, 130U}) {
    for (const Layout layout : {Layout::interleaved, Layout::half_split}) {
      for (const std::size_t rotary_dim : {std::size_t{0}, std::size_t{4}}) {
        INFO("d " << d << ", " << rope::to_string(layout) << ", rotary_dim " << rotary_dim);
        const rope::Rotary<T> rot(options_for(d, layout, rotary_dim));
        const std::size_t n = tokens * heads * d;
        const Buffer<T> x = [&] {
          const auto v = rope_test::random_vector<T>(n, rng);
          return Buffer<T>(v.begin(), v.end());
        }();
        const auto positions = some_positions(tokens, rng);
        for (const Direction dir : {Direction::forward, Direction::inverse}) {
          Buffer<T> ordinary(n, T(0)), streamed(n, T(0));  // 64-byte aligned on every target
          rot.apply(rope_test::contiguous(x.data(), tokens, heads, rot.head_size()),
                    rope_test::contiguous(ordinary.data(), tokens, heads, rot.head_size()),
                    positions.data(), dir);
          rot.apply(rope_test::contiguous(x.data(), tokens, heads, rot.head_size()),
                    rope_test::contiguous(streamed.data(), tokens, heads, rot.head_size()),
                    positions.data(), {dir, {}, streaming});
          REQUIRE(same_bits<T>(streamed, ordinary));
        }
      }
    }
  }
}

TEMPLATE_TEST_CASE("Alignment: every offset of src and dst gives the same bits",
                   "[execution][alignment]", float, double, Eigen::half, Eigen::bfloat16) {
  using T = TestType;
  std::mt19937_64 rng(19);
  const std::size_t tokens = 3, heads = 2;
  for (const std::size_t d : {6U, 128U, 130U}) {
    for (const Layout layout : {Layout::interleaved, Layout::half_split}) {
      INFO("d " << d << ", " << rope::to_string(layout));
      const rope::Rotary<T> rot(options_for(d, layout));
      const std::size_t n = tokens * heads * d;
      const std::vector<T> x = rope_test::random_vector<T>(n, rng);
      const auto positions = some_positions(tokens, rng);
      std::vector<T> expected = x;
      rot.apply(expected.data(), tokens, heads, positions.data());
      // 64 bytes of offsets: every alignment a register of any target can have.
      for (std::size_t offset = 0; offset < 64 / sizeof(T); ++offset) {
        INFO("offset " << offset << " elements");
        Buffer<T> in(n + offset), out(n + offset);
        std::copy(x.begin(), x.end(), in.begin() + std::ptrdiff_t(offset));
        rot.apply(rope_test::contiguous(in.data() + offset, tokens, heads, rot.head_size()),
                  rope_test::contiguous(out.data() + offset, tokens, heads, rot.head_size()),
                  positions.data());
        rot.apply(in.data() + offset, tokens, heads, positions.data());
        REQUIRE(std::equal(expected.begin(), expected.end(), in.begin() + std::ptrdiff_t(offset),
                           [](T a, T b) { return std::memcmp(&a, &b, sizeof(T)) == 0; }));
        REQUIRE(std::equal(expected.begin(), expected.end(), out.begin() + std::ptrdiff_t(offset),
                           [](T a, T b) { return std::memcmp(&a, &b, sizeof(T)) == 0; }));
      }
    }
  }
}
