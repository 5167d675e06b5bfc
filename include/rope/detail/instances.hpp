// The (T, Dim) pairs of the compiled mode: X(T, Dim) for each Rotary that src/instantiations.cpp
// compiles once, C(T) for each CachedRotary, and K(T, Dim, K) for each fused call of a Rotary
// (and P(T, K) of a CachedRotary) whose keys go to K: every K that computes in T's type. Define
// ROPE_EXTERN_TEMPLATES in every translation unit of a program (the rope::compiled CMake target
// does) and link that file's object: then a user's translation unit compiles none of their kernels.
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

// clang-format off
#define ROPE_DETAIL_KEY_PAIRS(P)                                                   \
  P(float, float) P(float, Eigen::half) P(float, Eigen::bfloat16)                  \
  P(double, double)                                                                \
  P(Eigen::half, Eigen::half) P(Eigen::half, Eigen::bfloat16) P(Eigen::half, float) \
  P(Eigen::bfloat16, Eigen::bfloat16) P(Eigen::bfloat16, Eigen::half) P(Eigen::bfloat16, float)
#define ROPE_DETAIL_FUSED_SIZES(K, T, Key) \
  K(T, Eigen::Dynamic, Key) K(T, 64, Key) K(T, 128, Key) K(T, 256, Key)
// clang-format on

#endif  // !ROPE_BELOW_CXX17
