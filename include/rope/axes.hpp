// Multi-axis RoPE: which coordinate of a token's position each rotary pair rotates by.
#pragma once

#include <rope/config.hpp>
#if !defined(ROPE_BELOW_CXX17)  // config.hpp stops older standards with one #error

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include <rope/frequencies.hpp>
#include <rope/layout.hpp>

namespace rope {
inline namespace ROPE_DETAIL_ISA {

/// How the rotary pairs of a head share out a token's position coordinates (its axes).
///
/// Ordinary RoPE has one axis: pair i rotates by m·θ_i. Multi-axis RoPE gives each token several
/// coordinates p_0, p_1, ... (temporal, height and width in M-RoPE; row and column of an image
/// patch in a vision transformer) and pair i rotates by p_{axis(i)}·θ_i. Pairs are counted in θ
/// order: pair i is coordinates (2i, 2i+1) in Layout::interleaved and (i, i + rotary_dim/2) in
/// Layout::half_split. A token whose coordinates are all equal to m (a text token) is rotated
/// exactly as ordinary RoPE rotates position m. docs/multimodal.md pictures each map.
///
///     options.axes = rope::Axes::sections({16, 24, 24});  // Qwen2-VL, 128-wide heads
class Axes {
 public:
  /// At most this many axes (M-RoPE uses 3, ggml's sectioned M-RoPE has room for 4).
  static constexpr std::size_t kMaxAxes = 4;

  /// One axis: ordinary RoPE.
  Axes() = default;

  /// Sectioned M-RoPE (Qwen2-VL, Qwen2.5-VL; GLM-4.1V with Layout::interleaved): the first
  /// section[0] pairs take axis 0, the next section[1] axis 1, and so on. θ_i runs over the whole
  /// rotary dimension, not restarted per section. HuggingFace's rope_scaling["mrope_section"];
  /// the sections must add up to rotary_dim/2.
  static Axes sections(std::vector<std::size_t> section) {
    Axes axes(Kind::sections, section.size());
    axes.section_ = std::move(section);
    return axes;
  }

  /// Interleaved M-RoPE (Qwen3-VL, HuggingFace's "mrope_interleaved"; the pairs themselves may
  /// be in either Layout): pair i takes axis 1 (height) if i mod 3 = 1 and i < 3·section[1],
  /// axis 2 (width) if i mod 3 = 2 and i < 3·section[2], and axis 0 (temporal) otherwise. θ_i as in
  /// sections(). The three sections must add up to rotary_dim/2 and be the number of pairs each
  /// axis ends up with (Qwen3-VL: {24, 20, 20}).
  static Axes mrope_interleaved(std::vector<std::size_t> section) {
    Axes axes(Kind::interleaved, section.size());
    axes.section_ = std::move(section);
    return axes;
  }

  /// Axial RoPE of vision transformers (Qwen2-VL's ViT, torchtune's vision RoPE): the pairs split
  /// into `count` equal blocks, block a takes axis a (for 2 axes: row, then column), and θ
  /// restarts in each block as for a head of rotary_dim/count coordinates:
  /// θ_j = base^(−2j/(rotary_dim/count)). A scaling scheme applies to each block alone.
  static Axes axial(std::size_t count = 2) { return Axes(Kind::axial, count); }

  /// Blocks of unequal width, one per axis, each an ordinary RoPE of its own (the image and video
  /// diffusion transformers: Flux.1 and HunyuanVideo {16, 56, 56}, Flux.2 {32, 32, 32, 32}, Wan
  /// {d − 4⌊d/6⌋, 2⌊d/6⌋, 2⌊d/6⌋}): block a is the next widths[a] rotated coordinates, takes
  /// axis a, and θ restarts in it as for a head of widths[a] coordinates,
  /// θ_j = base_a^(−2j/widths[a]), base_a = bases[a] (Options::base for every block when bases
  /// is empty). The widths (even, > 0) must add up to rotary_dim; a scaling scheme applies to each
  /// block alone (its attention factor does not depend on the width). docs/multimodal.md has each
  /// model's call.
  static Axes blocks(std::vector<std::size_t> widths, std::vector<double> bases = {}) {
    Axes axes(Kind::blocks, widths.size());
    axes.section_ = std::move(widths);
    axes.bases_ = std::move(bases);
    return axes;
  }

  /// Any map: pair i takes axis axis_of_pair[i] < count and θ_{theta_index[i]} of the whole
  /// rotary dimension (an empty theta_index means θ_i). Pixtral's vision RoPE: axis 0 (row) for
  /// the first half of the pairs with θ_0, θ_2, θ_4, ..., axis 1 (column) for the second half with
  /// θ_1, θ_3, θ_5, ...
  static Axes custom(std::size_t count, std::vector<std::uint8_t> axis_of_pair,
                     std::vector<std::size_t> theta_index = {}) {
    Axes axes(Kind::custom, count);
    axes.axis_of_pair_ = std::move(axis_of_pair);
    axes.theta_index_ = std::move(theta_index);
    return axes;
  }

  /// The same map, whose multi-axis coordinates may be negative, down to −(2^53 − 1): Qwen-Image
  /// centres an image's rows and columns on 0. The row of a coordinate −m is the row of m with
  /// its sines negated (cos and sin of −m·θ), to the bit. A Rotary only: a CachedRotary's rows are
  /// indexed by position and refuse such a map (E95).
  Axes with_signed_coordinates() const {
    Axes axes = *this;
    axes.signed_ = true;
    return axes;
  }

  /// The same blocks (axial() or blocks()), whose half_split pairs stay inside their block:
  /// block a, w_a coordinates from o_a, pairs (o_a + i, o_a + i + w_a/2), as if each block were a
  /// head of its own (Gemma 4's vision encoder: rotate_half inside each of two blocks). Without
  /// it, half_split pairs (i, i + rotary_dim/2) across the whole rotary dimension. Interleaved
  /// pairs are inside their block either way. The blocks' θ and axes are unchanged; any other
  /// map throws std::invalid_argument when a Rotary is made (E101).
  Axes with_pairs_within_blocks() const {
    Axes axes = *this;
    axes.within_ = true;
    axes.by_width_ = false;
    axes.block_width_ = 0;
    return axes;
  }

  /// The same map, whose half_split pairs stay inside blocks of `width` coordinates each,
  /// whatever axis each pair takes: a wide head that is really several heads, each rotated with
  /// rotate_half against its own part of the frequencies (LTX-2's "split" RoPE: the whole hidden
  /// state as one head, a block per attention head). width must be even and divide rotary_dim
  /// (E101).
  Axes with_pairs_within_blocks(std::size_t width) const {
    Axes axes = *this;
    axes.within_ = true;
    axes.by_width_ = true;
    axes.block_width_ = width;
    return axes;
  }

  /// Whether half_split pairs stay inside blocks (with_pairs_within_blocks()).
  bool pairs_within_blocks() const noexcept { return within_; }

  /// The pairs of each block inside which half_split pairs stay, for `pairs` pairs: blocks of the
  /// width given, or one block per run of pairs of one axis; empty without
  /// with_pairs_within_blocks(). Throws std::invalid_argument as axis_of_pairs does, and for a
  /// width that is odd, 0, or does not divide 2·pairs (E101).
  ROPE_DETAIL_COLD std::vector<std::size_t> pairs_of_blocks(std::size_t pairs) const {
    const std::vector<std::uint8_t> axis = axis_of_pairs(pairs);
    std::vector<std::size_t> out;
    if (!within_) return out;
    if (by_width_) {
      if (block_width_ == 0 || block_width_ % 2 != 0 || (2 * pairs) % block_width_ != 0) {
        detail::invalid(
            "rope: pairs within blocks of %zu coordinates: the width must be even, > 0 and "
            "divide the rotary dimension %zu",
            block_width_, 2 * pairs);
      }
      return std::vector<std::size_t>(2 * pairs / block_width_, block_width_ / 2);
    }
    for (std::size_t i = 0; i < pairs; ++i) {
      if (i == 0 || axis[i] != axis[i - 1]) out.push_back(0);
      ++out.back();
    }
    return out;
  }

  /// Whether the coordinates may be negative (with_signed_coordinates()).
  bool signed_coordinates() const noexcept { return signed_; }

  /// The number of coordinates per token.
  std::size_t count() const noexcept { return count_; }

  /// The axis of each of `pairs` pairs. Throws std::invalid_argument if the axes do not fit
  /// `pairs` (docs/errors.md, E42–E46).
  ROPE_DETAIL_COLD std::vector<std::uint8_t> axis_of_pairs(std::size_t pairs) const {
    check_count();
    if (within_ && !by_width_ && kind_ != Kind::axial && kind_ != Kind::blocks) {
      detail::invalid(
          "rope: pairs within blocks need a map of blocks (Axes::axial or Axes::blocks) or a "
          "block width; this map (%s) has none",
          kind_name());
    }
    std::vector<std::uint8_t> axis(pairs, 0);
    switch (kind_) {
      case Kind::single:
        break;
      case Kind::sections:
      case Kind::interleaved: {
        std::size_t sum = 0;
        for (std::size_t a = 0; a < count_; ++a) {
          if (section_[a] > pairs) {  // (and the sum below cannot wrap around)
            detail::invalid("rope: section %zu has %zu pairs but the rotary dimension has %zu", a,
                            section_[a], pairs);
          }
          sum += section_[a];
        }
        if (sum != pairs) {
          detail::invalid("rope: the sections add up to %zu pairs but the rotary dimension has %zu",
                          sum, pairs);
        }
        if (kind_ == Kind::sections) {
          std::size_t i = 0;
          for (std::size_t a = 0; a < count_; ++a) {
            for (std::size_t k = 0; k < section_[a]; ++k) axis[i++] = std::uint8_t(a);
          }
          break;
        }
        if (count_ != 3)
          detail::invalid("rope: interleaved M-RoPE needs 3 sections, got %zu", count_);
        std::size_t taken[3] = {0, 0, 0};
        for (std::size_t i = 0; i < pairs; ++i) {
          if (i % 3 == 1 && i < 3 * section_[1]) {
            axis[i] = 1;
          } else if (i % 3 == 2 && i < 3 * section_[2]) {
            axis[i] = 2;
          }
          ++taken[axis[i]];
        }
        for (std::size_t a = 0; a < 3; ++a) {
          if (taken[a] != section_[a]) {
            detail::invalid(
                "rope: interleaved section %zu is %zu pairs but the rule i mod 3 gives "
                "axis %zu %zu pairs",
                a, section_[a], a, taken[a]);
          }
        }
        break;
      }
      case Kind::axial:
        if (pairs % count_ != 0) {
          detail::invalid(
              "rope: axial RoPE splits %zu pairs into %zu equal blocks: %zu is not a "
              "multiple of %zu",
              pairs, count_, pairs, count_);
        }
        for (std::size_t i = 0; i < pairs; ++i) axis[i] = std::uint8_t(i / (pairs / count_));
        break;
      case Kind::blocks: {
        std::size_t sum = 0;
        for (std::size_t a = 0; a < count_; ++a) {
          const std::size_t width = section_[a];
          if (width == 0 || width % 2 != 0 || width > 2 * pairs) {
            detail::invalid(
                "rope: block %zu is %zu coordinates wide; a block needs an even width from 2 to "
                "the rotary dimension %zu",
                a, width, 2 * pairs);
          }
          for (std::size_t k = 0; k < width / 2 && sum + k < pairs; ++k) {
            axis[sum + k] = std::uint8_t(a);
          }
          sum += width / 2;
        }
        if (sum != pairs) {
          detail::invalid(
              "rope: the blocks add up to %zu coordinates but the rotary dimension has %zu",
              2 * sum, 2 * pairs);
        }
        if (!bases_.empty() && bases_.size() != count_) {
          detail::invalid("rope: %zu bases for %zu blocks: give one base per block, or none",
                          bases_.size(), count_);
        }
        break;
      }
      case Kind::custom:
        if (axis_of_pair_.size() != pairs) {
          detail::invalid(
              "rope: the custom axis map has %zu pairs but the rotary dimension has %zu",
              axis_of_pair_.size(), pairs);
        }
        for (std::size_t i = 0; i < pairs; ++i) {
          if (axis_of_pair_[i] >= count_) {
            detail::invalid("rope: pair %zu takes axis %u but there are %zu axes", i,
                            static_cast<unsigned>(axis_of_pair_[i]), count_);
          }
        }
        axis = axis_of_pair_;
        break;
    }
    return axis;
  }

  /// θ of each pair, and the attention factor, for a rotary dimension, base and scaling (the
  /// arguments of rope::frequencies). Throws as rope::frequencies and axis_of_pairs do.
  ROPE_DETAIL_COLD Frequencies frequencies(std::size_t rotary_dim, double base,
                                           const Scaling& scaling, double sequence_length,
                                           Angles angles) const {
    const std::size_t pairs = rotary_dim / 2;
    axis_of_pairs(pairs);  // the map's checks
    if (kind_ == Kind::blocks) {
      Frequencies all{{}, 1.0};
      for (std::size_t a = 0; a < count_; ++a) {
        const Frequencies block = rope::frequencies(section_[a], bases_.empty() ? base : bases_[a],
                                                    scaling, sequence_length, angles);
        if (a == 0) all.attention_factor = block.attention_factor;  // every block's
        all.theta.insert(all.theta.end(), block.theta.begin(), block.theta.end());
      }
      return all;
    }
    if (kind_ != Kind::axial) {
      Frequencies all = rope::frequencies(rotary_dim, base, scaling, sequence_length, angles);
      if (kind_ != Kind::custom || theta_index_.empty()) return all;
      if (theta_index_.size() != pairs) {
        detail::invalid(
            "rope: the custom theta_index has %zu pairs but the rotary dimension has %zu",
            theta_index_.size(), pairs);
      }
      Frequencies picked{std::vector<double>(pairs), all.attention_factor};
      for (std::size_t i = 0; i < pairs; ++i) {
        if (theta_index_[i] >= pairs) {
          detail::invalid("rope: pair %zu takes theta_%zu but there are %zu frequencies", i,
                          theta_index_[i], pairs);
        }
        picked.theta[i] = all.theta[theta_index_[i]];
      }
      return picked;
    }
    // Each block is the head of a rotary_dim/count-wide ordinary RoPE.
    Frequencies block =
        rope::frequencies(rotary_dim / count_, base, scaling, sequence_length, angles);
    const std::size_t n = block.theta.size();
    Frequencies all{std::vector<double>(count_ * n), block.attention_factor};
    for (std::size_t i = 0; i < all.theta.size(); ++i) all.theta[i] = block.theta[i % n];
    return all;
  }

 private:
  enum class Kind { single, sections, interleaved, axial, blocks, custom };

  Axes(Kind kind, std::size_t count) : kind_(kind), count_(count) {}

  const char* kind_name() const noexcept {
    switch (kind_) {
      case Kind::single:
        return "one axis";
      case Kind::sections:
        return "Axes::sections";
      case Kind::interleaved:
        return "Axes::mrope_interleaved";
      case Kind::custom:
        return "Axes::custom";
      default:
        return "blocks";
    }
  }

  void check_count() const {
    if (count_ == 0 || count_ > kMaxAxes) {
      detail::invalid("rope: multi-axis RoPE has %zu axes; it needs 1 to %zu", count_, kMaxAxes);
    }
  }

  Kind kind_ = Kind::single;
  std::size_t count_ = 1;
  std::vector<std::size_t> section_{};  // or the blocks' widths
  std::vector<double> bases_{};         // of the blocks
  bool signed_ = false;
  bool within_ = false;    // half_split pairs inside each block
  bool by_width_ = false;  // blocks of block_width_, else one per axis
  std::size_t block_width_ = 0;
  std::vector<std::uint8_t> axis_of_pair_{};
  std::vector<std::size_t> theta_index_{};
};

}  // namespace ROPE_DETAIL_ISA
}  // namespace rope

#endif  // !ROPE_BELOW_CXX17
