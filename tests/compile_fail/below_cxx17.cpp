// Must not compile, with exactly one error naming C++17: the library below C++17.
#include <rope/rope.hpp>

int main() { return 0; }
