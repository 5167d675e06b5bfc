// The yardstick of the compile-cost measurement (docs/design.md): a translation unit that includes
// <Eigen/Core> and does one array operation.
#include <cstdio>

#include <Eigen/Core>

int main() {
  Eigen::ArrayXf x = Eigen::ArrayXf::LinSpaced(128, 0.0F, 1.0F);
  x = x * 2.0F + 1.0F;
  std::printf("%g\n", static_cast<double>(x.sum()));
  return 0;
}
