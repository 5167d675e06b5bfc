// Shared test helpers: random data, the float64 oracle applied to whole batches, and the error
// bounds every comparison uses.
//
// Error model (Higham, "Accuracy and Stability of Numerical Algorithms", 2nd ed., §2.2 and
// Lemma 3.1): a computation with n successive roundings in type T has relative error at most
// γ_n(T) = n·u / (1 − n·u), with u = 2^-p the unit roundoff of T (half its machine epsilon).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <new>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include <rope/rope.hpp>

namespace rope_test {

// The norms of the queries and of the keys of a fused call, as the tests pass them around.
template <class T>
struct NormPair {
  rope::Norm<T> q;
  rope::Norm<T> k;
};

// An allocator whose buffers start on a 64-byte boundary (a cache line), as streaming stores
// require of dst: Eigen's aligned_allocator aligns to the target's widest packet only (16 bytes
// on SSE2 and NEON).
template <class T>
struct LineAllocator {
  using value_type = T;
  LineAllocator() = default;
  template <class U>
  LineAllocator(const LineAllocator<U>&) noexcept {}  // NOLINT(google-explicit-constructor)
  T* allocate(std::size_t n) {
    return static_cast<T*>(::operator new (n * sizeof(T), std::align_val_t{64}));
  }
  void deallocate(T* p, std::size_t) noexcept { ::operator delete (p, std::align_val_t{64}); }
  friend bool operator==(const LineAllocator&, const LineAllocator&) noexcept { return true; }
  friend bool operator!=(const LineAllocator&, const LineAllocator&) noexcept { return false; }
};
template <class T>
using LineAligned = std::vector<T, LineAllocator<T>>;

// u = 2^-p for a type with p significand bits (24 for float, 11 for Eigen::half, 8 for bfloat16).
template <class T>
constexpr double unit_roundoff = [] {
  double u = 1;
  for (int i = 0; i < std::numeric_limits<T>::digits; ++i) u /= 2;
  return u;
}();

template <class T>
constexpr double gamma(int n) {
  return n * unit_roundoff<T> / (1 - n * unit_roundoff<T>);
}

// Bound on |computed − exact| for one output coordinate a·c ∓ b·s of a pair (a, b) rotated by a
// Rotary<T> against the float64 reference (rope::reference::rotate_*):
//  - Rotary rounds c and s once each to T, then rounds two products and one sum in T: three
//    roundings on each term, γ_3(T)·(|a·c| + |b·s|) ≤ γ_3(T)·(|a| + |b|);
//  - the reference rounds two products and one sum in double: γ_2(double)·(|a| + |b|);
//  - the two sides may compute θ_j differently (Rotary: the double nearest base^(−2j/d); the
//    reference and the tests: std::pow in double, as base^(−2j/d) or 1/base^(2j/d)). In double,
//    the exponent x = ±2j/d (|x| ≤ 1) is rounded (relative u), which scales base^x by up to
//    e^{ln(base)·u} − 1 ≈ ln(base)·u; pow adds ≤ 1 ulp (2u), a division u, and the product with
//    m one more u. Over both sides: (2·ln(base) + kAngleRoundings)·u(double) relative, with
//    kAngleRoundings = 2·(2 + 1 + 1); θ_j ≤ 1, so the angles differ by at most that times m.
//    An angle off by δ moves the coordinate by at most δ·‖(a, b)‖ ≤ δ·(|a| + |b|).
constexpr double kAngleRoundings = 8;

template <class T>
double coordinate_bound(double pair_abs_sum, double position, double base = 10000.0) {
  const double angle_error =
      (2 * std::log(base) + kAngleRoundings) * unit_roundoff<double> * std::abs(position);
  return (gamma<T>(3) + gamma<double>(2) + angle_error) * pair_abs_sum;
}

// Bound on ‖R̃_m x − R_m x‖ / ‖x‖ for a whole head: per pair the error vector has two
// components each ≤ γ_3(T)·(|a| + |b|), so its norm is ≤ √2·γ_3·√2·‖(a, b)‖ = 2·γ_3·‖(a, b)‖;
// the rounding of the double angle m·θ_j adds at most u(double)·m (θ_j ≤ 1, same θ_j on both
// sides of every identity tested with it).
template <class T>
double head_bound(double position) {
  return 2 * gamma<T>(3) + unit_roundoff<double> * std::abs(position);
}

// Bound on |stored − exact| for one output coordinate of a Rotary<T>. Eigen::half and bfloat16
// are rotated in float (compute_t<T>), exactly widened, then rounded to nearest T: float's
// coordinate_bound, plus that rounding, at most u(T) relative or, among subnormals, half the
// spacing denorm_min.
template <class T>
double output_bound(double pair_abs_sum, double position, double expected, double base) {
  using C = rope::compute_t<T>;
  const double computed = coordinate_bound<C>(pair_abs_sum, position, base);
  if constexpr (std::is_same_v<T, C>) {
    return computed;
  } else {
    return computed + unit_roundoff<T> * (std::abs(expected) + computed) +
           double(std::numeric_limits<T>::denorm_min()) / 2;
  }
}

// Bound on |shift(apply(x, m), δ) − apply(x, m + δ)| for one coordinate of a pair whose input
// (a, b) has p = |a| + |b|, in a Rotary<T> whose cos and sin carry the factor f:
//  - each pass through a kernel errs by at most γ_3(C)·(|a| + |b|) of its input pair per
//    coordinate (support.hpp); the second pass's input pair has |a'| + |b'| ≤ √2·‖(a', b')‖ ≤
//    √2·f·p, and the first pass's error vector (norm ≤ √2·γ_3·f·p) is rotated, not grown. With
//    the direct call: (√2 + √2 + 1)·γ_3(C)·f·p < 4·γ_3(C)·f·p;
//  - the angles m·θ, δ·θ, (m + δ)·θ are each one double product (θ_j ≤ 1): they differ from
//    exact sums by at most u(double)·(|m| + |δ| + |m + δ|), moving a coordinate by that times
//    ‖(a, b)‖·f ≤ f·p;
//  - a 16-bit T rounds the intermediate keys and both results: 3·√2·u(T)·f·p, and half the
//    subnormal spacing each time.
template <class T>
double shift_bound(double p, double f, double m, double delta) {
  using C = rope::compute_t<T>;
  double bound =
      4 * gamma<C>(3) * f * p +
      unit_roundoff<double> * (std::abs(m) + std::abs(delta) + std::abs(m + delta)) * f * p;
  if constexpr (!std::is_same_v<T, C>) {
    bound += 3 * std::sqrt(2.0) * unit_roundoff<T> * f * p +
             1.5 * double(std::numeric_limits<T>::denorm_min());
  }
  return bound;
}

// Runs f, requires it to throw exactly E, whose message starts with prefix and holds each
// fragment.
template <class E, class F>
void require_throws(F&& f, const std::vector<std::string>& fragments,
                    const std::string& prefix = "") {
  try {
    f();
    FAIL("no exception was thrown");
  } catch (const E& e) {
    const std::string message = e.what();
    if (!prefix.empty()) CHECK_THAT(message, Catch::Matchers::StartsWith(prefix));
    for (const std::string& fragment : fragments) {
      CHECK_THAT(message, Catch::Matchers::Contains(fragment));
    }
  } catch (const std::exception& e) {
    FAIL("threw a different exception: " << e.what());
  }
}

template <class F>
void require_invalid(F&& f, const std::vector<std::string>& fragments,
                     const std::string& prefix = "") {
  require_throws<std::invalid_argument>(std::forward<F>(f), fragments, prefix);
}

template <class F>
void require_out_of_range(F&& f, const std::vector<std::string>& fragments) {
  require_throws<std::out_of_range>(std::forward<F>(f), fragments);
}

// Whether two buffers hold the same bits (NaN payloads and signed zeros included).
template <class T>
bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

template <class T>
std::vector<T> random_vector(std::size_t n, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  std::vector<T> v(n);
  for (auto& x : v) x = static_cast<T>(uniform(rng));
  return v;
}

// A contiguous [tokens][heads][d] view of a buffer, const or not as the pointer is: the out of
// place calls of the tests on dense buffers.
template <class T>
rope::View<T> contiguous(T* data, std::size_t tokens, std::size_t heads, std::size_t d) {
  return rope::View<T>::contiguous(data, tokens, heads, d);
}

// The coordinate paired with coordinate i of a head of size d.
inline std::size_t partner(std::size_t i, std::size_t d, rope::Layout layout) {
  if (layout == rope::Layout::interleaved) return i ^ 1U;
  return i < d / 2 ? i + d / 2 : i - d / 2;
}

// The index of the coordinate paired with index i of a buffer of heads of size d, whose rotated
// slice is [offset, offset + rotary_dim) (rotary_dim 0: the whole head); i itself outside it.
inline std::size_t partner_index(std::size_t i, std::size_t d, rope::Layout layout,
                                 std::size_t rotary_dim = 0, std::size_t offset = 0) {
  const std::size_t r = rotary_dim == 0 ? d : rotary_dim, c = i % d;
  if (c < offset || c >= offset + r) return i;
  return i - c + offset + partner(c - offset, r, layout);
}

// One head rotated by the float64 reference; the inverse rotation is the rotation by −position.
// (P: an integer position or a fractional one.)
template <class P>
std::vector<double> reference_head(std::vector<double> x, rope::Layout layout, P position,
                                   rope::Direction direction, double base) {
  const auto p = static_cast<double>(position);
  const double m = direction == rope::Direction::forward ? p : -p;
  if (layout == rope::Layout::interleaved) {
    rope::reference::rotate_interleaved(x.data(), x.size(), m, base);
  } else {
    rope::reference::rotate_half_split(x.data(), x.size(), m, base);
  }
  return x;
}

// The coordinate with the largest error/bound ratio of a comparison, described by the caller.
// NaN errors count as the worst.
class WorstCoordinate {
 public:
  template <class Describe>
  void note(double error, double bound, const Describe& describe) {
    const double ratio = bound > 0 ? error / bound : (error == 0 ? 0.0 : HUGE_VAL);
    if (!(ratio <= worst_)) {
      worst_ = ratio;
      std::ostringstream s;
      s.precision(17);
      describe(s);
      where_ = s.str();
    }
  }
  double ratio() const { return worst_; }
  const std::string& where() const { return where_; }

 private:
  double worst_ = 0;
  std::string where_;
};

// Checks every head of `got` against the reference rotation of the same head of `input`
// (token t at positions[t], tokens counted over the batch), coordinate by coordinate, with
// coordinate_bound<T>. Reports the worst coordinate. Positions are integers or, for fractional
// positions, doubles.
template <class T, class P = std::int64_t>
void require_rotation_of(rope::View<const T> input, rope::View<const T> got, std::size_t d,
                         rope::Layout layout, const std::vector<P>& positions,
                         rope::Direction direction, double base = 10000.0) {
  REQUIRE(input.batches() == got.batches());
  REQUIRE(input.tokens() == got.tokens());
  REQUIRE(input.heads() == got.heads());
  REQUIRE(positions.size() == input.rows());
  WorstCoordinate worst;
  for (std::size_t t = 0; t < input.rows(); ++t) {
    for (std::size_t h = 0; h < input.heads(); ++h) {
      const T* in = input.head(t, h);
      const T* out = got.head(t, h);
      const std::vector<double> expected =
          reference_head(std::vector<double>(in, in + d), layout, positions[t], direction, base);
      for (std::size_t i = 0; i < d; ++i) {
        const double pair_abs =
            std::abs(double(in[i])) + std::abs(double(in[partner(i, d, layout)]));
        const double bound = output_bound<T>(pair_abs, double(positions[t]), expected[i], base);
        worst.note(std::abs(double(out[i]) - expected[i]), bound, [&](std::ostream& s) {
          s << "token " << t << " head " << h << " coordinate " << i << " position " << positions[t]
            << ": got " << double(out[i]) << ", reference " << expected[i] << ", bound " << bound;
        });
      }
    }
  }
  INFO("worst coordinate: " << worst.where());
  REQUIRE(worst.ratio() <= 1.0);
}

}  // namespace rope_test
