// Each wrapper over Eigen's packet layer (rope/detail/packet.hpp), tested alone: the kernels are
// only as right as these, and a generic fallback that silently does nothing would pass unseen.
#include <cmath>
#include <complex>
#include <cstddef>
#include <random>
#include <vector>

#include <catch2/catch.hpp>

#include <rope/detail/packet.hpp>

#include "support.hpp"

namespace simd = rope::detail::simd;

namespace {

template <class T>
std::vector<T> lanes_of(std::size_t count, std::mt19937_64& rng) {
  return rope_test::random_vector<T>(count, rng);
}

}  // namespace

TEMPLATE_TEST_CASE("simd: a packet holds kLanes values and load/store round-trip at any offset",
                   "[simd]", float, double) {
  using T = TestType;
  using P = simd::Packet<T>;
  constexpr std::size_t L = simd::kLanes<T>;
  REQUIRE(sizeof(P) == L * sizeof(T));
  std::mt19937_64 rng(1);
  const std::vector<T> values = lanes_of<T>(L + 1, rng);
  std::vector<T> out(L + 1, T(0));
  simd::store(out.data() + 1, simd::load<P>(values.data() + 1));  // one element past alignment
  REQUIRE(out[0] == T(0));
  for (std::size_t i = 1; i <= L; ++i) REQUIRE(out[i] == values[i]);
}

TEMPLATE_TEST_CASE("simd: mul, add, sub and negate act lane by lane", "[simd]", float, double) {
  using T = TestType;
  using P = simd::Packet<T>;
  constexpr std::size_t L = simd::kLanes<T>;
  std::mt19937_64 rng(2);
  const std::vector<T> a = lanes_of<T>(L, rng), b = lanes_of<T>(L, rng);
  const P pa = simd::load<P>(a.data()), pb = simd::load<P>(b.data());
  std::vector<T> product(L), sum(L), difference(L), negated(L);
  simd::store(product.data(), simd::mul(pa, pb));
  simd::store(sum.data(), simd::add(pa, pb));
  simd::store(difference.data(), simd::sub(pa, pb));
  simd::store(negated.data(), simd::negate(pa));
  for (std::size_t i = 0; i < L; ++i) {
    // one IEEE operation each: correctly rounded, so equal to the scalar operation
    REQUIRE(product[i] == a[i] * b[i]);
    REQUIRE(sum[i] == a[i] + b[i]);
    REQUIRE(difference[i] == a[i] - b[i]);
    REQUIRE(negated[i] == -a[i]);
  }
}

TEMPLATE_TEST_CASE("simd: complex packets multiply as complex numbers and conjugate", "[simd]",
                   float, double) {
  using T = TestType;
  using Z = simd::ComplexPacket<T>;
  constexpr std::size_t L = simd::kLanes<std::complex<T>>;
  REQUIRE(sizeof(Z) == L * sizeof(std::complex<T>));
  std::mt19937_64 rng(3);
  const std::vector<T> a = lanes_of<T>(2 * L, rng), b = lanes_of<T>(2 * L, rng);
  const auto* za = reinterpret_cast<const std::complex<T>*>(a.data());
  const auto* zb = reinterpret_cast<const std::complex<T>*>(b.data());
  std::vector<std::complex<T>> product(L), conjugated(L);
  simd::store(product.data(), simd::mul(simd::load<Z>(za), simd::load<Z>(zb)));
  simd::store(conjugated.data(), simd::conjugate(simd::load<Z>(za)));
  for (std::size_t i = 0; i < L; ++i) {
    const double ar = double(a[2 * i]), ai = double(a[2 * i + 1]);
    const double br = double(b[2 * i]), bi = double(b[2 * i + 1]);
    // (ar·br − ai·bi) + i(ar·bi + ai·br): two products and a sum rounded in T, γ_2 of the
    // absolute terms (Higham, Lemma 3.1).
    const double bound_re = rope_test::gamma<T>(2) * (std::abs(ar * br) + std::abs(ai * bi));
    const double bound_im = rope_test::gamma<T>(2) * (std::abs(ar * bi) + std::abs(ai * br));
    CHECK_THAT(double(product[i].real()), Catch::Matchers::WithinAbs(ar * br - ai * bi, bound_re));
    CHECK_THAT(double(product[i].imag()), Catch::Matchers::WithinAbs(ar * bi + ai * br, bound_im));
    REQUIRE(conjugated[i].real() == a[2 * i]);
    REQUIRE(conjugated[i].imag() == -a[2 * i + 1]);
  }
}
