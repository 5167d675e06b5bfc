// Where a fused call writes its rotated keys, and the values of the same tokens: rows of a KV
// cache, possibly of another storage type than the keys, chosen per token by a slot.
#pragma once

#include <rope/config.hpp>
#if !defined(ROPE_BELOW_CXX17)  // config.hpp stops older standards with one #error

#include <cstddef>
#include <cstdint>

#include <rope/quantized.hpp>
#include <rope/view.hpp>

namespace rope {
inline namespace ROPE_DETAIL_ISA {

/// The cache row of each token of a call, counted over the batch (token t of sequence b is token
/// b·tokens + t), as inference engines keep them:
///
///     Slots()                      token t into row t (the cache has the keys' shape)
///     Slots(slots, count)          token t into row slots[t]; a negative slot skips the token
///                                  (int32 or int64, as FlashInfer's and vLLM's slot mappings)
///     Slots::ring(first)           token t into row (first + t) mod rows: a ring buffer of rows
///
/// Rows are counted over the cache view's sequences, as a call counts tokens. No ownership: the
/// array of slots must outlive the call.
class Slots {
 public:
  enum class Kind { same_rows, int32, int64, ring };

  Slots() noexcept = default;
  Slots(const std::int32_t* slots, std::size_t count) noexcept
      : kind_(Kind::int32), int32_(slots), count_(count) {}
  Slots(const std::int64_t* slots, std::size_t count) noexcept
      : kind_(Kind::int64), int64_(slots), count_(count) {}
  /// Token t into row (first + t) mod the cache's rows: with `first` the position of the call's
  /// first token, a ring buffer keeps the last rows() positions.
  static Slots ring(std::uint64_t first) noexcept {
    Slots slots;
    slots.kind_ = Kind::ring;
    slots.first_ = first;
    return slots;
  }

  Kind kind() const noexcept { return kind_; }
  /// The slots given (int32 and int64 only).
  std::size_t size() const noexcept { return count_; }
  /// The slot array (int32 and int64 only; nullptr otherwise) and its element size.
  const void* data() const noexcept {
    return kind_ == Kind::int32 ? static_cast<const void*>(int32_)
                                : static_cast<const void*>(int64_);
  }
  std::size_t element_size() const noexcept {
    return kind_ == Kind::int32 ? sizeof(std::int32_t) : sizeof(std::int64_t);
  }
  /// The row of token t in a cache of `rows` rows; negative: the token is skipped. Unchecked.
  std::int64_t row(std::size_t t, std::size_t rows) const noexcept {
    switch (kind_) {
      case Kind::int32:
        return int32_[t];
      case Kind::int64:
        return int64_[t];
      case Kind::ring: {  // (first + t) mod rows, without first + t wrapping around at 2^64
        const std::uint64_t a = first_ % rows, b = t % rows;
        return static_cast<std::int64_t>(a >= rows - b ? a - (rows - b) : a + b);
      }
      default:
        return static_cast<std::int64_t>(t);
    }
  }

 private:
  Kind kind_ = Kind::same_rows;
  const std::int32_t* int32_ = nullptr;
  const std::int64_t* int64_ = nullptr;
  std::size_t count_ = 0;
  std::uint64_t first_ = 0;
};

/// The scales of a quantised key cache (rope/quantized.hpp), as its element type takes them:
///
///     CacheScales::tensor(s)        fp8: x is stored as fp8(x / s); s finite and > 0
///     CacheScales::rows(scales, n)  int8: the call writes the scale of row r's head h at
///                                   scales[r · heads + h] (n entries, at least rows × heads)
///
/// Float, 16-bit and block caches take none (a block holds its own scale). No ownership.
struct CacheScales {
  double scale = 1.0;
  float* per_row = nullptr;
  std::size_t size = 0;

  static CacheScales tensor(double s) noexcept { return {s, nullptr, 0}; }
  static CacheScales rows(float* scales, std::size_t count) noexcept {
    return {1.0, scales, count};
  }
};

/// The keys' destination of a fused apply_qk: the rows of a cache of K, and the row of each
/// token. K is float, Eigen::half or Eigen::bfloat16 for keys computed in float (double for
/// double), or a quantised type of rope/quantized.hpp for keys computed in float. Each row holds
/// the keys' heads: rows.heads() equals the keys' head count, and a head is head_size elements
/// (head_size / 32 for ggml's blocks).
template <class K>
struct KeyCache {
  View<K> rows;
  Slots slots = {};
  CacheScales scales = {};
};

/// Where the values of a fused call's tokens go (Keys::with_values): the rows of a cache of V, at
/// the keys' slots. V is as a KeyCache's K (converted or quantised alike, with its own scales);
/// the cache has the keys' destination's shape: its sequences, tokens (rows) and heads. A value
/// head (of v and of the cache) is head_size values, or the keys' head size where it is 0
/// (DeepSeek's v_head_dim differs from its qk_head_dim; an MLA row's latent is 512 values).
template <class V>
struct ValueCache {
  View<V> rows;
  CacheScales scales = {};
  std::size_t head_size = 0;
};

}  // namespace ROPE_DETAIL_ISA
}  // namespace rope

#endif  // !ROPE_BELOW_CXX17
