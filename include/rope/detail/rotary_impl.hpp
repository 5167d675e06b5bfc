// The bodies of rope::Rotary's members (rotary.hpp declares and documents them, and includes this
// file after the class). The heavy
// members are defined out of the class, so that the compiled mode's extern template declarations
// (rope/compiled.hpp) keep them out of a user's translation unit.
#pragma once

#include <rope/config.hpp>
#if !defined(ROPE_BELOW_CXX17)  // config.hpp stops older standards with one #error

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <vector>

#include <rope/detail/checks.hpp>
#include <rope/detail/rows.hpp>
#include <rope/detail/walk.hpp>

namespace rope {
inline namespace ROPE_DETAIL_ISA {

template <class T, int Dim>
Rotary<T, Dim>::Rotary(const Options& options)
    : head_size_(checked_head_size(options.head_size)),
      rotary_dim_(
          detail::checked_rotary_dim(head_size_, options.rotary_dim, options.rotary_offset)),
      rotary_offset_(options.rotary_offset),
      base_(options.base),
      frequencies_(options.axes.frequencies(rotary_dim_, options.base, options.scaling,
                                            options.sequence_length, options.angles)),
      axis_of_pair_(options.axes.axis_of_pairs(rotary_dim_ / 2)),
      runs_(detail::runs_of(axis_of_pair_)),
      axis_of_entry_(detail::entries_of(axis_of_pair_, options.layout)),
      axes_(options.axes.count()),
      table_(options.layout, frequencies_.theta, checked_positions(options, rotary_dim_),
             frequencies_.attention_factor, options.angles),
      angles_(options.angles) {}

template <class T, int Dim>
void Rotary<T, Dim>::apply(View<const T> src, View<T> dst, const Positions& positions,
                           const Call& call) const {
  const TokenRange range = detail::check_apply(src, dst, head_size_, positions, axes_, call);
  const detail::Job<T> job{src, dst};
  rotate(detail::TableRows<Compute>{rows(), &positions, src.tokens()}, &job, 1, range,
         call.direction, call.execution);
}

template <class T, int Dim>
void Rotary<T, Dim>::apply(Unchecked, View<const T> src, View<T> dst, const Positions& positions,
                           const Call& call) const {
  const detail::Job<T> job{src, dst};
  rotate(detail::TableRows<Compute>{rows(), &positions, src.tokens()}, &job, 1,
         call.tokens.value_or(TokenRange{0, src.rows()}), call.direction, call.execution);
}

template <class T, int Dim>
void Rotary<T, Dim>::apply_qk(View<T> q, View<T> k, const Positions& positions,
                              const Call& call) const {
  const TokenRange range = detail::check_apply_qk(q, k, head_size_, positions, axes_, call);
  apply_qk(unchecked, q, k, positions, Call{call.direction, range, call.execution});
}

template <class T, int Dim>
void Rotary<T, Dim>::apply_qk(Unchecked, View<T> q, View<T> k, const Positions& positions,
                              const Call& call) const {
  const detail::Job<T> jobs[2] = {{q, q}, {k, k}};
  rotate(detail::TableRows<Compute>{rows(), &positions, q.tokens()}, jobs, 2,
         call.tokens.value_or(TokenRange{0, q.rows()}), call.direction, call.execution);
}

template <class T, int Dim>
void Rotary<T, Dim>::shift(View<T> keys, std::int64_t delta, const Call& call) const {
  const TokenRange range = detail::check_shift_call(keys, head_size_, delta, call);
  shift(unchecked, keys, delta, Call{call.direction, range, call.execution});
}

template <class T, int Dim>
void Rotary<T, Dim>::shift(Unchecked, View<T> keys, std::int64_t delta, const Call& call) const {
  // R_δ for δ ≥ 0, its inverse R_|δ|ᵀ for δ < 0; Direction::inverse swaps the two.
  std::vector<Compute> row(rotary_dim_);
  Table<Compute>::compute_row(layout(), frequencies_.theta, std::abs(static_cast<double>(delta)),
                              row.data(), 1.0, angles_);
  const bool backwards = (delta < 0) != (call.direction == Direction::inverse);
  const detail::Job<T> job{keys, keys};
  rotate(detail::FixedRow<Compute>{row.data()}, &job, 1,
         call.tokens.value_or(TokenRange{0, keys.rows()}),
         backwards ? Direction::inverse : Direction::forward, call.execution);
}

template <class T, int Dim>
template <class Derived>
typename Derived::PlainObject Rotary<T, Dim>::rotated(const Eigen::DenseBase<Derived>& head,
                                                      std::int64_t position,
                                                      Direction direction) const {
  static_assert(std::is_same_v<typename Derived::Scalar, T>,
                "rope::Rotary<T, Dim>::rotated: the vector's scalar type must be T");
  static_assert(Derived::IsVectorAtCompileTime, "rope::Rotary<T, Dim>::rotated: needs a vector");
  if (static_cast<std::size_t>(head.size()) != head_size_) {
    detail::invalid("rope: the vector has %lld coefficients but the head size is %zu",
                    static_cast<long long>(head.size()), head_size_);
  }
  typename Derived::PlainObject out = head;  // contiguous, whatever the expression's strides
  apply(out.data(), 1, 1, Positions::consecutive(position), {direction});
  return out;
}

template <class T, int Dim>
std::size_t Rotary<T, Dim>::checked_head_size(std::size_t head_size) {
  if constexpr (Dim != Eigen::Dynamic) {
    if (head_size != 0 && head_size != static_cast<std::size_t>(Dim)) {
      detail::invalid("rope: Options::head_size %zu disagrees with the compile-time head size %d",
                      head_size, Dim);
    }
    return static_cast<std::size_t>(Dim);
  } else {
    detail::check_head_size(head_size);
    return head_size;
  }
}

template <class T, int Dim>
std::size_t Rotary<T, Dim>::checked_positions(const Options& options, std::size_t rotary_dim) {
  const std::size_t row_bytes = rotary_dim * sizeof(Compute);
  if (options.max_positions > options.table_memory_limit / row_bytes) {
    detail::invalid(
        "rope: a table of max_positions %zu x %zu bytes exceeds table_memory_limit %zu "
        "bytes (at most %zu positions)",
        options.max_positions, row_bytes, options.table_memory_limit,
        options.table_memory_limit / row_bytes);
  }
  return options.max_positions;
}

template <class T, int Dim>
detail::RowsOfTable<compute_t<T>> Rotary<T, Dim>::rows() const noexcept {
  return {
      &table_, &frequencies_.theta, frequencies_.attention_factor, angles_, axes_, &axis_of_entry_,
      &runs_};
}

template <class T, int Dim>
template <class Source>
void Rotary<T, Dim>::rotate(const Source& source, const detail::Job<T>* jobs, std::size_t job_count,
                            TokenRange range, Direction direction,
                            const Execution& execution) const {
  // A fixed Dim bounds the rotated pairs (rotary_dim <= Dim), whole head or partial.
  const detail::Slice slice{rotary_offset_, rotary_dim_, head_size_};
  detail::run<Dim == Eigen::Dynamic ? Eigen::Dynamic : Dim / 2>(source, layout(), jobs, job_count,
                                                                slice, range, direction, execution);
}

}  // namespace ROPE_DETAIL_ISA
}  // namespace rope

#endif  // !ROPE_BELOW_CXX17
