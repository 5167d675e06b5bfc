// The backward pass of RoPE: the gradient with respect to the input is the inverse rotation of
// the output gradient, checked against central finite differences.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

#include <catch2/catch.hpp>

#include <rope/rope.hpp>

#include "support.hpp"

namespace {

// L(x) = Σ_i g_i·y_i + ½·Σ_i y_i², y = rot(x) at the positions: a loss whose gradient with
// respect to y is g + y, so that dL/dx = Rᵀ(g + y) (times the attention factor f, which the
// table carries: y = f·R x).
struct Loss {
  const rope::Rotary<double>& rot;
  std::size_t tokens, heads;
  const std::vector<std::int64_t>& positions;
  const std::vector<double>& g;

  std::vector<double> forward(std::vector<double> x) const {
    rot.apply(x.data(), tokens, heads, positions.data());
    return x;
  }
  double operator()(const std::vector<double>& x) const {
    const std::vector<double> y = forward(x);
    double loss = 0;
    for (std::size_t i = 0; i < y.size(); ++i) loss += g[i] * y[i] + 0.5 * y[i] * y[i];
    return loss;
  }
  // Bound on |computed L − exact L|: the sum of n = size terms errs by γ_{n+2}·Σ|terms|, and
  // each y_i by at most e_i (rotation) which moves L by |g_i + y_i|·e_i (+ e_i²/2).
  double error(const std::vector<double>& x) const {
    const std::vector<double> y = forward(x);
    const std::size_t d = rot.head_size();
    double terms = 0, propagated = 0;
    for (std::size_t i = 0; i < y.size(); ++i) {
      terms += std::abs(g[i] * y[i]) + 0.5 * y[i] * y[i];
      const double pair =
          std::abs(x[i]) + std::abs(x[rope_test::partner_index(i, d, rot.layout())]);
      const double position = double(positions[i / (heads * d)]);
      const double e =
          rot.attention_factor() * rope_test::coordinate_bound<double>(pair, position, rot.base());
      propagated += std::abs(g[i] + y[i]) * e + e * e / 2;
    }
    return rope_test::gamma<double>(int(y.size()) + 2) * terms + propagated;
  }
};

}  // namespace

TEST_CASE("Backward: the inverse rotation of the output gradient is the input gradient",
          "[backward][property]") {
  constexpr std::size_t d = 16, tokens = 3, heads = 2, n = tokens * heads * d;
  std::mt19937_64 rng(4);
  const std::vector<std::int64_t> positions = {0, 5, 3000};
  rope::Yarn yarn;
  yarn.factor = 4;
  yarn.original_max_position_embeddings = 1024;
  for (const auto layout : {rope::Layout::interleaved, rope::Layout::half_split}) {
    for (const bool scaled : {false, true}) {
      rope::Options options;
      options.head_size = d;
      options.layout = layout;
      if (scaled) options.scaling = yarn;  // f ≠ 1: the gradient carries f too
      const rope::Rotary<double> rot(options);
      const auto x = rope_test::random_vector<double>(n, rng);
      const auto g = rope_test::random_vector<double>(n, rng);
      const Loss loss{rot, tokens, heads, positions, g};

      // Analytic: dL/dy = g + y, then the backward pass, one call.
      std::vector<double> grad = loss.forward(x);
      for (std::size_t i = 0; i < n; ++i) grad[i] += g[i];
      rot.apply(grad.data(), tokens, heads, positions.data(), rope::Direction::inverse);

      // The analytic gradient's own error: r = g + y carries y's rotation error e and one
      // rounding; the inverse rotation of pair (r_i, r_partner) adds coordinate_bound, and turns
      // the pair's error vector (norm ≤ its two components' sum) without growing it.
      const std::vector<double> y = loss.forward(x);
      std::vector<double> analytic_error(n);
      for (std::size_t i = 0; i < n; ++i) {
        const std::size_t p = rope_test::partner_index(i, d, layout);
        const double position = double(positions[i / (heads * d)]);
        const auto e = [&](std::size_t k) {
          const double f = rot.attention_factor();
          return f * rope_test::coordinate_bound<double>(std::abs(x[k]) + std::abs(x[p + i - k]),
                                                         position) +
                 rope_test::unit_roundoff<double> * std::abs(g[k] + y[k]);
        };
        analytic_error[i] =
            e(i) + e(p) +
            rot.attention_factor() * rope_test::coordinate_bound<double>(
                                         std::abs(g[i] + y[i]) + std::abs(g[p] + y[p]), position);
      }

      // Central differences. L is quadratic in x, so they are exact up to rounding: the error
      // is at most (ε(x + h) + ε(x − h))/(2h), with ε the bound on L's rounding, plus the
      // rounding of x ± h (≤ u·|x_i ± h|, moving L by |∂L/∂x_i| times that) over 2h.
      const double h = 1.0 / 64;  // a power of two
      INFO(rope::to_string(layout) << (scaled ? " yarn" : " unscaled"));
      for (std::size_t i = 0; i < n; ++i) {
        std::vector<double> plus = x, minus = x;
        plus[i] += h;
        minus[i] -= h;
        const double numeric = (loss(plus) - loss(minus)) / (2 * h);
        const double perturbation =
            rope_test::unit_roundoff<double> * (std::abs(x[i]) + h) * (std::abs(grad[i]) + 1) / h;
        const double bound = (loss.error(plus) + loss.error(minus)) / (2 * h) + perturbation +
                             rope_test::unit_roundoff<double> * std::abs(numeric) +
                             analytic_error[i];
        INFO("coordinate " << i << ": analytic " << grad[i] << ", numeric " << numeric);
        REQUIRE(std::abs(grad[i] - numeric) <= bound);
      }
      // And the check can fail: the forward rotation in place of the inverse is not the
      // gradient.
      std::vector<double> wrong = loss.forward(x);
      for (std::size_t i = 0; i < n; ++i) wrong[i] += g[i];
      rot.apply(wrong.data(), tokens, heads, positions.data(), rope::Direction::forward);
      double worst = 0;
      for (std::size_t i = 0; i < n; ++i) worst = std::max(worst, std::abs(wrong[i] - grad[i]));
      REQUIRE(worst > 0.1);
    }
  }
}
