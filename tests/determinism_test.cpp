// Determinism (docs/errors.md): one batch through every entry point and memory arrangement gives
// the same bits. tests/execution_test.cpp covers alignment, threads, token ranges and streaming
// stores one by one; here all the ways of passing the same heads are compared with each other.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include <Eigen/Core>
#include <catch2/catch.hpp>

#include <rope/rope.hpp>

#include "support.hpp"

namespace {

using rope::Direction;
using rope::Layout;
using rope::View;

// Copies a contiguous [tokens][heads][d] batch into a view of any strides, and back.
template <class T>
void scatter(const std::vector<T>& from, const View<T>& to, std::size_t d) {
  for (std::size_t t = 0; t < to.tokens(); ++t)
    for (std::size_t h = 0; h < to.heads(); ++h)
      std::memcpy(to.head(t, h), from.data() + (t * to.heads() + h) * d, d * sizeof(T));
}

template <class T>
std::vector<T> gather(const View<T>& from, std::size_t d) {
  std::vector<T> to(from.tokens() * from.heads() * d);
  for (std::size_t t = 0; t < from.tokens(); ++t)
    for (std::size_t h = 0; h < from.heads(); ++h)
      std::memcpy(to.data() + (t * from.heads() + h) * d, from.head(t, h), d * sizeof(T));
  return to;
}

using rope_test::same_bits;

}  // namespace

TEMPLATE_TEST_CASE(
    "Determinism: every entry point and arrangement of the same heads gives the "
    "same bits",
    "[determinism]", float, double, Eigen::half, Eigen::bfloat16) {
  using T = TestType;
  std::mt19937_64 rng(5);
  const std::size_t tokens = 19, heads = 3;
  for (const std::size_t d : {std::size_t{64}, std::size_t{70}}) {
    for (const Layout layout : {Layout::interleaved, Layout::half_split}) {
      for (const std::size_t rotary_dim : {std::size_t{0}, std::size_t{32}}) {
        INFO("d " << d << ", " << rope::to_string(layout) << ", rotary_dim " << rotary_dim);
        rope::Options options{d, 10000.0, layout, 32};
        options.rotary_dim = rotary_dim;
        const rope::Rotary<T> rot(options);
        const std::size_t n = tokens * heads * d;
        const std::vector<T> input = rope_test::random_vector<T>(n, rng);
        std::vector<std::int64_t> positions(tokens);
        std::uniform_int_distribution<std::int64_t> any(0, 100);  // in and past the table
        for (auto& p : positions) p = any(rng);
        const std::vector<std::int32_t> positions32(positions.begin(), positions.end());
        for (const Direction dir : {Direction::forward, Direction::inverse}) {
          std::vector<T> expected = input;
          rot.apply(expected.data(), tokens, heads, positions.data(), dir);

          std::vector<T> out(n);
          rot.apply(rope_test::contiguous(input.data(), tokens, heads, rot.head_size()),
                    rope_test::contiguous(out.data(), tokens, heads, rot.head_size()),
                    positions32.data(), dir);
          CHECK(same_bits(out, expected));

          // [heads][tokens][d] with padding, in place and out of place, at odd offsets
          const std::size_t token_stride = d + 3, head_stride = tokens * token_stride + 5;
          std::vector<T> padded(heads * head_stride + 1), padded_out(heads * head_stride + 2);
          const View<T> strided(padded.data() + 1, tokens, heads, token_stride, head_stride);
          const View<T> strided_out(padded_out.data() + 2, tokens, heads, token_stride,
                                    head_stride);
          scatter(input, strided, d);
          rot.apply(View<const T>(strided), strided_out, positions.data(), dir);
          CHECK(same_bits(gather(strided_out, d), expected));
          rot.apply(strided, positions.data(), dir);
          CHECK(same_bits(gather(strided, d), expected));

          // q of a fused [tokens][q | k] buffer through apply_qk, on 3 threads
          const std::size_t row = (heads + 1) * d;
          std::vector<T> fused(tokens * row);
          const View<T> q(fused.data(), tokens, heads, row, d);
          const View<T> k(fused.data() + heads * d, tokens, 1, row, d);
          scatter(input, q, d);
          rope::Execution three;
          three.threads = 3;
          three.min_bytes_per_thread = 1;
          rot.apply_qk(q, k, positions.data(), {dir, {}, three});
          CHECK(same_bits(gather(q, d), expected));

          // token ranges, unchecked, and one head at a time
          std::vector<T> pieces(n);
          const auto src = View<const T>::contiguous(input.data(), tokens, heads, d);
          const auto dst = View<T>::contiguous(pieces.data(), tokens, heads, d);
          rot.apply(src, dst, positions.data(), {dir, rope::TokenRange{0, 7}});
          rot.apply(rope::unchecked, src, dst, positions.data(),
                    {dir, rope::TokenRange{7, tokens}});
          CHECK(same_bits(pieces, expected));
          using Vector = Eigen::Matrix<T, Eigen::Dynamic, 1>;
          std::vector<T> heads_one_by_one(n);
          for (std::size_t t = 0; t < tokens; ++t) {
            for (std::size_t h = 0; h < heads; ++h) {
              const std::size_t at = (t * heads + h) * d;
              const Vector head = Eigen::Map<const Vector>(input.data() + at, Eigen::Index(d));
              Eigen::Map<Vector>(heads_one_by_one.data() + at, Eigen::Index(d)) =
                  rot.rotated(head, positions[t], dir);
            }
          }
          CHECK(same_bits(heads_one_by_one, expected));
        }
      }
    }
  }
}

TEMPLATE_TEST_CASE("Determinism: the bits do not depend on where src and dst lie", "[determinism]",
                   float, double, Eigen::half) {
  // Head sizes whose last pairs fill no whole register, for every x86 width: those pairs once
  // went through a scalar loop that the compiler vectorised behind a run-time alias check, with
  // a·c − b·s contracted into FMAs differently in the two versions (GCC's default
  // -ffp-contract=fast), so their bits depended on the distance between src and dst.
  using T = TestType;
  std::mt19937_64 rng(21);
  for (const std::size_t d : {std::size_t{6}, std::size_t{8}, std::size_t{34}, std::size_t{130}}) {
    for (const Layout layout : {Layout::interleaved, Layout::half_split}) {
      INFO("head size " << d << ", " << rope::to_string(layout));
      rope::Options options;
      options.head_size = d;
      options.layout = layout;
      const rope::Rotary<T> rot(options);
      const std::size_t tokens = 3, heads = 2, n = tokens * heads * d;
      const std::vector<T> x = rope_test::random_vector<T>(n, rng);
      const std::int64_t positions[tokens] = {3, 1000, 77};
      std::vector<T> reference(n);
      rot.apply(View<const T>::contiguous(x.data(), tokens, heads, d),
                View<T>::contiguous(reference.data(), tokens, heads, d), positions);
      // One buffer, src at its start and dst right after it, then further away, at every
      // element offset.
      std::vector<T> buffer(4 * n + 64);  // dst ends at most at n + (2n + 31) + n
      for (std::size_t gap = 0; gap < 2 * n + 32; gap += 7) {
        std::copy(x.begin(), x.end(), buffer.begin());
        T* dst = buffer.data() + n + gap;
        rot.apply(View<const T>::contiguous(buffer.data(), tokens, heads, d),
                  View<T>::contiguous(dst, tokens, heads, d), positions);
        INFO("dst " << gap << " elements after src");
        REQUIRE(std::memcmp(dst, reference.data(), n * sizeof(T)) == 0);
      }
      // In place, at every element offset.
      for (std::size_t offset = 0; offset < 16; ++offset) {
        std::copy(x.begin(), x.end(), buffer.begin() + long(offset));
        rot.apply(buffer.data() + offset, tokens, heads, positions);
        INFO("in place at element offset " << offset);
        REQUIRE(std::memcmp(buffer.data() + offset, reference.data(), n * sizeof(T)) == 0);
      }
    }
  }
}

TEMPLATE_TEST_CASE(
    "Determinism: a call large enough to take each head in one pass gives the bits of its tokens "
    "called one at a time",
    "[determinism]", float, double, Eigen::half, Eigen::bfloat16) {
  // Calls of more than kOnePassBytes rotate each head in one pass where twice the registers that
  // hold the row cover it (targets of 16 registers: heads of 128 in float with AVX2), calls of
  // more than kMemoryBytes half_split float in registers of half the width and interleaved heads
  // of 256 (float) or 128 (double) in one pass instead of two (AVX-512); smaller calls in passes
  // of what fits. Heads of 128 (one pass there), 256 (two passes either way) and 72 (an
  // overlapping last register), at a fixed and a run-time head size. Just past each threshold
  // (for kMemoryBytes, float and double: the types whose passes it changes).
  using T = TestType;
  std::mt19937_64 rng(8);
  const std::size_t heads = 8;
  std::vector<std::size_t> thresholds = {rope::detail::kOnePassBytes};
  if (std::is_same_v<T, float> || std::is_same_v<T, double>) {
    thresholds.push_back(rope::detail::kMemoryBytes);
  }
  for (const std::size_t threshold : thresholds) {
    for (const std::size_t d : {std::size_t{72}, std::size_t{128}, std::size_t{256}}) {
      const std::size_t tokens = threshold / (2 * heads * d * sizeof(T)) + 1;
      const std::size_t n = tokens * heads * d;
      REQUIRE(2 * n * sizeof(T) > threshold);  // the large call is past the threshold
      REQUIRE(2 * (n - heads * d) * sizeof(T) <= threshold);  // one token fewer is not
      const std::vector<T> x = rope_test::random_vector<T>(n, rng);
      std::vector<std::int64_t> positions(tokens);
      for (std::size_t t = 0; t < tokens; ++t) positions[t] = std::int64_t((t * 7) % tokens);
      for (const Layout layout : {Layout::interleaved, Layout::half_split}) {
        const rope::Rotary<T> rot(rope::Options{d, 10000.0, layout, tokens});
        const rope::Rotary<T, 128> fixed(rope::Options{128, 10000.0, layout, tokens});
        for (const Direction direction : {Direction::forward, Direction::inverse}) {
          INFO("head size " << d << ", " << rope::to_string(layout) << ", "
                            << (direction == Direction::inverse ? "inverse" : "forward"));
          // One token at a time, out of place: the reference.
          std::vector<T> reference(n);
          for (std::size_t t = 0; t < tokens; ++t) {
            rot.apply(View<const T>::contiguous(x.data() + t * heads * d, 1, heads, d),
                      View<T>::contiguous(reference.data() + t * heads * d, 1, heads, d),
                      &positions[t], direction);
          }
          // The whole call, out of place and in place.
          std::vector<T> out(n), in_place = x;
          rot.apply(View<const T>::contiguous(x.data(), tokens, heads, d),
                    View<T>::contiguous(out.data(), tokens, heads, d), positions.data(), direction);
          rot.apply(View<T>::contiguous(in_place.data(), tokens, heads, d), positions.data(),
                    direction);
          REQUIRE(same_bits(out, reference));
          REQUIRE(same_bits(in_place, reference));
          if (d == 128) {  // the head size known at compile time
            std::vector<T> fixed_out = x;
            fixed.apply(fixed_out.data(), tokens, heads, positions.data(), direction);
            REQUIRE(same_bits(fixed_out, reference));
          }
        }
      }
    }
  }
}
