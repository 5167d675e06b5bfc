// Decode steps to count with callgrind, where the machine is too noisy for a few percent of
// time: 20 000 calls of rot.apply(x, 1, 40, &position) on Llama 3 8B's heads (40 × 128, float,
// position 4000). Only calls spelled alike in every release, so that builds of two versions
// can be compared. The argument picks the case: bit 0 the layout (0 half_split, 1 interleaved),
// bit 1 the head size (0 fixed, Rotary<float, 128>; 1 at run time, Rotary<float>).
//
//     g++ -std=c++17 -O3 -march=haswell -DNDEBUG -Iinclude -I/usr/include/eigen3
//         bench/decode_calls.cpp -o decode_calls -lpthread          (one command)
//     valgrind --tool=callgrind --callgrind-out-file=decode.out ./decode_calls 2
//     callgrind_annotate --inclusive=yes decode.out | grep 'Rotary<float, -1>::apply'
//
// (valgrind does not run AVX-512 code, hence -march=haswell.) docs/design.md quotes the counts.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <rope/rope.hpp>

int main(int argc, char** argv) {
  const int which = argc > 1 ? std::atoi(argv[1]) : 0;
  rope::Options options;
  options.head_size = 128;
  options.max_positions = 8192;
  options.layout = (which & 1) != 0 ? rope::Layout::interleaved : rope::Layout::half_split;
  const rope::Rotary<float, 128> fixed(options);
  const rope::Rotary<float> dynamic(options);
  std::vector<float> x(40 * 128, 0.5F);
  const std::int64_t position = 4000;
  for (int i = 0; i < 20000; ++i) {
    if ((which & 2) != 0) {
      dynamic.apply(x.data(), 1, 40, &position);
    } else {
      fixed.apply(x.data(), 1, 40, &position);
    }
  }
  std::printf("%g\n", static_cast<double>(x[3]));
  return 0;
}
