// The row sources of walk.hpp: where a token's row of cos and sin comes from.
//
//   TableRows  a Rotary's table; a row past the table computed as the table computes its rows;
//              for multi-axis positions, a row put together from the rows of the coordinates;
//              for fractional positions, a row computed from the coordinates.
//   FixedRow   one row for every token (Rotary::shift).
//   CacheRows  a caller's cos/sin caches (CachedRotary), gathered into the kernels' format, one
//              cache row per axis for multi-axis positions.
#pragma once

#include <rope/config.hpp>
#if !defined(ROPE_BELOW_CXX17)  // config.hpp stops older standards with one #error

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include <rope/axes.hpp>
#include <rope/detail/walk.hpp>
#include <rope/layout.hpp>
#include <rope/positions.hpp>
#include <rope/table.hpp>

namespace rope {
inline namespace ROPE_DETAIL_ISA {
namespace detail {

// The axis of each entry of a row, in the row's order.
ROPE_DETAIL_COLD inline std::vector<std::uint8_t> entries_of(
    const std::vector<std::uint8_t>& axis_of_pair, Layout layout) {
  const std::size_t half = axis_of_pair.size();
  std::vector<std::uint8_t> axis(2 * half);
  for (std::size_t j = 0; j < half; ++j)
    put_pair(layout, half, j, axis_of_pair[j], axis_of_pair[j], axis.data());
  return axis;
}

// What a Rotary knows about its rows: the table (which computes a row past its end the way it
// computed its own) and the multi-axis map.
template <class C>
struct RowsOfTable {
  const Table<C>* table;
  std::size_t axes;                          // of the Rotary
  const std::vector<std::uint8_t>* entries;  // axis of each row entry (entries_of)
  const std::vector<std::uint8_t>* pairs;    // axis of each pair of the row

  // The table row of position m, or the row past the table that the calling thread keeps
  // (detail/kept_rows.hpp).
  const C* row_at(std::int64_t position) const {
    const auto m = static_cast<std::size_t>(position);
    if (m < table->positions()) return table->row(m);
    return past_table(m);
  }

  ROPE_DETAIL_NOINLINE const C* past_table(std::size_t position) const {
    return table->kept_row(position);
  }

  // A row past the table written into out (a multi-axis row's, whose coordinates may share a
  // kept row's slot).
  ROPE_DETAIL_NOINLINE const C* past_table(std::size_t position, C* out) const {
    table->write_row(position, out);
    return out;
  }

  // The row of a negative coordinate −m (Axes::with_signed_coordinates) into out: the row of m
  // with its sines negated, cos(−m·θ) = cos(m·θ) and sin(−m·θ) = −sin(m·θ), to the bit.
  ROPE_DETAIL_NOINLINE const C* negative_row(std::int64_t position, C* out) const {
    const auto m = static_cast<std::size_t>(-position);  // position ≥ −(2^53 − 1)
    const C* row = m < table->positions() ? table->row(m) : past_table(m, out);
    const std::size_t width = table->head_size(), half = width / 2;
    const bool interleaved = table->layout() == Layout::interleaved;
    for (std::size_t k = 0; k < width; ++k) {
      const bool sine = interleaved ? k % 2 == 1 : k >= half;
      out[k] = sine ? -row[k] : row[k];
    }
    return out;
  }

  // The row of fractional coordinates (one, or one per axis) of token t, computed into scratch.
  // Multi-axis: entry k from the row of its axis at the token's coordinate on it, computed once
  // per thread, table and coordinate (AxisRows, walk.hpp); the same bits as the row computed
  // whole, entry by entry.
  ROPE_DETAIL_NOINLINE const C* fractional_row(const Positions& positions, std::size_t t,
                                               std::size_t sequence, Scratch<C>& scratch) const {
    const std::size_t width = table->head_size();
    C* const out = scratch.room(width);
    if (positions.axes() == 1) {
      double x[Axes::kMaxAxes];
      for (std::size_t a = 0; a < positions.axes(); ++a) {
        x[a] = positions.coordinate(t, a, sequence);
      }
      table->fractional_row(x, positions.axes() == 1 ? nullptr : pairs->data(), out);
      return out;
    }
    const C* r[Axes::kMaxAxes] = {};
    for (std::size_t a = 0; a < Axes::kMaxAxes; ++a) {
      if (a >= axes) {
        r[a] = r[0];
        continue;
      }
      const double x = positions.coordinate(t, a, sequence);
      std::uint64_t bits;
      std::memcpy(&bits, &x, sizeof bits);
      bool kept = false;
      C* row = AxisRows<C>::of_thread().find(table->id_, axes, width, a, bits, kept);
      if (!kept) table->fractional_axis_row(x, pairs->data(), static_cast<std::uint8_t>(a), row);
      r[a] = row;
    }
    select_entries(r, out);
    return out;
  }

  // Entry k of out from the row of its axis: a select that compilers vectorise.
  void select_entries(const C* const* r, C* out) const {
    const std::uint8_t* axis = entries->data();
    for (std::size_t k = 0; k < table->head_size(); ++k) {
      out[k] = axis[k] == 0 ? r[0][k] : axis[k] == 1 ? r[1][k] : axis[k] == 2 ? r[2][k] : r[3][k];
    }
  }

  // The row of multi-axis coordinates p[0 .. axes): the table row if they are all the same (a
  // text token: ordinary RoPE, bit for bit), else entry k from the row of its axis.
  ROPE_DETAIL_NOINLINE const C* mixed_row(const std::int64_t* p, Scratch<C>& scratch) const {
    bool same = true;
    for (std::size_t a = 0; a < axes; ++a) same = same && p[a] == p[0];
    if (same && p[0] >= 0) return row_at(p[0]);
    // Row `axes` of scratch is the result; rows 0 .. axes-1 hold the rows computed past the table.
    const std::size_t width = table->head_size();
    C* const rows = scratch.room((axes + 1) * width);
    C* out = rows + axes * width;
    const C* r[Axes::kMaxAxes] = {};  // (g++ 12 at -O3 -march=native cannot see every entry set)
    for (std::size_t a = 0; a < Axes::kMaxAxes; ++a) {
      if (a >= axes) {
        r[a] = r[0];
        continue;
      }
      if (p[a] < 0) {
        r[a] = negative_row(p[a], rows + a * width);
        continue;
      }
      const auto m = static_cast<std::size_t>(p[a]);
      r[a] = m < table->positions() ? table->row(m) : past_table(m, rows + a * width);
    }
    select_entries(r, out);
    return out;
  }
};

template <class C>
struct TableRows {
  using Value = C;
  RowsOfTable<C> rows;
  const Positions* positions;
  std::size_t sequence;  // tokens per sequence of the call's views

  const C* row(std::size_t t, Scratch<C>& scratch) const {
    if (positions->is_fractional()) return rows.fractional_row(*positions, t, sequence, scratch);
    if (positions->axes() == 1) return rows.row_at(positions->at(t, 0, sequence));
    std::int64_t p[Axes::kMaxAxes];
    for (std::size_t a = 0; a < rows.axes; ++a) p[a] = positions->at(t, a, sequence);
    return rows.mixed_row(p, scratch);
  }
  // Table rows: those of one axis at whole-number positions in the table.
  std::size_t stored_rows(std::size_t t, std::size_t last, const void** out) const {
    if (positions->is_fractional() || positions->axes() != 1) return 0;
    const std::size_t in_table = rows.table->positions();
    std::size_t k = 0;
    for (; t + k < last; ++k) {
      const auto m = static_cast<std::size_t>(positions->at(t + k, 0, sequence));
      if (m >= in_table) break;  // a row past the table: the thread's kept row
      out[k] = rows.table->row(m);
    }
    return k;
  }
};

template <class C>
struct FixedRow {
  using Value = C;
  const C* values;
  const C* row(std::size_t, Scratch<C>&) const { return values; }
  std::size_t stored_rows(std::size_t t, std::size_t last, const void** out) const {
    for (std::size_t k = t; k < last; ++k) out[k - t] = values;
    return last - t;
  }
};

template <class T, class C>
struct CacheRows {
  using Value = C;
  const T* cos;
  const T* sin;
  std::size_t stride;  // values from one cache row to the next
  std::size_t step;    // from c_j to c_{j+1} within a row: 2 for repeated rows, else 1
  Layout layout;
  std::size_t half;
  const std::vector<std::uint8_t>* axis_of_pair;  // multi-axis positions only
  const Positions* positions;
  std::size_t sequence;

  const C* row(std::size_t t, Scratch<C>& scratch) const {
    C* out = scratch.room(2 * half);
    const bool one_axis = positions->axes() == 1;
    std::size_t r = static_cast<std::size_t>(positions->at(t, 0, sequence));
    for (std::size_t j = 0; j < half; ++j) {
      if (!one_axis) r = static_cast<std::size_t>(positions->at(t, (*axis_of_pair)[j], sequence));
      put_pair(layout, half, j, static_cast<C>(cos[r * stride + j * step]),
               static_cast<C>(sin[r * stride + j * step]), out);
    }
    return out;
  }
  // Each row is gathered into the scratch: none stored.
  std::size_t stored_rows(std::size_t, std::size_t, const void**) const { return 0; }
};

}  // namespace detail
}  // namespace ROPE_DETAIL_ISA
}  // namespace rope

#endif  // !ROPE_BELOW_CXX17
