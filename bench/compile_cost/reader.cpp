// A user's translation unit that reads the RoPE of a checkpoint from its config.json and rotates
// float heads with it: the figure of docs/api.md ("Compile time") for the config.json reader,
// against eigen_baseline.cpp's.
#include <cstdint>
#include <cstdio>
#include <vector>

#include <rope/hf_config.hpp>
#include <rope/rope.hpp>

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  const rope::HfRope r = rope::hf_rope_file(argv[1]);
  const rope::Rotary<float> rot(r.options);
  std::vector<float> q(8 * rot.head_size(), 0.5F);
  const std::int64_t position = 7;
  rot.apply(q.data(), 1, 8, &position);
  std::printf("%g\n", static_cast<double>(q[1]));
  return 0;
}
