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

// The fused calls, member templates of their key type: each (T, K) pair, checked and unchecked.
#define ROPE_DETAIL_INSTANTIATE_FUSED(T, Dim, K)                                             \
  template void Rotary<T, Dim>::apply_qk<K>(const Queries<T>&, const Keys<T, K>&,            \
                                            const Positions&, const Call&) const;            \
  template void Rotary<T, Dim>::apply_qk<K>(Unchecked, const Queries<T>&, const Keys<T, K>&, \
                                            const Positions&, const Call&) const;
#define ROPE_DETAIL_INSTANTIATE_PAIR(T, K) \
  ROPE_DETAIL_FUSED_SIZES(ROPE_DETAIL_INSTANTIATE_FUSED, T, K)
ROPE_DETAIL_KEY_PAIRS(ROPE_DETAIL_INSTANTIATE_PAIR)
#undef ROPE_DETAIL_INSTANTIATE_PAIR
#undef ROPE_DETAIL_INSTANTIATE_FUSED

#define ROPE_DETAIL_INSTANTIATE_CACHED_FUSED(T, K)                                                 \
  template void CachedRotary<T>::apply_qk<K>(const Queries<T>&, const Keys<T, K>&,                 \
                                             const Positions&, const CosSinCache<T>&, const Call&) \
      const;                                                                                       \
  template void CachedRotary<T>::apply_qk<K>(Unchecked, const Queries<T>&, const Keys<T, K>&,      \
                                             const Positions&, const CosSinCache<T>&, const Call&) \
      const;
ROPE_DETAIL_KEY_PAIRS(ROPE_DETAIL_INSTANTIATE_CACHED_FUSED)
#undef ROPE_DETAIL_INSTANTIATE_CACHED_FUSED

}  // namespace ROPE_DETAIL_ISA
}  // namespace rope
