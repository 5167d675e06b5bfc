// What examples/dispatch.cpp and its per-target objects share: plain types only, since rope's own
// types are distinct in each instruction set's namespace.
#pragma once

#include <cstddef>
#include <cstdint>

#include <rope/rope.hpp>

namespace dispatch {

inline constexpr std::size_t kHeadSize = 128;

inline rope::Options options() {
  rope::Options o;
  o.base = 500000.0;
  o.max_positions = 4096;
  return o;
}

struct Target {
  const char* isa = nullptr;  // rope::instruction_set() of the object
  void (*rotate)(float* x, std::size_t tokens, std::size_t heads,
                 const std::int64_t* positions) = nullptr;
  void (*library_code)() = nullptr;  // &rope::frequencies as that object sees it
};

}  // namespace dispatch

dispatch::Target dispatch_avx2();
dispatch::Target dispatch_avx512();
