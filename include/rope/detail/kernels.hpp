// The vectorised kernels: rotate one head, and walk a batch of heads token by token.
//
// Every kernel computes, for each pair (a, b) of a head and its table entry (c, s) = (cos φ, sin φ):
//
//     forward  R_m:   (a, b) -> (a·c − b·s,  b·c + a·s)
//     inverse  R_mᵀ:  (a, b) -> (a·c + b·s,  b·c − a·s)      (R_mᵀ = R_{−m}: s negated)
//
// x and y may be the same head (in place): each kernel reads a pair before it writes it.
#pragma once

#include <complex>
#include <cstddef>

#include <Eigen/Core>
#include <rope/layout.hpp>
#include <rope/table.hpp>
#include <rope/view.hpp>

namespace rope::detail {

// The half_split main loop moves 64 bytes of each half per step: two AVX registers, four SSE.
template <class T>
inline constexpr Eigen::Index kBlock = 64 / static_cast<Eigen::Index>(sizeof(T));

// +1 forward, −1 inverse: the factor on the sin half of the table.
template <Direction D, class T>
inline constexpr T kSinSign = D == Direction::forward ? T(1) : T(-1);

// half_split: pair j is (x[j], x[j + h]), h = d/2; table row = [c0 .. c_{h−1} | s0 .. s_{h−1}].
//
//   x    = [ a0 a1 .. a_{h−1} | b0 b1 .. b_{h−1} ]
//   y    = [ a·c − b·s        | b·c + a·s        ]     (lane by lane: no shuffle)
//
// Half is h when the head size is fixed at compile time (the loops then unroll), else Dynamic.
template <int Half, Direction D, class T>
inline void rotate_half_split(const T* x, T* y, const T* row, Eigen::Index half) {
  using Block = Eigen::Array<T, kBlock<T>, 1>;
  const Eigen::Index h = Half == Eigen::Dynamic ? half : Half;
  const T* cos = row;
  const T* sin = row + h;

  // Main loop: kBlock pairs at a time, loaded into registers before y is written.
  Eigen::Index j = 0;
  for (; j + kBlock<T> <= h; j += kBlock<T>) {
    const Block a = Block::Map(x + j), b = Block::Map(x + h + j);
    const Block c = Block::Map(cos + j), s = kSinSign<D, T> * Block::Map(sin + j);
    Block::Map(y + j) = a * c - b * s;
    Block::Map(y + h + j) = b * c + a * s;
  }
  // Remainder: the last h mod kBlock pairs; compiled out when a fixed h is a multiple of kBlock.
  if constexpr (Half == Eigen::Dynamic || Half % kBlock<T> != 0) {
    for (; j < h; ++j) {
      const T a = x[j], b = x[h + j];
      const T c = cos[j], s = kSinSign<D, T> * sin[j];
      y[j] = a * c - b * s;
      y[h + j] = b * c + a * s;
    }
  }
}

// interleaved: pair j is (x[2j], x[2j+1]), the complex number z_j = x[2j] + i·x[2j+1], and the
// table row [c0 s0 c1 s1 ..] is e^{i·φ_j}. The rotation is the complex product
//
//   y_j = z_j · e^{iφ_j}        (inverse: z_j · conj(e^{iφ_j}))
//
// which Eigen vectorises: per register, [a0 b0 a1 b1 ..] times duplicated cos [c0 c0 c1 c1 ..]
// plus the pair-swapped [b0 a0 b1 a1 ..] times [−s0 s0 −s1 s1 ..].
// std::complex<T> has the size and alignment of T[2], so any T* with even offset may be read as
// complex pairs (docs/design.md).
template <int Half, Direction D, class T>
inline void rotate_interleaved(const T* x, T* y, const T* row, Eigen::Index half) {
  using Pairs = Eigen::Array<std::complex<T>, Half, 1>;
  const Eigen::Map<const Pairs> z(reinterpret_cast<const std::complex<T>*>(x), half);
  const Eigen::Map<const Pairs> e(reinterpret_cast<const std::complex<T>*>(row), half);
  Eigen::Map<Pairs> out(reinterpret_cast<std::complex<T>*>(y), half);
  if constexpr (D == Direction::forward) {
    out = z * e;
  } else {
    out = z * e.conjugate();
  }
}

// The heads one call rotates: src and dst have the same tokens and heads (dst may equal src).
template <class T>
struct Job {
  View<const T> src;
  View<T> dst;
};

// Rotates every head of every job. Tokens are the outer loop, so the table row of a token is
// read from memory once and stays in L1 for all heads of all jobs (q and k in one pass).
// position_of(t) is token t's position, already checked to be inside the table.
template <class Kernel, class T, class PositionOf>
void rotate_tokens(Kernel kernel, const Table<T>& table, PositionOf position_of,
                   const Job<T>* jobs, std::size_t job_count, std::size_t tokens) {
  for (std::size_t t = 0; t < tokens; ++t) {
    const T* row = table.row(static_cast<std::size_t>(position_of(t)));
    for (std::size_t i = 0; i < job_count; ++i) {
      const Job<T>& job = jobs[i];
      for (std::size_t h = 0; h < job.src.heads(); ++h) {
        kernel(job.src.head(t, h), job.dst.head(t, h), row);
      }
    }
  }
}

}  // namespace rope::detail
