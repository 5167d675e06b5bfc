// The bits of every kernel path, hashed: one line per configuration (type, layout, head size,
// rotated width, heads) with an FNV-1a hash of its outputs, in place forward and out of place
// inverse, at positions in and past the table. A change that must keep the bits (a new loop
// order, a new remainder path) is checked by building two revisions with the same flags and
// comparing the outputs; a change of bits shows which configurations it touched.
//
//     g++ -std=c++17 -O2 -march=haswell -Iinclude -I/usr/include/eigen3 bench/bits_hash.cpp
//         -o bits_hash                               (one command, at each revision)
//     ./bits_hash > after.txt; diff before.txt after.txt
//
// Flags matter (FMA changes the last bit between targets, docs/design.md): compare builds of
// one target. The inputs come from a fixed generator, the same in every build.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <random>
#include <vector>

#include <rope/rope.hpp>

namespace {

std::uint64_t fnv1a(const void* data, std::size_t bytes) {
  std::uint64_t hash = 1469598103934665603ULL;
  const auto* b = static_cast<const unsigned char*>(data);
  for (std::size_t i = 0; i < bytes; ++i) {
    hash ^= b[i];
    hash *= 1099511628211ULL;
  }
  return hash;
}

template <class T>
std::uint64_t hash_type(const char* name) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> uniform(-1.0F, 1.0F);
  std::uint64_t all = 0;
  const std::size_t tokens = 5;
  const std::int64_t positions[tokens] = {0, 1, 77, 4095, 100000};
  for (const std::size_t d : {8U, 18U, 34U, 72U, 80U, 128U, 130U, 256U}) {
    for (const rope::Layout layout : {rope::Layout::interleaved, rope::Layout::half_split}) {
      for (const std::size_t rotary : {d, d - 4}) {
        rope::Options options;
        options.head_size = d;
        options.layout = layout;
        options.rotary_dim = rotary;
        options.rotary_offset = d - rotary;
        const rope::Rotary<T> rot(options);
        for (const std::size_t heads : {1U, 3U, 9U, 17U}) {
          std::vector<T> x(tokens * heads * d), y(x.size());
          for (T& v : x) v = T(uniform(rng));
          const std::vector<T> input = x;
          rot.apply(x.data(), tokens, heads, positions);
          rot.apply(rope::View<const T>::contiguous(input.data(), tokens, heads, d),
                    rope::View<T>::contiguous(y.data(), tokens, heads, d), positions,
                    rope::Direction::inverse);
          const std::uint64_t hash =
              fnv1a(x.data(), x.size() * sizeof(T)) ^ (fnv1a(y.data(), y.size() * sizeof(T)) << 1);
          all = all * 31 + hash;
          std::printf("%s %s d%zu rotary%zu heads%zu %016llx\n", name, rope::to_string(layout), d,
                      rotary, heads, static_cast<unsigned long long>(hash));
        }
      }
    }
  }
  return all;
}

}  // namespace

int main() {
  std::uint64_t all = hash_type<float>("float");
  all = all * 31 + hash_type<double>("double");
  all = all * 31 + hash_type<Eigen::half>("half");
  all = all * 31 + hash_type<Eigen::bfloat16>("bfloat16");
  std::printf("all %016llx (%s)\n", static_cast<unsigned long long>(all), rope::instruction_set());
  return 0;
}
