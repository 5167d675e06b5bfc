// Position coordinates for vision-language models, vision transformers and image and video
// diffusion transformers (multi-axis RoPE).
#pragma once

#include <rope/config.hpp>
#if !defined(ROPE_BELOW_CXX17)  // config.hpp stops older standards with one #error

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include <rope/axes.hpp>
#include <rope/frequencies.hpp>
#include <rope/layout.hpp>
#include <rope/options.hpp>
#include <rope/positions.hpp>

namespace rope {
inline namespace ROPE_DETAIL_ISA {

/// The (temporal, height, width) coordinates of a prompt of text, images and videos for M-RoPE,
/// built as Qwen2-VL's get_rope_index builds them. Token t's coordinates are data()[3t .. 3t+2].
///
/// Each block starts at n, the next position: one more than the largest coordinate so far (0 at
/// first). Text token k of a block is at (n+k, n+k, n+k). An image is one frame of
/// rows × columns tokens, row by row: token (r, c) is at (n, n+r, n+c). A video is `frames` such
/// frames; frame f has temporal coordinate n + ⌊f·interval⌋ (Qwen2-VL: interval 1; Qwen2.5-VL:
/// second_per_grid_t · tokens_per_second, computed here in double).
///
/// Rows and columns count the language model's tokens: HuggingFace's image_grid_thw height and
/// width divided by spatial_merge_size.
///
///     rope::MultimodalPositions prompt;
///     prompt.text(5).image(4, 6).text(3);        // 5 + 24 + 3 tokens
///     rot.apply(x, prompt.size(), heads, prompt.positions());
///     // decoding then continues at prompt.next(), prompt.next() + 1, ... (text tokens)
class MultimodalPositions {
 public:
  /// Appends `tokens` text tokens.
  MultimodalPositions& text(std::size_t tokens) {
    check_room(tokens);
    for (std::size_t k = 0; k < tokens; ++k) {
      const std::int64_t m = next_ + std::int64_t(k);
      push(m, m, m);
    }
    next_ += std::int64_t(tokens);
    return *this;
  }

  /// Appends an image of rows × columns tokens. Throws std::invalid_argument if either is 0.
  MultimodalPositions& image(std::size_t rows, std::size_t columns) {
    return video(1, rows, columns, 1.0);
  }

  /// Appends a video of frames × rows × columns tokens, frame after frame. Throws
  /// std::invalid_argument if a size is 0 or interval is not a finite number > 0.
  MultimodalPositions& video(std::size_t frames, std::size_t rows, std::size_t columns,
                             double interval = 1.0) {
    if (frames == 0 || rows == 0 || columns == 0) {
      ROPE_THROW(std::invalid_argument, "rope: a video or image of " + std::to_string(frames) +
                                            " x " + std::to_string(rows) + " x " +
                                            std::to_string(columns) +
                                            " tokens is empty; each size must be at least 1");
    }
    if (!(interval > 0.0) || !std::isfinite(interval)) {
      ROPE_THROW(std::invalid_argument, "rope: the video's interval " + detail::number(interval) +
                                            " must be a finite number > 0");
    }
    const double last_frame = std::floor(double(frames - 1) * interval);
    if (!(last_frame < double(kRoom))) check_room(kRoom + 1);  // throws
    const std::size_t extent = std::max({std::size_t(last_frame), rows - 1, columns - 1});
    check_room(extent + 1);
    for (std::size_t f = 0; f < frames; ++f) {
      const std::int64_t t = next_ + static_cast<std::int64_t>(std::floor(double(f) * interval));
      for (std::size_t r = 0; r < rows; ++r) {
        for (std::size_t c = 0; c < columns; ++c) {
          push(t, next_ + std::int64_t(r), next_ + std::int64_t(c));
        }
      }
    }
    next_ += std::int64_t(extent) + 1;
    return *this;
  }

  /// The number of tokens so far.
  std::size_t size() const noexcept { return data_.size() / 3; }
  /// The position of the next text token; HuggingFace's rope_deltas is next() − size().
  std::int64_t next() const noexcept { return next_; }
  /// [tokens][3] coordinates.
  const std::vector<std::int64_t>& data() const noexcept { return data_; }
  /// The coordinates as the multi-axis entry points of Rotary take them.
  Positions positions() const noexcept { return Positions::token_major(data_.data(), 3); }

 private:
  // Positions must stay at or below kMaxPosition (the limit of every entry point).
  static constexpr std::size_t kRoom = std::size_t{kMaxPosition} + 1;

  void check_room(std::size_t span) const {
    if (span > kRoom - std::size_t(next_)) {
      ROPE_THROW(std::out_of_range, "rope: " + std::to_string(span) +
                                        " more positions after position " + std::to_string(next_) +
                                        " would pass 2^53 - 1");
    }
  }

  void push(std::int64_t t, std::int64_t h, std::int64_t w) {
    data_.push_back(t);
    data_.push_back(h);
    data_.push_back(w);
  }

  std::vector<std::int64_t> data_{};
  std::int64_t next_ = 0;
};

/// A grid of image patches for 2-D axial RoPE (Axes::axial()).
struct PatchGrid {
  std::size_t rows = 0;
  std::size_t columns = 0;
  /// Qwen2-VL's spatial_merge_size: the ViT orders patches in merge × merge windows, window by
  /// window (row-major), row-major inside a window. 1: plain row-major order.
  std::size_t merge = 1;
  /// The coordinate of the first row and column: 0 for Qwen2-VL; 1 for torchtune's vision RoPE,
  /// which keeps (0, 0), the zero rotation, for the class token.
  std::int64_t first = 0;
  /// (column, row) instead of (row, column): torchtune puts the column (x) axis first.
  bool column_first = false;
};

/// Where the class token of a vision transformer goes: none, before the patches or after them.
/// It is at (0, 0): not rotated.
enum class ClassToken { none, first, last };

/// The 2 coordinates of every patch of the grid (and of the class token), [tokens][2], in the
/// patch order of the grid. Throws std::invalid_argument if rows or columns is 0 or not a
/// multiple of merge, or merge is 0; std::out_of_range if first is negative or a coordinate would
/// pass 2^53 − 1.
inline std::vector<std::int64_t> patch_positions(const PatchGrid& grid,
                                                 ClassToken class_token = ClassToken::none) {
  detail::check_enum("ClassToken", static_cast<int>(class_token), 3, "none, first, last");
  const std::size_t m = grid.merge;
  if (grid.rows == 0 || grid.columns == 0 || m == 0 || grid.rows % m != 0 ||
      grid.columns % m != 0) {
    ROPE_THROW(std::invalid_argument,
               "rope: a patch grid of " + std::to_string(grid.rows) + " x " +
                   std::to_string(grid.columns) + " with merge " + std::to_string(m) +
                   ": rows and columns must be positive multiples of merge (and merge >= 1)");
  }
  const std::size_t extent = std::max(grid.rows, grid.columns);
  if (grid.first < 0 || std::size_t(grid.first) > std::size_t{kMaxPosition} + 1 - extent) {
    ROPE_THROW(std::out_of_range, "rope: patch coordinates from first " +
                                      std::to_string(grid.first) + " to first + " +
                                      std::to_string(extent - 1) + " must lie in [0, 2^53 - 1]");
  }
  std::vector<std::int64_t> out;
  out.reserve(2 * (grid.rows * grid.columns + 1));
  const auto push = [&](std::int64_t row, std::int64_t column) {
    out.push_back(grid.column_first ? column : row);
    out.push_back(grid.column_first ? row : column);
  };
  if (class_token == ClassToken::first) push(0, 0);
  for (std::size_t wr = 0; wr < grid.rows; wr += m) {
    for (std::size_t wc = 0; wc < grid.columns; wc += m) {
      for (std::size_t r = wr; r < wr + m; ++r) {
        for (std::size_t c = wc; c < wc + m; ++c) {
          push(grid.first + std::int64_t(r), grid.first + std::int64_t(c));
        }
      }
    }
  }
  if (class_token == ClassToken::last) push(0, 0);
  return out;
}

/// The latent patches of an image or video diffusion transformer (Axes::blocks), frames × rows ×
/// columns of them, as the model numbers them.
struct LatentGrid {
  std::size_t frames = 1;
  std::size_t rows = 0;
  std::size_t columns = 0;
  /// The first frame's coordinate: 0 for the image or video generated; the image's index for
  /// Qwen-Image-Edit's i-th image; 10, 20, ... for Flux.2's reference images.
  std::int64_t first_frame = 0;
  /// Rows −(rows − ⌊rows/2⌋) .. ⌊rows/2⌋ − 1, and columns likewise: centred on 0, as Qwen-Image
  /// numbers them (scale_rope; a Rotary with Axes::with_signed_coordinates()). Else from 0.
  bool centred = false;
};

/// The coordinates of the grid's tokens, frame by frame, row by row, column by column:
/// [tokens][axes], (frame, row, column), and a fourth coordinate 0 when axes is 4 (Flux.2's
/// (t, h, w, l)). Flux.1 and Flux.2 put text tokens at (0, 0, 0) and (0, 0, 0, l); Qwen-Image at
/// (M + k, M + k, M + k), M the largest ⌊rows/2⌋ or ⌊columns/2⌋ of its images (docs/multimodal.md).
///
/// Throws std::invalid_argument if a size is 0, axes is not 3 or 4, or the coordinates would not
/// fit a vector (E96); std::out_of_range if first_frame is negative, or a frame's coordinate
/// would pass 2^53 − 1, or rows or columns 2^53 (E97).
inline std::vector<std::int64_t> latent_positions(const LatentGrid& grid, std::size_t axes = 3) {
  const std::vector<std::int64_t> none;
  const std::size_t most = none.max_size();
  const bool empty = grid.frames == 0 || grid.rows == 0 || grid.columns == 0;
  if (empty || (axes != 3 && axes != 4) || grid.rows > most / grid.columns ||
      grid.rows * grid.columns > most / grid.frames ||
      grid.rows * grid.columns * grid.frames > most / axes) {
    ROPE_THROW(std::invalid_argument,
               "rope: a latent grid of " + std::to_string(grid.frames) + " x " +
                   std::to_string(grid.rows) + " x " + std::to_string(grid.columns) +
                   " patches with " + std::to_string(axes) +
                   " coordinates each: every size must be at least 1, the coordinates 3 or 4, "
                   "and all of them fit a vector");
  }
  const auto limit = static_cast<std::size_t>(kMaxPosition);
  if (grid.first_frame < 0 || grid.first_frame > kMaxPosition ||
      grid.frames - 1 > limit - static_cast<std::size_t>(grid.first_frame) ||
      grid.rows - 1 > limit || grid.columns - 1 > limit) {
    ROPE_THROW(std::out_of_range,
               "rope: a latent grid's coordinates must lie within 2^53 - 1 of 0: "
               "frames from first_frame " +
                   std::to_string(grid.first_frame) + " to first_frame + " +
                   std::to_string(grid.frames - 1) + ", " + std::to_string(grid.rows) + " rows, " +
                   std::to_string(grid.columns) + " columns");
  }
  // Centred, the first row or column is −(n − ⌊n/2⌋), n ≤ 2^53.
  const auto first = [&](std::size_t n) {
    return grid.centred ? -static_cast<std::int64_t>(n - n / 2) : std::int64_t{0};
  };
  std::vector<std::int64_t> out;
  out.reserve(grid.frames * grid.rows * grid.columns * axes);
  for (std::size_t f = 0; f < grid.frames; ++f) {
    for (std::size_t r = 0; r < grid.rows; ++r) {
      for (std::size_t c = 0; c < grid.columns; ++c) {
        out.push_back(grid.first_frame + static_cast<std::int64_t>(f));
        out.push_back(first(grid.rows) + static_cast<std::int64_t>(r));
        out.push_back(first(grid.columns) + static_cast<std::int64_t>(c));
        if (axes == 4) out.push_back(0);
      }
    }
  }
  return out;
}

/// LTX-Video's fractional coordinates of a latent grid, [tokens][3] (frame, row, column): index
/// i_a of latent_positions(grid) becomes 2·(i_a·step[a]) − 1, a fraction of the model's base grid
/// mapped onto [−1, 1]. diffusers' LTXVideoRotaryPosEmbed has step[a] =
/// rope_interpolation_scale[a] · patch_size_a / base_a, bases (20, 2048, 2048); its pipeline's
/// scales are (temporal compression / frame rate, spatial compression, spatial compression).
/// Pass them as Positions::token_major(data, 3) to a Rotary of ltx_video_options(). Throws as
/// latent_positions does (E96, E97); a step that is not finite gives coordinates a call refuses
/// (E98).
inline std::vector<double> ltx_video_positions(const LatentGrid& grid,
                                               const std::array<double, 3>& step) {
  const std::vector<std::int64_t> index = latent_positions(grid, 3);
  std::vector<double> out(index.size());
  for (std::size_t i = 0; i < index.size(); ++i) {
    out[i] = 2 * (static_cast<double>(index[i]) * step[i % 3]) - 1;
  }
  return out;
}

/// LTX-2's RoPE (diffusers' LTX2AudioVideoRotaryPosEmbed): a token's whole hidden state of
/// dim = heads · head_size coordinates rotated as one head (call the Rotary with heads = 1), by
/// `axes` fractional, signed coordinates: 3 (frame, row, column) for the video's
/// self-attention, 1 (time) for the audio's and for both cross-attentions. n = ⌊dim/(2·axes)⌋
/// frequencies θ_k = (π/2)·theta^(k/(n − 1)) (θ_0 = π/2 when n = 1), each for `axes` consecutive
/// pairs (k, then the axis), after the dim/2 − axes·n pairs that are never rotated. `pairing`:
/// Layout::half_split for rope_type "split" (the pairs in dim/2 order split into the attention
/// heads, head h rotating its own head_size/2 of them with rotate_half inside the head:
/// Axes::with_pairs_within_blocks(head_size)), Layout::interleaved for "interleaved" (adjacent
/// pairs over the whole hidden state, the unrotated ones first). max_positions is 1: fractional
/// rows never read the table.
inline Options ltx2_options(std::size_t heads = 32, std::size_t head_size = 128,
                            std::size_t axes = 3, Layout pairing = Layout::half_split,
                            double theta = 10000.0) {
  const std::size_t dim = heads * head_size, count = axes == 0 ? 1 : axes, n = dim / (2 * count);
  const std::size_t unrotated = dim / 2 - count * n;  // pairs, first
  const bool split = pairing == Layout::half_split;
  std::vector<double> frequencies(split ? unrotated : 0, 0.0);
  std::vector<std::uint8_t> axis(frequencies.size(), 0);
  for (std::size_t k = 0; k < n; ++k) {
    const double exponent = n > 1 ? static_cast<double>(k) / static_cast<double>(n - 1) : 0.0;
    for (std::size_t a = 0; a < count; ++a) {
      frequencies.push_back(std::pow(theta, exponent) * (detail::kPi / 2));
      axis.push_back(static_cast<std::uint8_t>(a));
    }
  }
  Options options;
  options.head_size = dim;
  options.layout = pairing;
  options.max_positions = 1;
  options.rotary_dim = split ? dim : 2 * count * n;
  options.rotary_offset = dim - options.rotary_dim;
  options.scaling = InverseFrequencies{std::move(frequencies)};
  Axes map = Axes::custom(axes, std::move(axis)).with_signed_coordinates();
  options.axes = split ? map.with_pairs_within_blocks(head_size) : map;
  return options;
}

/// LTX-Video's RoPE (diffusers' LTXVideoRotaryPosEmbed with apply_rotary_emb), which rotates a
/// token's whole hidden state of `dim` coordinates (32 heads × 64 = 2048) before it is split into
/// heads: a Rotary<T> of these options (head size dim), called with heads = 1. Adjacent pairs; the
/// first dim mod 6 coordinates left as they are; then n = ⌊dim/6⌋ groups of three pairs (frame,
/// row, column), group k at θ_k = (π/2)·theta^(k/(n − 1)) (θ_0 = π/2 when n = 1); coordinates
/// fractional and signed (ltx_video_positions). max_positions is 1: fractional rows never read the
/// table. The same rotation as LTX-2's interleaved video RoPE: ltx2_options(1, dim, 3,
/// Layout::interleaved, theta).
inline Options ltx_video_options(std::size_t dim = 2048, double theta = 10000.0) {
  return ltx2_options(1, dim, 3, Layout::interleaved, theta);
}

/// LTX-2's video coordinates of a latent grid, [tokens][3] (frame, row, column) in the grid's
/// order, as diffusers' prepare_video_coords and the rotary embedding make them (patch sizes 1):
/// each latent patch's bounds in pixel space, scale = the VAE's factors (8, 32, 32); the frame's
/// shifted by causal_offset − scale[0] and clamped at 0, then divided by fps; the midpoint of the
/// bounds as a fraction of base (20, 2048, 2048) mapped by 2·x − 1. Throws as latent_positions
/// does (E96, E97); an fps that is not finite and > 0 gives coordinates a call refuses (E98).
inline std::vector<double> ltx2_video_positions(const LatentGrid& grid, double fps = 24.0,
                                                double causal_offset = 1.0,
                                                const std::array<double, 3>& scale = {8, 32, 32},
                                                const std::array<double, 3>& base = {20, 2048,
                                                                                     2048}) {
  const std::vector<std::int64_t> index = latent_positions(grid, 3);
  std::vector<double> out(index.size());
  for (std::size_t i = 0; i < index.size(); ++i) {
    const std::size_t a = i % 3;
    double start = static_cast<double>(index[i]) * scale[a];
    double end = start + scale[a];
    if (a == 0) {
      start = std::max(0.0, start + causal_offset - scale[0]) / fps;
      end = std::max(0.0, end + causal_offset - scale[0]) / fps;
    }
    out[i] = 2 * ((start + end) / 2 / base[a]) - 1;
  }
  return out;
}

/// LTX-2's audio coordinates of `frames` latent frames, one per token, as diffusers'
/// prepare_audio_coords and the rotary embedding make them (patch size 1): latent frame i spans
/// mel frames [scale·i, scale·(i + 1)), each shifted by causal_offset − scale and clamped at 0,
/// in seconds (× hop_length / sampling_rate); the midpoint as a fraction of base (20) mapped by
/// 2·x − 1. Pass them as Positions::token_major(data, 1) to a Rotary of ltx2_options(heads,
/// head_size, 1). Throws std::invalid_argument if frames does not fit a vector.
inline std::vector<double> ltx2_audio_positions(std::size_t frames, double sampling_rate = 16000,
                                                double hop_length = 160, double scale = 4,
                                                double causal_offset = 1.0, double base = 20) {
  const std::vector<std::int64_t> index = latent_positions({frames, 1, 1}, 3);
  std::vector<double> out(frames);
  for (std::size_t i = 0; i < frames; ++i) {
    const double start = static_cast<double>(index[3 * i]) * scale;
    const double s0 = std::max(0.0, start + causal_offset - scale) * hop_length / sampling_rate;
    const double s1 =
        std::max(0.0, start + scale + causal_offset - scale) * hop_length / sampling_rate;
    out[i] = 2 * ((s0 + s1) / 2 / base) - 1;
  }
  return out;
}

/// Gemma 4's vision encoder (HuggingFace's Gemma4VisionRotaryEmbedding and
/// apply_multidimensional_rope): heads of head_size = vision_config.head_dim coordinates split
/// into two blocks of head_size/2, block 0 rotated by the patch's x (its column) and block 1 by
/// its y (its row), each with rotate_half inside the block (Layout::half_split,
/// Axes::axial().with_pairs_within_blocks()) and θ_j = theta^(−2j/(head_size/2)), theta =
/// rope_parameters["rope_theta"] (100). The coordinates are (x, y) per patch, as
/// Positions::token_major(data, 2): the processor's pixel_position_ids as they are (signed, so
/// that its padding patches at (−1, −1), which attention masks out, pass as the model rotates
/// them), or patch_positions with column_first. A Rotary of these options throws
/// std::invalid_argument unless head_size is a multiple of 4 (E45: two equal blocks of whole
/// pairs, as the model's own split needs).
inline Options gemma4_vision_options(std::size_t head_size, double theta = 100.0) {
  Options options;
  options.head_size = head_size;
  options.base = theta;
  options.layout = Layout::half_split;
  options.axes = Axes::axial(2).with_pairs_within_blocks().with_signed_coordinates();
  return options;
}

}  // namespace ROPE_DETAIL_ISA
}  // namespace rope

#endif  // !ROPE_BELOW_CXX17
