// Must not compile: a caller's cache is of a storage type (float, double, Eigen::half,
// Eigen::bfloat16).
#include <rope/rope.hpp>

int main() {
  const rope::CachedRotary<int> rot({8, rope::Layout::half_split, 0, 0});
  (void)rot;
}
