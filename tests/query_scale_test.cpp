// Position-dependent query scales (rope/query_scale.hpp): s(p) against the formulas of Llama 4's
// attention temperature and Ministral 3's Llama4Scaling, written here in double with the floors
// as integer divisions; apply_qk with a scale against the float64 reference rotation times s(p);
// scale_queries against s(p)·x; and the errors.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include <Eigen/Core>
#include <catch2/catch.hpp>

#include <rope/rope.hpp>

#include "support.hpp"

namespace {

using rope::Layout;

// HuggingFace's Llama4TextAttention: log(floor((p + 1) / floor_scale) + 1) · attn_scale + 1, the
// floor as the integer quotient (floor_scale an integer here).
double llama4_temperature(std::int64_t p, std::int64_t floor_scale, double attn_scale) {
  return std::log(double((p + 1) / floor_scale) + 1.0) * attn_scale + 1.0;
}

// HuggingFace's Ministral 3 (_get_llama_4_attn_scale): 1 + beta · log(1 + floor(p / L0)).
double ministral3_scale(std::int64_t p, double beta, std::int64_t l0) {
  return 1.0 + beta * std::log(1.0 + double(p / l0));
}

// Bound on |stored − s·exact| for one coordinate of a scaled query: the rotation's
// coordinate_bound times s, plus the roundings of s to C and of s·row (γ_2(C) on each product
// term, whose magnitudes add up to at most s·(|a| + |b|)); a coordinate outside the rotated
// pairs has the same two roundings on s·|x|. A 16-bit T then rounds once more (output_bound).
template <class T>
double scaled_bound(double pair_abs, double position, double s, double expected, bool rotated) {
  using C = rope::compute_t<T>;
  double computed = s * rope_test::gamma<C>(2) * pair_abs;
  if (rotated) computed += s * rope_test::coordinate_bound<C>(pair_abs, position);
  if constexpr (!std::is_same_v<T, C>) {
    computed += rope_test::unit_roundoff<T> * (std::abs(expected) + computed) +
                double(std::numeric_limits<T>::denorm_min()) / 2;
  }
  return computed;
}

// Checks scaled queries (q) and plain keys (k) of [tokens][heads][d] against the reference: the
// slice [offset, offset + rotary_dim) rotated to positions[t] (or back, inverse), every
// coordinate of q then times scales[t].
template <class T>
void require_scaled(const std::vector<T>& q_in, const std::vector<T>& q_out, std::size_t heads,
                    std::size_t d, std::size_t rotary_dim, std::size_t offset, Layout layout,
                    const std::vector<std::int64_t>& positions, const std::vector<double>& scales,
                    rope::Direction direction) {
  rope_test::WorstCoordinate worst;
  for (std::size_t t = 0; t < positions.size(); ++t) {
    for (std::size_t h = 0; h < heads; ++h) {
      const T* in = q_in.data() + (t * heads + h) * d;
      const T* out = q_out.data() + (t * heads + h) * d;
      std::vector<double> slice(in + offset, in + offset + rotary_dim);
      slice = rope_test::reference_head(slice, layout, positions[t], direction, 10000.0);
      for (std::size_t i = 0; i < d; ++i) {
        const bool rotated = i >= offset && i < offset + rotary_dim;
        const double unscaled = rotated ? slice[i - offset] : double(in[i]);
        const double expected = scales[t] * unscaled;
        const std::size_t partner =
            rotated ? offset + rope_test::partner(i - offset, rotary_dim, layout) : i;
        const double pair_abs = rotated ? std::abs(double(in[i])) + std::abs(double(in[partner]))
                                        : std::abs(double(in[i]));
        const double bound =
            scaled_bound<T>(pair_abs, double(positions[t]), scales[t], expected, rotated);
        worst.note(std::abs(double(out[i]) - expected), bound, [&](std::ostream& s) {
          s << "token " << t << " head " << h << " coordinate " << i << ": got " << double(out[i])
            << ", reference " << expected << ", bound " << bound;
        });
      }
    }
  }
  INFO("worst coordinate: " << worst.where());
  REQUIRE(worst.ratio() <= 1.0);
}

// The positions of the tests: both sides of the steps of a floor of 64 (Ministral's L0 here) and
// of (p + 1) / 64 (Llama 4's), and past the table.
const std::vector<std::int64_t> kScalePositions = {0, 62, 63, 64, 65, 127, 128, 129, 1000, 9000};

template <class T>
void check_apply_qk_scaled(Layout layout, std::size_t rotary_dim, std::size_t offset,
                           const rope::QueryScale& scale, rope::Direction direction) {
  constexpr std::size_t d = 64, q_heads = 4, k_heads = 2;
  const std::size_t tokens = kScalePositions.size();
  rope::Options options;
  options.layout = layout;
  options.rotary_dim = rotary_dim;
  options.rotary_offset = offset;
  options.max_positions = 4096;
  const rope::Rotary<T, d> rot(options);
  std::mt19937_64 rng(31);
  const auto q_in = rope_test::random_vector<T>(tokens * q_heads * d, rng);
  const auto k_in = rope_test::random_vector<T>(tokens * k_heads * d, rng);
  std::vector<T> q = q_in, k = k_in;
  rot.apply_qk(rope::Queries(rope::View<T>::contiguous(q.data(), tokens, q_heads, d)).scaled(scale),
               rope::Keys(rope::View<T>::contiguous(k.data(), tokens, k_heads, d)),
               kScalePositions.data(), {direction});
  std::vector<double> scales;
  for (const std::int64_t p : kScalePositions) scales.push_back(rope::query_scale(scale, p));
  require_scaled(q_in, q, q_heads, d, rotary_dim == 0 ? d : rotary_dim, offset, layout,
                 kScalePositions, scales, direction);
  // The keys: the same rotation without the scale, bit for bit the call without one.
  std::vector<T> q_plain = q_in, k_plain = k_in;
  rot.apply_qk(rope::View<T>::contiguous(q_plain.data(), tokens, q_heads, d),
               rope::View<T>::contiguous(k_plain.data(), tokens, k_heads, d),
               kScalePositions.data(), {direction});
  REQUIRE(std::memcmp(k.data(), k_plain.data(), k.size() * sizeof(T)) == 0);
}

}  // namespace

TEST_CASE("query scales: Llama 4's temperature at the steps of its floor", "[query_scale]") {
  const rope::Llama4Temperature temperature{8192, 0.1};
  for (std::int64_t k = 1; k <= 3; ++k) {
    for (const std::int64_t p1 : {k * 8192 - 1, k * 8192, k * 8192 + 1}) {  // p + 1
      const double expected = llama4_temperature(p1 - 1, 8192, 0.1);
      INFO("p + 1 = " << p1);
      REQUIRE(std::abs(rope::query_scale(temperature, p1 - 1) - expected) <=
              4 * rope_test::unit_roundoff<double> * expected);
    }
    // Below the step, the step before's value; at and past it, the next one.
    REQUIRE(rope::query_scale(temperature, k * 8192 - 2) ==
            rope::query_scale(temperature, k * 8192 - 3));
    REQUIRE(rope::query_scale(temperature, k * 8192 - 1) >
            rope::query_scale(temperature, k * 8192 - 2));
  }
  REQUIRE(rope::query_scale(temperature, 0) == 1.0);
  REQUIRE(rope::query_scale(temperature, 8190) == 1.0);
}

TEST_CASE("query scales: Ministral 3's Llama4Scaling at the steps of its floor", "[query_scale]") {
  const rope::Llama4Scaling scaling{0.1, 16384};
  for (std::int64_t k = 1; k <= 3; ++k) {
    for (const std::int64_t p : {k * 16384 - 1, k * 16384, k * 16384 + 1}) {
      const double expected = ministral3_scale(p, 0.1, 16384);
      INFO("p = " << p);
      REQUIRE(std::abs(rope::query_scale(scaling, p) - expected) <=
              4 * rope_test::unit_roundoff<double> * expected);
    }
    REQUIRE(rope::query_scale(scaling, k * 16384) > rope::query_scale(scaling, k * 16384 - 1));
  }
  REQUIRE(rope::query_scale(scaling, 16383) == 1.0);
  // Published value: 1 + 0.1·ln 2 at the first step.
  REQUIRE(std::abs(rope::query_scale(scaling, 16384) - (1 + 0.1 * std::log(2.0))) <= 1e-15);
}

TEMPLATE_TEST_CASE("apply_qk with a query scale: q rotated and scaled, k rotated, one pass",
                   "[query_scale]", float, double, Eigen::half, Eigen::bfloat16) {
  const rope::QueryScale scales[] = {rope::Llama4Scaling{0.3, 64},
                                     rope::Llama4Temperature{64, 0.5}};
  for (const Layout layout : {Layout::interleaved, Layout::half_split}) {
    for (const auto& scale : scales) {
      for (const auto direction : {rope::Direction::forward, rope::Direction::inverse}) {
        INFO("layout " << rope::to_string(layout) << ", scale " << scale.index() << ", direction "
                       << int(direction));
        check_apply_qk_scaled<TestType>(layout, 0, 0, scale, direction);    // the whole head
        check_apply_qk_scaled<TestType>(layout, 32, 16, scale, direction);  // partial rotary
      }
    }
  }
}

TEST_CASE("apply_qk with a query scale: pairs with theta 0 are scaled, not rotated",
          "[query_scale]") {
  // Proportional RoPE leaves its last pairs alone; a scaled query multiplies them all the same.
  constexpr std::size_t d = 64;
  rope::Options options;
  options.scaling = rope::Proportional{0.25, 1.0};
  const rope::Rotary<float, d> rot(options);
  std::mt19937_64 rng(32);
  const auto q_in = rope_test::random_vector<float>(3 * d, rng);
  std::vector<float> q = q_in, k(3 * d, 1.0f);
  const std::int64_t positions[] = {5, 64, 65};
  const rope::Llama4Scaling scale{0.3, 64};
  rot.apply_qk(rope::Queries(rope::View<float>::contiguous(q.data(), 3, 1, d)).scaled(scale),
               rope::Keys(rope::View<float>::contiguous(k.data(), 3, 1, d)), positions);
  const std::size_t pairs = 8;  // ⌊0.25 · 32⌋ of the 32 pairs rotate
  for (std::size_t t = 0; t < 3; ++t) {
    const float s = float(rope::query_scale(scale, positions[t]));
    for (std::size_t j = pairs; j < d / 2; ++j) {
      for (const std::size_t i : {j, j + d / 2}) {  // half_split pair j
        REQUIRE(q[t * d + i] == q_in[t * d + i] * s);
      }
    }
  }
}

TEMPLATE_TEST_CASE("scale_queries: queries of a layer without RoPE times s(p)", "[query_scale]",
                   float, Eigen::bfloat16) {
  constexpr std::size_t d = 128, heads = 3;
  const std::size_t tokens = kScalePositions.size();
  std::mt19937_64 rng(33);
  const auto q_in = rope_test::random_vector<TestType>(tokens * heads * d, rng);
  std::vector<TestType> q = q_in;
  const rope::Llama4Temperature temperature{64, 0.1};
  rope::scale_queries(rope::View<TestType>::contiguous(q.data(), tokens, heads, d), d,
                      kScalePositions.data(), temperature);
  std::vector<double> scales;
  for (const std::int64_t p : kScalePositions) scales.push_back(llama4_temperature(p, 64, 0.1));
  require_scaled(q_in, q, heads, d, 0, 0, Layout::half_split, kScalePositions, scales,
                 rope::Direction::forward);
}

TEST_CASE("query scale errors: parameters out of range", "[errors][E65]") {
  const rope::Rotary<float, 8> rot;
  std::vector<float> q(8, 1.0f), k(8, 1.0f);
  const std::int64_t position = 3;
  const auto call = [&](const rope::QueryScale& scale) {
    rot.apply_qk(rope::Queries(rope::View<float>::contiguous(q.data(), 1, 1, 8)).scaled(scale),
                 rope::Keys(rope::View<float>::contiguous(k.data(), 1, 1, 8)), &position);
  };
  const double nan = std::nan(""), inf = HUGE_VAL;
  rope_test::require_invalid(
      [&] {
        call(rope::Llama4Temperature{0, 0.1});
      },
      {"Llama4Temperature floor_scale 0", "finite and > 0"});
  rope_test::require_invalid(
      [&] {
        call(rope::Llama4Temperature{-8192, 0.1});
      },
      {"floor_scale -8192"});
  rope_test::require_invalid([&] { call(rope::Llama4Temperature{inf, 0.1}); }, {"floor_scale inf"});
  rope_test::require_invalid(
      [&] {
        call(rope::Llama4Temperature{8192, nan});
      },
      {"attn_scale nan", "must be finite"});
  rope_test::require_invalid(
      [&] {
        call(rope::Llama4Scaling{inf, 16384});
      },
      {"llama_4_scaling_beta inf", "must be finite"});
  rope_test::require_invalid(
      [&] {
        call(rope::Llama4Scaling{0.1, 0});
      },
      {"original_max_position_embeddings 0", "finite and > 0"});
  rope_test::require_invalid(
      [&] {
        rope::scale_queries(rope::View<float>::contiguous(q.data(), 1, 1, 8), 8, &position,
                            rope::Llama4Scaling{0.1, -1});
      },
      {"original_max_position_embeddings -1"});
  rope_test::require_invalid(
      [&] {
        rope::query_scale(rope::Llama4Temperature{nan, 0.1}, 0);
      },
      {"floor_scale nan"});
  // Nothing was written.
  REQUIRE(q == std::vector<float>(8, 1.0f));
  REQUIRE(k == std::vector<float>(8, 1.0f));
}

TEST_CASE("query scale errors: the position of query_scale", "[errors][E66]") {
  rope_test::require_out_of_range([] { rope::query_scale(rope::Llama4Scaling{}, -1); },
                                  {"position -1 is outside [0, 2^53 - 1"});
  rope_test::require_out_of_range(
      [] { rope::query_scale(rope::Llama4Temperature{}, std::int64_t{1} << 53); },
      {"position 9007199254740992 is outside"});
}
