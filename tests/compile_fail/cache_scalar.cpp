// Must not compile: a caller's cache is float or double.
#include <rope/rope.hpp>

int main() {
  const rope::CachedRotary<Eigen::half> rot({8, rope::Layout::half_split, 0, 0});
  (void)rot;
}
