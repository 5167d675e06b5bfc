// Each wrapper over Eigen's packet layer (rope/detail/packet.hpp), tested alone: the kernels are
// only as right as these, and a generic fallback that silently does nothing would pass unseen.
#include <cmath>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <type_traits>
#include <vector>

#include <catch2/catch.hpp>

#include <rope/detail/packet.hpp>

#include "support.hpp"

namespace simd = rope::detail::simd;

namespace {

// a·b rounded, then + c rounded: volatile keeps the compiler from contracting the two.
template <class T>
T unfused_madd(T a, T b, T c) {
  volatile T product = a * b;
  return product + c;
}

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
  // madd and nmadd: a·b + c and c − a·b, fused where the target has FMA.
  const std::vector<T> c = lanes_of<T>(L, rng);
  const P pc = simd::load<P>(c.data());
  std::vector<T> fused(L), negative(L);
  simd::store(fused.data(), simd::madd(pa, pb, pc));
  simd::store(negative.data(), simd::nmadd(pa, pb, pc));
  for (std::size_t i = 0; i < L; ++i) {
#if defined(EIGEN_DONT_VECTORIZE)
    // Scalar a·b + c: the compiler may contract it where the target has FMA.
    REQUIRE((fused[i] == std::fma(a[i], b[i], c[i]) || fused[i] == unfused_madd(a[i], b[i], c[i])));
    REQUIRE((negative[i] == std::fma(-a[i], b[i], c[i]) ||
             negative[i] == unfused_madd(-a[i], b[i], c[i])));
#elif defined(EIGEN_VECTORIZE_FMA) || defined(__aarch64__)
    REQUIRE(fused[i] == std::fma(a[i], b[i], c[i]));
    REQUIRE(negative[i] == std::fma(-a[i], b[i], c[i]));
#else
    REQUIRE(fused[i] == unfused_madd(a[i], b[i], c[i]));
    REQUIRE(negative[i] == unfused_madd(-a[i], b[i], c[i]));
#endif
  }
}

TEMPLATE_TEST_CASE("simd: div and sqrt are the rounded operations, lane by lane", "[simd]", float,
                   double) {
  using T = TestType;
  using P = simd::Packet<T>;
  constexpr std::size_t L = simd::kLanes<T>;
  using limits = std::numeric_limits<T>;
  // Random values, then the edges a square root treats apart: zeros of both signs, the smallest
  // normal and a subnormal, the largest finite value, infinity and a negative (NaN).
  std::mt19937_64 rng(3);
  std::vector<T> a = lanes_of<T>(4 * L, rng), b = lanes_of<T>(4 * L, rng);
  for (T& v : a) v = std::abs(v) * T(1e3);
  const T edges[] = {
      T(0),  -T(0), limits::min(), limits::denorm_min() * T(3), limits::max(), limits::infinity(),
      T(-2), T(2)};
  a.insert(a.end(), std::begin(edges), std::end(edges));
  a.resize((a.size() + L - 1) / L * L, T(1));
  b.resize(a.size(), T(3));
  std::vector<T> quotient(a.size()), root(a.size());
  for (std::size_t i = 0; i < a.size(); i += L) {
    const P pa = simd::load<P>(a.data() + i), pb = simd::load<P>(b.data() + i);
    simd::store(quotient.data() + i, simd::div(pa, pb));
    simd::store(root.data() + i, simd::sqrt(pa));
  }
  for (std::size_t i = 0; i < a.size(); ++i) {
    CAPTURE(i, a[i], b[i]);
    REQUIRE(quotient[i] == a[i] / b[i]);
    const T want = std::sqrt(a[i]);
    if (std::isnan(want)) {
      REQUIRE(std::isnan(root[i]));
    } else {
      REQUIRE(std::memcmp(&root[i], &want, sizeof(T)) == 0);  // -0 stays -0
    }
  }
}

TEST_CASE("simd: max and min of float lanes, lane by lane", "[simd]") {
  using P = simd::Packet<float>;
  constexpr std::size_t L = simd::kLanes<float>;
  std::mt19937_64 rng(4);
  const std::vector<float> a = lanes_of<float>(L, rng), b = lanes_of<float>(L, rng);
  std::vector<float> high(L), low(L);
  simd::store(high.data(), simd::max(simd::load<P>(a.data()), simd::load<P>(b.data())));
  simd::store(low.data(), simd::min(simd::load<P>(a.data()), simd::load<P>(b.data())));
  for (std::size_t i = 0; i < L; ++i) {
    REQUIRE(high[i] == std::max(a[i], b[i]));
    REQUIRE(low[i] == std::min(a[i], b[i]));
  }
}

TEMPLATE_TEST_CASE("simd: broadcast fills every lane, sum adds the lanes", "[simd]", float,
                   double) {
  using T = TestType;
  using P = simd::Packet<T>;
  constexpr std::size_t L = simd::kLanes<T>;
  std::vector<T> lanes(L);
  simd::store(lanes.data(), simd::broadcast<P>(T(0.375)));
  REQUIRE(lanes == std::vector<T>(L, T(0.375)));
  // Lanes whose sums are exact in any order (multiples of 1/16 below 2^8): the sum is the exact
  // one whatever order the target adds them in; each lane in turn large, so that a lane left
  // out shows.
  for (std::size_t big = 0; big < L; ++big) {
    double exact = 0;
    for (std::size_t i = 0; i < L; ++i) {
      lanes[i] = T(i == big ? 200.0 : double(i + 1) / 16);
      exact += double(lanes[i]);
    }
    REQUIRE(double(simd::sum(simd::load<P>(lanes.data()))) == exact);
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
  std::vector<std::complex<T>> product(L), kernel_product(L), conjugated(L);
  simd::store(product.data(), simd::mul(simd::load<Z>(za), simd::load<Z>(zb)));
  simd::store(kernel_product.data(), simd::complex_mul(simd::load<Z>(za), simd::load<Z>(zb)));
  simd::store(conjugated.data(), simd::conjugate(simd::load<Z>(za)));
  for (std::size_t i = 0; i < L; ++i) {
    const double ar = double(a[2 * i]), ai = double(a[2 * i + 1]);
    const double br = double(b[2 * i]), bi = double(b[2 * i + 1]);
    // (ar·br − ai·bi) + i(ar·bi + ai·br): two products and a sum rounded in T, γ_2 of the
    // absolute terms (Higham, Lemma 3.1).
    const double bound_re = rope_test::gamma<T>(2) * (std::abs(ar * br) + std::abs(ai * bi));
    const double bound_im = rope_test::gamma<T>(2) * (std::abs(ar * bi) + std::abs(ai * br));
    for (const auto& z : {product[i], kernel_product[i]}) {
      CHECK_THAT(double(z.real()), Catch::Matchers::WithinAbs(ar * br - ai * bi, bound_re));
      CHECK_THAT(double(z.imag()), Catch::Matchers::WithinAbs(ar * bi + ai * br, bound_im));
    }
#if defined(EIGEN_VECTORIZE_AVX) && defined(EIGEN_VECTORIZE_FMA)
    // The kernels' product on FMA targets: one product rounded, fused into the other; the
    // imaginary part fuses b·c with AVX2 (the prepared form), a·s with AVX-512.
    const T x = a[2 * i], y = a[2 * i + 1], c = b[2 * i], s = b[2 * i + 1];
    const T ys = y * s;
    REQUIRE(kernel_product[i].real() == std::fma(x, c, -ys));
#if defined(EIGEN_VECTORIZE_AVX512)
    const T yc = y * c;
    REQUIRE_FALSE(simd::kPrepared<Z>);
    REQUIRE(kernel_product[i].imag() == std::fma(x, s, yc));
#else
    const T xs = x * s;
    REQUIRE(simd::kPrepared<Z>);
    REQUIRE(kernel_product[i].imag() == std::fma(y, c, xs));
#endif
#endif
    REQUIRE(conjugated[i].real() == a[2 * i]);
    REQUIRE(conjugated[i].imag() == -a[2 * i + 1]);
  }
}

TEMPLATE_TEST_CASE(
    "simd: a prepared e^{iφ} turns as the complex product, and its inverse as the "
    "product with the conjugate",
    "[simd]", float, double) {
  using T = TestType;
  using Z = simd::ComplexPacket<T>;
  constexpr std::size_t L = simd::kLanes<std::complex<T>>;
  std::mt19937_64 rng(5);
  const std::vector<T> a = lanes_of<T>(2 * L, rng), b = lanes_of<T>(2 * L, rng);
  const auto* za = reinterpret_cast<const std::complex<T>*>(a.data());
  const auto* zb = reinterpret_cast<const std::complex<T>*>(b.data());
  const Z z = simd::load<Z>(za), e = simd::load<Z>(zb);
  std::vector<std::complex<T>> forward(L), inverse(L), product(L), conjugate_product(L);
  simd::store(forward.data(), simd::turn(z, simd::prepare(e, false)));
  simd::store(inverse.data(), simd::turn(z, simd::prepare(e, true)));
  simd::store(product.data(), simd::complex_mul(z, e));
  simd::store(conjugate_product.data(), simd::complex_mul(z, simd::conjugate(e)));
  for (std::size_t i = 0; i < L; ++i) {
    INFO("lane " << i);
    // Bit for bit, and so through the bounds of the test above.
    REQUIRE(forward[i].real() == product[i].real());
    REQUIRE(forward[i].imag() == product[i].imag());
    REQUIRE(inverse[i].real() == conjugate_product[i].real());
    REQUIRE(inverse[i].imag() == conjugate_product[i].imag());
    // And the inverse is the product with the conjugate: (ar·br + ai·bi) + i(ai·br − ar·bi).
    const double ar = double(a[2 * i]), ai = double(a[2 * i + 1]);
    const double br = double(b[2 * i]), bi = double(b[2 * i + 1]);
    const double bound_re = rope_test::gamma<T>(2) * (std::abs(ar * br) + std::abs(ai * bi));
    const double bound_im = rope_test::gamma<T>(2) * (std::abs(ar * bi) + std::abs(ai * br));
    CHECK_THAT(double(inverse[i].real()), Catch::Matchers::WithinAbs(ar * br + ai * bi, bound_re));
    CHECK_THAT(double(inverse[i].imag()), Catch::Matchers::WithinAbs(ai * br - ar * bi, bound_im));
  }
}

TEMPLATE_TEST_CASE("simd: 16-bit memory widens exactly to float and rounds to nearest even",
                   "[simd][storage]", Eigen::half, Eigen::bfloat16) {
  using S = TestType;
  using P = simd::Packet<float>;
  using Z = simd::ComplexPacket<float>;
  constexpr std::size_t L = simd::kLanes<float>;
  // Every 16-bit pattern that is a finite number, walked register by register.
  std::vector<S> all;
  for (std::uint32_t bits = 0; bits < 0x10000; ++bits) {
    const S v = Eigen::numext::bit_cast<S>(static_cast<std::uint16_t>(bits));
    if (std::isfinite(float(v))) all.push_back(v);
  }
  all.resize(all.size() / L * L);
  std::vector<float> wide(L);
  for (std::size_t i = 0; i < all.size(); i += L) {
    simd::store(wide.data(), simd::load<P>(all.data() + i));
    for (std::size_t k = 0; k < L; ++k) REQUIRE(wide[k] == float(all[i + k]));
  }
  // Narrowing: values between two neighbours, just below, at and just above their midpoint; a
  // tie goes to the neighbour with an even last bit.
  std::mt19937_64 rng(5);
  std::uniform_int_distribution<std::size_t> pick(0, all.size() - 2);
  std::vector<float> values(L);
  std::vector<S> narrow(L + 1, S(0.0F));
  for (int trial = 0; trial < 2000; ++trial) {
    for (std::size_t k = 0; k < L; ++k) {
      const S a = all[pick(rng)];
      const S b = Eigen::numext::bit_cast<S>(
          static_cast<std::uint16_t>(Eigen::numext::bit_cast<std::uint16_t>(a) + 1));
      const double mid = (double(float(a)) + double(float(b))) / 2;  // exact in float
      const float choices[3] = {std::nextafter(float(mid), -HUGE_VALF), float(mid),
                                std::nextafter(float(mid), HUGE_VALF)};
      values[k] = std::isfinite(float(b)) ? choices[(std::size_t(trial) + k) % 3] : float(a);
    }
    simd::store(narrow.data() + 1, simd::load<P>(values.data()));  // at an odd address
    REQUIRE(narrow[0] == S(0.0F));
    for (std::size_t k = 0; k < L; ++k) {
      INFO("value " << values[k]);
      const auto got = Eigen::numext::bit_cast<std::uint16_t>(narrow[k + 1]);
      const auto nearest = Eigen::numext::bit_cast<std::uint16_t>(S(values[k]));  // scalar RNE
      // AVX512-BF16's vcvtneps2bf16 reads float subnormals as zero: below FLT_MIN a bfloat16
      // result may be a zero of the same sign (docs/numerics.md).
      const bool flushed = std::is_same_v<S, Eigen::bfloat16> &&
                           std::abs(values[k]) < std::numeric_limits<float>::min() &&
                           got == (std::signbit(values[k]) ? 0x8000U : 0U);
      REQUIRE((got == nearest || flushed));
    }
  }
  // A complex register of 16-bit memory: pairs [re im re im ..] in order.
  std::vector<S> pairs(2 * simd::kLanes<std::complex<float>>);
  for (std::size_t i = 0; i < pairs.size(); ++i) pairs[i] = S(float(i) + 0.5F);
  std::vector<std::complex<float>> z(simd::kLanes<std::complex<float>>);
  simd::store(z.data(), simd::load<Z>(pairs.data()));
  for (std::size_t k = 0; k < z.size(); ++k) {
    REQUIRE(z[k] == std::complex<float>(float(2 * k) + 0.5F, float(2 * k + 1) + 0.5F));
  }
  std::vector<S> back(pairs.size());
  simd::store(back.data(), simd::load<Z>(pairs.data()));
  REQUIRE(back == pairs);
}

TEST_CASE("simd: double registers round to float memory to nearest even, split or interleaved",
          "[simd][storage]") {
  using P = simd::Packet<double>;
  constexpr std::size_t L = simd::kLanes<double>;
  // Doubles just below, at and just above the midpoint of two neighbouring floats (a tie goes to
  // the even one), random ones, and their widening back from float memory, exact.
  std::mt19937_64 rng(6);
  std::uniform_real_distribution<float> pick(-2.0F, 2.0F);
  std::vector<double> c(L), s(L);
  std::vector<float> split(L + 1, 0.0F), interleaved(2 * L + 1, 0.0F), wide_in(L);
  std::vector<double> wide(L);
  for (int trial = 0; trial < 3000; ++trial) {
    for (std::size_t k = 0; k < L; ++k) {
      const float a = pick(rng), b = std::nextafter(a, HUGE_VALF);
      const double mid = (double(a) + double(b)) / 2;  // exact in double
      const double choices[4] = {std::nextafter(mid, -HUGE_VAL), mid, std::nextafter(mid, HUGE_VAL),
                                 double(a) + (double(b) - double(a)) * 0.3};
      c[k] = choices[(std::size_t(trial) + k) % 4];
      s[k] = -choices[(std::size_t(trial) + 2 * k + 1) % 4];
      wide_in[k] = a;
    }
    simd::store(split.data() + 1, simd::load<P>(c.data()));  // at an odd address
    simd::store_interleaved(interleaved.data() + 1, simd::load<P>(c.data()),
                            simd::load<P>(s.data()));
    simd::store(wide.data(), simd::load<P>(wide_in.data()));
    REQUIRE(split[0] == 0.0F);
    REQUIRE(interleaved[0] == 0.0F);
    for (std::size_t k = 0; k < L; ++k) {
      INFO("lane " << k << ": " << c[k] << ", " << s[k]);
      REQUIRE(split[k + 1] == static_cast<float>(c[k]));  // the scalar conversion rounds to even
      REQUIRE(interleaved[2 * k + 1] == static_cast<float>(c[k]));
      REQUIRE(interleaved[2 * k + 2] == static_cast<float>(s[k]));
      REQUIRE(wide[k] == double(wide_in[k]));
    }
  }
#if !defined(EIGEN_DONT_VECTORIZE) && \
    (defined(__AVX__) || (defined(__aarch64__) && defined(__ARM_NEON)))
  CHECK(simd::conversion<float, double>() == simd::Conversion::native);
#endif
}

TEST_CASE("simd: 16-bit conversions are in registers where the target has instructions for them",
          "[simd][storage]") {
  using simd::Conversion;
  constexpr Conversion half = simd::conversion<Eigen::half, float>();
  constexpr Conversion bf16 = simd::conversion<Eigen::bfloat16, float>();
#if defined(EIGEN_DONT_VECTORIZE)
  // One-lane packets: nothing to convert in registers.
  CHECK(half == Conversion::elementwise);
  CHECK(bf16 == Conversion::elementwise);
#elif defined(__aarch64__) && defined(__ARM_NEON)
  CHECK(half == Conversion::native);
  CHECK(bf16 == Conversion::native);
#elif defined(__F16C__) && defined(__AVX512F__) && defined(__AVX512BW__)
  // bfloat16 in one register of float (keys into a cache of another type): rope's own, as
  // Eigen's cast warns under GCC 12 (packet.hpp).
  CHECK(half == Conversion::native);
  CHECK(bf16 == Conversion::native);
#elif defined(__F16C__) && defined(__AVX__)
  CHECK(half == Conversion::native);
  CHECK(bf16 == Conversion::eigen_cast);
#elif defined(__SSE2__)
  CHECK(half == Conversion::elementwise);
  CHECK(bf16 == Conversion::elementwise);
#endif
  CHECK(simd::conversion<float, float>() == Conversion::none);
}

TEST_CASE("simd: bfloat16 goes in pairs of registers, even and odd values, where AVX512_BF16 is",
          "[simd][storage]") {
#if (defined(EIGEN_VECTORIZE_AVX512) && defined(__AVX512BW__)) || \
    (defined(EIGEN_VECTORIZE_AVX2) && !defined(EIGEN_VECTORIZE_AVX512))
  REQUIRE(simd::native::splits<Eigen::bfloat16>());
  constexpr std::size_t L = simd::kLanes<float>;
  REQUIRE(simd::kValues<simd::Split> == int(2 * L));
  std::mt19937_64 rng(11);
  // Widening: value 2k in lane k of even, value 2k + 1 in lane k of odd, exactly.
  const std::vector<Eigen::bfloat16> x = rope_test::random_vector<Eigen::bfloat16>(2 * L + 1, rng);
  const simd::Split w = simd::load<simd::Split>(x.data() + 1);  // one element past alignment
  std::vector<float> even(L), odd(L);
  Eigen::internal::pstoreu(even.data(), w.even);
  Eigen::internal::pstoreu(odd.data(), w.odd);
  for (std::size_t k = 0; k < L; ++k) {
    REQUIRE(even[k] == float(x[1 + 2 * k]));
    REQUIRE(odd[k] == float(x[2 + 2 * k]));
  }
  // Narrowing puts them back in order, bit for bit.
  std::vector<Eigen::bfloat16> back(2 * L + 1, Eigen::bfloat16(0));
  simd::store(back.data() + 1, w);
  REQUIRE(back[0].value == 0);
  for (std::size_t i = 1; i <= 2 * L; ++i) REQUIRE(back[i].value == x[i].value);
  // A float row splits the same way, and float values are rounded to nearest even as Eigen's
  // scalar conversion rounds them (normal numbers; AVX-512's vcvtne2ps2bf16 flushes subnormals).
  const std::vector<float> f = rope_test::random_vector<float>(2 * L, rng);
  std::vector<Eigen::bfloat16> rounded(2 * L);
  simd::store(rounded.data(), simd::load<simd::Split>(f.data()));
  for (std::size_t i = 0; i < 2 * L; ++i) {
    INFO("value " << f[i]);
    REQUIRE(rounded[i].value == Eigen::bfloat16(f[i]).value);
  }
  // Halfway cases round to even: 1 + 2^-8 (tie, even below), 1 + 3·2^-8 (tie, even above).
  std::vector<float> ties(2 * L, 1.0F + 0x1p-8F);
  for (std::size_t i = 1; i < 2 * L; i += 2) ties[i] = 1.0F + 3 * 0x1p-8F;
  simd::store(rounded.data(), simd::load<simd::Split>(ties.data()));
  for (std::size_t i = 0; i < 2 * L; ++i) {
    REQUIRE(float(rounded[i]) == (i % 2 == 0 ? 1.0F : 1.0F + 0x1p-6F));
  }
  // complex_mul on Splits (even = re, odd = im) has the bits of complex_mul on complex packets.
  using Z = simd::ComplexPacket<float>;
  const std::vector<float> a = rope_test::random_vector<float>(2 * L, rng);
  const std::vector<float> b = rope_test::random_vector<float>(2 * L, rng);
  std::vector<float> expected(2 * L), got(2 * L);
  const auto* za = reinterpret_cast<const std::complex<float>*>(a.data());
  const auto* zb = reinterpret_cast<const std::complex<float>*>(b.data());
  auto* ze = reinterpret_cast<std::complex<float>*>(expected.data());
  for (std::size_t i = 0; i < 2 * L; i += L) {
    simd::store(ze + i / 2,
                simd::complex_mul(simd::load<Z>(za + i / 2), simd::load<Z>(zb + i / 2)));
  }
  const simd::Split product =
      simd::complex_mul(simd::load<simd::Split>(a.data()), simd::load<simd::Split>(b.data()));
  std::vector<float> re(L), im(L);
  Eigen::internal::pstoreu(re.data(), product.even);
  Eigen::internal::pstoreu(im.data(), product.odd);
  for (std::size_t k = 0; k < L; ++k) {
    REQUIRE(re[k] == expected[2 * k]);
    REQUIRE(im[k] == expected[2 * k + 1]);
  }
#else
  REQUIRE_FALSE(simd::native::splits<Eigen::bfloat16>());
#endif
  REQUIRE_FALSE(simd::native::splits<Eigen::half>());
  REQUIRE_FALSE(simd::native::splits<float>());
}

TEMPLATE_TEST_CASE("simd: 16-bit narrowing keeps infinities, NaN and signed zeros",
                   "[simd][storage]", Eigen::half, Eigen::bfloat16) {
  using S = TestType;
  using P = simd::Packet<float>;
  constexpr std::size_t L = simd::kLanes<float>;
  const float specials[] = {HUGE_VALF,
                            -HUGE_VALF,
                            std::numeric_limits<float>::quiet_NaN(),
                            -std::numeric_limits<float>::quiet_NaN(),
                            0.0F,
                            -0.0F};
  for (const float special : specials) {
    std::vector<float> values(L, special);
    std::vector<S> out(L);
    simd::store(out.data(), simd::load<P>(values.data()));
    for (std::size_t k = 0; k < L; ++k) {
      INFO("value " << special);
      const float back = float(out[k]);
      if (std::isnan(special)) {
        REQUIRE(std::isnan(back));
      } else {
        REQUIRE(back == special);
        REQUIRE(std::signbit(back) == std::signbit(special));
      }
    }
  }
}

TEST_CASE("simd: stream_copy copies bytes exactly at every alignment and length", "[simd]") {
  // Lengths below, at and past each block size (16, 32, 64), from every offset in a cache line:
  // the streamed blocks, the ordinary head and tail, and their seams.
  std::vector<unsigned char, Eigen::aligned_allocator<unsigned char>> from(512), to(512);
  for (std::size_t i = 0; i < from.size(); ++i) from[i] = static_cast<unsigned char>(i * 7 + 3);
  for (std::size_t offset = 0; offset < 64; ++offset) {
    for (const std::size_t bytes : {0U, 1U, 15U, 16U, 17U, 63U, 64U, 65U, 200U, 384U}) {
      std::fill(to.begin(), to.end(), static_cast<unsigned char>(0xEE));
      simd::stream_copy(to.data() + offset, from.data() + 1, bytes);
      simd::fence();
      INFO("offset " << offset << ", " << bytes << " bytes");
      REQUIRE(std::memcmp(to.data() + offset, from.data() + 1, bytes) == 0);
      for (std::size_t i = 0; i < to.size(); ++i) {
        if (i < offset || i >= offset + bytes) REQUIRE(to[i] == 0xEE);
      }
    }
  }
}
