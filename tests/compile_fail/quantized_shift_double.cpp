// Must not compile: quantised keys are shifted in float; a Rotary of double shifts keys of double.
#include <vector>

#include <rope/rope.hpp>

int main() {
  const rope::Rotary<double, 64> rot;
  std::vector<rope::BlockQ8_0> cache(2);
  rot.shift(rope::View<rope::BlockQ8_0>::contiguous(cache.data(), 1, 1, 2), {}, 5);
}
