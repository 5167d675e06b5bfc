// The rows past a table that the calling thread formed last, kept for the next calls at the same
// positions.
//
// An engine rotates every layer's queries and keys at the same positions: a decode step asks each
// layer for the rows of the same one token (or of the same few tokens of a batch of sequences),
// and one Rotary serves every layer of its kind. Rows in the table cost a pointer; a row past it
// is formed from the angle sums (angle_sum.hpp) at up to a tenth of a call's time. So each
// thread keeps the last rows it formed, row m in slot m mod slots with its position beside it,
// and a later call of the same table at the same position takes the row as it takes a table row:
// a decode step's layers, and a prefill chunk of up to 512 tokens layer after layer. A kept row
// is the row formed again, bit for bit (the same function wrote it).
//
// Memory: up to 512 rows of the widest table the thread has formed rows for, at most 256 KiB (512
// rows of a float table of head 128), per thread that forms rows past a table, allocated by its
// first such row (and again for a wider table). Several tables share the slots: a slot holds the
// row of one table and position, named beside it.
#pragma once

#include <rope/config.hpp>
#if !defined(ROPE_BELOW_CXX17)  // config.hpp stops older standards with one #error

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <vector>

#include <Eigen/Core>

namespace rope {
inline namespace ROPE_DETAIL_ISA {
namespace detail {

// A number no other table of the program has (copies share it with their rows), so that a
// thread's kept row is never taken for another table's.
inline std::uint64_t next_table_id() noexcept {
  static std::atomic<std::uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

template <class T>
class KeptRows {
 public:
  static constexpr std::size_t kMostSlots = 512, kBudget = std::size_t{256} << 10;  // bytes

  // The calling thread's row of `position` for table `owner` (rows `width` wide): kept, or
  // written by form(row) into the slot first.
  template <class Form>
  static const T* row(std::uint64_t owner, std::size_t width, std::uint64_t position,
                      const Form& form) {
    static thread_local KeptRows kept;
    if (width > kept.stride_) kept.widen(width);
    // Consecutive positions of a table in consecutive slots; other tables' rows elsewhere.
    const std::size_t slot =
        static_cast<std::size_t>((position + owner * kSpread) & (kept.tags_.size() - 1));
    T* out = kept.rows_.data() + slot * kept.stride_;
    Tag& tag = kept.tags_[slot];
    if (tag.owner != owner || tag.position != position) {
      form(out);
      tag = Tag{owner, position};
    }
    return out;
  }

  // The slots for rows of `width` values: a power of two, kMostSlots while they fit kBudget.
  static constexpr std::size_t slots(std::size_t width) noexcept {
    std::size_t n = kMostSlots;
    while (n > 1 && n * width * sizeof(T) > kBudget) n /= 2;
    return n;
  }

 private:
  static constexpr std::uint64_t kSpread = 0x9e3779b97f4a7c15;  // odd: owners far apart
  struct Tag {
    std::uint64_t owner, position;  // owner 0: no row
  };

  ROPE_DETAIL_COLD void widen(std::size_t width) {
    const std::size_t n = slots(width);
    rows_.resize(n * width);
    tags_.assign(n, Tag{0, 0});
    stride_ = width;
  }

  std::size_t stride_ = 0;  // the widest row asked: every slot's room
  std::vector<Tag> tags_;
  std::vector<T, Eigen::aligned_allocator<T>> rows_;
};

}  // namespace detail
}  // namespace ROPE_DETAIL_ISA
}  // namespace rope

#endif  // !ROPE_BELOW_CXX17
