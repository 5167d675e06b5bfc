// Pairs with θ_j = 0 (proportional RoPE, Gemma 4's full-attention layers) do not rotate: their
// coordinates come out bit for bit as they went in, whatever their values, in every layout, type
// and entry point; the other pairs rotate as in the float64 reference. Llama 3 scaling with
// equal low and high frequency factors (Llama 4), on both sides of its one boundary wavelength.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
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

// HuggingFace's _compute_proportional_rope_parameters, written out in double: of head_dim/2
// pairs, the first int(partial_rotary_factor * head_dim // 2) take 1 / base^(2j/head_dim), the
// others 0; all divided by factor.
std::vector<double> hf_proportional(std::size_t head_dim, double base, double partial,
                                    double factor) {
  const auto rope_angles = static_cast<std::size_t>(std::floor(partial * double(head_dim) / 2));
  std::vector<double> inv_freq(head_dim / 2, 0.0);
  for (std::size_t j = 0; j < rope_angles; ++j) {
    inv_freq[j] = 1.0 / std::pow(base, double(2 * j) / double(head_dim));
  }
  for (double& t : inv_freq) t /= factor;
  return inv_freq;
}

// The coordinates of pair j of a head of d in a layout.
std::size_t first_of(std::size_t j, std::size_t, Layout layout) {
  return layout == Layout::interleaved ? 2 * j : j;
}
std::size_t second_of(std::size_t j, std::size_t d, Layout layout) {
  return layout == Layout::interleaved ? 2 * j + 1 : j + d / 2;
}

// Values that any arithmetic on a pair would change: signed zeros, infinities, NaN, the
// smallest subnormal, the largest finite value.
template <class T>
std::vector<T> fragile_values() {
  using L = std::numeric_limits<T>;
  return {T(-0.0),  L::infinity(), -L::infinity(), L::quiet_NaN(), L::denorm_min(),
          L::max(), T(0.0),        -L::max(),      T(-1.5),        L::lowest()};
}

// Random heads whose non-rotating pairs hold fragile_values().
template <class T>
std::vector<T> input_heads(std::size_t tokens, std::size_t heads, std::size_t d,
                           std::size_t rotating, Layout layout, std::mt19937_64& rng) {
  std::vector<T> x = rope_test::random_vector<T>(tokens * heads * d, rng);
  const std::vector<T> fragile = fragile_values<T>();
  std::size_t k = 0;
  for (std::size_t n = 0; n < tokens * heads; ++n) {
    for (std::size_t j = rotating; j < d / 2; ++j) {
      x[n * d + first_of(j, d, layout)] = fragile[k++ % fragile.size()];
      x[n * d + second_of(j, d, layout)] = fragile[k++ % fragile.size()];
    }
  }
  return x;
}

// Every head of got: the non-rotating pairs bit for bit those of input, the rotating ones the
// float64 reference's rotation of input's (θ_j = base^(−2j/d), the pairs of the whole head).
template <class T>
void require_proportional(const std::vector<T>& input, const std::vector<T>& got, std::size_t d,
                          std::size_t rotating, Layout layout, double base,
                          const std::vector<std::int64_t>& positions, Direction direction) {
  const std::size_t heads = input.size() / d / positions.size();
  std::size_t changed = 0;
  rope_test::WorstCoordinate worst;
  for (std::size_t t = 0; t < positions.size(); ++t) {
    for (std::size_t h = 0; h < heads; ++h) {
      const T* in = input.data() + (t * heads + h) * d;
      const T* out = got.data() + (t * heads + h) * d;
      std::vector<double> head(in, in + d);
      const std::vector<double> expected =
          rope_test::reference_head(head, layout, positions[t], direction, base);
      for (std::size_t j = 0; j < d / 2; ++j) {
        for (const std::size_t i : {first_of(j, d, layout), second_of(j, d, layout)}) {
          if (j >= rotating) {
            if (std::memcmp(in + i, out + i, sizeof(T)) != 0) ++changed;
            continue;
          }
          const double pair_abs = std::abs(double(in[first_of(j, d, layout)])) +
                                  std::abs(double(in[second_of(j, d, layout)]));
          const double bound =
              rope_test::output_bound<T>(pair_abs, double(positions[t]), expected[i], base);
          worst.note(std::abs(double(out[i]) - expected[i]), bound, [&](std::ostream& s) {
            s << "token " << t << " head " << h << " coordinate " << i << ": got " << double(out[i])
              << ", reference " << expected[i];
          });
        }
      }
    }
  }
  CHECK(changed == 0);
  INFO("worst rotating coordinate: " << worst.where());
  CHECK(worst.ratio() <= 1.0);
}

template <class R>
void check_entry_points(const R& rot, std::size_t rotating, std::mt19937_64& rng) {
  using T = typename R::Scalar;
  const std::size_t d = rot.head_size(), tokens = 4, heads = 3;
  const Layout layout = rot.layout();
  // The last two positions are past the table: their rows are computed on the fly.
  const std::vector<std::int64_t> positions = {0, 5, std::int64_t(rot.max_positions()) + 3, 100000};
  const std::vector<T> input = input_heads<T>(tokens, heads, d, rotating, layout, rng);
  for (const Direction dir : {Direction::forward, Direction::inverse}) {
    INFO((dir == Direction::forward ? "forward" : "inverse"));
    {
      INFO("in place");
      std::vector<T> x = input;
      rot.apply(x.data(), tokens, heads, positions.data(), dir);
      require_proportional(input, x, d, rotating, layout, rot.base(), positions, dir);
    }
    {
      INFO("out of place: the pairs that do not rotate are copied");
      std::vector<T> y(input.size(), T(-7));
      rot.apply(rope_test::contiguous(input.data(), tokens, heads, d),
                rope_test::contiguous(y.data(), tokens, heads, d), positions.data(), dir);
      require_proportional(input, y, d, rotating, layout, rot.base(), positions, dir);
    }
    {
      INFO("q and k in one call");
      std::vector<T> q = input, k(input.begin(), input.begin() + std::ptrdiff_t(tokens * d));
      const std::vector<T> k_in = k;
      rot.apply_qk(View<T>::contiguous(q.data(), tokens, heads, d),
                   View<T>::contiguous(k.data(), tokens, 1, d), positions.data(), dir);
      require_proportional(input, q, d, rotating, layout, rot.base(), positions, dir);
      require_proportional(k_in, k, d, rotating, layout, rot.base(), positions, dir);
    }
    {
      INFO("one head as an Eigen vector");
      using Vector = Eigen::Matrix<T, Eigen::Dynamic, 1>;
      const Vector head = Eigen::Map<const Vector>(input.data(), Eigen::Index(d));
      const Vector got = rot.rotated(head, 77, dir);
      require_proportional(std::vector<T>(input.begin(), input.begin() + std::ptrdiff_t(d)),
                           std::vector<T>(got.data(), got.data() + d), d, rotating, layout,
                           rot.base(), {77}, dir);
    }
  }
  {
    INFO("shift by 9 positions: the keys of positions 0 .. tokens-1 become those of 9 ..");
    std::vector<T> k(input.begin(), input.begin() + std::ptrdiff_t(tokens * d));
    const std::vector<T> k_in = k;
    rot.shift(View<T>::contiguous(k.data(), tokens, 1, d), 9);
    require_proportional(k_in, k, d, rotating, layout, rot.base(), {9, 9, 9, 9},
                         Direction::forward);
  }
}

template <class T, int Dim>
void check_type(std::size_t d, double partial, std::mt19937_64& rng) {
  const auto rotating = static_cast<std::size_t>(std::floor(partial * double(d) / 2));
  for (const Layout layout : {Layout::half_split, Layout::interleaved}) {
    INFO(rope::to_string(layout) << ", d " << d << ", partial_rotary_factor " << partial << ", "
                                 << rotating << " of " << d / 2 << " pairs rotate");
    rope::Options options{d, 1e6, layout, 64};
    options.scaling = rope::Proportional{partial, 1.0};
    const rope::Rotary<T> dynamic(options);
    REQUIRE(dynamic.inverse_frequencies().size() == d / 2);
    REQUIRE(dynamic.table().head_size() == 2 * rotating);  // no entries for θ = 0
    check_entry_points(dynamic, rotating, rng);
    if constexpr (Dim != Eigen::Dynamic) {
      INFO("fixed Dim");
      check_entry_points(rope::Rotary<T, Dim>(options), rotating, rng);
    }
  }
}

}  // namespace

TEST_CASE("Proportional: theta as HuggingFace's _compute_proportional_rope_parameters",
          "[scaling][proportional]") {
  struct Case {
    const char* name;
    std::size_t head_dim;
    double base, partial, factor;
  };
  const Case cases[] = {{"Gemma 4 full attention", 512, 1e6, 0.25, 1.0},
                        {"a quarter of a 256 head, factor 8", 256, 1e6, 0.25, 8.0},
                        {"0.3 of 128: 19.2 pairs, 19 rotate", 128, 10000.0, 0.3, 1.0},
                        {"the whole head", 128, 10000.0, 1.0, 2.0},
                        {"no pair rotates", 64, 10000.0, 0.0, 1.0}};
  for (const Case& c : cases) {
    INFO(c.name);
    const std::vector<double> expected = hf_proportional(c.head_dim, c.base, c.partial, c.factor);
    const rope::Frequencies got =
        rope::frequencies(c.head_dim, c.base, rope::Proportional{c.partial, c.factor});
    REQUIRE(got.theta.size() == expected.size());
    CHECK(got.attention_factor == 1.0);
    // Both sides round base^x (x = 2j/d, itself rounded in the transcription), a division by
    // factor, and the transcription's reciprocal: (2·ln(base) + 8)·u relative, as in support.hpp.
    const double relative =
        (2 * std::log(c.base) + rope_test::kAngleRoundings) * rope_test::unit_roundoff<double>;
    for (std::size_t j = 0; j < expected.size(); ++j) {
      INFO("pair " << j);
      if (expected[j] == 0.0) {
        CHECK(got.theta[j] == 0.0);
      } else {
        CHECK(std::abs(got.theta[j] - expected[j]) <= relative * expected[j]);
      }
    }
  }
  // Gemma 4: 64 of 256 pairs rotate, half_split over the whole head (pairs (j, j + 256)).
  const rope::Frequencies gemma4 = rope::frequencies(512, 1e6, rope::Proportional{0.25, 1.0});
  CHECK(gemma4.theta[63] > 0.0);
  CHECK(gemma4.theta[64] == 0.0);
  CHECK(gemma4.theta[255] == 0.0);
}

TEMPLATE_TEST_CASE("Proportional: pairs with theta 0 come out bit for bit unchanged",
                   "[scaling][proportional]", float, double, Eigen::half, Eigen::bfloat16) {
  using T = TestType;
  std::mt19937_64 rng(1600 + sizeof(T));
  check_type<T, 64>(64, 0.25, rng);               // 8 of 32 pairs
  check_type<T, 64>(64, 0.3, rng);                // 9 of 32: a remainder of a register
  check_type<T, Eigen::Dynamic>(512, 0.25, rng);  // Gemma 4: 64 of 256
  check_type<T, Eigen::Dynamic>(40, 0.95, rng);   // 19 of 20: one pair left alone
}

TEST_CASE("InverseFrequencies: theta 0 as the last pairs", "[scaling][proportional]") {
  std::mt19937_64 rng(1700);
  std::vector<double> theta = rope::inverse_frequencies(16);
  for (std::size_t j = 5; j < theta.size(); ++j) theta[j] = 0.0;
  for (const Layout layout : {Layout::half_split, Layout::interleaved}) {
    INFO(rope::to_string(layout));
    rope::Options options{16, 10000.0, layout, 32};
    options.scaling = rope::InverseFrequencies{theta};
    check_entry_points(rope::Rotary<float>(options), 5, rng);
  }
}

TEST_CASE("Llama3 with equal low and high frequency factors (Llama 4 Scout)", "[scaling][llama3]") {
  // Llama 4 Scout: rope_theta 5e5, factor 16, low = high = 1, L0 8192, head 128.
  const rope::Llama3 scout{16, 1, 1, 8192};
  const std::vector<double> unscaled = rope::inverse_frequencies(128, 5e5);
  const rope::Frequencies got = rope::frequencies(128, 5e5, scout);
  std::size_t kept = 0, divided = 0;
  for (std::size_t j = 0; j < unscaled.size(); ++j) {
    INFO("pair " << j);
    const double wavelength = 2 * 3.141592653589793 / unscaled[j];
    CHECK(wavelength != 8192);  // not the one wavelength of HuggingFace's 0/0
    // HuggingFace: λ > L0/low divides by factor, λ < L0/high keeps θ (no band between).
    if (wavelength > 8192) {
      CHECK(got.theta[j] == unscaled[j] / 16);
      ++divided;
    } else {
      CHECK(got.theta[j] == unscaled[j]);
      ++kept;
    }
  }
  CHECK(kept > 0);
  CHECK(divided > 0);
  CHECK(got.attention_factor == 1.0);

  // The one wavelength where HuggingFace's blend is (L0/λ − low)/(high − low) = 0/0: L0 chosen
  // as pair 20's wavelength exactly. That pair keeps θ; its neighbours fall on either side.
  const std::size_t j = 20;
  const double l0 = 2 * 3.141592653589793238462643383279502884 / unscaled[j];
  const rope::Frequencies edge = rope::frequencies(128, 5e5, rope::Llama3{16, 1, 1, l0});
  CHECK(edge.theta[j] == unscaled[j]);               // λ = L0: kept (not NaN)
  CHECK(edge.theta[j - 1] == unscaled[j - 1]);       // λ < L0: kept
  CHECK(edge.theta[j + 1] == unscaled[j + 1] / 16);  // λ > L0: divided by factor
  // The same edge with a band (high > low) is the band's low end, smooth = 0: θ/factor.
  const rope::Frequencies band = rope::frequencies(128, 5e5, rope::Llama3{16, 1, 2, l0});
  CHECK(band.theta[j] == Approx(unscaled[j] / 16).epsilon(1e-15));
}

TEST_CASE("Proportional with M-RoPE sections: mixed coordinates, past the table too",
          "[scaling][proportional][multi_axis]") {
  // 16 pairs in sections [4, 6, 6]; Proportional 0.5 rotates pairs 0..7 (axis 0: 0..3, axis 1:
  // 4..7) and leaves 8..15 alone, whatever their axis.
  std::mt19937_64 rng(1601);
  const std::size_t d = 32, rotating = 8;
  for (const Layout layout : {Layout::half_split, Layout::interleaved}) {
    INFO(rope::to_string(layout));
    rope::Options options{d, 10000.0, layout, 64};
    options.scaling = rope::Proportional{0.5, 1.0};
    options.axes = rope::Axes::sections({4, 6, 6});
    const rope::Rotary<float> rot(options);
    // [tokens][axes]: a text token, mixed coordinates in the table, one past it.
    const std::vector<std::int64_t> coordinates = {5, 5, 5, 3, 9, 12, 2, 700, 40};
    const std::size_t tokens = 3;
    const std::vector<float> input = input_heads<float>(tokens, 1, d, rotating, layout, rng);
    std::vector<float> x = input;
    rot.apply(x.data(), tokens, 1, rope::Positions::token_major(coordinates.data(), 3));
    std::size_t changed = 0;
    rope_test::WorstCoordinate worst;
    for (std::size_t t = 0; t < tokens; ++t) {
      for (std::size_t j = 0; j < d / 2; ++j) {
        const std::size_t i0 = first_of(j, d, layout), i1 = second_of(j, d, layout);
        const float* in = input.data() + t * d;
        const float* out = x.data() + t * d;
        if (j >= rotating) {
          changed += std::memcmp(in + i0, out + i0, sizeof(float)) != 0 ? 1 : 0;
          changed += std::memcmp(in + i1, out + i1, sizeof(float)) != 0 ? 1 : 0;
          continue;
        }
        const std::int64_t m = coordinates[t * 3 + rot.axis_of_pairs()[j]];
        const double angle = double(m) * std::pow(10000.0, -2.0 * double(j) / double(d));
        const double a = double(in[i0]), b = double(in[i1]);
        const double e0 = a * std::cos(angle) - b * std::sin(angle);
        const double e1 = b * std::cos(angle) + a * std::sin(angle);
        const double bound =
            rope_test::coordinate_bound<float>(std::abs(a) + std::abs(b), double(m));
        worst.note(std::abs(double(out[i0]) - e0), bound,
                   [&](std::ostream& s) { s << "token " << t << " pair " << j << " first"; });
        worst.note(std::abs(double(out[i1]) - e1), bound,
                   [&](std::ostream& s) { s << "token " << t << " pair " << j << " second"; });
      }
    }
    CHECK(changed == 0);
    INFO("worst: " << worst.where());
    CHECK(worst.ratio() <= 1.0);
  }
}
