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
// The fused call rotates and scales the queries in one pass (Queries::scale, rope/roles.hpp);
// rope::scale_queries (rope/normalize.hpp) scales without rotating (Llama 4's NoPE layers).
// This header holds the types and the formula only.
#pragma once

#include <rope/config.hpp>
#if !defined(ROPE_BELOW_CXX17)  // config.hpp stops older standards with one #error

#include <cmath>
#include <cstdint>
#include <variant>

#include <rope/positions.hpp>

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

/// s(p) in double, for p in [0, kMaxPosition]. Throws std::invalid_argument for a parameter out
/// of its range (E65), and std::out_of_range for a position outside [0, kMaxPosition].
inline double query_scale(const QueryScale& scale, std::int64_t position);

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

// The parameters' ranges (E65): the formula's domain, checked by every call that takes a scale.
ROPE_DETAIL_COLD inline void check_query_scale(const QueryScale& scale) {
  if (const auto* t = std::get_if<Llama4Temperature>(&scale)) {
    if (!(std::isfinite(t->floor_scale) && t->floor_scale > 0)) {
      invalid("rope: Llama4Temperature floor_scale %g must be finite and > 0", t->floor_scale);
    }
    if (!std::isfinite(t->attn_scale)) {
      invalid("rope: Llama4Temperature attn_scale %g must be finite", t->attn_scale);
    }
  } else {
    const auto& s = std::get<Llama4Scaling>(scale);
    if (!std::isfinite(s.llama_4_scaling_beta)) {
      invalid("rope: Llama4Scaling llama_4_scaling_beta %g must be finite", s.llama_4_scaling_beta);
    }
    if (!(std::isfinite(s.original_max_position_embeddings) &&
          s.original_max_position_embeddings > 0)) {
      invalid("rope: Llama4Scaling original_max_position_embeddings %g must be finite and > 0",
              s.original_max_position_embeddings);
    }
  }
}

}  // namespace detail

inline double query_scale(const QueryScale& scale, std::int64_t position) {
  detail::check_query_scale(scale);
  if (position < 0 || position > kMaxPosition) {
    detail::out_of_range("rope: position %lld is outside [0, 2^53 - 1 = %lld]",
                         static_cast<long long>(position), static_cast<long long>(kMaxPosition));
  }
  return detail::scale_of_step(scale, detail::query_step(scale, position));
}

}  // namespace ROPE_DETAIL_ISA
}  // namespace rope

#endif  // !ROPE_BELOW_CXX17
