// Context shift: Rotary::shift(keys, δ) applied to keys rotated to m gives the keys of m + δ.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include <rope/rope.hpp>

#include "support.hpp"

namespace {

struct Scheme {
  std::string name;
  rope::Scaling scaling;
};

// Every scheme whose θ_j is fixed once the Rotary is built (DynamicNTK and LongRope for a given
// sequence_length included), with parameters of released configurations.
std::vector<Scheme> schemes(std::size_t rotary_dim) {
  rope::Yarn yarn;
  yarn.factor = 4;
  yarn.original_max_position_embeddings = 32768;  // Qwen2.5's long-context recipe
  rope::LongRope longrope;
  for (std::size_t j = 0; j < rotary_dim / 2; ++j) {
    longrope.short_factor.push_back(1.0 + 0.01 * double(j));
    longrope.long_factor.push_back(1.0 + 0.5 * double(j));
  }
  std::vector<double> factors(rotary_dim / 2, 1.0);
  factors.back() = 8;
  return {{"Unscaled", rope::Unscaled{}},
          {"Linear", rope::Linear{4}},
          {"NTKAware", rope::NTKAware{2}},
          {"DynamicNTK", rope::DynamicNTK{2, 2048}},
          {"Yarn", yarn},
          {"Llama3", rope::Llama3{}},
          {"LongRope", longrope},
          {"FrequencyFactors", rope::FrequencyFactors{factors}}};
}

// Compares shifted keys with the keys rotated directly, pair by pair; p from the input x.
template <class T>
void require_shifted(const std::vector<T>& x, const std::vector<T>& shifted,
                     const std::vector<T>& direct, std::size_t d, rope::Layout layout, double f,
                     double m, double delta, std::size_t rotary_dim = 0) {
  // The rotated slice is the last rotary_dim coordinates of each head (the whole by default).
  const std::size_t r = rotary_dim == 0 ? d : rotary_dim, offset = d - r;
  double worst = 0;
  std::size_t worst_i = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const std::size_t partner = rope_test::partner_index(i, d, layout, r, offset);
    const double p = std::abs(double(x[i])) + std::abs(double(x[partner]));
    const double ratio = std::abs(double(shifted[i]) - double(direct[i])) /
                         rope_test::shift_bound<T>(p, f, m, delta);
    if (!(ratio <= worst)) worst = ratio, worst_i = i;
  }
  INFO("worst coordinate " << worst_i << ": shifted " << double(shifted[worst_i]) << ", direct "
                           << double(direct[worst_i]) << ", error / bound " << worst);
  REQUIRE(worst <= 1.0);
}

}  // namespace

TEMPLATE_TEST_CASE("Rotary::shift: keys at m shifted by delta are the keys at m + delta", "[shift]",
                   float, double, Eigen::half, Eigen::bfloat16) {
  constexpr std::size_t d = 64, tokens = 5, heads = 3;
  std::mt19937_64 rng(7);
  const std::vector<std::int64_t> starts = {0, 17, 1000, 70000};  // past the table too
  const std::vector<std::int64_t> deltas = {1, -1, 37, -17, 4096, -70000};
  for (const auto layout : {rope::Layout::interleaved, rope::Layout::half_split}) {
    for (const std::size_t rotary_dim : {d, std::size_t{32}}) {
      for (const Scheme& scheme : schemes(rotary_dim)) {
        rope::Options options;
        options.head_size = d;
        options.layout = layout;
        options.rotary_dim = rotary_dim;
        options.rotary_offset = d - rotary_dim;
        options.scaling = scheme.scaling;
        options.sequence_length = 100000;
        options.max_positions = 2048;
        const rope::Rotary<TestType> rot(options);
        for (const std::int64_t start : starts) {
          for (const std::int64_t delta : deltas) {
            std::vector<std::int64_t> at(tokens), moved(tokens);
            for (std::size_t t = 0; t < tokens; ++t) {
              at[t] = start + std::int64_t(3 * t);
              moved[t] = at[t] + delta;
            }
            if (moved[0] < 0) continue;
            INFO(rope::to_string(layout) << " rotary_dim " << rotary_dim << " " << scheme.name
                                         << " from " << start << " by " << delta);
            const auto x = rope_test::random_vector<TestType>(tokens * heads * d, rng);
            std::vector<TestType> keys = x, direct = x;
            rot.apply(keys.data(), tokens, heads, at.data());
            rot.shift(rope::View<TestType>::contiguous(keys.data(), tokens, heads, d), delta);
            rot.apply(direct.data(), tokens, heads, moved.data());
            require_shifted(x, keys, direct, d, layout, rot.attention_factor(),
                            double(start + 3 * std::int64_t(tokens)), double(delta), rotary_dim);
          }
        }
      }
    }
  }
}

TEMPLATE_TEST_CASE("Rotary::shift: by 0 changes no bit, and back by -delta undoes delta", "[shift]",
                   float, double, Eigen::half, Eigen::bfloat16) {
  constexpr std::size_t d = 128, tokens = 4, heads = 2;
  std::mt19937_64 rng(11);
  for (const auto layout : {rope::Layout::interleaved, rope::Layout::half_split}) {
    rope::Options options;
    options.layout = layout;
    rope::Yarn yarn;
    yarn.factor = 8;
    options.scaling = yarn;  // a factor on cos and sin that shift must not apply
    const rope::Rotary<TestType, d> rot(options);
    REQUIRE(rot.attention_factor() > 1.0);
    const auto x = rope_test::random_vector<TestType>(tokens * heads * d, rng);
    const auto view = [&](std::vector<TestType>& v) {
      return rope::View<TestType>::contiguous(v.data(), tokens, heads, d);
    };
    std::vector<TestType> unmoved = x;
    rot.shift(view(unmoved), 0);
    REQUIRE(std::memcmp(unmoved.data(), x.data(), x.size() * sizeof(TestType)) == 0);
    for (const std::int64_t delta : {std::int64_t{1}, std::int64_t{-300}, std::int64_t{123456}}) {
      INFO(rope::to_string(layout) << " delta " << delta);
      std::vector<TestType> y = x;
      rot.shift(view(y), delta);
      rot.shift(view(y), -delta);
      // Shifting from 0 by δ then by −δ is the shift test above with f = 1 and m = 0.
      require_shifted(x, y, x, d, layout, 1.0, 0.0, double(delta));
    }
  }
}

TEST_CASE("Rotary::shift: shifts compose, and strided views shift only their tokens", "[shift]") {
  constexpr std::size_t d = 128, heads = 8, cache = 12;
  std::mt19937_64 rng(3);
  rope::Options options;
  options.layout = rope::Layout::interleaved;
  options.base = 500000;
  const rope::Rotary<float, d> rot(options);
  // A [heads][cache][d] cache (head-major, as HuggingFace's past_key_values); tokens 4..11 move.
  const auto x = rope_test::random_vector<float>(heads * cache * d, rng);
  const auto tail = [&](std::vector<float>& v) {
    return rope::View<float>(v.data() + 4 * d, cache - 4, heads, d, cache * d);
  };
  std::vector<float> twice = x, once = x;
  rot.shift(tail(twice), 100);
  rot.shift(tail(twice), -30);
  rot.shift(tail(once), 70);
  for (std::size_t h = 0; h < heads; ++h) {
    for (std::size_t t = 0; t < cache; ++t) {
      const float* a = twice.data() + (h * cache + t) * d;
      const float* b = once.data() + (h * cache + t) * d;
      const float* original = x.data() + (h * cache + t) * d;
      if (t < 4) {  // not in the view: untouched
        REQUIRE(std::memcmp(a, original, d * sizeof(float)) == 0);
        REQUIRE(std::memcmp(b, original, d * sizeof(float)) == 0);
        continue;
      }
      std::vector<float> va(a, a + d), vb(b, b + d), vx(original, original + d);
      // Two shifts against one: the bound with the first shift as "m" (100, then −30 to 70).
      require_shifted(vx, va, vb, d, options.layout, 1.0, 100.0, -30.0);
    }
  }
}

TEST_CASE("Rotary::shift: threads give the bits of one thread", "[shift][execution]") {
  constexpr std::size_t d = 64, tokens = 301, heads = 4;
  std::mt19937_64 rng(5);
  const rope::Rotary<float, d> rot;
  const auto x = rope_test::random_vector<float>(tokens * heads * d, rng);
  std::vector<float> one = x, many = x;
  rot.shift(rope::View<float>::contiguous(one.data(), tokens, heads, d), -1234);
  rope::Execution execution;
  execution.threads = 3;
  execution.min_bytes_per_thread = 1;
  rot.shift(rope::View<float>::contiguous(many.data(), tokens, heads, d), -1234, execution);
  REQUIRE(std::memcmp(one.data(), many.data(), x.size() * sizeof(float)) == 0);
}

TEST_CASE("Rotary::shift: DynamicNTK keys rotated for another length do not shift exactly",
          "[shift][scaling]") {
  // The documented limit: DynamicNTK's θ_j depends on sequence_length, so keys rotated when the
  // sequence was short cannot be shifted into the rotation of a longer sequence.
  constexpr std::size_t d = 64, heads = 1;
  std::mt19937_64 rng(9);
  rope::Options early, late;
  early.scaling = late.scaling = rope::DynamicNTK{4, 2048};
  early.sequence_length = 2048;  // unscaled
  late.sequence_length = 8192;   // base stretched
  const rope::Rotary<double, d> at_2048(early), at_8192(late);
  const auto x = rope_test::random_vector<double>(heads * d, rng);
  std::vector<double> keys = x, direct = x;
  const std::int64_t m = 1000, delta = -500;
  at_2048.apply(keys.data(), 1, heads, rope::Positions::consecutive(m));
  at_8192.shift(rope::View<double>::contiguous(keys.data(), 1, heads, d), delta);
  at_8192.apply(direct.data(), 1, heads, rope::Positions::consecutive(m + delta));
  double worst = 0;
  for (std::size_t i = 0; i < d; ++i) worst = std::max(worst, std::abs(keys[i] - direct[i]));
  REQUIRE(worst > 1e-3);  // far above shift_bound<double> (about 1e-12 here)
}
