// rope::Options: the configuration of a Rotary.
#pragma once

#include <rope/config.hpp>
#if !defined(ROPE_BELOW_CXX17)  // config.hpp stops older standards with one #error

#include <cstddef>

#include <rope/axes.hpp>
#include <rope/frequencies.hpp>
#include <rope/layout.hpp>

namespace rope {
inline namespace ROPE_DETAIL_ISA {

/// Configuration of a Rotary.
struct Options {
  /// Coordinates per head, d (even). 0 means the compile-time Dim of Rotary<T, Dim>.
  std::size_t head_size = 0;
  /// θ_j = base^(-2j/d). HuggingFace's `rope_theta`: 10000 for LLaMA 1/2, 500000 for Llama 3.
  double base = 10000.0;
  /// Which coordinates pair up. Must match the checkpoint (see Layout).
  Layout layout = Layout::half_split;
  /// Positions 0 .. max_positions-1 get a precomputed table row (rotary_dim values of
  /// Rotary::Compute each: float, or double for Rotary<double>).
  /// A larger position gets its row formed from the angle sums, bit for bit the table's row
  /// (float), and kept by the calling thread for the next calls at that position: a tuning
  /// knob, not the context length (docs/api.md, Rotary's constructor).
  std::size_t max_positions = 4096;
  /// How θ_j is stretched for long contexts (Linear, Yarn, Llama3, ...; see frequencies.hpp).
  Scaling scaling = Unscaled{};
  /// The sequence length the length-dependent schemes (DynamicNTK, LongRope) are evaluated for.
  double sequence_length = 0;
  /// Coordinates that rotate (even); 0 means all of the head. Partial rotary: GPT-NeoX's
  /// rotary_pct, Phi-2's partial_rotary_factor (rotary_dim = factor · head_size). θ_j uses
  /// rotary_dim as d; the other coordinates pass through (copied when out of place).
  std::size_t rotary_dim = 0;
  /// First rotated coordinate (vLLM's rope_dim_offset, ggml's n_offs); 0 for every checkpoint
  /// that rotates the leading coordinates.
  std::size_t rotary_offset = 0;
  /// Exact angles (default), or PyTorch's float32 recipe for parity with a reference run.
  Angles angles = Angles::exact;
  /// The most bytes the table may take, max_positions · rotary_dim · sizeof(Compute): the
  /// constructor throws instead of allocating more. 1 GiB admits 2^21 positions of a 128-wide
  /// float head. Positions past the table are computed on the fly, so a smaller table costs
  /// speed, never accuracy.
  std::size_t table_memory_limit = std::size_t{1} << 30;
  /// Multi-axis RoPE: which coordinate of a token's position each pair rotates by (M-RoPE,
  /// axial vision RoPE; see Axes and docs/multimodal.md). One axis by default.
  Axes axes = {};
};

}  // namespace ROPE_DETAIL_ISA
}  // namespace rope

#endif  // !ROPE_BELOW_CXX17
