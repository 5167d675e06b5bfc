// Splitting a batch's tokens over threads: an OpenMP parallel loop when the translation unit is
// compiled with OpenMP (-fopenmp; its threads persist between calls, so a call costs a wake-up of
// a few microseconds), otherwise a std::thread per extra part (52–60 µs to start and join on the
// machine of docs/performance.md: bench std_thread_start_join).
//
// Like Eigen's configuration macros, the choice must be the same in every translation unit of a
// program: compile all of them with OpenMP or none (docs/performance.md).
#pragma once

#include <rope/config.hpp>
#if !defined(ROPE_BELOW_CXX17)  // config.hpp stops older standards with one #error

#include <algorithm>
#include <cstddef>
#include <memory>
#include <system_error>
#include <thread>

#include <rope/execution.hpp>

#if defined(_OPENMP)
#include <omp.h>
#endif

namespace rope {
inline namespace ROPE_DETAIL_ISA {
namespace detail {

/// Execution::min_bytes_per_thread's default (0): the least work that repays a thread.
#if defined(_OPENMP)
inline constexpr std::size_t kDefaultMinBytesPerThread = std::size_t{1} << 20;
#else
inline constexpr std::size_t kDefaultMinBytesPerThread = std::size_t{16} << 20;
#endif

// How many threads to use: what was asked (0: one per hardware thread), but no more than one
// per token and no more than one per min_bytes_per_thread of work.
inline std::size_t thread_count(const Execution& execution, std::size_t tokens, std::size_t bytes) {
  std::size_t threads = execution.threads;
  if (threads == 0) threads = std::max(1U, std::thread::hardware_concurrency());
  const std::size_t least = execution.min_bytes_per_thread == 0 ? kDefaultMinBytesPerThread
                                                                : execution.min_bytes_per_thread;
  const std::size_t by_work = bytes / least;
  return std::max<std::size_t>(1, std::min({threads, tokens, by_work}));
}

// The work of one part, behind a plain function pointer: the thread code below is compiled once
// per program, not once per kind of call.
using PartWork = void (*)(const void* context, std::size_t part, TokenRange range);

// Calls work(context, part, range) for `parts` contiguous, nearly equal ranges covering `tokens`,
// each on its own thread, and returns when all are done. Without OpenMP, part 0 runs on the
// calling thread and the others on new std::threads; a thread that cannot be started has its
// range run on the calling thread instead.
inline void for_each_part(TokenRange tokens, std::size_t parts, PartWork work,
                          const void* context) {
  const std::size_t n = tokens.last - tokens.first;
  const auto range = [&](std::size_t part) {
    return TokenRange{tokens.first + n * part / parts, tokens.first + n * (part + 1) / parts};
  };
#if defined(_OPENMP)
  const auto count = static_cast<std::ptrdiff_t>(parts);
  const int threads = static_cast<int>(parts);
#pragma omp parallel for num_threads(threads) schedule(static, 1)
  for (std::ptrdiff_t part = 0; part < count; ++part) {
    work(context, static_cast<std::size_t>(part), range(static_cast<std::size_t>(part)));
  }
#else
  // Part p > 0 runs on threads[p - 1]; a thread that could not be started stays empty (not
  // joinable), and its part runs here after the parts before it.
  struct Part {
    PartWork work;
    const void* context;
    std::size_t part;
    TokenRange range;
    void operator()() const { work(context, part, range); }
  };
  const std::unique_ptr<std::thread[]> threads(new std::thread[parts - 1]);
  for (std::size_t part = 1; part < parts; ++part) {
#if defined(__cpp_exceptions) || defined(__EXCEPTIONS)
    try {
      threads[part - 1] = std::thread(Part{work, context, part, range(part)});
    } catch (const std::system_error&) {
    }
#else
    threads[part - 1] = std::thread(Part{work, context, part, range(part)});
#endif
  }
  work(context, 0, range(0));
  for (std::size_t part = 1; part < parts; ++part) {
    std::thread& thread = threads[part - 1];
    if (thread.joinable()) {
      thread.join();
    } else {
      work(context, part, range(part));
    }
  }
#endif
}

// Calls work(part, range) for the parts, as above; one part runs inline, with no allocation.
template <class Work>
void for_each_part(TokenRange tokens, std::size_t parts, const Work& work) {
  if (parts <= 1) {
    work(std::size_t{0}, tokens);
    return;
  }
  for_each_part(
      tokens, parts,
      [](const void* context, std::size_t part, TokenRange range) {
        (*static_cast<const Work*>(context))(part, range);
      },
      &work);
}

}  // namespace detail
}  // namespace ROPE_DETAIL_ISA
}  // namespace rope

#endif  // !ROPE_BELOW_CXX17
