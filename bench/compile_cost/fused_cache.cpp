// A user's translation unit: one decode step of a float layer, its queries rotated in place and
// its keys rotated into a half KV cache in one fused call. Its compile time against
// eigen_baseline.cpp's is a figure of docs/api.md ("Compile time").
#include <cstdint>
#include <cstdio>
#include <vector>

#include <rope/rope.hpp>

int main() {
  const rope::Rotary<float, 128> rot;
  std::vector<float> q(32 * 128, 0.5F), k(8 * 128, 0.25F);
  std::vector<Eigen::half> cache(16 * 8 * 128, Eigen::half(0.0F));
  const std::int64_t position = 7, slot = 3;
  rot.apply_qk(
      rope::Queries(rope::View<float>::contiguous(q.data(), 1, 32, 128)),
      rope::Keys(rope::View<const float>::contiguous(k.data(), 1, 8, 128),
                 rope::KeyCache<Eigen::half>{
                     rope::View<Eigen::half>::contiguous(cache.data(), 16, 8, 128), {&slot, 1}}),
      &position);
  std::printf("%g %g\n", static_cast<double>(q[1]), static_cast<double>(float(cache[3 * 1024])));
  return 0;
}
