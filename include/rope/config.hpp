// How the library reports errors. Both macros may be defined by the user before the first
// include of any rope header.
//
//   ROPE_THROW(Exception, message)  raise a precondition failure. The default throws
//                                   `Exception(message)`; when exceptions are disabled
//                                   (-fno-exceptions) it prints the message and aborts.
#pragma once

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
