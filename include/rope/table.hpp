// Precomputed cos/sin tables, one row per position.
#pragma once

#include <rope/config.hpp>
#if !defined(ROPE_BELOW_CXX17)  // config.hpp stops older standards with one #error

#include <cmath>
#include <cstddef>
#include <limits>
#include <string>
#include <vector>

#include <Eigen/Core>

#include <rope/layout.hpp>

namespace rope {
inline namespace ROPE_DETAIL_ISA {

// Where cos(φ_j) and sin(φ_j) of pair j sit in a row of the kernels (the one place that says it;
// the table below shows it): a Table's rows, a row computed past the table, a multi-axis row put
// together from the rows of a token's coordinates, and a caller's cos/sin tables gathered for the
// kernels all follow it.
namespace detail {

// The index of cos(φ_j) and of sin(φ_j) in a row of `half` pairs.
constexpr std::size_t cos_index(Layout layout, std::size_t half, std::size_t j) noexcept {
  return layout == Layout::interleaved ? 2 * j : (static_cast<void>(half), j);
}
constexpr std::size_t sin_index(Layout layout, std::size_t half, std::size_t j) noexcept {
  return layout == Layout::interleaved ? 2 * j + 1 : half + j;
}

// Writes the pair j entries of a row.
template <class C>
void put_pair(Layout layout, std::size_t half, std::size_t j, C cos, C sin, C* row) noexcept {
  row[cos_index(layout, half, j)] = cos;
  row[sin_index(layout, half, j)] = sin;
}

}  // namespace detail

/// cos(m·θ_j) and sin(m·θ_j) for the positions m in [0, positions), stored as T.
///
/// Row m holds head_size values laid out so that the kernel of each layout streams through it
/// once, in the order it reads the head:
///
///     interleaved  [c0 s0 c1 s1 ... ]          = e^{i·m·θ_j} as complex numbers
///     half_split   [c0 c1 ... | s0 s1 ... ]    cos half, then sin half
///
/// Each entry is computed in double (the angle m·θ_j as one double product, then std::cos and
/// std::sin) and rounded once to T, so a float entry is within one ulp of the cosine or sine of
/// that double angle at every position below 2^53 (docs/numerics.md).
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
      : layout_(layout), head_size_(2 * theta.size()), positions_(positions) {
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
    data_ = Storage(positions * head_size_);
    for (std::size_t m = 0; m < positions; ++m) {
      compute_row(layout, theta, static_cast<double>(m), data_.data() + m * head_size_, scale,
                  angles);
    }
  }

  /// Writes the 2·theta.size() entries of the row for `position` (any position, integral or
  /// not, below 2^53), times `scale`, into row in the layout's order; the table's rows are made
  /// by this call. Angles::pytorch_float32 rounds the position, the product m·θ_j, cos and sin,
  /// and their product with `scale` to float, as PyTorch's float32 tensors do.
  static void compute_row(Layout layout, const std::vector<double>& theta, double position, T* row,
                          double scale = 1.0, Angles angles = Angles::exact) {
    compute_pairs(layout, theta, position, row, 0, theta.size(), scale, angles);
  }

  /// compute_row for the entries of pairs [first, last) only; the other entries of row are left
  /// as they are.
  ROPE_DETAIL_COLD ROPE_DETAIL_NOINLINE static void compute_pairs(
      Layout layout, const std::vector<double>& theta, double position, T* row, std::size_t first,
      std::size_t last, double scale = 1.0, Angles angles = Angles::exact) {
    const std::size_t half = theta.size();
    for (std::size_t j = first; j < last; ++j) {
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
      detail::put_pair(layout, half, j, c, s, row);
    }
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

  Layout layout_;
  std::size_t head_size_;
  std::size_t positions_;
  Storage data_;
};

}  // namespace ROPE_DETAIL_ISA
}  // namespace rope

#endif  // !ROPE_BELOW_CXX17
