// Position-dependent query scales: a factor s(p) on every coordinate of the queries of a token at
// position p, which two model families apply next to RoPE to sharpen attention at long context.
//
//     Llama4Temperature  s(p) = ln(⌊(p + 1) / floor_scale⌋ + 1) · attn_scale + 1
//                        Llama 4's attention temperature tuning, on its layers without RoPE
//                        (HuggingFace's Llama4TextAttention, config keys floor_scale and
//                        attn_scale)
//     Llama4Scaling      s(p) = 1 + llama_4_scaling_beta · ln(1 + ⌊p /
//     original_max_position_embeddings⌋)
//                        Ministral 3, on the queries after RoPE (the keys of its rope_parameters)
//
// Both are 1 up to the first step of the floor and grow by the logarithm of the step after it.
// Rotary::apply_qk(q, k, positions, scale) rotates and scales the queries in one pass (the scale
// folded into the token's cos/sin row); rope::scale_queries scales without rotating (Llama 4's
// NoPE layers).
#pragma once

#include <rope/config.hpp>
#if !defined(ROPE_BELOW_CXX17)  // config.hpp stops older standards with one #error

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <variant>
#include <vector>

#include <rope/detail/checks.hpp>
#include <rope/detail/walk.hpp>
#include <rope/execution.hpp>
#include <rope/positions.hpp>
#include <rope/scalar.hpp>
#include <rope/view.hpp>

namespace rope {
inline namespace ROPE_DETAIL_ISA {

/// Llama 4's attention temperature: s(p) = ln(⌊(p + 1) / floor_scale⌋ + 1) · attn_scale + 1.
struct Llama4Temperature {
  double floor_scale = 8192;  ///< > 0
  double attn_scale = 0.1;    ///< finite
};

/// Ministral 3's query scaling: s(p) = 1 + llama_4_scaling_beta · ln(1 + ⌊p / L0⌋), L0 the
/// original_max_position_embeddings.
struct Llama4Scaling {
  double llama_4_scaling_beta = 0.1;                ///< finite
  double original_max_position_embeddings = 16384;  ///< > 0
};

using QueryScale = std::variant<Llama4Temperature, Llama4Scaling>;

/// Throws std::invalid_argument if a parameter is out of its range (E65).
inline void check_query_scale(const QueryScale& scale);

/// s(p) in double, for p in [0, 2^53 − 1]. Throws as check_query_scale, and std::out_of_range
/// for a position outside [0, 2^53 − 1].
inline double query_scale(const QueryScale& scale, std::int64_t position);

/// Multiplies every coordinate of the queries of token t by s(positions(t)), in place, on the
/// calling thread: the queries of a layer without RoPE (Llama 4's NoPE layers). Computed in
/// C = compute_t<T> and rounded once, y = T(C(x) · C(s(p))); a multi-axis Positions scales by
/// its first coordinate. Checks q and the positions as Rotary::apply does, and the scale (E65),
/// before anything is written.
template <class T>
void scale_queries(View<T> q, std::size_t head_size, const Positions& positions,
                   const QueryScale& scale, const Call& call = {});

// ---- implementation ----------------------------------------------------------------------------

namespace detail {

// The step of the floor at position p, and s of a step. The floor is of a quotient of doubles:
// exact in every step below 2^53, where HuggingFace's float32 quotient is exact below 2^24.
inline double query_step(const QueryScale& scale, std::int64_t position) {
  const double p = static_cast<double>(position);
  if (const auto* t = std::get_if<Llama4Temperature>(&scale)) {
    return std::floor((p + 1) / t->floor_scale);
  }
  return std::floor(p / std::get<Llama4Scaling>(scale).original_max_position_embeddings);
}
inline double scale_of_step(const QueryScale& scale, double step) {
  const auto* t = std::get_if<Llama4Temperature>(&scale);
  const double coefficient =
      t != nullptr ? t->attn_scale : std::get<Llama4Scaling>(scale).llama_4_scaling_beta;
  return 1 + coefficient * std::log1p(step);
}

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

ROPE_DETAIL_COLD inline void check_query_scale(const QueryScale& scale) {
  if (const auto* t = std::get_if<Llama4Temperature>(&scale)) {
    if (!(std::isfinite(t->floor_scale) && t->floor_scale > 0)) {
      detail::invalid("rope: Llama4Temperature floor_scale %g must be finite and > 0",
                      t->floor_scale);
    }
    if (!std::isfinite(t->attn_scale)) {
      detail::invalid("rope: Llama4Temperature attn_scale %g must be finite", t->attn_scale);
    }
  } else {
    const auto& s = std::get<Llama4Scaling>(scale);
    if (!std::isfinite(s.llama_4_scaling_beta)) {
      detail::invalid("rope: Llama4Scaling llama_4_scaling_beta %g must be finite",
                      s.llama_4_scaling_beta);
    }
    if (!(std::isfinite(s.original_max_position_embeddings) &&
          s.original_max_position_embeddings > 0)) {
      detail::invalid(
          "rope: Llama4Scaling original_max_position_embeddings %g must be finite and > 0",
          s.original_max_position_embeddings);
    }
  }
}

inline double query_scale(const QueryScale& scale, std::int64_t position) {
  check_query_scale(scale);
  if (position < 0 || position > detail::kMaxPosition) {
    detail::out_of_range("rope: position %lld is outside [0, 2^53 - 1 = %lld]",
                         static_cast<long long>(position),
                         static_cast<long long>(detail::kMaxPosition));
  }
  return detail::scale_of_step(scale, detail::query_step(scale, position));
}

template <class T>
void scale_queries(View<T> q, std::size_t head_size, const Positions& positions,
                   const QueryScale& scale, const Call& call) {
  static_assert(is_storage_type_v<T>,
                "scale_queries<T>: T must be float, double, Eigen::half or Eigen::bfloat16");
  detail::check_head_size(head_size);
  const detail::Geometry g(q);
  const TokenRange range = detail::check_apply(g, g, head_size, positions, positions.axes(), call);
  check_query_scale(scale);
  const std::vector<double> scales = detail::query_scales(scale, positions, range, q.tokens());
  for (std::size_t t = range.first; t < range.last; ++t) {
    for (std::size_t h = 0; h < q.heads(); ++h) {
      detail::scale_values(q.head(t, h), head_size, scales[t]);
    }
  }
}

}  // namespace ROPE_DETAIL_ISA
}  // namespace rope

#endif  // !ROPE_BELOW_CXX17
