// The bodies of rope::Rotary's members (rotary.hpp declares and documents them, and includes this
// file after the class): each hands its views to the Core (detail/core.hpp) with the kernel of T
// and Dim. They are defined out of the class, so that the compiled mode's extern template
// declarations keep the kernels out of a user's translation unit.
#pragma once

#include <rope/config.hpp>
#if !defined(ROPE_BELOW_CXX17)  // config.hpp stops older standards with one #error

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <vector>

#include <rope/detail/checks.hpp>
#include <rope/detail/core.hpp>
#include <rope/detail/norm.hpp>
#include <rope/detail/walk.hpp>

namespace rope {
inline namespace ROPE_DETAIL_ISA {

template <class T, int Dim>
Rotary<T, Dim>::Rotary(const Options& options)
    : core_(options, checked_head_size(options.head_size)) {}

template <class T, int Dim>
void Rotary<T, Dim>::apply(View<const T> src, View<T> dst, const Positions& positions,
                           const Call& call) const {
  core_.apply(kernel(), src, dst, positions, call);
}

template <class T, int Dim>
void Rotary<T, Dim>::apply(Unchecked, View<const T> src, View<T> dst, const Positions& positions,
                           const Call& call) const {
  core_.apply(unchecked, kernel(), src, dst, positions, call);
}

template <class T, int Dim>
void Rotary<T, Dim>::apply_qk(View<T> q, View<T> k, const Positions& positions,
                              const Call& call) const {
  core_.apply_qk(kernel(), q, k, nullptr, nullptr, positions, call);
}

template <class T, int Dim>
void Rotary<T, Dim>::apply_qk(View<T> q, View<T> k, const Positions& positions,
                              const QueryScale& scale, const Call& call) const {
  core_.apply_qk(kernel(), &detail::scale_outside_slice<T>, q, k, positions, scale, call);
}

template <class T, int Dim>
void Rotary<T, Dim>::apply_qk(Unchecked, View<T> q, View<T> k, const Positions& positions,
                              const Call& call) const {
  core_.apply_qk(unchecked, kernel(), q, k, nullptr, nullptr, positions, call);
}

template <class T, int Dim>
void Rotary<T, Dim>::apply_qk(Unchecked, View<T> q, View<T> k, const Positions& positions,
                              const QueryScale& scale, const Call& call) const {
  core_.apply_qk(unchecked, kernel(), &detail::scale_outside_slice<T>, q, k, positions, scale,
                 call);
}

template <class T, int Dim>
template <class K>
detail::CacheJobs Rotary<T, Dim>::cache_jobs(View<const T> q, View<T> q_out, View<const T> k,
                                             const KeyCache<K>& cache,
                                             const detail::NormJob* q_norm,
                                             const detail::NormJob* k_norm) const noexcept {
  static_assert(is_storage_type_v<K> && std::is_same_v<compute_t<K>, Compute>,
                "rope::KeyCache<K>: K must compute in T's type: float, Eigen::half or "
                "Eigen::bfloat16 for float and 16-bit T; double for double");
  constexpr int kHalf = Dim == Eigen::Dynamic ? Eigen::Dynamic : Dim / 2;
  return {q,
          q_out,
          k,
          cache.rows,
          &cache.slots,
          detail::kernel_for<kHalf, T, K>(layout()),
          &detail::convert_outside_slice<T, K>,
          &detail::scale_outside_slice<T>,
          q_norm,
          k_norm};
}

template <class T, int Dim>
template <class K>
void Rotary<T, Dim>::apply_qk(View<const T> q, View<T> q_out, View<const T> k,
                              const KeyCache<K>& cache, const Positions& positions,
                              const Call& call) const {
  core_.apply_qk(kernel(), cache_jobs(q, q_out, k, cache), positions, nullptr, call);
}

template <class T, int Dim>
template <class K>
void Rotary<T, Dim>::apply_qk(View<const T> q, View<T> q_out, View<const T> k,
                              const KeyCache<K>& cache, const Positions& positions,
                              const QueryScale& scale, const Call& call) const {
  core_.apply_qk(kernel(), cache_jobs(q, q_out, k, cache), positions, &scale, call);
}

template <class T, int Dim>
template <class K>
void Rotary<T, Dim>::apply_qk(Unchecked, View<const T> q, View<T> q_out, View<const T> k,
                              const KeyCache<K>& cache, const Positions& positions,
                              const Call& call) const {
  core_.apply_qk(unchecked, kernel(), cache_jobs(q, q_out, k, cache), positions, nullptr, call);
}

template <class T, int Dim>
template <class K>
void Rotary<T, Dim>::apply_qk(Unchecked, View<const T> q, View<T> q_out, View<const T> k,
                              const KeyCache<K>& cache, const Positions& positions,
                              const QueryScale& scale, const Call& call) const {
  core_.apply_qk(unchecked, kernel(), cache_jobs(q, q_out, k, cache), positions, &scale, call);
}

template <class T, int Dim>
void Rotary<T, Dim>::apply_qk(View<T> q, View<T> k, const Positions& positions,
                              const QkNorms<T>& norms, const Call& call) const {
  const detail::NormJob q_norm = detail::norm_job<T, T>(norms.q, head_size());
  const detail::NormJob k_norm = detail::norm_job<T, T>(norms.k, head_size());
  core_.apply_qk(kernel(), q, k, detail::if_any(q_norm), detail::if_any(k_norm), positions, call);
}

template <class T, int Dim>
void Rotary<T, Dim>::apply_qk(Unchecked, View<T> q, View<T> k, const Positions& positions,
                              const QkNorms<T>& norms, const Call& call) const {
  const detail::NormJob q_norm = detail::norm_job<T, T>(norms.q, head_size());
  const detail::NormJob k_norm = detail::norm_job<T, T>(norms.k, head_size());
  core_.apply_qk(unchecked, kernel(), q, k, detail::if_any(q_norm), detail::if_any(k_norm),
                 positions, call);
}

template <class T, int Dim>
template <class K>
void Rotary<T, Dim>::apply_qk(View<const T> q, View<T> q_out, View<const T> k,
                              const KeyCache<K>& cache, const Positions& positions,
                              const QkNorms<T>& norms, const Call& call) const {
  const detail::NormJob q_norm = detail::norm_job<T, T>(norms.q, head_size());
  const detail::NormJob k_norm = detail::norm_job<T, K>(norms.k, head_size());
  core_.apply_qk(kernel(),
                 cache_jobs(q, q_out, k, cache, detail::if_any(q_norm), detail::if_any(k_norm)),
                 positions, nullptr, call);
}

template <class T, int Dim>
template <class K>
void Rotary<T, Dim>::apply_qk(Unchecked, View<const T> q, View<T> q_out, View<const T> k,
                              const KeyCache<K>& cache, const Positions& positions,
                              const QkNorms<T>& norms, const Call& call) const {
  const detail::NormJob q_norm = detail::norm_job<T, T>(norms.q, head_size());
  const detail::NormJob k_norm = detail::norm_job<T, K>(norms.k, head_size());
  core_.apply_qk(unchecked, kernel(),
                 cache_jobs(q, q_out, k, cache, detail::if_any(q_norm), detail::if_any(k_norm)),
                 positions, nullptr, call);
}

template <class T, int Dim>
void Rotary<T, Dim>::shift(View<T> keys, std::int64_t delta, const Call& call) const {
  core_.shift(kernel(), keys, delta, call);
}

template <class T, int Dim>
void Rotary<T, Dim>::shift(Unchecked, View<T> keys, std::int64_t delta, const Call& call) const {
  core_.shift(unchecked, kernel(), keys, delta, call);
}

template <class T, int Dim>
template <class Derived>
typename Derived::PlainObject Rotary<T, Dim>::rotated(const Eigen::DenseBase<Derived>& head,
                                                      std::int64_t position,
                                                      Direction direction) const {
  static_assert(std::is_same_v<typename Derived::Scalar, T>,
                "rope::Rotary<T, Dim>::rotated: the vector's scalar type must be T");
  static_assert(Derived::IsVectorAtCompileTime, "rope::Rotary<T, Dim>::rotated: needs a vector");
  if (static_cast<std::size_t>(head.size()) != head_size()) {
    detail::invalid("rope: the vector has %lld coefficients but the head size is %zu",
                    static_cast<long long>(head.size()), head_size());
  }
  typename Derived::PlainObject out = head;  // contiguous, whatever the expression's strides
  apply(out.data(), 1, 1, Positions::consecutive(position), {direction});
  return out;
}

template <class T, int Dim>
std::size_t Rotary<T, Dim>::checked_head_size(std::size_t head_size) {
  if constexpr (Dim != Eigen::Dynamic) {
    if (head_size != 0 && head_size != static_cast<std::size_t>(Dim)) {
      detail::invalid("rope: Options::head_size %zu disagrees with the compile-time head size %d",
                      head_size, Dim);
    }
    return static_cast<std::size_t>(Dim);
  } else {
    detail::check_head_size(head_size);
    return head_size;
  }
}

template <class T, int Dim>
detail::Kernel Rotary<T, Dim>::kernel() const noexcept {
  return detail::kernel_for < Dim == Eigen::Dynamic ? Eigen::Dynamic : Dim / 2, T > (layout());
}

}  // namespace ROPE_DETAIL_ISA
}  // namespace rope

#endif  // !ROPE_BELOW_CXX17
