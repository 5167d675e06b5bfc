// Fractional positions (a Positions of doubles): every entry point that takes Positions, one
// coordinate per token or several, against the float64 reference of the formula (angle x·θ_j,
// x not an integer), and LTX-Video's RoPE against a float64 transcription of diffusers'
// LTXVideoRotaryPosEmbed and apply_rotary_emb on a realistic latent grid:
//
//  - coordinates: for frame f, row h, column w, g = (f·s_0·p_t/20, h·s_1·p/2048, w·s_2·p/2048)
//    (rope_interpolation_scale s, patch sizes p_t and p), each taken to 2·g − 1;
//  - frequencies: n = ⌊dim/6⌋ of them, theta^(linspace(0, 1, n)) · π/2; the angle of frequency k
//    on axis a is freq_k·(2·g_a − 1), ordered k-major (frame, row, column for each k);
//  - cos and sin each repeated twice (adjacent pairs), the first dim mod 6 entries cos 1, sin 0;
//  - x·cos + rotate(x)·sin with rotate(x) = (−x1, x0, −x3, x2, ...), on the whole hidden state
//    of dim coordinates before it is split into heads.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

#include <Eigen/Core>
#include <catch2/catch.hpp>

#include <rope/rope.hpp>

#include "support.hpp"

namespace {

using rope::Layout;
using rope::View;

rope::Options layout_options(Layout layout) {
  rope::Options options;
  options.layout = layout;
  options.max_positions = 64;  // positions past it and fractional ones are both computed
  return options;
}

// The positions of the tests: fractions, integers, and coordinates far past the table.
const std::vector<double> kFractions = {
    0.5,      1.25,    3.0,       0.0,        63.75,           64.5,      1000.125,
    4095.875, 70000.3, 12345.678, 1e9 + 0.25, 1099511627776.5, 0.0078125, 9.0e15 + 2.0};

// LTX-Video's coordinates and rotation of one token's hidden state, in float64, as diffusers
// computes them (in float32 there).
struct LtxReference {
  std::size_t dim;
  double theta;

  // 2·g − 1 for grid index i on an axis of the given interpolation scale, patch and base.
  static double coordinate(std::size_t i, double scale, double patch, double base) {
    const double g = double(i) * scale * patch / base;
    return g * 2 - 1;
  }

  double frequency(std::size_t k) const {
    const std::size_t n = dim / 6;
    const long double step = n > 1 ? 1.0L / (long double)(n - 1) : 0.0L;
    const long double exponent = (long double)k * step;
    return double(std::pow((long double)theta, exponent) * 3.14159265358979323846264338327950288L /
                  2);
  }

  std::vector<double> rotate(const std::vector<double>& x, const std::array<double, 3>& c) const {
    const std::size_t n = dim / 6, pad = dim % 6;
    std::vector<double> cos(dim, 1.0), sin(dim, 0.0);
    for (std::size_t k = 0; k < n; ++k) {
      for (std::size_t a = 0; a < 3; ++a) {
        const long double angle = (long double)frequency(k) * (long double)c[a];
        const std::size_t e = pad + 2 * (3 * k + a);
        cos[e] = cos[e + 1] = double(std::cos(angle));
        sin[e] = sin[e + 1] = double(std::sin(angle));
      }
    }
    std::vector<double> out(dim);
    for (std::size_t e = 0; e < dim; e += 2) {
      out[e] = x[e] * cos[e] + (-x[e + 1]) * sin[e];
      out[e + 1] = x[e + 1] * cos[e + 1] + x[e] * sin[e + 1];
    }
    return out;
  }
};

}  // namespace

TEMPLATE_TEST_CASE("fractional positions: each row from the double angle x·θ_j", "[fractional]",
                   float, double, Eigen::half, Eigen::bfloat16) {
  constexpr std::size_t d = 64, heads = 3;
  const std::size_t tokens = kFractions.size();
  std::mt19937_64 rng(98);
  const auto input = rope_test::random_vector<TestType>(tokens * heads * d, rng);
  for (const Layout layout : {Layout::half_split, Layout::interleaved}) {
    CAPTURE(layout);
    const rope::Rotary<TestType, d> rot(layout_options(layout));
    const View<const TestType> in =
        View<const TestType>::contiguous(input.data(), tokens, heads, d);
    std::vector<TestType> x = input;
    rot.apply(x.data(), tokens, heads, kFractions.data());
    rope_test::require_rotation_of<TestType>(
        in, View<const TestType>::contiguous(x.data(), tokens, heads, d), d, layout, kFractions,
        rope::Direction::forward);
    // Out of place, and the inverse, from the same rows.
    std::vector<TestType> out(input.size());
    rot.apply(in, View<TestType>::contiguous(out.data(), tokens, heads, d), kFractions.data(),
              rope::Direction::inverse);
    rope_test::require_rotation_of<TestType>(
        in, View<const TestType>::contiguous(out.data(), tokens, heads, d), d, layout, kFractions,
        rope::Direction::inverse);
  }
}

TEST_CASE("fractional positions: rows as compute_row writes them, on every entry point",
          "[fractional]") {
  constexpr std::size_t d = 128, heads = 4;
  const std::size_t tokens = kFractions.size();
  std::mt19937_64 rng(99);
  const auto input = rope_test::random_vector<float>(tokens * heads * d, rng);
  for (const Layout layout : {Layout::half_split, Layout::interleaved}) {
    CAPTURE(layout);
    const rope::Rotary<float, d> rot(layout_options(layout));
    // The rows, written by the table's own function, then applied as a caller's cos/sin cache:
    // a fractional position's row is that row, bit for bit.
    // (A half_split row is [cos θ_0 .. cos θ_{d/2−1}, sin θ_0 .. sin θ_{d/2−1}].)
    std::vector<float> expected = input;
    std::vector<float> cos(tokens * d / 2), sin(tokens * d / 2);
    for (std::size_t t = 0; t < tokens; ++t) {
      std::vector<float> row(d);
      rope::Table<float>::compute_row(Layout::half_split, rope::inverse_frequencies(d, 10000.0),
                                      kFractions[t], row.data());
      std::copy(row.begin(), row.begin() + d / 2, cos.begin() + std::ptrdiff_t(t * d / 2));
      std::copy(row.begin() + d / 2, row.end(), sin.begin() + std::ptrdiff_t(t * d / 2));
    }
    const rope::CachedRotary<float> cached({d, layout, 0, 0});
    cached.apply(expected.data(), tokens, heads, rope::Positions::consecutive(0),
                 {cos.data(), sin.data(), tokens});

    std::vector<float> x = input;
    rot.apply(x.data(), tokens, heads, kFractions.data());
    REQUIRE(rope_test::same_bits(x, expected));

    // apply_qk: queries and keys by the same rows.
    std::vector<float> q = input, k(tokens * 2 * d);  // heads 0 and 1 of each token
    for (std::size_t t = 0; t < tokens; ++t) {
      std::copy(input.begin() + std::ptrdiff_t(t * heads * d),
                input.begin() + std::ptrdiff_t(t * heads * d + 2 * d),
                k.begin() + std::ptrdiff_t(t * 2 * d));
    }
    rot.apply_qk(View<float>::contiguous(q.data(), tokens, heads, d),
                 View<float>::contiguous(k.data(), tokens, 2, d), kFractions.data());
    REQUIRE(rope_test::same_bits(q, expected));
    for (std::size_t t = 0; t < tokens; ++t) {
      for (std::size_t i = 0; i < 2 * d; ++i) {
        REQUIRE(k[t * 2 * d + i] == expected[t * heads * d + i]);
      }
    }

    // Two threads, each forming the rows of its own tokens.
    rope::Execution two;
    two.threads = 2;
    two.min_bytes_per_thread = 1;
    x = input;
    rot.apply(View<const float>::contiguous(input.data(), tokens, heads, d),
              View<float>::contiguous(x.data(), tokens, heads, d), kFractions.data(),
              {rope::Direction::forward, {}, two});
    REQUIRE(rope_test::same_bits(x, expected));
  }
}

TEST_CASE("fractional positions: integral doubles are the integer positions, bit for bit",
          "[fractional][multi_axis]") {
  // A double table's own rows are compute_row's, as fractional rows are: equal wherever the
  // coordinates are integers inside the table (signed ones by the rows of their magnitudes).
  constexpr std::size_t d = 128, heads = 2;
  rope::Options options = layout_options(Layout::interleaved);
  options.axes = rope::Axes::blocks({16, 56, 56}).with_signed_coordinates();
  const rope::Rotary<double, d> rot(options);
  const std::vector<std::int64_t> ids = {0, 0, 0, 3, -5, 7, 1, 63, -63, 2, 0, -1};
  const std::vector<double> fractional(ids.begin(), ids.end());
  const std::size_t tokens = ids.size() / 3;
  std::mt19937_64 rng(100);
  const auto input = rope_test::random_vector<double>(tokens * heads * d, rng);
  std::vector<double> a = input, b = input;
  rot.apply(a.data(), tokens, heads, rope::Positions::token_major(ids.data(), 3));
  rot.apply(b.data(), tokens, heads, rope::Positions::token_major(fractional.data(), 3));
  REQUIRE(rope_test::same_bits(a, b));
  // One coordinate per token on the same Rotary: every axis alike.
  const std::vector<double> text = {5.0, 6.0, 7.0, 8.0};
  const std::vector<std::int64_t> text_ids = {5, 6, 7, 8};
  a = input;
  b = input;
  rot.apply(a.data(), 4, heads, text_ids.data());
  rot.apply(b.data(), 4, heads, text.data());
  REQUIRE(rope_test::same_bits(a, b));
}

TEMPLATE_TEST_CASE("LTX-Video: fractional, signed coordinates of a latent grid",
                   "[fractional][multi_axis]", float, double, Eigen::half, Eigen::bfloat16) {
  // diffusers' pipeline: rope_interpolation_scale (8 / 25 fps, 32, 32), patch sizes 1, base grid
  // (20, 2048, 2048); a 97-frame 480 x 704 video is 13 x 15 x 22 latent patches (3 frames here).
  const double scale[3] = {8.0 / 25.0, 32.0, 32.0}, base[3] = {20.0, 2048.0, 2048.0};
  const rope::LatentGrid grid{3, 15, 22};
  const std::array<double, 3> step = {scale[0] * 1 / base[0], scale[1] * 1 / base[1],
                                      scale[2] * 1 / base[2]};
  const std::vector<double> positions = rope::ltx_video_positions(grid, step);
  const std::size_t tokens = grid.frames * grid.rows * grid.columns;
  REQUIRE(positions.size() == 3 * tokens);
  for (const std::size_t dim : {std::size_t{2048}, std::size_t{96}, std::size_t{100}}) {
    CAPTURE(dim);
    const LtxReference reference{dim, 10000.0};
    const rope::Rotary<TestType> rot(rope::ltx_video_options(dim));
    std::mt19937_64 rng(dim);
    const auto input = rope_test::random_vector<TestType>(tokens * dim, rng);
    std::vector<TestType> x = input;
    rot.apply(x.data(), tokens, 1, rope::Positions::token_major(positions.data(), 3));
    rope_test::WorstCoordinate worst;
    std::size_t t = 0;
    for (std::size_t f = 0; f < grid.frames; ++f) {
      for (std::size_t h = 0; h < grid.rows; ++h) {
        for (std::size_t w = 0; w < grid.columns; ++w, ++t) {
          const std::size_t index[3] = {f, h, w};
          std::array<double, 3> c{}, g{};
          for (std::size_t a = 0; a < 3; ++a) {
            c[a] = LtxReference::coordinate(index[a], scale[a], 1.0, base[a]);
            g[a] = double(index[a]) * scale[a] / base[a];
            // The helper's coordinates are the model's, within their roundings (below).
            REQUIRE(std::abs(positions[3 * t + a] - c[a]) <=
                    rope_test::unit_roundoff<double> * (14 * g[a] + 2 * std::abs(c[a])));
          }
          const TestType* in = input.data() + t * dim;
          const TestType* out = x.data() + t * dim;
          const std::vector<double> expected =
              reference.rotate(std::vector<double>(in, in + dim), c);
          for (std::size_t i = 0; i < dim; ++i) {
            const std::size_t pad = dim % 6, pair = i < pad ? 0 : (i - pad) / 2;
            const std::size_t k = pair / 3, a = pair % 3;
            const double pair_abs = std::abs(double(in[i])) + std::abs(double(in[i ^ 1U]));
            // output_bound's angle term, (2·ln(theta) + 8)·u per unit of `position`, at twice the
            // angle's scale θ_k·(|x| + |g| + 1): θ_k·|x|·(2·ln(theta) + 8)·u for the frequencies'
            // and the product's roundings, and θ_k·(14·|g| + 2·|x|)·u for the coordinates' own
            // (the helper's 2·(i·step) − 1 and the model's 2·(i·s·p/b) − 1, three roundings and
            // one each on g, one on the difference).
            const double position =
                i < pad ? 0.0 : 2 * reference.frequency(k) * (std::abs(c[a]) + g[a] + 1);
            const double bound =
                rope_test::output_bound<TestType>(pair_abs, position, expected[i], 10000.0);
            worst.note(std::abs(double(out[i]) - expected[i]), bound, [&](std::ostream& s) {
              s << "token " << t << " coordinate " << i << ": got " << double(out[i])
                << ", reference " << expected[i] << ", bound " << bound;
            });
          }
        }
      }
    }
    INFO("worst coordinate: " << worst.where());
    REQUIRE(worst.ratio() <= 1.0);
  }
}

TEST_CASE("LTX-Video as docs/multimodal.md writes it", "[fractional][docs]") {
  const rope::Rotary<float> ltx(rope::ltx_video_options(2048));  // 32 heads of 64, rotated as one
  const rope::LatentGrid video{13, 15, 22};  // 97 frames of 480 x 704: 13 x 15 x 22 patches
  const std::array<double, 3> step = {8.0 / 25.0 / 20.0, 32.0 / 2048.0, 32.0 / 2048.0};
  const std::vector<double> coordinates = rope::ltx_video_positions(video, step);
  const std::size_t patches = coordinates.size() / 3;
  std::vector<float> hidden(patches * 2048, 0.25f);  // after norm_q, before the heads split
  ltx.apply(hidden.data(), patches, 1, rope::Positions::token_major(coordinates.data(), 3));

  REQUIRE(patches == 13 * 15 * 22);
  REQUIRE(ltx.max_positions() == 1);
  // The first patch sits at (−1, −1, −1); the pair before the groups is not rotated, and the
  // first group's pairs turn by −π/2: (a, b) becomes (b, −a).
  REQUIRE((coordinates[0] == -1.0 && coordinates[1] == -1.0 && coordinates[2] == -1.0));
  REQUIRE((hidden[0] == 0.25f && hidden[1] == 0.25f));
  for (std::size_t e = 2; e < 8; e += 2) {
    REQUIRE(std::abs(hidden[e] - 0.25f) < 1e-7f);
    REQUIRE(std::abs(hidden[e + 1] + 0.25f) < 1e-7f);
  }
}
