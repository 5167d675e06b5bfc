// The backward pass of RoPE. y = R_m x is linear in x with an orthogonal matrix, so the
// gradient of a loss L with respect to x is R_mᵀ·(dL/dy): the inverse rotation of the output
// gradient, one call with rope::Direction::inverse. (With Yarn or LongRope, whose tables carry an
// attention factor f, y = f·R_m x and the inverse call gives f·R_mᵀ·(dL/dy): still the
// gradient.)
//
// Computes the gradient of L(x) = ½·‖R_m x − target‖² for a batch of tokens at different
// positions, checks it against the transposed dense Jacobian and prints it next to central
// finite differences (tests/backward_test.cpp checks those with an error bound). Exits non-zero
// if the check fails.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <vector>

#include <rope/rope.hpp>

namespace {

constexpr std::size_t kHeadSize = 64, kTokens = 3, kHeads = 2, kSize = kTokens * kHeads * kHeadSize;
const std::vector<std::int64_t> kPositions = {1, 40, 2000};

double loss(const rope::Rotary<double, kHeadSize>& rot, std::vector<double> x,
            const std::vector<double>& target) {
  rot.apply(x.data(), kTokens, kHeads, kPositions.data());
  double sum = 0;
  for (std::size_t i = 0; i < kSize; ++i) sum += 0.5 * (x[i] - target[i]) * (x[i] - target[i]);
  return sum;
}

}  // namespace

int main() {
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  std::vector<double> x(kSize), target(kSize);
  for (auto& v : x) v = uniform(rng);
  for (auto& v : target) v = uniform(rng);
  const rope::Rotary<double, kHeadSize> rot;

  // Forward, then backward: dL/dy = y − target, dL/dx = R_mᵀ (y − target).
  std::vector<double> grad = x;
  rot.apply(grad.data(), kTokens, kHeads, kPositions.data());
  for (std::size_t i = 0; i < kSize; ++i) grad[i] -= target[i];
  rot.apply(grad.data(), kTokens, kHeads, kPositions.data(), rope::Direction::inverse);

  // The Jacobian of y = R_m x is R_m itself: column i is the rotation of the unit vector e_i
  // (exactly the table's cos and ±sin: 1·c − 0·s is exact). So (dL/dx)_i = (R_m e_i)·(dL/dy).
  // Both sides sum the same two products (the rest are 0·g): they differ by at most
  // 2·γ_2·(|g_i| + |g_partner|), g = dL/dy.
  std::vector<double> dl_dy = x;
  rot.apply(dl_dy.data(), kTokens, kHeads, kPositions.data());
  for (std::size_t i = 0; i < kSize; ++i) dl_dy[i] -= target[i];
  const double u = std::ldexp(1.0, -53), gamma2 = 2 * u / (1 - 2 * u);
  bool ok = true;
  for (std::size_t i = 0; i < kSize; ++i) {
    std::vector<double> column(kSize, 0.0);
    column[i] = 1.0;
    rot.apply(column.data(), kTokens, kHeads, kPositions.data());
    double dot = 0, magnitude = 0;
    for (std::size_t k = 0; k < kSize; ++k) {
      dot += column[k] * dl_dy[k];
      if (column[k] != 0) magnitude += std::abs(dl_dy[k]);
    }
    ok = ok && std::abs(dot - grad[i]) <= 2 * gamma2 * magnitude;
  }
  std::printf("dL/dx = (dense Jacobian)^T dL/dy for all %zu coordinates: %s\n", kSize,
              ok ? "ok" : "FAILED");

  // And what a finite difference sees (L is quadratic: central differences are exact but for
  // rounding, here of order 1e-11): the tests check this for every coordinate with a bound.
  const double h = 1.0 / 1024;
  for (std::size_t i = 0; i < 4; ++i) {
    std::vector<double> plus = x, minus = x;
    plus[i] += h;
    minus[i] -= h;
    const double numeric = (loss(rot, plus, target) - loss(rot, minus, target)) / (2 * h);
    std::printf("dL/dx[%zu]: inverse rotation %+.12f, central difference %+.12f\n", i, grad[i],
                numeric);
  }
  return ok ? 0 : 1;
}
