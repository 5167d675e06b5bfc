// Built with -fno-exceptions. `valid` rotates a batch and checks it against the float64
// reference; every other case (of the rotation, the config.json reader and the GGUF reader)
// makes a documented error, which must print its message and abort
// (tests/no_exceptions/run.cmake checks both). Returning from an error case is a failure.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include <rope/gguf.hpp>
#include <rope/hf_config.hpp>
#include <rope/rope.hpp>

int main(int argc, char** argv) {
  const std::string which = argc > 1 ? argv[1] : "";
  constexpr std::size_t d = 8;
  const rope::Rotary<double, d> rot(rope::Options{d, 10000.0, rope::Layout::half_split, 16});
  std::vector<double> x(2 * d);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = 0.25 * double(i) - 1;
  if (which == "valid") {
    std::vector<double> expected = x;
    rope::reference::rotate_half_split(expected.data(), d, 3);
    rope::reference::rotate_half_split(expected.data() + d, d, 4);
    rot.apply(x.data(), 2, 1, rope::Positions::consecutive(3));
    double worst = 0;
    for (std::size_t i = 0; i < x.size(); ++i)
      worst = std::fmax(worst, std::fabs(x[i] - expected[i]));
    std::printf("largest difference from the reference: %g\n", worst);
    return worst <= 1e-14 ? 0 : 1;  // a few ulps of coordinates below 3 (docs/numerics.md)
  }
  if (which == "odd_head_size") {
    const rope::Rotary<float> odd(rope::Options{7});
    (void)odd;
  } else if (which == "negative_position") {
    rot.apply(x.data(), 2, 1, rope::Positions::consecutive(-5));
  } else if (which == "unknown_model_type") {
    (void)rope::hf_rope(nlohmann::json{{"model_type", "mystery_lm"}, {"head_dim", 64}});
  } else if (which == "unknown_architecture") {
    (void)rope::gguf_rope(rope::GgufMetadata{{"general.architecture", std::string("mystery")}});
  } else if (which == "overlapping_views") {
    rot.apply(rope::View<const double>::contiguous(x.data(), 1, 1, d),
              rope::View<double>::contiguous(x.data() + 1, 1, 1, d),
              rope::Positions::consecutive(0));
  }
  std::printf("no error for case '%s'\n", which.c_str());
  return 3;
}
