// The fused call (Queries and Keys, rope/roles.hpp) as both rotators make it: its roles with their
// types erased (Fused), its one check, and its run through the walk with any row source. Rotary
// and CachedRotary differ only in the row source they pass.
#pragma once

#include <rope/config.hpp>
#if !defined(ROPE_BELOW_CXX17)  // config.hpp stops older standards with one #error

#include <cstddef>
#include <type_traits>
#include <vector>

#include <rope/detail/checks.hpp>
#include <rope/detail/geometry.hpp>
#include <rope/detail/jobs.hpp>
#include <rope/detail/norm.hpp>
#include <rope/detail/query_scales.hpp>
#include <rope/detail/values.hpp>
#include <rope/detail/walk.hpp>
#include <rope/execution.hpp>
#include <rope/layout.hpp>
#include <rope/positions.hpp>
#include <rope/roles.hpp>
#include <rope/scalar.hpp>

namespace rope {
inline namespace ROPE_DETAIL_ISA {
namespace detail {

// A fused call's roles with their types erased: the queries from q into q_out, the keys from k
// into k_out (in place, or a cache's rows at the slots) by k_kernel, which writes the cache's
// type, with k_outside converting what it leaves (null: the keys' own type, copied);
// scale_outside scales the queries' coordinates outside the slice.
struct Fused {
  Geometry q, q_out, k, k_out;
  Slots slots;
  Kernel k_kernel;
  CopyOutside k_outside;
  ScaleOutside scale_outside;
  NormJob q_norm, k_norm;   // NormKind::none: not normalised
  const QueryScale* scale;  // null: not scaled
};

// The roles of queries of T and keys into K, with the kernels for heads of at most Half pairs.
template <int Half, class T, class K>
Fused fused_of(const Queries<T>& q, const Keys<T, K>& k, Layout layout,
               std::size_t head_size) noexcept {
  static_assert(is_storage_type_v<K> && std::is_same_v<compute_t<K>, compute_t<T>>,
                "rope::Keys<T, K>: K must compute in T's type: float, Eigen::half or "
                "Eigen::bfloat16 for float and 16-bit T; double for double");
  CopyOutside k_outside = nullptr;
  if constexpr (!std::is_same_v<T, K>) k_outside = &convert_outside_slice<T, K>;
  return {q.in,
          q.out,
          k.in,
          k.out,
          k.slots,
          kernel_for<Half, T, K>(layout),
          k_outside,
          &scale_outside_slice<T>,
          norm_job<T, T>(q.norm, head_size),
          norm_job<T, K>(k.norm, head_size),
          q.scale ? &*q.scale : nullptr};
}

// The checks of a fused call, in the order docs/errors.md lists them: the views; q_out of q's
// shape; k of q's tokens; k_out of k's heads (and k's shape without slots); the views written
// disjoint from every other view (q_out may be q, and k_out k without slots: in place); the token
// range, slots, positions (their coordinates against the 2^53 limit where `coordinates`), index
// arrays outside the views written; streaming stores; the norms and the scale. Returns the
// call's token range.
ROPE_DETAIL_NOINLINE inline TokenRange check_fused(const Fused& f, std::size_t head_size,
                                                   const Positions& positions, std::size_t axes,
                                                   const Call& call, bool coordinates = true) {
  check_direction(call.direction);
  check_view("q", f.q, head_size);
  check_view("q_out", f.q_out, head_size);
  check_view("k", f.k, head_size);
  check_view("cache", f.k_out, head_size);
  check_same_shape("q", f.q, "q_out", f.q_out);
  if (f.q.batches != f.k.batches || f.q.tokens != f.k.tokens) {
    invalid("rope: q has %zu tokens but k has %zu", f.q.rows(), f.k.rows());
  }
  if (f.k_out.heads != f.k.heads) {
    invalid("rope: the cache has %zu heads but k has %zu", f.k_out.heads, f.k.heads);
  }
  const bool rows_t = f.slots.kind() == Slots::Kind::same_rows;
  if (rows_t) check_same_shape("k", f.k, "cache", f.k_out);
  // Views whose extents do not meet are disjoint: that test first, inline, as the pairs of a
  // decode step would otherwise cost more than its rotation of the keys (layout_bench kv_cache).
  const auto disjoint = [&](const char* a_name, const Geometry& a, const char* b_name,
                            const Geometry& b, bool in_place_allowed) {
    if (a.rows() == 0 || a.heads == 0 || b.rows() == 0 || b.heads == 0) return;
    if (a.data < b.end(head_size) && b.data < a.end(head_size)) {
      check_disjoint(a_name, a, b_name, b, head_size, in_place_allowed);
    }
  };
  disjoint("q", f.q, "q_out", f.q_out, true);
  disjoint("q", f.q, "k", f.k, false);
  disjoint("q_out", f.q_out, "k", f.k, false);
  disjoint("cache", f.k_out, "q", f.q, false);
  disjoint("cache", f.k_out, "q_out", f.q_out, false);
  if (!rows_t || !same_heads(f.k, f.k_out)) disjoint("cache", f.k_out, "k", f.k, false);
  const TokenRange range = call.tokens.value_or(TokenRange{0, f.q.rows()});
  check_range(range, f.q.rows());
  if (!rows_t && f.k.heads != 0) check_slots(f.slots, f.k.rows(), f.k_out.rows(), range);
  check_positions(positions, range, f.q.tokens, axes, coordinates);
  // The views written, named as the caller knows them: q and k when in place.
  const char* q_out = same_heads(f.q, f.q_out) ? "q" : "q_out";
  const char* k_out = same_heads(f.k, f.k_out) ? "k" : "cache";
  const IndexBytes position_bytes = index_bytes(positions, range);
  check_index_outside("positions", position_bytes, q_out, f.q_out, head_size);
  check_index_outside("positions", position_bytes, k_out, f.k_out, head_size);
  const IndexBytes slot_bytes = index_bytes(f.slots, range);  // none for a ring or rows t
  check_index_outside("slot", slot_bytes, q_out, f.q_out, head_size);
  check_index_outside("slot", slot_bytes, k_out, f.k_out, head_size);
  if (call.execution.streaming_stores) {
    check_streaming(f.q, f.q_out);
    check_streaming(f.k, f.k_out);
  }
  check_norm("q", f.q_norm.kind, f.q_norm.weight, f.q_norm.weight_size, f.q_norm.epsilon, head_size,
             f.q.heads);
  check_norm("k", f.k_norm.kind, f.k_norm.weight, f.k_norm.weight_size, f.k_norm.epsilon, head_size,
             f.k.heads);
  if (f.scale != nullptr) check_query_scale(*f.scale);
  return range;
}

// Runs a fused call that passed check_fused (or whose caller vouches for it) over `range`: the
// queries' job and the keys', each token's row read once for both.
template <class Source>
void run_fused(const Source& source, Kernel kernel, const Fused& f, const Slice& slice,
               const Positions& positions, TokenRange range, Direction direction,
               const Execution& execution) {
  std::vector<double> scales;
  if (f.scale != nullptr) scales = query_scales(*f.scale, positions, range, f.q.tokens);
  Job jobs[2] = {{f.q, f.q_out}, {f.k, f.k_out}};
  if (f.scale != nullptr) {
    jobs[0].scales = scales.data();
    jobs[0].scale_outside = f.scale_outside;
  }
  jobs[0].norm = if_any(f.q_norm);
  jobs[1].kernel = f.k_kernel;
  jobs[1].copy_outside = f.k_outside;
  jobs[1].slots = f.slots.kind() == Slots::Kind::same_rows ? nullptr : &f.slots;
  jobs[1].norm = if_any(f.k_norm);
  run(source, kernel, jobs, 2, slice, range, direction, execution);
}

}  // namespace detail
}  // namespace ROPE_DETAIL_ISA
}  // namespace rope

#endif  // !ROPE_BELOW_CXX17
