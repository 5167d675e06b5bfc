// Shows what RoPE is for: the attention score of a query at position m and a key at position n
// depends only on n − m. Checks it for both layouts and exits non-zero if it fails.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <vector>

#include <rope/rope.hpp>

namespace {

constexpr std::size_t kHeadSize = 128;
using Rotary = rope::Rotary<float, kHeadSize>;

std::vector<float> at(const Rotary& rot, std::vector<float> head, std::int64_t position) {
  rot.apply(head.data(), 1, 1, rope::Positions::consecutive(position));
  return head;
}

double score(const std::vector<float>& q, const std::vector<float>& k) {
  double sum = 0;
  for (std::size_t i = 0; i < q.size(); ++i) sum += double(q[i]) * double(k[i]);
  return sum / std::sqrt(double(q.size()));
}

}  // namespace

int main() {
  std::mt19937 rng(7);
  std::normal_distribution<float> normal;
  std::vector<float> q(kHeadSize), k(kHeadSize);
  for (auto& v : q) v = normal(rng);
  for (auto& v : k) v = normal(rng);

  // Each float rotation moves a head by at most 2·γ_3 of its norm (γ_3 ≈ 3u, u = 2^-24:
  // the table entry and the two products and the sum are rounded); two scores with four
  // rotations between them differ by at most 4·2·γ_3·‖q‖·‖k‖/√d, plus the rounding of each
  // double angle m·θ (at most 2^-53 · 41000 radians at the largest position used).
  const double u = std::ldexp(1.0, -24);
  const double per_rotation = 2 * (3 * u / (1 - 3 * u)) + std::ldexp(41000.0, -53);
  const double bound = 4 * per_rotation * std::sqrt(score(q, q) * score(k, k));
  bool ok = true;
  for (const rope::Layout layout : {rope::Layout::interleaved, rope::Layout::half_split}) {
    rope::Options options;
    options.layout = layout;
    options.max_positions = 65536;
    const Rotary rot(options);
    std::printf("%s pairs, head size %zu: score(q at m, k at n) / sqrt(d)\n",
                rope::to_string(layout), kHeadSize);
    for (const std::int64_t offset : {0, 1, 16, 1000}) {
      std::printf("  n - m = %4lld:", static_cast<long long>(offset));
      const double first = score(at(rot, q, 0), at(rot, k, offset));
      for (const std::int64_t m : {0, 7, 500, 40000}) {
        const double s = score(at(rot, q, m), at(rot, k, m + offset));
        std::printf("  m=%-5lld %+.6f", static_cast<long long>(m), s);
        ok = ok && std::abs(s - first) <= bound;
      }
      std::printf("\n");
    }
  }
  std::printf(ok ? "the score depends only on n - m: ok\n" : "MISMATCH\n");
  return ok ? 0 : 1;
}
