// The benchmarks' buffers and positions, the same in every benchmark program.
#pragma once

#include <cstddef>
#include <cstdint>
#include <new>
#include <numeric>
#include <vector>

#include <Eigen/Core>

namespace bench {

// Storage on 64-byte boundaries, a cache line: the calls with streaming stores need dst so aligned
// (E33), where Eigen's allocator aligns to its widest packet only (32 bytes with AVX2).
template <class T>
struct LineAligned {
  using value_type = T;
  static constexpr std::align_val_t kAlignment{64};
  LineAligned() = default;
  template <class U>
  LineAligned(const LineAligned<U>&) noexcept {}
  T* allocate(std::size_t n) { return static_cast<T*>(::operator new(n * sizeof(T), kAlignment)); }
  void deallocate(T* p, std::size_t) noexcept { ::operator delete(p, kAlignment); }
  template <class U>
  bool operator==(const LineAligned<U>&) const noexcept {
    return true;
  }
  template <class U>
  bool operator!=(const LineAligned<U>&) const noexcept {
    return false;
  }
};

template <class T>
using Buffer = std::vector<T, LineAligned<T>>;

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
