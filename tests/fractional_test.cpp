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

namespace {

// LTX-2's rotary embedding and rotation of one token's hidden state (heads · head_size
// coordinates), in float64, as diffusers writes them (LTX2AudioVideoRotaryPosEmbed.forward, then
// apply_split_rotary_emb or apply_interleaved_rotary_emb), at the token's coordinates x (each
// 2·(midpoint / base) − 1):
//  - n = dim // (2·axes) frequencies theta^(linspace(0, 1, n)) · π/2; freqs[k·axes + a] =
//    x_a · frequency k ("transpose(-1, -2).flatten(2)");
//  - "split": cos and sin of dim/2 entries, ones and zeros first where freqs has fewer, reshaped
//    into the heads, head h rotating its halves (x1, x2) by entries [h·r, (h + 1)·r), r the half
//    head: x1·c − x2·s, x2·c + x1·s;
//  - "interleaved": cos and sin each repeated twice, ones and zeros first (dim mod 2·axes of
//    them), x·cos + (−x1, x0, −x3, x2, ...)·sin over the whole hidden state.
// Also returns, per coordinate, its frequency (0 where not rotated) and axis.
struct Ltx2Rotated {
  std::vector<double> out, frequency;
  std::vector<std::size_t> axis;
};
Ltx2Rotated ltx2_reference(const std::vector<double>& hidden, std::size_t heads,
                           std::size_t head_size, const std::vector<double>& x, bool split,
                           double theta) {
  const std::size_t dim = heads * head_size, axes = x.size(), n = dim / (2 * axes);
  std::vector<double> angle(n * axes), frequency(n * axes);
  std::vector<std::size_t> axis(n * axes);
  for (std::size_t k = 0; k < n; ++k) {
    const double step = n > 1 ? double(k) / double(n - 1) : 0.0;
    for (std::size_t a = 0; a < axes; ++a) {
      frequency[k * axes + a] = std::pow(theta, step) * 3.14159265358979323846 / 2.0;
      angle[k * axes + a] = x[a] * frequency[k * axes + a];
      axis[k * axes + a] = a;
    }
  }
  Ltx2Rotated r{std::vector<double>(dim), std::vector<double>(dim, 0.0),
                std::vector<std::size_t>(dim, 0)};
  if (split) {
    const std::size_t pad = dim / 2 - angle.size(), half = head_size / 2;
    std::vector<double> c(dim / 2, 1.0), s(dim / 2, 0.0), f(dim / 2, 0.0);
    std::vector<std::size_t> ax(dim / 2, 0);
    for (std::size_t j = 0; j < angle.size(); ++j) {
      c[pad + j] = std::cos(angle[j]);
      s[pad + j] = std::sin(angle[j]);
      f[pad + j] = frequency[j];
      ax[pad + j] = axis[j];
    }
    for (std::size_t h = 0; h < heads; ++h) {
      for (std::size_t i = 0; i < half; ++i) {
        const std::size_t e = h * half + i, first = h * head_size + i, second = first + half;
        r.out[first] = hidden[first] * c[e] - hidden[second] * s[e];
        r.out[second] = hidden[second] * c[e] + hidden[first] * s[e];
        r.frequency[first] = r.frequency[second] = f[e];
        r.axis[first] = r.axis[second] = ax[e];
      }
    }
  } else {
    const std::size_t pad = dim % (2 * axes);
    std::vector<double> c(dim, 1.0), s(dim, 0.0);
    for (std::size_t j = 0; j < angle.size(); ++j) {
      for (std::size_t e : {pad + 2 * j, pad + 2 * j + 1}) {
        c[e] = std::cos(angle[j]);
        s[e] = std::sin(angle[j]);
        r.frequency[e] = frequency[j];
        r.axis[e] = axis[j];
      }
    }
    for (std::size_t i = 0; i < dim; ++i) {
      const double rotated = i % 2 == 0 ? -hidden[i + 1] : hidden[i - 1];
      r.out[i] = hidden[i] * c[i] + rotated * s[i];
    }
  }
  return r;
}

// diffusers' prepare_video_coords for latent index i on axis a (patch sizes 1), then the
// fraction of the base grid: returns g = midpoint / base (x = 2·g − 1).
double ltx2_video_fraction(std::size_t i, std::size_t a, double fps) {
  const double scale[3] = {8, 32, 32}, base[3] = {20, 2048, 2048};
  double start = double(i) * scale[a], end = double(i + 1) * scale[a];
  if (a == 0) {
    start = std::max(start + 1 - scale[0], 0.0) / fps;  // causal_offset 1, clamp(min=0)
    end = std::max(end + 1 - scale[0], 0.0) / fps;
  }
  return (start + end) / 2.0 / base[a];
}

// prepare_audio_coords for latent frame i (patch size 1, 16 kHz, hop 160, scale 4), base 20.
double ltx2_audio_fraction(std::size_t i) {
  const double start = std::max(double(i) * 4 + 1 - 4, 0.0) * 160 / 16000;
  const double end = std::max(double(i + 1) * 4 + 1 - 4, 0.0) * 160 / 16000;
  return (start + end) / 2.0 / 20.0;
}

// The worst ratio, over every coordinate of every token, of |got − reference| to output_bound
// at the angle's scale 2·θ_k·(|x| + g + 1) (as for LTX-Video above: the frequencies' and the
// product's roundings, and the coordinates' own, a dozen roundings of g).
template <class T>
double ltx2_worst(const std::vector<T>& input, const std::vector<T>& got, std::size_t heads,
                  std::size_t head_size, const std::vector<std::vector<double>>& fraction,
                  bool split) {
  const std::size_t dim = heads * head_size;
  rope_test::WorstCoordinate worst;
  for (std::size_t t = 0; t < fraction.size(); ++t) {
    std::vector<double> x;
    for (const double g : fraction[t]) x.push_back(2 * g - 1);
    const std::vector<double> in(input.begin() + long(t * dim),
                                 input.begin() + long((t + 1) * dim));
    const Ltx2Rotated r = ltx2_reference(in, heads, head_size, x, split, 10000.0);
    for (std::size_t i = 0; i < dim; ++i) {
      const std::size_t partner =
          split ? (i % head_size < head_size / 2 ? i + head_size / 2 : i - head_size / 2)
                : (i ^ 1U);
      const double pair_abs = std::abs(in[i]) + std::abs(in[partner]);
      const std::size_t a = r.axis[i];
      const double position = 2 * r.frequency[i] * (std::abs(x[a]) + fraction[t][a] + 1);
      const double bound = rope_test::output_bound<T>(pair_abs, position, r.out[i], 10000.0);
      worst.note(std::abs(double(got[t * dim + i]) - r.out[i]), bound, [&](std::ostream& s) {
        s << "token " << t << " coordinate " << i << ": got " << double(got[t * dim + i])
          << ", reference " << r.out[i] << ", bound " << bound;
      });
    }
  }
  INFO("worst coordinate: " << worst.where());
  CHECK(worst.ratio() <= 1.0);
  return worst.ratio();
}

}  // namespace

TEMPLATE_TEST_CASE("LTX-2: video, audio and cross-attention RoPE, split and interleaved",
                   "[fractional][multi_axis][ltx2]", float, double, Eigen::half, Eigen::bfloat16) {
  using T = TestType;
  // Video: 4 heads of 50 (dim 200: 33 frequencies for 99 pairs, one pair never rotated) on a 3 x
  // 5 x 7 latent grid at 24 fps; audio: 4 heads of 34 on 9 latent frames; the cross-attention's
  // temporal coordinate of each video token.
  const rope::LatentGrid grid{3, 5, 7};
  const double fps = 24.0;
  const std::vector<double> video = rope::ltx2_video_positions(grid, fps);
  const std::size_t tokens = grid.frames * grid.rows * grid.columns;
  REQUIRE(video.size() == 3 * tokens);
  std::vector<std::vector<double>> video_fraction, time_fraction;
  for (std::size_t t = 0; t < tokens; ++t) {
    const std::size_t index[3] = {t / 35, t / 7 % 5, t % 7};
    std::vector<double> g(3);
    for (std::size_t a = 0; a < 3; ++a) {
      g[a] = ltx2_video_fraction(index[a], a, fps);
      // The helper's coordinates are the model's, within a dozen roundings of g.
      REQUIRE(std::abs(video[3 * t + a] - (2 * g[a] - 1)) <=
              16 * rope_test::unit_roundoff<double> * (g[a] + 1));
    }
    video_fraction.push_back(g);
    time_fraction.push_back({g[0]});
  }
  const std::vector<double> audio = rope::ltx2_audio_positions(9);
  std::vector<std::vector<double>> audio_fraction;
  for (std::size_t i = 0; i < 9; ++i) {
    audio_fraction.push_back({ltx2_audio_fraction(i)});
    REQUIRE(std::abs(audio[i] - (2 * audio_fraction[i][0] - 1)) <=
            16 * rope_test::unit_roundoff<double> * (audio_fraction[i][0] + 1));
  }
  for (const Layout pairing : {Layout::half_split, Layout::interleaved}) {
    const bool split = pairing == Layout::half_split;
    INFO((split ? "split" : "interleaved"));
    std::mt19937_64 rng(split ? 11 : 12);
    {
      INFO("video self-attention");
      const rope::Rotary<T> rot(rope::ltx2_options(4, 50, 3, pairing));
      const auto input = rope_test::random_vector<T>(tokens * 200, rng);
      std::vector<T> x = input;
      rot.apply(x.data(), tokens, 1, rope::Positions::token_major(video.data(), 3));
      ltx2_worst(input, x, 4, 50, video_fraction, split);
    }
    {
      INFO("audio self-attention");
      const rope::Rotary<T> rot(rope::ltx2_options(4, 34, 1, pairing));
      const auto input = rope_test::random_vector<T>(9 * 136, rng);
      std::vector<T> x = input;
      rot.apply(x.data(), 9, 1, rope::Positions::token_major(audio.data(), 1));
      ltx2_worst(input, x, 4, 34, audio_fraction, split);
    }
    {
      INFO("cross-attention: the video tokens' temporal coordinate, every third value");
      const rope::Rotary<T> rot(rope::ltx2_options(4, 34, 1, pairing));
      const auto input = rope_test::random_vector<T>(tokens * 136, rng);
      std::vector<T> x = input;
      rot.apply(x.data(), tokens, 1, rope::Positions(video.data(), 1, 1, 3));
      ltx2_worst(input, x, 4, 34, time_fraction, split);
    }
  }
}

TEST_CASE("LTX-2: ltx_video_options is its interleaved video RoPE", "[fractional][ltx2]") {
  const rope::Rotary<float> a(rope::ltx_video_options(200));
  const rope::Rotary<float> b(rope::ltx2_options(1, 200, 3, Layout::interleaved));
  REQUIRE(a.inverse_frequencies() == b.inverse_frequencies());
  REQUIRE(a.rotary_offset() == 2);
  REQUIRE(b.rotary_offset() == 2);
  // Split: one head of dim = heads · head_size, every pair rotated inside its attention head.
  const rope::Rotary<float> split(rope::ltx2_options(4, 50));
  REQUIRE(split.head_size() == 200);
  REQUIRE(split.rotary_dim() == 200);
  REQUIRE(split.inverse_frequencies().size() == 100);
  REQUIRE(split.inverse_frequencies()[0] == 0.0);  // the pair never rotated comes first
  REQUIRE(split.inverse_frequencies()[1] > 0.0);
}

TEST_CASE("LTX-2 as docs/multimodal.md writes it", "[fractional][ltx2][docs]") {
  const rope::Rotary<float> video(rope::ltx2_options(32, 128, 3));  // rope_type "split"
  const std::vector<double> xyz = rope::ltx2_video_positions({4, 16, 24}, 24.0);  // fps 24
  const std::size_t patches = xyz.size() / 3;
  std::vector<float> q(patches * 32 * 128, 0.25f);  // [patches][4096], after the q norm
  video.apply(q.data(), patches, 1, rope::Positions::token_major(xyz.data(), 3));
  // The audio-to-video cross-attention: the video tokens' time alone, every third value.
  const rope::Rotary<float> cross(rope::ltx2_options(32, 64, 1));
  std::vector<float> q_cross(patches * 32 * 64, 0.25f);
  cross.apply(q_cross.data(), patches, 1, rope::Positions(xyz.data(), 1, 1, 3));

  REQUIRE(patches == 4 * 16 * 24);
  // 4096 / 6 = 682 frequencies for 2046 of the 2048 pairs: head 0's first two pairs, (0, 64) and
  // (1, 65), never rotate. Its third, (2, 66), is frequency 0 (π/2) of the frame axis.
  REQUIRE((q[0] == 0.25f && q[64] == 0.25f && q[1] == 0.25f && q[65] == 0.25f));
  const double x = xyz[0], c = 0.25 * std::cos(x * 3.14159265358979323846 / 2),
               s = 0.25 * std::sin(x * 3.14159265358979323846 / 2);
  const double bound = rope_test::output_bound<float>(0.5, 4.0, c - s, 10000.0);
  CHECK(std::abs(double(q[2]) - (c - s)) <= bound);
  CHECK(std::abs(double(q[66]) - (c + s)) <= bound);
  // 2048 / 2 = 1024 frequencies for the cross-attention's 1024 pairs: all of them rotate.
  CHECK(q_cross[0] != 0.25f);
}

TEST_CASE("fractional multi-axis rows kept per coordinate: the bits of rows computed whole",
          "[fractional][multi_axis]") {
  // A thread keeps the rows of each axis's coordinates (64 an axis, in sets of four, tagged by
  // the table) for its later tokens and calls. Every token must get the bits of its row written
  // whole by Table::compute_row, pair by pair at its axis's coordinate, applied through a
  // CachedRotary: coordinates that repeat and more distinct ones than the rows kept (300 on the
  // last axis), in an order that evicts and comes back; signed; LTX-2's split pairing and
  // Qwen2-VL's sections; two tables with other θ taking turns on the same coordinates.
  std::vector<double> xyz;
  for (std::size_t t = 0; t < 900; ++t) {
    xyz.push_back(double(t % 3) * 0.375 - 0.5);
    xyz.push_back(double(t % 17) / 16.0 - 0.25);
    xyz.push_back(double((t * 7) % 300) / 128.0 - 1.0);
  }
  const std::size_t tokens = xyz.size() / 3;
  const auto sections = [](double base) {
    rope::Options o;
    o.head_size = 128;
    o.base = base;
    o.axes = rope::Axes::sections({16, 24, 24}).with_signed_coordinates();
    return o;
  };
  const std::pair<const char*, rope::Options> cases[] = {
      {"LTX-2 split, 4 heads of 48", rope::ltx2_options(4, 48, 3)},
      {"sections {16, 24, 24}, base 10000", sections(10000.0)},
      {"sections {16, 24, 24}, base 500", sections(500.0)}};
  for (int round = 0; round < 2; ++round) {
    for (const auto& [name, options] : cases) {
      INFO(name << ", round " << round);
      const rope::Rotary<float> rot(options);
      const std::size_t d = rot.head_size(), half = d / 2;
      const std::vector<double>& theta = rot.inverse_frequencies();
      const std::vector<std::uint8_t>& axis = rot.axis_of_pairs();
      // Each token's half_split row from three rows written whole, pair j from its axis's.
      std::vector<float> cos(tokens * half), sin(tokens * half), row(3 * d);
      for (std::size_t t = 0; t < tokens; ++t) {
        for (std::size_t a = 0; a < 3; ++a) {
          rope::Table<float>::compute_row(Layout::half_split, theta, xyz[3 * t + a],
                                          row.data() + a * d);
        }
        for (std::size_t j = 0; j < half; ++j) {
          cos[t * half + j] = row[axis[j] * d + j];
          sin[t * half + j] = row[axis[j] * d + half + j];
        }
      }
      rope::CosSinOptions cached_options{d, Layout::half_split, 0, 0};
      if (options.axes.pairs_within_blocks()) {
        cached_options.axes = rope::Axes().with_pairs_within_blocks(48);
      }
      std::mt19937_64 rng(77);
      const auto input = rope_test::random_vector<float>(tokens * d, rng);
      std::vector<float> x = input, expected = input;
      rope::CachedRotary<float>(cached_options)
          .apply(expected.data(), tokens, 1, rope::Positions::consecutive(0),
                 {cos.data(), sin.data(), tokens});
      rot.apply(x.data(), tokens, 1, rope::Positions::token_major(xyz.data(), 3));
      REQUIRE(rope_test::same_bits(x, expected));
    }
  }
}

TEST_CASE("Qwen3-Omni: a video's fractional temporal position ids on the interleaved M-RoPE map",
          "[fractional][multi_axis]") {
  // Qwen3-Omni's thinker (HuggingFace's Qwen3OmniMoe get_rope_index): position_ids are floats; a
  // video's temporal ids are arange(grid_t) · second_per_grid · position_id_per_seconds (25),
  // not rounded: 2 frames a temporal patch at 3 fps is 2/3 s, 16.67 ids a patch. Text before and
  // after, the vision start and end tokens: integers as doubles. The map is Qwen3-VL's
  // interleaved M-RoPE ([24, 20, 20], half_split, head 128, base 1000000), against the rule
  // written out pair by pair in float64.
  const std::size_t grid_t = 3, grid_h = 4, grid_w = 6;
  const double second_per_grid = 2.0 / 3.0, per_second = 25.0;
  std::vector<std::array<double, 3>> ids;
  for (int t = 0; t < 5; ++t) ids.push_back({double(t), double(t), double(t)});  // text
  ids.push_back({5, 5, 5});                                                      // vision start
  const double st = 6;
  for (std::size_t t = 0; t < grid_t; ++t) {
    for (std::size_t h = 0; h < grid_h; ++h) {
      for (std::size_t w = 0; w < grid_w; ++w) {
        ids.push_back(
            {st + double(t) * second_per_grid * per_second, st + double(h), st + double(w)});
      }
    }
  }
  double next = 0;
  for (const auto& id : ids) next = std::max({next, id[0], id[1], id[2]});
  next = std::floor(next) + 1;  // llm_pos_ids.max() + 1, as the float tensor holds it
  for (int k = 0; k < 4; ++k) ids.push_back({next + k, next + k, next + k});  // end, text
  const std::size_t tokens = ids.size(), heads = 4, d = 128;
  std::vector<double> axis_major(3 * tokens);  // HuggingFace's (3, seq) position_ids
  for (std::size_t t = 0; t < tokens; ++t) {
    for (std::size_t a = 0; a < 3; ++a) axis_major[a * tokens + t] = ids[t][a];
  }
  REQUIRE(ids[6 + grid_h * grid_w][0] == Approx(6 + 50.0 / 3.0));  // the second patch: 22.67

  rope::Options options;
  options.head_size = d;
  options.base = 1000000.0;
  options.axes = rope::Axes::mrope_interleaved({24, 20, 20});
  const rope::Rotary<float> rot(options);
  std::mt19937_64 rng(2025);
  const auto input = rope_test::random_vector<float>(tokens * heads * d, rng);
  std::vector<float> x = input;
  rot.apply(x.data(), tokens, heads, rope::Positions::axis_major(axis_major.data(), 3, tokens));
  rope_test::WorstCoordinate worst;
  for (std::size_t t = 0; t < tokens; ++t) {
    for (std::size_t h = 0; h < heads; ++h) {
      const float* in = input.data() + (t * heads + h) * d;
      const float* out = x.data() + (t * heads + h) * d;
      for (std::size_t i = 0; i < d / 2; ++i) {
        const std::size_t axis = i % 3 == 1 && i < 60 ? 1 : i % 3 == 2 && i < 60 ? 2 : 0;
        const double angle = ids[t][axis] * std::pow(1000000.0, -2.0 * double(i) / double(d));
        const double a = double(in[i]), b = double(in[i + d / 2]);
        const double want[2] = {a * std::cos(angle) - b * std::sin(angle),
                                b * std::cos(angle) + a * std::sin(angle)};
        for (std::size_t k = 0; k < 2; ++k) {
          const double bound = rope_test::output_bound<float>(std::abs(a) + std::abs(b),
                                                              ids[t][axis], want[k], 1000000.0);
          worst.note(std::abs(double(out[i + k * d / 2]) - want[k]), bound, [&](std::ostream& s) {
            s << "token " << t << " head " << h << " pair " << i;
          });
        }
      }
    }
  }
  INFO("worst coordinate: " << worst.where());
  REQUIRE(worst.ratio() <= 1.0);
}
