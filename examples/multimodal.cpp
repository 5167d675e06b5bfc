// M-RoPE for a vision-language model (Qwen2-VL's layout): a prompt of text, an image and text
// gets (temporal, height, width) coordinates, and each pair of a head rotates by one of them.
// Prints the coordinates, and checks two claims, exiting non-zero if either fails:
//  1. a text token (all coordinates equal) is rotated exactly as ordinary RoPE rotates it;
//  2. a query-key score depends only on the differences of the coordinates: moving both tokens
//     by the same amount along any axis leaves it unchanged, up to rounding.
// Then an image diffusion transformer (Flux.1) and a video one (Wan): blocks of the head per axis,
// θ restarting in each; the same score claim for their (frame, row, column) coordinates.
// Writes multimodal.svg, which pairs take which axis in seven models, into the directory given as
// the first argument (default: the current one).
#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include <rope/rope.hpp>

namespace {

// One strip of the picture: a model's map of pairs to axes, drawn from the library's Rotary.
void draw_strip(std::ofstream& svg, const char* name, const rope::Options& options, double y) {
  const rope::Rotary<float> rot(options);
  const std::vector<std::uint8_t>& axis = rot.axis_of_pairs();
  const char* colour[] = {"#4e79a7", "#f28e2b", "#59a14f"};
  const double left = 260, width = 640.0 / double(axis.size());
  svg << "<g data-model=\"" << name << "\">\n"
      << "<text x=\"10\" y=\"" << y + 15 << "\">" << name << "</text>\n";
  for (std::size_t i = 0; i < axis.size(); ++i) {
    svg << "<rect data-axis=\"" << int(axis[i]) << "\" x=\"" << left + double(i) * width
        << "\" y=\"" << y << "\" width=\"" << width << "\" height=\"20\" fill=\"" << colour[axis[i]]
        << "\" stroke=\"white\" stroke-width=\"0.5\"/>\n";
  }
  svg << "</g>\n";
}

// The score of a query at pq and a key at pk (one head each, random), and again with both moved
// by `move`: equal up to rounding. Each rotated head is within 2·γ_3(float)·‖x‖ of exact
// (docs/numerics.md), so each score is within (4·γ_3 + 4·γ_3²)·‖q‖·‖k‖ of exact.
bool score_moves(const rope::Rotary<float>& rot, std::array<std::int64_t, 3> pq,
                 std::array<std::int64_t, 3> pk, std::array<std::int64_t, 3> move,
                 std::mt19937& rng) {
  const std::size_t d = rot.head_size();
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<float> q(d), k(d);
  for (float& v : q) v = uniform(rng);
  for (float& v : k) v = uniform(rng);
  const auto score = [&](std::array<std::int64_t, 3> at_q, std::array<std::int64_t, 3> at_k) {
    std::vector<float> a = q, b = k;
    rot.apply(a.data(), 1, 1, rope::Positions::token_major(at_q.data(), 3));
    rot.apply(b.data(), 1, 1, rope::Positions::token_major(at_k.data(), 3));
    double s = 0;
    for (std::size_t i = 0; i < d; ++i) s += double(a[i]) * double(b[i]);
    return s;
  };
  const double before = score(pq, pk);
  for (std::size_t a = 0; a < 3; ++a) {
    pq[a] += move[a];
    pk[a] += move[a];
  }
  const double after = score(pq, pk);
  double qq = 0, kk = 0;
  for (std::size_t i = 0; i < d; ++i) {
    qq += double(q[i]) * double(q[i]);
    kk += double(k[i]) * double(k[i]);
  }
  const double u = std::ldexp(1.0, -24), gamma3 = 3 * u / (1 - 3 * u);
  const double tolerance = 2 * (2 * 2 * gamma3 + 2 * gamma3 * 2 * gamma3) * std::sqrt(qq * kk);
  std::printf("score before the move %.9f, after %.9f, |difference| %.3g <= %.3g: %s\n", before,
              after, std::abs(after - before), tolerance,
              std::abs(after - before) <= tolerance ? "yes" : "NO");
  return std::abs(after - before) <= tolerance;
}

// Flux.1: 24 heads of 128, 8 text tokens and a 6 × 8 grid of the packed latent's patches.
bool flux_image(std::mt19937& rng) {
  rope::Options flux;  // Flux.1: 24 heads of 128
  flux.head_size = 128;
  flux.layout = rope::Layout::interleaved;
  flux.axes = rope::Axes::blocks({16, 56, 56});
  const rope::Rotary<float> rot(flux);
  std::vector<std::int64_t> grid(8 * 3, 0);  // text tokens: (0, 0, 0)
  for (std::int64_t row = 0; row < 6; ++row) {
    for (std::int64_t column = 0; column < 8; ++column) grid.insert(grid.end(), {0, row, column});
  }
  const std::int64_t* ids = grid.data();
  const std::size_t tokens = grid.size() / 3;
  std::vector<float> queries(tokens * 24 * 128, 0.5f);
  float* q = queries.data();
  // ids: [tokens][3], (0, 0, 0) for text, (0, row, column) for the packed latent's patches
  rot.apply(q, tokens, 24, rope::Positions::token_major(ids, 3));
  const bool text_unrotated = std::all_of(q, q + 8 * 24 * 128, [](float v) { return v == 0.5f; });
  std::printf("Flux.1: %zu tokens; text tokens (position 0) unrotated: %s\n", tokens,
              text_unrotated ? "yes" : "NO");
  // A patch at (row 4, column 1) against one at (row 2, column 6), both moved 3 rows down and 9
  // columns right: a larger image's patches see the same offsets.
  return score_moves(rot, {0, 4, 1}, {0, 2, 6}, {0, 3, 9}, rng) && text_unrotated;
}

// Wan 2.x: heads of 128, blocks of 44, 42 and 42 coordinates for (frame, row, column).
bool wan_video(std::mt19937& rng) {
  rope::Options wan;
  wan.head_size = 128;
  wan.layout = rope::Layout::interleaved;
  wan.axes = rope::Axes::blocks({44, 42, 42});
  const rope::Rotary<float> rot(wan);
  std::printf("Wan: pairs per axis");
  for (std::size_t a = 0; a < 3; ++a) {
    const std::vector<std::uint8_t>& axis = rot.axis_of_pairs();
    std::printf(" %zu", std::size_t(std::count(axis.begin(), axis.end(), std::uint8_t(a))));
  }
  std::printf("\n");
  // Frame 3, row 5, column 7 against frame 1, row 5, column 2; moved 10 frames on.
  return score_moves(rot, {3, 5, 7}, {1, 5, 2}, {10, 0, 0}, rng);
}

rope::Options model(std::size_t head_size, rope::Layout layout, rope::Axes axes) {
  rope::Options options;
  options.head_size = head_size;
  options.layout = layout;
  options.axes = std::move(axes);
  return options;
}

void write_picture(const std::string& dir) {
  using rope::Axes;
  using rope::Layout;
  std::vector<std::uint8_t> pixtral(32);
  std::vector<std::size_t> pixtral_theta(32);
  for (std::size_t i = 0; i < 32; ++i) {
    pixtral[i] = i < 16 ? 0 : 1;
    pixtral_theta[i] = i < 16 ? 2 * i : 2 * (i - 16) + 1;
  }
  std::ofstream svg(dir + "/multimodal.svg");
  svg << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"920\" height=\"320\" "
      << "font-family=\"sans-serif\" font-size=\"13\">\n"
      << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      << "<text x=\"10\" y=\"20\" font-size=\"15\">The axis each pair rotates by, pair 0 on the "
      << "left (θ order)</text>\n";
  draw_strip(svg, "Qwen2-VL {16, 24, 24}",
             model(128, Layout::half_split, Axes::sections({16, 24, 24})), 40);
  draw_strip(svg, "Qwen3-VL {24, 20, 20}",
             model(128, Layout::half_split, Axes::mrope_interleaved({24, 20, 20})), 75);
  draw_strip(svg, "Qwen2-VL ViT (80): θ restarts", model(80, Layout::half_split, Axes::axial()),
             110);
  draw_strip(svg, "torchtune (64): θ restarts", model(64, Layout::interleaved, Axes::axial()), 145);
  draw_strip(svg, "Pixtral (64): even θ | odd θ",
             model(64, Layout::half_split, Axes::custom(2, pixtral, pixtral_theta)), 180);
  draw_strip(svg, "Flux.1 {16, 56, 56}: θ restarts",
             model(128, Layout::interleaved, Axes::blocks({16, 56, 56})), 215);
  draw_strip(svg, "Wan {44, 42, 42}: θ restarts",
             model(128, Layout::interleaved, Axes::blocks({44, 42, 42})), 250);
  svg << "<rect x=\"260\" y=\"288\" width=\"14\" height=\"14\" fill=\"#4e79a7\"/>"
      << "<text x=\"280\" y=\"300\">axis 0: temporal / row (torchtune: column)</text>\n"
      << "<rect x=\"560\" y=\"288\" width=\"14\" height=\"14\" fill=\"#f28e2b\"/>"
      << "<text x=\"580\" y=\"300\">axis 1: height / column</text>\n"
      << "<rect x=\"760\" y=\"288\" width=\"14\" height=\"14\" fill=\"#59a14f\"/>"
      << "<text x=\"780\" y=\"300\">axis 2: width</text>\n</svg>\n";
}

}  // namespace

int main(int argc, char** argv) {
  const std::string dir = argc > 1 ? argv[1] : ".";
  constexpr std::size_t d = 128, heads = 2;

  rope::Options options;
  options.head_size = d;
  options.base = 1000000.0;  // Qwen2-VL's rope_theta
  options.axes = rope::Axes::sections({16, 24, 24});
  const rope::Rotary<float> rot(options);

  rope::MultimodalPositions prompt;
  prompt.text(4).image(3, 4).text(3);  // 4 + 12 + 3 tokens
  std::printf("token  (t, h, w)\n");
  for (std::size_t t = 0; t < prompt.size(); ++t) {
    const std::int64_t* p = prompt.data().data() + 3 * t;
    std::printf("%5zu  (%lld, %lld, %lld)\n", t, static_cast<long long>(p[0]),
                static_cast<long long>(p[1]), static_cast<long long>(p[2]));
  }
  std::printf("next text position: %lld\n", static_cast<long long>(prompt.next()));

  std::mt19937 rng(1);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<float> x(prompt.size() * heads * d);
  for (float& v : x) v = uniform(rng);
  const std::vector<float> input = x;
  rot.apply(x.data(), prompt.size(), heads, prompt.positions());

  // Claim 1: the 4 + 3 text tokens, against ordinary RoPE with the same options.
  rope::Options text_only = options;
  text_only.axes = rope::Axes();
  const rope::Rotary<float> ordinary(text_only);
  bool ok = true;
  for (const std::size_t t : {0U, 1U, 2U, 3U, 16U, 17U, 18U}) {
    std::vector<float> y(input.begin() + long(t * heads * d),
                         input.begin() + long((t + 1) * heads * d));
    ordinary.apply(y.data(), 1, heads, rope::Positions::consecutive(prompt.data()[3 * t]));
    ok = ok && std::equal(y.begin(), y.end(), x.begin() + long(t * heads * d));
  }
  std::printf("text tokens equal ordinary RoPE bit for bit: %s\n", ok ? "yes" : "NO");

  // Claim 2: a query at (t, h, w) = (9, 11, 7) and a key at (4, 6, 9), then both moved by
  // (+5, −3, +20). Each pair sees R_{p}ᵀR_{p'} = R_{p'−p} along its own axis, so the score is the
  // same.
  ok = score_moves(rot, {9, 11, 7}, {4, 6, 9}, {5, -3, 20}, rng) && ok;

  ok = flux_image(rng) && ok;
  ok = wan_video(rng) && ok;
  write_picture(dir);
  return ok ? 0 : 1;
}
