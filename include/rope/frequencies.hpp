// The per-pair rotation frequencies θ_j, and the scaling schemes that released checkpoints use to
// stretch them past the context length they were trained on.
#pragma once

#include <rope/config.hpp>
#if !defined(ROPE_BELOW_CXX17)  // config.hpp stops older standards with one #error

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include <rope/layout.hpp>

namespace rope {
inline namespace ROPE_DETAIL_ISA {

/// The inverse frequencies θ_j = base^(-2j/d), j = 0 .. d/2 - 1, of a head of size d.
///
/// RoFormer (Su et al. 2021), eq. 15; HuggingFace's `inv_freq`. Each θ_j is the double nearest
/// the exact value (but for rare ties) where long double is wider than double, as on x86-64
/// Linux: evaluated in double, the rounding of the exponent −2j/d alone would be amplified by
/// ln(base), up to 9 ulps at base 10000 (docs/numerics.md).
///
/// Throws std::invalid_argument if head_size is zero or odd, or base is not a finite
/// number > 0.
ROPE_DETAIL_COLD inline std::vector<double> inverse_frequencies(std::size_t head_size,
                                                                double base = 10000.0) {
  detail::check_head_size(head_size);
  if (!(base > 0.0) || !std::isfinite(base)) {
    detail::invalid("rope: base %g must be a finite number > 0", base);
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
ROPE_DETAIL_COLD inline std::vector<double> inverse_frequencies_float32(std::size_t head_size,
                                                                        double base) {
  inverse_frequencies(head_size, base);  // the same argument checks
  const float b = static_cast<float>(base), d = static_cast<float>(head_size);
  std::vector<double> theta(head_size / 2);
  for (std::size_t j = 0; j < theta.size(); ++j) {
    const float exponent = static_cast<float>(2 * j) / d;
    theta[j] = static_cast<double>(1.0f / std::pow(b, exponent));
  }
  return theta;
}

// ---- scaling schemes ---------------------------------------------------------------------------
// Field names are HuggingFace's `rope_scaling` / `rope_parameters` keys, so a config.json maps one
// to one. Each scheme is computed by its own function in detail:: below, beside its formula and
// the HuggingFace function it follows (transformers' modeling_rope_utils.py keeps one
// `_compute_<rope_type>_parameters` per key); docs/scaling.md gives the matching ggml parameters.

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
/// are divided by `factor`, below L0/high_freq_factor kept, a smooth blend between. Equal
/// factors (Llama 4) leave no band between: a wavelength of exactly L0/low_freq_factor keeps θ,
/// where HuggingFace's blend is 0/0 (docs/scaling.md).
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

/// Proportional RoPE (rope_type "proportional"; Gemma 4's full-attention layers): of the d/2
/// pairs, the first ⌊partial_rotary_factor·d/2⌋ take θ_j = base^(−2j/d) / factor and the others
/// θ_j = 0, so they do not rotate. Unlike Options::rotary_dim, the pairs stay those of the whole
/// head ((j, j + d/2) in half_split).
struct Proportional {
  double partial_rotary_factor = 1.0;
  double factor = 1.0;
};

/// θ_j given by the caller, one per pair. θ_j = 0 means that pair j does not rotate; such pairs
/// must be the last ones.
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
                             Proportional, InverseFrequencies, FrequencyFactors>;

/// What a scheme yields: θ_j for j < rotary_dim/2, and the factor that multiplies cos and sin
/// (so q·k logits scale by its square, as in HuggingFace).
struct Frequencies {
  std::vector<double> theta{};
  double attention_factor = 1.0;
};

namespace detail {

inline constexpr double kPi = 3.141592653589793238462643383279502884;

ROPE_DETAIL_COLD inline void require_positive(const char* name, double value) {
  if (!(value > 0.0) || !std::isfinite(value)) {
    invalid("rope: %s %g must be a finite number > 0", name, value);
  }
}

ROPE_DETAIL_COLD inline void require_count(const char* name, const std::vector<double>& values,
                                           std::size_t pairs) {
  if (values.size() != pairs) {
    invalid("rope: %s has %zu values but the rotary dimension has %zu pairs", name, values.size(),
            pairs);
  }
}

ROPE_DETAIL_COLD inline void require_factors(const char* name, const std::vector<double>& factors,
                                             std::size_t pairs) {
  require_count(name, factors, pairs);
  for (const double f : factors) require_positive(name, f);
}

// What every scheme knows besides its parameters: the rotary dimension d, the base, the sequence
// length (DynamicNTK, LongRope) and the arithmetic of the unscaled θ. Each scheme below turns the
// unscaled frequencies f (θ_j of the base, attention factor 1) into its own, in place.
struct SchemeInput {
  std::size_t d;
  double base;
  double sequence_length;
  Angles angles;

  std::vector<double> theta_for(double b) const {
    return angles == Angles::exact ? inverse_frequencies(d, b) : inverse_frequencies_float32(d, b);
  }
};

// base' = base · s^(d/(d−2)) for the NTK schemes; d = 2 would divide by zero. `scheme` names the
// argument that gave s, for the message when base' is not a finite number.
ROPE_DETAIL_COLD inline double ntk_base(std::size_t d, double base, double s, const char* scheme,
                                        double factor) {
  if (d <= 2) invalid("rope: NTK scaling needs a rotary dimension > 2, got %zu", d);
  const double dd = static_cast<double>(d);
  const double scaled = base * std::pow(s, dd / (dd - 2));
  if (!std::isfinite(scaled)) {
    invalid("rope: %s %g scales base %g past the largest double (rotary_dim %zu)", scheme, factor,
            base, d);
  }
  return scaled;
}

// HuggingFace's get_mscale: 0.1 · mscale · ln(scale) + 1, and 1 for scale ≤ 1.
ROPE_DETAIL_COLD inline double yarn_mscale(double scale, double mscale = 1.0) {
  return scale <= 1.0 ? 1.0 : 0.1 * mscale * std::log(scale) + 1.0;
}

// "linear" (_compute_linear_scaling_rope_parameters): θ_j / factor.
ROPE_DETAIL_COLD inline void linear(const Linear& s, const SchemeInput&, Frequencies& f) {
  require_positive("Linear::factor", s.factor);
  for (double& t : f.theta) t /= s.factor;
}

// Static NTK-aware scaling: θ_j of base · factor^(d/(d−2)).
ROPE_DETAIL_COLD inline void ntk_aware(const NTKAware& s, const SchemeInput& in, Frequencies& f) {
  require_positive("NTKAware::factor", s.factor);
  f.theta = in.theta_for(ntk_base(in.d, in.base, s.factor, "NTKAware::factor", s.factor));
}

// "dynamic" (_compute_dynamic_ntk_parameters): for L > M,
// base' = base · (factor·L/M − (factor − 1))^(d/(d−2)).
ROPE_DETAIL_COLD inline void dynamic_ntk(const DynamicNTK& s, const SchemeInput& in,
                                         Frequencies& f) {
  require_positive("DynamicNTK::factor", s.factor);
  require_positive("DynamicNTK::max_position_embeddings", s.max_position_embeddings);
  if (in.sequence_length <= s.max_position_embeddings) return;
  const double stretch = s.factor * in.sequence_length / s.max_position_embeddings - (s.factor - 1);
  f.theta = in.theta_for(ntk_base(in.d, in.base, stretch, "DynamicNTK::factor", s.factor));
}

// "yarn" (_compute_yarn_parameters; Peng et al. 2023, eq. 17-20). The pair index at which a
// wavelength completes r turns over L0 is cd(r) = d·ln(L0/(2πr)) / (2·ln base); pairs below
// cd(beta_fast) keep θ, pairs above cd(beta_slow) take θ/factor, a linear ramp between.
ROPE_DETAIL_COLD inline void yarn(const Yarn& s, const SchemeInput& in, Frequencies& f) {
  require_positive("Yarn::factor", s.factor);
  require_positive("Yarn::original_max_position_embeddings", s.original_max_position_embeddings);
  require_positive("Yarn::beta_fast", s.beta_fast);
  require_positive("Yarn::beta_slow", s.beta_slow);
  if (s.beta_fast < s.beta_slow) {
    invalid("rope: Yarn::beta_fast %g must be >= beta_slow %g", s.beta_fast, s.beta_slow);
  }
  if (!(in.base > 1)) {  // its ramp divides by ln(base)
    invalid("rope: Yarn needs a base > 1 (its ramp divides by ln base), got base %g", in.base);
  }
  const double dd = static_cast<double>(in.d);
  const auto correction_dim = [&](double r) {
    return dd * std::log(s.original_max_position_embeddings / (2 * kPi * r)) /
           (2 * std::log(in.base));
  };
  double low = correction_dim(s.beta_fast), high = correction_dim(s.beta_slow);
  if (s.truncate) {
    low = std::floor(low);
    high = std::ceil(high);
  }
  low = std::max(low, 0.0);
  high = std::min(high, dd - 1);
  if (low == high) high += 0.001;
  for (std::size_t j = 0; j < f.theta.size(); ++j) {
    const double ramp = std::clamp((static_cast<double>(j) - low) / (high - low), 0.0, 1.0);
    f.theta[j] = f.theta[j] / s.factor * ramp + f.theta[j] * (1 - ramp);
  }
  double attention = 0;
  if (s.attention_factor) {
    attention = *s.attention_factor;
  } else if (s.mscale && s.mscale_all_dim && *s.mscale != 0 && *s.mscale_all_dim != 0) {
    attention = yarn_mscale(s.factor, *s.mscale) / yarn_mscale(s.factor, *s.mscale_all_dim);
  } else {
    attention = yarn_mscale(s.factor);
  }
  require_positive("Yarn attention factor", attention);
  f.attention_factor = attention;
}

// "llama3" (_compute_llama3_parameters): wavelengths above L0/low_freq_factor take θ/factor,
// below L0/high_freq_factor keep θ, smooth = (L0/λ − low)/(high − low) blends between.
// Equal factors leave no band between: λ = L0/low keeps θ (HuggingFace: 0/0, NaN).
ROPE_DETAIL_COLD inline void llama3(const Llama3& s, const SchemeInput&, Frequencies& f) {
  require_positive("Llama3::factor", s.factor);
  require_positive("Llama3::low_freq_factor", s.low_freq_factor);
  require_positive("Llama3::original_max_position_embeddings", s.original_max_position_embeddings);
  if (!(s.high_freq_factor >= s.low_freq_factor) || !std::isfinite(s.high_freq_factor)) {
    invalid("rope: Llama3::high_freq_factor %g must be finite and >= low_freq_factor %g",
            s.high_freq_factor, s.low_freq_factor);
  }
  const double l0 = s.original_max_position_embeddings;
  const double low_freq_wavelength = l0 / s.low_freq_factor;
  const double high_freq_wavelength = l0 / s.high_freq_factor;
  const bool band = s.high_freq_factor > s.low_freq_factor;
  for (double& t : f.theta) {
    const double wavelength = 2 * kPi / t;
    if (wavelength > low_freq_wavelength) {
      t /= s.factor;
    } else if (band && wavelength >= high_freq_wavelength) {
      const double smooth =
          (l0 / wavelength - s.low_freq_factor) / (s.high_freq_factor - s.low_freq_factor);
      t = (1 - smooth) * t / s.factor + smooth * t;
    }
  }
}

// "longrope" (_compute_longrope_parameters): θ_j / ext_j, ext = long_factor past L0 else
// short_factor; attention factor sqrt(1 + ln(factor)/ln(L0)) unless given.
ROPE_DETAIL_COLD inline void long_rope(const LongRope& s, const SchemeInput& in, Frequencies& f) {
  const std::size_t pairs = f.theta.size();
  require_factors("LongRope::short_factor", s.short_factor, pairs);
  require_factors("LongRope::long_factor", s.long_factor, pairs);
  const double l0 = s.original_max_position_embeddings;
  require_positive("LongRope::original_max_position_embeddings", l0);
  const double factor = s.factor ? *s.factor : s.max_position_embeddings / l0;
  require_positive("LongRope::factor", factor);
  const std::vector<double>& ext = in.sequence_length > l0 ? s.long_factor : s.short_factor;
  for (std::size_t j = 0; j < pairs; ++j) f.theta[j] /= ext[j];
  const double attention =
      s.attention_factor ? *s.attention_factor
                         : (factor <= 1 ? 1.0 : std::sqrt(1 + std::log(factor) / std::log(l0)));
  require_positive("LongRope attention factor", attention);
  f.attention_factor = attention;
}

// "proportional" (_compute_proportional_rope_parameters): the first ⌊p·d/2⌋ pairs keep
// base^(−2j/d), the others take 0; all divided by factor.
ROPE_DETAIL_COLD inline void proportional(const Proportional& s, const SchemeInput& in,
                                          Frequencies& f) {
  const double p = s.partial_rotary_factor;
  if (!(p >= 0.0 && p <= 1.0)) {
    invalid("rope: Proportional::partial_rotary_factor %g must be in [0, 1]", p);
  }
  require_positive("Proportional::factor", s.factor);
  const auto rotating = static_cast<std::size_t>(std::floor(p * static_cast<double>(in.d) / 2));
  for (std::size_t j = 0; j < f.theta.size(); ++j) {
    f.theta[j] = j < rotating ? f.theta[j] / s.factor : 0.0;
  }
}

// θ_j given by the caller: finite and > 0, or 0 for a pair that does not rotate.
ROPE_DETAIL_COLD inline void given(const InverseFrequencies& s, const SchemeInput&,
                                   Frequencies& f) {
  require_count("InverseFrequencies::theta", s.theta, f.theta.size());
  for (const double t : s.theta) {
    if (!(t >= 0.0) || !std::isfinite(t)) {
      invalid("rope: InverseFrequencies::theta %g must be a finite number >= 0", t);
    }
  }
  f.theta = s.theta;
}

// ggml's freq_factors: θ_j / factor_j.
ROPE_DETAIL_COLD inline void frequency_factors(const FrequencyFactors& s, const SchemeInput&,
                                               Frequencies& f) {
  require_factors("FrequencyFactors::factors", s.factors, f.theta.size());
  for (std::size_t j = 0; j < f.theta.size(); ++j) f.theta[j] /= s.factors[j];
}

}  // namespace detail

/// θ_j and the attention factor of `scaling` for a rotary dimension d and a base, for a
/// sequence of `sequence_length` tokens (read by DynamicNTK and LongRope only). With
/// Angles::pytorch_float32 the unscaled θ_j follow HuggingFace's float32 recipe and the results
/// are rounded to float (the scheme's own arithmetic stays in double).
///
/// Throws std::invalid_argument for a parameter out of range: a factor, length or base that is
/// not finite and > 0, a factor list whose length is not d/2, beta_fast < beta_slow,
/// high_freq_factor < low_freq_factor, a partial_rotary_factor outside [0, 1], a given θ_j that
/// is negative or not finite, a sequence_length that is negative or not finite, a θ_j
/// so large that m·θ_j overflows below m = 2^53, or an odd or zero d.
ROPE_DETAIL_COLD inline Frequencies frequencies(std::size_t d, double base, const Scaling& scaling,
                                                double sequence_length = 0,
                                                Angles angles = Angles::exact) {
  detail::check_angles(angles);
  const detail::SchemeInput in{d, base, sequence_length, angles};
  Frequencies result{in.theta_for(base), 1.0};
  if (!(sequence_length >= 0.0) || !std::isfinite(sequence_length)) {
    detail::invalid("rope: sequence_length %g must be a finite number >= 0", sequence_length);
  }
  if (const auto* s = std::get_if<Linear>(&scaling)) {
    detail::linear(*s, in, result);
  } else if (const auto* ntk = std::get_if<NTKAware>(&scaling)) {
    detail::ntk_aware(*ntk, in, result);
  } else if (const auto* dynamic = std::get_if<DynamicNTK>(&scaling)) {
    detail::dynamic_ntk(*dynamic, in, result);
  } else if (const auto* y = std::get_if<Yarn>(&scaling)) {
    detail::yarn(*y, in, result);
  } else if (const auto* l3 = std::get_if<Llama3>(&scaling)) {
    detail::llama3(*l3, in, result);
  } else if (const auto* lr = std::get_if<LongRope>(&scaling)) {
    detail::long_rope(*lr, in, result);
  } else if (const auto* pr = std::get_if<Proportional>(&scaling)) {
    detail::proportional(*pr, in, result);
  } else if (const auto* theta = std::get_if<InverseFrequencies>(&scaling)) {
    detail::given(*theta, in, result);
  } else if (const auto* ff = std::get_if<FrequencyFactors>(&scaling)) {
    detail::frequency_factors(*ff, in, result);
  }                                         // else Unscaled
  if (angles == Angles::pytorch_float32) {  // a scheme's θ_j as float32 tensors hold them
    for (double& t : result.theta) t = static_cast<double>(static_cast<float>(t));
    result.attention_factor = static_cast<double>(static_cast<float>(result.attention_factor));
  }
  // Every angle m·θ_j, m < 2^53, must be a finite double (only a caller's θ can be this large).
  for (std::size_t j = 0; j < result.theta.size(); ++j) {
    if (!std::isfinite(result.theta[j] * 9007199254740991.0)) {
      detail::invalid(
          "rope: theta_%zu %s is too large: the angle at position 2^53 - 1 would "
          "overflow",
          j, detail::number(result.theta[j]).c_str());
    }
  }
  return result;
}

}  // namespace ROPE_DETAIL_ISA
}  // namespace rope

#endif  // !ROPE_BELOW_CXX17
