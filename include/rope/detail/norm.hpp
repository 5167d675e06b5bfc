// The normalisations of qk_norm.hpp for heads of T, as the walk calls them (NormJob, walk.hpp).
//
// r = 1 / √(mean(x²) + ε) in C = compute_t<T>: the squares summed in registers of C (each lane a
// running sum, fused multiply-adds where the target has them), the lanes added, then the tail;
// the mean, the sum with ε, the square root and the quotient each rounded once. Then, per
// coordinate, the form of each model's HuggingFace class:
//
//   rms             n = T(x·r), y = T(w·n)        the product with w after rounding to T (Qwen3)
//   rms_one_plus    y = T((x·r)·(1 + w))          everything in C, one rounding (Gemma 3)
//   rms_projection  y = T(w·(x·r))                everything in C, one rounding (OLMo 2)
//   l2_after        y = T(x·r), x the rotated head in T   (Llama 4)
//
// Registers of C, then the tail one value at a time with the same operations in the same order.
#pragma once

#include <rope/config.hpp>
#if !defined(ROPE_BELOW_CXX17)  // config.hpp stops older standards with one #error

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <type_traits>

#include <Eigen/Core>

#include <rope/detail/jobs.hpp>
#include <rope/detail/packet.hpp>
#include <rope/detail/values.hpp>
#include <rope/qk_norm.hpp>
#include <rope/scalar.hpp>

namespace rope {
inline namespace ROPE_DETAIL_ISA {
namespace detail {

// Σ x_i² over n values of T, in C: four registers of running sums while four registers fit (so
// that the fused multiply-adds do not wait on each other), then one, then the tail.
template <class T>
compute_t<T> sum_of_squares(const T* x, std::size_t n) {
  using C = compute_t<T>;
  using P = simd::Packet<C>;
  constexpr std::size_t L = static_cast<std::size_t>(simd::kLanes<C>);
  P lanes[4] = {simd::broadcast<P>(C(0)), simd::broadcast<P>(C(0)), simd::broadcast<P>(C(0)),
                simd::broadcast<P>(C(0))};
  std::size_t i = 0;
  for (; i + 4 * L <= n; i += 4 * L) {
    for (std::size_t k = 0; k < 4; ++k) {
      const P v = simd::load<P>(x + i + k * L);
      lanes[k] = simd::madd(v, v, lanes[k]);
    }
  }
  for (; i + L <= n; i += L) {
    const P v = simd::load<P>(x + i);
    lanes[0] = simd::madd(v, v, lanes[0]);
  }
  C sum = simd::sum(simd::add(simd::add(lanes[0], lanes[1]), simd::add(lanes[2], lanes[3])));
  for (; i < n; ++i) {
    const C v = static_cast<C>(x[i]);
    sum = sum + v * v;
  }
  return sum;
}

// r = 1 / √(sum / n + ε) in place of each of `count` sums, each operation rounded once in C, a
// register of heads at a time (simd::sqrt is the rounded root), the last partial register
// through a copy padded with ones.
template <class C>
void inverse_rms(C* sums, std::size_t count, std::size_t n, double epsilon) {
  using P = simd::Packet<C>;
  constexpr std::size_t L = static_cast<std::size_t>(simd::kLanes<C>);
  const P size = simd::broadcast<P>(static_cast<C>(n));
  const P eps = simd::broadcast<P>(static_cast<C>(epsilon)), one = simd::broadcast<P>(C(1));
  const auto r = [&](const P& sum) {
    return simd::div(one, simd::sqrt(simd::add(simd::div(sum, size), eps)));
  };
  std::size_t h = 0;
  for (; h + L <= count; h += L) simd::store(sums + h, r(simd::load<P>(sums + h)));
  if (h == count) return;
  C last[L];
  std::fill(last, last + L, C(1));
  std::copy(sums + h, sums + count, last);
  simd::store(last, r(simd::load<P>(last)));
  std::copy(last, last + (count - h), sums + h);
}

// y[i] of n values, normalised by r with weights w, in the form Kind (not l2_after).
template <NormKind Kind, class T>
void normalize_values(const T* x, const T* w, compute_t<T> r, std::size_t n, T* y) {
  using C = compute_t<T>;
  using P = simd::Packet<C>;
  constexpr std::size_t L = static_cast<std::size_t>(simd::kLanes<C>);
  const P rv = simd::broadcast<P>(r), one = simd::broadcast<P>(C(1));
  std::size_t i = 0;
  for (; i + L <= n; i += L) {
    const P v = simd::load<P>(x + i), wv = simd::load<P>(w + i);
    if constexpr (Kind == NormKind::rms && !std::is_same_v<T, C>) {
      simd::store(y + i, simd::mul(v, rv));  // n = T(x·r), then w·n from the rounded n
      simd::store(y + i, simd::mul(wv, simd::load<P>(y + i)));
    } else if constexpr (Kind == NormKind::rms_one_plus) {
      simd::store(y + i, simd::mul(simd::mul(v, rv), simd::add(one, wv)));
    } else {  // rms_projection, and rms where T(x·r) is x·r
      simd::store(y + i, simd::mul(wv, simd::mul(v, rv)));
    }
  }
  for (; i < n; ++i) {
    const C v = static_cast<C>(x[i]), wi = static_cast<C>(w[i]);
    if constexpr (Kind == NormKind::rms) {
      y[i] = static_cast<T>(wi * static_cast<C>(static_cast<T>(v * r)));
    } else if constexpr (Kind == NormKind::rms_one_plus) {
      y[i] = static_cast<T>((v * r) * (C(1) + wi));
    } else {
      y[i] = static_cast<T>(wi * (v * r));
    }
  }
}

// NormJob::factors for T: r of each head (each head's own, or, for rms_projection, the r of all
// of them together) into r.
template <class T>
void norm_factors(const NormJob& norm, const unsigned char* heads, std::size_t stride,
                  std::size_t count, unsigned char* r_bytes) {
  using C = compute_t<T>;
  const std::size_t d = norm.head_size;
  C* r = reinterpret_cast<C*>(r_bytes);
  // The sums of all heads first, then their r together.
  for (std::size_t n = 0; n < count; ++n) {
    r[n] = sum_of_squares(reinterpret_cast<const T*>(heads + n * stride), d);
  }
  if (norm.kind == NormKind::rms_projection) {
    C whole = 0;
    for (std::size_t n = 0; n < count; ++n) whole += r[n];
    inverse_rms(&whole, 1, count * d, norm.epsilon);
    std::fill(r, r + count, whole);
    return;
  }
  inverse_rms(r, count, d, norm.epsilon);
}

// NormJob::before for T: heads [first, first + count) normalised into `out`.
template <class T>
void normalize_before(const NormJob& norm, const unsigned char* heads, std::size_t stride,
                      std::size_t first, std::size_t count, const unsigned char* r_bytes,
                      unsigned char* out) {
  using C = compute_t<T>;
  const std::size_t d = norm.head_size;
  const C* r = reinterpret_cast<const C*>(r_bytes);
  const T* weight = static_cast<const T*>(norm.weight);
  T* y = reinterpret_cast<T*>(out);
  for (std::size_t n = 0; n < count; ++n) {
    const std::size_t h = first + n;
    const T* x = reinterpret_cast<const T*>(heads + h * stride);
    if (norm.kind == NormKind::rms) {
      normalize_values<NormKind::rms>(x, weight, r[h], d, y + n * d);
    } else if (norm.kind == NormKind::rms_one_plus) {
      normalize_values<NormKind::rms_one_plus>(x, weight, r[h], d, y + n * d);
    } else {
      normalize_values<NormKind::rms_projection>(x, weight + h * d, r[h], d, y + n * d);
    }
  }
}

// NormJob::after for T: each head y = T(x·r) in place (l2_after).
template <class T>
void normalize_after(const NormJob& norm, unsigned char* heads, std::size_t count,
                     const unsigned char* r_bytes) {
  using C = compute_t<T>;
  const std::size_t d = norm.head_size;
  const C* r = reinterpret_cast<const C*>(r_bytes);
  for (std::size_t n = 0; n < count; ++n) {
    scale_values(reinterpret_cast<T*>(heads) + n * d, d, static_cast<double>(r[n]));
  }
}

// NormJob::store for heads of T into D.
template <class T, class D>
void store_normalized(const NormJob& norm, const unsigned char* heads, std::size_t count,
                      unsigned char* dst, std::size_t dst_stride) {
  const std::size_t d = norm.head_size;
  for (std::size_t n = 0; n < count; ++n) {
    convert_values(reinterpret_cast<const T*>(heads) + n * d,
                   reinterpret_cast<D*>(dst + n * dst_stride), d);
  }
}

// The NormJob of `norm` for heads of T written as D (kind none: never called).
template <class T, class D>
NormJob norm_job(const Norm<T>& norm, std::size_t head_size) noexcept {
  if (norm.kind == NormKind::none) return {};
  const bool after = norm.kind == NormKind::l2_after;
  return {norm.kind,
          norm.weight,
          norm.weight_size,
          norm.epsilon,
          head_size,
          &norm_factors<T>,
          after ? nullptr : &normalize_before<T>,
          after ? &normalize_after<T> : nullptr,
          &store_normalized<T, D>};
}

}  // namespace detail
}  // namespace ROPE_DETAIL_ISA
}  // namespace rope

#endif  // !ROPE_BELOW_CXX17
