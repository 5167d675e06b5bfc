// Converting W_q and W_k (and their biases) between the two pairings.
#pragma once

#include <rope/config.hpp>
#if !defined(ROPE_BELOW_CXX17)  // config.hpp stops older standards with one #error

#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

#include <Eigen/Core>

#include <rope/detail/checks.hpp>
#include <rope/layout.hpp>

namespace rope {
inline namespace ROPE_DETAIL_ISA {

/// The order of a head's coordinates after conversion from the `from` pairing to the `to`
/// pairing: coordinate i of the converted head is coordinate order[i] of the original.
///
/// Pair j of one layout becomes pair j of the other, with the same θ_j: interleaved pair
/// (2j, 2j+1) ↔ half_split pair (j, j + r/2), within the rotated slice [offset, offset + r) of
/// r = rotary_dim coordinates (0: the whole head). Coordinates outside the slice stay put.
/// For d = 8, interleaved → half_split is [0 2 4 6 1 3 5 7]; half_split → interleaved is
/// [0 4 1 5 2 6 3 7], its inverse.
///
/// Throws std::invalid_argument for a zero or odd head size, or an odd rotary_dim or a slice
/// that does not fit the head.
inline std::vector<std::size_t> head_permutation(std::size_t head_size, Layout from, Layout to,
                                                 std::size_t rotary_dim = 0,
                                                 std::size_t rotary_offset = 0) {
  detail::check_layout(from);
  detail::check_layout(to);
  const std::size_t r = detail::checked_rotary_dim(head_size, rotary_dim, rotary_offset);
  std::vector<std::size_t> order(head_size);
  for (std::size_t i = 0; i < head_size; ++i) order[i] = i;
  if (from == to) return order;
  std::size_t* slice = order.data() + rotary_offset;
  for (std::size_t j = 0; j < r / 2; ++j) {
    if (to == Layout::half_split) {  // interleaved (2j, 2j+1) → half_split (j, j + r/2)
      slice[j] = rotary_offset + 2 * j;
      slice[j + r / 2] = rotary_offset + 2 * j + 1;
    } else {  // half_split (j, j + r/2) → interleaved (2j, 2j+1)
      slice[2 * j] = rotary_offset + j;
      slice[2 * j + 1] = rotary_offset + j + r / 2;
    }
  }
  return order;
}

/// Permutes the rows of a projection matrix, in place, so that a model written for the `from`
/// pairing gives the same attention scores with the `to` pairing.
///
/// Rows are output features, `heads` heads of `head_size` coordinates each, as in PyTorch's
/// nn.Linear weight [out_features, in_features] and the checkpoints saved from it (pass
/// `w.transpose()` for a matrix stored the other way round). Convert W_q with the query heads and
/// W_k with the key heads (fewer under grouped-query attention), and a bias vector (Qwen2's
/// q_proj.bias) the same way as its matrix. W_v and W_o are never permuted. Both counts are
/// asked for so that W_k given the query head count is an error, not a wrong permutation.
///
/// Meta's LLaMA checkpoints are interleaved; HuggingFace's conversion script applies
/// interleaved → half_split to W_q and W_k, and llama.cpp's converter applies the inverse.
///
/// Throws std::invalid_argument if the rows are not heads × head_size (naming all three), or for
/// a bad head size or slice (see head_permutation). O(rows · columns) time, O(rows) bits of
/// extra memory.
template <class Derived>
void convert_rows(const Eigen::MatrixBase<Derived>& weights, std::size_t heads,
                  std::size_t head_size, Layout from, Layout to, std::size_t rotary_dim = 0,
                  std::size_t rotary_offset = 0) {
  auto& w = const_cast<Eigen::MatrixBase<Derived>&>(weights);
  const auto rows = static_cast<std::size_t>(w.rows());
  if (heads == 0 || rows / heads != head_size || rows % heads != 0) {
    ROPE_THROW(std::invalid_argument, "rope: a matrix of " + std::to_string(rows) +
                                          " rows is not " + std::to_string(heads) +
                                          " heads x head_size " + std::to_string(head_size));
  }
  const std::vector<std::size_t> order =
      head_permutation(head_size, from, to, rotary_dim, rotary_offset);
  // Row i takes row source(i); each cycle of the permutation is walked once with swaps.
  const auto source = [&](std::size_t i) { return i - i % head_size + order[i % head_size]; };
  std::vector<bool> done(rows, false);
  for (std::size_t start = 0; start < rows; ++start) {
    if (done[start]) continue;
    done[start] = true;
    for (std::size_t i = start; source(i) != start; i = source(i)) {
      w.row(Eigen::Index(i)).swap(w.row(Eigen::Index(source(i))));
      done[source(i)] = true;
    }
  }
}

/// convert_rows into a new matrix; `weights` is not modified.
template <class Derived>
typename Derived::PlainObject converted_rows(const Eigen::MatrixBase<Derived>& weights,
                                             std::size_t heads, std::size_t head_size, Layout from,
                                             Layout to, std::size_t rotary_dim = 0,
                                             std::size_t rotary_offset = 0) {
  typename Derived::PlainObject result = weights;
  convert_rows(result, heads, head_size, from, to, rotary_dim, rotary_offset);
  return result;
}

}  // namespace ROPE_DETAIL_ISA
}  // namespace rope

#endif  // !ROPE_BELOW_CXX17
