// Converting W_q/W_k between pairings: head_permutation, convert_rows, converted_rows.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <vector>

#include <Eigen/Core>
#include <catch2/catch.hpp>

#include <rope/rope.hpp>

#include "support.hpp"

namespace {

using rope::Layout;

// HuggingFace's conversion of a Meta checkpoint views W as [heads, d/2, 2, columns] and swaps
// the middle axes: converted row (a, i) of a head, a ∈ {0, 1}, i < d/2, is original row (i, a).
std::size_t hf_permute_source(std::size_t row, std::size_t d) {
  const std::size_t head = row / d, a = (row % d) / (d / 2), i = row % (d / 2);
  return head * d + 2 * i + a;
}

template <class Matrix>
Matrix random_matrix(std::size_t rows, std::size_t columns, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  Matrix m(static_cast<Eigen::Index>(rows), static_cast<Eigen::Index>(columns));
  for (Eigen::Index i = 0; i < m.rows(); ++i) {
    for (Eigen::Index j = 0; j < m.cols(); ++j) m(i, j) = typename Matrix::Scalar(uniform(rng));
  }
  return m;
}

}  // namespace

TEST_CASE("head_permutation: interleaved to half_split is HuggingFace's permute", "[weights]") {
  REQUIRE(rope::head_permutation(8, Layout::interleaved, Layout::half_split) ==
          std::vector<std::size_t>{0, 2, 4, 6, 1, 3, 5, 7});
  REQUIRE(rope::head_permutation(8, Layout::half_split, Layout::interleaved) ==
          std::vector<std::size_t>{0, 4, 1, 5, 2, 6, 3, 7});
  for (const std::size_t d : {2U, 6U, 64U, 128U}) {
    const auto to_half = rope::head_permutation(d, Layout::interleaved, Layout::half_split);
    const auto back = rope::head_permutation(d, Layout::half_split, Layout::interleaved);
    const auto same = rope::head_permutation(d, Layout::half_split, Layout::half_split);
    for (std::size_t i = 0; i < d; ++i) {
      REQUIRE(to_half[i] == hf_permute_source(i, d));
      REQUIRE(to_half[back[i]] == i);  // inverses
      REQUIRE(same[i] == i);
    }
  }
}

TEST_CASE("head_permutation: a partial slice permutes only its coordinates", "[weights]") {
  // GPT-J style: 4 rotated coordinates at offset 2 of a head of 10.
  const auto order = rope::head_permutation(10, Layout::interleaved, Layout::half_split, 4, 2);
  REQUIRE(order == std::vector<std::size_t>{0, 1, 2, 4, 3, 5, 6, 7, 8, 9});
}

TEST_CASE("convert_rows: every row lands where head_permutation says, in place or copied",
          "[weights]") {
  std::mt19937_64 rng(1);
  constexpr std::size_t heads = 3, d = 6;
  const Eigen::MatrixXd w = random_matrix<Eigen::MatrixXd>(heads * d, 5, rng);
  for (const auto from : {Layout::interleaved, Layout::half_split}) {
    for (const auto to : {Layout::interleaved, Layout::half_split}) {
      const auto order = rope::head_permutation(d, from, to);
      const Eigen::MatrixXd copied = rope::converted_rows(w, heads, d, from, to);
      Eigen::MatrixXd in_place = w;
      rope::convert_rows(in_place, heads, d, from, to);
      // Row-major storage and a transposed view give the same rows.
      Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> row_major = w;
      rope::convert_rows(row_major, heads, d, from, to);
      Eigen::MatrixXd transposed = w.transpose();
      rope::convert_rows(transposed.transpose(), heads, d, from, to);
      for (std::size_t r = 0; r < heads * d; ++r) {
        const auto source = Eigen::Index(r - r % d + order[r % d]);
        const auto i = Eigen::Index(r);
        REQUIRE(copied.row(i) == w.row(source));
        REQUIRE(in_place.row(i) == w.row(source));
        REQUIRE(row_major.row(i) == w.row(source));
        REQUIRE(transposed.col(i) == w.row(source).transpose());
      }
      REQUIRE(rope::converted_rows(copied, heads, d, to, from) == w);  // and back
    }
  }
}

TEMPLATE_TEST_CASE(
    "convert_rows: permuted W_q, W_k and biases with the other layout give the "
    "same attention scores",
    "[weights][property]", float, double) {
  using Matrix = Eigen::Matrix<TestType, Eigen::Dynamic, Eigen::Dynamic>;
  using Vector = Eigen::Matrix<TestType, Eigen::Dynamic, 1>;
  std::mt19937_64 rng(2);
  constexpr std::size_t q_heads = 4, k_heads = 2, hidden = 48, tokens = 6;  // GQA: 2 q per k
  for (const std::size_t d : {8U, 64U}) {
    const Matrix w_q = random_matrix<Matrix>(q_heads * d, hidden, rng);
    const Matrix w_k = random_matrix<Matrix>(k_heads * d, hidden, rng);
    const Vector b_q = random_matrix<Matrix>(q_heads * d, 1, rng);  // Qwen2 has q and k biases
    const Vector b_k = random_matrix<Matrix>(k_heads * d, 1, rng);
    const Matrix x = random_matrix<Matrix>(hidden, tokens, rng);  // one column per token
    std::vector<std::int64_t> positions(tokens);
    std::uniform_int_distribution<std::int64_t> position(0, 5000);
    for (auto& m : positions) m = position(rng);

    // Queries and keys per token, rotated: q is [tokens][q_heads][d] (one column per token).
    const auto project = [&](const rope::Rotary<TestType>& rot, const Matrix& wq, const Vector& bq,
                             const Matrix& wk, const Vector& bk, Matrix& q, Matrix& k) {
      q = (wq * x).colwise() + bq;
      k = (wk * x).colwise() + bk;
      rot.apply(q.data(), tokens, q_heads, positions.data());
      rot.apply(k.data(), tokens, k_heads, positions.data());
    };
    rope::Options meta_options, hf_options;
    meta_options.head_size = hf_options.head_size = d;
    meta_options.layout = Layout::interleaved;
    hf_options.layout = Layout::half_split;
    const rope::Rotary<TestType> meta(meta_options), hf(hf_options);
    Matrix q_meta, k_meta, q_hf, k_hf, q_wrong, k_wrong;
    project(meta, w_q, b_q, w_k, b_k, q_meta, k_meta);
    project(hf, rope::converted_rows(w_q, q_heads, d, Layout::interleaved, Layout::half_split),
            rope::converted_rows(b_q, q_heads, d, Layout::interleaved, Layout::half_split),
            rope::converted_rows(w_k, k_heads, d, Layout::interleaved, Layout::half_split),
            rope::converted_rows(b_k, k_heads, d, Layout::interleaved, Layout::half_split), q_hf,
            k_hf);
    project(hf, w_q, b_q, w_k, b_k, q_wrong, k_wrong);  // the common mistake: unconverted weights

    // Bound on |score_meta − score_hf|. Each side's q (and k) coordinate is a dot product of
    // hidden + 1 terms (bias included): error ≤ γ_{hidden+1}·Σ|w||x| + |b|, over the head a
    // vector of norm e_proj; the rotation adds head_bound·‖q‖ (and rotates e_proj without growing
    // it); the score's d-term dot product adds γ_d·Σ|q_i k_i|. So one side errs by at most
    // e_q·‖k‖ + e_k·‖q‖ + e_q·e_k + γ_d·Σ|q_i||k_i|, and the two sides by twice that.
    const Matrix abs_q = (w_q.cwiseAbs() * x.cwiseAbs()).colwise() + b_q.cwiseAbs();
    const Matrix abs_k = (w_k.cwiseAbs() * x.cwiseAbs()).colwise() + b_k.cwiseAbs();
    const auto head = [d](const Matrix& m, std::size_t t, std::size_t h) {
      return m.col(Eigen::Index(t))
          .segment(Eigen::Index(h * d), Eigen::Index(d))
          .template cast<double>();
    };
    double worst = 0, wrong = 0;
    for (std::size_t h = 0; h < q_heads; ++h) {
      const std::size_t g = h / (q_heads / k_heads);
      for (std::size_t i = 0; i < tokens; ++i) {
        for (std::size_t j = 0; j < tokens; ++j) {
          const double meta_score = head(q_meta, i, h).dot(head(k_meta, j, g));
          const double hf_score = head(q_hf, i, h).dot(head(k_hf, j, g));
          const double wrong_score = head(q_wrong, i, h).dot(head(k_wrong, j, g));
          const double q_norm = head(q_meta, i, h).norm(), k_norm = head(k_meta, j, g).norm();
          const double proj = rope_test::gamma<TestType>(int(hidden) + 1);
          const double e_q = proj * head(abs_q, i, h).norm() +
                             rope_test::head_bound<TestType>(double(positions[i])) * q_norm;
          const double e_k = proj * head(abs_k, j, g).norm() +
                             rope_test::head_bound<TestType>(double(positions[j])) * k_norm;
          const double dot_terms = head(q_meta, i, h).cwiseAbs().dot(head(k_meta, j, g).cwiseAbs());
          const double bound = 2 * (e_q * k_norm + e_k * q_norm + e_q * e_k +
                                    rope_test::gamma<TestType>(int(d)) * dot_terms);
          worst = std::max(worst, std::abs(meta_score - hf_score) / bound);
          wrong = std::max(wrong, std::abs(meta_score - wrong_score) / bound);
        }
      }
    }
    INFO("d " << d << ": worst |Δscore| / bound " << worst << ", unconverted " << wrong);
    REQUIRE(worst <= 1.0);
    REQUIRE(wrong > 100.0);  // without the conversion the scores are simply different
  }
}
