// A user's translation unit that rotates heads of every storage type once, compiled as a user
// compiles it (-O2 -Wall -Wextra, the build's -march): it must not warn. With
// bench/compile_cost/two_types.cpp (float and half), it covers every conversion path, including
// bfloat16 in pairs of registers.
#include <cstdint>
#include <vector>

#include <rope/rope.hpp>

template <class T>
float rotate_once() {
  const rope::Rotary<T, 128> rot;
  std::vector<T> x(2 * 4 * 128, T(0.5F));
  const std::int64_t positions[2] = {0, 1};
  rot.apply(x.data(), 2, 4, positions);
  return static_cast<float>(x[1]);
}

float every_type() {
  return rotate_once<float>() + static_cast<float>(rotate_once<double>()) +
         rotate_once<Eigen::half>() + rotate_once<Eigen::bfloat16>();
}
