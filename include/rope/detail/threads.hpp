// Splitting a batch's tokens over threads: an OpenMP parallel loop when the translation unit is
// compiled with OpenMP (-fopenmp; its threads persist between calls, so a call costs
// a wake-up), otherwise a thread per extra part, started and joined in the call (its cost:
// layout_bench's std_thread_start_join, docs/performance.md). Those are POSIX threads where
// <pthread.h> exists, std::thread elsewhere or with ROPE_USE_STD_THREAD (<thread> costs a user's
// translation unit more to compile than pthread_create: docs/design.md, "Pay for what you use").
//
// Like Eigen's configuration macros, the choice must be the same in every translation unit of a
// program: compile all of them with OpenMP or none, and with ROPE_USE_STD_THREAD or without.
#pragma once

#include <rope/config.hpp>
#if !defined(ROPE_BELOW_CXX17)  // config.hpp stops older standards with one #error

#include <algorithm>
#include <cstddef>
#include <memory>

#include <rope/execution.hpp>

#if defined(ROPE_USE_STD_THREAD) || !__has_include(<pthread.h>)
#define ROPE_DETAIL_STD_THREAD 1
#include <system_error>
#include <thread>
#else
#include <pthread.h>
#include <unistd.h>
#endif

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

// The hardware threads of the machine (at least 1): std::thread::hardware_concurrency(), which
// is sysconf(_SC_NPROCESSORS_ONLN) on POSIX systems.
inline std::size_t hardware_threads() {
#if defined(ROPE_DETAIL_STD_THREAD)
  return std::max(1U, std::thread::hardware_concurrency());
#else
  const long online = sysconf(_SC_NPROCESSORS_ONLN);
  return online > 0 ? static_cast<std::size_t>(online) : 1;
#endif
}

// How many threads to use: what was asked (0: one per hardware thread), but no more than one
// per token and no more than one per min_bytes_per_thread of work.
inline std::size_t thread_count(const Execution& execution, std::size_t tokens, std::size_t bytes) {
  const std::size_t threads = execution.threads == 0 ? hardware_threads() : execution.threads;
  const std::size_t least = execution.min_bytes_per_thread == 0 ? kDefaultMinBytesPerThread
                                                                : execution.min_bytes_per_thread;
  const std::size_t by_work = bytes / least;
  return std::max<std::size_t>(1, std::min({threads, tokens, by_work}));
}

// The work of one part, behind a plain function pointer: the thread code below is compiled once
// per program, not once per kind of call.
using PartWork = void (*)(const void* context, std::size_t part, TokenRange range);

// One part of a call, as a thread runs it.
struct Part {
  PartWork work;
  const void* context;
  std::size_t part;
  TokenRange range;

  // Not allowed to throw, as on a thread of its own: the parts running on other threads must be
  // joined before the call returns.
  void operator()() const noexcept { work(context, part, range); }
};

// Calls work(context, part, range) for `parts` contiguous, nearly equal ranges covering `tokens`,
// each on its own thread, and returns when all are done. Without OpenMP, part 0 runs on the
// calling thread and the others on new threads; a thread that cannot be started has its range
// run on the calling thread instead, after the parts before it.
ROPE_DETAIL_COLD ROPE_DETAIL_NOINLINE inline void for_each_part(TokenRange tokens,
                                                                std::size_t parts, PartWork work,
                                                                const void* context) {
  const std::size_t n = tokens.last - tokens.first;
  const auto part = [&](std::size_t p) {
    return Part{work, context, p,
                TokenRange{tokens.first + n * p / parts, tokens.first + n * (p + 1) / parts}};
  };
#if defined(_OPENMP)
  const auto count = static_cast<std::ptrdiff_t>(parts);
  const int threads = static_cast<int>(parts);
#pragma omp parallel for num_threads(threads) schedule(static, 1)
  for (std::ptrdiff_t p = 0; p < count; ++p) part(static_cast<std::size_t>(p))();
#elif defined(ROPE_DETAIL_STD_THREAD)
  // Part p > 0 runs on threads[p - 1]; one that could not be started stays empty (not joinable).
  const std::unique_ptr<std::thread[]> threads(new std::thread[parts - 1]);
  for (std::size_t p = 1; p < parts; ++p) {
#if defined(__cpp_exceptions) || defined(__EXCEPTIONS)
    try {
      threads[p - 1] = std::thread(part(p));
    } catch (const std::system_error&) {
    }
#else
    threads[p - 1] = std::thread(part(p));
#endif
  }
  part(0)();
  for (std::size_t p = 1; p < parts; ++p) {
    std::thread& thread = threads[p - 1];
    if (thread.joinable()) {
      thread.join();
    } else {
      part(p)();
    }
  }
#else
  // Part p > 0 runs on threads[p - 1] if started[p - 1].
  struct Thread {
    Part part;
    pthread_t id;
    bool started;
    static void* run(void* self) {
      static_cast<const Thread*>(self)->part();
      return nullptr;
    }
  };
  const std::unique_ptr<Thread[]> threads(new Thread[parts - 1]);
  for (std::size_t p = 1; p < parts; ++p) {
    Thread& thread = threads[p - 1];
    thread.part = part(p);
    thread.started = pthread_create(&thread.id, nullptr, &Thread::run, &thread) == 0;
  }
  part(0)();
  for (std::size_t p = 1; p < parts; ++p) {
    const Thread& thread = threads[p - 1];
    if (thread.started) {
      pthread_join(thread.id, nullptr);
    } else {
      thread.part();
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
