// The parts of a fused call, as named roles: the queries and the keys of the same tokens, each
// with where it is read, where it is written and what else happens to it in the same pass.
//
//     rope::Queries<float> q(q_view);                      // in place
//     q.norm = {rope::NormKind::rms, q_weight, 128, 1e-6};  // QK-norm before RoPE (Qwen3)
//     rope::Keys<float, Eigen::half> k(k_view, {cache_rows, rope::Slots(slots, tokens)});
//     k.norm = {rope::NormKind::rms, k_weight, 128, 1e-6};
//     rot.apply_qk(q, k, positions);                        // one pass: norms, RoPE, the cache
//     // ... and the values of the same tokens into their cache at the same slots:
//     rot.apply_qk(q, k.with_values(v_view, rope::ValueCache<Eigen::half>{v_rows}), positions);
//
// Every field is optional but the views, and every combination is one call. A role holds
// pointers, not copies: the buffers, weights and slots must outlive the call.
#pragma once

#include <rope/config.hpp>
#if !defined(ROPE_BELOW_CXX17)  // config.hpp stops older standards with one #error

#include <optional>
#include <type_traits>

#include <rope/detail/value_cache.hpp>
#include <rope/key_cache.hpp>
#include <rope/qk_norm.hpp>
#include <rope/quantized.hpp>
#include <rope/query_scale.hpp>
#include <rope/scalar.hpp>
#include <rope/view.hpp>

namespace rope {
inline namespace ROPE_DETAIL_ISA {

/// The queries of a fused call: read from `in`, written to `out` (in place when out is in;
/// otherwise the two share no byte), normalised as `norm` says, and multiplied by `scale`'s s(p)
/// where it is set (after the norm: folded into the rotation for a norm before RoPE, applied to
/// the normalised head for NormKind::l2_after).
template <class T>
struct Queries {
  View<const T> in;
  View<T> out;
  Norm<T> norm = {};
  std::optional<QueryScale> scale = {};

  /// In place.
  Queries(View<T> x) noexcept : in(x), out(x) {}  // NOLINT(google-explicit-constructor)
  /// From `in` into `out`.
  Queries(View<const T> source, View<T> destination) noexcept : in(source), out(destination) {}

  /// The same queries, normalised by `n` (or scaled by s(p)): one line each in a call.
  Queries normalized(const Norm<T>& n) const noexcept {
    Queries q = *this;
    q.norm = n;
    return q;
  }
  Queries scaled(const QueryScale& s) const noexcept {
    Queries q = *this;
    q.scale = s;
    return q;
  }
};

/// The values of a fused call's tokens (Keys::values): read from `in` (the keys' shape) and
/// written, converted or quantised as a key cache of V would be but never rotated, into the rows
/// of a ValueCache<V> at the keys' slots. V is erased here, so that the call's code does not
/// depend on it.
template <class T>
struct Values {
  View<const T> in;
  detail::ErasedCache out;

  template <class V>
  Values(View<const T> source, const ValueCache<V>& cache) noexcept
      : in(source),
        out{cache.rows, cache.scales, cache.head_size, cache.coordinates,
            &detail::value_format<T, V>} {
    static_assert((is_storage_type_v<V> && std::is_same_v<compute_t<V>, compute_t<T>>) ||
                      (is_quantized_v<V> && std::is_same_v<compute_t<T>, float>),
                  "rope::ValueCache<V>: V must hold T's values as a key cache of T may: float, "
                  "Eigen::half or Eigen::bfloat16 for float and 16-bit T; double for double; or, "
                  "for float and 16-bit T, a quantised type of rope/quantized.hpp");
  }
};

/// The keys of a fused call: read from `in`, rotated into `out` (in place when out is in), or
/// into the rows of a KV cache of K at the rows `slots` names (K as KeyCache says: float, 16-bit,
/// or quantised with its `scales`); normalised as `norm` says. With `values`, the values of the
/// same tokens go into a value cache at the same rows in the same pass.
template <class T, class K = T>
struct Keys {
  View<const T> in;
  View<K> out;
  Slots slots = {};
  CacheScales scales = {};
  Coordinates coordinates = {};  // of the cache's heads
  Norm<T> norm = {};
  std::optional<Values<T>> values = {};

  /// In place.
  template <class U = K, class = std::enable_if_t<std::is_same_v<U, T>>>
  Keys(View<T> x) noexcept : in(x), out(x) {}  // NOLINT(google-explicit-constructor)
  /// Into a KV cache: row cache.slots(t) of cache.rows for token t.
  Keys(View<const T> source, const KeyCache<K>& cache) noexcept
      : in(source),
        out(cache.rows),
        slots(cache.slots),
        scales(cache.scales),
        coordinates(cache.coordinates) {}

  /// The same keys, normalised by `n`.
  Keys normalized(const Norm<T>& n) const noexcept {
    Keys k = *this;
    k.norm = n;
    return k;
  }
  /// The same keys, and their tokens' values `v` into `cache`'s rows at the same slots (the row
  /// of token t: row t where the keys have no slots): one call appends a layer's keys and values.
  template <class V>
  Keys with_values(View<const T> v, const ValueCache<V>& cache) const noexcept {
    Keys k = *this;
    k.values.emplace(v, cache);
    return k;
  }
};

template <class T>
Queries(View<T>) -> Queries<std::remove_const_t<T>>;
template <class S, class T>
Queries(View<S>, View<T>) -> Queries<T>;
template <class T>
Keys(View<T>) -> Keys<T>;
template <class T, class K>
Keys(View<T>, const KeyCache<K>&) -> Keys<std::remove_const_t<T>, K>;

}  // namespace ROPE_DETAIL_ISA
}  // namespace rope

#endif  // !ROPE_BELOW_CXX17
