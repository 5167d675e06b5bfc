// Reads a config.json through rope::hf_config (the reader compiled once, nlohmann_json brought
// by the package) and rotates a head with what it read: the head size and layout of Qwen3 8B.
#include <cstdint>
#include <cstdio>
#include <vector>

#include <rope/hf_config.hpp>
#include <rope/rope.hpp>

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  const rope::HfRope r = rope::hf_rope_file(argv[1]);
  const rope::Rotary<float> rot(r.options);
  std::vector<float> q(rot.head_size(), 1.0F);
  const std::int64_t position = 0;
  rot.apply(q.data(), 1, 1, &position);  // position 0 leaves the head as it is
  std::printf("%s: head %zu, %s\n", r.model_type.c_str(), rot.head_size(),
              rope::to_string(r.options.layout));
  return rot.head_size() == 128 && r.options.layout == rope::Layout::half_split && q[5] == 1.0F ? 0
                                                                                                : 1;
}
