// Rotation with cos/sin tables supplied by the caller: the ONNX RotaryEmbedding operator's
// cos_cache and sin_cache (op 23 allows float, float16 and bfloat16), onnxruntime's
// MRotaryEmbedding (one cache row per axis), or the cos/sin tensors a HuggingFace model computes.
// The caller's rows are one more row source for the walk of every Rotary (detail/rows.hpp).
#pragma once

#include <rope/config.hpp>
#if !defined(ROPE_BELOW_CXX17)  // config.hpp stops older standards with one #error

#include <cstddef>
#include <cstdint>
#include <vector>

#include <Eigen/Core>

#include <rope/axes.hpp>
#include <rope/detail/checks.hpp>
#include <rope/detail/rows.hpp>
#include <rope/detail/walk.hpp>
#include <rope/execution.hpp>
#include <rope/layout.hpp>
#include <rope/positions.hpp>
#include <rope/scalar.hpp>
#include <rope/view.hpp>

namespace rope {
inline namespace ROPE_DETAIL_ISA {

/// How a caller's cos (and sin) row holds the value of pair j, for a rotary dimension d.
enum class CacheRow {
  half,          ///< d/2 values, [c0 c1 .. c_{d/2−1}]: ONNX RotaryEmbedding's caches
  concatenated,  ///< d values, [c0 .. c_{d/2−1} c0 .. c_{d/2−1}]: HuggingFace's cat(freqs, freqs)
  repeated       ///< d values, [c0 c0 c1 c1 ..]: repeat_interleave, as in GPT-J ports
};

/// A caller's cos and sin tables of the storage type: `rows` rows each, row r starting at
/// cos + r·row_stride. The values are used as given (widened to float for the 16-bit types),
/// never normalised or recomputed.
template <class T>
struct Cache {
  const T* cos = nullptr;
  const T* sin = nullptr;
  std::size_t rows = 0;
  CacheRow format = CacheRow::half;
  std::size_t row_stride = 0;  ///< values from one row to the next; 0 means the row's width
};

/// Which coordinates of a head a CachedRotary rotates, how they pair, and (multi-axis) which
/// coordinate of a token each pair takes its cache row from.
struct CacheOptions {
  std::size_t head_size = 0;
  Layout layout = Layout::half_split;  ///< ONNX interleaved = 0; interleaved = 1 is interleaved
  std::size_t rotary_dim = 0;          ///< 0 means the whole head (ONNX rotary_embedding_dim)
  std::size_t rotary_offset = 0;
  /// Pair j of token t takes row positions(t, axis of pair j) of the cache: onnxruntime's
  /// MRotaryEmbedding with Axes::sections(mrope_section). One axis by default.
  Axes axes = {};
};

/// Rotary position embedding with caller-supplied cos/sin caches: the walk, kernels, checks,
/// threads and token ranges of Rotary, with token t's row read from the caller's caches.
///
/// Token t uses cache row positions(t) (ONNX position_ids), or row t with
/// Positions::consecutive(0) when the cache has one row per token. T is float, double,
/// Eigen::half or Eigen::bfloat16, and so are the caches.
template <class T>
class CachedRotary {
  static_assert(is_storage_type_v<T>,
                "rope::CachedRotary<T>: T must be float, double, Eigen::half or Eigen::bfloat16");

 public:
  using Compute = compute_t<T>;

  /// Throws std::invalid_argument for a zero or odd head size, an odd rotary_dim, a slice that
  /// does not fit the head, or axes that do not fit the rotary dimension.
  explicit CachedRotary(const CacheOptions& options)
      : options_(options),
        rotary_dim_((detail::check_layout(options.layout),
                     detail::checked_rotary_dim(options.head_size, options.rotary_dim,
                                                options.rotary_offset))),
        axis_of_pair_(options.axes.axis_of_pairs(rotary_dim_ / 2)) {}

  std::size_t head_size() const noexcept { return options_.head_size; }
  std::size_t rotary_dim() const noexcept { return rotary_dim_; }
  Layout layout() const noexcept { return options_.layout; }
  std::size_t axes() const noexcept { return options_.axes.count(); }

  /// Writes the rotation of src into dst (dst may be src) with the caller's cache.
  ///
  /// Throws as Rotary::apply does, and also std::invalid_argument for a null cos or sin or a
  /// row_stride narrower than a row, and std::out_of_range for a cache row < 0 or ≥ rows.
  void apply(const Cache<T>& cache, View<const T> src, View<T> dst, const Positions& positions,
             const Call& call = {}) const {
    const TokenRange range =
        detail::check_apply(src, dst, options_.head_size, positions, axes(), call, false);
    check_cache(cache, positions, range, src.tokens());
    apply(unchecked, cache, src, dst, positions, Call{call.direction, range, call.execution});
  }

  /// Queries and keys of the same tokens in place in one pass with the caller's cache.
  void apply_qk(const Cache<T>& cache, View<T> q, View<T> k, const Positions& positions,
                const Call& call = {}) const {
    const TokenRange range =
        detail::check_apply_qk(q, k, options_.head_size, positions, axes(), call, false);
    check_cache(cache, positions, range, q.tokens());
    apply_qk(unchecked, cache, q, k, positions, Call{call.direction, range, call.execution});
  }

  /// The primitives without any argument check (see rope::Unchecked).
  void apply(Unchecked, const Cache<T>& cache, View<const T> src, View<T> dst,
             const Positions& positions, const Call& call = {}) const {
    const detail::Job job{src, dst};
    rotate(cache, &job, 1, positions, src.tokens(), call.tokens.value_or(TokenRange{0, src.rows()}),
           call);
  }
  void apply_qk(Unchecked, const Cache<T>& cache, View<T> q, View<T> k, const Positions& positions,
                const Call& call = {}) const {
    const detail::Job jobs[2] = {{q, q}, {k, k}};
    rotate(cache, jobs, 2, positions, q.tokens(), call.tokens.value_or(TokenRange{0, q.rows()}),
           call);
  }

  /// Rotates the heads of a view in place with the caller's cache.
  void apply(const Cache<T>& cache, View<T> x, const Positions& positions,
             const Call& call = {}) const {
    apply(cache, View<const T>(x), x, positions, call);
  }

  /// Rotates a contiguous [tokens][heads][head_size] buffer in place with the caller's cache.
  void apply(const Cache<T>& cache, T* x, std::size_t tokens, std::size_t heads,
             const Positions& positions, const Call& call = {}) const {
    apply(cache, View<T>::contiguous(x, tokens, heads, options_.head_size), positions, call);
  }

 private:
  std::size_t width(CacheRow format) const noexcept {
    return format == CacheRow::half ? rotary_dim_ / 2 : rotary_dim_;
  }

  void check_cache(const Cache<T>& cache, const Positions& positions, TokenRange range,
                   std::size_t sequence) const {
    if (cache.cos == nullptr || cache.sin == nullptr) {
      detail::invalid("rope: the cache's cos or sin is a null pointer");
    }
    detail::check_enum("CacheRow", static_cast<int>(cache.format), 3,
                       "half, concatenated, repeated");
    if (cache.row_stride != 0 && cache.row_stride < width(cache.format)) {
      detail::invalid("rope: cache row_stride %zu is smaller than a row of %zu values",
                      cache.row_stride, width(cache.format));
    }
    // The last row's end within kMaxViewBytes of cos and sin, without wrapping around.
    const std::size_t stride = cache.row_stride != 0 ? cache.row_stride : width(cache.format);
    const std::size_t limit = detail::kMaxViewBytes / sizeof(T);
    if (cache.rows > 1 && (stride > (limit - width(cache.format)) / (cache.rows - 1))) {
      detail::invalid(
          "rope: cache row_stride %zu over %zu rows reaches past %zu bytes (a stride that wraps "
          "around is not supported)",
          stride, cache.rows, detail::kMaxViewBytes);
    }
    for (std::size_t t = range.first; t < range.last; ++t) {
      for (std::size_t a = 0; a < positions.axes(); ++a) {
        const std::int64_t r = positions.at(t, a, sequence);
        if (r < 0 || static_cast<std::uint64_t>(r) >= cache.rows) {
          detail::out_of_range("rope: cache row %lld of token %zu is outside the cache [0, %zu)",
                               static_cast<long long>(r), t, cache.rows);
        }
      }
    }
  }

  // Out of the class, so that the compiled mode's extern declarations keep it out of a user's
  // translation unit.
  void rotate(const Cache<T>& cache, const detail::Job* jobs, std::size_t job_count,
              const Positions& positions, std::size_t sequence, TokenRange range,
              const Call& call) const;

  CacheOptions options_;
  std::size_t rotary_dim_;
  std::vector<std::uint8_t> axis_of_pair_;
};

template <class T>
void CachedRotary<T>::rotate(const Cache<T>& cache, const detail::Job* jobs, std::size_t job_count,
                             const Positions& positions, std::size_t sequence, TokenRange range,
                             const Call& call) const {
  const std::size_t stride = cache.row_stride != 0 ? cache.row_stride : width(cache.format);
  const std::size_t step = cache.format == CacheRow::repeated ? 2 : 1;  // where c_j sits
  const detail::CacheRows<T, Compute> source{cache.cos,      cache.sin,  stride,
                                             step,           layout(),   rotary_dim_ / 2,
                                             &axis_of_pair_, &positions, sequence};
  const detail::Slice slice{options_.rotary_offset, rotary_dim_, options_.head_size,
                            rotary_dim_ / 2};
  detail::run(source, detail::kernel_for<Eigen::Dynamic, T>(layout()), jobs, job_count, slice,
              range, call.direction, call.execution);
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
}  // namespace ROPE_DETAIL_ISA
}  // namespace rope
#endif

#endif  // !ROPE_BELOW_CXX17
