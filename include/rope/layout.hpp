// Which coordinates of a head form the rotated pairs.
#pragma once

#include <rope/config.hpp>
#if !defined(ROPE_BELOW_CXX17)  // config.hpp stops older standards with one #error

namespace rope {
inline namespace ROPE_DETAIL_ISA {

/// How the head_size coordinates of a head are grouped into the head_size/2 rotated pairs.
///
/// Pair j is rotated by the angle m·θ_j at position m. The two conventions found in released
/// checkpoints differ only in which coordinates pair j owns (head_size d = 8 shown):
///
///     interleaved  [x0 x1 | x2 x3 | x4 x5 | x6 x7]   pair j = (2j, 2j+1)
///     half_split   [x0 x1  x2 x3 | x4 x5  x6 x7]     pair j = (j, j + d/2)
///                   └────────────┘ pair 0 = (x0, x4)
///
/// - `interleaved`: the RoFormer paper, Meta's LLaMA reference code (pairs as complex numbers),
///   GPT-J, ggml's "normal" mode, ONNX RotaryEmbedding with interleaved=1.
/// - `half_split`: HuggingFace transformers (`rotate_half`), GPT-NeoX, ggml's "neox" mode, ONNX
///   RotaryEmbedding's default.
///
/// A model must be run with the pairing its weights were trained or converted for: HuggingFace
/// checkpoints of LLaMA models permute the rows of W_q and W_k so that `half_split` applies.
enum class Layout { interleaved, half_split };

/// The enumerator's name, e.g. "half_split".
constexpr const char* to_string(Layout layout) noexcept {
  return layout == Layout::interleaved ? "interleaved" : "half_split";
}

/// Whether a call applies the rotation R_m or its inverse R_mᵀ = R_{-m}.
///
/// The inverse undoes a rotation (un-rotating cached keys) and is the gradient of the forward
/// rotation with respect to its input (backward passes).
enum class Direction { forward, inverse };

/// How the table's angles m·θ_j are computed.
///
/// - `exact` (the default): θ_j the double nearest base^(−2j/d), m·θ_j in double, cos and sin in
///   double, rounded once to T: within 1 ulp of T at every position (docs/numerics.md).
/// - `pytorch_float32`: HuggingFace's float32 recipe, for parity with a PyTorch reference:
///   θ_j = 1/base^(2j/d), the position and the product m·θ_j, and the attention factor's product
///   all in float32. At position 10^6 its angles are off by up to 0.05 rad (docs/numerics.md).
enum class Angles { exact, pytorch_float32 };

namespace detail {

// An enum argument cast from an integer outside its enumerators is an error (E80), not whatever
// branch the code would take for it.
ROPE_DETAIL_COLD inline void check_enum(const char* what, int value, int count, const char* names) {
  if (value < 0 || value >= count) {
    invalid("rope: %s %d is not one of its enumerators (%s)", what, value, names);
  }
}
inline void check_layout(Layout layout) {
  check_enum("Layout", static_cast<int>(layout), 2, "interleaved, half_split");
}
inline void check_direction(Direction direction) {
  check_enum("Direction", static_cast<int>(direction), 2, "forward, inverse");
}
inline void check_angles(Angles angles) {
  check_enum("Angles", static_cast<int>(angles), 2, "exact, pytorch_float32");
}

}  // namespace detail

}  // namespace ROPE_DETAIL_ISA
}  // namespace rope

#endif  // !ROPE_BELOW_CXX17
