// The per-pair rotation frequencies θ_j.
#pragma once

#include <cmath>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

#include <rope/config.hpp>

namespace rope {

/// The inverse frequencies θ_j = base^(-2j/d), j = 0 .. d/2 - 1, of a head of size d.
///
/// RoFormer (Su et al. 2021), eq. 15; HuggingFace's `inv_freq`. Each θ_j is the double nearest
/// the exact value (but for rare ties) where long double is wider than double, as on x86-64
/// Linux: evaluated in double, the rounding of the exponent −2j/d alone would be amplified by
/// ln(base), up to 9 ulps at base 10000 (docs/numerics.md).
///
/// Throws std::invalid_argument if head_size is zero or odd, or base is not a finite
/// number > 0.
inline std::vector<double> inverse_frequencies(std::size_t head_size, double base = 10000.0) {
  if (head_size == 0 || head_size % 2 != 0) {
    ROPE_THROW(std::invalid_argument,
               "rope: head_size " + std::to_string(head_size) + " must be even and at least 2");
  }
  if (!(base > 0.0) || !std::isfinite(base)) {
    ROPE_THROW(std::invalid_argument,
               "rope: base " + std::to_string(base) + " must be a finite number > 0");
  }
  const long double d = static_cast<long double>(head_size);
  std::vector<double> theta(head_size / 2);
  for (std::size_t j = 0; j < theta.size(); ++j) {
    const long double exponent = -2.0L * static_cast<long double>(j) / d;
    theta[j] = static_cast<double>(std::pow(static_cast<long double>(base), exponent));
  }
  return theta;
}

}  // namespace rope
