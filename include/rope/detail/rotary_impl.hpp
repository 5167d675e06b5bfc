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
#include <rope/detail/fused.hpp>
#include <rope/detail/jobs.hpp>

namespace rope {
inline namespace ROPE_DETAIL_ISA {

template <class T, int Dim>
Rotary<T, Dim>::Rotary(const Options& options)
    : core_(options, checked_head_size(options.head_size)) {}

template <class T, int Dim>
ROPE_DETAIL_INLINE bool Rotary<T, Dim>::apply_direct(const View<const T>& src, const View<T>& dst,
                                                     const Positions& positions,
                                                     const Call& call) const {
  const detail::DirectView to = detail::DirectView::of(dst);
  const bool in_place = detail::DirectView::of(src).same(to);
  if (in_place) return core_.apply_direct(kernel(), run_kernel(), &to, 1, positions, call);
  return core_.apply_direct(kernel(), run_kernel(), detail::DirectView::of(src), to, positions,
                            call);
}

template <class T, int Dim>
void Rotary<T, Dim>::apply(View<const T> src, View<T> dst, const Positions& positions,
                           const Call& call) const {
  if (apply_direct(src, dst, positions, call)) return;
  core_.apply(kernel(), run_kernel(), src, dst, positions, call);
}

template <class T, int Dim>
void Rotary<T, Dim>::apply(Unchecked, View<const T> src, View<T> dst, const Positions& positions,
                           const Call& call) const {
  if (apply_direct(src, dst, positions, call)) return;
  core_.apply(unchecked, kernel(), run_kernel(), src, dst, positions, call);
}

template <class T, int Dim>
template <class K>
ROPE_DETAIL_INLINE bool Rotary<T, Dim>::apply_qk_direct(const Queries<T>& q, const Keys<T, K>& k,
                                                        const Positions& positions,
                                                        const Call& call) const {
  if constexpr (is_quantized_v<K>) {
    return false;
  } else {
    // Plain roles: no norm, scale, cache scales or strided coordinates; values as plain, into a
    // cache of T or another storage type with heads of the keys' size.
    if (q.norm.kind != NormKind::none || q.scale || k.norm.kind != NormKind::none ||
        detail::scaled(detail::Quantization::none, k.scales) || !k.coordinates.contiguous()) {
      return false;
    }
    const detail::DirectView q_in = detail::DirectView::of(q.in),
                             q_out = detail::DirectView::of(q.out);
    if (!q_in.same(q_out)) return false;
    const detail::DirectView qk[2] = {q_out, detail::DirectView::of(k.in)};
    if (k.slots.kind() == Slots::Kind::same_rows) {
      if (k.values) return false;  // values at rows t: walked
      // Keys in place: the call of two views.
      if (!detail::DirectView::of(k.out).same(qk[1])) return false;
      return core_.apply_direct(kernel(), nullptr, qk, 2, positions, call);
    }
    constexpr int kHalf = Dim == Eigen::Dynamic ? Eigen::Dynamic : Dim / 2;
    detail::CopyOutside copy = nullptr;
    if constexpr (!std::is_same_v<T, K>) copy = &detail::convert_outside_slice<T, K>;
    const detail::DirectKeys keys{detail::kernel_for<kHalf, T, K>(layout()), copy,
                                  detail::DirectView::of(k.out), &k.slots};
    if (!k.values) return core_.apply_qk_direct(kernel(), qk, keys, nullptr, positions, call);
    const detail::ErasedCache& c = k.values->out;
    if (detail::scaled(c.format->quantization, c.scales) || !c.coordinates.contiguous() ||
        (c.head_size != 0 && c.head_size != head_size())) {
      return false;
    }
    const detail::DirectValues values{c.format->copy, detail::DirectView::of(k.values->in),
                                      detail::DirectView::of(c.rows)};
    return core_.apply_qk_direct(kernel(), qk, keys, &values, positions, call);
  }
}

template <class T, int Dim>
template <class K>
void Rotary<T, Dim>::apply_qk(const Queries<T>& q, const Keys<T, K>& k, const Positions& positions,
                              const Call& call) const {
  if (apply_qk_direct(q, k, positions, call)) return;
  constexpr int kHalf = Dim == Eigen::Dynamic ? Eigen::Dynamic : Dim / 2;
  core_.apply_qk(kernel(), detail::fused_of<kHalf>(q, k, layout(), head_size()), positions, call);
}

template <class T, int Dim>
void Rotary<T, Dim>::apply_qk(View<T> q, View<T> k, const Positions& positions,
                              const Call& call) const {
  const detail::DirectView direct[2] = {detail::DirectView::of(q), detail::DirectView::of(k)};
  if (core_.apply_direct(kernel(), nullptr, direct, 2, positions, call)) return;
  const detail::Job jobs[2] = {detail::Job(q), detail::Job(k)};
  core_.apply_qk(kernel(), jobs, positions, call);
}

template <class T, int Dim>
template <class K>
void Rotary<T, Dim>::apply_qk(Unchecked, const Queries<T>& q, const Keys<T, K>& k,
                              const Positions& positions, const Call& call) const {
  if (apply_qk_direct(q, k, positions, call)) return;
  constexpr int kHalf = Dim == Eigen::Dynamic ? Eigen::Dynamic : Dim / 2;
  core_.apply_qk(unchecked, kernel(), detail::fused_of<kHalf>(q, k, layout(), head_size()),
                 positions, call);
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
template <class K>
void Rotary<T, Dim>::shift(View<K> keys, const CacheScales& scales, std::int64_t delta,
                           const Call& call) const {
  static_assert(is_quantized_v<K> && std::is_same_v<Compute, float>,
                "rope::Rotary<T>::shift(View<K>, CacheScales, ...): K must be a quantised type of "
                "rope/quantized.hpp and T compute in float (float, Eigen::half or "
                "Eigen::bfloat16); keys of T shift with shift(View<T>, delta)");
  constexpr int kHalf = Dim == Eigen::Dynamic ? Eigen::Dynamic : Dim / 2;
  const TokenRange range = detail::check_quantized_shift(keys, detail::quantization_of<K>(), scales,
                                                         head_size(), delta, call);
  const detail::QuantizeJob format = detail::quantize_job<K>(scales, head_size(), keys.heads());
  core_.shift(unchecked, detail::kernel_for<kHalf, float>(layout()), keys, delta,
              Call{call.direction, range, call.execution}, &format);
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

template <class T, int Dim>
detail::RunKernel Rotary<T, Dim>::run_kernel() const noexcept {
  return detail::run_kernel_for < Dim == Eigen::Dynamic ? Eigen::Dynamic : Dim / 2, T > (layout());
}

}  // namespace ROPE_DETAIL_ISA
}  // namespace rope

#endif  // !ROPE_BELOW_CXX17
