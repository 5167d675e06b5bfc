#include "scalar_kernels.hpp"

#include <rope/reference.hpp>

namespace rope_bench {

template <class T>
void scalar_apply(rope::Layout layout, T* x, std::size_t tokens, std::size_t heads, std::size_t d,
                  const std::int64_t* positions, const T* cos, const T* sin) {
  for (std::size_t t = 0; t < tokens; ++t) {
    const std::size_t row = static_cast<std::size_t>(positions[t]) * (d / 2);
    for (std::size_t h = 0; h < heads; ++h) {
      T* head = x + (t * heads + h) * d;
      if (layout == rope::Layout::interleaved) {
        rope::reference::apply_interleaved(head, d, cos + row, sin + row);
      } else {
        rope::reference::apply_half_split(head, d, cos + row, sin + row);
      }
    }
  }
}

template void scalar_apply<float>(rope::Layout, float*, std::size_t, std::size_t, std::size_t,
                                  const std::int64_t*, const float*, const float*);
template void scalar_apply<double>(rope::Layout, double*, std::size_t, std::size_t, std::size_t,
                                   const std::int64_t*, const double*, const double*);

}  // namespace rope_bench
