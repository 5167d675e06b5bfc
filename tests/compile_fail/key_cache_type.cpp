// Must not compile: keys computed in float go into a cache of float, Eigen::half or
// Eigen::bfloat16, not double.
#include <vector>

#include <rope/rope.hpp>

int main() {
  const rope::Rotary<float, 8> rot;
  std::vector<float> q(8), k(8);
  std::vector<double> cache(8);
  const std::int64_t position = 0;
  const auto q_view = rope::View<float>::contiguous(q.data(), 1, 1, 8);
  rot.apply_qk(
      rope::Queries(q_view, q_view),
      rope::Keys(rope::View<const float>::contiguous(k.data(), 1, 1, 8),
                 rope::KeyCache<double>{rope::View<double>::contiguous(cache.data(), 1, 1, 8)}),
      &position);
}
