// The only file that touches Eigen's packet layer (Eigen::internal): SIMD registers of T or of
// std::complex<T>, and the handful of operations the kernels need, each under a plain name.
//
// These are Eigen internals, not its public API: they are pinned to Eigen 3.4 by the build, and
// each is tested alone (tests/packet_test.cpp), because some generic fallbacks of the packet
// layer are silently the identity for types they were not written for.
//
// Without SIMD (EIGEN_DONT_VECTORIZE, or a target Eigen does not vectorise) every packet is a
// single T or std::complex<T>, and the same kernels run as plain scalar loops.
#pragma once

#include <complex>

#include <Eigen/Core>

namespace rope::detail::simd {

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

/// Loads kLanes<T> values from any address (no alignment needed).
template <class P, class T>
P load(const T* from) {
  return Eigen::internal::ploadu<P>(from);
}

/// Stores a register's lanes to any address (no alignment needed).
template <class T, class P>
void store(T* to, const P& value) {
  Eigen::internal::pstoreu(to, value);
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

}  // namespace rope::detail::simd
