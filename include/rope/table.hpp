// Precomputed cos/sin tables, one row per position.
#pragma once

#include <rope/config.hpp>
#if !defined(ROPE_BELOW_CXX17)  // config.hpp stops older standards with one #error

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include <Eigen/Core>

#include <rope/detail/angle_sum.hpp>
#include <rope/detail/kept_rows.hpp>
#include <rope/layout.hpp>
#include <rope/positions.hpp>

namespace rope {
inline namespace ROPE_DETAIL_ISA {
namespace detail {
template <class C>
struct RowsOfTable;
}  // namespace detail

/// cos(m·θ_j) and sin(m·θ_j) for the positions m in [0, positions), stored as T.
///
/// Row m holds head_size values laid out so that the kernel of each layout streams through it
/// once, in the order it reads the head:
///
///     interleaved  [c0 s0 c1 s1 ... ]          = e^{i·m·θ_j} as complex numbers
///     half_split   [c0 c1 ... | s0 s1 ... ]    cos half, then sin half
///
/// A float table's rows come from angle sums (detail/angle_sum.hpp): m in base 128, one complex
/// product in double per pair per non-zero digit of entries that are cos and sin of exact angles,
/// rounded once to float. An entry is then within half an ulp of float plus 11·n·2^−53·scale
/// (n ≤ 8 the factors: the lowest digit of m and each higher one that is not 0) of the cosine or
/// sine of the exact angle m·θ_j, at every position up to kMaxPosition; write_row() gives any
/// position's row this way, bit for bit the table's (docs/numerics.md). A double table computes
/// its own rows by compute_row() and its rows past the end from angle sums (within
/// 11·n·2^−53·scale); a table of Angles::pytorch_float32 and one wider than 1024 coordinates
/// compute every row by compute_row().
template <class T>
class Table {
 public:
  /// Builds the rows for positions 0 .. positions-1 from the inverse frequencies θ_j; every
  /// entry is multiplied by `scale` (a scaling scheme's attention factor) before its rounding;
  /// `angles` chooses the arithmetic (see Angles).
  ///
  /// Throws std::invalid_argument if positions is 0, theta is empty, |scale| is not a finite
  /// value of T, or the table would hold more than max_size() elements.
  ROPE_DETAIL_COLD Table(Layout layout, const std::vector<double>& theta, std::size_t positions,
                         double scale = 1.0, Angles angles = Angles::exact)
      : layout_(layout),
        head_size_(2 * theta.size()),
        positions_(positions),
        theta_(theta),
        scale_(scale),
        angles_(angles),
        id_(detail::next_table_id()) {
    detail::check_layout(layout);
    detail::check_angles(angles);
    if (positions == 0) {
      detail::invalid("rope: the table needs at least 1 position, got 0");
    }
    if (theta.empty()) {
      detail::invalid("rope: the table needs at least one frequency, got 0");
    }
    for (std::size_t j = 0; j < theta.size(); ++j) {
      if (!(theta[j] >= 0 && std::isfinite(theta[j]))) {
        detail::invalid("rope: theta_%zu %g must be a finite number >= 0", j, theta[j]);
      }
    }
    if (std::abs(scale) < static_cast<double>(std::numeric_limits<T>::min())) {
      detail::invalid(
          "rope: the attention factor %s is below the smallest normal value of the table's "
          "type (%s): cos and sin would vanish",
          detail::number(scale).c_str(),
          detail::number(static_cast<double>(std::numeric_limits<T>::min())).c_str());
    }
    if (!(std::abs(scale) <= static_cast<double>(std::numeric_limits<T>::max()))) {
      detail::invalid(
          "rope: the attention factor %s is not a finite value of the table's type "
          "(largest %s)",
          detail::number(scale).c_str(),
          detail::number(static_cast<double>(std::numeric_limits<T>::max())).c_str());
    }
    if (positions > max_size() / head_size_) {
      detail::invalid(
          "rope: a table of %zu positions x %zu entries exceeds the limit of %zu "
          "elements",
          positions, head_size_, max_size());
    }
    if constexpr (kAngleSums) {
      if (angles == Angles::exact && head_size_ <= detail::AngleSum::kMaxWidth) {
        sums_ = detail::AngleSum(layout, theta, scale);
      }
    }
    data_ = Storage(positions * head_size_);
    for (std::size_t m = 0; m < positions; ++m) {
      T* out = data_.data() + m * head_size_;
      if (std::is_same_v<T, double>) {
        compute_row(layout, theta, static_cast<double>(m), out, scale, angles);
      } else {
        write_row(m, out);
      }
    }
  }

  /// Writes the row of any position up to kMaxPosition into row (head_size() values), unchecked.
  /// A float table's rows, in it or past it, are the same function's: bit for bit row(position)
  /// where the table has it. A double table's own rows are compute_row's (within 1 ulp of the
  /// double angle's cos and sin, closer than the angle sums at small positions) and its rows past
  /// the end the angle sums' (whose error does not grow with the position), so a double row's
  /// last bits depend on whether the table holds it (docs/numerics.md).
  void write_row(std::uint64_t position, T* row) const {
    if constexpr (kAngleSums) {
      if (!sums_.empty() && (std::is_same_v<T, float> || position >= positions_)) {
        return sums_.row(position, row);
      }
    }
    compute_row(layout_, theta_, static_cast<double>(position), row, scale_, angles_);
  }

  /// The bytes write_row() reads past the table: the angle sums' levels, 0 where rows are
  /// computed by compute_row().
  std::size_t angle_sum_bytes() const noexcept { return sums_.bytes(); }

  /// Writes the 2·theta.size() entries of the row for `position` (any position, integral or
  /// not, below 2^53), times `scale`, into row in the layout's order: one double angle m·θ_j
  /// per pair, then std::cos and std::sin rounded once to T, an entry within one ulp of the
  /// cosine or sine of that double angle. Angles::pytorch_float32 rounds the position, the
  /// product m·θ_j, cos and sin, and their product with `scale` to float, as PyTorch's float32
  /// tensors do.
  static void compute_row(Layout layout, const std::vector<double>& theta, double position, T* row,
                          double scale = 1.0, Angles angles = Angles::exact) {
    compute_row_by_pair(
        layout, theta, [position](std::size_t) { return position; }, row, scale, angles);
  }

  /// The largest number of elements a table may hold: the most a std::vector<T> may hold.
  static std::size_t max_size() noexcept { return Storage().max_size(); }

  Layout layout() const noexcept { return layout_; }
  std::size_t head_size() const noexcept { return head_size_; }
  std::size_t positions() const noexcept { return positions_; }

  /// The head_size entries of row `position`. Precondition: position < positions().
  const T* row(std::size_t position) const noexcept { return data_.data() + position * head_size_; }

  /// cos(position·θ_pair). Precondition: position < positions(), pair < head_size()/2.
  T cos(std::size_t position, std::size_t pair) const noexcept {
    return row(position)[detail::cos_index(layout_, head_size_ / 2, pair)];
  }
  /// sin(position·θ_pair). Precondition: position < positions(), pair < head_size()/2.
  T sin(std::size_t position, std::size_t pair) const noexcept {
    return row(position)[detail::sin_index(layout_, head_size_ / 2, pair)];
  }

 private:
  using Storage = std::vector<T, Eigen::aligned_allocator<T>>;

  // The row of a position past the table as the walk reads it: the calling thread's kept row
  // (detail/kept_rows.hpp), written by write_row() when the thread has not kept it.
  friend struct detail::RowsOfTable<T>;
  const T* kept_row(std::uint64_t position) const {
    return detail::KeptRows<T>::row(id_, head_size_, position,
                                    [&](T* row) { write_row(position, row); });
  }

  // The row of fractional coordinates (Positions of doubles): pair j at the angle
  // coordinates[axis[j]]·θ_j, computed as compute_row() computes a position's row. axis[j] is the
  // axis of pair j (nullptr: coordinates[0] for every pair).
  void fractional_row(const double* coordinates, const std::uint8_t* axis, T* row) const {
    if (axis == nullptr) return compute_row(layout_, theta_, coordinates[0], row, scale_, angles_);
    compute_row_by_pair(
        layout_, theta_, [&](std::size_t j) { return coordinates[axis[j]]; }, row, scale_, angles_);
  }

  // The pairs of axis a only of fractional_row(coordinates, axis, row), all at coordinate x: the
  // entries of the other pairs are not written (a row of one axis, for the rows of the tokens
  // that share the coordinate; rows.hpp).
  void fractional_axis_row(double x, const std::uint8_t* axis, std::uint8_t a, T* row) const {
    for (std::size_t j = 0; j < theta_.size(); ++j) {
      if (axis[j] == a) compute_pair(layout_, theta_, j, x, row, scale_, angles_);
    }
  }

  // compute_row() with pair j at position_of(j).
  template <class PositionOf>
  static void compute_row_by_pair(Layout layout, const std::vector<double>& theta,
                                  PositionOf position_of, T* row, double scale, Angles angles) {
    for (std::size_t j = 0; j < theta.size(); ++j) {
      compute_pair(layout, theta, j, position_of(j), row, scale, angles);
    }
  }

  // Pair j of a row at `position`.
  static void compute_pair(Layout layout, const std::vector<double>& theta, std::size_t j,
                           double position, T* row, double scale, Angles angles) {
    T c, s;
    if (angles == Angles::exact) {
      const double angle = position * theta[j];
      c = static_cast<T>(scale * std::cos(angle));
      s = static_cast<T>(scale * std::sin(angle));
    } else {
      const float angle = static_cast<float>(position) * static_cast<float>(theta[j]);
      const float a = static_cast<float>(scale);
      c = static_cast<T>(static_cast<float>(std::cos(static_cast<double>(angle))) * a);
      s = static_cast<T>(static_cast<float>(std::sin(static_cast<double>(angle))) * a);
    }
    detail::put_pair(layout, theta.size(), j, c, s, row);
  }

  Layout layout_;
  std::size_t head_size_;
  std::size_t positions_;
  std::vector<double> theta_;
  double scale_;
  Angles angles_;
  std::uint64_t id_;  // detail::next_table_id(): the owner of the rows a thread keeps
  // Rows from angle sums: float and double tables of Angles::exact, at most kMaxWidth wide.
  static constexpr bool kAngleSums = std::is_same_v<T, float> || std::is_same_v<T, double>;
  detail::AngleSum sums_;
  Storage data_;
};

}  // namespace ROPE_DETAIL_ISA
}  // namespace rope

#endif  // !ROPE_BELOW_CXX17
