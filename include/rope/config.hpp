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
#include <cstddef>
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

// ---- the instruction set ------------------------------------------------------------------------
// Everything the library defines lives in the inline namespace rope::ROPE_DETAIL_ISA, named after
// the instruction-set features the translation unit is compiled for (as Highway names a namespace
// per target). Code spells rope::Rotary as always; but translation units compiled for different
// instruction sets (-mavx2 in one, -mavx512f in another, picked at run time) define different
// symbols, so the linker cannot keep an AVX-512 body for a caller on a CPU without AVX-512. The
// name is the widest vector extension, then each feature that changes the generated code or its
// bits (FMA contraction, F16C, BF16, FP16), then _novec under EIGEN_DONT_VECTORIZE, e.g.
// avx512_fma_f16c_bf16, avx2_fma_f16c, sse2, neon. rope::instruction_set() returns it.
#if defined(__AVX512F__)
#define ROPE_DETAIL_ISA_TIER avx512
#elif defined(__AVX2__)
#define ROPE_DETAIL_ISA_TIER avx2
#elif defined(__AVX__)
#define ROPE_DETAIL_ISA_TIER avx
#elif defined(__SSE4_1__)
#define ROPE_DETAIL_ISA_TIER sse4
#elif defined(__SSE2__) || defined(__x86_64__)
#define ROPE_DETAIL_ISA_TIER sse2
#elif defined(__ARM_FEATURE_SVE)
#define ROPE_DETAIL_ISA_TIER sve
#elif defined(__ARM_NEON) || defined(__aarch64__)
#define ROPE_DETAIL_ISA_TIER neon
#else
#define ROPE_DETAIL_ISA_TIER generic
#endif
#if defined(__FMA__) || defined(__ARM_FEATURE_FMA)
#define ROPE_DETAIL_ISA_FMA _fma
#else
#define ROPE_DETAIL_ISA_FMA
#endif
#if defined(__F16C__)
#define ROPE_DETAIL_ISA_F16 _f16c
#else
#define ROPE_DETAIL_ISA_F16
#endif
#if defined(__AVX512BF16__) || defined(__ARM_FEATURE_BF16)
#define ROPE_DETAIL_ISA_BF16 _bf16
#else
#define ROPE_DETAIL_ISA_BF16
#endif
#if defined(__AVX512FP16__) || defined(__ARM_FEATURE_FP16_VECTOR_ARITHMETIC)
#define ROPE_DETAIL_ISA_FP16 _fp16
#else
#define ROPE_DETAIL_ISA_FP16
#endif
#if defined(EIGEN_DONT_VECTORIZE)
#define ROPE_DETAIL_ISA_VEC _novec
#else
#define ROPE_DETAIL_ISA_VEC
#endif
#define ROPE_DETAIL_PASTE(a, b, c, d, e, f) a##b##c##d##e##f
#define ROPE_DETAIL_EXPAND(a, b, c, d, e, f) ROPE_DETAIL_PASTE(a, b, c, d, e, f)
#define ROPE_DETAIL_ISA                                                              \
  ROPE_DETAIL_EXPAND(ROPE_DETAIL_ISA_TIER, ROPE_DETAIL_ISA_FMA, ROPE_DETAIL_ISA_F16, \
                     ROPE_DETAIL_ISA_BF16, ROPE_DETAIL_ISA_FP16, ROPE_DETAIL_ISA_VEC)
#define ROPE_DETAIL_STRING(x) #x
#define ROPE_DETAIL_XSTRING(x) ROPE_DETAIL_STRING(x)

namespace rope {
inline namespace ROPE_DETAIL_ISA {

/// The instruction set this translation unit's rope code is compiled for: the name of the inline
/// namespace everything in rope lives in (e.g. "avx2_fma_f16c"; see ROPE_DETAIL_ISA above).
constexpr const char* instruction_set() noexcept { return ROPE_DETAIL_XSTRING(ROPE_DETAIL_ISA); }

namespace detail {

#if defined(__GNUC__) || defined(__clang__)
#define ROPE_DETAIL_PRINTF(format_index, first_argument) \
  __attribute__((format(printf, format_index, first_argument)))
// Code that runs once per configuration (θ, the table, the axis maps) or only on an error:
// compiled for size, which halves what it costs a user's translation unit to compile.
#define ROPE_DETAIL_COLD __attribute__((cold))
// A function called from several templates, compiled once rather than into each of them.
#define ROPE_DETAIL_NOINLINE __attribute__((noinline))
// A few comparisons on a call's path, and the layers between a fused call and its walk, that the
// compiler would otherwise call out of line (each a copy of the call's jobs through memory).
#define ROPE_DETAIL_INLINE __attribute__((always_inline)) inline
// Between a kernel's loads whose order matters to the caches: the compiler issues the memory
// accesses before it ahead of those after it (it may move registers' arithmetic across).
#define ROPE_DETAIL_IN_ORDER __asm__ __volatile__("" : : : "memory")
#else
#define ROPE_DETAIL_PRINTF(format_index, first_argument)
#define ROPE_DETAIL_COLD
#define ROPE_DETAIL_NOINLINE
#define ROPE_DETAIL_INLINE inline
#define ROPE_DETAIL_IN_ORDER
#endif
// Before a kernel's loop over the registers of a chunk: unrolled by the compiler's first passes,
// so that an array of registers stays in registers. g++ 12 otherwise unrolls the loop after the
// array has been given memory, and stored the row's chunk to the stack and loaded it back for
// every token (docs/design.md, "The kernels"). Clang unrolls such loops early by itself.
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 8
#define ROPE_DETAIL_UNROLL _Pragma("GCC unroll 32")
#else
#define ROPE_DETAIL_UNROLL
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

/// The largest head size (2^24): checked with the head size's parity before anything of that
/// size is allocated (E01, E02).
inline constexpr std::size_t kMaxHeadSize = std::size_t{1} << 24;

ROPE_DETAIL_COLD inline void check_head_size(std::size_t head_size) {
  if (head_size == 0 || head_size % 2 != 0) {
    invalid("rope: head_size %zu must be even and at least 2", head_size);
  }
  if (head_size > kMaxHeadSize) {
    invalid("rope: head_size %zu exceeds the largest head size %zu (2^24)", head_size,
            kMaxHeadSize);
  }
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

}  // namespace ROPE_DETAIL_ISA
}  // namespace rope

#endif  // C++17
