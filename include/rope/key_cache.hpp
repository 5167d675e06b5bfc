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

/// A block table (vLLM's block_table, FlashInfer's page indices): a cache whose rows come in pages
/// of `block_size` rows, page p holding rows [p·block_size, (p + 1)·block_size), and the pages of
/// each sequence listed in order, sequence b's at table[b·stride], table[b·stride + 1], ... (int32
/// page numbers; a negative one is a page the sequence does not have). No ownership.
struct PageTable {
  const std::int32_t* table = nullptr;
  std::size_t sequences = 0;   // rows of the table
  std::size_t stride = 0;      // entries from one sequence's row to the next: its most pages
  std::size_t block_size = 0;  // cache rows per page
};

/// The cache row of each token of a call, counted over the batch (token t of sequence b is token
/// b·tokens + t), as inference engines keep them:
///
///     Slots()                      token t into row t (the cache has the keys' shape)
///     Slots(slots, count)          token t into row slots[t]; a negative slot skips the token
///                                  (int32 or int64, as FlashInfer's and vLLM's slot mappings)
///     Slots::ring(first)           token t into row (first + t) mod rows: a ring buffer of rows
///     Slots::paged(pages, first)   token t of sequence b at index i = first[b] + t of that
///                                  sequence, into row pages.table[b·stride + i / block_size] ·
///                                  block_size + i mod block_size (a negative page skips it)
///     Slots::paged(pages, sequence, index, count)
///                                  token t at index index[t] of sequence sequence[t], the same
///                                  way: a batch of sequences of different lengths in one view
///
/// Rows are counted over the cache view's sequences, as a call counts tokens (a paged View: one
/// sequence per page, View(data, pages, block_size, heads, page_stride, token_stride,
/// head_stride)). No ownership: the arrays must outlive the call.
class Slots {
 public:
  enum class Kind { same_rows, int32, int64, ring, paged, paged_tokens };

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
  /// Token t of the keys' sequence b at index first[b] + t of that sequence's pages (`first`:
  /// one entry per sequence, the tokens it has before the call).
  static Slots paged(const PageTable& pages, const std::int32_t* first) noexcept {
    Slots slots;
    slots.kind_ = Kind::paged;
    slots.pages_ = pages;
    slots.index_ = first;
    return slots;
  }
  /// Token t at index index[t] of sequence sequence[t]'s pages (FlashInfer's batch indices and
  /// positions; `count` entries each, one per token).
  static Slots paged(const PageTable& pages, const std::int32_t* sequence,
                     const std::int32_t* index, std::size_t count) noexcept {
    Slots slots;
    slots.kind_ = Kind::paged_tokens;
    slots.pages_ = pages;
    slots.int32_ = sequence;
    slots.index_ = index;
    slots.count_ = count;
    return slots;
  }

  Kind kind() const noexcept { return kind_; }
  /// The slots given (int32 and int64), or the per-token entries (paged_tokens).
  std::size_t size() const noexcept { return count_; }
  /// The slot array (int32 and int64 only; nullptr otherwise) and its element size.
  const void* data() const noexcept {
    if (kind_ == Kind::int32) return int32_;
    return kind_ == Kind::int64 ? int64_ : nullptr;
  }
  std::size_t element_size() const noexcept {
    return kind_ == Kind::int32 ? sizeof(std::int32_t) : sizeof(std::int64_t);
  }
  /// The block table (paged kinds), and their index arrays: the first index of each sequence
  /// (paged) or each token's index and sequence (paged_tokens; nullptr otherwise).
  const PageTable& pages() const noexcept { return pages_; }
  const std::int32_t* indices() const noexcept { return index_; }
  const std::int32_t* sequences() const noexcept {
    return kind_ == Kind::paged_tokens ? int32_ : nullptr;
  }
  /// The row of token t in a cache of `rows` rows, for keys of `tokens` tokens per sequence;
  /// negative: the token is skipped. Unchecked.
  std::int64_t row(std::size_t t, std::size_t rows, std::size_t tokens = 1) const noexcept {
    switch (kind_) {
      case Kind::int32:
        return int32_[t];
      case Kind::int64:
        return int64_[t];
      case Kind::ring: {  // (first + t) mod rows, without first + t wrapping around at 2^64
        const std::uint64_t a = first_ % rows, b = t % rows;
        return static_cast<std::int64_t>(a >= rows - b ? a - (rows - b) : a + b);
      }
      case Kind::paged: {
        const std::size_t b = t / tokens;
        return page_row(b, static_cast<std::size_t>(index_[b]) + t % tokens);
      }
      case Kind::paged_tokens:
        return page_row(static_cast<std::size_t>(int32_[t]), static_cast<std::size_t>(index_[t]));
      default:
        return static_cast<std::int64_t>(t);
    }
  }

 private:
  // The row of index i of sequence b, through the block table.
  std::int64_t page_row(std::size_t b, std::size_t i) const noexcept {
    const std::int64_t page = pages_.table[b * pages_.stride + i / pages_.block_size];
    if (page < 0) return -1;
    const auto size = static_cast<std::int64_t>(pages_.block_size);
    return page * size + static_cast<std::int64_t>(i % pages_.block_size);
  }

  Kind kind_ = Kind::same_rows;
  const std::int32_t* int32_ = nullptr;  // the slots (int32), each token's sequence (paged_tokens)
  const std::int64_t* int64_ = nullptr;
  const std::int32_t* index_ = nullptr;  // paged: first per sequence; paged_tokens: per token
  std::size_t count_ = 0;
  std::uint64_t first_ = 0;
  PageTable pages_ = {};
};

/// Where a head's coordinates lie in a cache row, from the head's first element (View::head):
///
///     Coordinates()              one after another, as in every View (the default)
///     Coordinates::strided(s)    coordinate i at i·s: vLLM CPU's value pages
///                                [pages][heads][d][block_size], s = block_size
///     Coordinates::runs(n, s)    runs of n: coordinate i at (i / n)·s + i mod n: vLLM CPU's key
///                                pages [pages][heads][d / n][block_size][n], n the elements of
///                                16 bytes, s = n·block_size
///
/// Strides in elements. Only a cache's rows take them (not ggml's blocks, which are contiguous).
struct Coordinates {
  std::size_t run = 0;     // coordinates one after another; 0: the whole head
  std::size_t stride = 0;  // elements from a run's first coordinate to the next run's

  static Coordinates strided(std::size_t s) noexcept { return {1, s}; }
  static Coordinates runs(std::size_t n, std::size_t s) noexcept { return {n, s}; }
  bool contiguous() const noexcept { return run == 0; }
  /// Elements from a head's first element to one past its last coordinate, for `head_size`
  /// coordinates (those of a contiguous head: head_size).
  std::size_t extent(std::size_t head_size) const noexcept {
    if (run == 0 || head_size == 0) return head_size;
    const std::size_t last = head_size - 1;
    return last / run * stride + last % run + 1;
  }
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
/// (head_size / 32 for ggml's blocks), its coordinates as `coordinates` places them.
template <class K>
struct KeyCache {
  View<K> rows;
  Slots slots = {};
  CacheScales scales = {};
  Coordinates coordinates = {};
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
  Coordinates coordinates = {};
};

}  // namespace ROPE_DETAIL_ISA
}  // namespace rope

#endif  // !ROPE_BELOW_CXX17
