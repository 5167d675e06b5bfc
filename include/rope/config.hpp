// How the library reports errors, and the tag that skips the checks of a call. The macro may be
// defined by the user before the first include of any rope header.
//
//   ROPE_THROW(Exception, message)  raise a precondition failure. The default throws
//                                   `Exception(message)`; when exceptions are disabled
//                                   (-fno-exceptions) it prints the message and aborts.
#pragma once

#include <cstdio>
#include <string>

#ifndef ROPE_THROW
#if defined(__cpp_exceptions) || defined(__EXCEPTIONS)
#define ROPE_THROW(Exception, message) throw Exception(message)
#else
#include <cstdio>
#include <cstdlib>
#define ROPE_THROW(Exception, message)                          \
  do {                                                          \
    std::fprintf(stderr, "%s\n", std::string(message).c_str()); \
    std::abort();                                               \
  } while (false)
#endif
#endif

namespace rope {

namespace detail {

// A double for a message, with an exponent when it is very large or small ("1e+300"), where
// std::to_string would print 300 digits, or 0.000000 for 1e-300.
inline std::string number(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", value);
  return text;
}

}  // namespace detail

/// Tag of the entry points that skip every argument check of a call (`rope::unchecked`).
///
/// For an engine's hot path that has validated its buffers and positions once: the checks of a
/// batch call are O(tokens), and O(tokens · heads) for src and dst that interleave with
/// different strides. An unchecked call with arguments the checked call would reject is
/// undefined behaviour; docs/errors.md lists what is skipped. The checks of construction
/// always run.
struct Unchecked {
  explicit constexpr Unchecked() = default;
};
inline constexpr Unchecked unchecked{};

}  // namespace rope
