// The walk of a call: token by token, each token's row from a row source, every head of every
// job rotated against it by the kernel of the layout.
//
// A row source is any type with
//
//     const C* row(std::size_t token, std::vector<C>& scratch) const;
//
// returning token `token`'s row in the kernels' format (row_format.hpp), C = compute_t<T>. The
// table of a Rotary (with rows past the table and multi-axis rows) and the caller's cos/sin caches
// of a CachedRotary are two such sources (rows.hpp). The walk and the kernels are the same for
// all of them; `scratch` belongs to the calling thread, for a row that has to be computed.
//
// Only the head size (Half: fixed, or Eigen::Dynamic) and the storage type are template
// arguments. The layout, direction and kind of store are read once per call at run time: they
// cost nothing measurable next to heads·d elements per token (docs/design.md), and a program
// compiles two kernels per head size and type, whatever it calls.
#pragma once

#include <rope/config.hpp>
#if !defined(ROPE_BELOW_CXX17)  // config.hpp stops older standards with one #error

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <vector>

#include <Eigen/Core>

#include <rope/detail/kernels.hpp>
#include <rope/detail/packet.hpp>
#include <rope/detail/threads.hpp>
#include <rope/execution.hpp>
#include <rope/layout.hpp>
#include <rope/scalar.hpp>
#include <rope/view.hpp>

namespace rope {
inline namespace ROPE_DETAIL_ISA {
namespace detail {

// The heads one call rotates: src and dst have the same shape (dst may equal src).
template <class T>
struct Job {
  View<const T> src;
  View<T> dst;
};

// Which coordinates of a head rotate: [offset, offset + rotary_dim) of head_size.
struct Slice {
  std::size_t offset;
  std::size_t rotary_dim;
  std::size_t head_size;
  bool whole() const noexcept { return rotary_dim == head_size; }
};

// Copies the coordinates outside the slice of `count` heads of `size`-byte values, head n
// from src + n·src_stride to dst + n·dst_stride (strides in bytes): not a template, so that it
// is compiled once whatever the types.
inline void copy_outside_slice(const void* src, std::size_t src_stride, void* dst,
                               std::size_t dst_stride, std::size_t count, std::size_t size,
                               const Slice& slice) {
  const std::size_t before = slice.offset * size, end = (slice.offset + slice.rotary_dim) * size;
  const std::size_t after = slice.head_size * size - end;
  for (std::size_t n = 0; n < count; ++n) {
    const auto* x = static_cast<const unsigned char*>(src) + n * src_stride;
    auto* y = static_cast<unsigned char*>(dst) + n * dst_stride;
    std::memcpy(y, x, before);
    std::memcpy(y + end, x + end, after);
  }
}

// A kernel of walk's: rotate_interleaved or rotate_half_split, for one head size.
template <class T>
using Kernel = void (*)(const TokenHeads<T>&, const compute_t<T>*, Index, bool);

// The heads [first, first + count) of token t of a job, into dst (head n at dst + n·dst_stride):
// the kernel on the slice, and the coordinates outside it copied unless dst is src.
template <class T>
void rotate_heads(Kernel<T> kernel, const View<const T>& src, std::size_t t, std::size_t first,
                  std::size_t count, T* dst, std::size_t dst_stride, const compute_t<T>* row,
                  const Slice& slice, bool inverse) {
  const T* x = src.head(t, first);
  kernel(TokenHeads<T>{x + slice.offset, src.head_stride(), dst + slice.offset, dst_stride, count},
         row, static_cast<Index>(slice.rotary_dim / 2), inverse);
  if (!slice.whole() && x != dst) {
    copy_outside_slice(x, src.head_stride() * sizeof(T), dst, dst_stride * sizeof(T), count,
                       sizeof(T), slice);
  }
}

// Streaming stores: a token's heads in groups, each rotated into a 16 KiB buffer by the ordinary
// kernel and copied to dst with non-temporal stores, so that the kernels are compiled once
// whatever the stores. Measured, the extra pass through the buffer costs about what the stores
// save (docs/design.md, "Pay for what you use").
template <class T>
void rotate_streaming(Kernel<T> kernel, const Job<T>& job, std::size_t t, const compute_t<T>* row,
                      const Slice& slice, bool inverse, std::vector<unsigned char>& bytes) {
  const std::size_t d = slice.head_size, heads = job.src.heads();
  const std::size_t group = std::max<std::size_t>(1, (16 * 1024) / (d * sizeof(T)));
  bytes.resize(std::min(group, heads) * d * sizeof(T));
  T* buffer = reinterpret_cast<T*>(bytes.data());
  for (std::size_t first = 0; first < heads; first += group) {
    const std::size_t count = std::min(group, heads - first);
    rotate_heads(kernel, job.src, t, first, count, buffer, d, row, slice, inverse);
    if (job.dst.head_stride() == d) {  // the group's heads are contiguous in dst: one copy
      simd::stream_copy(job.dst.head(t, first), buffer, count * d * sizeof(T));
    } else {
      for (std::size_t n = 0; n < count; ++n) {
        simd::stream_copy(job.dst.head(t, first + n), buffer + n * d, d * sizeof(T));
      }
    }
  }
}

// Rotates the tokens [tokens.first, tokens.last) of every job on the calling thread.
template <int Half, class T, class Source>
void walk(const Source& source, Layout layout, bool inverse, bool streaming, const Job<T>* jobs,
          std::size_t job_count, TokenRange tokens, const Slice& slice) {
  const Kernel<T> kernel =
      layout == Layout::interleaved ? &rotate_interleaved<Half, T> : &rotate_half_split<Half, T>;
  std::vector<compute_t<T>> scratch;  // a row the source computes
  std::vector<unsigned char> bytes;   // streaming stores only
  for (std::size_t t = tokens.first; t < tokens.last; ++t) {
    const compute_t<T>* row = source.row(t, scratch);
    for (std::size_t i = 0; i < job_count; ++i) {
      const Job<T>& job = jobs[i];
      if (job.src.heads() == 0) continue;
      if (streaming) {
        rotate_streaming(kernel, job, t, row, slice, inverse, bytes);
      } else {
        rotate_heads(kernel, job.src, t, 0, job.src.heads(), job.dst.head(t, 0),
                     job.dst.head_stride(), row, slice, inverse);
      }
    }
  }
  if (streaming) simd::fence();
}

// How many parts (threads) the tokens of range are split into.
template <class T>
std::size_t parts(const Job<T>* jobs, std::size_t job_count, std::size_t head_size,
                  TokenRange range, const Execution& execution) {
  if (execution.threads == 1) return 1;
  std::size_t bytes_per_token = 0;
  for (std::size_t i = 0; i < job_count; ++i) {
    bytes_per_token += 2 * jobs[i].src.heads() * head_size * sizeof(T);
  }
  const std::size_t count = range.last - range.first;
  return thread_count(execution, count, bytes_per_token * count);
}

// Runs a call: its tokens split over threads, each part walked with the same source.
template <int Half, class T, class Source>
void run(const Source& source, Layout layout, const Job<T>* jobs, std::size_t job_count,
         const Slice& slice, TokenRange range, Direction direction, const Execution& execution) {
  const bool inverse = direction == Direction::inverse;
  for_each_part(range, parts(jobs, job_count, slice.head_size, range, execution),
                [&](std::size_t, TokenRange tokens) {
                  walk<Half>(source, layout, inverse, execution.streaming_stores, jobs, job_count,
                             tokens, slice);
                });
}

}  // namespace detail
}  // namespace ROPE_DETAIL_ISA
}  // namespace rope

#endif  // !ROPE_BELOW_CXX17
