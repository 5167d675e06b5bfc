// Positions past the table: their rows are computed on the fly, the same way as the table's, so
// the results are the same to the last bit and equally accurate at any position up to 2^31 − 1.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

#include <catch2/catch.hpp>

#include <rope/rope.hpp>

#include "support.hpp"

TEMPLATE_TEST_CASE("Rotary: a position past the table gets the row the table would hold",
                   "[beyond]", float, double) {
  using T = TestType;
  std::mt19937_64 rng(900 + sizeof(T));
  for (const rope::Layout layout : {rope::Layout::interleaved, rope::Layout::half_split}) {
    INFO(rope::to_string(layout));
    rope::Options options{96, 500000.0, layout, 4096};
    options.scaling = rope::Yarn{8.0, 2048};  // an attention factor ≠ 1 must reach both paths
    const rope::Rotary<T, 96> large(options);
    options.max_positions = 16;
    const rope::Rotary<T, 96> small(options);
    const std::size_t tokens = 6, heads = 2, n = tokens * heads * 96;
    const std::vector<std::int64_t> positions = {0, 15, 16, 17, 1000, 4095};
    const std::vector<T> input = rope_test::random_vector<T>(n, rng);
    std::vector<T> from_table = input, computed = input;
    large.apply(from_table.data(), tokens, heads, positions.data());
    small.apply(computed.data(), tokens, heads, positions.data());
    REQUIRE(computed == from_table);
  }
}

TEMPLATE_TEST_CASE("Rotary: positions up to 2^31 - 1 match the float64 reference", "[beyond]",
                   float, double) {
  using T = TestType;
  std::mt19937_64 rng(901 + sizeof(T));
  const std::vector<std::int64_t> positions = {0,       1,        65535,     65536,
                                               1000000, 16777215, 1LL << 30, 2147483647};
  for (const rope::Layout layout : {rope::Layout::interleaved, rope::Layout::half_split}) {
    INFO(rope::to_string(layout));
    const rope::Rotary<T> rot({128, 10000.0, layout, 64});
    const std::size_t tokens = positions.size(), heads = 2, n = tokens * heads * 128;
    const std::vector<T> input = rope_test::random_vector<T>(n, rng);
    for (const rope::Direction dir : {rope::Direction::forward, rope::Direction::inverse}) {
      std::vector<T> x = input;
      rot.apply(x.data(), tokens, heads, positions.data(), dir);
      rope_test::require_rotation_of<T>(
          rope::View<const T>::contiguous(input.data(), tokens, heads, 128),
          rope::View<const T>::contiguous(x.data(), tokens, heads, 128), 128, layout, positions,
          dir);
    }
  }
}
