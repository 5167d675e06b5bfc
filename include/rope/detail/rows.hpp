// The row sources of walk.hpp: where a token's row of cos and sin comes from.
//
//   TableRows  a Rotary's table; a row past the table computed as the table computes its rows;
//              for multi-axis positions, a row put together from the rows of the coordinates.
//   FixedRow   one row for every token (Rotary::shift).
//   CacheRows  a caller's cos/sin caches (CachedRotary), gathered into the kernels' format, one
//              cache row per axis for multi-axis positions.
#pragma once

#include <rope/config.hpp>
#if !defined(ROPE_BELOW_CXX17)  // config.hpp stops older standards with one #error

#include <cstddef>
#include <cstdint>
#include <vector>

#include <rope/axes.hpp>
#include <rope/detail/row_format.hpp>
#include <rope/layout.hpp>
#include <rope/positions.hpp>
#include <rope/table.hpp>

namespace rope {
inline namespace ROPE_DETAIL_ISA {
namespace detail {

// Consecutive pairs [first, last) that take the same axis.
struct AxisRun {
  std::size_t first, last, axis;
};

ROPE_DETAIL_COLD inline std::vector<AxisRun> runs_of(
    const std::vector<std::uint8_t>& axis_of_pair) {
  std::vector<AxisRun> runs;
  for (std::size_t i = 0; i < axis_of_pair.size(); ++i) {
    if (runs.empty() || runs.back().axis != axis_of_pair[i])
      runs.push_back({i, i, axis_of_pair[i]});
    runs.back().last = i + 1;
  }
  return runs;
}

// The axis of each entry of a row, in the row's order.
ROPE_DETAIL_COLD inline std::vector<std::uint8_t> entries_of(
    const std::vector<std::uint8_t>& axis_of_pair, Layout layout) {
  const std::size_t half = axis_of_pair.size();
  std::vector<std::uint8_t> axis(2 * half);
  for (std::size_t j = 0; j < half; ++j)
    put_pair(layout, half, j, axis_of_pair[j], axis_of_pair[j], axis.data());
  return axis;
}

// What a Rotary knows about its rows: the table, θ and how rows past it are computed, and the
// multi-axis map.
template <class C>
struct RowsOfTable {
  const Table<C>* table;
  const std::vector<double>* theta;
  double attention_factor;
  Angles angles;
  std::size_t axes;                          // of the Rotary
  const std::vector<std::uint8_t>* entries;  // axis of each row entry (entries_of)
  const std::vector<AxisRun>* runs;          // runs_of(axis_of_pair)

  // The table row of position m, or the row computed into scratch past the table.
  const C* row_at(std::int64_t position, std::vector<C>& scratch) const {
    const auto m = static_cast<std::size_t>(position);
    if (m < table->positions()) return table->row(m);
    scratch.resize(table->head_size());
    Table<C>::compute_row(table->layout(), *theta, static_cast<double>(m), scratch.data(),
                          attention_factor, angles);
    return scratch.data();
  }
};

template <class C>
struct TableRows {
  RowsOfTable<C> rows;
  const Positions* positions;
  std::size_t sequence;  // tokens per sequence of the call's views

  const C* row(std::size_t t, std::vector<C>& scratch) const {
    if (positions->axes() == 1) return rows.row_at(positions->at(t, 0, sequence), scratch);
    std::int64_t p[Axes::kMaxAxes];
    bool same = true;
    for (std::size_t a = 0; a < rows.axes; ++a) {
      p[a] = positions->at(t, a, sequence);
      same = same && p[a] == p[0];
    }
    if (same) return rows.row_at(p[0], scratch);  // a text token: ordinary RoPE, bit for bit
    const Table<C>& table = *rows.table;
    const std::size_t width = table.head_size();
    scratch.resize(width);
    bool inside = true;
    for (std::size_t a = 0; a < rows.axes; ++a) {
      inside = inside && static_cast<std::size_t>(p[a]) < table.positions();
    }
    if (inside) {
      // Entry k from the table row of its axis: a select that compilers vectorise.
      const C* r[Axes::kMaxAxes];
      for (std::size_t a = 0; a < Axes::kMaxAxes; ++a) {
        r[a] = table.row(static_cast<std::size_t>(p[a < rows.axes ? a : 0]));
      }
      const std::uint8_t* axis = rows.entries->data();
      C* out = scratch.data();
      for (std::size_t k = 0; k < width; ++k) {
        out[k] = axis[k] == 0 ? r[0][k] : axis[k] == 1 ? r[1][k] : axis[k] == 2 ? r[2][k] : r[3][k];
      }
      return out;
    }
    // A coordinate past the table: each run of pairs computed as the table computes its rows.
    for (const AxisRun& run : *rows.runs) {
      Table<C>::compute_pairs(table.layout(), *rows.theta, static_cast<double>(p[run.axis]),
                              scratch.data(), run.first, run.last, rows.attention_factor,
                              rows.angles);
    }
    return scratch.data();
  }
};

template <class C>
struct FixedRow {
  const C* values;
  const C* row(std::size_t, std::vector<C>&) const { return values; }
};

template <class T, class C>
struct CacheRows {
  const T* cos;
  const T* sin;
  std::size_t stride;  // values from one cache row to the next
  std::size_t step;    // from c_j to c_{j+1} within a row: 2 for repeated rows, else 1
  Layout layout;
  std::size_t half;
  const std::vector<std::uint8_t>* axis_of_pair;  // multi-axis positions only
  const Positions* positions;
  std::size_t sequence;

  const C* row(std::size_t t, std::vector<C>& scratch) const {
    scratch.resize(2 * half);
    const bool one_axis = positions->axes() == 1;
    std::size_t r = static_cast<std::size_t>(positions->at(t, 0, sequence));
    for (std::size_t j = 0; j < half; ++j) {
      if (!one_axis) r = static_cast<std::size_t>(positions->at(t, (*axis_of_pair)[j], sequence));
      put_pair(layout, half, j, static_cast<C>(cos[r * stride + j * step]),
               static_cast<C>(sin[r * stride + j * step]), scratch.data());
    }
    return scratch.data();
  }
};

}  // namespace detail
}  // namespace ROPE_DETAIL_ISA
}  // namespace rope

#endif  // !ROPE_BELOW_CXX17
