// A user's translation unit: rotates float and Eigen::half heads of size 128 once each, with the
// call every engine makes. Its compile time against eigen_baseline.cpp's is the figure of
// docs/design.md ("Pay for what you use").
#include <cstdint>
#include <cstdio>
#include <vector>

#include <rope/rope.hpp>

int main() {
  const rope::Rotary<float, 128> rot_float;
  const rope::Rotary<Eigen::half, 128> rot_half;
  std::vector<float> q(8 * 128, 0.5F);
  std::vector<Eigen::half> k(8 * 128, Eigen::half(0.5F));
  const std::int64_t position = 7;
  rot_float.apply(q.data(), 1, 8, &position);
  rot_half.apply(k.data(), 1, 8, &position);
  std::printf("%g %g\n", static_cast<double>(q[1]), static_cast<double>(float(k[1])));
  return 0;
}
