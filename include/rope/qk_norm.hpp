// Normalisation of query and key heads, fused with RoPE into the same pass: the QK-norm of most
// 2025-2026 models, each in the form, order of roundings and place of ε of its HuggingFace class.
//
//   kind            where                          y                   model (class)
//   rms             before RoPE, each head         T(w · T(x · r))     Qwen3 (Qwen3RMSNorm)
//   rms_one_plus    before RoPE, each head         T(x · r · (1 + w))  Gemma 3 (Gemma3RMSNorm)
//   rms_projection  before RoPE, a token's heads   T(w · (x · r))      OLMo 2 (Olmo2RMSNorm)
//   l2_after        after RoPE, each head          T(y · r)            Llama 4 (Llama4TextL2Norm)
//
// with r = 1 / √(mean(x²) + ε) over the coordinates normalised (a head, or the token's heads), y
// the rotated head rounded to T, and everything between roundings to T computed in
// C = compute_t<T> (float for 16-bit T).
#pragma once

#include <rope/config.hpp>
#if !defined(ROPE_BELOW_CXX17)  // config.hpp stops older standards with one #error

#include <cstddef>

namespace rope {
inline namespace ROPE_DETAIL_ISA {

/// Which normalisation, and where it goes relative to RoPE (the table above).
enum class NormKind { none, rms, rms_one_plus, rms_projection, l2_after };

/// One role's normalisation (Queries::norm or Keys::norm, rope/roles.hpp). weight: head_size values
/// (rms, rms_one_plus), heads · head_size (rms_projection, head h's at h · head_size), none
/// (l2_after); epsilon: finite and > 0 (the config's rms_norm_eps). No ownership.
template <class T>
struct Norm {
  NormKind kind = NormKind::none;
  const T* weight = nullptr;
  std::size_t weight_size = 0;
  double epsilon = 1e-6;
};

}  // namespace ROPE_DETAIL_ISA
}  // namespace rope

#endif  // !ROPE_BELOW_CXX17
