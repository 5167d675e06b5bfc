// Must not compile: a vector's scalar type must be the Rotary's T.
#include <rope/rope.hpp>

int main() {
  const rope::Rotary<float, 8> rot;
  Eigen::VectorXd v = Eigen::VectorXd::Zero(8);
  (void)rot.rotated(v, 0);
}
