// Must not compile: the stored scalar must be a floating-point type the kernels support.
#include <rope/rope.hpp>

int main() { rope::Rotary<int, 8> rot; }
