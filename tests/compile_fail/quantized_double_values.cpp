// Must not compile: a quantised value cache takes values of float or a 16-bit type, as a
// quantised key cache does; double values go into a cache of double.
#include <vector>

#include <rope/rope.hpp>

int main() {
  const rope::Rotary<double, 8> rot;
  std::vector<double> q(8), k(8), v(8);
  std::vector<rope::Float8E4M3> cache(8);
  const std::int64_t position = 0;
  const auto q_view = rope::View<double>::contiguous(q.data(), 1, 1, 8);
  const auto k_view = rope::View<double>::contiguous(k.data(), 1, 1, 8);
  rot.apply_qk(rope::Queries(q_view),
               rope::Keys(k_view).with_values(
                   rope::View<const double>::contiguous(v.data(), 1, 1, 8),
                   rope::ValueCache<rope::Float8E4M3>{
                       rope::View<rope::Float8E4M3>::contiguous(cache.data(), 1, 1, 8)}),
               &position);
}
