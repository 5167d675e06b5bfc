// What a Rotary<T, Dim> holds and does, for every T that computes in C: θ, the table, the
// multi-axis maps, the checks and the walk. Rotary<T, Dim> is a typed shell around a Core<C>
// that adds the kernels of T and Dim (a function pointer), so that a program compiles
// construction, checks and walk once per compute type (float, double), whatever storage types
// and head sizes it rotates.
#pragma once

#include <rope/config.hpp>
#if !defined(ROPE_BELOW_CXX17)  // config.hpp stops older standards with one #error

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include <rope/detail/checks.hpp>
#include <rope/detail/fused.hpp>
#include <rope/detail/geometry.hpp>
#include <rope/detail/jobs.hpp>
#include <rope/detail/rows.hpp>
#include <rope/detail/values.hpp>
#include <rope/detail/walk.hpp>
#include <rope/execution.hpp>
#include <rope/frequencies.hpp>
#include <rope/options.hpp>
#include <rope/positions.hpp>
#include <rope/table.hpp>

namespace rope {
inline namespace ROPE_DETAIL_ISA {
namespace detail {

// The first n values of v.
template <class V>
std::vector<V> first(const std::vector<V>& v, std::size_t n) {
  return std::vector<V>(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(n));
}

// A view as Core::apply_direct reads it: its fields, strides in elements (of `element` bytes),
// `buffer` the elements from data or View<char>::unknown.
struct DirectView {
  std::uintptr_t data;
  std::size_t element, batches, tokens, heads, token_stride, head_stride, buffer;

  // The same view: the same heads, shape, element and buffer.
  bool same(const DirectView& o) const noexcept {
    return data == o.data && element == o.element && batches == o.batches && tokens == o.tokens &&
           heads == o.heads && token_stride == o.token_stride && head_stride == o.head_stride &&
           buffer == o.buffer;
  }

  template <class T>
  static DirectView of(const View<T>& v) noexcept {
    return {reinterpret_cast<std::uintptr_t>(v.data()),
            sizeof(T),
            v.batches(),
            v.tokens(),
            v.heads(),
            v.token_stride(),
            v.head_stride(),
            v.buffer_size()};
  }
  static DirectView of(const Geometry& g) noexcept {
    return {g.data, g.element, g.batches, g.tokens, g.heads, g.token_step, g.head_step, g.buffer};
  }
};

// The keys of a decode step into a key cache, as Core::apply_qk_direct takes them: their kernel
// (into the cache's type), the conversion of the coordinates outside the slice (null: a cache of
// the keys' type), the cache's view (its rows are its tokens) and the slots.
struct DirectKeys {
  Kernel kernel;
  CopyOutside copy_outside;
  DirectView cache;
  const Slots* slots;
};

// The values of the same step into a value cache (Keys::values), as Core::apply_qk_direct takes
// them: their copy into the cache's type (ValueFormat::copy), v's view and the cache's.
struct DirectValues {
  CopyHeads copy;
  DirectView in;
  DirectView cache;
};

template <class C>
class Core {
 public:
  // head_size: the checked head size (the shell checks it against its Dim).
  ROPE_DETAIL_COLD Core(const Options& options, std::size_t head_size);

  std::size_t head_size() const noexcept { return head_size_; }
  std::size_t rotary_dim() const noexcept { return rotary_dim_; }
  std::size_t rotary_offset() const noexcept { return rotary_offset_; }
  double base() const noexcept { return base_; }
  Layout layout() const noexcept { return table_.layout(); }
  const std::vector<double>& theta() const noexcept { return frequencies_.theta; }
  double attention_factor() const noexcept { return frequencies_.attention_factor; }
  const Table<C>& table() const noexcept { return table_; }
  std::size_t axes() const noexcept { return axes_; }
  const std::vector<std::uint8_t>& axis_of_pairs() const noexcept { return axis_of_pair_; }

  // Rotary's primitives, with the kernel of its T and Dim for the table's layout.
  void apply(Kernel kernel, RunKernel run, const Geometry& src, const Geometry& dst,
             const Positions& positions, const Call& call) const;
  void apply(Unchecked, Kernel kernel, RunKernel run, const Geometry& src, const Geometry& dst,
             const Positions& positions, const Call& call) const;
  // The calls of views without the walk, where the call needs nothing of it: `count` views in
  // place (apply of a pointer or a view, apply_qk of two views), or src into dst (apply of two
  // views). A small call (kDirectBytes) on the calling thread, one sequence of heads inside each
  // view's extent, the extents apart (or each token's heads apart, rows_apart), one axis,
  // whole-number positions in [0, 2^53 − 1] outside the views. Returns false, having read no head
  // and written nothing, for any other call: the caller then checks it (and throws where it is
  // wrong) and walks it.
  // A call of one view of several tokens, or of src into dst, goes to the run kernel (it may be
  // null for two views).
  bool apply_direct(Kernel kernel, RunKernel run, const DirectView* views, std::size_t count,
                    const Positions& positions, const Call& call) const;
  bool apply_direct(Kernel kernel, RunKernel run, const DirectView& src, const DirectView& dst,
                    const Positions& positions, const Call& call) const;
  // A decode step of plain roles without the walk: the queries qk[0] in place and the keys qk[1]
  // of one token, or of a chunk of at most kDirectSlots, into rows slots(t) of a key cache, as
  // apply_direct takes views, and a cache whose rows follow check_view's rules, apart from q and
  // k, with the index arrays outside it and q, each slot inside its rows and none twice (int32,
  // int64 or ring slots). Returns false, having read no head and written nothing, for any other
  // call.
  // With `values` (or null), the values of the same tokens into a value cache of the key cache's
  // shape at the same rows, as store_values_pass copies them: v a view of k's shape apart from q
  // (or its heads apart row by row), from both caches; the value cache apart from q, k, v, the
  // key cache and the index arrays.
  bool apply_qk_direct(Kernel kernel, const DirectView (&qk)[2], const DirectKeys& keys,
                       const DirectValues* values, const Positions& positions,
                       const Call& call) const;
  // The fused call (detail/fused.hpp): q with `kernel`, k with the roles' k_kernel.
  void apply_qk(Kernel kernel, const Fused& fused, const Positions& positions,
                const Call& call) const;
  // Queries and keys in place, neither with a role (Rotary::apply_qk of two views), as the jobs
  // {q, q} and {k, k}: the fused call's checks for that case (check_qk), without the roles.
  void apply_qk(Kernel kernel, const Job (&jobs)[2], const Positions& positions,
                const Call& call) const;
  void apply_qk(Unchecked, Kernel kernel, const Fused& fused, const Positions& positions,
                const Call& call) const;
  void shift(Kernel kernel, const Geometry& keys, std::int64_t delta, const Call& call) const;
  // With `quantized`, keys of a quantised format in place: each row loaded to float, rotated by
  // `kernel` (float's), stored back (Rotary::shift of a View<K>).
  void shift(Unchecked, Kernel kernel, const Geometry& keys, std::int64_t delta, const Call& call,
             const QuantizeJob* quantized = nullptr) const;

 private:
  // apply_qk_direct for one token (MaxTokens = 1: the decode step, its code as short as it was
  // before chunks) or for 2..MaxTokens.
  template <std::size_t MaxTokens>
  bool qk_direct(Kernel kernel, const DirectView (&qk)[2], const DirectKeys& keys,
                 const DirectValues* values, const Positions& positions, const Call& call) const;
  bool qk_chunk_direct(Kernel kernel, const DirectView (&qk)[2], const DirectKeys& keys,
                       const DirectValues* values, const Positions& positions,
                       const Call& call) const;
  // The values of a direct step, after its queries and keys (not inlined: a step without
  // values pays a test of a pointer).
  bool direct_values(const DirectValues& values, const DirectView& q, std::uintptr_t q_end,
                     const DirectView& k, std::uintptr_t k_end, const DirectView& cache,
                     std::uintptr_t cache_end, const Positions& positions, const Call& call,
                     IndexBytes index, const SlotArrays& slot_bytes) const;
  static std::size_t checked_table_size(const Options& options, std::size_t rotary_dim);
  // Whether apply_direct may take the views (the first `count`; with out_of_place, views[0] into
  // views[1]).
  bool direct(const DirectView* views, std::size_t count, bool out_of_place,
              const Positions& positions, const Call& call) const;
  void direct_runs(RunKernel kernel, const DirectView& src, const DirectView& dst,
                   const Positions& positions, const Call& call) const;
  RowsOfTable<C> rows() const noexcept { return {&table_, axes_, &axis_of_entry_, &axis_of_pair_}; }
  // The walk of apply and apply_qk over a range that passed the checks (or whose caller vouches
  // for it), shared by the checked and unchecked forms.
  void rotate(Kernel kernel, RunKernel run, const Geometry& src, const Geometry& dst,
              const Positions& positions, TokenRange range, Direction direction,
              const Execution& execution) const;
  void rotate_qk(Kernel kernel, const Fused& fused, const Positions& positions, TokenRange range,
                 Direction direction, const Execution& execution) const;
  // Interleaved pairs that do not rotate are the end of the slice; half_split ones a gap in it.
  // Half_split pairs within blocks rotate every pair (θ_j = 0 is a rotation by 0) in its block.
  Slice slice() const noexcept {
    const std::size_t width = layout() == Layout::interleaved ? 2 * pairs_ : rotary_dim_;
    return {rotary_offset_, width, head_size_, pairs_, block_pairs_.size(), block_pairs_.data()};
  }
  static bool within_blocks(const Options& options) noexcept {
    return options.axes.pairs_within_blocks() && options.layout == Layout::half_split;
  }
  // The pairs of each block that half_split pairs stay inside (none: one half_split slice).
  static std::vector<std::size_t> blocks_of(const Options& options, std::size_t pairs) {
    std::vector<std::size_t> blocks = options.axes.pairs_of_blocks(pairs);  // (its checks)
    if (!within_blocks(options)) blocks.clear();
    return blocks;
  }

  std::size_t head_size_;
  std::size_t rotary_dim_;
  std::size_t rotary_offset_;
  double base_;
  Frequencies frequencies_;
  std::size_t pairs_;                   // that rotate: θ_j > 0
  std::vector<double> rotating_theta_;  // their θ_j, of which the table's rows are made
  std::vector<std::uint8_t> axis_of_pair_;
  std::vector<std::uint8_t> axis_of_entry_;
  std::size_t axes_;
  bool signed_;  // multi-axis coordinates may be negative (Axes::with_signed_coordinates)
  Table<C> table_;
  Angles angles_;
  std::vector<std::size_t> block_pairs_;  // of each block half_split pairs stay inside
};

// The members are defined out of the class, so that the compiled mode's extern template
// declarations keep them out of a user's translation unit.

template <class C>
Core<C>::Core(const Options& options, std::size_t head_size)
    : head_size_(head_size),
      rotary_dim_(checked_table_size(
          options, checked_rotary_dim(head_size_, options.rotary_dim, options.rotary_offset))),
      // (Layout and Angles are checked by checked_table_size, before anything is computed.)
      rotary_offset_(options.rotary_offset),
      base_(options.base),
      frequencies_(options.axes.frequencies(rotary_dim_, options.base, options.scaling,
                                            options.sequence_length, options.angles)),
      // θ_j = 0 leaves a pair unchanged only where cos and sin carry no factor; with one, the
      // pair is scaled like every other and goes through the kernel.
      pairs_(frequencies_.attention_factor == 1.0 && !within_blocks(options)
                 ? rotating_pairs(frequencies_.theta)
                 : frequencies_.theta.size()),
      rotating_theta_(first(frequencies_.theta, pairs_)),
      axis_of_pair_(options.axes.axis_of_pairs(rotary_dim_ / 2)),
      axis_of_entry_(entries_of(first(axis_of_pair_, pairs_), options.layout)),
      axes_(options.axes.count()),
      signed_(options.axes.signed_coordinates()),
      table_(options.layout, rotating_theta_, options.max_positions, frequencies_.attention_factor,
             options.angles),
      angles_(options.angles),
      block_pairs_(blocks_of(options, rotary_dim_ / 2)) {}

// The table's size, max_positions rows of rotary_dim values of C (fewer where pairs do not
// rotate), against table_memory_limit: checked first, before θ or anything else is allocated, so
// that a huge head size is an error at once (and the product cannot wrap around).
template <class C>
std::size_t Core<C>::checked_table_size(const Options& options, std::size_t rotary_dim) {
  check_layout(options.layout);
  check_angles(options.angles);
  if (rotary_dim > options.table_memory_limit / sizeof(C)) {
    invalid("rope: a table row of rotary_dim %zu x %zu bytes exceeds table_memory_limit %zu bytes",
            rotary_dim, sizeof(C), options.table_memory_limit);
  }
  const std::size_t row_bytes = rotary_dim * sizeof(C);
  if (options.max_positions > options.table_memory_limit / row_bytes) {
    invalid(
        "rope: a table of max_positions %zu x %zu bytes exceeds table_memory_limit %zu "
        "bytes (at most %zu positions)",
        options.max_positions, row_bytes, options.table_memory_limit,
        options.table_memory_limit / row_bytes);
  }
  return rotary_dim;
}

// The checked forms hand the checked range to the walk as it is, not in a new Call: a Call's
// optional range, written a byte at a time and read back whole, stalled a one-token call on the
// store.
template <class C>
void Core<C>::apply(Kernel kernel, RunKernel run, const Geometry& src, const Geometry& dst,
                    const Positions& positions, const Call& call) const {
  const TokenRange range = check_apply(src, dst, head_size_, positions, axes_, call, true, signed_);
  rotate(kernel, run, src, dst, positions, range, call.direction, call.execution);
}

template <class C>
void Core<C>::apply(Unchecked, Kernel kernel, RunKernel run, const Geometry& src,
                    const Geometry& dst, const Positions& positions, const Call& call) const {
  rotate(kernel, run, src, dst, positions, call.range(src.rows()), call.direction, call.execution);
}

// The heads a direct call may hold: read and written, at most walk.hpp's kOnePassBytes, so that
// the kernels take them as the walk would (Reach::cache). Its strides stay below kDirectStride
// elements: no span of a direct call's view wraps around.
inline constexpr std::size_t kDirectBytes = kOnePassBytes / 2;
inline constexpr std::size_t kDirectStride = std::size_t{1} << 30;

// Two views of Core::direct whose extents meet but whose heads do not, as q and k in the rows of
// a fused QKV buffer: several tokens of the same token stride, each token's heads of the one
// (from `hi`) between the other's (from `lo`) and the other's next token, [lo + its heads,
// lo + token_stride). Any head of one view is then apart from every head of the other.
inline bool rows_apart(const DirectView& a, std::uintptr_t a_first, const DirectView& b,
                       std::uintptr_t b_first, std::size_t head_size) {
  if (a.tokens < 2 || a.token_stride != b.token_stride || a_first == b_first) return false;
  const bool a_low = a_first < b_first;
  const DirectView &lo = a_low ? a : b, &hi = a_low ? b : a;
  const std::uintptr_t gap = a_low ? b_first - a_first : a_first - b_first;
  const std::size_t lo_heads = ((lo.heads - 1) * lo.head_stride + head_size) * lo.element;
  const std::size_t hi_heads = ((hi.heads - 1) * hi.head_stride + head_size) * hi.element;
  return gap >= lo_heads && gap + hi_heads <= a.token_stride * a.element;
}

// Each condition the checks of the view's call would test, tested here without a Geometry (its
// copy into a job stalled a one-token call on the stores that had just built it) and without a
// message: a call that fails any of them takes the checked way and gets its error there.
template <class C>
ROPE_DETAIL_INLINE bool Core<C>::direct(const DirectView* views, std::size_t count,
                                        bool out_of_place, const Positions& positions,
                                        const Call& call) const {
  const Execution& e = call.execution;
  if ((call.direction != Direction::forward && call.direction != Direction::inverse) ||
      call.tokens || e.threads != 1 || e.streaming_stores || axes_ != 1 || positions.axes() != 1 ||
      positions.is_null() || positions.is_fractional()) {
    return false;
  }
  const std::size_t tokens = views[0].tokens, element = views[0].element;
  if (tokens == 0 || count > 2 ||
      (out_of_place && (count != 2 || views[1].heads != views[0].heads))) {
    return false;
  }
  std::uintptr_t first[2] = {}, end[2] = {};
  std::size_t bytes = 0;
  for (std::size_t v = 0; v < count; ++v) {
    const DirectView& x = views[v];
    if (x.data == 0 || x.batches != 1 || x.tokens != tokens || x.heads == 0) return false;
    const std::size_t head_bytes = head_size_ * element;
    if (x.heads > kDirectBytes / head_bytes || tokens > kDirectBytes / (x.heads * head_bytes) ||
        x.head_stride >= kDirectStride || x.token_stride >= kDirectStride) {
      return false;
    }
    // check_view's rules for views whose heads are inner, or of one head.
    if ((x.heads > 1 && x.head_stride < head_size_) ||
        (tokens > 1 && x.token_stride < (x.heads > 1 ? x.heads * x.head_stride : head_size_))) {
      return false;
    }
    const std::size_t span =
        (tokens - 1) * x.token_stride + (x.heads - 1) * x.head_stride + head_size_;
    first[v] = x.data;
    if ((x.buffer != View<char>::unknown && span > x.buffer) ||
        first[v] > UINTPTR_MAX - span * element) {
      return false;
    }
    end[v] = first[v] + span * element;
    if (v == 0 || !out_of_place) bytes += tokens * x.heads * head_bytes;  // as call_bytes
  }
  if (bytes > kDirectBytes || (count == 2 && first[0] < end[1] && first[1] < end[0] &&
                               !rows_apart(views[0], first[0], views[1], first[1], head_size_))) {
    return false;
  }
  const IndexBytes index = index_bytes(positions, TokenRange{0, tokens});
  for (std::size_t v = 0; v < count; ++v) {
    if (index.begin != index.end && index.begin < end[v] && first[v] < index.end) return false;
  }
  for (std::size_t t = 0; t < tokens; ++t) {
    const std::int64_t p = positions.at(t, 0, tokens);
    if (p < 0 || p > kMaxPosition) return false;
  }
  return true;
}

// The heads of token t of a view that apply_direct takes.
inline unsigned char* direct_heads(const DirectView& x, std::size_t t) {
  return reinterpret_cast<unsigned char*>(x.data + t * x.token_stride * x.element);
}

// A direct call's tokens of src into dst (the same view in place, or views apart) in runs.
template <class C>
void Core<C>::direct_runs(RunKernel kernel, const DirectView& src, const DirectView& dst,
                          const Positions& positions, const Call& call) const {
  const TableRows<C> source{rows(), &positions, src.tokens};
  const Slice s = slice();
  const bool inverse = call.direction == Direction::inverse;
  const std::size_t e = src.element, src_token = src.token_stride * e,
                    dst_token = dst.token_stride * e;
  Scratch<C> scratch;  // not used: a row past the table is the thread's kept row
  const void* run[kRunTokens];
  for (std::size_t t = 0, k = 0; t < src.tokens; t += k) {
    k = run_rows(source, t, src.tokens, run, scratch);
    const AnyHeads heads{direct_heads(src, t), src.head_stride * e, direct_heads(dst, t),
                         dst.head_stride * e, src.heads};
    rotate_run(kernel, heads, e, k, src_token, dst_token, run, s, inverse);
  }
}

template <class C>
bool Core<C>::apply_direct(Kernel kernel, RunKernel run, const DirectView* views, std::size_t count,
                           const Positions& positions, const Call& call) const {
  if (!direct(views, count, false, positions, call)) return false;
  const std::size_t tokens = views[0].tokens, element = views[0].element;
  if (count == 1 && tokens > 1) {
    direct_runs(run, views[0], views[0], positions, call);
    return true;
  }
  // One token, or two views token by token: q's run and then k's (16 tokens of 32 + 8 heads of
  // 128 in a fused buffer's rows) measured 1.2x the time of q and k of each token in turn.
  const RowsOfTable<C> table = rows();
  const Slice s = slice();
  const bool inverse = call.direction == Direction::inverse;
  for (std::size_t t = 0; t < tokens; ++t) {
    const C* row = table.row_at(positions.at(t, 0, tokens));
    for (std::size_t v = 0; v < count; ++v) {
      unsigned char* x = direct_heads(views[v], t);
      const std::size_t stride = views[v].head_stride * element;
      rotate_raw(kernel, x, stride, element, views[v].heads, x, stride, element, nullptr, row, s,
                 inverse);
    }
  }
  return true;
}

template <class C>
bool Core<C>::apply_direct(Kernel kernel, RunKernel run, const DirectView& src,
                           const DirectView& dst, const Positions& positions,
                           const Call& call) const {
  const DirectView views[2] = {src, dst};
  if (!direct(views, 2, true, positions, call)) return false;
  if (src.tokens > 1) {
    direct_runs(run, src, dst, positions, call);
    return true;
  }
  const std::size_t element = src.element;
  rotate_raw(kernel, direct_heads(src, 0), src.head_stride * element, element, src.heads,
             direct_heads(dst, 0), dst.head_stride * element, element, nullptr,
             rows().row_at(positions.at(0, 0, 1)), slice(), call.direction == Direction::inverse);
  return true;
}

// The end of the extent of a view that Core::direct took.
inline std::uintptr_t direct_end(const DirectView& x, std::size_t head_size) {
  return x.data +
         ((x.tokens - 1) * x.token_stride + (x.heads - 1) * x.head_stride + head_size) * x.element;
}

// The most tokens of a chunk that a direct call writes into a key cache: their slots are
// compared pair by pair for a row taken twice, as check_slots finds it by sorting them.
inline constexpr std::size_t kDirectSlots = 16;

// Two extents [a, a_end) and [b, b_end), b's not empty, that share no byte: the first may be empty
// (an index array the call does not have).
inline bool extents_apart(std::uintptr_t a, std::uintptr_t a_end, std::uintptr_t b,
                          std::uintptr_t b_end) {
  return a == a_end || !(a < b_end && b < a_end);
}

// A key cache as check_view takes it (its rows are its tokens, heads inner or outer), of at most
// kMaxViewBytes from its first element and below 2^30 rows: [c.data, end) is its extent. A
// decode step reads none of it but the rows it writes; the checks take all of it.
inline bool direct_cache(const DirectView& c, std::size_t heads, std::size_t head_size,
                         std::uintptr_t& end) {
  if (c.data == 0 || c.batches != 1 || c.tokens == 0 || c.heads != heads || heads == 0 ||
      c.element > 8 || c.tokens >= kDirectStride || c.head_stride >= kDirectStride ||
      c.token_stride >= kDirectStride) {
    return false;
  }
  const bool inner_heads = c.tokens <= 1 || (heads > 1 && c.head_stride <= c.token_stride);
  const std::size_t inner = inner_heads ? c.head_stride : c.token_stride;
  const std::size_t outer = inner_heads ? c.token_stride : c.head_stride;
  const std::size_t inner_count = inner_heads ? heads : c.tokens;
  if ((inner_count > 1 && inner < head_size) ||
      (c.tokens > 1 && heads > 1 && outer < inner_count * inner)) {
    return false;
  }
  // heads is a direct view's (at most kDirectBytes of them): no term wraps around.
  const std::size_t span =
      (c.tokens - 1) * c.token_stride + (heads - 1) * c.head_stride + head_size;
  if (span > kMaxViewBytes / c.element || (c.buffer != View<char>::unknown && span > c.buffer) ||
      c.data > UINTPTR_MAX - span * c.element) {
    return false;
  }
  end = c.data + span * c.element;
  return true;
}

// The values of a direct step (DirectValues), against the keys' views that Core::qk_direct took
// (each with its extent's end): v as direct() takes a view, of k's tokens and heads; its cache of
// the key cache's rows and heads, as direct_cache takes it; v apart from both caches and from q
// (or its heads apart from q's row by row, as in a fused QKV row); the value cache apart from q,
// k and the key cache, and from the positions and slot arrays.
template <class C>
ROPE_DETAIL_NOINLINE bool Core<C>::direct_values(const DirectValues& values, const DirectView& q,
                                                 std::uintptr_t q_end, const DirectView& k,
                                                 std::uintptr_t k_end, const DirectView& cache,
                                                 std::uintptr_t cache_end,
                                                 const Positions& positions, const Call& call,
                                                 IndexBytes index,
                                                 const SlotArrays& slot_bytes) const {
  const std::size_t head_size = head_size_;
  const DirectView &v = values.in, &vc = values.cache;
  if (v.tokens != k.tokens || !direct(&v, 1, false, positions, call)) return false;
  const std::uintptr_t v_end = direct_end(v, head_size);
  std::uintptr_t vc_end = 0;
  if (v.heads != k.heads || vc.tokens != cache.tokens ||
      !direct_cache(vc, k.heads, head_size, vc_end)) {
    return false;
  }
  if (!extents_apart(vc.data, vc_end, q.data, q_end) ||
      !extents_apart(vc.data, vc_end, k.data, k_end) ||
      !extents_apart(vc.data, vc_end, cache.data, cache_end) ||
      !extents_apart(vc.data, vc_end, v.data, v_end) ||
      !extents_apart(v.data, v_end, cache.data, cache_end) ||
      !extents_apart(index.begin, index.end, vc.data, vc_end) ||
      (!extents_apart(v.data, v_end, q.data, q_end) &&
       !rows_apart(q, q.data, v, v.data, head_size))) {
    return false;
  }
  for (std::size_t i = 0; i < slot_bytes.count; ++i) {
    if (!extents_apart(slot_bytes.bytes[i].begin, slot_bytes.bytes[i].end, vc.data, vc_end)) {
      return false;
    }
  }
  return true;
}

template <class C>
bool Core<C>::apply_qk_direct(Kernel kernel, const DirectView (&qk)[2], const DirectKeys& keys,
                              const DirectValues* values, const Positions& positions,
                              const Call& call) const {
  if (qk[0].tokens == 1) return qk_direct<1>(kernel, qk, keys, values, positions, call);
  return qk_chunk_direct(kernel, qk, keys, values, positions, call);
}

template <class C>
ROPE_DETAIL_NOINLINE bool Core<C>::qk_chunk_direct(Kernel kernel, const DirectView (&qk)[2],
                                                   const DirectKeys& keys,
                                                   const DirectValues* values,
                                                   const Positions& positions,
                                                   const Call& call) const {
  return qk_direct<kDirectSlots>(kernel, qk, keys, values, positions, call);
}

template <class C>
template <std::size_t MaxTokens>
bool Core<C>::qk_direct(Kernel kernel, const DirectView (&qk)[2], const DirectKeys& keys,
                        const DirectValues* values, const Positions& positions,
                        const Call& call) const {
  const DirectView &q = qk[0], &k = qk[1], &cache = keys.cache;
  const Slots& slots = *keys.slots;
  // One token tested here (not only by the caller): direct() and the rest then fold for it.
  const std::size_t tokens = q.tokens;
  if ((MaxTokens == 1 ? tokens != 1 : tokens > MaxTokens) ||
      !direct(qk, 2, false, positions, call)) {
    return false;
  }
  std::uintptr_t cache_end = 0;
  if (!direct_cache(cache, k.heads, head_size_, cache_end)) return false;
  // The slots: each inside the cache's rows (a negative one, a skipped token, walks), no row
  // taken twice (as by a ring of fewer rows than tokens).
  const Slots::Kind kind = slots.kind();
  if (kind == Slots::Kind::int32 || kind == Slots::Kind::int64) {
    if (slots.size() != tokens || slots.data() == nullptr) return false;
  } else if (kind != Slots::Kind::ring) {
    return false;
  }
  std::int64_t slot[MaxTokens];
  for (std::size_t t = 0; t < tokens; ++t) {
    slot[t] = slots.row(t, cache.tokens, tokens);
    if (slot[t] < 0 || static_cast<std::uint64_t>(slot[t]) >= cache.tokens) return false;
    for (std::size_t u = 0; u < t; ++u) {
      if (slot[u] == slot[t]) return false;
    }
  }
  const std::uintptr_t q_end = direct_end(q, head_size_), k_end = direct_end(k, head_size_);
  const IndexBytes index = index_bytes(positions, TokenRange{0, tokens});
  const SlotArrays slot_bytes = slot_arrays(slots, TokenRange{0, tokens}, tokens);
  if (!extents_apart(cache.data, cache_end, q.data, q_end) ||
      !extents_apart(cache.data, cache_end, k.data, k_end) ||
      !extents_apart(index.begin, index.end, cache.data, cache_end)) {
    return false;
  }
  for (std::size_t i = 0; i < slot_bytes.count; ++i) {
    const IndexBytes b = slot_bytes.bytes[i];
    if (!extents_apart(b.begin, b.end, q.data, q_end) ||
        !extents_apart(b.begin, b.end, cache.data, cache_end)) {
      return false;
    }
  }
  if (values != nullptr && !direct_values(*values, q, q_end, k, k_end, cache, cache_end, positions,
                                          call, index, slot_bytes)) {
    return false;
  }
  const RowsOfTable<C> table = rows();
  const Slice s = slice();
  const bool inverse = call.direction == Direction::inverse;
  const std::size_t q_stride = q.head_stride * q.element;
  for (std::size_t t = 0; t < tokens; ++t) {
    const C* row = table.row_at(positions.at(t, 0, tokens));
    unsigned char* x = direct_heads(q, t);
    rotate_raw(kernel, x, q_stride, q.element, q.heads, x, q_stride, q.element, nullptr, row, s,
               inverse);
    auto* to = reinterpret_cast<unsigned char*>(
        cache.data + static_cast<std::size_t>(slot[t]) * cache.token_stride * cache.element);
    rotate_raw(keys.kernel, direct_heads(k, t), k.head_stride * k.element, k.element, k.heads, to,
               cache.head_stride * cache.element, cache.element, keys.copy_outside, row, s,
               inverse);
  }
  if (values != nullptr) {  // as store_values_pass, after the keys
    const DirectView &v = values->in, &vc = values->cache;
    for (std::size_t t = 0; t < tokens; ++t) {
      auto* to = reinterpret_cast<unsigned char*>(vc.data + static_cast<std::size_t>(slot[t]) *
                                                                vc.token_stride * vc.element);
      values->copy(direct_heads(v, t), v.head_stride * v.element, to, vc.head_stride * vc.element,
                   k.heads, head_size_);
    }
  }
  return true;
}

template <class C>
void Core<C>::rotate(Kernel kernel, RunKernel run_kernel, const Geometry& src, const Geometry& dst,
                     const Positions& positions, TokenRange range, Direction direction,
                     const Execution& execution) const {
  const Job job{src, dst};
  run(TableRows<C>{rows(), &positions, src.tokens}, kernel, &job, 1, slice(), range, direction,
      execution, run_kernel);
}

template <class C>
void Core<C>::apply_qk(Kernel kernel, const Fused& fused, const Positions& positions,
                       const Call& call) const {
  const TokenRange range = check_fused(fused, head_size_, positions, axes_, call, true, signed_);
  rotate_qk(kernel, fused, positions, range, call.direction, call.execution);
}

template <class C>
void Core<C>::apply_qk(Kernel kernel, const Job (&jobs)[2], const Positions& positions,
                       const Call& call) const {
  const Geometry &q = jobs[0].src, &k = jobs[1].src;
  const TokenRange range = check_qk(q, k, head_size_, positions, axes_, call, signed_);
  run(TableRows<C>{rows(), &positions, q.tokens}, kernel, jobs, 2, slice(), range, call.direction,
      call.execution);
}

template <class C>
void Core<C>::apply_qk(Unchecked, Kernel kernel, const Fused& fused, const Positions& positions,
                       const Call& call) const {
  rotate_qk(kernel, fused, positions, call.range(fused.q().rows()), call.direction, call.execution);
}

template <class C>
ROPE_DETAIL_INLINE void Core<C>::rotate_qk(Kernel kernel, const Fused& fused,
                                           const Positions& positions, TokenRange range,
                                           Direction direction, const Execution& execution) const {
  run_fused(TableRows<C>{rows(), &positions, fused.q().tokens}, kernel, fused, slice(), positions,
            range, direction, execution);
}

template <class C>
void Core<C>::shift(Kernel kernel, const Geometry& keys, std::int64_t delta,
                    const Call& call) const {
  const TokenRange range = check_shift_call(keys, head_size_, delta, call);
  shift(unchecked, kernel, keys, delta, Call{call.direction, range, call.execution});
}

template <class C>
void Core<C>::shift(Unchecked, Kernel kernel, const Geometry& keys, std::int64_t delta,
                    const Call& call, const QuantizeJob* quantized) const {
  // R_δ for δ ≥ 0, its inverse R_|δ|ᵀ for δ < 0; Direction::inverse swaps the two.
  std::vector<C> row(2 * pairs_);
  Table<C>::compute_row(layout(), rotating_theta_, std::abs(static_cast<double>(delta)), row.data(),
                        1.0, angles_);
  const bool backwards = (delta < 0) != (call.direction == Direction::inverse);
  Job job{keys, keys};
  job.quantize = quantized;
  job.quantized_source = quantized != nullptr;
  run(FixedRow<C>{row.data()}, kernel, &job, 1, slice(), call.range(keys.rows()),
      backwards ? Direction::inverse : Direction::forward, call.execution);
}

}  // namespace detail
}  // namespace ROPE_DETAIL_ISA
}  // namespace rope

#endif  // !ROPE_BELOW_CXX17
