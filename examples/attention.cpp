// A small causal self-attention layer with grouped-query heads and a KV cache, with RoPE on q
// and k: what an inference engine does with rope, in one file.
//
//  1. Prefill: the whole prompt at once, positions 0..7, RoPE on all its q and k in one call.
//  2. Decode: the same tokens again, one at a time, each rotated on arrival (apply_qk) and its
//     key appended to the cache. Every token's output equals the prefill's, bit for bit: a key
//     is rotated once, to its absolute position, and never touched again.
//  3. Context shift: drop tokens 1..3 from the cache and shift the later keys back by 3
//     positions (Rotary::shift), as an engine does when the context is full. The shifted keys
//     equal keys rotated directly at their new positions, to within rounding.
//  4. A Qwen3-style block: QK-norm (RMSNorm of each query and key head, with a weight), RoPE,
//     and a half KV cache, all written by one fused pass per call: the keys normalised, rotated
//     and stored straight into Eigen::half rows of a cache whose rows are handed out out of
//     order (as a paged cache does), the queries normalised and rotated in place. Prefill (one
//     call, a slot per token) and decode (one call per token) write the same cache bits and give
//     the same outputs, bit for bit; each cached key has the bits of the separate passes
//     (normalize_heads, the rotation, the conversion to half).
//
// Exits non-zero if a claim fails.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include <Eigen/Core>

#include <rope/rope.hpp>

namespace {

constexpr std::size_t kHidden = 64, kHeadSize = 16, kQueryHeads = 4, kKeyHeads = 2, kTokens = 8;
using Matrix = Eigen::MatrixXf;
using Vector = Eigen::VectorXf;

struct Layer {
  Matrix w_q, w_k, w_v, w_o;  // rows are output features, as in PyTorch's nn.Linear
  rope::Rotary<float, kHeadSize> rot;
};

// The keys and values seen so far: one column per token, [heads · head_size] rows.
struct KVCache {
  Matrix keys{kKeyHeads * kHeadSize, 0}, values{kKeyHeads * kHeadSize, 0};
  void append(const Vector& k, const Vector& v) {
    keys.conservativeResize(Eigen::NoChange, keys.cols() + 1);
    values.conservativeResize(Eigen::NoChange, values.cols() + 1);
    keys.col(keys.cols() - 1) = k;
    values.col(values.cols() - 1) = v;
  }
};

// softmax(q·kᵀ/√d) v for every query head over the keys of columns [0, count), head h reading
// key head h / (kQueryHeads / kKeyHeads); then W_o.
Vector attend(const Layer& layer, const Vector& q, const Matrix& keys, const Matrix& values,
              Eigen::Index count) {
  const auto d = Eigen::Index(kHeadSize);
  Vector heads_out(kQueryHeads * kHeadSize);
  for (Eigen::Index h = 0; h < Eigen::Index(kQueryHeads); ++h) {
    const Eigen::Index g = h / Eigen::Index(kQueryHeads / kKeyHeads);
    Vector scores(count);
    for (Eigen::Index j = 0; j < count; ++j) {
      scores(j) = q.segment(h * d, d).dot(keys.col(j).segment(g * d, d)) / std::sqrt(float(d));
    }
    const Vector p = (scores.array() - scores.maxCoeff()).exp().matrix();
    heads_out.segment(h * d, d) = values.middleRows(g * d, d).leftCols(count) * p / p.sum();
  }
  return layer.w_o * heads_out;
}

}  // namespace

int main() {
  std::mt19937 rng(42);
  std::normal_distribution<float> normal(0.0f, 0.2f);
  const auto random = [&](Eigen::Index rows, Eigen::Index cols) {
    return Matrix::NullaryExpr(rows, cols, [&] { return normal(rng); }).eval();
  };
  rope::Options options;  // half_split pairs, base 10000
  const Layer layer{random(kQueryHeads * kHeadSize, kHidden),
                    random(kKeyHeads * kHeadSize, kHidden), random(kKeyHeads * kHeadSize, kHidden),
                    random(kHidden, kQueryHeads * kHeadSize),
                    rope::Rotary<float, kHeadSize>(options)};
  const Matrix x = random(kHidden, kTokens);  // the prompt's hidden states, one column per token

  // 1. Prefill: project every token (one matrix-vector product each, the decode's arithmetic),
  //    rotate all q and k in one call, attend causally.
  Matrix q(kQueryHeads * kHeadSize, kTokens), k(kKeyHeads * kHeadSize, kTokens);
  Matrix v(kKeyHeads * kHeadSize, kTokens);
  for (Eigen::Index t = 0; t < Eigen::Index(kTokens); ++t) {
    q.col(t) = layer.w_q * x.col(t);
    k.col(t) = layer.w_k * x.col(t);
    v.col(t) = layer.w_v * x.col(t);
  }
  layer.rot.apply_qk(rope::View<float>::contiguous(q.data(), kTokens, kQueryHeads, kHeadSize),
                     rope::View<float>::contiguous(k.data(), kTokens, kKeyHeads, kHeadSize),
                     rope::Positions::consecutive(0));
  Matrix prefill(kHidden, kTokens);
  for (Eigen::Index t = 0; t < Eigen::Index(kTokens); ++t) {
    prefill.col(t) = attend(layer, q.col(t), k, v, t + 1);
  }

  // 2. Decode: one token per step at position `step`; its key joins the cache already rotated.
  KVCache cache;
  Matrix decode(kHidden, kTokens);
  for (Eigen::Index step = 0; step < Eigen::Index(kTokens); ++step) {
    Vector q1 = layer.w_q * x.col(step), k1 = layer.w_k * x.col(step);
    layer.rot.apply_qk(rope::View<float>::contiguous(q1.data(), 1, kQueryHeads, kHeadSize),
                       rope::View<float>::contiguous(k1.data(), 1, kKeyHeads, kHeadSize),
                       rope::Positions::consecutive(step));
    cache.append(k1, layer.w_v * x.col(step));
    decode.col(step) = attend(layer, q1, cache.keys, cache.values, step + 1);
  }
  const bool same = decode == prefill;
  std::printf("prefill of %zu tokens vs %zu decode steps with a KV cache: outputs %s\n", kTokens,
              kTokens, same ? "bitwise equal" : "DIFFER");

  // 3. Context shift: keep token 0 (an attention sink), drop tokens 1..3, move tokens 4..7 to
  //    positions 1..4 by shifting their cached keys by -3. Values carry no position.
  constexpr Eigen::Index kDrop = 3, kKeep = 1, kMoved = Eigen::Index(kTokens) - kKeep - kDrop;
  Matrix shifted = cache.keys.rightCols(kMoved);
  layer.rot.shift(rope::View<float>::contiguous(shifted.data(), kMoved, kKeyHeads, kHeadSize),
                  -kDrop);
  // The same keys rotated directly at positions 1..4 (projected as in step 2, so that only the
  // rotations differ).
  Matrix direct(kKeyHeads * kHeadSize, kMoved);
  for (Eigen::Index j = 0; j < kMoved; ++j) direct.col(j) = layer.w_k * x.col(kKeep + kDrop + j);
  layer.rot.apply(direct.data(), std::size_t(kMoved), kKeyHeads,
                  rope::Positions::consecutive(kKeep));
  // Per coordinate, |shifted − direct| ≤ (4·γ_3 + 2^-53·(|m| + |δ| + |m + δ|))·(|a| + |b|) for
  // its pair (a, b) of unrotated key (docs/api.md, Rotary::shift), and
  // |a| + |b| ≤ √2·‖(a, b)‖ ≤ 2·max|key coordinate| (rotations keep ‖(a, b)‖).
  const double u = std::ldexp(1.0, -24), gamma3 = 3 * u / (1 - 3 * u);
  const double angles = std::ldexp(double(kTokens + kDrop + kTokens), -53);
  const double bound = (4 * gamma3 + angles) * 2 * double(direct.cwiseAbs().maxCoeff());
  const double error = double((shifted - direct).cwiseAbs().maxCoeff());
  const bool close = error <= bound;
  std::printf("context shift by -%lld: max |shifted - recomputed| = %.3g (bound %.3g): %s\n",
              static_cast<long long>(kDrop), error, bound, close ? "ok" : "TOO FAR");

  // 4. Qwen3's QK-norm (weights of head size, ε = 1e-6) and a half KV cache of 16 rows, token t
  //    in row kSlot[t]; the fused pass normalises and rotates the queries in place and writes the
  //    keys, normalised and rotated, into their rows as halves.
  std::vector<float> q_weight(kHeadSize), k_weight(kHeadSize);
  for (float& w : q_weight) w = 1.0f + normal(rng);
  for (float& w : k_weight) w = 1.0f + normal(rng);
  const rope::Norm<float> q_norm{rope::NormKind::rms, q_weight.data(), kHeadSize, 1e-6};
  const rope::Norm<float> k_norm{rope::NormKind::rms, k_weight.data(), kHeadSize, 1e-6};
  constexpr std::size_t kRows = 16;
  const std::int64_t kSlot[kTokens] = {9, 2, 14, 0, 7, 11, 4, 5};
  using Half = Eigen::half;
  const auto key_rows = [](std::vector<Half>& rows) {
    return rope::View<Half>::contiguous(rows.data(), kRows, kKeyHeads, kHeadSize);
  };
  // Attention over the cached keys, widened to float, with the values of the tokens in order.
  const auto attend_cached = [&](const Vector& q1, const std::vector<Half>& rows,
                                 Eigen::Index count) {
    Matrix keys(kKeyHeads * kHeadSize, count);
    for (Eigen::Index j = 0; j < count; ++j) {
      for (Eigen::Index i = 0; i < keys.rows(); ++i) {
        keys(i, j) = float(rows[std::size_t(kSlot[j]) * kKeyHeads * kHeadSize + std::size_t(i)]);
      }
    }
    return attend(layer, q1, keys, v, count);
  };
  // Prefill: the projections of step 1 again, both caches of their tokens in one call.
  Matrix q_all(kQueryHeads * kHeadSize, kTokens), k_all(kKeyHeads * kHeadSize, kTokens);
  for (Eigen::Index t = 0; t < Eigen::Index(kTokens); ++t) {
    q_all.col(t) = layer.w_q * x.col(t);
    k_all.col(t) = layer.w_k * x.col(t);
  }
  std::vector<Half> prefill_rows(kRows * kKeyHeads * kHeadSize, Half(0));
  const auto q_view = rope::View<float>::contiguous(q_all.data(), kTokens, kQueryHeads, kHeadSize);
  const auto k_in =
      rope::View<const float>::contiguous(k_all.data(), kTokens, kKeyHeads, kHeadSize);
  const rope::KeyCache<Half> prefill_cache{key_rows(prefill_rows), rope::Slots(kSlot, kTokens)};
  layer.rot.apply_qk(rope::Queries(q_view).normalized(q_norm),
                     rope::Keys(k_in, prefill_cache).normalized(k_norm),
                     rope::Positions::consecutive(0));
  Matrix prefill_half(kHidden, kTokens);
  for (Eigen::Index t = 0; t < Eigen::Index(kTokens); ++t) {
    prefill_half.col(t) = attend_cached(q_all.col(t), prefill_rows, t + 1);
  }
  // Decode: one call per token, its key into its row.
  std::vector<Half> decode_rows(kRows * kKeyHeads * kHeadSize, Half(0));
  Matrix decode_half(kHidden, kTokens);
  for (Eigen::Index step = 0; step < Eigen::Index(kTokens); ++step) {
    Vector q1 = layer.w_q * x.col(step), k1 = layer.w_k * x.col(step);
    const auto q1_view = rope::View<float>::contiguous(q1.data(), 1, kQueryHeads, kHeadSize);
    const auto k1_in = rope::View<const float>::contiguous(k1.data(), 1, kKeyHeads, kHeadSize);
    const rope::KeyCache<Half> decode_cache{key_rows(decode_rows), rope::Slots(&kSlot[step], 1)};
    layer.rot.apply_qk(rope::Queries(q1_view).normalized(q_norm),
                       rope::Keys(k1_in, decode_cache).normalized(k_norm),
                       rope::Positions::consecutive(step));
    decode_half.col(step) = attend_cached(q1, decode_rows, step + 1);
  }
  const bool same_rows =
      std::memcmp(prefill_rows.data(), decode_rows.data(), prefill_rows.size() * sizeof(Half)) == 0;
  // Each cached key: the separate passes (the norm, the rotation, the conversion to half).
  Matrix k_separate(kKeyHeads * kHeadSize, kTokens);
  for (Eigen::Index t = 0; t < Eigen::Index(kTokens); ++t) k_separate.col(t) = layer.w_k * x.col(t);
  const auto k_separate_view =
      rope::View<float>::contiguous(k_separate.data(), kTokens, kKeyHeads, kHeadSize);
  rope::normalize_heads(k_separate_view, kHeadSize, k_norm);
  layer.rot.apply(k_separate_view, rope::Positions::consecutive(0));
  bool rounded_once = true;
  for (std::size_t t = 0; t < kTokens; ++t) {
    for (std::size_t i = 0; i < kKeyHeads * kHeadSize; ++i) {
      const Half want(k_separate(Eigen::Index(i), Eigen::Index(t)));
      const Half got = prefill_rows[std::size_t(kSlot[t]) * kKeyHeads * kHeadSize + i];
      rounded_once = rounded_once && std::memcmp(&want, &got, sizeof(Half)) == 0;
    }
  }
  const bool same_half = prefill_half == decode_half;
  std::printf(
      "QK-norm + RoPE + half KV cache in one pass, rows out of order: cache rows of prefill and "
      "decode %s, keys %s, outputs %s\n",
      same_rows ? "bitwise equal" : "DIFFER",
      rounded_once ? "those of the separate passes" : "NOT those of the separate passes",
      same_half ? "bitwise equal" : "DIFFER");
  return same && close && same_rows && rounded_once && same_half ? 0 : 1;
}
