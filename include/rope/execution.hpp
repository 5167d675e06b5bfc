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
  /// std::thread::hardware_concurrency(). Compiled with OpenMP, the threads are OpenMP's (kept
  /// between calls); otherwise each extra one is a std::thread started for the call. Each extra
  /// thread is used only when every thread gets at least min_bytes_per_thread bytes to read and
  /// write, so small calls (one decode token) stay on the calling thread.
  std::size_t threads = 1;
  /// The least work worth a thread, in bytes read plus written; 0 chooses by implementation:
  /// 1 MiB with OpenMP, 16 MiB with std::thread (docs/performance.md has the measurements).
  std::size_t min_bytes_per_thread = 0;
  /// Out of place only: write dst with non-temporal (streaming) stores, which send the data to
  /// memory without first reading dst into the cache. Faster for buffers much larger than the
  /// last-level cache that are not read again soon (0.68–0.84× of ordinary stores at 80 MiB);
  /// no gain for buffers near the cache size (0.75–1.2× at 512 tokens; docs/performance.md).
  /// Requires dst aligned to 64 bytes and src ≠ dst.
  bool streaming_stores = false;
};

}  // namespace rope
