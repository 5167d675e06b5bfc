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
// each with F16C, AVX-512 or AArch64; element by element where neither the target nor Eigen has
// a vectorised cast); a register of double stored to float memory is rounded the same way.
//
// Without SIMD (EIGEN_DONT_VECTORIZE, or a target Eigen does not vectorise) every packet is a
// single float, double or complex, and the same kernels run as plain scalar loops.
#pragma once

#include <rope/config.hpp>
#if !defined(ROPE_BELOW_CXX17)  // config.hpp stops older standards with one #error

#include <cmath>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include <Eigen/Core>

#if defined(__SSE2__) || defined(__AVX__) || defined(__AVX512F__)
#include <immintrin.h>
#endif
#if defined(__aarch64__) && defined(__ARM_NEON)
#include <arm_neon.h>
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

// ---- split registers ------------------------------------------------------------------------
// A Split is two registers of float that hold 2·kLanes values of a head or a row in the order
// [values 0, 2, 4, .. | values 1, 3, 5, ..] (native::widen_split). Lane-wise arithmetic does not
// care about the order of lanes as long as every operand is split alike, so the half_split kernel
// runs on a Split as on one register; for interleaved pairs, even = real parts and odd = imaginary
// parts, and complex_mul needs no shuffle. Used where native::splits<S>() (bfloat16 on AVX2 and
// AVX-512).
struct Split {
  Packet<float> even, odd;
};

template <class P>
inline constexpr bool kIsSplit = std::is_same_v<P, Split>;

/// Values of the real type a packet holds (a complex lane holds two, a Split two registers).
template <class P>
constexpr int values_in() {
  if constexpr (kIsSplit<P>) {
    return 2 * kLanes<float>;
  } else {
    const int lanes = Eigen::internal::unpacket_traits<P>::size;
    return Eigen::NumTraits<Element<P>>::IsComplex ? 2 * lanes : lanes;
  }
}
template <class P>
inline constexpr int kValues = values_in<P>();

// ---- 16-bit storage -------------------------------------------------------------------------
// A register of float holds kLanes<float> values. widen() fills one from that many Eigen::half
// or bfloat16 values, narrow() rounds one to nearest even into a register of the 16-bit type.
// Three ways, best first:
//   1. the target's own instructions, called here directly (namespace native):
//      - Eigen::half with F16C: vcvtph2ps / vcvtps2ph (Eigen 3.4 enables its own F16C path only
//        under clang: its EIGEN_HAS_FP16_C test is never true under g++);
//      - AArch64: fcvtl / fcvtn for Eigen::half (vcvt_f32_f16, vcvt_f16_f32), and for bfloat16 a
//        shift to widen and an integer round-to-nearest-even to narrow (Eigen 3.4 has no NEON
//        casts for either type);
//   2. Eigen's vectorised casts (bfloat16 under AVX and AVX-512);
//   3. element by element, through a buffer.

namespace native {
#if defined(__F16C__) && defined(__AVX512F__)
// The zero-masking forms with every lane selected are the same instructions; GCC 12's unmasked
// forms pass an undefined register that -Wmaybe-uninitialized reports in the caller's TU (GCC
// bug 105593).
inline __m512 widen(const Eigen::half* from, __m512 /*register type*/) {
  return _mm512_maskz_cvtph_ps(0xFFFF, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(from)));
}
inline __m256i narrow(const Eigen::half* /*type*/, __m512 v) {
  return _mm512_maskz_cvtps_ph(0xFFFF, v, _MM_FROUND_TO_NEAREST_INT);
}
inline void store(Eigen::half* to, __m256i v) {
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(to), v);
}
#endif
#if defined(__F16C__) && defined(__AVX__)
inline __m256 widen(const Eigen::half* from, __m256 /*register type*/) {
  return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(from)));
}
inline __m128i narrow(const Eigen::half* /*type*/, __m256 v) {
  return _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT);
}
inline void store(Eigen::half* to, __m128i v) {
  _mm_storeu_si128(reinterpret_cast<__m128i*>(to), v);
}
#endif
#if defined(__aarch64__) && defined(__ARM_NEON)
inline float32x4_t widen(const Eigen::half* from, float32x4_t /*register type*/) {
  return vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(reinterpret_cast<const std::uint16_t*>(from))));
}
// Rounds as FPCR says: to nearest even unless a program changed the rounding mode.
inline uint16x4_t narrow(const Eigen::half* /*type*/, float32x4_t v) {
  return vreinterpret_u16_f16(vcvt_f16_f32(v));
}
inline float32x4_t widen(const Eigen::bfloat16* from, float32x4_t /*register type*/) {
  return vreinterpretq_f32_u32(
      vshll_n_u16(vld1_u16(reinterpret_cast<const std::uint16_t*>(from)), 16));
}
// As Eigen's scalar conversion: bits + 0x7fff + (bit 16), the upper half; NaN to 0x7fc0 with
// its sign.
inline uint16x4_t narrow(const Eigen::bfloat16* /*type*/, float32x4_t v) {
  const uint32x4_t bits = vreinterpretq_u32_f32(v);
  const uint32x4_t odd = vandq_u32(vshrq_n_u32(bits, 16), vdupq_n_u32(1));
  const uint16x4_t rounded = vshrn_n_u32(vaddq_u32(bits, vaddq_u32(vdupq_n_u32(0x7fff), odd)), 16);
  const uint16x4_t nan =
      vorr_u16(vdup_n_u16(0x7fc0), vand_u16(vshrn_n_u32(bits, 16), vdup_n_u16(0x8000)));
  return vbsl_u16(vmovn_u32(vmvnq_u32(vceqq_f32(v, v))), nan, rounded);
}
template <class S>
void store(S* to, uint16x4_t v) {
  vst1_u16(reinterpret_cast<std::uint16_t*>(to), v);
}
#endif
// float memory and registers of double (the angle sums' rows, detail/angle_sum.hpp, are
// products in double rounded once to float): Eigen 3.4 has no vectorised cast between the two
// under AVX or AVX-512. The narrowing rounds as MXCSR (FPCR) says: to nearest even unless a
// program changed the rounding mode.
#if defined(__AVX512F__)
inline __m512d widen(const float* from, __m512d /*register type*/) {
  return _mm512_maskz_cvtps_pd(0xFF, _mm256_loadu_ps(from));
}
inline __m256 narrow(const float* /*type*/, __m512d v) { return _mm512_maskz_cvtpd_ps(0xFF, v); }
inline void store(float* to, __m256 v) { _mm256_storeu_ps(to, v); }
#endif
#if defined(__AVX__)
inline __m256d widen(const float* from, __m256d /*register type*/) {
  return _mm256_cvtps_pd(_mm_loadu_ps(from));
}
inline __m128 narrow(const float* /*type*/, __m256d v) { return _mm256_cvtpd_ps(v); }
inline void store(float* to, __m128 v) { _mm_storeu_ps(to, v); }
#endif
#if defined(__aarch64__) && defined(__ARM_NEON)
inline float64x2_t widen(const float* from, float64x2_t /*register type*/) {
  return vcvt_f64_f32(vld1_f32(from));
}
inline float32x2_t narrow(const float* /*type*/, float64x2_t v) { return vcvt_f32_f64(v); }
inline void store(float* to, float32x2_t v) { vst1_f32(to, v); }
#endif
#if defined(EIGEN_VECTORIZE_AVX512) && defined(__AVX512BW__)
#define ROPE_DETAIL_SPLIT_BFLOAT16 1
// 32 bfloat16 values in two registers of float: the even-indexed values and the odd-indexed ones.
// A bfloat16 is the upper half of a float, so widening is one integer instruction per register
// (shift the low half up, or mask the high half). Narrowing: with AVX512_BF16 one vcvtne2ps2bf16
// (both registers rounded to nearest even into one) and one vpermw that puts the values back in
// their order; without it an integer round per register and one masked word blend.
// Why two registers and not one: docs/design.md, "bfloat16 in pairs of registers".
inline void widen_split(const Eigen::bfloat16* from, __m512& even, __m512& odd) {
  const __m512i w = _mm512_loadu_si512(reinterpret_cast<const void*>(from));
  even = _mm512_castsi512_ps(_mm512_maskz_slli_epi32(0xFFFF, w, 16));
  odd = _mm512_castsi512_ps(_mm512_and_si512(w, _mm512_set1_epi32(-65536)));  // 0xffff0000
}
#if defined(__AVX512BF16__)
// vcvtne2ps2bf16 rounds to nearest even whatever MXCSR says, and treats float subnormals as zero
// (as vcvtneps2bf16, Eigen's own cast under AVX512_BF16, does).
inline void narrow_split(Eigen::bfloat16* to, __m512 even, __m512 odd) {
  // [even 0..15 | odd 0..15] -> [even 0, odd 0, even 1, odd 1, ..]
  const __m512i order = _mm512_set_epi16(31, 15, 30, 14, 29, 13, 28, 12, 27, 11, 26, 10, 25, 9, 24,
                                         8, 23, 7, 22, 6, 21, 5, 20, 4, 19, 3, 18, 2, 17, 1, 16, 0);
  const __m512i packed = reinterpret_cast<__m512i>(_mm512_cvtne2ps_pbh(odd, even));
  _mm512_storeu_si512(reinterpret_cast<void*>(to),
                      _mm512_maskz_permutexvar_epi16(0xFFFFFFFF, order, packed));
}
#else
// v's bits with the bfloat16 nearest v (ties to even) in their upper half, NaN as 0x7fc0: the
// rounding of Eigen's AVX-512 cast without AVX512_BF16.
inline __m512i rounded_upper_half(__m512 v) {
  const __m512i bits = _mm512_castps_si512(v);
  const __m512i odd =
      _mm512_and_si512(_mm512_maskz_srli_epi32(0xFFFF, bits, 16), _mm512_set1_epi32(1));
  const __m512i rounded = _mm512_add_epi32(bits, _mm512_add_epi32(odd, _mm512_set1_epi32(0x7fff)));
  return _mm512_mask_blend_epi32(_mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q), rounded,
                                 _mm512_set1_epi32(0x7fc00000));
}
inline void narrow_split(Eigen::bfloat16* to, __m512 even, __m512 odd) {
  const __m512i low = _mm512_maskz_srli_epi32(0xFFFF, rounded_upper_half(even), 16);
  _mm512_storeu_si512(reinterpret_cast<void*>(to),
                      _mm512_mask_blend_epi16(0xAAAAAAAA, low, rounded_upper_half(odd)));
}
#endif
// 16 bfloat16 values in one register of float, in their order: a kernel from bfloat16 keys into a
// cache of another type, which cannot use Splits. Written here rather than through Eigen's cast,
// whose unmasked intrinsics GCC 12 reports in the caller's TU (bug 105593, as for widen above);
// narrowed with the rounding of narrow_split.
inline __m512 widen(const Eigen::bfloat16* from, __m512 /*register type*/) {
  const __m256i w = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(from));
  return _mm512_castsi512_ps(
      _mm512_maskz_slli_epi32(0xFFFF, _mm512_maskz_cvtepu16_epi32(0xFFFF, w), 16));
}
inline __m256i narrow(const Eigen::bfloat16* /*type*/, __m512 v) {
#if defined(__AVX512BF16__)
  return reinterpret_cast<__m256i>(_mm512_cvtneps_pbh(v));
#else
  return _mm512_maskz_cvtepi32_epi16(0xFFFF,
                                     _mm512_maskz_srli_epi32(0xFFFF, rounded_upper_half(v), 16));
#endif
}
inline void store(Eigen::bfloat16* to, __m256i v) {
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(to), v);
}
// 32 floats as their even-indexed and odd-indexed values (a table row split as the heads are).
inline void split(const float* from, __m512& even, __m512& odd) {
  const __m512 lo = _mm512_loadu_ps(from), hi = _mm512_loadu_ps(from + 16);
  const __m512i evens = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
  const __m512i odds = _mm512_set_epi32(31, 29, 27, 25, 23, 21, 19, 17, 15, 13, 11, 9, 7, 5, 3, 1);
  even = _mm512_permutex2var_ps(lo, evens, hi);
  odd = _mm512_permutex2var_ps(lo, odds, hi);
}
#elif defined(EIGEN_VECTORIZE_AVX2) && !defined(EIGEN_VECTORIZE_AVX512)
#define ROPE_DETAIL_SPLIT_BFLOAT16 1
// AVX2: 16 bfloat16 values in two registers of 8 floats, widened as above; narrowed by an integer
// round to nearest even on each register (as Eigen's AVX cast: bits + 0x7fff + bit 16, NaN to
// 0x7fc0) and one vpblendw that takes the upper halves of the odd register, so neither the
// widening moves nor Eigen's pack and lane extraction are needed.
inline void widen_split(const Eigen::bfloat16* from, __m256& even, __m256& odd) {
  const __m256i w = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(from));
  even = _mm256_castsi256_ps(_mm256_slli_epi32(w, 16));
  odd = _mm256_castsi256_ps(_mm256_and_si256(w, _mm256_set1_epi32(-65536)));  // 0xffff0000
}
// v's bits with the bfloat16 nearest v (ties to even) in their upper half.
inline __m256i rounded_upper_half(__m256 v) {
  const __m256i bits = _mm256_castps_si256(v);
  const __m256i odd = _mm256_and_si256(_mm256_srli_epi32(bits, 16), _mm256_set1_epi32(1));
  const __m256i rounded = _mm256_add_epi32(bits, _mm256_add_epi32(odd, _mm256_set1_epi32(0x7fff)));
  const __m256 nan = _mm256_cmp_ps(v, v, _CMP_UNORD_Q);
  return _mm256_blendv_epi8(rounded, _mm256_set1_epi32(0x7fc00000), _mm256_castps_si256(nan));
}
inline void narrow_split(Eigen::bfloat16* to, __m256 even, __m256 odd) {
  const __m256i low = _mm256_srli_epi32(rounded_upper_half(even), 16);
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(to),
                      _mm256_blend_epi16(low, rounded_upper_half(odd), 0xAA));
}
inline void split(const float* from, __m256& even, __m256& odd) {
  const __m256 lo = _mm256_loadu_ps(from), hi = _mm256_loadu_ps(from + 8);
  // [lo0 lo2 hi0 hi2 | lo4 lo6 hi4 hi6], then the 64-bit quarters in the order 0, 2, 1, 3
  const auto gather = [](__m256 mixed) {
    return _mm256_castpd_ps(
        _mm256_permute4x64_pd(_mm256_castps_pd(mixed), _MM_SHUFFLE(3, 1, 2, 0)));
  };
  even = gather(_mm256_shuffle_ps(lo, hi, _MM_SHUFFLE(2, 0, 2, 0)));
  odd = gather(_mm256_shuffle_ps(lo, hi, _MM_SHUFFLE(3, 1, 3, 1)));
}
#endif
/// Whether values of S go in Splits (bfloat16 on AVX2 and AVX-512).
template <class S>
constexpr bool splits() {
#if defined(ROPE_DETAIL_SPLIT_BFLOAT16)
  return std::is_same_v<S, Eigen::bfloat16>;
#else
  return false;
#endif
}
// Where the target has none of these, they are never called (conversion() is not native);
// declared for name lookup.
template <class S, class W>
W widen(const S* from, W) = delete;
template <class S, class W>
void narrow(const S*, W) = delete;
template <class S, class N>
void store(S* to, N) = delete;
template <class S, class W>
void widen_split(const S* from, W& even, W& odd) = delete;
template <class S, class W>
void narrow_split(S* to, W even, W odd) = delete;
template <class W>
void split(const float* from, W& even, W& odd) = delete;

template <class S, class W>
constexpr bool available(...) {
  return false;
}
template <class S, class W, class = decltype(narrow(std::declval<const S*>(), std::declval<W>()))>
constexpr bool available(int) {
  return true;
}
}  // namespace native

enum class Conversion { none, native, eigen_cast, elementwise };

/// How registers of real type R are converted to and from memory of S.
template <class S, class R>
constexpr Conversion conversion() {
  using Eigen::internal::type_casting_traits;
  if constexpr (std::is_same_v<S, R>) {
    return Conversion::none;
  } else if constexpr ((std::is_same_v<R, float> ||
                        std::is_same_v<R, double>)&&native::available<S, Packet<R>>(0)) {
    return Conversion::native;
  } else if constexpr (type_casting_traits<S, R>::VectorizedCast &&
                       type_casting_traits<R, S>::VectorizedCast &&
                       Eigen::internal::packet_traits<S>::Vectorizable && kLanes<S> == kLanes<R> &&
                       (kLanes<R> > 1)) {
    return Conversion::eigen_cast;
  } else {
    return Conversion::elementwise;
  }
}

/// A register of R from kLanes<R> values of S (native and eigen_cast conversions only).
template <class R, class S>
Packet<R> widen(const S* from) {
  if constexpr (conversion<S, R>() == Conversion::native) {
    return native::widen(from, Packet<R>{});
  } else {
    return Eigen::internal::pcast<Packet<S>, Packet<R>>(Eigen::internal::ploadu<Packet<S>>(from));
  }
}

/// The register of S holding v's lanes rounded to nearest even (native and eigen_cast only).
template <class S, class R>
auto narrow(const Packet<R>& v) {
  if constexpr (conversion<S, R>() == Conversion::native) {
    return native::narrow(static_cast<const S*>(nullptr), v);
  } else {
    return Eigen::internal::pcast<Packet<R>, Packet<S>>(v);
  }
}

template <class S, class R, class N>
void store_narrow(S* to, const N& narrowed) {
  if constexpr (conversion<S, R>() == Conversion::native) {
    native::store(to, narrowed);
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
  return (c == Conversion::native || c == Conversion::eigen_cast) && kValues<P> == kLanes<R>;
}

/// Loads the kValues<P> values at `from` (any alignment) into a packet P of float, double or
/// their complex, or a Split of float. S is the stored type: the packet's real type, or
/// Eigen::half / bfloat16 widened to float.
template <class P, class S>
P load(const S* from) {
  if constexpr (kIsSplit<P>) {
    P p;
    if constexpr (std::is_same_v<S, float>) {
      native::split(from, p.even, p.odd);
    } else {
      native::widen_split(from, p.even, p.odd);
    }
    return p;
  } else {
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
}

/// Stores a packet's kValues<P> values at `to` (any alignment), rounded to nearest even when S
/// is narrower than the packet's real type. A Split is stored to its 16-bit type only.
template <class S, class P>
void store(S* to, const P& value) {
  if constexpr (kIsSplit<P>) {
    native::narrow_split(to, value.even, value.odd);
  } else {
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
/// Lane-wise a / b, rounded once.
template <class P>
P div(const P& a, const P& b) {
  return Eigen::internal::pdiv(a, b);
}

/// Stores 2·kLanes<double> floats [c0 s0 c1 s1 ..] at `to` (any alignment): the lanes of c and
/// s, each rounded to float as store() rounds them, interleaved (an interleaved row from its cos
/// and sin halves, detail/angle_sum.hpp).
inline void store_interleaved(float* to, const Packet<double>& c, const Packet<double>& s) {
#if defined(EIGEN_VECTORIZE_AVX512)
  const __m512i order = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
  // (The upper halves of the casts are undefined; the permutation reads only the lower ones.)
  const __m512 low = _mm512_castps256_ps512(native::narrow(to, c));
  const __m512 high = _mm512_castps256_ps512(native::narrow(to, s));
  _mm512_storeu_ps(to, _mm512_permutex2var_ps(low, order, high));
#elif defined(EIGEN_VECTORIZE_AVX)
  const __m128 cosines = native::narrow(to, c), sines = native::narrow(to, s);
  _mm_storeu_ps(to, _mm_unpacklo_ps(cosines, sines));
  _mm_storeu_ps(to + 4, _mm_unpackhi_ps(cosines, sines));
#elif defined(EIGEN_VECTORIZE_NEON) && defined(__aarch64__)
  vst2_f32(to, float32x2x2_t{{native::narrow(to, c), native::narrow(to, s)}});
#else
  constexpr int kLanesOfDouble = static_cast<int>(kLanes<double>);
  alignas(64) double cosines[kLanesOfDouble], sines[kLanesOfDouble];
  Eigen::internal::pstoreu(cosines, c);
  Eigen::internal::pstoreu(sines, s);
  for (int i = 0; i < kLanesOfDouble; ++i) {
    to[2 * i] = static_cast<float>(cosines[i]);
    to[2 * i + 1] = static_cast<float>(sines[i]);
  }
#endif
}

/// binary16 bits of v, rounded to nearest even (overflow to infinity): the F16C instruction
/// where the target has it (Eigen's conversion is a software one under g++).
inline std::uint16_t half_bits(float v) noexcept {
#if defined(__F16C__)
  // (_mm_cvtps_ph, not _cvtss_sh: clang's _cvtss_sh is a macro with a compound literal, which
  // -Wpedantic reports in C++.)
  const __m128i h = _mm_cvtps_ph(_mm_set_ss(v), _MM_FROUND_TO_NEAREST_INT);
  return static_cast<std::uint16_t>(_mm_cvtsi128_si32(h));
#else
  return Eigen::numext::bit_cast<std::uint16_t>(Eigen::half(v));
#endif
}

/// Lane-wise max(a, b) and min(a, b) of float lanes (NaN: either operand). The zero-masking
/// AVX-512 forms with every lane kept: GCC 12's unmasked ones pass an undefined register that
/// -Wuninitialized reports in the caller's TU.
inline float max(float a, float b) { return a > b ? a : b; }
inline float min(float a, float b) { return a < b ? a : b; }
#if defined(__SSE2__)
inline __m128 max(__m128 a, __m128 b) { return _mm_max_ps(a, b); }
inline __m128 min(__m128 a, __m128 b) { return _mm_min_ps(a, b); }
#endif
#if defined(__AVX__)
inline __m256 max(__m256 a, __m256 b) { return _mm256_max_ps(a, b); }
inline __m256 min(__m256 a, __m256 b) { return _mm256_min_ps(a, b); }
#endif
#if defined(__AVX512F__)
inline __m512 max(__m512 a, __m512 b) { return _mm512_maskz_max_ps(0xFFFF, a, b); }
inline __m512 min(__m512 a, __m512 b) { return _mm512_maskz_min_ps(0xFFFF, a, b); }
#endif
#if defined(__aarch64__) && defined(__ARM_NEON)
inline float32x4_t max(float32x4_t a, float32x4_t b) { return vmaxq_f32(a, b); }
inline float32x4_t min(float32x4_t a, float32x4_t b) { return vminq_f32(a, b); }
#endif

/// Lane-wise √a, rounded once: per lane the bits of std::sqrt. The target's instruction, called
/// directly: Eigen's psqrt for float is an estimate with one Newton step under its default
/// EIGEN_FAST_MATH, whose bits differ from the rounded root and from one target to the next.
inline float sqrt(float a) { return std::sqrt(a); }
inline double sqrt(double a) { return std::sqrt(a); }
#if defined(__SSE2__)
inline __m128 sqrt(__m128 a) { return _mm_sqrt_ps(a); }
inline __m128d sqrt(__m128d a) { return _mm_sqrt_pd(a); }
#endif
#if defined(__AVX__)
inline __m256 sqrt(__m256 a) { return _mm256_sqrt_ps(a); }
inline __m256d sqrt(__m256d a) { return _mm256_sqrt_pd(a); }
#endif
#if defined(__AVX512F__)
// The zero-masking forms with every lane kept: GCC 12's unmasked ones pass an undefined register
// that -Wmaybe-uninitialized reports in the caller's TU (as in sum below).
inline __m512 sqrt(__m512 a) { return _mm512_maskz_sqrt_ps(0xFFFF, a); }
inline __m512d sqrt(__m512d a) { return _mm512_maskz_sqrt_pd(0xFF, a); }
#endif
#if defined(__aarch64__) && defined(__ARM_NEON)
inline float32x4_t sqrt(float32x4_t a) { return vsqrtq_f32(a); }
inline float64x2_t sqrt(float64x2_t a) { return vsqrtq_f64(a); }
#endif

/// A register with every lane v.
template <class P>
P broadcast(const Element<P>& v) {
  return Eigen::internal::pset1<P>(v);
}
#if defined(EIGEN_VECTORIZE_AVX512)
/// Half I of a register of 16 floats, taken by the zero-masking extraction (as in
/// native::widen: Eigen's predux, and GCC 12's unmasked extraction and cast to the lower half,
/// pass an undefined register that -Wuninitialized reports in the caller's TU).
template <int I>
__m256 half_of(__m512 a) {
  return _mm256_castpd_ps(_mm512_maskz_extractf64x4_pd(0xF, _mm512_castps_pd(a), I));
}
#endif

/// The sum of a register's lanes, in an order fixed per target. On AVX-512 the two halves (taken
/// as half_of takes them) are added, then summed by Eigen's AVX reduction.
template <class P>
Element<P> sum(const P& a) {
#if defined(EIGEN_VECTORIZE_AVX512)
  if constexpr (std::is_same_v<Element<P>, float> && kLanes<float> == 16) {
    return Eigen::internal::predux(_mm256_add_ps(half_of<0>(a), half_of<1>(a)));
  } else if constexpr (std::is_same_v<Element<P>, double> && kLanes<double> == 8) {
    return Eigen::internal::predux(_mm256_add_pd(_mm512_maskz_extractf64x4_pd(0xF, a, 0),
                                                 _mm512_maskz_extractf64x4_pd(0xF, a, 1)));
  } else {
    return Eigen::internal::predux(a);
  }
#else
  return Eigen::internal::predux(a);
#endif
}

/// The largest and the smallest of a register of floats' lanes (NaN: unspecified), by halves:
/// on AVX-512 the two halves' max (min) first, then Eigen's reduction.
template <class P>
float reduce_max(const P& a) {
#if defined(EIGEN_VECTORIZE_AVX512)
  if constexpr (kLanes<float> == 16 && !std::is_same_v<P, float>) {
    return Eigen::internal::predux_max(max(half_of<0>(a), half_of<1>(a)));
  } else {
    return Eigen::internal::predux_max(a);
  }
#else
  return Eigen::internal::predux_max(a);
#endif
}
template <class P>
float reduce_min(const P& a) {
#if defined(EIGEN_VECTORIZE_AVX512)
  if constexpr (kLanes<float> == 16 && !std::is_same_v<P, float>) {
    return Eigen::internal::predux_min(min(half_of<0>(a), half_of<1>(a)));
  } else {
    return Eigen::internal::predux_min(a);
  }
#else
  return Eigen::internal::predux_min(a);
#endif
}

/// Lane-wise −a.
template <class P>
P negate(const P& a) {
  return Eigen::internal::pnegate(a);
}

/// Lane-wise a·b + c, rounded once where the target has FMA (twice elsewhere). The kernels say
/// which product is fused rather than leave it to the compiler's contraction, so that every
/// compiler gives a pair the same bits on one target. One-lane packets (plain float and double,
/// as under EIGEN_DONT_VECTORIZE) are fused here too: Eigen's scalar pmadd is a·b + c, which the
/// compiler contracts or not, and auto-vectorises or not, depending on where it is inlined.
template <class P>
P madd(const P& a, const P& b, const P& c) {
  if constexpr (std::is_floating_point_v<P>) {
#if defined(__FMA__) || defined(__ARM_FEATURE_FMA)
    return std::fma(a, b, c);
#else
    return a * b + c;  // no fused instruction to contract into
#endif
  } else {
    return Eigen::internal::pmadd(a, b, c);
  }
}
/// Lane-wise c − a·b, as madd (one vfnmadd where the target has FMA). The negation is the
/// vector extension's exact sign flip, which compilers fold into the fused instruction; Eigen's
/// pnegate is 0 − a, which they may not fold.
template <class P>
P nmadd(const P& a, const P& b, const P& c) {
  return madd(P(-a), b, c);
}

// The same, on both registers of a Split.
inline Split mul(const Split& a, const Split& b) {
  return {mul(a.even, b.even), mul(a.odd, b.odd)};
}
inline Split negate(const Split& a) { return {negate(a.even), negate(a.odd)}; }
inline Split madd(const Split& a, const Split& b, const Split& c) {
  return {madd(a.even, b.even, c.even), madd(a.odd, b.odd, c.odd)};
}
inline Split nmadd(const Split& a, const Split& b, const Split& c) {
  return {nmadd(a.even, b.even, c.even), nmadd(a.odd, b.odd, c.odd)};
}

/// Lane-wise complex conjugate: [re im ..] → [re −im ..]. Complex packets only: on a real
/// packet Eigen's pconj is the identity.
template <class Z>
Z conjugate(const Z& z) {
  static_assert(Eigen::NumTraits<typename Eigen::internal::unpacket_traits<Z>::type>::IsComplex,
                "rope::detail::simd::conjugate takes a ComplexPacket");
  return Eigen::internal::pconj(z);
}
/// A Split of interleaved pairs (even = real parts, odd = imaginary parts), conjugated.
inline Split conjugate(const Split& z) { return {z.even, negate(z.odd)}; }

// ---- interleaved pairs: the complex product ---------------------------------------------------
// A kernel turns many heads by the same register of e^{iφ}, so it prepares that register once per
// token (prepare) and turns each register of a head by it (turn).
//
// With AVX2 and FMA (no AVX-512), a prepared register holds cos in both lanes of each pair and
// sin in both, negated for the inverse; a head's register then takes one shuffle (its pairs
// swapped), one product and one fused multiply-add:
//
//   y = [a b ..]·[c c ..] ∓± round([b a ..]·[s s ..])  =  [a·c − round(b·s),  b·c + round(a·s), ..]
//
// each part its own value times cos, fused with the rounded product of its partner and sin.
// Elsewhere a prepared register is e itself (conjugated for the inverse) and turn() is
// complex_mul: on AVX-512 the real and the imaginary parts of z each duplicated into both lanes
// of a pair by a load (vmovsldup, vmovshdup), a product and a fused multiply-add with e and its
// swapped copy, a·c − round(b·s) and a·s + round(b·c). Which is faster depends on the CPU: the
// duplicating loads cost AMD's cores a shuffle each (the AVX2 form took 0.78–0.93 of the time on
// a Zen 5), an extra shuffle costs Intel's AVX-512 cores a port their products share (modelled
// 1.4× slower there); with AVX2 both models give the prepared form at most the cycles of the
// other (docs/design.md, "The kernels").
// The targets whose interleaved kernels take the prepared form: AVX2 with FMA, not AVX-512.
#if defined(EIGEN_VECTORIZE_AVX) && defined(EIGEN_VECTORIZE_FMA)
#if !defined(EIGEN_VECTORIZE_AVX512)
#define ROPE_DETAIL_PREPARED_PAIRS 1
#endif
#endif
template <class Z>
struct Turn {
  Z e;
};
template <class Z>
inline constexpr bool kPrepared = false;
#if defined(ROPE_DETAIL_PREPARED_PAIRS)
template <>
struct Turn<Eigen::internal::Packet4cf> {
  __m256 cos, sin;
};
template <>
struct Turn<Eigen::internal::Packet2cd> {
  __m256d cos, sin;
};
template <>
inline constexpr bool kPrepared<Eigen::internal::Packet4cf> = true;
template <>
inline constexpr bool kPrepared<Eigen::internal::Packet2cd> = true;

// A register the compiler must keep as it is: GCC otherwise reads a head's register from memory
// twice, once for the swap and once for the fused multiply-add (a load more per register: up to
// a fifth of a call in cache, measured).
template <class V>
void keep_in_register(V& v) {
#if defined(__GNUC__)
  __asm__("" : "+x"(v));
#else
  static_cast<void>(v);
#endif
}
#endif

template <class Z>
Z complex_mul(const Z& z, const Z& e);

/// A register of e^{iφ} prepared for turn(), conjugated for the inverse. A prepared register's
/// sign is flipped by an exclusive or with a mask, not under a branch, so that the compiler keeps
/// the prepared registers in registers.
template <class Z>
Turn<Z> prepare(const Z& e, bool inverse) {
  if constexpr (!kPrepared<Z>) {
    return {inverse ? conjugate(e) : e};
  }
#if defined(ROPE_DETAIL_PREPARED_PAIRS)
  else if constexpr (std::is_same_v<Z, Eigen::internal::Packet4cf>) {
    const __m256 sign = _mm256_castsi256_ps(_mm256_set1_epi32(inverse ? INT32_MIN : 0));
    return {_mm256_moveldup_ps(e.v), _mm256_xor_ps(_mm256_movehdup_ps(e.v), sign)};
  } else {
    const __m256d sign = _mm256_castsi256_pd(_mm256_set1_epi64x(inverse ? INT64_MIN : 0));
    return {_mm256_movedup_pd(e.v), _mm256_xor_pd(_mm256_permute_pd(e.v, 0xF), sign)};
  }
#endif
}

/// z turned by a prepared register: z·e (z·conj(e) for the inverse).
template <class Z>
Z turn(const Z& z, const Turn<Z>& t) {
  if constexpr (!kPrepared<Z>) {
    return complex_mul(z, t.e);
  }
#if defined(ROPE_DETAIL_PREPARED_PAIRS)
  else if constexpr (std::is_same_v<Z, Eigen::internal::Packet4cf>) {
    __m256 v = z.v;
    keep_in_register(v);
    const __m256 swapped = _mm256_permute_ps(v, _MM_SHUFFLE(2, 3, 0, 1));
    return Z(_mm256_fmaddsub_ps(v, t.cos, _mm256_mul_ps(swapped, t.sin)));
  } else {
    __m256d v = z.v;
    keep_in_register(v);
    const __m256d swapped = _mm256_permute_pd(v, 0x5);
    return Z(_mm256_fmaddsub_pd(v, t.cos, _mm256_mul_pd(swapped, t.sin)));
  }
#endif
}

/// Lane-wise complex product z·e, with the roundings of the target's kernels: on AVX2 with FMA
/// turn()'s, re = z.re·e.re − round(z.im·e.im) and im = z.im·e.re + round(z.re·e.im); on
/// AVX-512 re = z.re·e.re − round(z.im·e.im) and im = z.re·e.im + round(z.im·e.re) (Eigen's
/// roundings there, written here with the zero-masking forms of its shuffles, see native::widen,
/// and vmovddup for double's real parts: a load, where Eigen's vpermilpd takes the shuffle port
/// the products share); on a Split (even = re, odd = im) the same roundings as the target's
/// complex packets, so that a bfloat16 head rotated on Splits gets the bits of the float
/// rotation; on a one-lane packet (std::complex, under EIGEN_DONT_VECTORIZE) AVX-512's, through
/// madd, fused where the target has FMA (the compiler would expand std::complex's product into
/// fused or unfused forms, depending on where it is inlined). Elsewhere Eigen's product.
template <class Z>
Z complex_mul(const Z& z, const Z& e) {
  if constexpr (std::is_same_v<Z, std::complex<float>> || std::is_same_v<Z, std::complex<double>>) {
    return Z(madd(z.real(), e.real(), -(z.imag() * e.imag())),
             madd(z.real(), e.imag(), z.imag() * e.real()));
  } else if constexpr (kPrepared<Z>) {
    return turn(z, prepare(e, false));
  } else {
#if defined(EIGEN_VECTORIZE_AVX512)
    if constexpr (std::is_same_v<Z, Eigen::internal::Packet8cf>) {
      const __m512 swapped = _mm512_maskz_permute_ps(0xFFFF, e.v, _MM_SHUFFLE(2, 3, 0, 1));
      return Z(_mm512_fmaddsub_ps(_mm512_maskz_moveldup_ps(0xFFFF, z.v), e.v,
                                  _mm512_mul_ps(_mm512_maskz_movehdup_ps(0xFFFF, z.v), swapped)));
    } else if constexpr (std::is_same_v<Z, Eigen::internal::Packet4cd>) {
      const __m512d swapped = _mm512_maskz_permute_pd(0xFF, e.v, 0x55);
      return Z(
          _mm512_fmaddsub_pd(_mm512_maskz_movedup_pd(0xFF, z.v), e.v,
                             _mm512_mul_pd(_mm512_maskz_permute_pd(0xFF, z.v, 0xFF), swapped)));
    } else {
      return Eigen::internal::pmul(z, e);
    }
#else
    return Eigen::internal::pmul(z, e);
#endif
  }
}
inline Split complex_mul(const Split& z, const Split& e) {
  const Packet<float> re = madd(z.even, e.even, -mul(z.odd, e.odd));
  if constexpr (kPrepared<ComplexPacket<float>>)
    return {re, madd(z.odd, e.even, mul(z.even, e.odd))};
  return {re, madd(z.even, e.odd, mul(z.odd, e.even))};
}

}  // namespace simd
}  // namespace detail
}  // namespace ROPE_DETAIL_ISA
}  // namespace rope

#endif  // !ROPE_BELOW_CXX17
