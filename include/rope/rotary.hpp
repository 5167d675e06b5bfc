// rope::Rotary<T, Dim>: rotary position embedding of query and key heads. This file declares and
// documents; the bodies are in detail/rotary_impl.hpp.
#pragma once

#include <rope/config.hpp>
#if !defined(ROPE_BELOW_CXX17)  // config.hpp stops older standards with one #error

#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <vector>

#include <Eigen/Core>

#include <rope/axes.hpp>
#include <rope/detail/core.hpp>
#include <rope/execution.hpp>
#include <rope/frequencies.hpp>
#include <rope/layout.hpp>
#include <rope/options.hpp>
#include <rope/positions.hpp>
#include <rope/roles.hpp>
#include <rope/scalar.hpp>
#include <rope/table.hpp>
#include <rope/view.hpp>

namespace rope {
inline namespace ROPE_DETAIL_ISA {

/// Rotary position embedding for heads of Dim coordinates of type T.
///
/// T is the stored element type: float, double, Eigen::half or Eigen::bfloat16 (the 16-bit
/// types are rotated in float: widened exactly, rounded to nearest even when stored). Dim is the
/// head size fixed at compile time, or Eigen::Dynamic to take it from Options::head_size. A
/// Rotary is immutable after construction: one object may be shared by any number of threads.
///
/// Three primitives rotate: apply (src into dst, which may be src), apply_qk (queries and keys
/// of the same tokens in one pass, as roles: rope/roles.hpp) and shift (keys already rotated,
/// moved by delta positions).
/// Each checks its arguments before writing anything and has a rope::unchecked twin that does
/// not; each takes a trailing Call (direction, token range, threads, stores). Token t, counted
/// over the sequences of a View, rotates to positions(t) (docs/errors.md lists every check).
/// Three conveniences are one line each: in place on a View, in place on a contiguous buffer,
/// and rotated(vector, position).
///
///     rope::Options options;
///     options.base = 500000.0;
///     const rope::Rotary<float, 128> rot(options);
///     rot.apply(q, tokens, 32, positions);   // q: [tokens][32][128], in place
template <class T, int Dim = Eigen::Dynamic>
class Rotary {
  static_assert(is_storage_type_v<T>,
                "rope::Rotary<T, Dim>: T must be float, double, Eigen::half or Eigen::bfloat16");
  static_assert(Dim == Eigen::Dynamic || (Dim > 0 && Dim % 2 == 0),
                "rope::Rotary<T, Dim>: Dim must be a positive even head size or Eigen::Dynamic");

 public:
  using Scalar = T;
  /// The type of the arithmetic and of the table: double for double, float otherwise.
  using Compute = compute_t<T>;

  /// Computes θ_j and the cos/sin table (O(max_positions · rotary_dim) time and memory).
  ///
  /// Throws std::invalid_argument if the head size is odd or zero, disagrees with a fixed Dim,
  /// rotary_dim is odd or rotary_offset + rotary_dim exceeds the head, base is not finite and
  /// > 0, max_positions is 0 or its table would exceed table_memory_limit, sequence_length is
  /// negative or not finite, a scaling parameter is out of range (see rope::frequencies), or the
  /// axes do not fit the rotary dimension.
  explicit Rotary(const Options& options = {});

  std::size_t head_size() const noexcept { return core_.head_size(); }
  /// Coordinates rotated per head, starting at rotary_offset().
  std::size_t rotary_dim() const noexcept { return core_.rotary_dim(); }
  std::size_t rotary_offset() const noexcept { return core_.rotary_offset(); }
  double base() const noexcept { return core_.base(); }
  Layout layout() const noexcept { return core_.layout(); }
  std::size_t max_positions() const noexcept { return core_.table().positions(); }
  /// θ_j, j < rotary_dim/2, in double, after scaling.
  const std::vector<double>& inverse_frequencies() const noexcept { return core_.theta(); }
  /// The factor on every cos and sin entry (1 but for Yarn and LongRope).
  double attention_factor() const noexcept { return core_.attention_factor(); }
  const Table<Compute>& table() const noexcept { return core_.table(); }
  /// The number of coordinates per token: 1 but for multi-axis RoPE (Options::axes).
  std::size_t axes() const noexcept { return core_.axes(); }
  /// The axis each pair takes, pair i in θ order (all 0 for ordinary RoPE).
  const std::vector<std::uint8_t>& axis_of_pairs() const noexcept { return core_.axis_of_pairs(); }

  // ---- the primitives ------------------------------------------------------------------------

  /// Writes the rotation of src into dst: the same sequences, tokens and heads, any strides. dst
  /// may be src (in place); src and dst that otherwise share a byte are rejected. Token t of the
  /// call.tokens range (all tokens by default) rotates to positions(t): one coordinate per
  /// token, or axes() of them (multi-axis RoPE; a 1-D Positions rotates every axis alike).
  /// Positions past max_positions get their row computed on the fly, bit for bit as the table's.
  ///
  /// Throws std::invalid_argument for a null pointer, overlapping strides, different shapes,
  /// shared bytes, positions of another number of axes, or streaming stores in place or to a
  /// dst not aligned to 64 bytes; std::out_of_range for a token range outside the call or a
  /// coordinate outside [0, 2^53 − 1]. O(tokens · heads · rotary_dim); one row read per token.
  void apply(View<const T> src, View<T> dst, const Positions& positions,
             const Call& call = {}) const;

  /// The fused call: queries and keys of the same tokens in one pass, each token's row read once
  /// for all heads of both. Each role says where it is read and written and what else happens to
  /// it (rope/roles.hpp): q from q.in into q.out (in place when they are one view), normalised by
  /// q.norm and multiplied by q.scale's s(positions(t)); k from k.in into k.out, in place or into
  /// the rows of a KV cache of K at the slots k.slots names, normalised by k.norm. Every
  /// combination is this one call. q and k may have different head counts (grouped-query
  /// attention) and strides, but the same sequences and tokens.
  ///
  /// The bits: each role's result equals doing its steps in separate passes of this library:
  /// a norm before RoPE (rms, rms_one_plus, rms_projection), then apply by the token's row (times
  /// s(p) for scaled queries: s·R_m, coordinates outside the rotated slice times s(p) too), then
  /// an l2_after norm, then s(p) after it (scale_queries); keys rotated in compute_t<T> and
  /// rounded once to the cache's K (with K = T, the bits of apply). A negative slot skips the
  /// token's keys (its queries are rotated); cache rows no slot names are not touched.
  /// Direction::inverse gives R_mᵀ (and s(p)·R_mᵀ: the gradient of the forward call).
  ///
  /// Throws as apply does, and std::invalid_argument if q and k have different tokens, k.out has
  /// not k's head count (E67) or, without slots, not k's shape (E68), the slots are not one per
  /// token (E69), two tokens take the same row (E71), a view written shares a byte with another
  /// view (E72; q.out may be q.in and k.out k.in without slots), a norm's weight has the wrong
  /// length or is null (E73), ε is not finite and > 0 (E74), or a scale parameter is out of
  /// range (E65); std::out_of_range for a slot at or past the cache's rows (E70). Nothing is
  /// written before the checks pass. O(tokens · (q heads + k heads) · rotary_dim).
  template <class K = T>
  void apply_qk(const Queries<T>& q, const Keys<T, K>& k, const Positions& positions,
                const Call& call = {}) const;

  /// Context shift: rotates keys already at their positions m by `delta` more positions, in
  /// place, so that they become the keys of positions m + delta (delta < 0 moves them back;
  /// Direction::inverse moves them by −delta).
  ///
  /// An engine that drops or moves a window of its KV cache calls this on the keys that move,
  /// instead of recomputing them: R_δ R_m = R_{m+δ}, so the result equals rotating the unrotated
  /// keys to m + δ, up to rounding (a few ulps of T per shift; shifts accumulate). The rotation
  /// is R_δ alone, without the attention factor that Yarn and LongRope put on cos and sin, and
  /// the same for every axis of a multi-axis Rotary. Exact for every scheme whose θ_j is fixed;
  /// not for DynamicNTK, and LongRope across its short/long switch, when the keys were rotated
  /// for another sequence_length (docs/api.md).
  ///
  /// Throws std::invalid_argument for a null or overlapping view, or streaming stores (in
  /// place); std::out_of_range if |delta| > 2^53 − 1 or the token range is outside the view.
  /// O(tokens · heads · rotary_dim); one row, computed once, for all tokens.
  void shift(View<T> keys, std::int64_t delta, const Call& call = {}) const;

  /// Context shift on quantised keys in place (a KV cache of K of rope/quantized.hpp, with its
  /// scales as a KeyCache<K> takes them): each row's heads loaded to float (fp8: code · scale;
  /// int8: q · its row's scale; q8_0: d · q; q4_0: d · (q − 8)), rotated by R_delta as shift
  /// rotates float keys, and quantised back into the row as the fused call quantises keys (int8
  /// rows get new scales). No copy of the layer: one row at a time, in a buffer of the thread's.
  /// Each shift adds the format's rounding once more (docs/api.md states the bound after n
  /// shifts). T must compute in float. Streaming stores do not apply.
  ///
  /// Throws as shift(View<T>) does, and std::invalid_argument for a head size that is not a whole
  /// number of blocks (E84), or scales the format does not take, out of range or overlapping the
  /// keys (E82, E83, E85, E86). O(tokens · heads · head_size).
  template <class K>
  void shift(View<K> keys, const CacheScales& scales, std::int64_t delta,
             const Call& call = {}) const;

  /// The primitives without any argument check (see rope::Unchecked). Preconditions: the checked
  /// call would not throw; coordinates outside [0, 2^53 − 1] give unspecified values.
  void apply(Unchecked, View<const T> src, View<T> dst, const Positions& positions,
             const Call& call = {}) const;
  void shift(Unchecked, View<T> keys, std::int64_t delta, const Call& call = {}) const;
  template <class K = T>
  void apply_qk(Unchecked, const Queries<T>& q, const Keys<T, K>& k, const Positions& positions,
                const Call& call = {}) const;

  // ---- conveniences, one line each -------------------------------------------------------------

  /// Rotates the heads of a view in place.
  void apply(View<T> x, const Positions& positions, const Call& call = {}) const {
    const detail::DirectView direct = detail::DirectView::of(x);
    if (core_.apply_direct(kernel(), run_kernel(), &direct, 1, positions, call)) return;
    core_.apply(kernel(), run_kernel(), x, x, positions, call);
  }

  /// Rotates queries and keys of the same tokens in place in one pass: apply_qk(Queries<T>(q),
  /// Keys<T>(k), positions, call), without building the roles.
  void apply_qk(View<T> q, View<T> k, const Positions& positions, const Call& call = {}) const;

  /// Rotates a contiguous [tokens][heads][head_size] buffer in place. The one call whose buffer
  /// length cannot be checked: x must hold tokens · heads · head_size() values.
  void apply(T* x, std::size_t tokens, std::size_t heads, const Positions& positions,
             const Call& call = {}) const {
    const detail::DirectView direct{reinterpret_cast<std::uintptr_t>(x),
                                    sizeof(T),
                                    1,
                                    tokens,
                                    heads,
                                    heads * head_size(),
                                    head_size(),
                                    View<T>::unknown};
    if (core_.apply_direct(kernel(), run_kernel(), &direct, 1, positions, call)) return;
    const View<T> view = View<T>::contiguous(x, tokens, heads, head_size());
    core_.apply(kernel(), run_kernel(), view, view, positions, call);
  }

  /// Returns one head (any Eigen vector expression of head_size T) rotated to `position`.
  /// Throws std::invalid_argument if the vector's size is not the head size.
  template <class Derived>
  typename Derived::PlainObject rotated(const Eigen::DenseBase<Derived>& head,
                                        std::int64_t position,
                                        Direction direction = Direction::forward) const;

 private:
  static std::size_t checked_head_size(std::size_t head_size);
  // The kernel of T for the layout: a fixed Dim bounds the rotated pairs, whole head or partial.
  detail::Kernel kernel() const noexcept;
  detail::RunKernel run_kernel() const noexcept;
  // apply of src into dst without the walk where the call allows it (Core::apply_direct): the
  // same view in place, or views apart.
  bool apply_direct(const View<const T>& src, const View<T>& dst, const Positions& positions,
                    const Call& call) const;
  // apply_qk of plain roles without the walk where the call allows it: keys in place as the call
  // of two views (Core::apply_direct), or one token's keys into a key cache
  // (Core::apply_qk_direct).
  template <class K>
  bool apply_qk_direct(const Queries<T>& q, const Keys<T, K>& k, const Positions& positions,
                       const Call& call) const;
  // Everything but the kernels: compiled once per Compute type (detail/core.hpp).
  detail::Core<Compute> core_;
};

}  // namespace ROPE_DETAIL_ISA
}  // namespace rope

#include <rope/detail/rotary_impl.hpp>

#if defined(ROPE_EXTERN_TEMPLATES)
#include <rope/detail/instances.hpp>
namespace rope {
inline namespace ROPE_DETAIL_ISA {
extern template class detail::Core<float>;
extern template class detail::Core<double>;
#define ROPE_DETAIL_EXTERN(T, Dim) extern template class Rotary<T, Dim>;
ROPE_DETAIL_ROTARY_INSTANCES(ROPE_DETAIL_EXTERN)
#undef ROPE_DETAIL_EXTERN
// The fused call is a member template: each of its key types is declared on its own.
#define ROPE_DETAIL_EXTERN_FUSED(T, Dim, K)                                              \
  extern template void Rotary<T, Dim>::apply_qk<K>(const Queries<T>&, const Keys<T, K>&, \
                                                   const Positions&, const Call&) const; \
  extern template void Rotary<T, Dim>::apply_qk<K>(                                      \
      Unchecked, const Queries<T>&, const Keys<T, K>&, const Positions&, const Call&) const;
#define ROPE_DETAIL_EXTERN_PAIR(T, K) ROPE_DETAIL_FUSED_SIZES(ROPE_DETAIL_EXTERN_FUSED, T, K)
ROPE_DETAIL_KEY_PAIRS(ROPE_DETAIL_EXTERN_PAIR)
#undef ROPE_DETAIL_EXTERN_PAIR
#undef ROPE_DETAIL_EXTERN_FUSED
}  // namespace ROPE_DETAIL_ISA
}  // namespace rope
#endif

#endif  // !ROPE_BELOW_CXX17
