// How an inference engine spreads a prefill over threads: with its own workers and
// rope::TokenRange, or with rope::Execution. Half-precision q and k, Llama 3 8B heads. Checks
// that every way gives the same bits as one plain call and exits non-zero if not.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <numeric>
#include <thread>
#include <vector>

#include <Eigen/Core>

#include <rope/rope.hpp>

int main() {
  constexpr std::size_t kHeadSize = 128, kQueryHeads = 32, kKeyHeads = 8, kTokens = 300;
  using T = Eigen::half;  // stored as IEEE half, rotated in float
  rope::Options options;
  options.base = 500000.0;
  const rope::Rotary<T, kHeadSize> rot(options);

  std::vector<T> q(kTokens * kQueryHeads * kHeadSize), k(kTokens * kKeyHeads * kHeadSize);
  for (std::size_t i = 0; i < q.size(); ++i) q[i] = T(float(i % 97) / 97.0F - 0.5F);
  for (std::size_t i = 0; i < k.size(); ++i) k[i] = T(float(i % 89) / 89.0F - 0.5F);
  std::vector<std::int64_t> positions(kTokens);
  std::iota(positions.begin(), positions.end(), 0);

  // 1. One call on the calling thread.
  std::vector<T> q1 = q, k1 = k;
  rot.apply_qk(rope::View<T>::contiguous(q1.data(), kTokens, kQueryHeads, kHeadSize),
               rope::View<T>::contiguous(k1.data(), kTokens, kKeyHeads, kHeadSize),
               positions.data());

  // 2. The engine's own workers, each rotating a disjoint range of tokens on the shared Rotary.
  std::vector<T> q2 = q, k2 = k;
  const auto q2_view = rope::View<T>::contiguous(q2.data(), kTokens, kQueryHeads, kHeadSize);
  const auto k2_view = rope::View<T>::contiguous(k2.data(), kTokens, kKeyHeads, kHeadSize);
  const std::size_t workers = 3;
  std::vector<std::thread> pool;
  for (std::size_t w = 0; w < workers; ++w) {
    const rope::TokenRange range{kTokens * w / workers, kTokens * (w + 1) / workers};
    pool.emplace_back([&, range] { rot.apply_qk(q2_view, k2_view, positions.data(), range); });
  }
  for (std::thread& worker : pool) worker.join();

  // 3. rope's own split: two threads (OpenMP's when compiled with it, else std::thread).
  std::vector<T> q3 = q, k3 = k;
  rope::Execution execution;
  execution.threads = 2;
  rot.apply_qk(rope::View<T>::contiguous(q3.data(), kTokens, kQueryHeads, kHeadSize),
               rope::View<T>::contiguous(k3.data(), kTokens, kKeyHeads, kHeadSize),
               positions.data(), execution);

  const auto same = [](const std::vector<T>& a, const std::vector<T>& b) {
    return std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
  };
  const bool ok = same(q1, q2) && same(k1, k2) && same(q1, q3) && same(k1, k3) && !same(q1, q);
  std::printf(
      "%zu tokens x (%zu + %zu) heads of %zu halves: %zu workers with TokenRange and "
      "Execution{threads = 2} match one call bit for bit: %s\n",
      kTokens, kQueryHeads, kKeyHeads, kHeadSize, workers, ok ? "ok" : "FAILED");
  return ok ? 0 : 1;
}
