// Rotation with cos/sin tables supplied by the caller: the ONNX RotaryEmbedding operator's
// cos_cache and sin_cache (op 23 allows float, float16 and bfloat16), onnxruntime's
// MRotaryEmbedding (one cache row per axis), or the cos/sin tensors a HuggingFace model computes.
// The caller's rows are one more row source for the walk and the fused call of Rotary
// (detail/rows.hpp, detail/fused.hpp). (This header was rope/cache.hpp; "cache" now means the KV
// cache of rope/key_cache.hpp alone.)
#pragma once

#include <rope/config.hpp>
#if !defined(ROPE_BELOW_CXX17)  // config.hpp stops older standards with one #error

#include <cstddef>
#include <cstdint>
#include <vector>

#include <Eigen/Core>

#include <rope/axes.hpp>
#include <rope/detail/checks.hpp>
#include <rope/detail/fused.hpp>
#include <rope/detail/jobs.hpp>
#include <rope/detail/rows.hpp>
#include <rope/detail/values.hpp>
#include <rope/detail/walk.hpp>
#include <rope/execution.hpp>
#include <rope/layout.hpp>
#include <rope/positions.hpp>
#include <rope/roles.hpp>
#include <rope/scalar.hpp>
#include <rope/view.hpp>

namespace rope {
inline namespace ROPE_DETAIL_ISA {

/// How a caller's cos (and sin) row holds the value of pair j, for a rotary dimension d.
enum class CosSinRow {
  half,          ///< d/2 values, [c0 c1 .. c_{d/2−1}]: ONNX RotaryEmbedding's caches
  concatenated,  ///< d values, [c0 .. c_{d/2−1} c0 .. c_{d/2−1}]: HuggingFace's cat(freqs, freqs)
  repeated       ///< d values, [c0 c0 c1 c1 ..]: repeat_interleave, as in GPT-J ports
};

/// A caller's cos and sin tables of the storage type: `rows` rows each, row r starting at
/// cos + r·row_stride. The values are used as given (widened to float for the 16-bit types),
/// never normalised or recomputed.
template <class T>
struct CosSinCache {
  const T* cos = nullptr;
  const T* sin = nullptr;
  std::size_t rows = 0;
  CosSinRow format = CosSinRow::half;
  std::size_t row_stride = 0;  ///< values from one row to the next; 0 means the row's width
};

/// Which coordinates of a head a CachedRotary rotates, how they pair, and (multi-axis) which
/// coordinate of a token each pair takes its row from.
struct CosSinOptions {
  std::size_t head_size = 0;
  Layout layout = Layout::half_split;  ///< ONNX interleaved = 0; interleaved = 1 is interleaved
  std::size_t rotary_dim = 0;          ///< 0 means the whole head (ONNX rotary_embedding_dim)
  std::size_t rotary_offset = 0;
  /// Pair j of token t takes row positions(t, axis of pair j) of the cos/sin tables:
  /// onnxruntime's MRotaryEmbedding with Axes::sections(mrope_section). One axis by default.
  Axes axes = {};
};

/// The names before "cache" meant the KV cache alone (rope/key_cache.hpp); kept for one release.
template <class T>
using Cache [[deprecated("rope::Cache is rope::CosSinCache")]] = CosSinCache<T>;
using CacheRow [[deprecated("rope::CacheRow is rope::CosSinRow")]] = CosSinRow;
using CacheOptions [[deprecated("rope::CacheOptions is rope::CosSinOptions")]] = CosSinOptions;

/// Rotary position embedding with caller-supplied cos/sin tables: Rotary's calls, checks, fused
/// roles, threads and token ranges, with token t's row read from the caller's tables instead of
/// a table of its own. Its calls take Rotary's arguments, and the tables after the positions.
///
/// Token t uses row positions(t) of the tables (ONNX position_ids), or row t with
/// Positions::consecutive(0) when they have one row per token. T is float, double, Eigen::half
/// or Eigen::bfloat16, and so are the tables.
template <class T>
class CachedRotary {
  static_assert(is_storage_type_v<T>,
                "rope::CachedRotary<T>: T must be float, double, Eigen::half or Eigen::bfloat16");

 public:
  using Compute = compute_t<T>;

  /// Throws std::invalid_argument for a zero or odd head size, an odd rotary_dim, a slice that
  /// does not fit the head, or axes that do not fit the rotary dimension.
  explicit CachedRotary(const CosSinOptions& options)
      : options_(options),
        rotary_dim_((detail::check_layout(options.layout),
                     detail::checked_rotary_dim(options.head_size, options.rotary_dim,
                                                options.rotary_offset))),
        axis_of_pair_(options.axes.axis_of_pairs(rotary_dim_ / 2)),
        block_pairs_(options.axes.pairs_of_blocks(rotary_dim_ / 2)) {
    if (options.layout != Layout::half_split) block_pairs_.clear();  // pairs are inside anyway
    if (options.axes.signed_coordinates()) {
      detail::invalid(
          "rope: a CachedRotary reads cache rows by position: signed coordinates "
          "(Axes::with_signed_coordinates) need a Rotary");
    }
  }

  std::size_t head_size() const noexcept { return options_.head_size; }
  std::size_t rotary_dim() const noexcept { return rotary_dim_; }
  Layout layout() const noexcept { return options_.layout; }
  std::size_t axes() const noexcept { return options_.axes.count(); }

  /// Writes the rotation of src into dst (dst may be src), token t by row positions(t) of the
  /// caller's tables. Throws as Rotary::apply does, and std::invalid_argument for a null cos or
  /// sin or a row_stride narrower than a row (E34–E36) or a table inside dst (E78),
  /// std::out_of_range for a row < 0 or >= rows (E33).
  void apply(View<const T> src, View<T> dst, const Positions& positions,
             const CosSinCache<T>& cos_sin, const Call& call = {}) const;

  /// Rotary::apply_qk's fused call (every role and combination), with the caller's tables;
  /// throws as it does and as apply does for the tables.
  template <class K = T>
  void apply_qk(const Queries<T>& q, const Keys<T, K>& k, const Positions& positions,
                const CosSinCache<T>& cos_sin, const Call& call = {}) const;

  /// The calls without any argument check (see rope::Unchecked).
  void apply(Unchecked, View<const T> src, View<T> dst, const Positions& positions,
             const CosSinCache<T>& cos_sin, const Call& call = {}) const;
  template <class K = T>
  void apply_qk(Unchecked, const Queries<T>& q, const Keys<T, K>& k, const Positions& positions,
                const CosSinCache<T>& cos_sin, const Call& call = {}) const;

  // ---- conveniences, one line each -------------------------------------------------------------

  /// Rotates the heads of a view in place.
  void apply(View<T> x, const Positions& positions, const CosSinCache<T>& cos_sin,
             const Call& call = {}) const {
    apply(View<const T>(x), x, positions, cos_sin, call);
  }

  /// Rotates a contiguous [tokens][heads][head_size] buffer in place (its length unchecked).
  void apply(T* x, std::size_t tokens, std::size_t heads, const Positions& positions,
             const CosSinCache<T>& cos_sin, const Call& call = {}) const {
    apply(View<T>::contiguous(x, tokens, heads, options_.head_size), positions, cos_sin, call);
  }

  /// Queries and keys of the same tokens in place in one pass.
  void apply_qk(View<T> q, View<T> k, const Positions& positions, const CosSinCache<T>& cos_sin,
                const Call& call = {}) const {
    apply_qk(Queries<T>(q), Keys<T>(k), positions, cos_sin, call);
  }

 private:
  std::size_t width(CosSinRow format) const noexcept {
    return format == CosSinRow::half ? rotary_dim_ / 2 : rotary_dim_;
  }
  void rotate(View<const T> src, View<T> dst, const Positions& positions,
              const CosSinCache<T>& cos_sin, TokenRange range, Direction direction,
              const Execution& execution) const;
  detail::Slice slice() const noexcept {
    return {options_.rotary_offset, rotary_dim_,         options_.head_size,
            rotary_dim_ / 2,        block_pairs_.size(), block_pairs_.data()};
  }
  detail::CacheRows<T, Compute> rows(const CosSinCache<T>& cos_sin, const Positions& positions,
                                     std::size_t sequence) const noexcept {
    const std::size_t stride = cos_sin.row_stride != 0 ? cos_sin.row_stride : width(cos_sin.format);
    const std::size_t step = cos_sin.format == CosSinRow::repeated ? 2 : 1;  // where c_j sits
    return {cos_sin.cos,     cos_sin.sin,    stride,     step,    layout(),
            rotary_dim_ / 2, &axis_of_pair_, &positions, sequence};
  }
  // The bytes of table (cos_sin's cos or sin) from its first row to the end of its last.
  detail::IndexBytes table_bytes(const CosSinCache<T>& cos_sin, const T* table) const;
  void check_rows(const CosSinCache<T>& cos_sin, const Positions& positions, TokenRange range,
                  std::size_t sequence) const;

  CosSinOptions options_;
  std::size_t rotary_dim_;
  std::vector<std::uint8_t> axis_of_pair_;
  std::vector<std::size_t> block_pairs_;  // of each block half_split pairs stay inside
};

// The members are defined out of the class, so that the compiled mode's extern declarations keep
// them out of a user's translation unit.

template <class T>
void CachedRotary<T>::apply(View<const T> src, View<T> dst, const Positions& positions,
                            const CosSinCache<T>& cos_sin, const Call& call) const {
  const TokenRange range =
      detail::check_apply(src, dst, options_.head_size, positions, axes(), call, false);
  check_rows(cos_sin, positions, range, src.tokens());
  detail::check_index_outside("cos table", table_bytes(cos_sin, cos_sin.cos), "dst", dst,
                              options_.head_size);
  detail::check_index_outside("sin table", table_bytes(cos_sin, cos_sin.sin), "dst", dst,
                              options_.head_size);
  rotate(src, dst, positions, cos_sin, range, call.direction, call.execution);
}

template <class T>
void CachedRotary<T>::apply(Unchecked, View<const T> src, View<T> dst, const Positions& positions,
                            const CosSinCache<T>& cos_sin, const Call& call) const {
  rotate(src, dst, positions, cos_sin, call.range(src.rows()), call.direction, call.execution);
}

// The walk of both forms, over the range as it is (see Core::apply).
template <class T>
void CachedRotary<T>::rotate(View<const T> src, View<T> dst, const Positions& positions,
                             const CosSinCache<T>& cos_sin, TokenRange range, Direction direction,
                             const Execution& execution) const {
  const detail::Job job{src, dst};
  detail::run(rows(cos_sin, positions, src.tokens()),
              detail::kernel_for<Eigen::Dynamic, T>(layout()), &job, 1, slice(), range, direction,
              execution);
}

template <class T>
template <class K>
void CachedRotary<T>::apply_qk(const Queries<T>& q, const Keys<T, K>& k, const Positions& positions,
                               const CosSinCache<T>& cos_sin, const Call& call) const {
  const detail::Fused fused = detail::fused_of<Eigen::Dynamic>(q, k, layout(), head_size());
  const TokenRange range =
      detail::check_fused(fused, options_.head_size, positions, axes(), call, false);
  check_rows(cos_sin, positions, range, fused.q().tokens);
  detail::check_read_outside(fused, options_.head_size, "cos table",
                             table_bytes(cos_sin, cos_sin.cos));
  detail::check_read_outside(fused, options_.head_size, "sin table",
                             table_bytes(cos_sin, cos_sin.sin));
  detail::run_fused(rows(cos_sin, positions, fused.q().tokens),
                    detail::kernel_for<Eigen::Dynamic, T>(layout()), fused, slice(), positions,
                    range, call.direction, call.execution);
}

template <class T>
template <class K>
void CachedRotary<T>::apply_qk(Unchecked, const Queries<T>& q, const Keys<T, K>& k,
                               const Positions& positions, const CosSinCache<T>& cos_sin,
                               const Call& call) const {
  const detail::Fused fused = detail::fused_of<Eigen::Dynamic>(q, k, layout(), head_size());
  detail::run_fused(rows(cos_sin, positions, fused.q().tokens),
                    detail::kernel_for<Eigen::Dynamic, T>(layout()), fused, slice(), positions,
                    call.range(fused.q().rows()), call.direction, call.execution);
}

template <class T>
detail::IndexBytes CachedRotary<T>::table_bytes(const CosSinCache<T>& cos_sin,
                                                const T* table) const {
  if (cos_sin.rows == 0) return {};
  const std::size_t w = width(cos_sin.format);
  const std::size_t stride = cos_sin.row_stride != 0 ? cos_sin.row_stride : w;
  return detail::index_bytes(table, sizeof(T), 0, (cos_sin.rows - 1) * stride + w - 1);
}

template <class T>
void CachedRotary<T>::check_rows(const CosSinCache<T>& cos_sin, const Positions& positions,
                                 TokenRange range, std::size_t sequence) const {
  if (positions.is_fractional() && range.first != range.last) {
    detail::invalid(
        "rope: a CachedRotary reads cache rows by position: fractional positions (a Positions "
        "of doubles) need a Rotary");
  }
  if (cos_sin.cos == nullptr || cos_sin.sin == nullptr) {
    detail::invalid("rope: the cache's cos or sin is a null pointer");
  }
  detail::check_enum("CosSinRow", static_cast<int>(cos_sin.format), 3,
                     "half, concatenated, repeated");
  const std::size_t width_of_row = width(cos_sin.format);
  if (cos_sin.row_stride != 0 && cos_sin.row_stride < width_of_row) {
    detail::invalid("rope: cache row_stride %zu is smaller than a row of %zu values",
                    cos_sin.row_stride, width_of_row);
  }
  // The last row's end within kMaxViewBytes of cos and sin, without wrapping around.
  const std::size_t stride = cos_sin.row_stride != 0 ? cos_sin.row_stride : width_of_row;
  const std::size_t limit = detail::kMaxViewBytes / sizeof(T);
  if (cos_sin.rows > 1 && (stride > (limit - width_of_row) / (cos_sin.rows - 1))) {
    detail::invalid(
        "rope: cache row_stride %zu over %zu rows reaches past %zu bytes (a stride that wraps "
        "around is not supported)",
        stride, cos_sin.rows, detail::kMaxViewBytes);
  }
  for (std::size_t t = range.first; t < range.last; ++t) {
    for (std::size_t a = 0; a < positions.axes(); ++a) {
      const std::int64_t r = positions.at(t, a, sequence);
      if (r < 0 || static_cast<std::uint64_t>(r) >= cos_sin.rows) {
        detail::out_of_range("rope: cache row %lld of token %zu is outside the cache [0, %zu)",
                             static_cast<long long>(r), t, cos_sin.rows);
      }
    }
  }
}

}  // namespace ROPE_DETAIL_ISA
}  // namespace rope

#if defined(ROPE_EXTERN_TEMPLATES)
#include <rope/detail/instances.hpp>
namespace rope {
inline namespace ROPE_DETAIL_ISA {
#define ROPE_DETAIL_EXTERN_CACHED(T) extern template class CachedRotary<T>;
ROPE_DETAIL_CACHED_INSTANCES(ROPE_DETAIL_EXTERN_CACHED)
#undef ROPE_DETAIL_EXTERN_CACHED
#define ROPE_DETAIL_EXTERN_CACHED_FUSED(T, K)                                                     \
  extern template void CachedRotary<T>::apply_qk<K>(                                              \
      const Queries<T>&, const Keys<T, K>&, const Positions&, const CosSinCache<T>&, const Call&) \
      const;                                                                                      \
  extern template void CachedRotary<T>::apply_qk<K>(Unchecked, const Queries<T>&,                 \
                                                    const Keys<T, K>&, const Positions&,          \
                                                    const CosSinCache<T>&, const Call&) const;
ROPE_DETAIL_KEY_PAIRS(ROPE_DETAIL_EXTERN_CACHED_FUSED)
#undef ROPE_DETAIL_EXTERN_CACHED_FUSED
}  // namespace ROPE_DETAIL_ISA
}  // namespace rope
#endif

#endif  // !ROPE_BELOW_CXX17
