// Converting a checkpoint between the two pairings. Meta's LLaMA weights pair coordinates
// (2j, 2j+1) (interleaved); HuggingFace's conversion permutes the rows of W_q and W_k so that
// the pairs become (j, j + d/2) (half_split). Same attention scores either way; a mismatched
// layout gives different ones. Exits non-zero if a claim fails.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <vector>

#include <Eigen/Core>

#include <rope/rope.hpp>

namespace {

constexpr std::size_t kHidden = 96, kHeadSize = 32, kQueryHeads = 6, kKeyHeads = 2, kTokens = 5;
using Matrix = Eigen::MatrixXd;

// Rotated q or k for every token (one column each) of a projection w.
Matrix rotated(const rope::Rotary<double>& rot, const Matrix& w, const Matrix& x, std::size_t heads,
               const std::vector<std::int64_t>& positions) {
  Matrix out = w * x;
  rot.apply(out.data(), kTokens, heads, positions.data());
  return out;
}

// q_i · k_j for query head h and its key head (grouped-query attention: 3 query heads per key).
double score(const Matrix& q, const Matrix& k, Eigen::Index i, Eigen::Index j, Eigen::Index h) {
  const auto d = Eigen::Index(kHeadSize), g = h / Eigen::Index(kQueryHeads / kKeyHeads);
  double sum = 0;  // a plain loop: GCC 12 warns inside its AVX-512 intrinsics on Eigen's dot
  for (Eigen::Index c = 0; c < d; ++c) sum += q(h * d + c, i) * k(g * d + c, j);
  return sum;
}

}  // namespace

int main() {
  std::mt19937_64 rng(1);
  std::normal_distribution<double> normal;
  const auto random = [&](std::size_t rows, std::size_t cols) {
    return Matrix::NullaryExpr(Eigen::Index(rows), Eigen::Index(cols), [&] { return normal(rng); })
        .eval();
  };
  const Matrix w_q = random(kQueryHeads * kHeadSize, kHidden);  // as in Meta's checkpoint
  const Matrix w_k = random(kKeyHeads * kHeadSize, kHidden);
  const Matrix x = random(kHidden, kTokens);
  const std::vector<std::int64_t> positions = {3, 17, 250, 1024, 4000};

  // The conversion HuggingFace's script applies, and the layout that goes with it.
  const auto from = rope::Layout::interleaved, to = rope::Layout::half_split;
  const Matrix w_q_hf = rope::converted_rows(w_q, kQueryHeads, kHeadSize, from, to);
  const Matrix w_k_hf = rope::converted_rows(w_k, kKeyHeads, kHeadSize, from, to);

  rope::Options meta_options, hf_options;
  meta_options.head_size = hf_options.head_size = kHeadSize;
  meta_options.layout = from;
  hf_options.layout = to;
  const rope::Rotary<double> meta(meta_options), hf(hf_options);

  const Matrix q = rotated(meta, w_q, x, kQueryHeads, positions);
  const Matrix k = rotated(meta, w_k, x, kKeyHeads, positions);
  const Matrix q_hf = rotated(hf, w_q_hf, x, kQueryHeads, positions);
  const Matrix k_hf = rotated(hf, w_k_hf, x, kKeyHeads, positions);
  const Matrix q_wrong = rotated(hf, w_q, x, kQueryHeads, positions);  // weights not converted
  const Matrix k_wrong = rotated(hf, w_k, x, kKeyHeads, positions);

  // Each side's q coordinate is a dot product of kHidden terms (error ≤ γ_kHidden·Σ|w||x|), then
  // rotated (≤ 2·γ_3 of the head's norm, plus 2^-53·m for the angle); a score is a dot product
  // of kHeadSize terms. With P = max over heads of ‖|W||x|‖ and N = max ‖q‖, ‖k‖, one side errs
  // by at most 2·e·N + e² + γ_d·N², e = γ_kHidden·P + (2·γ_3 + 2^-53·4000)·N; both sides twice.
  const double u = std::ldexp(1.0, -53);
  const auto gamma = [u](double n) { return n * u / (1 - n * u); };
  const Matrix abs_products = (w_q.cwiseAbs() * x.cwiseAbs());
  const Matrix abs_products_k = (w_k.cwiseAbs() * x.cwiseAbs());
  const double p = std::max(abs_products.colwise().norm().maxCoeff(),
                            abs_products_k.colwise().norm().maxCoeff());
  const double n = std::max(q.colwise().norm().maxCoeff(), k.colwise().norm().maxCoeff());
  const double e = gamma(kHidden) * p + (2 * gamma(3) + u * 4000) * n;
  const double bound = 2 * (2 * e * n + e * e + gamma(kHeadSize) * n * n);

  double same = 0, wrong = 0;
  for (Eigen::Index h = 0; h < Eigen::Index(kQueryHeads); ++h) {
    for (Eigen::Index i = 0; i < Eigen::Index(kTokens); ++i) {
      for (Eigen::Index j = 0; j < Eigen::Index(kTokens); ++j) {
        const double s = score(q, k, i, j, h);
        same = std::max(same, std::abs(s - score(q_hf, k_hf, i, j, h)));
        wrong = std::max(wrong, std::abs(s - score(q_wrong, k_wrong, i, j, h)));
      }
    }
  }
  std::printf("W_q rows of head 0 in HuggingFace's order come from Meta's rows:");
  for (const std::size_t r : rope::head_permutation(kHeadSize, from, to)) std::printf(" %zu", r);
  std::printf("\n%zu query heads, %zu key heads, positions up to %lld:\n", kQueryHeads, kKeyHeads,
              static_cast<long long>(positions.back()));
  std::printf(
      "  Meta weights + interleaved vs converted weights + half_split: max |dscore| = "
      "%.3g (bound %.3g)\n",
      same, bound);
  std::printf(
      "  Meta weights + half_split (the mistake):                      max |dscore| = "
      "%.3g\n",
      wrong);
  const bool back = rope::converted_rows(w_q_hf, kQueryHeads, kHeadSize, to, from) == w_q;
  std::printf("  converting back restores W_q exactly: %s\n", back ? "yes" : "NO");
  const bool ok = same <= bound && wrong > 1000 * bound && back;
  std::printf(ok ? "same scores after conversion: ok\n" : "FAILED\n");
  return ok ? 0 : 1;
}
