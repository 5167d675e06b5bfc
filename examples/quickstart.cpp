// The README's example: what an inference engine does with rope, prefill then one decode step.
#include <cstdint>
#include <cstdio>
#include <numeric>
#include <vector>

#include <rope/rope.hpp>

int main() {
  constexpr std::size_t kHeadSize = 128, kQueryHeads = 32, kKeyHeads = 8, kPrompt = 6;
  rope::Options options;    // half_split pairs, as in HuggingFace's LLaMA checkpoints
  options.base = 500000.0;  // rope_theta of Llama 3
  options.max_positions = 8192;
  const rope::Rotary<float, kHeadSize> rot(options);

  // Prefill: the prompt's tokens at positions 0..5; q is [token][head][128], k likewise.
  std::vector<float> q(kPrompt * kQueryHeads * kHeadSize, 0.5f);
  std::vector<float> k(kPrompt * kKeyHeads * kHeadSize, 0.5f);
  std::vector<std::int64_t> positions(kPrompt);
  std::iota(positions.begin(), positions.end(), 0);
  rot.apply(q.data(), kPrompt, kQueryHeads, positions.data());
  rot.apply(k.data(), kPrompt, kKeyHeads, positions.data());

  // Decode: one new token at position 6; q and k rotated in one pass over its table row.
  std::vector<float> q1(kQueryHeads * kHeadSize, 0.5f), k1(kKeyHeads * kHeadSize, 0.5f);
  rot.apply_qk(rope::View<float>::contiguous(q1.data(), 1, kQueryHeads, kHeadSize),
               rope::View<float>::contiguous(k1.data(), 1, kKeyHeads, kHeadSize),
               rope::Positions::consecutive(kPrompt));

  std::printf("prefill q[5][0][0] = %.6f, decode k[0][0] = %.6f\n",
              double(q[5 * kQueryHeads * kHeadSize]), double(k1[0]));
}
