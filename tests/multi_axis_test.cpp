// Multi-axis RoPE (Options::axes): M-RoPE sectioned (Qwen2-VL, GLM-4.1V) and interleaved
// (Qwen3-VL), 2-D axial vision RoPE (Qwen2-VL's ViT, torchtune) and a custom map (Pixtral),
// against a float64 implementation written here from each model's rule; text tokens against
// ordinary RoPE, bit for bit; every entry point and kind of store; the position helpers against
// get_rope_index's rule and worked examples.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <Eigen/Core>
#include <catch2/catch.hpp>

#include <rope/rope.hpp>

#include "support.hpp"

namespace {

using rope::Direction;
using rope::Layout;
using rope::Positions;
using rope::View;
using AxisCoordinates = std::vector<std::array<std::int64_t, 3>>;  // unused axes are 0

// One convention: the library's configuration, and the same rule written out per pair.
struct Convention {
  std::string name;
  rope::Options options;
  std::size_t axes;
  std::function<std::size_t(std::size_t)> axis;  // pair -> axis
  std::function<double(std::size_t)> theta;      // pair -> θ, float64
};

double theta_of(double base, std::size_t k, std::size_t dim) {
  return std::pow(base, -2.0 * double(k) / double(dim));
}

rope::Options options_of(std::size_t head_size, Layout layout, rope::Axes axes,
                         std::size_t rotary_dim = 0) {
  rope::Options o;
  o.head_size = head_size;
  o.layout = layout;
  o.max_positions = 40;  // some coordinates below fall past the table
  o.rotary_dim = rotary_dim;
  o.axes = std::move(axes);
  return o;
}

std::vector<Convention> conventions() {
  const double base = 10000.0;
  std::vector<Convention> all;
  // Qwen2-VL / Qwen2.5-VL: 128-wide heads, mrope_section [16, 24, 24], half-split.
  all.push_back({"Qwen2-VL sectioned M-RoPE",
                 options_of(128, Layout::half_split, rope::Axes::sections({16, 24, 24})), 3,
                 [](std::size_t i) -> std::size_t { return i < 16   ? 0
                                                           : i < 40 ? 1
                                                                    : 2; },
                 [=](std::size_t i) { return theta_of(base, i, 128); }});
  // GLM-4.1V: partial rotary (half of a 128-wide head), adjacent pairs, sections [8, 12, 12].
  all.push_back({"GLM-4.1V sectioned M-RoPE, interleaved pairs, partial",
                 options_of(128, Layout::interleaved, rope::Axes::sections({8, 12, 12}), 64), 3,
                 [](std::size_t i) -> std::size_t { return i < 8    ? 0
                                                           : i < 20 ? 1
                                                                    : 2; },
                 [=](std::size_t i) { return theta_of(base, i, 64); }});
  // Qwen3-VL: mrope_section [24, 20, 20], interleaved over the pairs, half-split.
  all.push_back({"Qwen3-VL interleaved M-RoPE",
                 options_of(128, Layout::half_split, rope::Axes::mrope_interleaved({24, 20, 20})),
                 3,
                 [](std::size_t i) -> std::size_t {
                   if (i % 3 == 1 && i < 60) return 1;
                   if (i % 3 == 2 && i < 60) return 2;
                   return 0;
                 },
                 [=](std::size_t i) { return theta_of(base, i, 128); }});
  // Qwen2-VL's ViT: 80-wide heads; 20 pairs by the row, then 20 by the column, θ restarting.
  all.push_back({"Qwen2-VL ViT axial", options_of(80, Layout::half_split, rope::Axes::axial()), 2,
                 [](std::size_t i) -> std::size_t { return i < 20 ? 0 : 1; },
                 [=](std::size_t i) { return theta_of(base, i % 20, 40); }});
  // torchtune's vision RoPE: 64-wide heads, adjacent pairs, x (column) block then y block.
  all.push_back({"torchtune axial, interleaved pairs",
                 options_of(64, Layout::interleaved, rope::Axes::axial()), 2,
                 [](std::size_t i) -> std::size_t { return i < 16 ? 0 : 1; },
                 [=](std::size_t i) { return theta_of(base, i % 16, 32); }});
  // Pixtral: rows take the even θ of the whole head, columns the odd ones.
  std::vector<std::uint8_t> axis(32);
  std::vector<std::size_t> index(32);
  for (std::size_t i = 0; i < 32; ++i) {
    axis[i] = i < 16 ? 0 : 1;
    index[i] = i < 16 ? 2 * i : 2 * (i - 16) + 1;
  }
  all.push_back(
      {"Pixtral custom map", options_of(64, Layout::half_split, rope::Axes::custom(2, axis, index)),
       2, [](std::size_t i) -> std::size_t { return i < 16 ? 0 : 1; },
       [=](std::size_t i) { return theta_of(base, i < 16 ? 2 * i : 2 * (i - 16) + 1, 64); }});
  return all;
}

// A head rotated in float64: pair i by coordinate axis(i) times θ(i), cos and sin times f.
std::vector<double> reference_head(const Convention& c, std::vector<double> x,
                                   const std::array<std::int64_t, 3>& p, Direction direction,
                                   double f = 1.0) {
  const std::size_t d = c.options.head_size;
  const std::size_t r = c.options.rotary_dim == 0 ? d : c.options.rotary_dim;
  const std::size_t offset = c.options.rotary_offset;
  const double sign = direction == Direction::forward ? 1.0 : -1.0;
  for (std::size_t i = 0; i < r / 2; ++i) {
    const std::size_t ia = offset + (c.options.layout == Layout::interleaved ? 2 * i : i);
    const std::size_t ib = c.options.layout == Layout::interleaved ? ia + 1 : ia + r / 2;
    const double angle = sign * double(p[c.axis(i)]) * c.theta(i);
    const double a = x[ia], b = x[ib];
    x[ia] = f * (a * std::cos(angle) - b * std::sin(angle));
    x[ib] = f * (b * std::cos(angle) + a * std::sin(angle));
  }
  return x;
}

// Every head of got against the reference rotation of input's, coordinate by coordinate, within
// support.hpp's output_bound at the token's largest coordinate (times f, plus the rounding of
// the products with f in double).
template <class T>
void require_rotation(const Convention& c, View<const T> input, View<const T> got,
                      const AxisCoordinates& p, Direction direction, double f = 1.0) {
  const std::size_t d = c.options.head_size;
  const std::size_t r = c.options.rotary_dim == 0 ? d : c.options.rotary_dim;
  const std::size_t offset = c.options.rotary_offset;
  rope_test::WorstCoordinate worst;
  for (std::size_t t = 0; t < input.tokens(); ++t) {
    const double largest = double(std::max({p[t][0], p[t][1], p[t][2]}));
    for (std::size_t h = 0; h < input.heads(); ++h) {
      const T* in = input.head(t, h);
      const T* out = got.head(t, h);
      const std::vector<double> expected =
          reference_head(c, std::vector<double>(in, in + d), p[t], direction, f);
      for (std::size_t i = 0; i < d; ++i) {
        const std::size_t j = rope_test::partner_index(i, d, c.options.layout, r, offset);
        const double pair_abs = std::abs(double(in[i])) + (j == i ? 0 : std::abs(double(in[j])));
        const double bound =
            f * rope_test::output_bound<T>(pair_abs, largest, expected[i], c.options.base) +
            4 * rope_test::unit_roundoff<double> * f * pair_abs;
        worst.note(std::abs(double(out[i]) - expected[i]), bound, [&](std::ostream& s) {
          s << "token " << t << " head " << h << " coordinate " << i << ": got " << double(out[i])
            << ", reference " << expected[i] << ", bound " << bound;
        });
      }
    }
  }
  INFO(c.name << "; worst coordinate: " << worst.where());
  REQUIRE(worst.ratio() <= 1.0);
}

// A prompt with coordinates inside and past the table (40 positions): text, an image, a video
// whose frames are 3 positions apart, text.
rope::MultimodalPositions prompt() {
  rope::MultimodalPositions p;
  p.text(3).image(4, 5).text(2).video(3, 2, 3, 3.0).text(30);
  return p;
}

// A vision transformer's patches: a 6 × 4 grid in 2 × 2 windows, plus a class token.
std::vector<std::int64_t> patches() {
  rope::PatchGrid grid;
  grid.rows = 6;
  grid.columns = 4;
  grid.merge = 2;
  grid.first = 38;  // rows 38 .. 43: past the table
  return rope::patch_positions(grid, rope::ClassToken::last);
}

// The coordinates of a convention's test tokens, [tokens][axes], and as AxisCoordinates.
std::vector<std::int64_t> coordinates_for(const Convention& c) {
  return c.axes == 3 ? prompt().data() : patches();
}

AxisCoordinates unpack(const std::vector<std::int64_t>& data, std::size_t axes) {
  AxisCoordinates p(data.size() / axes, {0, 0, 0});
  for (std::size_t t = 0; t < p.size(); ++t) {
    for (std::size_t a = 0; a < axes; ++a) p[t][a] = data[t * axes + a];
  }
  return p;
}

// The same coordinates axis-major, as int32.
std::vector<std::int32_t> axis_major_int32(const AxisCoordinates& p, std::size_t axes) {
  std::vector<std::int32_t> out(axes * p.size());
  for (std::size_t t = 0; t < p.size(); ++t) {
    for (std::size_t a = 0; a < axes; ++a) out[a * p.size() + t] = std::int32_t(p[t][a]);
  }
  return out;
}

}  // namespace

TEMPLATE_TEST_CASE("Multi-axis RoPE: every convention and entry point matches the float64 rule",
                   "[multi_axis]", float, double, Eigen::half, Eigen::bfloat16) {
  using T = TestType;
  std::mt19937_64 rng(7);
  for (const Convention& c : conventions()) {
    INFO(c.name);
    const rope::Rotary<T> rot(c.options);
    REQUIRE(rot.axes() == c.axes);
    const std::size_t d = c.options.head_size;
    const std::vector<std::int64_t> data = coordinates_for(c);
    const AxisCoordinates p = unpack(data, c.axes);
    const std::size_t tokens = p.size(), heads = 3, kv_heads = 2;
    const Positions by_token = Positions::token_major(data.data(), c.axes);
    const std::vector<std::int32_t> data32 = axis_major_int32(p, c.axes);
    const Positions by_axis32 = Positions::axis_major(data32.data(), c.axes, tokens);
    const std::vector<T> input = rope_test::random_vector<T>(tokens * heads * d, rng);
    const auto in = View<const T>::contiguous(input.data(), tokens, heads, d);
    for (const Direction dir : {Direction::forward, Direction::inverse}) {
      INFO((dir == Direction::forward ? "forward" : "inverse"));
      {
        INFO("contiguous, in place, int64 [tokens][axes]");
        std::vector<T> x = input;
        rot.apply(x.data(), tokens, heads, by_token, dir);
        require_rotation<T>(c, in, View<const T>::contiguous(x.data(), tokens, heads, d), p, dir);
      }
      {
        INFO("[heads][tokens] view out of place, int32 [axes][tokens], two token ranges");
        std::vector<T> out(tokens * heads * (d + 2));
        const View<T> dst(out.data() + 1, tokens, heads, d + 2, tokens * (d + 2));
        rot.apply(in, dst, by_axis32, {dir, rope::TokenRange{0, 7}});
        rot.apply(in, dst, by_axis32, {dir, rope::TokenRange{7, tokens}});
        require_rotation<T>(c, in, View<const T>(dst), p, dir);
      }
      {
        INFO("strided view in place, 2 threads");
        std::vector<T> x = input;
        rope::Execution two;
        two.threads = 2;
        two.min_bytes_per_thread = 1;
        rot.apply(View<T>::contiguous(x.data(), tokens, heads, d), by_token, {dir, {}, two});
        require_rotation<T>(c, in, View<const T>::contiguous(x.data(), tokens, heads, d), p, dir);
      }
      {
        INFO("out of place with streaming stores");
        std::vector<T> storage(tokens * heads * d + 64);
        void* raw = storage.data();
        std::size_t space = storage.size() * sizeof(T);
        T* aligned = static_cast<T*>(std::align(64, tokens * heads * d * sizeof(T), raw, space));
        rope::Execution streaming;
        streaming.streaming_stores = true;
        const auto dst = View<T>::contiguous(aligned, tokens, heads, d);
        rot.apply(in, dst, by_token, {dir, rope::TokenRange{0, tokens}, streaming});
        require_rotation<T>(c, in, View<const T>(dst), p, dir);
      }
      {
        INFO("fused q/k in a [tokens][q | k] buffer; checked, then unchecked");
        const std::size_t stride = (heads + kv_heads) * d;
        const std::vector<T> fused = rope_test::random_vector<T>(tokens * stride, rng);
        std::vector<T> checked = fused, unchecked = fused;
        const auto q = [&](std::vector<T>& v) {
          return View<T>(v.data(), tokens, heads, stride, d);
        };
        const auto k = [&](std::vector<T>& v) {
          return View<T>(v.data() + heads * d, tokens, kv_heads, stride, d);
        };
        rot.apply_qk(q(checked), k(checked), by_axis32, dir);
        rot.apply_qk(rope::unchecked, rope::Queries(q(unchecked)), rope::Keys(k(unchecked)),
                     by_token, {dir, rope::TokenRange{0, tokens}});
        REQUIRE(checked == unchecked);
        const View<const T> q_in(fused.data(), tokens, heads, stride, d);
        const View<const T> k_in(fused.data() + heads * d, tokens, kv_heads, stride, d);
        require_rotation<T>(c, q_in, View<const T>(q(checked)), p, dir);
        require_rotation<T>(c, k_in, View<const T>(k(checked)), p, dir);
      }
    }
  }
}

TEST_CASE("Multi-axis RoPE: text tokens are rotated exactly as ordinary RoPE rotates them",
          "[multi_axis]") {
  std::mt19937_64 rng(11);
  for (const Convention& c : conventions()) {
    if (c.axes != 3) continue;  // M-RoPE: its θ are those of ordinary RoPE
    INFO(c.name);
    rope::Options plain = c.options;
    plain.axes = rope::Axes();
    const rope::Rotary<Eigen::half> multi(c.options), ordinary(plain);
    const std::size_t d = c.options.head_size, heads = 2;
    const rope::MultimodalPositions p = prompt();  // text at 0..2, 8..9 and 17..46
    const std::size_t tokens = p.size();
    const std::vector<Eigen::half> input =
        rope_test::random_vector<Eigen::half>(tokens * heads * d, rng);
    std::vector<Eigen::half> x = input;
    multi.apply(x.data(), tokens, heads, p.positions());
    std::size_t text_tokens = 0;
    for (std::size_t t = 0; t < tokens; ++t) {
      const std::int64_t* m = p.data().data() + 3 * t;
      if (m[0] != m[1] || m[0] != m[2]) continue;
      ++text_tokens;
      std::vector<Eigen::half> y(input.begin() + long(t * heads * d),
                                 input.begin() + long((t + 1) * heads * d));
      ordinary.apply(y.data(), 1, heads, rope::Positions::consecutive(m[0]));
      REQUIRE(std::equal(y.begin(), y.end(), x.begin() + long(t * heads * d)));
    }
    REQUIRE(text_tokens == 37);  // 35 text tokens, and the first token of the image and video
    // The 1-D entry points of a multi-axis Rotary rotate every axis by the same position.
    std::vector<float> a = rope_test::random_vector<float>(50 * heads * d, rng), b = a;
    rope::Options plain_float = plain, multi_float = c.options;
    rope::Rotary<float>(multi_float).apply(a.data(), 50, heads, rope::Positions::consecutive(7));
    rope::Rotary<float>(plain_float).apply(b.data(), 50, heads, rope::Positions::consecutive(7));
    REQUIRE(a == b);
  }
}

TEST_CASE("Multi-axis RoPE: the inverse undoes the forward rotation, with YaRN's factor",
          "[multi_axis]") {
  std::mt19937_64 rng(5);
  rope::Yarn yarn;
  yarn.factor = 4;
  yarn.original_max_position_embeddings = 32;
  for (Convention c : conventions()) {
    INFO(c.name);
    c.options.scaling = yarn;
    const rope::Rotary<double> rot(c.options);
    const double f = rot.attention_factor();
    REQUIRE(f > 1.0);
    const std::vector<std::int64_t> data = coordinates_for(c);
    const std::size_t d = c.options.head_size, tokens = data.size() / c.axes;
    const std::vector<double> input = rope_test::random_vector<double>(tokens * d, rng);
    std::vector<double> x = input;
    const Positions p = Positions::token_major(data.data(), c.axes);
    rot.apply(x.data(), tokens, 1, p);
    rot.apply(x.data(), tokens, 1, p, Direction::inverse);
    // R^T·f·(R·f·x) = f²·x on the rotated coordinates (the others pass through): each within
    // 2 rotations' rounding, γ_3 per pass on a pair's |a| + |b| ≤ 2 (inputs in [-1, 1]); the
    // same angle on both passes cancels exactly.
    double worst = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
      const bool rotated = rope_test::partner_index(i, d, c.options.layout, rot.rotary_dim(),
                                                    rot.rotary_offset()) != i;
      worst = std::max(worst, std::abs(x[i] - (rotated ? f * f : 1.0) * input[i]));
    }
    REQUIRE(worst <= 2 * 2 * f * f * rope_test::gamma<double>(4));
  }
}

TEST_CASE(
    "Multi-axis RoPE: YaRN applies to the whole rotary dimension of M-RoPE and to each "
    "block of axial RoPE",
    "[multi_axis]") {
  rope::Yarn yarn;
  yarn.factor = 8;
  yarn.original_max_position_embeddings = 4096;
  rope::Options o = options_of(128, Layout::half_split, rope::Axes::sections({16, 24, 24}));
  o.scaling = yarn;
  const rope::Frequencies whole = rope::frequencies(128, 10000.0, yarn);
  REQUIRE(rope::Rotary<float>(o).inverse_frequencies() == whole.theta);
  REQUIRE(rope::Rotary<float>(o).attention_factor() == whole.attention_factor);
  o.axes = rope::Axes::axial();
  const rope::Frequencies block = rope::frequencies(64, 10000.0, yarn);
  std::vector<double> both = block.theta;
  both.insert(both.end(), block.theta.begin(), block.theta.end());
  REQUIRE(rope::Rotary<float>(o).inverse_frequencies() == both);
  // and the rotation uses them: the float64 rule with these θ and the factor
  std::mt19937_64 rng(9);
  const Convention axial{"axial with YaRN", o, 2,
                         [](std::size_t i) -> std::size_t { return i < 32 ? 0 : 1; },
                         [&](std::size_t i) { return block.theta[i % 32]; }};
  const std::vector<std::int64_t> data = patches();
  const AxisCoordinates p = unpack(data, 2);
  const std::vector<float> input = rope_test::random_vector<float>(p.size() * 128, rng);
  std::vector<float> x = input;
  rope::Rotary<float>(o).apply(x.data(), p.size(), 1, Positions::token_major(data.data(), 2));
  require_rotation<float>(axial, View<const float>::contiguous(input.data(), p.size(), 1, 128),
                          View<const float>::contiguous(x.data(), p.size(), 1, 128), p,
                          Direction::forward, block.attention_factor);
}

TEST_CASE("Multi-axis RoPE: the maps of each convention", "[multi_axis]") {
  // Qwen3-VL: the temporal axis keeps every third pair and the last 4, 24 in all.
  const std::vector<std::uint8_t> qwen3 =
      rope::Axes::mrope_interleaved({24, 20, 20}).axis_of_pairs(64);
  REQUIRE(std::count(qwen3.begin(), qwen3.end(), 0) == 24);
  REQUIRE(std::vector<std::uint8_t>(qwen3.begin(), qwen3.begin() + 6) ==
          std::vector<std::uint8_t>{0, 1, 2, 0, 1, 2});
  REQUIRE(std::vector<std::uint8_t>(qwen3.end() - 5, qwen3.end()) ==
          std::vector<std::uint8_t>{2, 0, 0, 0, 0});
  // Qwen2-VL's ViT block θ_j = base^(−2j/(d/2)) is θ_{2j} of the whole head: the axial map is
  // the custom map with even θ indices, bit for bit.
  std::vector<std::uint8_t> axis(40);
  std::vector<std::size_t> index(40);
  for (std::size_t i = 0; i < 40; ++i) {
    axis[i] = i < 20 ? 0 : 1;
    index[i] = 2 * (i % 20);
  }
  rope::Options axial = options_of(80, Layout::half_split, rope::Axes::axial());
  rope::Options custom = options_of(80, Layout::half_split, rope::Axes::custom(2, axis, index));
  REQUIRE(rope::Rotary<float>(axial).inverse_frequencies() ==
          rope::Rotary<float>(custom).inverse_frequencies());
  REQUIRE(rope::Rotary<float>(custom).axis_of_pairs() == axis);
}

TEST_CASE("MultimodalPositions: Qwen2-VL's get_rope_index rule, and a worked example",
          "[multi_axis]") {
  // Worked by hand: 2 text tokens, a 2 × 2 image, 1 text token.
  rope::MultimodalPositions small;
  small.text(2).image(2, 2).text(1);
  REQUIRE(small.data() ==
          std::vector<std::int64_t>{0, 0, 0, 1, 1, 1, 2, 2, 2, 2, 2, 3, 2, 3, 2, 2, 3, 3, 4, 4, 4});
  REQUIRE(small.next() == 5);
  // The rule, block by block: the block starts one past the largest coordinate so far; a vision
  // block adds (t, h, w) grid indices to that start.
  struct Block {
    std::size_t text, frames, rows, columns;
    double interval;
  };
  const std::vector<Block> blocks = {{4, 0, 0, 0, 0},   {0, 1, 3, 7, 1}, {2, 0, 0, 0, 0},
                                     {0, 5, 2, 2, 2.5}, {0, 9, 2, 3, 1}, {3, 0, 0, 0, 0}};
  rope::MultimodalPositions built;
  std::vector<std::int64_t> expected;
  std::int64_t largest = -1;
  for (const Block& b : blocks) {
    const std::int64_t start = largest + 1;
    if (b.text > 0) {
      built.text(b.text);
      for (std::size_t k = 0; k < b.text; ++k) {
        for (int a = 0; a < 3; ++a) expected.push_back(start + std::int64_t(k));
      }
      largest = start + std::int64_t(b.text) - 1;
      continue;
    }
    built.video(b.frames, b.rows, b.columns, b.interval);
    for (std::size_t f = 0; f < b.frames; ++f) {
      for (std::size_t r = 0; r < b.rows; ++r) {
        for (std::size_t col = 0; col < b.columns; ++col) {
          const std::int64_t t = std::int64_t(double(f) * b.interval);  // truncation, as .long()
          for (const std::int64_t v :
               {start + t, start + std::int64_t(r), start + std::int64_t(col)}) {
            expected.push_back(v);
            largest = std::max(largest, v);
          }
        }
      }
    }
  }
  REQUIRE(built.data() == expected);
  REQUIRE(built.next() == largest + 1);
  REQUIRE(built.size() == expected.size() / 3);
}

TEST_CASE("patch_positions: Qwen2-VL's window order and torchtune's class token", "[multi_axis]") {
  // Qwen2-VL's rot_pos_emb: the row index of a rows × columns grid, reshaped to
  // [rows/m][m][columns/m][m], permuted to [rows/m][columns/m][m][m] and flattened.
  rope::PatchGrid grid;
  grid.rows = 4;
  grid.columns = 6;
  grid.merge = 2;
  std::vector<std::int64_t> expected;
  for (std::size_t a = 0; a < 2; ++a) {
    for (std::size_t b = 0; b < 3; ++b) {
      for (std::size_t c = 0; c < 2; ++c) {
        for (std::size_t e = 0; e < 2; ++e) {
          expected.push_back(std::int64_t(2 * a + c));  // row
          expected.push_back(std::int64_t(2 * b + e));  // column
        }
      }
    }
  }
  REQUIRE(rope::patch_positions(grid) == expected);
  // torchtune: x = column + 1 first, then y = row + 1; the class token at (0, 0).
  rope::PatchGrid tune;
  tune.rows = 2;
  tune.columns = 3;
  tune.first = 1;
  tune.column_first = true;
  REQUIRE(rope::patch_positions(tune, rope::ClassToken::first) ==
          std::vector<std::int64_t>{0, 0, 1, 1, 2, 1, 3, 1, 1, 2, 2, 2, 3, 2});
  // The class token is not rotated: cos 0 = 1 and sin 0 = 0 exactly.
  std::mt19937_64 rng(2);
  const rope::Rotary<float> rot(options_of(64, Layout::interleaved, rope::Axes::axial()));
  const std::vector<std::int64_t> p = rope::patch_positions(tune, rope::ClassToken::last);
  const std::size_t tokens = p.size() / 2;
  const std::vector<float> input = rope_test::random_vector<float>(tokens * 64, rng);
  std::vector<float> x = input;
  rot.apply(x.data(), tokens, 1, Positions::token_major(p.data(), 2));
  REQUIRE(std::equal(x.end() - 64, x.end(), input.end() - 64));
  REQUIRE(!std::equal(x.begin(), x.begin() + 64, input.begin()));
}
