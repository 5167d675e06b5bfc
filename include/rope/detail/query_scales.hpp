// The query scale of each token of a call (QueryScale, rope/query_scale.hpp), as the fused call
// and rope::scale_queries multiply by it.
#pragma once

#include <rope/config.hpp>
#if !defined(ROPE_BELOW_CXX17)  // config.hpp stops older standards with one #error

#include <cstddef>
#include <vector>

#include <rope/execution.hpp>
#include <rope/positions.hpp>
#include <rope/query_scale.hpp>

namespace rope {
inline namespace ROPE_DETAIL_ISA {
namespace detail {

// s(positions(t)) for the tokens [range.first, range.last), at index t (the entries before
// range.first are unused). Tokens in the step of the token before share its logarithm.
inline std::vector<double> query_scales(const QueryScale& scale, const Positions& positions,
                                        TokenRange range, std::size_t sequence) {
  std::vector<double> scales(range.last);
  double step = -1, value = 1;
  for (std::size_t t = range.first; t < range.last; ++t) {
    const double s = query_step(scale, positions.at(t, 0, sequence));
    if (s != step) value = scale_of_step(scale, step = s);
    scales[t] = value;
  }
  return scales;
}

}  // namespace detail
}  // namespace ROPE_DETAIL_ISA
}  // namespace rope

#endif  // !ROPE_BELOW_CXX17
