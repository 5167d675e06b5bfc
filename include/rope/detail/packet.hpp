// The only file that touches Eigen's packet layer (Eigen::internal): SIMD registers of float,
// double or their std::complex, and the handful of operations the kernels need, each under a
// plain name.
//
// These are Eigen internals, not its public API: they are pinned to Eigen 3.4 by the build, and
// each is tested alone (tests/packet_test.cpp), because some generic fallbacks of the packet
// layer are silently the identity for types they were not written for.
//
// load and store also convert: a register of float loaded from Eigen::half or Eigen::bfloat16
// memory is widened on the way in and rounded to nearest even on the way out (one instruction
// each with F16C or AVX-512; element by element where Eigen has no vectorised cast).
//
// Without SIMD (EIGEN_DONT_VECTORIZE, or a target Eigen does not vectorise) every packet is a
// single float, double or complex, and the same kernels run as plain scalar loops.
#pragma once

#include <rope/config.hpp>
#if !defined(ROPE_BELOW_CXX17)  // config.hpp stops older standards with one #error

#include <complex>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include <Eigen/Core>

#if defined(__SSE2__) || defined(__AVX__) || defined(__AVX512F__)
#include <immintrin.h>
#endif

namespace rope {
inline namespace ROPE_DETAIL_ISA {
namespace detail {
namespace simd {

/// A register of T (Packet16f on AVX-512, Packet8f on AVX, Packet4f on SSE, float without SIMD).
template <class T>
using Packet = typename Eigen::internal::packet_traits<T>::type;

/// A register of std::complex<T> (Packet8cf on AVX-512 ...): interleaved pairs [re im re im ..].
template <class T>
using ComplexPacket = typename Eigen::internal::packet_traits<std::complex<T>>::type;

/// Lanes per register.
template <class T>
inline constexpr Eigen::Index kLanes = Eigen::internal::packet_traits<T>::size;

/// SIMD registers the target has (16 for AVX2, 32 for AVX-512): the budget for values the kernels
/// keep in registers across a loop.
inline constexpr int kRegisters = EIGEN_ARCH_DEFAULT_NUMBER_OF_REGISTERS;

/// The element type of a packet: float, double or std::complex of one.
template <class P>
using Element = typename Eigen::internal::unpacket_traits<P>::type;

/// The real type under an element: float for float and std::complex<float>.
template <class E>
using Real = typename Eigen::NumTraits<E>::Real;

/// Values of the real type a packet holds (a complex lane holds two).
template <class P>
constexpr int values_in() {
  const int lanes = Eigen::internal::unpacket_traits<P>::size;
  return Eigen::NumTraits<Element<P>>::IsComplex ? 2 * lanes : lanes;
}
template <class P>
inline constexpr int kValues = values_in<P>();

// ---- 16-bit storage -------------------------------------------------------------------------
// A register of float holds kLanes<float> values. widen() fills one from that many Eigen::half
// or bfloat16 values, narrow() rounds one to nearest even into a register of the 16-bit type.
// Three ways, best first:
//   1. Eigen::half with F16C: vcvtph2ps / vcvtps2ph, called here directly because Eigen 3.4
//      enables its own F16C path only under clang (its EIGEN_HAS_FP16_C test is never true
//      under g++);
//   2. Eigen's vectorised casts (bfloat16 under AVX and AVX-512);
//   3. element by element, through a buffer.

namespace f16c {
#if defined(__F16C__) && defined(__AVX512F__)
inline __m512 widen(const Eigen::half* from, __m512 /*register type*/) {
  return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(from)));
}
inline __m256i narrow(__m512 v) { return _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT); }
inline void store(Eigen::half* to, __m256i v) {
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(to), v);
}
#endif
#if defined(__F16C__) && defined(__AVX__)
inline __m256 widen(const Eigen::half* from, __m256 /*register type*/) {
  return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(from)));
}
inline __m128i narrow(__m256 v) { return _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT); }
inline void store(Eigen::half* to, __m128i v) {
  _mm_storeu_si128(reinterpret_cast<__m128i*>(to), v);
}
#endif
// Without F16C these are never called (conversion() is not f16c); declared for name lookup.
template <class W>
W widen(const Eigen::half* from, W) = delete;
template <class W>
void narrow(W) = delete;
template <class N>
void store(Eigen::half* to, N) = delete;

template <class W>
constexpr bool available(...) {
  return false;
}
template <class W, class = decltype(narrow(std::declval<W>()))>
constexpr bool available(int) {
  return true;
}
}  // namespace f16c

enum class Conversion { none, f16c, eigen_cast, elementwise };

/// How registers of real type R are converted to and from memory of S.
template <class S, class R>
constexpr Conversion conversion() {
  using Eigen::internal::type_casting_traits;
  if constexpr (std::is_same_v<S, R>) {
    return Conversion::none;
  } else if constexpr (std::is_same_v<S, Eigen::half> && std::is_same_v<R, float> &&
                       f16c::available<Packet<float>>(0)) {
    return Conversion::f16c;
  } else if constexpr (type_casting_traits<S, R>::VectorizedCast &&
                       type_casting_traits<R, S>::VectorizedCast &&
                       Eigen::internal::packet_traits<S>::Vectorizable && kLanes<S> == kLanes<R> &&
                       (kLanes<R> > 1)) {
    return Conversion::eigen_cast;
  } else {
    return Conversion::elementwise;
  }
}

/// A register of R from kLanes<R> values of S (f16c and eigen_cast conversions only).
template <class R, class S>
Packet<R> widen(const S* from) {
  if constexpr (conversion<S, R>() == Conversion::f16c) {
    return f16c::widen(from, Packet<R>{});
  } else {
    return Eigen::internal::pcast<Packet<S>, Packet<R>>(Eigen::internal::ploadu<Packet<S>>(from));
  }
}

/// The register of S holding v's lanes rounded to nearest even (f16c and eigen_cast only).
template <class S, class R>
auto narrow(const Packet<R>& v) {
  if constexpr (conversion<S, R>() == Conversion::f16c) {
    return f16c::narrow(v);
  } else {
    return Eigen::internal::pcast<Packet<R>, Packet<S>>(v);
  }
}

template <class S, class R, class N>
void store_narrow(S* to, const N& narrowed) {
  if constexpr (conversion<S, R>() == Conversion::f16c) {
    f16c::store(to, narrowed);
  } else {
    Eigen::internal::pstoreu(to, narrowed);
  }
}

// A complex packet is a register of its real type: [re0 im0 re1 im1 ..].
template <class P>
Packet<Real<Element<P>>> real_register(const P& p) {
  if constexpr (Eigen::NumTraits<Element<P>>::IsComplex) {
    return p.v;
  } else {
    return p;
  }
}
template <class P, class W>
P from_real_register(const W& w) {
  if constexpr (Eigen::NumTraits<Element<P>>::IsComplex) {
    return P(w);
  } else {
    return w;
  }
}

// Whether one register of P converts as a whole (its values fill one register of its real type).
template <class S, class P>
constexpr bool converts_in_registers() {
  using R = Real<Element<P>>;
  constexpr Conversion c = conversion<S, R>();
  return (c == Conversion::f16c || c == Conversion::eigen_cast) && kValues<P> == kLanes<R>;
}

/// Loads the kValues<P> values at `from` (any alignment) into a packet P of float, double or
/// their complex. S is the stored type: the packet's real type, or Eigen::half / bfloat16
/// widened to float.
template <class P, class S>
P load(const S* from) {
  using E = Element<P>;
  using R = Real<E>;
  if constexpr (std::is_same_v<S, E>) {
    return Eigen::internal::ploadu<P>(from);
  } else if constexpr (std::is_same_v<S, R>) {
    return Eigen::internal::ploadu<P>(reinterpret_cast<const E*>(from));
  } else if constexpr (converts_in_registers<S, P>()) {
    return from_real_register<P>(widen<R>(from));
  } else {
    alignas(64) R values[kValues<P>];
    for (int i = 0; i < kValues<P>; ++i) values[i] = static_cast<R>(from[i]);
    return Eigen::internal::ploadu<P>(reinterpret_cast<const E*>(values));
  }
}

/// Stores a packet's kValues<P> values at `to` (any alignment), rounded to nearest even when S
/// is narrower than the packet's real type.
template <class S, class P>
void store(S* to, const P& value) {
  using E = Element<P>;
  using R = Real<E>;
  if constexpr (std::is_same_v<S, E>) {
    Eigen::internal::pstoreu(to, value);
  } else if constexpr (std::is_same_v<S, R>) {
    Eigen::internal::pstoreu(reinterpret_cast<E*>(to), value);
  } else if constexpr (converts_in_registers<S, P>()) {
    store_narrow<S, R>(to, narrow<S, R>(real_register(value)));
  } else {
    alignas(64) R values[kValues<P>];
    Eigen::internal::pstoreu(reinterpret_cast<E*>(values), value);
    for (int i = 0; i < kValues<P>; ++i) to[i] = static_cast<S>(values[i]);
  }
}

// ---- streaming stores -----------------------------------------------------------------------
// Non-temporal stores send data to memory without first reading the destination's cache lines.
// The kernels never use them: a streaming call rotates each token into a small buffer with the
// ordinary kernels and copies it out with stream_copy (walk.hpp), so a program compiles the
// kernels once whatever its stores. Where the target has no streaming store (without SSE2), the
// copy is an ordinary one.

/// Copies `bytes` bytes, bit for bit, with non-temporal stores to every whole 16-, 32- or
/// 64-byte block of `to` that is aligned to its size (ordinary stores before and after). Call
/// fence() after the last copy, before other threads read the data.
ROPE_DETAIL_NOINLINE inline void stream_copy(void* to, const void* from,
                                             std::size_t bytes) noexcept {
  auto* out = static_cast<unsigned char*>(to);
  const auto* in = static_cast<const unsigned char*>(from);
#if defined(__AVX512F__)
  constexpr std::size_t kBlock = 64;
#elif defined(__AVX__)
  constexpr std::size_t kBlock = 32;
#elif defined(__SSE2__)
  constexpr std::size_t kBlock = 16;
#else
  constexpr std::size_t kBlock = 1;
#endif
  std::size_t head = (kBlock - reinterpret_cast<std::uintptr_t>(out) % kBlock) % kBlock;
  if (head > bytes) head = bytes;
  std::memcpy(out, in, head);
  std::size_t i = head;
#if defined(__AVX512F__)
  for (; i + 64 <= bytes; i += 64) {
    _mm512_stream_si512(reinterpret_cast<__m512i*>(out + i),
                        _mm512_loadu_si512(reinterpret_cast<const void*>(in + i)));
  }
#elif defined(__AVX__)
  for (; i + 32 <= bytes; i += 32) {
    _mm256_stream_si256(reinterpret_cast<__m256i*>(out + i),
                        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + i)));
  }
#elif defined(__SSE2__)
  for (; i + 16 <= bytes; i += 16) {
    _mm_stream_si128(reinterpret_cast<__m128i*>(out + i),
                     _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i)));
  }
#endif
  std::memcpy(out + i, in + i, bytes - i);
}

/// Orders earlier streaming stores before later stores (sfence); nothing without SSE.
inline void fence() noexcept {
#if defined(__SSE2__)
  _mm_sfence();
#endif
}

/// Lane-wise a·b, a + b, a − b; complex lanes multiply as complex numbers.
template <class P>
P mul(const P& a, const P& b) {
  return Eigen::internal::pmul(a, b);
}
template <class P>
P add(const P& a, const P& b) {
  return Eigen::internal::padd(a, b);
}
template <class P>
P sub(const P& a, const P& b) {
  return Eigen::internal::psub(a, b);
}

/// Lane-wise −a.
template <class P>
P negate(const P& a) {
  return Eigen::internal::pnegate(a);
}

/// Lane-wise complex conjugate: [re im ..] → [re −im ..]. Complex packets only: on a real
/// packet Eigen's pconj is the identity.
template <class Z>
Z conjugate(const Z& z) {
  static_assert(Eigen::NumTraits<typename Eigen::internal::unpacket_traits<Z>::type>::IsComplex,
                "rope::detail::simd::conjugate takes a ComplexPacket");
  return Eigen::internal::pconj(z);
}

}  // namespace simd
}  // namespace detail
}  // namespace ROPE_DETAIL_ISA
}  // namespace rope

#endif  // !ROPE_BELOW_CXX17
