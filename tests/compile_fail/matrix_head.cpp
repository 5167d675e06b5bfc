// Must not compile: one head is a vector, not a matrix.
#include <rope/rope.hpp>

int main() {
  const rope::Rotary<float, 8> rot;
  const Eigen::MatrixXf m = Eigen::MatrixXf::Zero(8, 2);
  (void)rot.rotated(m, 0);
}
