// The trailing choices of a call: its direction, which tokens, on how many threads, which stores.
#pragma once

#include <rope/config.hpp>
#if !defined(ROPE_BELOW_CXX17)  // config.hpp stops older standards with one #error

#include <cstddef>
#include <optional>

#include <rope/layout.hpp>

namespace rope {
inline namespace ROPE_DETAIL_ISA {

/// The tokens [first, last) of a call, counted over the batch (View::rows()). An engine with its
/// own thread pool rotates a batch by giving each worker a disjoint range; calls on disjoint
/// ranges may run concurrently on one Rotary.
struct TokenRange {
  std::size_t first = 0;
  std::size_t last = 0;
};

/// How a call runs. The defaults (the calling thread, ordinary stores) suit a decode step and
/// engines that split work themselves.
struct Execution {
  /// Threads to split the tokens over, the calling thread included; 0 means one per hardware
  /// thread (std::thread::hardware_concurrency()). Compiled with OpenMP, the threads are OpenMP's
  /// (kept between calls); otherwise each extra one is a thread started for the call (a POSIX
  /// thread, or a std::thread where <pthread.h> is missing or ROPE_USE_STD_THREAD is defined in
  /// every translation unit). Each extra
  /// thread is used only when every thread gets at least min_bytes_per_thread bytes to read and
  /// write, so small calls (one decode token) stay on the calling thread.
  std::size_t threads = 1;
  /// The least work worth a thread, in bytes read plus written; 0 chooses by implementation:
  /// 1 MiB with OpenMP, 16 MiB with threads started per call (docs/performance.md has the
  /// measurements).
  std::size_t min_bytes_per_thread = 0;
  /// Out of place only: write dst with non-temporal (streaming) stores, which send the data to
  /// memory without first reading dst into the cache. Each token is rotated into a small buffer
  /// and copied out with streaming stores, bit for bit as ordinary stores would write it (when
  /// that pays: docs/performance.md). Requires dst aligned to 64 bytes and src ≠ dst.
  bool streaming_stores = false;
};

/// The options of one call, after its buffers and positions: every rotating member takes one,
/// defaulted. A Direction, a TokenRange or an Execution converts to the Call of that one choice:
///
///     rot.apply(src, dst, positions, rope::Direction::inverse);
///     rot.apply(src, dst, positions, rope::TokenRange{0, 16});
///     rot.apply(src, dst, positions, {rope::Direction::forward, rope::TokenRange{0, 16},
///     execution});
struct Call {
  /// R_m, or its inverse R_mᵀ (un-rotating, and the backward pass).
  Direction direction = Direction::forward;
  /// The tokens to rotate (each still at its own position); all tokens when empty.
  std::optional<TokenRange> tokens{};
  /// Threads and stores.
  Execution execution{};

  Call() = default;
  Call(Direction direction_,  // NOLINT(google-explicit-constructor)
       std::optional<TokenRange> tokens_ = {}, const Execution& execution_ = {}) noexcept
      : direction(direction_), tokens(tokens_), execution(execution_) {}
  Call(TokenRange tokens_) noexcept  // NOLINT(google-explicit-constructor)
      : tokens(tokens_) {}
  Call(const Execution& execution_) noexcept  // NOLINT(google-explicit-constructor)
      : execution(execution_) {}

  /// The tokens of a call of `rows` tokens: `tokens`, or all of them.
  TokenRange range(std::size_t rows) const noexcept { return tokens.value_or(TokenRange{0, rows}); }
};

}  // namespace ROPE_DETAIL_ISA
}  // namespace rope

#endif  // !ROPE_BELOW_CXX17
