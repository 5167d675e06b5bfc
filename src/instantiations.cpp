// The compiled mode: every Rotary<T, Dim> of detail/instances.hpp, and every CachedRotary<T>,
// compiled once. Link this file's object into a program whose translation units all define
// ROPE_EXTERN_TEMPLATES (CMake: link rope::compiled); compile it with the same flags (-march
// above all) as they are, since its kernels are theirs.
#include <rope/rope.hpp>

namespace rope {
inline namespace ROPE_DETAIL_ISA {

template class detail::Core<float>;
template class detail::Core<double>;
#define ROPE_DETAIL_INSTANTIATE(T, Dim) template class Rotary<T, Dim>;
ROPE_DETAIL_ROTARY_INSTANCES(ROPE_DETAIL_INSTANTIATE)
#undef ROPE_DETAIL_INSTANTIATE

#define ROPE_DETAIL_INSTANTIATE_CACHED(T) template class CachedRotary<T>;
ROPE_DETAIL_CACHED_INSTANCES(ROPE_DETAIL_INSTANTIATE_CACHED)
#undef ROPE_DETAIL_INSTANTIATE_CACHED

}  // namespace ROPE_DETAIL_ISA
}  // namespace rope
