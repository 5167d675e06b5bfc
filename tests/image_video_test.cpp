// Image and video diffusion transformers' RoPE (Axes::blocks): Flux.1, Flux.2, HunyuanVideo,
// Qwen-Image (signed coordinates) and Wan 2.x, configured as docs/multimodal.md writes them, on
// their own grids of latent patches, against float64 transcriptions of each model's rule:
//
//  - diffusers' FluxPosEmbed (Flux.1, Flux.2) and HunyuanVideo's rotary embedding: per axis i a
//    block of axes_dim[i] coordinates, frequencies 1 / theta^(k / axes_dim[i]) for k = 0, 2, ...,
//    angles pos_i · freq, cos and sin each repeated twice (adjacent pairs), then
//    x·cos + rotate(x)·sin with rotate(x) = (−x1, x0, −x3, x2, ...);
//  - Wan's rope_apply: adjacent pairs as complex numbers, multiplied by e^{i·angle}, the head's
//    c = d/2 pairs split c − 2⌊c/3⌋, ⌊c/3⌋, ⌊c/3⌋ between frame, row and column, each part's
//    frequencies from rope_params of its own width (d − 4⌊d/6⌋, 2⌊d/6⌋, 2⌊d/6⌋).
#include <algorithm>
#include <array>
#include <cmath>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <Eigen/Core>
#include <catch2/catch.hpp>

#include <rope/rope.hpp>

#include "support.hpp"

namespace {

using Ids = std::vector<std::array<std::int64_t, 4>>;  // a token's coordinates; unused ones 0

// Flux's and HunyuanVideo's rule for one head, in float64.
std::vector<double> concatenated_axes(const std::vector<double>& x,
                                      const std::array<std::int64_t, 4>& id,
                                      const std::vector<std::size_t>& axes_dim, double theta) {
  std::vector<double> out(x.size());
  std::size_t first = 0;
  for (std::size_t i = 0; i < axes_dim.size(); ++i) {
    const std::size_t dim = axes_dim[i];
    for (std::size_t k = 0; k < dim; k += 2) {
      const double freq = 1.0 / std::pow(theta, double(k) / double(dim));
      const double angle = double(id[i]) * freq;
      const double c = std::cos(angle), s = std::sin(angle);
      const std::size_t e = first + k;  // the pair (e, e + 1)
      out[e] = x[e] * c + (-x[e + 1]) * s;
      out[e + 1] = x[e + 1] * c + x[e] * s;
    }
    first += dim;
  }
  return out;
}

// Wan's rule for one head, in float64, as complex products.
std::vector<double> wan_head(const std::vector<double>& x, const std::array<std::int64_t, 4>& id,
                             double theta) {
  const std::size_t d = x.size(), c = d / 2;
  const std::size_t dims[3] = {d - 4 * (d / 6), 2 * (d / 6), 2 * (d / 6)};
  const std::size_t parts[3] = {c - 2 * (c / 3), c / 3, c / 3};
  std::vector<double> out(d);
  std::size_t pair = 0;
  for (std::size_t a = 0; a < 3; ++a) {
    for (std::size_t k = 0; k < parts[a]; ++k, ++pair) {
      const double freq = 1.0 / std::pow(theta, double(2 * k) / double(dims[a]));
      const std::complex<double> z = std::complex<double>(x[2 * pair], x[2 * pair + 1]) *
                                     std::polar(1.0, double(id[a]) * freq);
      out[2 * pair] = z.real();
      out[2 * pair + 1] = z.imag();
    }
  }
  return out;
}

// Qwen-Image's rule (diffusers' QwenEmbedRope with scale_rope, and apply_rotary_emb_qwen's
// complex products) for one head, in float64: per axis a block of axes_dim[a] coordinates,
// frequencies 1 / theta^(k / axes_dim[a]) for k = 0, 2, ..., the pair times e^{i·pos_a·freq};
// pos_a may be negative (the rows of its neg_freqs).
std::vector<double> qwen_image_head(const std::vector<double>& x,
                                    const std::array<std::int64_t, 4>& id,
                                    const std::vector<std::size_t>& axes_dim, double theta) {
  std::vector<double> out(x.size());
  std::size_t pair = 0;
  for (std::size_t a = 0; a < axes_dim.size(); ++a) {
    for (std::size_t k = 0; k < axes_dim[a]; k += 2, ++pair) {
      const double freq = 1.0 / std::pow(theta, double(k) / double(axes_dim[a]));
      const std::complex<double> z = std::complex<double>(x[2 * pair], x[2 * pair + 1]) *
                                     std::polar(1.0, double(id[a]) * freq);
      out[2 * pair] = z.real();
      out[2 * pair + 1] = z.imag();
    }
  }
  return out;
}

// Qwen-Image's ids with scale_rope: image i's patches at (i, row, column), rows
// −(h − ⌊h/2⌋) .. ⌊h/2⌋ − 1 and columns likewise (centred on 0); then the text tokens at
// (M + t, M + t, M + t), M = the largest ⌊h/2⌋ or ⌊w/2⌋ of the images.
Ids qwen_image_ids(const std::vector<std::array<std::int64_t, 2>>& images, std::int64_t text) {
  Ids ids;
  std::int64_t most = 0;
  for (std::size_t i = 0; i < images.size(); ++i) {
    const std::int64_t h = images[i][0], w = images[i][1];
    for (std::int64_t r = 0; r < h; ++r) {
      for (std::int64_t c = 0; c < w; ++c) {
        ids.push_back({std::int64_t(i), r - (h - h / 2), c - (w - w / 2), 0});
      }
    }
    most = std::max({most, h / 2, w / 2});
  }
  for (std::int64_t t = 0; t < text; ++t) ids.push_back({most + t, most + t, most + t, 0});
  return ids;
}

struct Model {
  std::string name;
  rope::Options options;  // as docs/multimodal.md writes it
  std::size_t axes;
  Ids ids;
  std::function<std::vector<double>(const std::vector<double>&, const std::array<std::int64_t, 4>&)>
      reference;
  double base;  // the largest base: the angle's error in support.hpp's bound grows with ln(base)
};

// Flux.1's ids: text tokens at (0, 0, 0), then the packed latent's patches at (0, row, column).
Ids flux_ids(std::size_t text, std::size_t rows, std::size_t columns) {
  Ids ids(text, {0, 0, 0, 0});
  for (std::size_t r = 0; r < rows; ++r) {
    for (std::size_t c = 0; c < columns; ++c)
      ids.push_back({0, std::int64_t(r), std::int64_t(c), 0});
  }
  return ids;
}

// A video's patches, frame by frame, row by row: (frame, row, column).
Ids video_ids(std::size_t frames, std::size_t rows, std::size_t columns) {
  Ids ids;
  for (std::size_t f = 0; f < frames; ++f) {
    for (std::size_t r = 0; r < rows; ++r) {
      for (std::size_t c = 0; c < columns; ++c) {
        ids.push_back({std::int64_t(f), std::int64_t(r), std::int64_t(c), 0});
      }
    }
  }
  return ids;
}

rope::Options interleaved(std::size_t head_size, double base, rope::Axes axes) {
  rope::Options o;
  o.head_size = head_size;
  o.base = base;
  o.layout = rope::Layout::interleaved;
  o.axes = std::move(axes);
  return o;
}

// A model of diffusers' FluxPosEmbed rule (Flux.1, Flux.2, HunyuanVideo): heads of 128, blocks of
// axes_dim, one theta, a coordinate per block.
Model diffusers_model(std::string name, const std::vector<std::size_t>& dims, double theta,
                      Ids ids) {
  return {std::move(name),
          interleaved(128, theta, rope::Axes::blocks(dims)),
          dims.size(),
          std::move(ids),
          [=](const std::vector<double>& x, const std::array<std::int64_t, 4>& id) {
            return concatenated_axes(x, id, dims, theta);
          },
          theta};
}

std::vector<Model> models() {
  std::vector<Model> all;
  // Flux.1 [dev]: heads of 128, axes_dim [16, 56, 56], theta 10000; a 1024 × 1024 image is a
  // 64 × 64 grid of packed latent patches after 512 text tokens (here 16).
  all.push_back(diffusers_model("Flux.1", {16, 56, 56}, 10000.0, flux_ids(16, 64, 64)));
  // Flux.2: axes_dims_rope [32, 32, 32, 32], theta 2000, ids (t, h, w, l): text tokens at
  // (0, 0, 0, l), the image's patches at (0, h, w, 0), a reference image's at (10, h, w, 0).
  Ids ids;
  for (std::int64_t l = 0; l < 24; ++l) ids.push_back({0, 0, 0, l});
  for (const auto& id : flux_ids(0, 32, 48)) ids.push_back(id);
  for (auto id : flux_ids(0, 16, 16)) {
    id[0] = 10;
    ids.push_back(id);
  }
  all.push_back(diffusers_model("Flux.2", {32, 32, 32, 32}, 2000.0, ids));
  // HunyuanVideo: heads of 128, rope_axes_dim [16, 56, 56], theta 256; 720p, 33 frames is a
  // 9 × 45 × 80 latent grid; here 5 × 18 × 32.
  all.push_back(diffusers_model("HunyuanVideo", {16, 56, 56}, 256.0, video_ids(5, 18, 32)));
  // Qwen-Image (and Qwen-Image-Edit's second image at frame 1): heads of 128, axes_dims_rope
  // [16, 56, 56], theta 10000, scale_rope; a 1328 × 1328 image is an 83 × 83 grid.
  {
    const std::vector<std::size_t> dims = {16, 56, 56};
    all.push_back({"Qwen-Image",
                   interleaved(128, 10000.0, rope::Axes::blocks(dims).with_signed_coordinates()), 3,
                   qwen_image_ids({{83, 64}, {40, 31}}, 20),
                   [=](const std::vector<double>& x, const std::array<std::int64_t, 4>& id) {
                     return qwen_image_head(x, id, dims, 10000.0);
                   },
                   10000.0});
  }
  // Wan 2.1 / 2.2: heads of 128 (d − 4⌊d/6⌋ = 44, 2⌊d/6⌋ = 42), theta 10000; 480p, 81 frames
  // is a 21 × 30 × 52 grid; here 4 × 15 × 26.
  all.push_back({"Wan", interleaved(128, 10000.0, rope::Axes::blocks({44, 42, 42})), 3,
                 video_ids(4, 15, 26),
                 [](const std::vector<double>& x, const std::array<std::int64_t, 4>& id) {
                   return wan_head(x, id, 10000.0);
                 },
                 10000.0});
  return all;
}

template <class T>
void require_model(const Model& m, const rope::Rotary<T>& rot, std::mt19937_64& rng) {
  const std::size_t d = m.options.head_size, heads = 2, tokens = m.ids.size();
  std::vector<std::int64_t> coordinates;  // [tokens][axes]
  for (const auto& id : m.ids)
    coordinates.insert(coordinates.end(), id.begin(), id.begin() + m.axes);
  const std::vector<T> input = rope_test::random_vector<T>(tokens * heads * d, rng);
  std::vector<T> x = input;
  rot.apply(x.data(), tokens, heads, rope::Positions::token_major(coordinates.data(), m.axes));
  rope_test::WorstCoordinate worst;
  for (std::size_t t = 0; t < tokens; ++t) {
    double largest = 0;
    for (std::size_t a = 0; a < m.axes; ++a) {
      largest = std::max(largest, std::abs(double(m.ids[t][a])));
    }
    for (std::size_t h = 0; h < heads; ++h) {
      const T* in = input.data() + (t * heads + h) * d;
      const T* out = x.data() + (t * heads + h) * d;
      const std::vector<double> expected = m.reference(std::vector<double>(in, in + d), m.ids[t]);
      for (std::size_t i = 0; i < d; ++i) {
        const double pair_abs = std::abs(double(in[i])) + std::abs(double(in[i ^ 1]));
        const double bound = rope_test::output_bound<T>(pair_abs, largest, expected[i], m.base);
        worst.note(std::abs(double(out[i]) - expected[i]), bound, [&](std::ostream& s) {
          s << "token " << t << " head " << h << " coordinate " << i << ": got " << double(out[i])
            << ", reference " << expected[i] << ", bound " << bound;
        });
      }
    }
  }
  INFO(m.name << " (" << tokens << " tokens); worst coordinate: " << worst.where());
  REQUIRE(worst.ratio() <= 1.0);
}

}  // namespace

TEMPLATE_TEST_CASE(
    "Axes::blocks: Flux.1, Flux.2, HunyuanVideo, Qwen-Image and Wan against their "
    "own rules",
    "[multi_axis][blocks]", float, double, Eigen::half, Eigen::bfloat16) {
  std::mt19937_64 rng(4100 + sizeof(TestType));
  for (const Model& m : models()) {
    // The default table, and one of 20 rows: the larger coordinates' rows are then computed.
    rope::Options small = m.options;
    small.max_positions = 20;
    for (const rope::Options& o : {m.options, small}) {
      INFO(m.name << ", max_positions " << o.max_positions);
      require_model<TestType>(m, rope::Rotary<TestType>(o), rng);
    }
  }
}

TEST_CASE("Axes::blocks: per-block bases, and a block's θ as an ordinary RoPE of its width",
          "[multi_axis][blocks]") {
  // Two blocks with their own bases: θ of block a is inverse_frequencies(width_a, base_a).
  rope::Options o = interleaved(48, 10000.0, rope::Axes::blocks({16, 32}, {100.0, 5e5}));
  const rope::Rotary<double> rot(o);
  std::vector<double> expected = rope::inverse_frequencies(16, 100.0);
  const std::vector<double> second = rope::inverse_frequencies(32, 5e5);
  expected.insert(expected.end(), second.begin(), second.end());
  REQUIRE(rot.inverse_frequencies() == expected);
  // A token whose coordinates are equal is rotated by its table row (the same bits as a
  // one-axis call of that row's θ), and the inverse undoes the forward call.
  std::mt19937_64 rng(4200);
  const std::vector<double> input = rope_test::random_vector<double>(3 * 48, rng);
  const std::vector<std::int64_t> coordinates = {7, 7, 3, 9, 0, 0};
  std::vector<double> x = input;
  const rope::Positions p = rope::Positions::token_major(coordinates.data(), 2);
  rot.apply(x.data(), 3, 1, p);
  rope::Options one = o;
  one.axes = rope::Axes();
  one.scaling = rope::InverseFrequencies{expected};
  const rope::Rotary<double> plain(one);
  std::vector<double> y(input.begin(), input.begin() + 48);
  const std::int64_t seven = 7;
  plain.apply(y.data(), 1, 1, &seven);
  REQUIRE(std::vector<double>(x.begin(), x.begin() + 48) == y);
  rot.apply(x.data(), 3, 1, p, rope::Direction::inverse);
  // Each call is within coordinate_bound of the exact rotation; the second's input pair is the
  // first's output (|a'| + |b'| ≤ √2·(|a| + |b|)) and the first's error is rotated, not grown.
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double pair_abs = std::abs(input[i]) + std::abs(input[i ^ 1]);
    REQUIRE(std::abs(x[i] - input[i]) <= 3 * rope_test::coordinate_bound<double>(pair_abs, 9, 5e5));
  }
}

TEST_CASE("Axes::with_signed_coordinates: the row of −m is the row of m with its sines negated",
          "[multi_axis][signed]") {
  // Against the unsigned call at m with the pair's second coordinate negated on both sides:
  // R(−φ)(a, b) = S·R(φ)·S(a, b), S = diag(1, −1), exactly in floating point (negation is exact).
  for (const rope::Layout layout : {rope::Layout::interleaved, rope::Layout::half_split}) {
    rope::Options o;
    o.head_size = 64;
    o.layout = layout;
    o.max_positions = 30;  // 25 in the table, 4000 past it
    o.axes = rope::Axes::blocks({32, 32}).with_signed_coordinates();
    const rope::Rotary<float> rot(o);
    std::mt19937_64 rng(4300);
    const std::vector<float> input = rope_test::random_vector<float>(4 * 64, rng);
    const std::vector<std::int64_t> negative = {-25, -4000, 0, -25, -25, -25, 4000, -4000};
    const std::vector<std::int64_t> positive = {25, 4000, 0, 25, 25, 25, 4000, 4000};
    const auto flip = [&](std::vector<float> v, const std::vector<std::int64_t>& coordinates) {
      // negate the second coordinate of each pair whose axis coordinate is negative
      for (std::size_t t = 0; t < 4; ++t) {
        for (std::size_t j = 0; j < 32; ++j) {
          const std::size_t axis = j < 16 ? 0 : 1;
          if (coordinates[2 * t + axis] >= 0) continue;
          const std::size_t second = layout == rope::Layout::interleaved ? 2 * j + 1 : 32 + j;
          v[t * 64 + second] = -v[t * 64 + second];
        }
      }
      return v;
    };
    std::vector<float> x = input;
    rot.apply(x.data(), 4, 1, rope::Positions::token_major(negative.data(), 2));
    std::vector<float> y = flip(input, negative);
    rot.apply(y.data(), 4, 1, rope::Positions::token_major(positive.data(), 2));
    INFO(rope::to_string(layout));
    REQUIRE(x == flip(y, negative));
  }
}

TEST_CASE("latent_positions: each model's ids from its grid", "[multi_axis][blocks]") {
  const auto flat = [](const Ids& ids, std::size_t axes) {
    std::vector<std::int64_t> out;
    for (const auto& id : ids) out.insert(out.end(), id.begin(), id.begin() + long(axes));
    return out;
  };
  const auto tail = [](const Ids& ids, std::size_t from, std::size_t count) {
    return Ids(ids.begin() + long(from), ids.begin() + long(from + count));
  };
  // Flux.1: the image after 16 text tokens.
  REQUIRE(rope::latent_positions({1, 64, 64}) == flat(tail(flux_ids(16, 64, 64), 16, 4096), 3));
  // HunyuanVideo and Wan: frames, rows, columns from 0.
  REQUIRE(rope::latent_positions({5, 18, 32}) == flat(video_ids(5, 18, 32), 3));
  // Flux.2: a reference image at t = 10, with the fourth coordinate 0.
  rope::LatentGrid reference{1, 16, 16, 10, false};
  Ids reference_ids = flux_ids(0, 16, 16);
  for (auto& id : reference_ids) id[0] = 10;
  REQUIRE(rope::latent_positions(reference, 4) == flat(reference_ids, 4));
  // Qwen-Image-Edit: two images, centred, at frames 0 and 1 (odd sizes: one more row above 0).
  const Ids qwen = qwen_image_ids({{83, 64}, {40, 31}}, 0);
  std::vector<std::int64_t> both = rope::latent_positions({1, 83, 64, 0, true});
  const std::vector<std::int64_t> second = rope::latent_positions({1, 40, 31, 1, true});
  both.insert(both.end(), second.begin(), second.end());
  REQUIRE(both == flat(qwen, 3));
  REQUIRE(both[1] == -42);  // −(83 − 41)
}

namespace {

// Half_split pairs inside blocks, in float64, for one head of d coordinates: block b is the
// `widths[b]` coordinates after the blocks before it, from `offset`; it rotates by coordinate
// ids[b] with rotate_half inside the block (pairs (i, i + w/2)) and θ_i = bases[b]^(−2i/w), as
// HuggingFace's apply_multidimensional_rope applies Gemma4VisionRotaryEmbedding's cos and sin
// (there: two blocks of w = d/2, one base). Coordinates outside the blocks are kept. Returns the
// result and, per coordinate, |a| + |b| of its pair (0 outside the blocks) for the bound.
std::pair<std::vector<double>, std::vector<double>> blocks_rotate_half(
    const std::vector<double>& x, std::size_t offset, const std::vector<std::size_t>& widths,
    const std::vector<double>& bases, const std::vector<double>& ids, bool inverse) {
  std::vector<double> out = x, pair_abs(x.size(), 0.0);
  std::size_t first = offset;
  for (std::size_t b = 0; b < widths.size(); ++b) {
    const std::size_t w = widths[b], h = w / 2;
    for (std::size_t i = 0; i < w; ++i) {
      const std::size_t k = i % h, e = first + i, partner = first + (i < h ? i + h : i - h);
      const double angle =
          (inverse ? -ids[b] : ids[b]) / std::pow(bases[b], 2.0 * double(k) / double(w));
      const double rotated = i < h ? -x[partner] : x[partner];  // rotate_half
      out[e] = x[e] * std::cos(angle) + rotated * std::sin(angle);
      pair_abs[e] = std::abs(x[e]) + std::abs(x[partner]);
    }
    first += w;
  }
  return {out, pair_abs};
}

// Every head of `got` against blocks_rotate_half of the same head of `input`, each token t at
// coordinates ids[t·count ..], within output_bound<T> at the largest coordinate; the worst ratio.
template <class T>
double worst_blocks_ratio(const std::vector<T>& input, const std::vector<T>& got, std::size_t d,
                          std::size_t heads, std::size_t offset,
                          const std::vector<std::size_t>& widths, const std::vector<double>& bases,
                          const std::vector<std::int64_t>& ids, bool inverse) {
  const std::size_t count = widths.size(), tokens = ids.size() / count;
  const double largest = double(*std::max_element(ids.begin(), ids.end()));
  const double base = *std::max_element(bases.begin(), bases.end());
  rope_test::WorstCoordinate worst;
  for (std::size_t t = 0; t < tokens; ++t) {
    const std::vector<double> at(ids.begin() + long(t * count),
                                 ids.begin() + long((t + 1) * count));
    for (std::size_t h = 0; h < heads; ++h) {
      const std::size_t first = (t * heads + h) * d;
      const std::vector<double> in(input.begin() + long(first), input.begin() + long(first + d));
      const auto [expected, pair_abs] = blocks_rotate_half(in, offset, widths, bases, at, inverse);
      for (std::size_t i = 0; i < d; ++i) {
        const double bound = rope_test::output_bound<T>(pair_abs[i], largest, expected[i], base);
        worst.note(std::abs(double(got[first + i]) - expected[i]), bound, [&](std::ostream& s) {
          s << "token " << t << " head " << h << " coordinate " << i;
        });
      }
    }
  }
  INFO("worst coordinate: " << worst.where());
  return worst.ratio();
}

}  // namespace

TEMPLATE_TEST_CASE("Gemma 4's vision encoder in one pass: rotate_half inside each of two blocks",
                   "[multi_axis][blocks][within]", float, double, Eigen::half, Eigen::bfloat16) {
  // gemma4_vision_options: head 72 = two blocks of 36, block 0 by the patch's x (column), block 1
  // by its y (row), base 100; a 12 × 10 grid of patches in row-major order, (x, y) each, the last
  // one padding at (−1, −1) as the processor marks it (rotated by −θ, as the model does).
  using T = TestType;
  const std::size_t d = 72, heads = 3;
  std::vector<std::int64_t> xy = rope::patch_positions({12, 10, 1, 0, true});
  const std::size_t tokens = xy.size() / 2;
  REQUIRE(xy[2 * 13] == 3);                        // token 13: column 3,
  REQUIRE(xy[2 * 13 + 1] == 1);                    // row 1
  xy[2 * (tokens - 1)] = xy[2 * tokens - 1] = -1;  // a padding patch of pixel_position_ids
  std::mt19937_64 rng(4400);
  const std::vector<T> input = rope_test::random_vector<T>(tokens * heads * d, rng);
  const rope::Rotary<T> rot(rope::gemma4_vision_options(d));
  const rope::Positions at = rope::Positions::token_major(xy.data(), 2);
  for (const rope::Direction direction : {rope::Direction::forward, rope::Direction::inverse}) {
    INFO((direction == rope::Direction::inverse ? "inverse" : "forward"));
    std::vector<T> x = input;
    rot.apply(rope::View<T>::contiguous(x.data(), tokens, heads, d), at, direction);
    REQUIRE(worst_blocks_ratio(input, x, d, heads, 0, {36, 36}, {100.0, 100.0}, xy,
                               direction == rope::Direction::inverse) <= 1.0);
  }
}

TEST_CASE("Gemma 4's vision encoder as docs/multimodal.md writes it", "[multi_axis][docs]") {
  const rope::Rotary<float> vision(rope::gemma4_vision_options(72));  // vision_config.head_dim
  // (x, y) of each patch of a 48 x 64 grid, row by row, as pixel_position_ids gives them
  const std::vector<std::int64_t> xy = rope::patch_positions({48, 64, 1, 0, true});
  const std::size_t patches = xy.size() / 2;
  std::vector<float> queries(patches * 16 * 72, 0.5f);  // 16 heads of 72, after q_norm
  vision.apply(queries.data(), patches, 16, rope::Positions::token_major(xy.data(), 2));

  REQUIRE(patches == 48 * 64);
  // Patch 1 is at x = 1, y = 0: block 0's pair 0, coordinates (0, 18), turns by 1 radian; block
  // 1 (coordinates 36 .. 71) by 0. Patch 64 is at x = 0, y = 1: the other way round.
  const double c = 0.5 * std::cos(1.0), s = 0.5 * std::sin(1.0);
  const auto near = [](float got, double want) {
    return std::abs(double(got) - want) <= rope_test::output_bound<float>(1.0, 1.0, want, 100.0);
  };
  const float* one = queries.data() + 1 * 16 * 72;
  const float* below = queries.data() + 64 * 16 * 72;
  CHECK(near(one[0], c - s));
  CHECK(near(one[18], c + s));
  CHECK((one[36] == 0.5f && one[54] == 0.5f));
  CHECK((below[0] == 0.5f && below[18] == 0.5f));
  CHECK(near(below[36], c - s));
  CHECK(near(below[54], c + s));
}

TEST_CASE("Pairs within blocks: the same bits as one Rotary per block, on every entry point",
          "[multi_axis][blocks][within]") {
  // Each block an ordinary half_split RoPE of its own width and base (rotary_dim and
  // rotary_offset), called with that block's coordinate: the one-pass map must give its bits,
  // in place, out of place, inverse, apply_qk and on 2 threads. Unequal blocks {16, 40} after 4
  // coordinates left alone, bases 100 and 10000, head 64 (a partial slice).
  const std::size_t d = 64, hq = 4, hk = 2, tokens = 37;
  const std::vector<std::size_t> widths = {16, 40};
  const std::vector<double> bases = {100.0, 10000.0};
  rope::Options options;
  options.head_size = d;
  options.rotary_dim = 56;
  options.rotary_offset = 4;
  options.axes = rope::Axes::blocks(widths, bases).with_pairs_within_blocks();
  const rope::Rotary<float> rot(options);
  std::vector<std::int64_t> ids;
  for (std::size_t t = 0; t < tokens; ++t) {
    ids.push_back(std::int64_t(t % 5));
    ids.push_back(std::int64_t(7 * t) + 3);  // rows of the table (max_positions 4096)
  }
  ids[2 * 36 + 1] = 70000;  // one row past the table
  std::mt19937_64 rng(4401);
  const std::vector<float> q0 = rope_test::random_vector<float>(tokens * hq * d, rng);
  const std::vector<float> k0 = rope_test::random_vector<float>(tokens * hk * d, rng);
  const auto by_block = [&](std::vector<float>& x, std::size_t heads, rope::Direction direction) {
    std::size_t offset = options.rotary_offset;
    for (std::size_t b = 0; b < 2; ++b) {
      rope::Options o;
      o.head_size = d;
      o.rotary_dim = widths[b];
      o.rotary_offset = offset;
      o.base = bases[b];
      std::vector<std::int64_t> coordinate(tokens);
      for (std::size_t t = 0; t < tokens; ++t) coordinate[t] = ids[2 * t + b];
      rope::Rotary<float>(o).apply(rope::View<float>::contiguous(x.data(), tokens, heads, d),
                                   coordinate.data(), direction);
      offset += widths[b];
    }
  };
  const rope::Positions at = rope::Positions::token_major(ids.data(), 2);
  for (const rope::Direction direction : {rope::Direction::forward, rope::Direction::inverse}) {
    INFO((direction == rope::Direction::inverse ? "inverse" : "forward"));
    std::vector<float> q_want = q0, k_want = k0;
    by_block(q_want, hq, direction);
    by_block(k_want, hk, direction);
    {
      INFO("in place");
      std::vector<float> q = q0;
      rot.apply(rope::View<float>::contiguous(q.data(), tokens, hq, d), at, direction);
      REQUIRE(rope_test::same_bits(q, q_want));
      REQUIRE(worst_blocks_ratio(q0, q, d, hq, 4, widths, bases, ids,
                                 direction == rope::Direction::inverse) <= 1.0);
    }
    {
      INFO("out of place, 2 threads");
      std::vector<float> q(q0.size());
      rope::Execution two;
      two.threads = 2;
      two.min_bytes_per_thread = 1;
      rot.apply(rope::View<const float>::contiguous(q0.data(), tokens, hq, d),
                rope::View<float>::contiguous(q.data(), tokens, hq, d), at, {direction, {}, two});
      REQUIRE(rope_test::same_bits(q, q_want));
    }
    {
      INFO("apply_qk");
      std::vector<float> q = q0, k = k0;
      rot.apply_qk(rope::View<float>::contiguous(q.data(), tokens, hq, d),
                   rope::View<float>::contiguous(k.data(), tokens, hk, d), at, direction);
      REQUIRE(rope_test::same_bits(q, q_want));
      REQUIRE(rope_test::same_bits(k, k_want));
    }
  }
  {
    INFO("interleaved pairs are inside their blocks either way");
    rope::Options across = options, within = options;
    across.layout = within.layout = rope::Layout::interleaved;
    across.axes = rope::Axes::blocks(widths, bases);
    std::vector<float> a = q0, w = q0;
    rope::Rotary<float>(across).apply(rope::View<float>::contiguous(a.data(), tokens, hq, d), at);
    rope::Rotary<float>(within).apply(rope::View<float>::contiguous(w.data(), tokens, hq, d), at);
    REQUIRE(rope_test::same_bits(a, w));
  }
}
