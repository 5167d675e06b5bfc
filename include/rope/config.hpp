// How the library reports errors, and the tag that skips the checks of a call. The macro may be
// defined by the user before the first include of any rope header.
//
//   ROPE_THROW(Exception, message)  raise a precondition failure. The default throws
//                                   `Exception(message)`; when exceptions are disabled
//                                   (-fno-exceptions) it prints the message and aborts.
#pragma once

#if !defined(__cplusplus) || \
    (__cplusplus < 201703L && !(defined(_MSVC_LANG) && _MSVC_LANG >= 201703L))
#error \
    "rope needs C++17 or later: compile with -std=c++17 (CMake: target_link_libraries(... rope::rope) requests it)"
#define ROPE_BELOW_CXX17 1
#else

#include <cstdarg>
#include <cstdio>
#include <stdexcept>
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

#if defined(__GNUC__) || defined(__clang__)
#define ROPE_DETAIL_PRINTF(format_index, first_argument) \
  __attribute__((format(printf, format_index, first_argument)))
// Code that runs once per configuration (θ, the table, the axis maps) or only on an error:
// compiled for size, which halves what it costs a user's translation unit to compile.
#define ROPE_DETAIL_COLD __attribute__((cold))
// A function called from several templates, compiled once rather than into each of them.
#define ROPE_DETAIL_NOINLINE __attribute__((noinline))
#else
#define ROPE_DETAIL_PRINTF(format_index, first_argument)
#define ROPE_DETAIL_COLD
#define ROPE_DETAIL_NOINLINE
#endif

// Error messages, printf-style. Every check of the library reports through these two calls, so
// that a check costs one call at its site, not the code of a chain of std::string operations
// (which made up most of a user's compile time).
ROPE_DETAIL_COLD inline std::string vformat(const char* format, std::va_list arguments) {
  std::va_list copy;
  va_copy(copy, arguments);
  const int size = std::vsnprintf(nullptr, 0, format, copy);
  va_end(copy);
  std::string text(size > 0 ? static_cast<std::size_t>(size) : 0, '\0');
  std::vsnprintf(&text[0], text.size() + 1, format, arguments);
  return text;
}

// Throws std::invalid_argument (through ROPE_THROW) with the formatted message.
[[noreturn]] ROPE_DETAIL_COLD inline void invalid(const char* format, ...) ROPE_DETAIL_PRINTF(1, 2);
inline void invalid(const char* format, ...) {
  std::va_list arguments;
  va_start(arguments, format);
  const std::string message = vformat(format, arguments);
  va_end(arguments);
  ROPE_THROW(std::invalid_argument, message);
}

// Throws std::out_of_range (through ROPE_THROW) with the formatted message.
[[noreturn]] ROPE_DETAIL_COLD inline void out_of_range(const char* format, ...)
    ROPE_DETAIL_PRINTF(1, 2);
inline void out_of_range(const char* format, ...) {
  std::va_list arguments;
  va_start(arguments, format);
  const std::string message = vformat(format, arguments);
  va_end(arguments);
  ROPE_THROW(std::out_of_range, message);
}

// A double for a message, with an exponent when it is very large or small ("1e+300"), where
// std::to_string would print 300 digits, or 0.000000 for 1e-300.
ROPE_DETAIL_COLD inline std::string number(double value) {
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

#endif  // C++17
