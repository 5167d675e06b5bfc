// Must not compile: a quantised key cache takes keys computed in float; double keys go into a
// cache of double.
#include <vector>

#include <rope/rope.hpp>

int main() {
  const rope::Rotary<double, 8> rot;
  std::vector<double> q(8), k(8);
  std::vector<rope::Float8E4M3> cache(8);
  const std::int64_t position = 0;
  const auto q_view = rope::View<double>::contiguous(q.data(), 1, 1, 8);
  rot.apply_qk(rope::Queries(q_view, q_view),
               rope::Keys(rope::View<const double>::contiguous(k.data(), 1, 1, 8),
                          rope::KeyCache<rope::Float8E4M3>{
                              rope::View<rope::Float8E4M3>::contiguous(cache.data(), 1, 1, 8)}),
               &position);
}
