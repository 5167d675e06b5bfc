// rope::Rotary<T, Dim>: rotary position embedding of query and key heads.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include <Eigen/Core>

#include <rope/axes.hpp>
#include <rope/config.hpp>
#include <rope/detail/checks.hpp>
#include <rope/detail/kernels.hpp>
#include <rope/detail/threads.hpp>
#include <rope/execution.hpp>
#include <rope/frequencies.hpp>
#include <rope/layout.hpp>
#include <rope/positions.hpp>
#include <rope/scalar.hpp>
#include <rope/table.hpp>
#include <rope/view.hpp>

namespace rope {

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
  /// A larger position gets its row computed on the fly, as accurate and about 20-60 ns per
  /// pair slower per token.
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

/// Rotary position embedding for heads of Dim coordinates of type T.
///
/// T is the stored element type: float, double, Eigen::half or Eigen::bfloat16 (the 16-bit
/// types are rotated in float: widened exactly, rounded to nearest even when stored). Dim is the
/// head size fixed at compile time, or Eigen::Dynamic to take it from Options::head_size. A
/// Rotary is immutable after construction: one object may be shared by any number of threads.
///
/// Every batch entry point rotates head (t, h) of token t to position positions[t], and checks
/// its arguments before writing anything (std::invalid_argument for null pointers, mismatched
/// shapes, overlapping strides, or src and dst that share memory without being the same heads;
/// std::out_of_range for a position outside [0, 2^53 − 1]; docs/errors.md has every case).
/// Positions past max_positions get their table row computed on the fly. An Execution splits a
/// call over threads or asks for streaming stores; a TokenRange rotates part of a batch;
/// rope::unchecked skips the checks. With Options::axes (M-RoPE, 2-D vision RoPE) each entry
/// point also takes an AxisPositions: several coordinates per token (docs/multimodal.md).
///
///     rope::Options options;
///     options.base = 500000.0;
///     const rope::Rotary<float, 128> rot(options);
///     rot.apply(q, tokens, 32, positions);   // q: [tokens][32][128], in place
template <class T, int Dim = Eigen::Dynamic>
class Rotary {
  static_assert(is_storage_type_v<T>,
                "rope::Rotary<T, Dim>: T must be float, double, Eigen::half or Eigen::bfloat16");
  static_assert(Dim == Eigen::Dynamic || (Dim > 0 && Dim % 2 == 0),
                "rope::Rotary<T, Dim>: Dim must be a positive even head size or Eigen::Dynamic");

 public:
  using Scalar = T;
  /// The type of the arithmetic and of the table: double for double, float otherwise.
  using Compute = compute_t<T>;

  /// Computes θ_j and the cos/sin table (O(max_positions · rotary_dim) time and memory).
  ///
  /// Throws std::invalid_argument if the head size is odd or zero, disagrees with a fixed Dim,
  /// rotary_dim is odd or rotary_offset + rotary_dim exceeds the head, base is not finite and
  /// > 0, max_positions is 0 or its table would exceed table_memory_limit, sequence_length is
  /// negative or not finite, or a scaling parameter is out of range (see rope::frequencies).
  explicit Rotary(const Options& options = {})
      : head_size_(checked_head_size(options.head_size)),
        rotary_dim_(
            detail::checked_rotary_dim(head_size_, options.rotary_dim, options.rotary_offset)),
        rotary_offset_(options.rotary_offset),
        base_(options.base),
        frequencies_(options.axes.frequencies(rotary_dim_, options.base, options.scaling,
                                              options.sequence_length, options.angles)),
        axis_of_pair_(options.axes.axis_of_pairs(rotary_dim_ / 2)),
        runs_(runs_of(axis_of_pair_)),
        axis_of_entry_(entries_of(axis_of_pair_, options.layout)),
        axes_(options.axes.count()),
        table_(options.layout, frequencies_.theta, checked_positions(options, rotary_dim_),
               frequencies_.attention_factor, options.angles),
        angles_(options.angles) {}

  std::size_t head_size() const noexcept { return head_size_; }
  /// Coordinates rotated per head, starting at rotary_offset().
  std::size_t rotary_dim() const noexcept { return rotary_dim_; }
  std::size_t rotary_offset() const noexcept { return rotary_offset_; }
  double base() const noexcept { return base_; }
  Layout layout() const noexcept { return table_.layout(); }
  std::size_t max_positions() const noexcept { return table_.positions(); }
  /// θ_j, j < rotary_dim/2, in double, after scaling.
  const std::vector<double>& inverse_frequencies() const noexcept { return frequencies_.theta; }
  /// The factor on every cos and sin entry (1 but for Yarn and LongRope).
  double attention_factor() const noexcept { return frequencies_.attention_factor; }
  const Table<Compute>& table() const noexcept { return table_; }
  /// The number of coordinates per token: 1 but for multi-axis RoPE (Options::axes).
  std::size_t axes() const noexcept { return axes_; }
  /// The axis each pair takes, pair i in θ order (all 0 for ordinary RoPE).
  const std::vector<std::uint8_t>& axis_of_pairs() const noexcept { return axis_of_pair_; }

  /// Rotates a contiguous [tokens][heads][head_size] buffer in place.
  void apply(T* x, std::size_t tokens, std::size_t heads, Positions positions,
             Direction direction = Direction::forward, const Execution& execution = {}) const {
    apply(View<T>::contiguous(x, tokens, heads, head_size_), positions, direction, execution);
  }

  /// Writes the rotation of contiguous src into contiguous dst, both [tokens][heads][head_size].
  void apply(const T* src, T* dst, std::size_t tokens, std::size_t heads, Positions positions,
             Direction direction = Direction::forward, const Execution& execution = {}) const {
    apply(View<const T>::contiguous(src, tokens, heads, head_size_),
          View<T>::contiguous(dst, tokens, heads, head_size_), positions, direction, execution);
  }

  /// Rotates the heads of a strided view in place.
  void apply(View<T> x, Positions positions, Direction direction = Direction::forward,
             const Execution& execution = {}) const {
    apply(View<const T>(x), x, positions, direction, execution);
  }

  /// Writes the rotation of src into dst: same tokens and heads, any strides. dst may be src
  /// (in place); src and dst that otherwise share a byte are rejected.
  void apply(View<const T> src, View<T> dst, Positions positions,
             Direction direction = Direction::forward, const Execution& execution = {}) const {
    apply(src, dst, positions, TokenRange{0, src.tokens()}, direction, execution);
  }

  /// Rotates only the tokens [range.first, range.last) of src into dst (token t still at
  /// positions[t]): the entry point for an engine that splits a batch over its own threads.
  /// Throws std::out_of_range if the range is not inside the batch.
  void apply(View<const T> src, View<T> dst, Positions positions, TokenRange range,
             Direction direction = Direction::forward, const Execution& execution = {}) const {
    checked_apply(src, dst, positions, range, direction, execution);
  }

  /// apply without any argument check (see rope::Unchecked). Preconditions: the checked call
  /// would not throw; positions outside [0, 2^53 − 1] give unspecified values.
  void apply(Unchecked, View<const T> src, View<T> dst, Positions positions, TokenRange range,
             Direction direction = Direction::forward, const Execution& execution = {}) const {
    const detail::Job<T> job{src, dst};
    run(&job, 1, range, positions, direction, execution);
  }

  /// Rotates queries and keys of the same tokens in place in one pass: each token's table row
  /// is read once for all heads of both. q and k may have different head counts (grouped-query
  /// attention) and different strides, but must not share a byte.
  void apply_qk(View<T> q, View<T> k, Positions positions, Direction direction = Direction::forward,
                const Execution& execution = {}) const {
    apply_qk(q, k, positions, TokenRange{0, q.tokens()}, direction, execution);
  }

  /// apply_qk for the tokens [range.first, range.last) only.
  void apply_qk(View<T> q, View<T> k, Positions positions, TokenRange range,
                Direction direction = Direction::forward, const Execution& execution = {}) const {
    checked_apply_qk(q, k, positions, range, direction, execution);
  }

  /// apply_qk without any argument check (see rope::Unchecked), on the same preconditions.
  void apply_qk(Unchecked, View<T> q, View<T> k, Positions positions, TokenRange range,
                Direction direction = Direction::forward, const Execution& execution = {}) const {
    const detail::Job<T> jobs[2] = {{q, q}, {k, k}};
    run(jobs, 2, range, positions, direction, execution);
  }

  // ---- multi-axis positions (Options::axes): the entry points above, with the coordinates of
  // each token in an AxisPositions of axes() coordinates per token. Pair i of token t rotates by
  // positions(t, axis_of_pairs()[i])·θ_i; a token whose coordinates are all m is rotated exactly
  // as the Positions entry points rotate position m (which is what they do on a multi-axis
  // Rotary). Besides the checks above, these throw std::invalid_argument if the positions have
  // another number of axes, and std::out_of_range for a coordinate outside [0, 2^53 − 1].

  /// Rotates a contiguous [tokens][heads][head_size] buffer in place.
  void apply(T* x, std::size_t tokens, std::size_t heads, const AxisPositions& positions,
             Direction direction = Direction::forward, const Execution& execution = {}) const {
    const View<T> view = View<T>::contiguous(x, tokens, heads, head_size_);
    checked_apply(View<const T>(view), view, positions, TokenRange{0, tokens}, direction,
                  execution);
  }

  /// Rotates the heads of a strided view in place.
  void apply(View<T> x, const AxisPositions& positions, Direction direction = Direction::forward,
             const Execution& execution = {}) const {
    checked_apply(View<const T>(x), x, positions, TokenRange{0, x.tokens()}, direction, execution);
  }

  /// Writes the rotation of the tokens [range.first, range.last) of src into dst.
  void apply(View<const T> src, View<T> dst, const AxisPositions& positions, TokenRange range,
             Direction direction = Direction::forward, const Execution& execution = {}) const {
    checked_apply(src, dst, positions, range, direction, execution);
  }

  /// Rotates queries and keys of the same tokens in place in one pass.
  void apply_qk(View<T> q, View<T> k, const AxisPositions& positions,
                Direction direction = Direction::forward, const Execution& execution = {}) const {
    checked_apply_qk(q, k, positions, TokenRange{0, q.tokens()}, direction, execution);
  }

  /// apply_qk for the tokens [range.first, range.last) only.
  void apply_qk(View<T> q, View<T> k, const AxisPositions& positions, TokenRange range,
                Direction direction = Direction::forward, const Execution& execution = {}) const {
    checked_apply_qk(q, k, positions, range, direction, execution);
  }

  /// apply without any argument check (see rope::Unchecked).
  void apply(Unchecked, View<const T> src, View<T> dst, const AxisPositions& positions,
             TokenRange range, Direction direction = Direction::forward,
             const Execution& execution = {}) const {
    const detail::Job<T> job{src, dst};
    run(&job, 1, range, positions, direction, execution);
  }

  /// apply_qk without any argument check (see rope::Unchecked).
  void apply_qk(Unchecked, View<T> q, View<T> k, const AxisPositions& positions, TokenRange range,
                Direction direction = Direction::forward, const Execution& execution = {}) const {
    const detail::Job<T> jobs[2] = {{q, q}, {k, k}};
    run(jobs, 2, range, positions, direction, execution);
  }

  /// Context shift: rotates keys already at their positions m by `delta` more positions, in
  /// place, so that they become the keys of positions m + delta (delta < 0 moves them back).
  ///
  /// An engine that drops or moves a window of its KV cache calls this on the keys that move,
  /// instead of recomputing them: R_δ R_m = R_{m+δ}, so the result equals rotating the unrotated
  /// keys to m + δ, up to rounding (a few ulps of T per shift; shifts accumulate). The rotation
  /// is R_δ alone, without the attention factor that Yarn and LongRope put on cos and sin.
  /// Exact for every scheme whose θ_j is fixed; not for DynamicNTK, and LongRope across its
  /// short/long switch, when the keys were rotated for another sequence_length (docs/api.md).
  ///
  /// Throws std::invalid_argument for a null or overlapping view, or streaming_stores (in place);
  /// std::out_of_range if |delta| > 2^53 − 1. O(tokens · heads · rotary_dim); one table row,
  /// computed once, for all tokens.
  void shift(View<T> keys, std::int64_t delta, const Execution& execution = {}) const {
    detail::check_view("keys", keys, head_size_);
    detail::check_shift(delta);
    if (execution.streaming_stores) detail::check_streaming(View<const T>(keys), keys);
    std::vector<Compute> row(rotary_dim_);
    Table<Compute>::compute_row(layout(), frequencies_.theta, std::abs(double(delta)), row.data(),
                                1.0, angles_);
    const detail::Job<T> job{keys, keys};
    const TokenRange all{0, keys.tokens()};
    const Direction direction = delta < 0 ? Direction::inverse : Direction::forward;
    detail::for_each_part(all, parts(&job, 1, all, execution), [&](std::size_t, TokenRange tokens) {
      run_fixed(&job, 1, tokens, direction, row.data());
    });
  }

  /// Returns one head (any Eigen vector expression of head_size T) rotated to `position`.
  template <class Derived>
  typename Derived::PlainObject rotated(const Eigen::DenseBase<Derived>& head,
                                        std::int64_t position,
                                        Direction direction = Direction::forward) const {
    static_assert(std::is_same_v<typename Derived::Scalar, T>,
                  "rope::Rotary<T, Dim>::rotated: the vector's scalar type must be T");
    static_assert(Derived::IsVectorAtCompileTime, "rope::Rotary<T, Dim>::rotated: needs a vector");
    if (static_cast<std::size_t>(head.size()) != head_size_) {
      ROPE_THROW(std::invalid_argument, "rope: the vector has " + std::to_string(head.size()) +
                                            " coefficients but the head size is " +
                                            std::to_string(head_size_));
    }
    typename Derived::PlainObject out = head;  // contiguous, whatever the expression's strides
    apply(out.data(), 1, 1, Positions::consecutive(position), direction);
    return out;
  }

  /// Rotates one head in place: a vector, a Map, a segment, a row or column of a matrix, or an
  /// Eigen::Ref (temporaries such as `m.row(i)` are accepted, as Eigen documents for
  /// functions writing to their argument).
  template <class Derived>
  void apply(const Eigen::DenseBase<Derived>& head, std::int64_t position,
             Direction direction = Direction::forward) const {
    auto rotated_head = rotated(head, position, direction);
    const_cast<Eigen::DenseBase<Derived>&>(head).derived() = rotated_head;
  }

 private:
  static std::size_t checked_head_size(std::size_t head_size) {
    if constexpr (Dim != Eigen::Dynamic) {
      if (head_size != 0 && head_size != static_cast<std::size_t>(Dim)) {
        ROPE_THROW(std::invalid_argument, "rope: Options::head_size " + std::to_string(head_size) +
                                              " disagrees with the compile-time head size " +
                                              std::to_string(Dim));
      }
      return static_cast<std::size_t>(Dim);
    } else {
      detail::check_head_size(head_size);
      return head_size;
    }
  }

  static std::size_t checked_positions(const Options& options, std::size_t rotary_dim) {
    const std::size_t row_bytes = rotary_dim * sizeof(Compute);
    if (options.max_positions > options.table_memory_limit / row_bytes) {
      ROPE_THROW(std::invalid_argument,
                 "rope: a table of max_positions " + std::to_string(options.max_positions) + " x " +
                     std::to_string(row_bytes) + " bytes exceeds table_memory_limit " +
                     std::to_string(options.table_memory_limit) + " bytes (at most " +
                     std::to_string(options.table_memory_limit / row_bytes) + " positions)");
    }
    return options.max_positions;
  }

  // A pair's axis, for consecutive pairs [first, last) with the same axis.
  struct AxisRun {
    std::size_t first, last, axis;
  };

  // The axis of each entry of a table row, in the row's order (Table's layout).
  static std::vector<std::uint8_t> entries_of(const std::vector<std::uint8_t>& axis_of_pair,
                                              Layout layout) {
    const std::size_t half = axis_of_pair.size();
    std::vector<std::uint8_t> axis(2 * half);
    for (std::size_t i = 0; i < half; ++i) {
      const bool adjacent = layout == Layout::interleaved;
      axis[adjacent ? 2 * i : i] = axis_of_pair[i];
      axis[adjacent ? 2 * i + 1 : half + i] = axis_of_pair[i];
    }
    return axis;
  }

  static std::vector<AxisRun> runs_of(const std::vector<std::uint8_t>& axis_of_pair) {
    std::vector<AxisRun> runs;
    for (std::size_t i = 0; i < axis_of_pair.size(); ++i) {
      if (runs.empty() || runs.back().axis != axis_of_pair[i]) {
        runs.push_back({i, i, axis_of_pair[i]});
      }
      runs.back().last = i + 1;
    }
    return runs;
  }

  // P is Positions or AxisPositions.
  template <class P>
  void checked_apply(View<const T> src, View<T> dst, const P& positions, TokenRange range,
                     Direction direction, const Execution& execution) const {
    detail::check_view("src", src, head_size_);
    detail::check_view("dst", dst, head_size_);
    detail::check_same_shape(src, dst);
    detail::check_disjoint("src", src, "dst", dst, head_size_, true);
    detail::check_range(range, src.tokens());
    const detail::Job<T> job{src, dst};
    check_call(&job, 1, range, positions, execution);
    run(&job, 1, range, positions, direction, execution);
  }

  template <class P>
  void checked_apply_qk(View<T> q, View<T> k, const P& positions, TokenRange range,
                        Direction direction, const Execution& execution) const {
    detail::check_view("q", q, head_size_);
    detail::check_view("k", k, head_size_);
    if (q.tokens() != k.tokens()) {
      ROPE_THROW(std::invalid_argument, "rope: q has " + std::to_string(q.tokens()) +
                                            " tokens but k has " + std::to_string(k.tokens()));
    }
    detail::check_disjoint("q", q, "k", k, head_size_, false);
    detail::check_range(range, q.tokens());
    const detail::Job<T> jobs[2] = {{q, q}, {k, k}};
    check_call(jobs, 2, range, positions, execution);
    run(jobs, 2, range, positions, direction, execution);
  }

  // The checks that need the jobs: positions, and streaming's requirements.
  template <class P>
  void check_call(const detail::Job<T>* jobs, std::size_t job_count, TokenRange range,
                  const P& positions, const Execution& execution) const {
    if constexpr (std::is_same_v<P, AxisPositions>) {
      detail::check_axis_positions(positions, range, axes_);
    } else {
      detail::check_positions(positions, range);
    }
    for (std::size_t i = 0; i < job_count && execution.streaming_stores; ++i) {
      detail::check_streaming(jobs[i].src, jobs[i].dst);
    }
  }

  // How many parts (threads) the tokens of range are split into.
  std::size_t parts(const detail::Job<T>* jobs, std::size_t job_count, TokenRange range,
                    const Execution& execution) const {
    std::size_t bytes_per_token = 0;
    for (std::size_t i = 0; i < job_count; ++i) {
      bytes_per_token += 2 * jobs[i].src.heads() * head_size_ * sizeof(T);
    }
    const std::size_t count = range.last - range.first;
    return execution.threads == 1 ? 1
                                  : detail::thread_count(execution, count, bytes_per_token * count);
  }

  // Splits the tokens over threads.
  template <class P>
  void run(const detail::Job<T>* jobs, std::size_t job_count, TokenRange range, const P& positions,
           Direction direction, const Execution& execution) const {
    detail::for_each_part(
        range, parts(jobs, job_count, range, execution), [&](std::size_t, TokenRange tokens) {
          // The row of a position past the table, allocated on first use.
          std::vector<Compute> scratch;
          if (direction == Direction::forward) {
            run<Direction::forward>(jobs, job_count, tokens, positions, execution, scratch);
          } else {
            run<Direction::inverse>(jobs, job_count, tokens, positions, execution, scratch);
          }
        });
  }

  // Chooses the kernel for the direction, stores and head size once per part; the loops inside
  // see none of these choices.
  template <Direction D, class P>
  void run(const detail::Job<T>* jobs, std::size_t job_count, TokenRange tokens, const P& positions,
           const Execution& execution, std::vector<Compute>& scratch) const {
    constexpr int kHalf = Dim == Eigen::Dynamic ? Eigen::Dynamic : Dim / 2;
    constexpr auto ordinary = detail::Stores::ordinary, streaming = detail::Stores::streaming;
    const bool whole = rotary_dim_ == head_size_;
    if (execution.streaming_stores) {
      if (whole) return run<D, kHalf, streaming>(jobs, job_count, tokens, positions, scratch);
      return run<D, Eigen::Dynamic, streaming>(jobs, job_count, tokens, positions, scratch);
    }
    if (whole) return run<D, kHalf, ordinary>(jobs, job_count, tokens, positions, scratch);
    run<D, Eigen::Dynamic, ordinary>(jobs, job_count, tokens, positions, scratch);
  }

  // Every token by the same row (ordinary stores; streaming is rejected in place). Instantiated
  // only by shift, so that code which never shifts does not compile these kernels.
  void run_fixed(const detail::Job<T>* jobs, std::size_t job_count, TokenRange tokens,
                 Direction direction, const Compute* row) const {
    const detail::Slice slice{rotary_offset_, rotary_dim_, head_size_};
    const auto row_of = [row](std::size_t) { return row; };
    constexpr auto ordinary = detail::Stores::ordinary;
    if (direction == Direction::forward) {
      detail::rotate_layout<Eigen::Dynamic, Direction::forward, ordinary>(layout(), row_of, jobs,
                                                                          job_count, tokens, slice);
    } else {
      detail::rotate_layout<Eigen::Dynamic, Direction::inverse, ordinary>(layout(), row_of, jobs,
                                                                          job_count, tokens, slice);
    }
  }

  // Half: rotary_dim/2 when known at compile time (the whole of a fixed-size head), else Dynamic.
  template <Direction D, int Half, detail::Stores W>
  void run(const detail::Job<T>* jobs, std::size_t job_count, TokenRange tokens,
           const Positions& positions, std::vector<Compute>& scratch) const {
    const detail::Slice slice{rotary_offset_, rotary_dim_, head_size_};
    positions.visit([&](auto position_of) {
      const auto row_of = [&](std::size_t t) { return row(position_of(t), scratch); };
      detail::rotate_layout<Half, D, W>(layout(), row_of, jobs, job_count, tokens, slice);
    });
  }

  // The same for multi-axis positions: a token's row is put together from the rows of its
  // coordinates, unless all its coordinates are equal.
  template <Direction D, int Half, detail::Stores W>
  void run(const detail::Job<T>* jobs, std::size_t job_count, TokenRange tokens,
           const AxisPositions& positions, std::vector<Compute>& scratch) const {
    const detail::Slice slice{rotary_offset_, rotary_dim_, head_size_};
    const auto row_of = [&](std::size_t t) -> const Compute* {
      std::int64_t p[Axes::kMaxAxes];
      bool same = true;
      for (std::size_t a = 0; a < axes_; ++a) {
        p[a] = positions(t, a);
        same = same && p[a] == p[0];
      }
      if (same) return row(p[0], scratch);
      scratch.resize(rotary_dim_);
      bool inside = true;
      for (std::size_t a = 0; a < axes_; ++a) {
        inside = inside && static_cast<std::size_t>(p[a]) < table_.positions();
      }
      if (inside) {
        // Entry k from the table row of its axis: a select that compilers vectorise.
        const Compute* r[Axes::kMaxAxes];
        for (std::size_t a = 0; a < Axes::kMaxAxes; ++a) {
          r[a] = table_.row(static_cast<std::size_t>(p[a < axes_ ? a : 0]));
        }
        const std::uint8_t* axis = axis_of_entry_.data();
        Compute* out = scratch.data();
        for (std::size_t k = 0; k < rotary_dim_; ++k) {
          out[k] = axis[k] == 0   ? r[0][k]
                   : axis[k] == 1 ? r[1][k]
                   : axis[k] == 2 ? r[2][k]
                                  : r[3][k];
        }
        return out;
      }
      // A coordinate past the table: each run of pairs computed as the table computes its rows.
      for (const AxisRun& run : runs_) {
        Table<Compute>::compute_pairs(layout(), frequencies_.theta,
                                      static_cast<double>(p[run.axis]), scratch.data(), run.first,
                                      run.last, frequencies_.attention_factor, angles_);
      }
      return scratch.data();
    };
    detail::rotate_layout<Half, D, W>(layout(), row_of, jobs, job_count, tokens, slice);
  }

  // The table row of position m, or the row computed into scratch past the table.
  const Compute* row(std::int64_t position, std::vector<Compute>& scratch) const {
    const auto m = static_cast<std::size_t>(position);
    if (m < table_.positions()) return table_.row(m);
    scratch.resize(rotary_dim_);
    Table<Compute>::compute_row(layout(), frequencies_.theta, static_cast<double>(m),
                                scratch.data(), frequencies_.attention_factor, angles_);
    return scratch.data();
  }

  std::size_t head_size_;
  std::size_t rotary_dim_;
  std::size_t rotary_offset_;
  double base_;
  Frequencies frequencies_;
  std::vector<std::uint8_t> axis_of_pair_;
  std::vector<AxisRun> runs_;
  std::vector<std::uint8_t> axis_of_entry_;
  std::size_t axes_;
  Table<Compute> table_;
  Angles angles_;
};

}  // namespace rope
