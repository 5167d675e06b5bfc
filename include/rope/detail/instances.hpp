// The (T, Dim) pairs of the compiled mode: X(T, Dim) for each Rotary that src/instantiations.cpp
// compiles once, and C(T) for each CachedRotary. Define ROPE_EXTERN_TEMPLATES in every
// translation unit of a program (the rope::compiled CMake target does) and link that file's object:
// then a user's translation unit compiles none of their kernels.
#pragma once

#include <rope/config.hpp>
#if !defined(ROPE_BELOW_CXX17)  // config.hpp stops older standards with one #error

#define ROPE_DETAIL_ROTARY_INSTANCES(X)                                                           \
  X(float, Eigen::Dynamic)                                                                        \
  X(float, 64) X(float, 128) X(float, 256) X(double, Eigen::Dynamic) X(double, 64) X(double, 128) \
      X(double, 256) X(Eigen::half, Eigen::Dynamic) X(Eigen::half, 64) X(Eigen::half, 128)        \
          X(Eigen::half, 256) X(Eigen::bfloat16, Eigen::Dynamic) X(Eigen::bfloat16, 64)           \
              X(Eigen::bfloat16, 128) X(Eigen::bfloat16, 256)

#define ROPE_DETAIL_CACHED_INSTANCES(C) C(float) C(double) C(Eigen::half) C(Eigen::bfloat16)

#endif  // !ROPE_BELOW_CXX17
