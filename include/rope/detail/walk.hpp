// The walk of a call: token by token, each token's row from a row source, every head of every
// job rotated against it by the kernel of the layout.
//
// A row source is any type with
//
//     using Value = C;
//     const C* row(std::size_t token, Scratch<C>& scratch) const;
//
// returning token `token`'s row in the kernels' format (table.hpp), C = compute_t<T>, and
//
//     std::size_t stored_rows(std::size_t t, std::size_t last, const void** rows) const;
//
// writing the rows of the tokens from t on, up to last, that it holds stored (a table's rows,
// valid while the call runs, unlike a row in scratch) and returning how many: 0 where token t's
// row must be computed. The table of a Rotary (with rows past the table and multi-axis rows) and
// the caller's cos/sin caches of a CachedRotary are two such sources (rows.hpp). The walk and the
// kernels are the same for all of them; `scratch` belongs to the calling thread, for a row that has
// to be computed.
//
// The kernels are the only code compiled per head size (Half: fixed, or Eigen::Dynamic) and
// storage type; the walk sees them through a function pointer and the views with their element
// type erased. The layout, direction and kind of store are read once per call at run time: they
// cost nothing measurable next to heads·d elements per token (docs/design.md), and a program
// compiles two kernels per head size and type, whatever it calls.
#pragma once

#include <rope/config.hpp>
#if !defined(ROPE_BELOW_CXX17)  // config.hpp stops older standards with one #error

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include <rope/detail/geometry.hpp>
#include <rope/detail/jobs.hpp>
#include <rope/detail/packet.hpp>
#include <rope/detail/threads.hpp>
#include <rope/detail/values.hpp>
#include <rope/execution.hpp>

namespace rope {
inline namespace ROPE_DETAIL_ISA {
namespace detail {

// Room for n values in a buffer of the calling thread's, reused from token to token (the
// streaming stores' buffer).
template <class C>
C* room(std::vector<C>& scratch, std::size_t n) {
  if (scratch.size() < n) scratch = std::vector<C>(n);
  return scratch.data();
}

// A buffer whose values are not initialised (they are written before they are read): a
// normalised job's factors and group of heads. Zeroing it at every call (16 KiB, before the heads
// went in groups) was a tenth of the samples of a decode step's profile. It starts on a 64-byte
// boundary, so that no register of it straddles two cache lines.
struct Uninitialized {
  std::unique_ptr<unsigned char[]> data;
  std::size_t size = 0;
  unsigned char* room(std::size_t n) {
    if (size < n) {
      data.reset(new unsigned char[n + 63]);
      size = n;
    }
    const auto address = reinterpret_cast<std::uintptr_t>(data.get());
    return data.get() + ((64 - address % 64) % 64);
  }
};
// The rows of one axis at fractional coordinates that a thread has computed, for later tokens
// (of this call or the next: an engine's layers repeat a step's coordinates) at the same
// coordinate on that axis (rows.hpp): kSlots rows per axis in sets of four chosen by a hash of
// the coordinate's bits, each tagged with the table's id and those bits. A video's tokens take a
// few dozen distinct values per axis, so a token's row is put together from kept rows of its
// axes instead of computed. Made on a thread's first fractional multi-axis row, not initialised:
// axes · kSlots rows of the table's width (3 MiB for LTX-2's 4096-wide rows), kept while the
// thread lives.
template <class C>
class AxisRows {
 public:
  static constexpr std::size_t kSlots = 64;

  // The calling thread's rows.
  static AxisRows& of_thread() {
    static thread_local AxisRows rows;
    return rows;
  }

  // The row of axis a at coordinate x (bits) of table `owner`, and whether it holds that row
  // already; else the caller computes it there.
  C* find(std::uint64_t owner, std::size_t axes, std::size_t width, std::size_t a,
          std::uint64_t bits, bool& kept) {
    if (width_ != width || axes_ != axes) {
      rows_ = reinterpret_cast<C*>(data_.room(axes * kSlots * width * sizeof(C)));
      tags_.assign(axes * kSlots, Tag{0, kEmpty});
      width_ = width;
      axes_ = axes;
    }
    // Four ways: the first of four slots from the hash that holds x, else the next one in turn.
    const std::size_t first = a * kSlots + ((bits * 0x9E3779B97F4A7C15ULL) >> 58) / 4 * 4;
    for (std::size_t way = 0; way < 4; ++way) {
      const Tag& tag = tags_[first + way];
      if (tag.bits == bits && tag.owner == owner) {
        kept = true;
        return rows_ + (first + way) * width;
      }
    }
    const std::size_t slot = first + (next_++ % 4);
    kept = false;
    tags_[slot] = Tag{owner, bits};
    return rows_ + slot * width;
  }

 private:
  static constexpr std::uint64_t kEmpty = 0x7FF8000000000001ULL;  // a NaN: never a coordinate
  struct Tag {
    std::uint64_t owner, bits;
  };
  Uninitialized data_;
  std::vector<Tag> tags_;
  C* rows_ = nullptr;
  std::size_t width_ = 0, axes_ = 0, next_ = 0;
};

// Room for a row of C that a thread computes (a row past the table, a multi-axis row, the row of
// a scaled job), reused from token to token and not initialised: up to kInline values in the
// walk's own frame (every row of a current model, multi-axis ones with their coordinates' rows
// included), more on the heap. At one token, a 512-byte row allocated and zeroed on the heap
// took a tenth of a call past the table.
template <class C>
class Scratch {
 public:
  static constexpr std::size_t kInline = 2048 / sizeof(C) < 512 ? 512 : 2048 / sizeof(C);

  C* room(std::size_t n) {
    if (n <= kInline) return inline_;
    return reinterpret_cast<C*>(heap_.room(n * sizeof(C)));
  }

 private:
  alignas(64) C inline_[kInline];
  Uninitialized heap_;
};

// Head h of row r of a view, as the walk reads it (src) or writes it (dst).
inline const unsigned char* source_head(const Geometry& view, std::size_t r, std::size_t h) {
  return reinterpret_cast<const unsigned char*>(view.address(r, h));
}
inline unsigned char* destination_head(const Geometry& view, std::size_t r, std::size_t h) {
  return reinterpret_cast<unsigned char*>(view.address(r, h));
}
// The kernel on `count` heads at x (head n at x + n·x_stride bytes, elements of e bytes) into dst
// (head n at dst + n·dst_stride bytes), and the coordinates outside the slice copied, but for
// heads that are their own destination; with copy_outside, converted (dst holds another type
// than x, a cache's, of dst_element bytes).
inline void rotate_raw(Kernel kernel, const unsigned char* x, std::size_t x_stride, std::size_t e,
                       std::size_t count, unsigned char* dst, std::size_t dst_stride,
                       std::size_t dst_element, CopyOutside copy_outside, const void* row,
                       const Slice& slice, bool inverse) {
  kernel(
      AnyHeads{x + slice.offset * e, x_stride, dst + slice.offset * dst_element, dst_stride, count},
      row, slice, inverse);
  if (slice.whole()) return;
  if (copy_outside != nullptr) {
    copy_outside(x, x_stride, dst, dst_stride, count, slice);
  } else if (x != dst || x_stride != dst_stride) {
    copy_outside_slice(x, x_stride, dst, dst_stride, count, e, slice);
  }
}
// rotate_raw for a run of tokens (the coordinates outside the slice copied for each): their heads
// in `heads` (the first token's) and a token further at each src_token and dst_token bytes,
// each token t against rows[t], by one call of the run kernel; x of e-byte elements into dst of
// the same type.
inline void rotate_run(RunKernel kernel, const AnyHeads& heads, std::size_t e, std::size_t tokens,
                       std::size_t src_token, std::size_t dst_token, const void* const* rows,
                       const Slice& slice, bool inverse) {
  const auto* x = static_cast<const unsigned char*>(heads.src);
  auto* dst = static_cast<unsigned char*>(heads.dst);
  kernel(AnyRun{AnyHeads{x + slice.offset * e, heads.src_stride, dst + slice.offset * e,
                         heads.dst_stride, heads.count},
                tokens, src_token, dst_token, rows},
         slice, inverse);
  if (slice.whole() || (x == dst && heads.src_stride == heads.dst_stride)) return;
  for (std::size_t t = 0; t < tokens; ++t) {
    copy_outside_slice(x + t * src_token, heads.src_stride, dst + t * dst_token, heads.dst_stride,
                       heads.count, e, slice);
  }
}

// The tokens a call gives the run kernel at a time (Core::apply_direct, walk_runs): their rows
// gathered first, then each token's heads rotated by one call of the run kernel.
inline constexpr std::size_t kRunTokens = 16;

// The rows of a run of tokens from t, before `last` and at most kRunTokens of them, into rows,
// and how many (at least one): the source's stored rows, else token t's row alone, computed
// into scratch.
template <class Source>
std::size_t run_rows(const Source& source, std::size_t t, std::size_t last, const void** rows,
                     Scratch<typename Source::Value>& scratch) {
  const std::size_t k = source.stored_rows(t, std::min(last, t + kRunTokens), rows);
  if (k > 0) return k;
  rows[0] = source.row(t, scratch);
  return 1;
}

// The heads [first, first + count) of token t of src, into dst (head n at dst + n·dst_stride
// bytes): the kernel on the slice, and the coordinates outside it copied, but for heads that are
// their own destination. A view may be in place for some heads only: src and dst that share
// their first head but not their head stride (the checks allow a head to be its own
// destination, and other heads to be disjoint).
inline void rotate_heads(Kernel kernel, const Geometry& src, std::size_t t, std::size_t first,
                         std::size_t count, unsigned char* dst, std::size_t dst_stride,
                         std::size_t dst_element, CopyOutside copy_outside, const void* row,
                         const Slice& slice, bool inverse) {
  rotate_raw(kernel, source_head(src, t, first), src.head_stride, src.element, count, dst,
             dst_stride, dst_element, copy_outside, row, slice, inverse);
}

// A normalised job's token t into row r of dst, a group of heads at a time through `buffer`
// (64-aligned: each head's factor r, then a group of heads of T, contiguous): before RoPE, the
// factors of all heads from src, then each group normalised into the buffer and rotated from it
// into dst (by the job's kernel, into the cache's type where it has one); after RoPE, each group
// rotated into the buffer in T (by `same`, the call's kernel from T to T), its factors, scaled
// there, multiplied by the job's scale s(p) where it has one (a QueryScale after an l2_after
// norm), then stored into dst.
ROPE_DETAIL_NOINLINE inline void rotate_normalized(Kernel job_kernel, Kernel same, const Job& job,
                                                   std::size_t t, std::size_t r, const void* row,
                                                   const Slice& slice, bool inverse,
                                                   Uninitialized& buffer) {
  const NormJob& norm = *job.norm;
  const std::size_t heads = job.src.heads, e = job.src.element, bytes = slice.head_size * e;
  const std::size_t group = std::min(heads, norm_group(bytes));
  const std::size_t factor_bytes = (8 * heads + 63) / 64 * 64;
  unsigned char* factors = buffer.room(factor_bytes + group * bytes);
  unsigned char* normalized = factors + factor_bytes;
  const unsigned char* src = source_head(job.src, t, 0);
  unsigned char* dst = destination_head(job.dst, r, 0);
  const std::size_t src_stride = job.src.head_stride, dst_stride = job.dst.head_stride;
  const bool before = norm.before != nullptr;
  if (before) norm.factors(norm, src, src_stride, heads, factors);
  for (std::size_t first = 0; first < heads; first += group) {
    const std::size_t count = std::min(group, heads - first);
    const unsigned char* x = src + first * src_stride;
    unsigned char* y = dst + first * dst_stride;
    if (before) {
      norm.before(norm, src, src_stride, first, count, factors, normalized);
      rotate_raw(job_kernel, normalized, bytes, e, count, y, dst_stride, job.dst.element,
                 job.copy_outside, row, slice, inverse);
    } else {
      rotate_raw(same, x, src_stride, e, count, normalized, bytes, e, nullptr, row, slice, inverse);
      norm.factors(norm, normalized, bytes, count, factors);
      norm.after(norm, normalized, count, factors);
      if (job.scales != nullptr) {  // the whole head: a slice of no pairs leaves it all outside
        job.scale_outside(normalized, bytes, count, Slice{0, 0, slice.head_size, 0}, job.scales[t]);
      }
      norm.store(norm, normalized, count, y, dst_stride);
    }
  }
}

// Streaming stores: a token's heads in groups, each rotated into a 16 KiB buffer by the ordinary
// kernel and copied to dst with non-temporal stores, so that the kernels are compiled once
// whatever the stores. Measured, the extra pass through the buffer costs about what the stores
// save (docs/design.md, "Pay for what you use"). Token t of src goes to row r of dst.
ROPE_DETAIL_COLD ROPE_DETAIL_NOINLINE inline void rotate_streaming(
    Kernel kernel, const Job& job, std::size_t t, std::size_t r, const void* row,
    const Slice& slice, bool inverse, std::vector<unsigned char>& buffer) {
  const std::size_t heads = job.src.heads, bytes = slice.head_size * job.dst.element;
  const std::size_t group = std::max<std::size_t>(1, (16 * 1024) / bytes);
  unsigned char* rotated = room(buffer, std::min(group, heads) * bytes);
  for (std::size_t first = 0; first < heads; first += group) {
    const std::size_t count = std::min(group, heads - first);
    rotate_heads(kernel, job.src, t, first, count, rotated, bytes, job.dst.element,
                 job.copy_outside, row, slice, inverse);
    if (job.dst.head_stride == bytes) {  // the group's heads are contiguous in dst: one copy
      simd::stream_copy(destination_head(job.dst, r, first), rotated, count * bytes);
    } else {
      for (std::size_t n = 0; n < count; ++n) {
        simd::stream_copy(destination_head(job.dst, r, first + n), rotated + n * bytes, bytes);
      }
    }
  }
}

// A job into a quantised cache, token t into row r of dst: the token's heads rotated by the
// job's kernel (and norm), which write float, into `staged` (contiguous heads), then quantised
// into the row. Streaming stores do not apply; the keys' role has no per-token scale.
ROPE_DETAIL_NOINLINE inline void rotate_quantized(Kernel job_kernel, Kernel same, const Job& job,
                                                  std::size_t t, std::size_t r, const void* row,
                                                  const Slice& slice, bool inverse,
                                                  Uninitialized& staged,
                                                  Uninitialized& normalized) {
  const QuantizeJob& q = *job.quantize;
  const std::size_t heads = job.src.heads, bytes = q.head_size * sizeof(float);
  unsigned char* in_float = staged.room(heads * bytes);
  if (job.quantized_source) {  // a shift: the row loaded to float, rotated there in place
    auto* x = reinterpret_cast<float*>(in_float);
    q.load(q, source_head(job.src, t, 0), job.src.head_stride, heads, r, x);
    rotate_raw(job_kernel, in_float, bytes, sizeof(float), heads, in_float, bytes, sizeof(float),
               nullptr, row, slice, inverse);
  } else if (job.norm != nullptr) {
    Job to_float = job;
    to_float.dst = Geometry(
        View<float>::contiguous(reinterpret_cast<float*>(in_float), 1, heads, q.head_size));
    to_float.slots = nullptr;
    rotate_normalized(job_kernel, same, to_float, t, 0, row, slice, inverse, normalized);
  } else {
    rotate_heads(job_kernel, job.src, t, 0, heads, in_float, bytes, sizeof(float), job.copy_outside,
                 row, slice, inverse);
  }
  q.store(q, reinterpret_cast<const float*>(in_float), heads, destination_head(job.dst, r, 0),
          job.dst.head_stride, r);
}

// A values job's token t into row r of dst: its heads converted (`copy`), or for a quantised
// cache converted to float (unless they are float heads one after another already: element size
// 4 is float, the one 4-byte type a quantised cache takes) and then quantised.
ROPE_DETAIL_NOINLINE inline void store_values(const Job& job, std::size_t t, std::size_t r,
                                              std::size_t head_size, Uninitialized& staged) {
  const std::size_t heads = job.src.heads, bytes = head_size * sizeof(float);
  const unsigned char* src = source_head(job.src, t, 0);
  unsigned char* dst = destination_head(job.dst, r, 0);
  if (job.quantize == nullptr) {
    job.copy(src, job.src.head_stride, dst, job.dst.head_stride, heads, head_size);
    return;
  }
  if (job.src.element != sizeof(float) || job.src.head_stride != bytes) {
    unsigned char* in_float = staged.room(heads * bytes);
    job.copy(src, job.src.head_stride, in_float, bytes, heads, head_size);
    src = in_float;
  }
  job.quantize->store(*job.quantize, reinterpret_cast<const float*>(src), heads, dst,
                      job.dst.head_stride, r);
}

// The buffers of a thread's walk, reused from token to token.
template <class C>
struct WalkBuffers {
  Scratch<C> scratch;                 // a row the source computes
  Scratch<C> scaled;                  // the row of a scaled job
  std::vector<unsigned char> buffer;  // streaming stores only
  Uninitialized normalized;           // normalised jobs only
  Uninitialized staged;               // quantised jobs only: a token's heads in float
  Uninitialized gathered;             // strided caches only: a token's heads, contiguous
};

// `count` contiguous heads of head_size elements of E (heads) to their places in a cache row
// whose heads are head_stride bytes apart from dst and whose coordinates `c` places. Runs of 16
// bytes (vLLM's key pages) are copied as one fixed-size block each: a copy of a length known
// only at run time is a call to memcpy per run.
template <class E>
void scatter(const unsigned char* heads, std::size_t count, std::size_t head_size,
             unsigned char* dst, std::size_t head_stride, const Coordinates& c) {
  const std::size_t bytes = head_size * sizeof(E), stride = c.stride * sizeof(E);
  const bool blocks_of_16 = c.run * sizeof(E) == 16 && head_size % c.run == 0;
  for (std::size_t n = 0; n < count; ++n) {
    const unsigned char* x = heads + n * bytes;
    unsigned char* y = dst + n * head_stride;
    if (c.run == 1) {
      for (std::size_t i = 0; i < head_size; ++i) {
        std::memcpy(y + i * stride, x + i * sizeof(E), sizeof(E));
      }
    } else if (blocks_of_16) {
      for (std::size_t i = 0; i < head_size / c.run; ++i)
        std::memcpy(y + i * stride, x + 16 * i, 16);
    } else {
      for (std::size_t i = 0; i < head_size; i += c.run) {
        std::memcpy(y + i / c.run * stride, x + i * sizeof(E),
                    std::min(c.run, head_size - i) * sizeof(E));
      }
    }
  }
}
inline void scatter_heads(const unsigned char* heads, std::size_t count, std::size_t head_size,
                          const Geometry& dst, std::size_t r, const Coordinates& c) {
  unsigned char* first = destination_head(dst, r, 0);
  switch (dst.element) {
    case 1:
      return scatter<std::uint8_t>(heads, count, head_size, first, dst.head_stride, c);
    case 2:
      return scatter<std::uint16_t>(heads, count, head_size, first, dst.head_stride, c);
    case 4:
      return scatter<std::uint32_t>(heads, count, head_size, first, dst.head_stride, c);
    default:
      return scatter<std::uint64_t>(heads, count, head_size, first, dst.head_stride, c);
  }
}

// A job's cache with strided coordinates as the job writes it: every row at `heads`, its heads
// contiguous (head_size elements each), so that the job writes token t's heads there (an int8
// cache's scales still go to row r's entries) for scatter_heads to place.
inline Geometry gathered_rows(const Geometry& cache, unsigned char* heads, std::size_t head_size) {
  Geometry g = cache;
  g.data = reinterpret_cast<std::uintptr_t>(heads);
  g.tokens = cache.rows();
  g.batches = 1;
  g.batch_stride = g.token_stride = g.batch_step = g.token_step = 0;
  g.head_stride = head_size * cache.element;
  g.head_step = head_size;
  g.buffer = View<char>::unknown;
  return g;
}

// One job's token t into row r of its destination (inlined into the walk: a call per job and
// token measured 3 % of a decode step).
template <class C>
ROPE_DETAIL_INLINE void walk_job(const Job& job, Kernel kernel, std::size_t t, std::size_t r,
                                 const void* row, const Slice& slice, bool inverse, bool streaming,
                                 WalkBuffers<C>& b) {
  const Kernel job_kernel = job.kernel != nullptr ? job.kernel : kernel;
  if (job.quantize != nullptr) {
    rotate_quantized(job_kernel, kernel, job, t, r, row, slice, inverse, b.staged, b.normalized);
    return;
  }
  const void* job_row = row;
  // A scale before the kernel, in its row, but after a norm that follows RoPE (which would
  // undo it): s·(a·c − b·s'), s·(b·c + a·s') is the rotation by s·row.
  const bool scale_row =
      job.scales != nullptr && (job.norm == nullptr || job.norm->after == nullptr);
  if (scale_row) {
    const C factor = static_cast<C>(job.scales[t]);
    const C* from = static_cast<const C*>(row);
    C* to = b.scaled.room(2 * slice.pairs);
    for (std::size_t e = 0; e < 2 * slice.pairs; ++e) to[e] = factor * from[e];
    job_row = to;
  }
  if (job.norm != nullptr) {
    rotate_normalized(job_kernel, kernel, job, t, r, job_row, slice, inverse, b.normalized);
  } else if (streaming) {
    rotate_streaming(job_kernel, job, t, r, job_row, slice, inverse, b.buffer);
  } else {
    rotate_heads(job_kernel, job.src, t, 0, job.src.heads, destination_head(job.dst, r, 0),
                 job.dst.head_stride, job.dst.element, job.copy_outside, job_row, slice, inverse);
  }
  if (scale_row && !slice.whole()) {
    job.scale_outside(destination_head(job.dst, r, 0), job.dst.head_stride, job.dst.heads, slice,
                      job.scales[t]);
  }
}

// A job into a cache with strided coordinates: the job as it is into contiguous heads, then
// scattered (streaming stores do not apply).
template <class C>
ROPE_DETAIL_NOINLINE void walk_strided(const Job& job, Kernel kernel, std::size_t t, std::size_t r,
                                       const void* row, const Slice& slice, bool inverse,
                                       WalkBuffers<C>& b) {
  const std::size_t heads = job.dst.heads, head_size = slice.head_size;
  unsigned char* gathered = b.gathered.room(heads * head_size * job.dst.element);
  Job contiguous = job;
  contiguous.dst = gathered_rows(job.dst, gathered, head_size);
  walk_job(contiguous, kernel, t, r, row, slice, inverse, false, b);
  scatter_heads(gathered, heads, head_size, job.dst, r, job.coordinates);
}

// Whether the run kernel of the call's type takes a job: one without a kernel of its own (a
// cache's type), slots, strided coordinates, norm, scale or quantisation, and not of values.
inline bool plain(const Job& job) {
  return job.kernel == nullptr && job.copy_outside == nullptr && job.slots == nullptr &&
         job.coordinates.contiguous() && job.norm == nullptr && job.quantize == nullptr &&
         job.scales == nullptr && job.copy == nullptr && !job.quantized_source;
}

// The tokens [tokens.first, tokens.last) of a plain job in runs: one call of the run kernel for
// each run of stored rows, a run within one sequence of the views (the next one's rows are a
// batch stride further).
template <class Source>
void walk_runs(const Source& source, RunKernel kernel, bool inverse, const Job& job,
               TokenRange tokens, const Slice& slice) {
  Scratch<typename Source::Value> scratch;
  const void* rows[kRunTokens];
  const Geometry &src = job.src, &dst = job.dst;
  for (std::size_t t = tokens.first, k = 0; t < tokens.last; t += k) {
    const std::size_t last = std::min(tokens.last, (t / src.tokens + 1) * src.tokens);
    k = run_rows(source, t, last, rows, scratch);
    const AnyHeads heads{source_head(src, t, 0), src.head_stride, destination_head(dst, t, 0),
                         dst.head_stride, src.heads};
    rotate_run(kernel, heads, src.element, k, src.token_stride, dst.token_stride, rows, slice,
               inverse);
  }
}

// Rotates the tokens [tokens.first, tokens.last) of every job on the calling thread, one plain
// job by the run kernel where the caller gives one. Only the row source is a template argument: a
// program compiles one walk per kind of row (float or double, table or cache), whatever its
// storage types and head sizes.
template <class Source>
void walk(const Source& source, Kernel kernel, bool inverse, bool streaming, const Job* jobs,
          std::size_t job_count, TokenRange tokens, const Slice& slice,
          RunKernel run_kernel = nullptr) {
  if (run_kernel != nullptr && job_count == 1 && !streaming && plain(jobs[0])) {
    if (jobs[0].src.heads != 0) walk_runs(source, run_kernel, inverse, jobs[0], tokens, slice);
    return;
  }
  WalkBuffers<typename Source::Value> b;
  for (std::size_t t = tokens.first; t < tokens.last; ++t) {
    const void* row = source.row(t, b.scratch);
    for (std::size_t i = 0; i < job_count; ++i) {
      const Job& job = jobs[i];
      if (job.src.heads == 0) continue;
      std::size_t r = t;  // the row of dst
      if (job.slots != nullptr) {
        const std::int64_t slot = job.slots->row(t, job.dst.rows(), job.src.tokens);
        if (slot < 0) continue;
        r = static_cast<std::size_t>(slot);
      }
      if (job.coordinates.contiguous()) {
        walk_job(job, kernel, t, r, row, slice, inverse, streaming, b);
      } else {
        walk_strided(job, kernel, t, r, row, slice, inverse, b);
      }
    }
  }
  if (streaming) simd::fence();
}

// The values' pass of a fused call (a job with `copy`, not rotated): every token of range into
// its row, split over threads as a call is. A pass of its own after the queries' and keys': at
// 512 tokens, storing each token's values between its keys and the next token's queries took
// 1.9× the time of the keys' call and then this pass, with half caches (1.3× with q8_0 caches;
// docs/measurements/2026-12-03-amd-epyc-cache-append.md). It needs no cos/sin rows.
inline void store_values_pass(const Job& job, std::size_t head_size, TokenRange range,
                              const Execution& execution) {
  if (job.src.heads == 0) return;
  const std::size_t bytes = 2 * job.src.heads * head_size * job.src.element;
  const std::size_t count = range.last - range.first;
  const std::size_t part_count =
      execution.threads == 1 ? 1 : thread_count(execution, count, bytes * count);
  const bool strided = !job.coordinates.contiguous();
  for_each_part(range, part_count, [&](std::size_t, TokenRange tokens) {
    Uninitialized staged, gathered;
    Job contiguous = job;  // strided: the values' heads as the job writes them, then scattered
    unsigned char* heads = nullptr;
    if (strided) {
      heads = gathered.room(job.dst.heads * head_size * job.dst.element);
      contiguous.dst = gathered_rows(job.dst, heads, head_size);
    }
    for (std::size_t t = tokens.first; t < tokens.last; ++t) {
      std::size_t r = t;
      if (job.slots != nullptr) {
        const std::int64_t slot = job.slots->row(t, job.dst.rows(), job.src.tokens);
        if (slot < 0) continue;
        r = static_cast<std::size_t>(slot);
      }
      store_values(contiguous, t, r, head_size, staged);
      if (strided) scatter_heads(heads, job.dst.heads, head_size, job.dst, r, job.coordinates);
    }
  });
}

// The bytes a call reads and writes in its heads: what it asks of the caches.
inline std::size_t call_bytes(const Job* jobs, std::size_t job_count, std::size_t head_size,
                              TokenRange range) {
  std::size_t bytes_per_token = 0;
  for (std::size_t i = 0; i < job_count; ++i) {
    bytes_per_token += 2 * jobs[i].src.heads * head_size * jobs[i].src.element;
  }
  return bytes_per_token * (range.last - range.first);
}

// How many parts (threads) the tokens of range are split into.
inline std::size_t parts(const Job* jobs, std::size_t job_count, std::size_t head_size,
                         TokenRange range, const Execution& execution) {
  if (execution.threads == 1) return 1;
  return thread_count(execution, range.last - range.first,
                      call_bytes(jobs, job_count, head_size, range));
}

// Calls of more bytes (read and written) than this take each head in one pass (Reach::one_pass):
// more than the second-level cache of the CPUs measured (0.5 to 2 MiB), so that a pass over a
// token's heads costs a trip to the last-level cache or to memory. Calls of more than
// kMemoryBytes (Reach::memory): on a Zen 5 with 32 MiB of L3, the kernels that Reach::memory
// changes were faster from 40 MiB read and written (1024 tokens of 40 heads of 128) and slower at
// 20 MiB. docs/design.md has the measurements.
inline constexpr std::size_t kOnePassBytes = std::size_t{4} << 20;
inline constexpr std::size_t kMemoryBytes = std::size_t{32} << 20;

// Runs a call: its tokens split over threads, each part walked with the same source (and the
// run kernel of the call's type, where the caller gives one).
template <class Source>
void run(const Source& source, Kernel kernel, const Job* jobs, std::size_t job_count,
         const Slice& slice, TokenRange range, Direction direction, const Execution& execution,
         RunKernel run_kernel = nullptr) {
  const bool inverse = direction == Direction::inverse;
  // No head in any view: nothing to rotate, and no row to compute for each of the tokens (a view
  // of 2^33 tokens with no heads would otherwise cost a row per token).
  bool any_heads = false;
  for (std::size_t i = 0; i < job_count; ++i) any_heads = any_heads || jobs[i].dst.heads != 0;
  if (!any_heads) return;
  // (A one-token call, a decode step's, does not look: it is never that large.)
  const Slice* call_slice = &slice;
  Slice reaching;
  if (range.last - range.first > 1) {
    const std::size_t bytes = call_bytes(jobs, job_count, slice.head_size, range);
    if (bytes > kOnePassBytes) {
      reaching = slice;
      reaching.reach = bytes > kMemoryBytes ? Reach::memory : Reach::one_pass;
      call_slice = &reaching;
    }
  }
  for_each_part(range, parts(jobs, job_count, slice.head_size, range, execution),
                [&](std::size_t, TokenRange tokens) {
                  walk(source, kernel, inverse, execution.streaming_stores, jobs, job_count, tokens,
                       *call_slice, run_kernel);
                });
}

}  // namespace detail
}  // namespace ROPE_DETAIL_ISA
}  // namespace rope

#endif  // !ROPE_BELOW_CXX17
