// The plain scalar RoPE: the oracle the fast kernels are tested against, and the version to
// paste into model code. Depends on nothing but <cmath> and <cstddef>.
//
// A head x of even size d holds d/2 pairs; pair j turns by the angle φ_j = m·θ_j at position m,
// with θ_j = base^(-2j/d) (RoFormer, eq. 15):
//
//     (a, b)  ->  (a·cos φ_j − b·sin φ_j,  b·cos φ_j + a·sin φ_j)
//
// interleaved pairs are (x[2j], x[2j+1]); half_split pairs are (x[j], x[j + d/2]).
// Rotating by −m undoes a rotation by m.
#pragma once

#include <rope/config.hpp>
#if !defined(ROPE_BELOW_CXX17)  // config.hpp stops older standards with one #error

#include <cmath>
#include <cstddef>

namespace rope {
inline namespace ROPE_DETAIL_ISA {
namespace reference {

/// Rotates the pairs (x[2j], x[2j+1]) of one head by the angles in cos[j], sin[j], j < d/2.
template <class T>
void apply_interleaved(T* x, std::size_t d, const T* cos, const T* sin) {
  for (std::size_t j = 0; j < d / 2; ++j) {
    const T a = x[2 * j], b = x[2 * j + 1];
    x[2 * j] = a * cos[j] - b * sin[j];
    x[2 * j + 1] = b * cos[j] + a * sin[j];
  }
}

/// Rotates the pairs (x[j], x[j + d/2]) of one head by the angles in cos[j], sin[j], j < d/2.
template <class T>
void apply_half_split(T* x, std::size_t d, const T* cos, const T* sin) {
  for (std::size_t j = 0; j < d / 2; ++j) {
    const T a = x[j], b = x[j + d / 2];
    x[j] = a * cos[j] - b * sin[j];
    x[j + d / 2] = b * cos[j] + a * sin[j];
  }
}

/// Rotates one head of interleaved pairs to `position`, computing every angle in double.
inline void rotate_interleaved(double* x, std::size_t d, double position, double base = 10000.0) {
  for (std::size_t j = 0; j < d / 2; ++j) {
    const double angle = position * std::pow(base, -2.0 * double(j) / double(d));
    const double c = std::cos(angle), s = std::sin(angle);
    const double a = x[2 * j], b = x[2 * j + 1];
    x[2 * j] = a * c - b * s;
    x[2 * j + 1] = b * c + a * s;
  }
}

/// Rotates one head of half_split pairs to `position`, computing every angle in double.
inline void rotate_half_split(double* x, std::size_t d, double position, double base = 10000.0) {
  for (std::size_t j = 0; j < d / 2; ++j) {
    const double angle = position * std::pow(base, -2.0 * double(j) / double(d));
    const double c = std::cos(angle), s = std::sin(angle);
    const double a = x[j], b = x[j + d / 2];
    x[j] = a * c - b * s;
    x[j + d / 2] = b * c + a * s;
  }
}

}  // namespace reference
}  // namespace ROPE_DETAIL_ISA
}  // namespace rope

#endif  // !ROPE_BELOW_CXX17
