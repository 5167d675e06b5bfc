// The library version. CMake reads the three numbers from this file.
#pragma once

#include <rope/config.hpp>
#if !defined(ROPE_BELOW_CXX17)  // config.hpp stops older standards with one #error

#define ROPE_VERSION_MAJOR 0
#define ROPE_VERSION_MINOR 2
#define ROPE_VERSION_PATCH 0

#endif  // !ROPE_BELOW_CXX17
