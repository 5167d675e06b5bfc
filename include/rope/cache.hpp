// Rotation with cos/sin tables supplied by the caller: the ONNX RotaryEmbedding operator's
// cos_cache and sin_cache, or the cos/sin tensors a HuggingFace model computes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include <Eigen/Core>

#include <rope/config.hpp>
#include <rope/detail/checks.hpp>
#include <rope/detail/kernels.hpp>
#include <rope/layout.hpp>
#include <rope/positions.hpp>
#include <rope/view.hpp>

namespace rope {

/// How a caller's cos (and sin) row holds the value of pair j, for a rotary dimension d.
enum class CacheRow {
  half,          ///< d/2 values, [c0 c1 .. c_{d/2−1}]: ONNX RotaryEmbedding's caches
  concatenated,  ///< d values, [c0 .. c_{d/2−1} c0 .. c_{d/2−1}]: HuggingFace's cat(freqs, freqs)
  repeated       ///< d values, [c0 c0 c1 c1 ..]: repeat_interleave, as in GPT-J ports
};

/// A caller's cos and sin tables: `rows` rows each, row r starting at cos + r·row_stride.
/// The values are used as given, never normalised or recomputed.
template <class T>
struct Cache {
  const T* cos = nullptr;
  const T* sin = nullptr;
  std::size_t rows = 0;
  CacheRow format = CacheRow::half;
  std::size_t row_stride = 0;  ///< values from one row to the next; 0 means the row's width
};

/// Which coordinates of a head a CachedRotary rotates, and how they pair.
struct CacheOptions {
  std::size_t head_size = 0;
  Layout layout = Layout::half_split;  ///< ONNX interleaved = 0; interleaved = 1 is interleaved
  std::size_t rotary_dim = 0;          ///< 0 means the whole head (ONNX rotary_embedding_dim)
  std::size_t rotary_offset = 0;
};

/// Rotary position embedding with caller-supplied cos/sin caches.
///
/// Token t uses cache row positions[t] (ONNX position_ids), or row t with
/// Positions::consecutive(0) when the cache has one row per token. Input layouts map onto View:
/// [batch, seq, heads·d] is one View of batch·seq tokens; [batch, heads, seq, d] is one View per
/// batch element (token_stride d, head_stride seq·d).
template <class T>
class CachedRotary {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>,
                "rope::CachedRotary<T>: T must be float or double");

 public:
  /// Throws std::invalid_argument for a zero or odd head size, an odd rotary_dim, or a slice
  /// that does not fit the head.
  explicit CachedRotary(const CacheOptions& options)
      : options_(options),
        rotary_dim_(detail::checked_rotary_dim(options.head_size, options.rotary_dim,
                                               options.rotary_offset)) {}

  std::size_t head_size() const noexcept { return options_.head_size; }
  std::size_t rotary_dim() const noexcept { return rotary_dim_; }
  Layout layout() const noexcept { return options_.layout; }

  /// Writes the rotation of src into dst (dst may be src) with the caller's cache.
  ///
  /// Throws std::invalid_argument for null pointers, overlapping strides, different shapes, src
  /// and dst that share a byte without being the same heads, or a row_stride narrower than a row,
  /// and std::out_of_range for a cache row < 0 or ≥ rows.
  void apply(const Cache<T>& cache, View<const T> src, View<T> dst, Positions positions,
             Direction direction = Direction::forward) const {
    detail::check_view("src", src, options_.head_size);
    detail::check_view("dst", dst, options_.head_size);
    detail::check_same_shape(src, dst);
    detail::check_disjoint("src", src, "dst", dst, options_.head_size, true);
    check_cache(cache);
    if (positions.is_null() && src.tokens() > 0) {
      ROPE_THROW(std::invalid_argument, "rope: positions is a null pointer");
    }
    positions.visit([&](auto row_index) {
      for (std::size_t t = 0; t < src.tokens(); ++t) {
        const std::int64_t r = row_index(t);
        if (r < 0 || static_cast<std::uint64_t>(r) >= cache.rows) {
          ROPE_THROW(std::out_of_range, "rope: cache row " + std::to_string(r) + " of token " +
                                            std::to_string(t) + " is outside the cache [0, " +
                                            std::to_string(cache.rows) + ")");
        }
      }
    });
    const detail::Job<T> job{src, dst};
    if (direction == Direction::forward) {
      run<Direction::forward>(cache, job, positions);
    } else {
      run<Direction::inverse>(cache, job, positions);
    }
  }

  /// Rotates a contiguous [tokens][heads][head_size] buffer in place with the caller's cache.
  void apply(const Cache<T>& cache, T* x, std::size_t tokens, std::size_t heads,
             Positions positions, Direction direction = Direction::forward) const {
    const auto view = View<T>::contiguous(x, tokens, heads, options_.head_size);
    apply(cache, View<const T>(view), view, positions, direction);
  }

 private:
  std::size_t width(CacheRow format) const noexcept {
    return format == CacheRow::half ? rotary_dim_ / 2 : rotary_dim_;
  }

  void check_cache(const Cache<T>& cache) const {
    if (cache.cos == nullptr || cache.sin == nullptr) {
      ROPE_THROW(std::invalid_argument, "rope: the cache's cos or sin is a null pointer");
    }
    if (cache.row_stride != 0 && cache.row_stride < width(cache.format)) {
      ROPE_THROW(std::invalid_argument, "rope: cache row_stride " +
                                            std::to_string(cache.row_stride) +
                                            " is smaller than a row of " +
                                            std::to_string(width(cache.format)) + " values");
    }
  }

  template <Direction D>
  void run(const Cache<T>& cache, const detail::Job<T>& job, const Positions& positions) const {
    const std::size_t half = rotary_dim_ / 2;
    const std::size_t stride = cache.row_stride != 0 ? cache.row_stride : width(cache.format);
    const std::size_t step = cache.format == CacheRow::repeated ? 2 : 1;  // where c_j sits
    const bool interleaved = options_.layout == Layout::interleaved;
    std::vector<T> row(rotary_dim_);  // the caller's row in the kernels' format
    const detail::Slice slice{options_.rotary_offset, rotary_dim_, options_.head_size};
    positions.visit([&](auto row_index) {
      const auto row_of = [&](std::size_t t) {
        const std::size_t r = static_cast<std::size_t>(row_index(t));
        const T* c = cache.cos + r * stride;
        const T* s = cache.sin + r * stride;
        for (std::size_t j = 0; j < half; ++j) {
          row[interleaved ? 2 * j : j] = c[j * step];
          row[interleaved ? 2 * j + 1 : half + j] = s[j * step];
        }
        return static_cast<const T*>(row.data());
      };
      detail::rotate_layout<Eigen::Dynamic, D, detail::Stores::ordinary>(
          options_.layout, row_of, &job, 1, TokenRange{0, job.src.tokens()}, slice);
    });
  }

  CacheOptions options_;
  std::size_t rotary_dim_;
};

}  // namespace rope
