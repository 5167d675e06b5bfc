// Rotates one head with rope as a consumer project sees it (installed, or vendored as a
// subdirectory) and checks it against the reference.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <vector>

#include <rope/rope.hpp>

int main() {
  const rope::Rotary<double, 8> rot({0, 10000.0, rope::Layout::half_split, 32});
  std::vector<double> x = {1, 2, 3, 4, 5, 6, 7, 8};
  std::vector<double> expected = x;
  const std::int64_t position = 31;
  rot.apply(x.data(), 1, 1, &position);
  rope::reference::rotate_half_split(expected.data(), 8, 31.0);
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (std::abs(x[i] - expected[i]) > 1e-12) {
      std::printf("coordinate %zu: %.17g, expected %.17g\n", i, x[i], expected[i]);
      return 1;
    }
  }
  std::printf("rope %d.%d.%d: ok\n", ROPE_VERSION_MAJOR, ROPE_VERSION_MINOR, ROPE_VERSION_PATCH);
  return 0;
}
