// The benchmarks' buffers and positions, the same in every benchmark program.
#pragma once

#include <cstddef>
#include <cstdint>
#include <numeric>
#include <vector>

#include <Eigen/Core>

namespace bench {

template <class T>
using Buffer = std::vector<T, Eigen::aligned_allocator<T>>;

// Values in [−1, 1) from a cheap generator: the DRAM shapes fill 20 M elements per buffer.
template <class T>
Buffer<T> filled(std::size_t n, std::uint32_t seed = 1) {
  Buffer<T> v(n);
  std::uint32_t state = seed;
  for (T& x : v) {
    state = state * 1664525U + 1013904223U;
    x = static_cast<T>(float(state >> 8) * (2.0F / 16777216.0F) - 1.0F);
  }
  return v;
}

// One token at the decode position, or a prefill at positions 0 .. tokens-1.
inline std::vector<std::int64_t> positions_for(std::size_t tokens,
                                               std::int64_t decode_position = 4000) {
  std::vector<std::int64_t> positions(tokens);
  std::iota(positions.begin(), positions.end(), std::int64_t{0});
  if (tokens == 1) positions[0] = decode_position;
  return positions;
}

}  // namespace bench
