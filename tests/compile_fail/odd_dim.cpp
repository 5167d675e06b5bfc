// Must not compile: a fixed head size must be even.
#include <rope/rope.hpp>

int main() { rope::Rotary<float, 7> rot; }
