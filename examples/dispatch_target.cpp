// One instruction set's half of examples/dispatch.cpp: compiled twice, once with -march=haswell
// (DISPATCH_TARGET=avx2) and once with -march=skylake-avx512 (DISPATCH_TARGET=avx512). rope's
// code in each object lives in the namespace of its instruction set, so the two link into one
// program without one's kernels replacing the other's.
#include <cstddef>
#include <cstdint>

#include <rope/rope.hpp>

#include "dispatch.hpp"

#define DISPATCH_CAT(a, b) a##b
#define DISPATCH_NAME(a, b) DISPATCH_CAT(a, b)

dispatch::Target DISPATCH_NAME(dispatch_, DISPATCH_TARGET)() {
  dispatch::Target target;
  target.isa = rope::instruction_set();
  target.rotate = [](float* x, std::size_t tokens, std::size_t heads,
                     const std::int64_t* positions) {
    static const rope::Rotary<float, dispatch::kHeadSize> rot(dispatch::options());
    rot.apply(x, tokens, heads, positions);
  };
  // A non-template function of the library: its address tells whether the linker kept one copy.
  target.library_code = reinterpret_cast<void (*)()>(&rope::frequencies);
  return target;
}
