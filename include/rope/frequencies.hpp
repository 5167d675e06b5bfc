// The per-pair rotation frequencies θ_j, and the scaling schemes that released checkpoints use to
// stretch them past the context length they were trained on.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include <rope/config.hpp>
#include <rope/layout.hpp>

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

/// θ_j as HuggingFace computes it in float32: 1 / base^(2j/d), with 2j/d, the power and the
/// reciprocal each rounded to float (returned as double, each value a float).
inline std::vector<double> inverse_frequencies_float32(std::size_t head_size, double base) {
  inverse_frequencies(head_size, base);  // the same argument checks
  const float b = static_cast<float>(base), d = static_cast<float>(head_size);
  std::vector<double> theta(head_size / 2);
  for (std::size_t j = 0; j < theta.size(); ++j) {
    const float exponent = static_cast<float>(2 * j) / d;
    theta[j] = static_cast<double>(1.0f / std::pow(b, exponent));
  }
  return theta;
}

// ---- scaling schemes
// ------------------------------------------------------------------------------ Field names are
// HuggingFace's `rope_scaling` / `rope_parameters` keys, so a config.json maps one to one.
// docs/scaling.md gives each formula and the matching ggml parameters.

/// No scaling (HuggingFace rope_type "default").
struct Unscaled {};

/// Position interpolation (rope_type "linear"): θ_j / factor.
struct Linear {
  double factor = 1.0;
};

/// Static NTK-aware scaling: base' = base · factor^(d/(d−2)).
struct NTKAware {
  double factor = 1.0;
};

/// Dynamic NTK scaling (rope_type "dynamic"): for a sequence of L > M tokens,
/// base' = base · ((factor·L/M) − (factor − 1))^(d/(d−2)); unscaled for L ≤ M.
/// L is Options::sequence_length. Keys already in a cache were rotated with the base of the
/// length at which they were rotated; growing L changes θ for new tokens only.
struct DynamicNTK {
  double factor = 1.0;
  double max_position_embeddings = 2048;  // M
};

/// YaRN (rope_type "yarn"; Peng et al. 2023): low-frequency pairs interpolated by `factor`,
/// high-frequency pairs kept, a linear ramp between; cos and sin scaled by an attention factor.
struct Yarn {
  double factor = 1.0;
  double original_max_position_embeddings = 4096;  // L0
  double beta_fast = 32;
  double beta_slow = 1;
  std::optional<double> mscale{};
  std::optional<double> mscale_all_dim{};
  std::optional<double> attention_factor{};
  bool truncate = true;
};

/// Llama 3.1 / 3.2 scaling (rope_type "llama3"): pairs of wavelength above L0/low_freq_factor
/// are divided by `factor`, below L0/high_freq_factor kept, a smooth blend between.
struct Llama3 {
  double factor = 8;
  double low_freq_factor = 1;
  double high_freq_factor = 4;
  double original_max_position_embeddings = 8192;  // L0
};

/// LongRoPE / Phi-3 "su" scaling (rope_type "longrope"): θ_j = 1/(ext_j · base^(2j/d)), with
/// ext = long_factor when Options::sequence_length exceeds L0, else short_factor; cos and sin
/// scaled by sqrt(1 + ln(factor)/ln(L0)) unless attention_factor is given. factor defaults to
/// max_position_embeddings / L0.
struct LongRope {
  std::vector<double> short_factor{};
  std::vector<double> long_factor{};
  double original_max_position_embeddings = 4096;  // L0
  double max_position_embeddings = 131072;
  std::optional<double> factor{};
  std::optional<double> attention_factor{};
};

/// θ_j given by the caller, one per pair.
struct InverseFrequencies {
  std::vector<double> theta{};
};

/// θ_j divided by a per-pair factor (ggml's `freq_factors`, how llama.cpp stores Llama 3 and
/// LongRoPE scaling).
struct FrequencyFactors {
  std::vector<double> factors{};
};

/// One of the schemes above.
using Scaling = std::variant<Unscaled, Linear, NTKAware, DynamicNTK, Yarn, Llama3, LongRope,
                             InverseFrequencies, FrequencyFactors>;

/// What a scheme yields: θ_j for j < rotary_dim/2, and the factor that multiplies cos and sin
/// (so q·k logits scale by its square, as in HuggingFace).
struct Frequencies {
  std::vector<double> theta{};
  double attention_factor = 1.0;
};

namespace detail {

inline constexpr double kPi = 3.141592653589793238462643383279502884;

[[noreturn]] inline void bad_scaling(const std::string& what) {
  ROPE_THROW(std::invalid_argument, "rope: " + what);
}

inline void require_positive(const char* name, double value) {
  if (!(value > 0.0) || !std::isfinite(value)) {
    bad_scaling(std::string(name) + " " + std::to_string(value) + " must be a finite number > 0");
  }
}

inline void require_factors(const char* name, const std::vector<double>& factors,
                            std::size_t pairs) {
  if (factors.size() != pairs) {
    bad_scaling(std::string(name) + " has " + std::to_string(factors.size()) +
                " values but the rotary dimension has " + std::to_string(pairs) + " pairs");
  }
  for (const double f : factors) require_positive(name, f);
}

// base' = base · s^(d/(d−2)) for the NTK schemes; d = 2 would divide by zero.
inline double ntk_base(std::size_t d, double base, double s) {
  if (d <= 2) bad_scaling("NTK scaling needs a rotary dimension > 2, got " + std::to_string(d));
  const double dd = static_cast<double>(d);
  return base * std::pow(s, dd / (dd - 2));
}

// HuggingFace's get_mscale: 0.1 · mscale · ln(scale) + 1, and 1 for scale ≤ 1.
inline double yarn_mscale(double scale, double mscale = 1.0) {
  return scale <= 1.0 ? 1.0 : 0.1 * mscale * std::log(scale) + 1.0;
}

}  // namespace detail

/// θ_j and the attention factor of `scaling` for a rotary dimension d and a base, for a
/// sequence of `sequence_length` tokens (read by DynamicNTK and LongRope only). With
/// Angles::pytorch_float32 the unscaled θ_j follow HuggingFace's float32 recipe and the results
/// are rounded to float (the scheme's own arithmetic stays in double).
///
/// Throws std::invalid_argument for a parameter out of range: a factor, length or base that is
/// not finite and > 0, a factor list whose length is not d/2, beta_fast < beta_slow,
/// high_freq_factor ≤ low_freq_factor, a sequence_length that is negative or not finite, a θ_j
/// so large that m·θ_j overflows below m = 2^53, or an odd or zero d.
inline Frequencies frequencies(std::size_t d, double base, const Scaling& scaling,
                               double sequence_length = 0, Angles angles = Angles::exact) {
  const auto base_theta = [angles](std::size_t dim, double b) {
    return angles == Angles::exact ? inverse_frequencies(dim, b)
                                   : inverse_frequencies_float32(dim, b);
  };
  std::vector<double> theta = base_theta(d, base);
  if (!(sequence_length >= 0.0) || !std::isfinite(sequence_length)) {
    detail::bad_scaling("sequence_length " + std::to_string(sequence_length) +
                        " must be a finite number >= 0");
  }
  const std::size_t pairs = theta.size();
  const double dd = static_cast<double>(d);
  Frequencies result = std::visit(
      [&](const auto& s) -> Frequencies {
        using S = std::decay_t<decltype(s)>;
        if constexpr (std::is_same_v<S, Unscaled>) {
          return {theta, 1.0};
        } else if constexpr (std::is_same_v<S, Linear>) {
          detail::require_positive("Linear::factor", s.factor);
          for (double& t : theta) t /= s.factor;
          return {theta, 1.0};
        } else if constexpr (std::is_same_v<S, NTKAware>) {
          detail::require_positive("NTKAware::factor", s.factor);
          return {base_theta(d, detail::ntk_base(d, base, s.factor)), 1.0};
        } else if constexpr (std::is_same_v<S, DynamicNTK>) {
          detail::require_positive("DynamicNTK::factor", s.factor);
          detail::require_positive("DynamicNTK::max_position_embeddings",
                                   s.max_position_embeddings);
          if (sequence_length <= s.max_position_embeddings) return {theta, 1.0};
          const double stretch =
              s.factor * sequence_length / s.max_position_embeddings - (s.factor - 1);
          return {base_theta(d, detail::ntk_base(d, base, stretch)), 1.0};
        } else if constexpr (std::is_same_v<S, Yarn>) {
          detail::require_positive("Yarn::factor", s.factor);
          detail::require_positive("Yarn::original_max_position_embeddings",
                                   s.original_max_position_embeddings);
          detail::require_positive("Yarn::beta_fast", s.beta_fast);
          detail::require_positive("Yarn::beta_slow", s.beta_slow);
          if (s.beta_fast < s.beta_slow) {
            detail::bad_scaling("Yarn::beta_fast " + std::to_string(s.beta_fast) +
                                " must be >= beta_slow " + std::to_string(s.beta_slow));
          }
          // The pair index at which a wavelength completes r turns over L0:
          // cd(r) = d·ln(L0/(2πr)) / (2·ln base).
          const auto correction_dim = [&](double r) {
            return dd * std::log(s.original_max_position_embeddings / (2 * detail::kPi * r)) /
                   (2 * std::log(base));
          };
          double low = correction_dim(s.beta_fast), high = correction_dim(s.beta_slow);
          if (s.truncate) {
            low = std::floor(low);
            high = std::ceil(high);
          }
          low = std::max(low, 0.0);
          high = std::min(high, dd - 1);
          if (low == high) high += 0.001;
          for (std::size_t j = 0; j < pairs; ++j) {
            const double ramp = std::clamp((double(j) - low) / (high - low), 0.0, 1.0);
            theta[j] = theta[j] / s.factor * ramp + theta[j] * (1 - ramp);
          }
          double attention = 0;
          if (s.attention_factor) {
            attention = *s.attention_factor;
          } else if (s.mscale && s.mscale_all_dim && *s.mscale != 0 && *s.mscale_all_dim != 0) {
            attention = detail::yarn_mscale(s.factor, *s.mscale) /
                        detail::yarn_mscale(s.factor, *s.mscale_all_dim);
          } else {
            attention = detail::yarn_mscale(s.factor);
          }
          detail::require_positive("Yarn attention factor", attention);
          return {theta, attention};
        } else if constexpr (std::is_same_v<S, Llama3>) {
          detail::require_positive("Llama3::factor", s.factor);
          detail::require_positive("Llama3::low_freq_factor", s.low_freq_factor);
          detail::require_positive("Llama3::original_max_position_embeddings",
                                   s.original_max_position_embeddings);
          if (!(s.high_freq_factor > s.low_freq_factor)) {
            detail::bad_scaling("Llama3::high_freq_factor " + std::to_string(s.high_freq_factor) +
                                " must be > low_freq_factor " + std::to_string(s.low_freq_factor));
          }
          const double l0 = s.original_max_position_embeddings;
          const double low_freq_wavelength = l0 / s.low_freq_factor;
          const double high_freq_wavelength = l0 / s.high_freq_factor;
          for (double& t : theta) {
            const double wavelength = 2 * detail::kPi / t;
            if (wavelength > low_freq_wavelength) {
              t /= s.factor;
            } else if (wavelength >= high_freq_wavelength) {
              const double smooth =
                  (l0 / wavelength - s.low_freq_factor) / (s.high_freq_factor - s.low_freq_factor);
              t = (1 - smooth) * t / s.factor + smooth * t;
            }
          }
          return {theta, 1.0};
        } else if constexpr (std::is_same_v<S, LongRope>) {
          detail::require_factors("LongRope::short_factor", s.short_factor, pairs);
          detail::require_factors("LongRope::long_factor", s.long_factor, pairs);
          const double l0 = s.original_max_position_embeddings;
          detail::require_positive("LongRope::original_max_position_embeddings", l0);
          const double factor = s.factor ? *s.factor : s.max_position_embeddings / l0;
          detail::require_positive("LongRope::factor", factor);
          const auto& ext = sequence_length > l0 ? s.long_factor : s.short_factor;
          for (std::size_t j = 0; j < pairs; ++j) theta[j] /= ext[j];
          const double attention =
              s.attention_factor
                  ? *s.attention_factor
                  : (factor <= 1 ? 1.0 : std::sqrt(1 + std::log(factor) / std::log(l0)));
          detail::require_positive("LongRope attention factor", attention);
          return {theta, attention};
        } else if constexpr (std::is_same_v<S, InverseFrequencies>) {
          detail::require_factors("InverseFrequencies::theta", s.theta, pairs);
          return {s.theta, 1.0};
        } else {
          static_assert(std::is_same_v<S, FrequencyFactors>);
          detail::require_factors("FrequencyFactors::factors", s.factors, pairs);
          for (std::size_t j = 0; j < pairs; ++j) theta[j] /= s.factors[j];
          return {theta, 1.0};
        }
      },
      scaling);
  if (angles == Angles::pytorch_float32) {  // a scheme's θ_j as float32 tensors hold them
    for (double& t : result.theta) t = static_cast<double>(static_cast<float>(t));
    result.attention_factor = static_cast<double>(static_cast<float>(result.attention_factor));
  }
  // Every angle m·θ_j, m < 2^53, must be a finite double (only a caller's θ can be this large).
  for (std::size_t j = 0; j < result.theta.size(); ++j) {
    if (!std::isfinite(result.theta[j] * 9007199254740991.0)) {
      detail::bad_scaling("theta_" + std::to_string(j) + " " + detail::number(result.theta[j]) +
                          " is too large: the angle at position 2^53 - 1 would overflow");
    }
  }
  return result;
}

}  // namespace rope
