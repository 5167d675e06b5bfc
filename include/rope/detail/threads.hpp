// Splitting a batch's tokens over std::threads.
#pragma once

#include <algorithm>
#include <cstddef>
#include <system_error>
#include <thread>
#include <vector>

#include <rope/execution.hpp>

namespace rope::detail {

// How many threads to use: what was asked (0: one per hardware thread), but no more than one
// per token and no more than one per min_bytes_per_thread of work.
inline std::size_t thread_count(const Execution& execution, std::size_t tokens, std::size_t bytes) {
  std::size_t threads = execution.threads;
  if (threads == 0) threads = std::max(1U, std::thread::hardware_concurrency());
  const std::size_t by_work = bytes / std::max<std::size_t>(1, execution.min_bytes_per_thread);
  return std::max<std::size_t>(1, std::min({threads, tokens, by_work}));
}

// Calls work(part, range) for `parts` contiguous, nearly equal ranges covering `tokens`: part 0
// on the calling thread, the others on new threads, joined before returning. A thread that
// cannot be started has its range run on the calling thread instead.
template <class Work>
void for_each_part(TokenRange tokens, std::size_t parts, const Work& work) {
  if (parts <= 1) {  // no allocation on the common path of one thread
    work(std::size_t{0}, tokens);
    return;
  }
  const std::size_t n = tokens.last - tokens.first;
  const auto range = [&](std::size_t part) {
    return TokenRange{tokens.first + n * part / parts, tokens.first + n * (part + 1) / parts};
  };
  std::vector<std::thread> threads;
  std::vector<std::size_t> not_started;
  threads.reserve(parts - 1);
  for (std::size_t part = 1; part < parts; ++part) {
#if defined(__cpp_exceptions) || defined(__EXCEPTIONS)
    try {
      threads.emplace_back(work, part, range(part));
    } catch (const std::system_error&) {
      not_started.push_back(part);
    }
#else
    threads.emplace_back(work, part, range(part));
#endif
  }
  work(0, range(0));
  for (const std::size_t part : not_started) work(part, range(part));
  for (std::thread& thread : threads) thread.join();
}

}  // namespace rope::detail
