// Where cos(φ_j) and sin(φ_j) of pair j sit in a row of the kernels (the one place that says it):
//
//     interleaved  [c0 s0 c1 s1 ... ]          = e^{iφ_j} as complex numbers
//     half_split   [c0 c1 ... | s0 s1 ... ]    cos half, then sin half
//
// A Table's rows, a row computed past the table, a multi-axis row put together from the rows of
// a token's coordinates, and a caller's cos/sin caches gathered for the kernels all follow it.
#pragma once

#include <rope/config.hpp>
#if !defined(ROPE_BELOW_CXX17)  // config.hpp stops older standards with one #error

#include <cstddef>

#include <rope/layout.hpp>

namespace rope {
inline namespace ROPE_DETAIL_ISA {
namespace detail {

// The index of cos(φ_j) and of sin(φ_j) in a row of `half` pairs.
constexpr std::size_t cos_index(Layout layout, std::size_t half, std::size_t j) noexcept {
  return layout == Layout::interleaved ? 2 * j : (static_cast<void>(half), j);
}
constexpr std::size_t sin_index(Layout layout, std::size_t half, std::size_t j) noexcept {
  return layout == Layout::interleaved ? 2 * j + 1 : half + j;
}

// Writes the pair j entries of a row.
template <class C>
void put_pair(Layout layout, std::size_t half, std::size_t j, C cos, C sin, C* row) noexcept {
  row[cos_index(layout, half, j)] = cos;
  row[sin_index(layout, half, j)] = sin;
}

}  // namespace detail
}  // namespace ROPE_DETAIL_ISA
}  // namespace rope

#endif  // !ROPE_BELOW_CXX17
