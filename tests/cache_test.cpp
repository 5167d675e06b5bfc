// CachedRotary: rotation with caller-supplied cos/sin caches (ONNX RotaryEmbedding, opset 23),
// against a float64 implementation of the operator written here. The caches hold random values,
// as in ONNX's own conformance tests: nothing may normalise them.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <Eigen/Core>
#include <catch2/catch.hpp>

#include <rope/cache.hpp>  // the deprecated header, still forwarding
#include <rope/rope.hpp>

#include "support.hpp"

namespace {

using rope::Layout;

// The operator on one head: pair j of the rotated slice takes cos[row][j], sin[row][j];
// the inverse negates sin. Returns the head in double.
std::vector<double> onnx_head(const std::vector<double>& x, std::size_t offset, std::size_t rotary,
                              Layout layout, const double* cos, const double* sin, bool inverse) {
  std::vector<double> y = x;
  const std::size_t h = rotary / 2;
  for (std::size_t j = 0; j < h; ++j) {
    const std::size_t a = offset + (layout == Layout::interleaved ? 2 * j : j);
    const std::size_t b = offset + (layout == Layout::interleaved ? 2 * j + 1 : h + j);
    const double c = cos[j], s = inverse ? -sin[j] : sin[j];
    y[a] = x[a] * c - x[b] * s;
    y[b] = x[b] * c + x[a] * s;
  }
  return y;
}

// Checks `got` (tokens × heads views) against the operator, token t using cache row rows[t];
// each rotated coordinate within (γ_2(T) + γ_2(double))·(|a·c| + |b·s|): two products and a sum
// rounded on each side, the cache values exact in both.
template <class T>
void require_onnx(rope::View<const T> in, rope::View<const T> got, std::size_t d,
                  std::size_t offset, std::size_t rotary, Layout layout, const std::vector<T>& cos,
                  const std::vector<T>& sin, const std::vector<std::int64_t>& rows, bool inverse) {
  const std::size_t h = rotary / 2;
  double worst = 0;
  for (std::size_t t = 0; t < in.tokens(); ++t) {
    std::vector<double> c(h), s(h);
    for (std::size_t j = 0; j < h; ++j) {
      c[j] = double(cos[std::size_t(rows[t]) * h + j]);
      s[j] = double(sin[std::size_t(rows[t]) * h + j]);
    }
    for (std::size_t k = 0; k < in.heads(); ++k) {
      const std::vector<double> x(in.head(t, k), in.head(t, k) + d);
      const std::vector<double> y =
          onnx_head(x, offset, rotary, layout, c.data(), s.data(), inverse);
      for (std::size_t i = 0; i < d; ++i) {
        double bound = 0;
        if (i >= offset && i < offset + rotary) {
          const std::size_t p = offset + rope_test::partner(i - offset, rotary, layout);
          const std::size_t j = layout == Layout::interleaved ? (i - offset) / 2 : (i - offset) % h;
          bound = (rope_test::gamma<T>(2) + rope_test::gamma<double>(2)) *
                  (std::abs(x[i] * c[j]) + std::abs(x[p] * s[j]));
        }
        const double error = std::abs(double(got.head(t, k)[i]) - y[i]);
        INFO("token " << t << " head " << k << " coordinate " << i);
        if (bound == 0) REQUIRE(error == 0);
        worst = std::max(worst, bound > 0 ? error / bound : 0.0);
      }
    }
  }
  REQUIRE(worst <= 1.0);
}

}  // namespace

TEMPLATE_TEST_CASE("CachedRotary: ONNX RotaryEmbedding with random caches", "[cache]", float,
                   double) {
  using T = TestType;
  std::mt19937_64 rng(700 + sizeof(T));
  const std::size_t batch = 2, seq = 3, heads = 2, d = 32, max_rows = 50;
  for (const Layout layout : {Layout::interleaved, Layout::half_split}) {
    for (const std::size_t rotary : {std::size_t{32}, std::size_t{16}}) {
      INFO(rope::to_string(layout) << ", rotary_dim " << rotary);
      const rope::CachedRotary<T> rot({d, layout, rotary, 0});
      const std::vector<T> cos = rope_test::random_vector<T>(max_rows * rotary / 2, rng);
      const std::vector<T> sin = rope_test::random_vector<T>(max_rows * rotary / 2, rng);
      const rope::CosSinCache<T> cache{cos.data(), sin.data(), max_rows};
      const std::vector<std::int64_t> ids = {0, 7, 49, 3, 3, 12};  // position_ids [batch][seq]
      const std::vector<T> input = rope_test::random_vector<T>(batch * seq * heads * d, rng);
      for (const bool inverse : {false, true}) {
        const auto dir = inverse ? rope::Direction::inverse : rope::Direction::forward;
        {
          INFO("[batch, seq, heads*d] with position_ids: one view of batch*seq tokens");
          std::vector<T> x = input;
          rot.apply(x.data(), batch * seq, heads, ids.data(), cache, dir);
          require_onnx<T>(rope::View<const T>::contiguous(input.data(), batch * seq, heads, d),
                          rope::View<const T>::contiguous(x.data(), batch * seq, heads, d), d, 0,
                          rotary, layout, cos, sin, ids, inverse);
        }
        {
          INFO("[batch, heads, seq, d] with position_ids: one view per batch element");
          std::vector<T> y(input.size(), T(-3));
          for (std::size_t b = 0; b < batch; ++b) {
            const std::size_t at = b * heads * seq * d;
            const rope::View<const T> in(input.data() + at, seq, heads, d, seq * d);
            const rope::View<T> out(y.data() + at, seq, heads, d, seq * d);
            rot.apply(in, out, ids.data() + b * seq, cache, dir);
            const std::vector<std::int64_t> rows(ids.begin() + std::ptrdiff_t(b * seq),
                                                 ids.begin() + std::ptrdiff_t((b + 1) * seq));
            require_onnx<T>(in, rope::View<const T>(out), d, 0, rotary, layout, cos, sin, rows,
                            inverse);
          }
        }
        {
          INFO("no position_ids: the cache has one row per token");
          std::vector<T> x = input;
          rot.apply(x.data(), batch * seq, heads, rope::Positions::consecutive(0), cache, dir);
          require_onnx<T>(rope::View<const T>::contiguous(input.data(), batch * seq, heads, d),
                          rope::View<const T>::contiguous(x.data(), batch * seq, heads, d), d, 0,
                          rotary, layout, cos, sin, {0, 1, 2, 3, 4, 5}, inverse);
        }
      }
    }
  }
}

TEST_CASE("CachedRotary: HuggingFace's duplicated rows give the same result as half rows",
          "[cache]") {
  std::mt19937_64 rng(710);
  const std::size_t d = 16, h = 8, rows = 5;
  const std::vector<float> cos = rope_test::random_vector<float>(rows * h, rng);
  const std::vector<float> sin = rope_test::random_vector<float>(rows * h, rng);
  std::vector<float> cos_cat, sin_cat, cos_rep, sin_rep;  // [c | c] and [c0 c0 c1 c1 ..]
  for (std::size_t r = 0; r < rows; ++r) {
    for (int copy = 0; copy < 2; ++copy) {
      for (std::size_t j = 0; j < h; ++j) {
        cos_cat.push_back(cos[r * h + j]);
        sin_cat.push_back(sin[r * h + j]);
      }
    }
    for (std::size_t j = 0; j < h; ++j) {
      for (int copy = 0; copy < 2; ++copy) {
        cos_rep.push_back(cos[r * h + j]);
        sin_rep.push_back(sin[r * h + j]);
      }
    }
  }
  const std::vector<float> input = rope_test::random_vector<float>(4 * 3 * d, rng);
  const std::int64_t ids[] = {4, 0, 2, 2};
  for (const Layout layout : {Layout::interleaved, Layout::half_split}) {
    const rope::CachedRotary<float> rot({d, layout, 0, 0});
    std::vector<float> half = input, cat = input, rep = input;
    rot.apply(half.data(), 4, 3, ids, {cos.data(), sin.data(), rows});
    rot.apply(cat.data(), 4, 3, ids,
              {cos_cat.data(), sin_cat.data(), rows, rope::CosSinRow::concatenated});
    rot.apply(rep.data(), 4, 3, ids,
              {cos_rep.data(), sin_rep.data(), rows, rope::CosSinRow::repeated});
    REQUIRE(cat == half);  // the same values reach the same kernel
    REQUIRE(rep == half);
    REQUIRE(half != input);
  }
}

namespace {

// A Rotary's own table as a caller's cache, in ONNX's half format: cos[m][j], sin[m][j].
template <class C>
struct TableCache {
  std::vector<C> cos, sin;
  std::size_t rows;
  template <class R>
  explicit TableCache(const R& rot) : rows(rot.max_positions()) {
    const std::size_t h = rot.rotary_dim() / 2;
    for (std::size_t m = 0; m < rows; ++m) {
      for (std::size_t j = 0; j < h; ++j) {
        cos.push_back(rot.table().cos(m, j));
        sin.push_back(rot.table().sin(m, j));
      }
    }
  }
  rope::CosSinCache<C> cache() const { return {cos.data(), sin.data(), rows}; }
};

}  // namespace

TEMPLATE_TEST_CASE(
    "CachedRotary: a Rotary's table as the cache gives the Rotary's bits through "
    "every capability",
    "[cache]", float, double) {
  using T = TestType;
  constexpr std::size_t d = 64, tokens = 9, hq = 4, hk = 2, rows = 32;
  std::mt19937_64 rng(31);
  const std::vector<std::int64_t> positions = {0, 31, 5, 7, 7, 1, 30, 2, 3};
  // One axis; M-RoPE sections; two blocks whose half_split pairs stay inside them (Gemma 4's
  // vision encoder's pairing).
  const std::pair<const char*, rope::Axes> maps[] = {
      {"one axis", rope::Axes()},
      {"M-RoPE sections {8, 12, 12}", rope::Axes::sections({8, 12, 12})},
      {"axial, pairs within blocks", rope::Axes::axial().with_pairs_within_blocks()}};
  for (const Layout layout : {Layout::interleaved, Layout::half_split}) {
    for (const auto& [map_name, axes] : maps) {
      INFO(rope::to_string(layout) << ", " << map_name);
      rope::Options options;
      options.head_size = d;
      options.layout = layout;
      options.max_positions = rows;
      rope::CosSinOptions cache_options{d, layout, 0, 0};
      options.axes = cache_options.axes = axes;
      const rope::Rotary<T> rot(options);
      const rope::CachedRotary<T> cached(cache_options);
      const TableCache<T> table(rot);
      // Several coordinates per token for a multi-axis map (the last token's differ), else one.
      const std::size_t count = axes.count();
      std::vector<std::int64_t> coordinates;
      for (std::size_t t = 0; t < tokens; ++t) {
        for (std::size_t a = 0; a < count; ++a) {
          coordinates.push_back(positions[t] + std::int64_t(t + 1 == tokens ? a : 0));
        }
      }
      const rope::Positions at = count > 1 ? rope::Positions::token_major(coordinates.data(), count)
                                           : rope::Positions(coordinates.data());
      const std::vector<T> q0 = rope_test::random_vector<T>(tokens * hq * d, rng);
      const std::vector<T> k0 = rope_test::random_vector<T>(tokens * hk * d, rng);
      const auto q_view = [&](std::vector<T>& v) {
        return rope::View<T>::contiguous(v.data(), tokens, hq, d);
      };
      const auto k_view = [&](std::vector<T>& v) {
        return rope::View<T>::contiguous(v.data(), tokens, hk, d);
      };
      for (const rope::Direction dir : {rope::Direction::forward, rope::Direction::inverse}) {
        std::vector<T> q1 = q0, k1 = k0;
        rot.apply_qk(q_view(q1), k_view(k1), at, dir);
        {
          INFO("apply_qk");
          std::vector<T> q2 = q0, k2 = k0;
          cached.apply_qk(q_view(q2), k_view(k2), at, table.cache(), dir);
          REQUIRE(q2 == q1);
          REQUIRE(k2 == k1);
        }
        {
          INFO("apply out of place, 2 threads, in two token ranges, checked and unchecked");
          std::vector<T> out(q0.size());
          rope::Execution two;
          two.threads = 2;
          two.min_bytes_per_thread = 1;
          const auto src = rope::View<const T>::contiguous(q0.data(), tokens, hq, d);
          cached.apply(src, q_view(out), at, table.cache(), {dir, rope::TokenRange{0, 4}, two});
          cached.apply(rope::unchecked, src, q_view(out), at, table.cache(),
                       {dir, rope::TokenRange{4, tokens}, two});
          REQUIRE(out == q1);
        }
        {
          INFO("streaming stores");
          rope_test::LineAligned<T> out(q0.size());
          rope::Execution streaming;
          streaming.streaming_stores = true;
          cached.apply(rope::View<const T>::contiguous(q0.data(), tokens, hq, d),
                       rope::View<T>::contiguous(out.data(), tokens, hq, d), at, table.cache(),
                       {dir, {}, streaming});
          REQUIRE(std::equal(out.begin(), out.end(), q1.begin()));
        }
      }
    }
  }
}

TEMPLATE_TEST_CASE("CachedRotary: 16-bit heads and caches, computed in float and rounded once",
                   "[cache]", Eigen::half, Eigen::bfloat16) {
  using T = TestType;
  constexpr std::size_t d = 34, tokens = 5, heads = 3, rows = 7;  // 17 pairs: a remainder
  std::mt19937_64 rng(37);
  const std::vector<T> cos = rope_test::random_vector<T>(rows * d / 2, rng);
  const std::vector<T> sin = rope_test::random_vector<T>(rows * d / 2, rng);
  const std::vector<T> x0 = rope_test::random_vector<T>(tokens * heads * d, rng);
  const std::vector<std::int64_t> ids = {6, 0, 3, 3, 1};
  for (const Layout layout : {Layout::interleaved, Layout::half_split}) {
    INFO(rope::to_string(layout));
    const rope::CachedRotary<T> rot({d, layout, 0, 0});
    std::vector<T> x = x0;
    rot.apply(x.data(), tokens, heads, ids.data(), {cos.data(), sin.data(), rows});
    // a·c − b·s in float from exactly widened values: two products and a sum, γ_2(float)·
    // (|a·c| + |b·s|); then one rounding to T, u(T)·|y|, or half the subnormal spacing.
    for (std::size_t t = 0; t < tokens; ++t) {
      std::vector<double> c(d / 2), s(d / 2);
      for (std::size_t j = 0; j < d / 2; ++j) {
        c[j] = double(cos[std::size_t(ids[t]) * d / 2 + j]);
        s[j] = double(sin[std::size_t(ids[t]) * d / 2 + j]);
      }
      for (std::size_t h = 0; h < heads; ++h) {
        const std::size_t base = (t * heads + h) * d;
        const std::vector<double> in(x0.begin() + long(base), x0.begin() + long(base + d));
        const std::vector<double> want = onnx_head(in, 0, d, layout, c.data(), s.data(), false);
        for (std::size_t i = 0; i < d; ++i) {
          const std::size_t j = layout == Layout::interleaved ? i / 2 : i % (d / 2);
          const std::size_t p = rope_test::partner(i, d, layout);
          const double terms = std::abs(in[i] * c[j]) + std::abs(in[p] * s[j]);
          const double bound = rope_test::gamma<float>(2) * terms +
                               rope_test::unit_roundoff<T> * std::abs(want[i]) +
                               0.5 * double(std::numeric_limits<T>::denorm_min());
          INFO("token " << t << " head " << h << " coordinate " << i);
          REQUIRE(std::abs(double(x[base + i]) - want[i]) <= bound);
        }
      }
    }
  }
}

// The names before the rename, kept for one release: deprecated, and the same types.
#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#endif
TEST_CASE("CachedRotary: the deprecated names are the renamed types", "[cache]") {
  STATIC_REQUIRE(std::is_same_v<rope::Cache<float>, rope::CosSinCache<float>>);
  STATIC_REQUIRE(std::is_same_v<rope::CacheRow, rope::CosSinRow>);
  STATIC_REQUIRE(std::is_same_v<rope::CacheOptions, rope::CosSinOptions>);
  const rope::CacheOptions options{4, Layout::half_split, 0, 0};
  const rope::CachedRotary<float> rot(options);
  const float cos[] = {0.0f, 1.0f}, sin[] = {1.0f, 0.0f};
  std::vector<float> x = {1, 2, 3, 4};
  rot.apply(x.data(), 1, 1, rope::Positions::consecutive(0),
            rope::Cache<float>{cos, sin, 1, rope::CacheRow::half});
  REQUIRE(x == std::vector<float>{-3, 2, 1, 4});  // pair (1, 3) by 90°, pair (2, 4) by 0°
}
#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif
