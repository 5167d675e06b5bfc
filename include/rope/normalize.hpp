// The passes that do not rotate: the QK-norms of qk_norm.hpp and the query scales of
// query_scale.hpp, each as a pass of its own. They are what the fused call (Rotary::apply_qk with
// a norm or a scale on a role) saves, and the norm or scale of a layer an engine does not rotate
// (Llama 4's NoPE layers).
#pragma once

#include <rope/config.hpp>
#if !defined(ROPE_BELOW_CXX17)  // config.hpp stops older standards with one #error

#include <cstddef>
#include <vector>

#include <rope/detail/checks.hpp>
#include <rope/detail/geometry.hpp>
#include <rope/detail/jobs.hpp>
#include <rope/detail/norm.hpp>
#include <rope/detail/query_scales.hpp>
#include <rope/detail/values.hpp>
#include <rope/execution.hpp>
#include <rope/positions.hpp>
#include <rope/qk_norm.hpp>
#include <rope/query_scale.hpp>
#include <rope/scalar.hpp>
#include <rope/view.hpp>

namespace rope {
inline namespace ROPE_DETAIL_ISA {

/// Normalises the heads of x in place, token by token on the calling thread, as `norm` says
/// (qk_norm.hpp; NormKind::l2_after normalises as it would after RoPE, without rotating; none
/// leaves x as it is), with the bits of the same norm in a fused apply_qk. Throws as apply's
/// view checks (E21, E23–E24, E53) and token range (E29), and std::invalid_argument for a weight
/// of the wrong length or null (E73) or ε not finite and > 0 (E74), before anything is written.
template <class T>
void normalize_heads(View<T> x, std::size_t head_size, const Norm<T>& norm, const Call& call = {}) {
  static_assert(is_storage_type_v<T>,
                "normalize_heads<T>: T must be float, double, Eigen::half or Eigen::bfloat16");
  detail::check_head_size(head_size);
  const detail::Geometry g(x);
  detail::check_view("x", g, head_size);
  const TokenRange range = call.range(x.rows());
  detail::check_range(range, x.rows());
  detail::check_norm("x", norm.kind, norm.weight, norm.weight_size, norm.epsilon, head_size,
                     x.heads());
  if (norm.kind == NormKind::none || x.heads() == 0) return;
  const detail::NormJob job = detail::norm_job<T, T>(norm, head_size);
  const std::size_t heads = x.heads(), stride = x.head_stride() * sizeof(T);
  // Each head's factor (8 bytes each, aligned for double), then the token's heads normalised.
  std::vector<double> factors(heads);
  auto* r = reinterpret_cast<unsigned char*>(factors.data());
  std::vector<T> buffer(heads * head_size);
  auto* normalized = reinterpret_cast<unsigned char*>(buffer.data());
  for (std::size_t t = range.first; t < range.last; ++t) {
    auto* first = reinterpret_cast<unsigned char*>(x.head(t, 0));
    if (job.before != nullptr) {
      job.factors(job, first, stride, heads, r);
      job.before(job, first, stride, 0, heads, r, normalized);
    } else {
      for (std::size_t h = 0; h < heads; ++h) {
        detail::convert_values(x.head(t, h), buffer.data() + h * head_size, head_size);
      }
      job.factors(job, normalized, head_size * sizeof(T), heads, r);
      job.after(job, normalized, heads, r);
    }
    job.store(job, normalized, heads, first, stride);
  }
}

/// Multiplies every coordinate of the queries of token t by s(positions(t)), in place, on the
/// calling thread: the queries of a layer without RoPE (Llama 4's NoPE layers). Computed in
/// C = compute_t<T> and rounded once, y = T(C(x) · C(s(p))); a multi-axis Positions scales by
/// its first coordinate. Checks q and the positions as Rotary::apply does, and the scale (E65),
/// before anything is written.
template <class T>
void scale_queries(View<T> q, std::size_t head_size, const Positions& positions,
                   const QueryScale& scale, const Call& call = {}) {
  static_assert(is_storage_type_v<T>,
                "scale_queries<T>: T must be float, double, Eigen::half or Eigen::bfloat16");
  detail::check_head_size(head_size);
  const detail::Geometry g(q);
  const TokenRange range = detail::check_apply(g, g, head_size, positions, positions.axes(), call);
  detail::check_query_scale(scale);
  detail::check_scaled_positions(positions, range);
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
