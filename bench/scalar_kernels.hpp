// The scalar baseline: rope::reference's table-driven loops over a whole batch, compiled in their
// own translation unit without auto-vectorisation (see bench/CMakeLists.txt).
#pragma once

#include <cstddef>
#include <cstdint>

#include <rope/layout.hpp>

namespace rope_bench {

// Rotates x ([tokens][heads][d], in place) with cos/sin tables of [positions][d/2] each.
template <class T>
void scalar_apply(rope::Layout layout, T* x, std::size_t tokens, std::size_t heads, std::size_t d,
                  const std::int64_t* positions, const T* cos, const T* sin);

extern template void scalar_apply<float>(rope::Layout, float*, std::size_t, std::size_t,
                                         std::size_t, const std::int64_t*, const float*,
                                         const float*);
extern template void scalar_apply<double>(rope::Layout, double*, std::size_t, std::size_t,
                                          std::size_t, const std::int64_t*, const double*,
                                          const double*);

}  // namespace rope_bench
