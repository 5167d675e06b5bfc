// How a batch call runs: on how many threads, with which stores, over which tokens.
#pragma once

#include <cstddef>

namespace rope {

/// The tokens [first, last) of a batch. An engine with its own thread pool rotates a batch by
/// giving each worker a disjoint range (Rotary::apply(src, dst, positions, range)); calls on
/// disjoint ranges may run concurrently on one Rotary.
struct TokenRange {
  std::size_t first = 0;
  std::size_t last = 0;
};

/// How a batch call runs. The defaults (the calling thread, ordinary stores) suit a decode step
/// and engines that split work themselves.
struct Execution {
  /// Threads to split the tokens over, the calling thread included; 0 means
  /// std::thread::hardware_concurrency(). Each extra thread is started only when every thread
  /// gets at least min_bytes_per_thread bytes to read and write, so small calls (one decode
  /// token) stay on the calling thread.
  std::size_t threads = 1;
  /// The least work worth a thread, in bytes read plus written. Starting and joining a
  /// std::thread costs tens of microseconds, the time to stream about this much memory
  /// (docs/performance.md has the measurement that set it).
  std::size_t min_bytes_per_thread = std::size_t{1} << 20;
  /// Out of place only: write dst with non-temporal (streaming) stores, which send the data to
  /// memory without first reading dst into the cache. Faster for buffers much larger than the
  /// last-level cache that are not read again soon; slower for small ones. Requires dst aligned
  /// to 64 bytes and src ≠ dst.
  bool streaming_stores = false;
};

}  // namespace rope
