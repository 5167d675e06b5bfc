// Bad input: each gets the documented exception, its message names the offending value and the
// limit, and the caller's buffers are left untouched.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include <Eigen/Core>
#include <catch2/catch.hpp>

#include <rope/rope.hpp>

namespace {

using rope::Layout;
using rope::Options;
using rope::Positions;
using rope::View;

// Runs f, requires it to throw exactly E, and requires each fragment in the message.
template <class E, class F>
void require_throws(F&& f, std::initializer_list<std::string> fragments) {
  try {
    f();
    FAIL("no exception was thrown");
  } catch (const E& e) {
    const std::string message = e.what();
    for (const std::string& fragment : fragments) {
      CHECK_THAT(message, Catch::Matchers::Contains(fragment));
    }
  } catch (const std::exception& e) {
    FAIL("threw a different exception: " << e.what());
  }
}

Options options(std::size_t head_size, double base = 10000.0, std::size_t positions = 16) {
  return Options{head_size, base, Layout::half_split, positions};
}

}  // namespace

TEST_CASE("Rotary rejects an invalid configuration", "[errors]") {
  using Dynamic = rope::Rotary<float>;
  SECTION("odd head size") {
    require_throws<std::invalid_argument>([] { Dynamic r(options(7)); }, {"head_size 7", "even"});
  }
  SECTION("zero head size") {
    require_throws<std::invalid_argument>([] { Dynamic r(options(0)); }, {"head_size 0"});
  }
  SECTION("head size that disagrees with the compile-time Dim") {
    require_throws<std::invalid_argument>([] { rope::Rotary<float, 8> r(options(6)); },
                                          {"head_size 6", "compile-time head size 8"});
  }
  SECTION("base not finite and > 0") {
    for (const double base : {0.0, -10000.0}) {
      require_throws<std::invalid_argument>([base] { Dynamic r(options(8, base)); },
                                            {"base " + std::to_string(base), "> 0"});
    }
    for (const double base : {std::nan(""), HUGE_VAL}) {
      require_throws<std::invalid_argument>([base] { Dynamic r(options(8, base)); },
                                            {"base", "finite"});
    }
  }
  SECTION("zero table positions") {
    require_throws<std::invalid_argument>([] { Dynamic r(options(8, 10000.0, 0)); },
                                          {"at least 1 position", "got 0"});
  }
  SECTION("a table too large to allocate fails before allocating") {
    const std::size_t too_many = std::numeric_limits<std::size_t>::max() / 4;
    require_throws<std::invalid_argument>(
        [&] { Dynamic r(options(8, 10000.0, too_many)); },
        {std::to_string(too_many) + " positions", "exceeds the limit"});
  }
}

TEST_CASE("Rotary rejects bad call arguments and leaves the buffers untouched", "[errors]") {
  const rope::Rotary<float, 8> rot(options(8));
  const std::size_t tokens = 2, heads = 3, n = tokens * heads * 8;
  std::vector<float> x(n);
  for (std::size_t i = 0; i < n; ++i) x[i] = float(i) + 1;
  const std::vector<float> original = x;
  std::vector<float> dst(n, -1.0f);
  const std::vector<float> dst_original = dst;

  SECTION("a position past 2^53 - 1, where double angles stop being exact") {
    const std::int64_t big = std::int64_t{1} << 53;
    const std::int64_t past[] = {3, big};
    require_throws<std::out_of_range>(
        [&] { rot.apply(x.data(), tokens, heads, past); },
        {"position 9007199254740992", "token 1", "[0, 2^53 - 1 = 9007199254740991]"});
    require_throws<std::out_of_range>(
        [&] { rot.apply(x.data(), tokens, heads, Positions::consecutive(big - 1)); },
        {"position 9007199254740992", "token 1"});
    Eigen::VectorXf v = Eigen::VectorXf::Ones(8);
    require_throws<std::out_of_range>([&] { rot.apply(v, big); }, {"position 9007199254740992"});
    REQUIRE(v == Eigen::VectorXf::Ones(8));
  }
  SECTION("a negative position") {
    const std::int64_t negative[] = {0, -1};
    require_throws<std::out_of_range>([&] { rot.apply(x.data(), tokens, heads, negative); },
                                      {"position -1", "token 1"});
    require_throws<std::out_of_range>(
        [&] { rot.apply(x.data(), tokens, heads, Positions::consecutive(-2)); },
        {"position -2", "token 0"});
  }
  SECTION("null pointers") {
    const std::int64_t at[] = {0, 1};
    require_throws<std::invalid_argument>(
        [&] { rot.apply(static_cast<float*>(nullptr), tokens, heads, at); }, {"null"});
    require_throws<std::invalid_argument>(
        [&] { rot.apply(x.data(), static_cast<float*>(nullptr), tokens, heads, at); },
        {"dst is a null pointer"});
    require_throws<std::invalid_argument>(
        [&] { rot.apply(x.data(), tokens, heads, static_cast<const std::int64_t*>(nullptr)); },
        {"positions is a null pointer"});
  }
  SECTION("strides that make heads overlap") {
    const std::int64_t at[] = {0, 1};
    // head_stride 4 < head size 8
    require_throws<std::invalid_argument>(
        [&] { rot.apply(View<float>(x.data(), tokens, heads, 24, 4), at); },
        {"head_stride 4", "head size 8"});
    // token_stride 16 < 3 heads × head_stride 8
    require_throws<std::invalid_argument>(
        [&] { rot.apply(View<float>(x.data(), tokens, heads, 16, 8), at); },
        {"token_stride 16", "3 x head_stride 8 = 24"});
    // [heads][tokens] order: head_stride 12 < 2 tokens × token_stride 8
    require_throws<std::invalid_argument>(
        [&] { rot.apply(View<float>(x.data(), tokens, heads, 8, 12), at); },
        {"head_stride 12", "2 x token_stride 8 = 16"});
    // equal strides: every head of a token would sit on the same memory
    require_throws<std::invalid_argument>(
        [&] { rot.apply(View<float>(x.data(), tokens, heads, 8, 8), at); },
        {"token_stride 8", "3 x head_stride 8 = 24"});
    // one token: only the head stride matters
    require_throws<std::invalid_argument>(
        [&] { rot.apply(View<float>(x.data(), 1, heads, 0, 7), at); }, {"head_stride 7"});
  }
  SECTION("source and destination of different shapes") {
    const std::int64_t at[] = {0, 1};
    require_throws<std::invalid_argument>(
        [&] {
          rot.apply(View<const float>::contiguous(x.data(), tokens, heads, 8),
                    View<float>::contiguous(dst.data(), tokens, 2, 8), at);
        },
        {"3 heads", "2 heads"});
  }
  SECTION("q and k with different token counts") {
    const std::int64_t at[] = {0, 1};
    require_throws<std::invalid_argument>(
        [&] {
          rot.apply_qk(View<float>::contiguous(x.data(), 2, 1, 8),
                       View<float>::contiguous(dst.data(), 1, 1, 8), at);
        },
        {"q has 2 tokens", "k has 1"});
  }
  SECTION("a vector of the wrong size") {
    Eigen::VectorXf v = Eigen::VectorXf::Ones(6);
    require_throws<std::invalid_argument>([&] { rot.apply(v, 0); },
                                          {"6 coefficients", "head size is 8"});
  }
  REQUIRE(x == original);
  REQUIRE(dst == dst_original);
}
