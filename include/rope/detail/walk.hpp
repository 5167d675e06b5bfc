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
#include <vector>

#include <Eigen/Core>

#include <rope/detail/kernels.hpp>
#include <rope/detail/packet.hpp>
#include <rope/detail/threads.hpp>
#include <rope/execution.hpp>
#include <rope/layout.hpp>
#include <rope/scalar.hpp>
#include <rope/view.hpp>

namespace rope::detail {

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

// Copies the coordinates of heads [first, first + count) of token t outside the slice, from
// src to `to` (head n at to + n·to_stride).
template <class T>
void copy_outside_slice(const View<const T>& src, std::size_t t, std::size_t first,
                        std::size_t count, T* to, std::size_t to_stride, const Slice& slice) {
  const std::size_t end = slice.offset + slice.rotary_dim;
  for (std::size_t n = 0; n < count; ++n) {
    const T* x = src.head(t, first + n);
    T* y = to + n * to_stride;
    std::copy(x, x + slice.offset, y);
    std::copy(x + end, x + slice.head_size, y + end);
  }
}

// A kernel of walk's: rotate_interleaved or rotate_half_split, for one head size.
template <class T>
using Kernel = void (*)(const TokenHeads<T>&, const compute_t<T>*, Index, bool);

// Streaming stores: rotates a group of heads of token t into `buffer` with the ordinary kernel,
// then copies each head to dst with non-temporal stores, so that the kernels are compiled once
// whatever the stores. Measured, the extra pass through the buffer costs about what the stores
// save (docs/design.md, "Pay for what you use").
template <class T>
void rotate_streaming(Kernel<T> kernel, const Job<T>& job, std::size_t t, const compute_t<T>* row,
                      const Slice& slice, bool inverse,
                      std::vector<T, Eigen::aligned_allocator<T>>& buffer) {
  const std::size_t d = slice.head_size, heads = job.src.heads();
  const std::size_t group = std::max<std::size_t>(1, (16 * 1024) / (d * sizeof(T)));
  buffer.resize(std::min(group, heads) * d);
  for (std::size_t first = 0; first < heads; first += group) {
    const std::size_t count = std::min(group, heads - first);
    kernel(TokenHeads<T>{job.src.head(t, first) + slice.offset, job.src.head_stride(),
                         buffer.data() + slice.offset, d, count},
           row, static_cast<Index>(slice.rotary_dim / 2), inverse);
    if (!slice.whole()) copy_outside_slice(job.src, t, first, count, buffer.data(), d, slice);
    if (job.dst.head_stride() == d) {  // the group's heads are contiguous in dst: one copy
      simd::stream_copy(job.dst.head(t, first), buffer.data(), count * d * sizeof(T));
    } else {
      for (std::size_t n = 0; n < count; ++n) {
        simd::stream_copy(job.dst.head(t, first + n), buffer.data() + n * d, d * sizeof(T));
      }
    }
  }
}

// Rotates the tokens [tokens.first, tokens.last) of every job on the calling thread.
template <int Half, class T, class Source>
void walk(const Source& source, Layout layout, bool inverse, bool streaming, const Job<T>* jobs,
          std::size_t job_count, TokenRange tokens, const Slice& slice) {
  using C = compute_t<T>;
  const Kernel<T> kernel =
      layout == Layout::interleaved ? &rotate_interleaved<Half, T> : &rotate_half_split<Half, T>;
  const auto half = static_cast<Index>(slice.rotary_dim / 2);
  std::vector<C> scratch;                              // a row the source computes
  std::vector<T, Eigen::aligned_allocator<T>> buffer;  // streaming stores only
  for (std::size_t t = tokens.first; t < tokens.last; ++t) {
    const C* row = source.row(t, scratch);
    for (std::size_t i = 0; i < job_count; ++i) {
      const Job<T>& job = jobs[i];
      const std::size_t heads = job.src.heads();
      if (heads == 0) continue;
      if (streaming) {
        rotate_streaming(kernel, job, t, row, slice, inverse, buffer);
        continue;
      }
      kernel(TokenHeads<T>{job.src.head(t, 0) + slice.offset, job.src.head_stride(),
                           job.dst.head(t, 0) + slice.offset, job.dst.head_stride(), heads},
             row, half, inverse);
      if (!slice.whole() && job.src.data() != job.dst.data()) {
        copy_outside_slice(job.src, t, 0, heads, job.dst.head(t, 0), job.dst.head_stride(), slice);
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

}  // namespace rope::detail

#endif  // !ROPE_BELOW_CXX17
