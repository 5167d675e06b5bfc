// The library version. CMake reads the three numbers from this file.
#pragma once

#define ROPE_VERSION_MAJOR 0
#define ROPE_VERSION_MINOR 1
#define ROPE_VERSION_PATCH 0
