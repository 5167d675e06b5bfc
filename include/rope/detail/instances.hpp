// The (T, Dim) pairs of the compiled mode: X(T, Dim) for each Rotary that src/instantiations.cpp
// compiles once, and C(T) for each CachedRotary. Define ROPE_EXTERN_TEMPLATES in every
// translation unit of a program (the rope::compiled CMake target does) and link that file's object:
// then a user's translation unit compiles none of their kernels.
#pragma once

#include <rope/config.hpp>
#if !defined(ROPE_BELOW_CXX17)  // config.hpp stops older standards with one #error

// A table, one type a line; clang-format 14 reflows it differently on each pass.
// clang-format off
#define ROPE_DETAIL_ROTARY_SIZES(X, T) X(T, Eigen::Dynamic) X(T, 64) X(T, 128) X(T, 256)
#define ROPE_DETAIL_ROTARY_INSTANCES(X)      \
  ROPE_DETAIL_ROTARY_SIZES(X, float)         \
  ROPE_DETAIL_ROTARY_SIZES(X, double)        \
  ROPE_DETAIL_ROTARY_SIZES(X, Eigen::half)   \
  ROPE_DETAIL_ROTARY_SIZES(X, Eigen::bfloat16)
// clang-format on

#define ROPE_DETAIL_CACHED_INSTANCES(C) C(float) C(double) C(Eigen::half) C(Eigen::bfloat16)

#endif  // !ROPE_BELOW_CXX17
