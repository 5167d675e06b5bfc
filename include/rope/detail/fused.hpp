// The fused call (Queries and Keys, rope/roles.hpp) as both rotators make it: its roles with their
// types erased (Fused), its one check, and its run through the walk with any row source. Rotary
// and CachedRotary differ only in the row source they pass.
#pragma once

#include <rope/config.hpp>
#if !defined(ROPE_BELOW_CXX17)  // config.hpp stops older standards with one #error

#include <cfloat>
#include <cstddef>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include <rope/detail/checks.hpp>
#include <rope/detail/geometry.hpp>
#include <rope/detail/jobs.hpp>
#include <rope/detail/norm.hpp>
#include <rope/detail/quantize.hpp>
#include <rope/detail/query_scales.hpp>
#include <rope/detail/value_cache.hpp>
#include <rope/detail/values.hpp>
#include <rope/detail/walk.hpp>
#include <rope/execution.hpp>
#include <rope/layout.hpp>
#include <rope/positions.hpp>
#include <rope/quantized.hpp>
#include <rope/roles.hpp>
#include <rope/scalar.hpp>

namespace rope {
inline namespace ROPE_DETAIL_ISA {
namespace detail {

// A fused call's roles with their types erased: the walk's two jobs as they run without a norm
// or a scale (the queries from q into q_out; the keys from k into k_out, in place or a cache's
// rows at the slots, by the keys' kernel, which writes the cache's type, with copy_outside
// converting what it leaves), the norms' jobs and the scale. A call of plain roles hands the
// jobs to the walk as they are.
struct Fused {
  // A constructor, not an aggregate initialisation: g++ zeroes a whole aggregate (744 bytes)
  // before it writes the fields given (docs/measurements/2026-12-03-amd-epyc-roles.md).
  Fused(const Geometry& q, const Geometry& q_out, const Geometry& k, const Geometry& k_out,
        const Slots* keys_slots, const QueryScale* query_scale,
        const CacheScales* cache_scales) noexcept
      : jobs{Job(q, q_out), Job(k, k_out)},
        slots(keys_slots),
        scale(query_scale),
        scales(cache_scales) {}

  Job jobs[2];
  const Slots* slots;               // the keys' role's
  const QueryScale* scale;          // null: not scaled
  std::optional<NormJob> q_norm{};  // empty: not normalised
  std::optional<NormJob> k_norm{};
  const CacheScales* scales;  // the keys' role's
  Quantization quantization = Quantization::none;
  std::optional<QuantizeJob> k_quantize{};
  // The values (Keys::values): their job, a copy into their cache at the keys' slots.
  std::optional<Job> v_job{};
  const ErasedCache* v_cache = nullptr;
  std::optional<QuantizeJob> v_quantize{};

  Quantization v_quantization() const noexcept {
    return v_cache != nullptr ? v_cache->format->quantization : Quantization::none;
  }
  // Values in a value head: the value cache's head_size, or the keys' `head_size`.
  std::size_t v_head_size(std::size_t head_size) const noexcept {
    return v_cache != nullptr && v_cache->head_size != 0 ? v_cache->head_size : head_size;
  }

  const Geometry& q() const noexcept { return jobs[0].src; }
  const Geometry& q_out() const noexcept { return jobs[0].dst; }
  const Geometry& k() const noexcept { return jobs[1].src; }
  const Geometry& k_out() const noexcept { return jobs[1].dst; }
  const Geometry& v() const noexcept { return v_job->src; }
  const Geometry& v_out() const noexcept { return v_job->dst; }
  // Elements from a cache head's first element to one past its last coordinate (its blocks, for
  // a cache of blocks), for keys of head_size values: what the checks take as the head's extent.
  std::size_t k_extent(std::size_t head_size) const noexcept {
    return jobs[1].coordinates.extent(cache_head(quantization, head_size));
  }
  std::size_t v_extent(std::size_t head_size) const noexcept {
    return v_job->coordinates.extent(cache_head(v_quantization(), v_head_size(head_size)));
  }
  bool k_strided() const noexcept { return !jobs[1].coordinates.contiguous(); }
  bool v_strided() const noexcept { return v_job && !v_job->coordinates.contiguous(); }
};

// The roles of queries of T and keys into K, with the kernels for heads of at most Half pairs.
// The roles must outlive the Fused (it points to the keys' slots).
template <int Half, class T, class K>
ROPE_DETAIL_INLINE Fused fused_of(const Queries<T>& q, const Keys<T, K>& k, Layout layout,
                                  std::size_t head_size) noexcept {
  static_assert((is_storage_type_v<K> && std::is_same_v<compute_t<K>, compute_t<T>>) ||
                    (is_quantized_v<K> && std::is_same_v<compute_t<T>, float>),
                "rope::Keys<T, K>: K must compute in T's type: float, Eigen::half or "
                "Eigen::bfloat16 for float and 16-bit T; double for double; or, for float "
                "and 16-bit T, a quantised type of rope/quantized.hpp");
  // Into a quantised cache the keys' kernel, copy and norm write float (the walk quantises it).
  using D = std::conditional_t<is_quantized_v<K>, float, K>;
  Fused f(q.in, q.out, k.in, k.out, &k.slots, q.scale ? &*q.scale : nullptr, &k.scales);
  // A kind out of range is not none: the check names it.
  if (q.norm.kind != NormKind::none) f.q_norm = norm_job<T, T>(q.norm, head_size);
  if (k.norm.kind != NormKind::none) f.k_norm = norm_job<T, D>(k.norm, head_size);
  f.jobs[0].scale_outside = &scale_outside_slice<T>;
  f.jobs[1].kernel = kernel_for<Half, T, D>(layout);
  if constexpr (!std::is_same_v<T, D>) f.jobs[1].copy_outside = &convert_outside_slice<T, D>;
  if (k.slots.kind() != Slots::Kind::same_rows) f.jobs[1].slots = &k.slots;
  f.jobs[1].coordinates = k.coordinates;
  if constexpr (is_quantized_v<K>) {
    f.quantization = quantization_of<K>();
    f.k_quantize = quantize_job<K>(k.scales, head_size, k.out.heads());
  }
  if (k.values) {
    const ErasedCache& cache = k.values->out;
    f.v_job.emplace(k.values->in, cache.rows);
    f.v_job->copy = cache.format->copy;
    f.v_job->slots = f.jobs[1].slots;
    f.v_job->coordinates = cache.coordinates;
    f.v_cache = &cache;
    if (cache.format->quantizer != nullptr) {
      f.v_quantize =
          cache.format->quantizer(cache.scales, f.v_head_size(head_size), cache.rows.heads);
    }
  }
  return f;
}

// A cache's view (`name`: "cache", "value cache"), its heads' coordinates contiguous (check_view)
// or strided (check_strided_view), for heads of head_size values.
inline void check_cache_view(const char* name, const Geometry& cache, std::size_t head_size,
                             Quantization quantization, const Coordinates& c) {
  if (c.contiguous()) {
    check_view(name, cache, cache_head(quantization, head_size));
  } else {
    check_strided_view(name, cache, head_size, c, quantization == Quantization::blocks);
  }
}

// check_disjoint (in_place_allowed false) where a view may be a cache with strided coordinates,
// whose heads interleave: such a cache shares no byte of its extent with the other view (E90).
inline void check_apart(const char* a_name, const Geometry& a, std::size_t a_head, bool a_strided,
                        const char* b_name, const Geometry& b, std::size_t b_head, bool b_strided) {
  if (!a_strided && !b_strided) {
    check_disjoint(a_name, a, a_head, b_name, b, b_head, false);
    return;
  }
  if (a.rows() == 0 || a.heads == 0 || b.rows() == 0 || b.heads == 0) return;
  const std::uintptr_t a_end = a.end(a_head), b_end = b.end(b_head);
  if (a.data < b_end && b.data < a_end) {
    invalid(
        "rope: %s and %s share bytes (%zu bytes from %#zx and %zu from %#zx): a cache with "
        "strided coordinates must lie apart from every other view",
        a_name, b_name, static_cast<std::size_t>(a_end - a.data), static_cast<std::size_t>(a.data),
        static_cast<std::size_t>(b_end - b.data), static_cast<std::size_t>(b.data));
  }
}

// Whether a cache has anything quantised or scaled for check_cache_scales to check.
inline bool scaled(Quantization quantization, const CacheScales& s) noexcept {
  return quantization != Quantization::none || s.scale != 1.0 || s.per_row != nullptr;
}

// The extent of an int8 cache's scales the call writes: one per row and head of `cache`.
inline IndexBytes int8_scale_bytes(const CacheScales& s, const Geometry& cache) {
  return index_bytes(s.per_row, sizeof(float), 0, cache.rows() * cache.heads - 1);
}

// A head of whole blocks for a cache of blocks (E84), named as the caller knows the cache.
inline void check_blocks(const char* name, Quantization quantization, std::size_t head_size) {
  if (quantization == Quantization::blocks && head_size % 32 != 0) {
    invalid(
        "rope: the %s's blocks hold 32 values each, but the head size %zu is not a multiple of 32",
        name, head_size);
  }
}

// A quantised cache's scales, `name` ("cache", "value cache", "key cache"), as its quantization
// takes them: fp8's finite and > 0, a normal float; int8's array given and long enough for the
// cache's rows; other caches none. Returns the bytes of the int8 scales the call writes (none
// otherwise).
ROPE_DETAIL_COLD ROPE_DETAIL_NOINLINE inline IndexBytes check_scales(const char* name,
                                                                     Quantization quantization,
                                                                     const CacheScales& s,
                                                                     const Geometry& cache) {
  if (quantization != Quantization::fp8 && s.scale != 1.0) {
    invalid("rope: a scale %g for a %s that takes none (fp8 caches take one)", s.scale, name);
  }
  if (quantization != Quantization::int8 && s.per_row != nullptr) {
    invalid("rope: scales per row for a %s that takes none (int8 caches take them)", name);
  }
  if (quantization == Quantization::fp8 &&
      !(s.scale >= static_cast<double>(FLT_MIN) && s.scale <= static_cast<double>(FLT_MAX))) {
    invalid(
        "rope: the fp8 %s's scale %g must be finite and > 0, a normal float (at least "
        "%g, at most %g)",
        name, s.scale, static_cast<double>(FLT_MIN), static_cast<double>(FLT_MAX));
  }
  if (quantization != Quantization::int8 || cache.rows() == 0 || cache.heads == 0) return {};
  const std::size_t needed = cache.rows() * cache.heads;
  if (s.per_row == nullptr) {
    invalid("rope: an int8 %s needs its scales array (CacheScales::rows): none given", name);
  }
  if (s.size < needed) {
    invalid(
        "rope: the int8 %s's scales array holds %zu scales but the %s's %zu rows x %zu "
        "heads need %zu",
        name, s.size, name, cache.rows(), cache.heads, needed);
  }
  return int8_scale_bytes(s, cache);  // by extent, as E78
}

// The int8 scales of `name` share no byte with `other`'s (E86).
inline void scales_apart(const char* name, IndexBytes scales, const char* other, IndexBytes bytes) {
  if (bytes.begin < scales.end && scales.begin < bytes.end) {
    invalid(
        "rope: the int8 %s's scales (%zu bytes from %#zx) share bytes with %s: the call "
        "writes the scales",
        name, static_cast<std::size_t>(scales.end - scales.begin),
        static_cast<std::size_t>(scales.begin), other);
  }
}

// A view's bytes, by extent (none for a view without heads).
inline IndexBytes view_bytes(const Geometry& view, std::size_t head) {
  return view.rows() == 0 || view.heads == 0 ? IndexBytes{} : IndexBytes{view.data, view.end(head)};
}

// The bytes of a norm's weight (none without one): weight_size values of the role's type, whose
// size is the role's view's element.
inline IndexBytes weight_bytes(const std::optional<NormJob>& norm, const Geometry& role) {
  if (!norm || norm->weight == nullptr || norm->weight_size == 0) return {};
  return index_bytes(norm->weight, role.element, 0, norm->weight_size - 1);
}

// An array the fused call reads as it goes (a norm's weight, a caller's cos/sin table), outside
// every view the call writes (E78): q_out (q in place), the cache (k in place), the value cache.
// The int8 scales it writes are checked against the weights in check_cache_scales (E86).
inline void check_read_outside(const Fused& f, std::size_t head_size, const char* name,
                               IndexBytes bytes) {
  if (bytes.begin == bytes.end) return;  // no such array: the common call
  check_index_outside(name, bytes, same_heads(f.q(), f.q_out()) ? "q" : "q_out", f.q_out(),
                      head_size);
  check_index_outside(name, bytes, same_heads(f.k(), f.k_out()) ? "k" : "cache", f.k_out(),
                      f.k_extent(head_size));
  if (f.v_job) {
    check_index_outside(name, bytes, "value cache", f.v_out(), f.v_extent(head_size));
  }
}

// A quantised cache's scales (after the views and index arrays), the keys' cache's or the
// values' (`name`, "cache" or "value cache", its quantization, scales and rows): check_scales,
// then the int8 scales apart from the views, the index arrays and the other cache's scales (the
// walk writes them as it goes).
ROPE_DETAIL_COLD ROPE_DETAIL_NOINLINE inline void check_cache_scales(
    const Fused& f, const char* name, Quantization quantization, const CacheScales& s,
    const Geometry& cache, std::size_t head_size, const Positions& positions, TokenRange range) {
  const IndexBytes scale_bytes = check_scales(name, quantization, s, cache);
  if (scale_bytes.begin == scale_bytes.end) return;
  const auto apart = [&](const char* other, IndexBytes bytes) {
    scales_apart(name, scale_bytes, other, bytes);
  };
  apart("q", view_bytes(f.q(), head_size));
  apart("q_out", view_bytes(f.q_out(), head_size));
  apart("k", view_bytes(f.k(), head_size));
  apart("the cache", view_bytes(f.k_out(), f.k_extent(head_size)));
  if (f.v_job) {
    const std::size_t vh = f.v_head_size(head_size);
    apart("v", view_bytes(f.v(), vh));
    apart("the value cache", view_bytes(f.v_out(), f.v_extent(head_size)));
    // The keys' scales against the values': checked once, from the values' side.
    const CacheScales& k_scales = *f.scales;
    if (&s != &k_scales && f.quantization == Quantization::int8 && k_scales.per_row != nullptr &&
        f.k_out().rows() != 0 && f.k_out().heads != 0) {
      apart("the cache's scales", int8_scale_bytes(k_scales, f.k_out()));
    }
  }
  apart("the positions array", index_bytes(positions, range));
  apart("the q norm's weight", weight_bytes(f.q_norm, f.q()));
  apart("the k norm's weight", weight_bytes(f.k_norm, f.k()));
  const SlotArrays slot_bytes = slot_arrays(*f.slots, range, f.k().tokens);
  for (std::size_t i = 0; i < slot_bytes.count; ++i) {
    apart((std::string("the ") + slot_bytes.name[i] + " array").c_str(), slot_bytes.bytes[i]);
  }
}

// The values' checks (after the keys'): v a view of k's shape; its cache of the keys'
// destination's shape (so that the keys' slots name the same rows in both); the value cache
// sharing no byte with any other view, and v none with a view written; the index arrays outside
// the value cache; its scales.
ROPE_DETAIL_NOINLINE inline void check_values(const Fused& f, std::size_t head_size,
                                              const Positions& positions, TokenRange range) {
  const Quantization vq = f.v_quantization();
  const std::size_t vh = f.v_head_size(head_size);  // values in a head of v
  const std::size_t v_head = f.v_extent(head_size), k_head = f.k_extent(head_size);
  const bool vs = f.v_strided(), ks = f.k_strided();
  check_view("v", f.v(), vh);
  check_cache_view("value cache", f.v_out(), vh, vq, f.v_job->coordinates);
  check_same_shape("k", f.k(), "v", f.v());
  const bool rows_t = f.slots->kind() == Slots::Kind::same_rows;
  const bool q_in_place = same_view(f.q(), f.q_out()),
             k_in_place = rows_t && !ks && same_view(f.k(), f.k_out());
  check_same_shape(k_in_place ? "k" : "cache", f.k_out(), "value cache", f.v_out());
  // The value cache against every view; v, read, against the views written.
  const char* q_out = q_in_place ? "q" : "q_out";
  const char* k_out = k_in_place ? "k" : "cache";
  check_apart("value cache", f.v_out(), v_head, vs, "q", f.q(), head_size, false);
  if (!q_in_place) {
    check_apart("value cache", f.v_out(), v_head, vs, q_out, f.q_out(), head_size, false);
  }
  check_apart("value cache", f.v_out(), v_head, vs, "k", f.k(), head_size, false);
  if (!k_in_place) check_apart("value cache", f.v_out(), v_head, vs, k_out, f.k_out(), k_head, ks);
  check_apart("value cache", f.v_out(), v_head, vs, "v", f.v(), vh, false);
  check_disjoint("v", f.v(), vh, q_out, f.q_out(), head_size, false);
  check_apart("v", f.v(), vh, false, k_out, f.k_out(), k_head, ks);
  check_index_outside("positions", index_bytes(positions, range), "value cache", f.v_out(), v_head);
  const SlotArrays slot_bytes = slot_arrays(*f.slots, range, f.k().tokens);
  for (std::size_t i = 0; i < slot_bytes.count; ++i) {
    check_index_outside(slot_bytes.name[i], slot_bytes.bytes[i], "value cache", f.v_out(), v_head);
  }
  if (scaled(vq, f.v_cache->scales)) {
    check_cache_scales(f, "value cache", vq, f.v_cache->scales, f.v_out(), head_size, positions,
                       range);
  }
}

// The checks of a fused call, in the order docs/errors.md lists them: the views; q_out of q's
// shape; k of q's tokens; k_out of k's heads (and k's shape without slots); the views written
// disjoint from every other view (q_out may be q, and k_out k without slots: in place); the token
// range, slots, positions (their coordinates against the 2^53 limit where `coordinates`), index
// arrays outside the views written; streaming stores; the norms and the scale. Returns the
// call's token range.
ROPE_DETAIL_NOINLINE inline TokenRange check_fused(const Fused& f, std::size_t head_size,
                                                   const Positions& positions, std::size_t axes,
                                                   const Call& call, bool coordinates = true,
                                                   bool negative = false) {
  check_direction(call.direction);
  check_blocks("cache", f.quantization, head_size);
  check_blocks("value cache", f.v_quantization(), f.v_head_size(head_size));
  const std::size_t k_head = f.k_extent(head_size);  // elements of a cache head, by extent
  const bool ks = f.k_strided();
  // A role in place is one view: checked once, and not against itself.
  const bool rows_t = f.slots->kind() == Slots::Kind::same_rows;
  const bool q_in_place = same_view(f.q(), f.q_out()),
             k_in_place = rows_t && !ks && same_view(f.k(), f.k_out());
  check_view("q", f.q(), head_size);
  if (!q_in_place) check_view("q_out", f.q_out(), head_size);
  check_view("k", f.k(), head_size);
  if (!k_in_place)
    check_cache_view("cache", f.k_out(), head_size, f.quantization, f.jobs[1].coordinates);
  if (!q_in_place) check_same_shape("q", f.q(), "q_out", f.q_out());
  if (f.q().batches != f.k().batches || f.q().tokens != f.k().tokens) {
    invalid("rope: q has %zu tokens but k has %zu", f.q().rows(), f.k().rows());
  }
  if (f.k_out().heads != f.k().heads) {
    invalid("rope: the cache has %zu heads but k has %zu", f.k_out().heads, f.k().heads);
  }
  if (rows_t && !k_in_place) check_same_shape("k", f.k(), "cache", f.k_out());
  // Every view written against every other view; a cache (slots given) is never in place.
  if (!q_in_place) check_disjoint("q", f.q(), "q_out", f.q_out(), head_size, true);
  check_disjoint("q", f.q(), "k", f.k(), head_size, false);
  if (!q_in_place) check_disjoint("q_out", f.q_out(), "k", f.k(), head_size, false);
  if (!k_in_place) {
    check_apart("cache", f.k_out(), k_head, ks, "q", f.q(), head_size, false);
    if (!q_in_place)
      check_apart("cache", f.k_out(), k_head, ks, "q_out", f.q_out(), head_size, false);
    // Exempt only the keys' own heads written as they are read: same bytes, same element size
    // (a half cache on float keys' bytes writes each head over the coordinates still to read).
    if (!rows_t || ks || !same_heads(f.k(), f.k_out()) || f.k().element != f.k_out().element) {
      check_apart("cache", f.k_out(), k_head, ks, "k", f.k(), head_size, false);
    }
  }
  const TokenRange range = call.range(f.q().rows());
  check_range(range, f.q().rows());
  if (!rows_t && f.k().heads != 0) {
    check_slots(*f.slots, f.k().batches, f.k().tokens, f.k_out().rows(), range);
  }
  check_positions(positions, range, f.q().tokens, axes, coordinates, negative);
  // The views written, named as the caller knows them: q and k when in place.
  const char* q_out = same_heads(f.q(), f.q_out()) ? "q" : "q_out";
  const char* k_out = same_heads(f.k(), f.k_out()) ? "k" : "cache";
  const IndexBytes position_bytes = index_bytes(positions, range);
  check_index_outside("positions", position_bytes, q_out, f.q_out(), head_size);
  check_index_outside("positions", position_bytes, k_out, f.k_out(), k_head);
  const SlotArrays slot_bytes = slot_arrays(*f.slots, range, f.k().tokens);  // none: ring, rows t
  for (std::size_t i = 0; i < slot_bytes.count; ++i) {
    check_index_outside(slot_bytes.name[i], slot_bytes.bytes[i], q_out, f.q_out(), head_size);
    check_index_outside(slot_bytes.name[i], slot_bytes.bytes[i], k_out, f.k_out(), k_head);
  }
  if (call.execution.streaming_stores) {
    check_streaming(f.q(), f.q_out());
    if (f.quantization == Quantization::none && !ks) check_streaming(f.k(), f.k_out());
  }
  // Roles without a norm have nothing to check (an enumerator out of range is not none).
  if (f.q_norm) {
    check_norm("q", f.q_norm->kind, f.q_norm->weight, f.q_norm->weight_size, f.q_norm->epsilon,
               head_size, f.q().heads);
  }
  if (f.k_norm) {
    check_norm("k", f.k_norm->kind, f.k_norm->weight, f.k_norm->weight_size, f.k_norm->epsilon,
               head_size, f.k().heads);
  }
  check_read_outside(f, head_size, "q norm weight", weight_bytes(f.q_norm, f.q()));
  check_read_outside(f, head_size, "k norm weight", weight_bytes(f.k_norm, f.k()));
  if (f.scale != nullptr) {
    check_query_scale(*f.scale);
    check_scaled_positions(positions, range);
  }
  if (scaled(f.quantization, *f.scales)) {
    check_cache_scales(f, "cache", f.quantization, *f.scales, f.k_out(), head_size, positions,
                       range);
  }
  if (f.v_job) check_values(f, head_size, positions, range);
  return range;
}

// check_fused for queries and keys in place with no role (no cache, slots, norm, scale or
// values): the same checks in the same order, those that the roles make vacuous left out, so
// that the call does not build a Fused first. Returns the call's token range.
ROPE_DETAIL_NOINLINE inline TokenRange check_qk(const Geometry& q, const Geometry& k,
                                                std::size_t head_size, const Positions& positions,
                                                std::size_t axes, const Call& call, bool negative) {
  check_direction(call.direction);
  check_view("q", q, head_size);
  check_view("k", k, head_size);
  if (q.batches != k.batches || q.tokens != k.tokens) {
    invalid("rope: q has %zu tokens but k has %zu", q.rows(), k.rows());
  }
  check_disjoint("q", q, "k", k, head_size, false);
  const TokenRange range = call.range(q.rows());
  check_range(range, q.rows());
  check_positions(positions, range, q.tokens, axes, true, negative);
  const IndexBytes position_bytes = index_bytes(positions, range);
  check_index_outside("positions", position_bytes, "q", q, head_size);
  check_index_outside("positions", position_bytes, "k", k, head_size);
  if (call.execution.streaming_stores) {
    check_streaming(q, q);
    check_streaming(k, k);
  }
  return range;
}

// A shift of quantised keys in place (Rotary::shift of a View<K>, K of rope/quantized.hpp), in the
// order docs/errors.md lists: the direction; a head of whole blocks (E84, first); the view, of
// the cache's heads; δ; the token range; the scales as the format takes them, an int8 array
// apart from the keys. Returns the call's token range.
ROPE_DETAIL_NOINLINE inline TokenRange check_quantized_shift(const Geometry& keys,
                                                             Quantization quantization,
                                                             const CacheScales& scales,
                                                             std::size_t head_size,
                                                             std::int64_t delta, const Call& call) {
  check_direction(call.direction);
  check_blocks("key cache", quantization, head_size);
  const std::size_t head = cache_head(quantization, head_size);
  check_view("keys", keys, head);
  check_shift(delta);
  const TokenRange range = call.range(keys.rows());
  check_range(range, keys.rows());
  scales_apart("key cache", check_scales("key cache", quantization, scales, keys), "the keys",
               view_bytes(keys, head));
  return range;
}

// The queries' and keys' part of run_fused.
template <class Source>
ROPE_DETAIL_INLINE void run_fused_without_values(const Source& source, Kernel kernel,
                                                 const Fused& f, const Slice& slice,
                                                 const Positions& positions, TokenRange range,
                                                 Direction direction, const Execution& execution) {
  if (f.scale == nullptr && !f.q_norm && !f.k_norm && !f.k_quantize) {
    run(source, kernel, f.jobs, 2, slice, range, direction, execution);
    return;
  }
  std::vector<double> scales;
  Job jobs[2] = {f.jobs[0], f.jobs[1]};
  if (f.scale != nullptr) {
    scales = query_scales(*f.scale, positions, range, f.q().tokens);
    jobs[0].scales = scales.data();
  }
  jobs[0].norm = f.q_norm ? &*f.q_norm : nullptr;
  jobs[1].norm = f.k_norm ? &*f.k_norm : nullptr;
  jobs[1].quantize = f.k_quantize ? &*f.k_quantize : nullptr;
  run(source, kernel, jobs, 2, slice, range, direction, execution);
}

// Runs a fused call that passed check_fused (or whose caller vouches for it) over `range`: the
// queries' job and the keys', each token's row read once for both, then the values' pass (after
// them: walk.hpp's store_values_pass says why). Plain roles run the jobs as they are; a norm or a
// scale runs copies that point to it.
template <class Source>
ROPE_DETAIL_INLINE void run_fused(const Source& source, Kernel kernel, const Fused& f,
                                  const Slice& slice, const Positions& positions, TokenRange range,
                                  Direction direction, const Execution& execution) {
  run_fused_without_values(source, kernel, f, slice, positions, range, direction, execution);
  if (f.v_job) {
    Job values = *f.v_job;
    values.quantize = f.v_quantize ? &*f.v_quantize : nullptr;
    store_values_pass(values, f.v_head_size(slice.head_size), range, execution);
  }
}

}  // namespace detail
}  // namespace ROPE_DETAIL_ISA
}  // namespace rope

#endif  // !ROPE_BELOW_CXX17
