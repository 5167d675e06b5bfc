// The error contract of docs/errors.md, one test case per row, tagged with the row's ID ([E01],
// ...). Each asserts the exception type, that the message names the offending value and the
// limit, and that the caller's buffers are untouched. ctest `errors.table` checks that every row
// of the table has a test case here and every tag here a row.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include <Eigen/Core>
#include <catch2/catch.hpp>

#include <rope/rope.hpp>

#include "support.hpp"

namespace {

using rope::Layout;
using rope::Options;
using rope::Positions;
using rope::View;
using Dynamic = rope::Rotary<float>;

using rope_test::require_invalid;
using rope_test::require_out_of_range;

Options options(std::size_t head_size, double base = 10000.0, std::size_t positions = 16) {
  return Options{head_size, base, Layout::half_split, positions};
}

Options scaled(rope::Scaling scaling, std::size_t head_size = 64) {
  Options o = options(head_size);
  o.scaling = std::move(scaling);
  return o;
}

// A batch of 2 tokens × 3 heads of 8 floats, with a copy to compare against after a call.
struct Batch {
  static constexpr std::size_t tokens = 2, heads = 3, d = 8, n = tokens * heads * d;
  std::vector<float> x, dst;
  std::vector<float> x_before, dst_before;
  std::int64_t at[tokens] = {0, 1};

  Batch() : x(n), dst(n, -1.0f) {
    for (std::size_t i = 0; i < n; ++i) x[i] = float(i) + 1;
    x_before = x;
    dst_before = dst;
  }
  View<float> view() { return View<float>::contiguous(x.data(), tokens, heads, d); }
  View<float> dst_view() { return View<float>::contiguous(dst.data(), tokens, heads, d); }
  bool untouched() const { return x == x_before && dst == dst_before; }
};

const rope::Rotary<float, 8> rot8(options(8));

// A double as the messages print it: printf's %g.
std::string g(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%g", value);
  return text;
}

}  // namespace

// ---- construction

TEST_CASE("E01: an odd head size", "[errors][E01]") {
  require_invalid([] { Dynamic r(options(7)); }, {"head_size 7", "even"});
  require_invalid([] { rope::inverse_frequencies(7); }, {"head_size 7", "even"});
  require_invalid([] { rope::frequencies(7, 1e4, rope::Unscaled{}); }, {"head_size 7"});
  require_invalid(
      [] {
        rope::CachedRotary<float> r({7, Layout::half_split, 0, 0});
      },
      {"head_size 7"});
  require_invalid([] { rope::head_permutation(7, Layout::interleaved, Layout::half_split); },
                  {"head_size 7"});
  Eigen::MatrixXf w = Eigen::MatrixXf::Ones(12, 3);
  require_invalid([&] { rope::convert_rows(w, 4, 3, Layout::interleaved, Layout::half_split); },
                  {"head_size 3", "even"});
  REQUIRE(w == Eigen::MatrixXf::Ones(12, 3));
}

TEST_CASE("E02: a zero head size", "[errors][E02]") {
  require_invalid([] { Dynamic r(options(0)); }, {"head_size 0", "at least 2"});
  require_invalid([] { rope::inverse_frequencies(0); }, {"head_size 0"});
  require_invalid(
      [] {
        rope::CachedRotary<float> r({0, Layout::half_split, 0, 0});
      },
      {"head_size 0"});
}

TEST_CASE("E03: a head size that disagrees with the compile-time Dim", "[errors][E03]") {
  require_invalid([] { rope::Rotary<float, 8> r(options(6)); },
                  {"head_size 6", "compile-time head size 8"});
}

TEST_CASE("E04: an odd rotary_dim", "[errors][E04]") {
  Options o = options(8);
  o.rotary_dim = 5;
  require_invalid([&] { Dynamic r(o); }, {"rotary_dim 5", "even"});
  require_invalid(
      [] {
        rope::CachedRotary<float> r({8, Layout::half_split, 5, 0});
      },
      {"rotary_dim 5"});
  require_invalid([] { rope::head_permutation(6, Layout::interleaved, Layout::half_split, 3); },
                  {"rotary_dim 3 must be even"});
}

TEST_CASE("E05: a rotary slice past the head", "[errors][E05]") {
  Options o = options(8);
  o.rotary_dim = 8;
  o.rotary_offset = 4;
  require_invalid([&] { Dynamic r(o); },
                  {"rotary_offset 4 + rotary_dim 8", "exceeds the head size 8"});
  o.rotary_dim = 10;
  o.rotary_offset = 0;
  require_invalid([&] { rope::Rotary<float, 8> r(o); }, {"rotary_dim 10", "head size 8"});
  require_invalid(
      [] {
        rope::CachedRotary<float> r({16, Layout::half_split, 18, 0});
      },
      {"rotary_dim 18 exceeds the head size 16"});
  Eigen::MatrixXf w = Eigen::MatrixXf::Ones(12, 3);
  require_invalid(
      [&] { rope::convert_rows(w, 2, 6, Layout::interleaved, Layout::half_split, 4, 4); },
      {"rotary_offset 4 + rotary_dim 4 exceeds the head size 6"});
}

TEST_CASE("E06: a base that is not a finite number > 0", "[errors][E06]") {
  for (const double base : {0.0, -10000.0, std::nan(""), HUGE_VAL, -HUGE_VAL}) {
    const std::string named = "base " + g(base);
    require_invalid([base] { Dynamic r(options(8, base)); }, {named, "finite number > 0"});
    require_invalid([base] { rope::inverse_frequencies(8, base); }, {named});
    require_invalid([base] { rope::inverse_frequencies_float32(8, base); }, {named});
    require_invalid([base] { rope::frequencies(8, base, rope::Linear{2}); }, {named});
  }
}

TEST_CASE("E07: a table of zero positions", "[errors][E07]") {
  require_invalid([] { Dynamic r(options(8, 10000.0, 0)); }, {"at least 1 position", "got 0"});
  require_invalid([] { rope::Table<float> t(Layout::interleaved, {1.0}, 0); }, {"got 0"});
}

TEST_CASE("E08: a table larger than Options::table_memory_limit fails before allocating",
          "[errors][E08]") {
  // 2^21 positions of a 128-wide float head are exactly the default limit of 1 GiB.
  Options o = options(128, 10000.0, std::size_t{1} << 21);
  o.table_memory_limit = std::size_t{1} << 30;
  o.max_positions += 1;
  require_invalid([&] { rope::Rotary<float, 128> r(o); },
                  {"max_positions 2097153", "512 bytes", "table_memory_limit 1073741824",
                   "at most 2097152 positions"});
  // The limit counts bytes of the table's type: double for Rotary<double>.
  o.max_positions = 1025;
  o.table_memory_limit = 1024 * 128 * 8;
  require_invalid([&] { rope::Rotary<double, 128> r(o); },
                  {"max_positions 1025", "1024 bytes", "at most 1024 positions"});
  o.max_positions = 1024;
  REQUIRE_NOTHROW(rope::Rotary<double, 128>(o));
  // A count whose byte size would wrap around std::size_t is refused the same way.
  o.max_positions = std::numeric_limits<std::size_t>::max() / 4;
  require_invalid([&] { rope::Rotary<float, 128> r(o); },
                  {"max_positions " + std::to_string(o.max_positions), "table_memory_limit"});
}

TEST_CASE("E09: a Table of more elements than a vector can hold", "[errors][E09]") {
  const std::size_t too_many = rope::Table<float>::max_size() / 2 + 1;
  require_invalid(
      [&] {
        rope::Table<float> t(Layout::half_split, {1.0, 0.5}, too_many);
      },
      {std::to_string(too_many) + " positions x 4 entries",
       "exceeds the limit of " + std::to_string(rope::Table<float>::max_size())});
}

TEST_CASE("E10: a Table without frequencies", "[errors][E10]") {
  require_invalid([] { rope::Table<float> t(Layout::half_split, {}, 4); },
                  {"at least one frequency, got 0"});
}

TEST_CASE("E11: a sequence_length that is negative or not finite", "[errors][E11]") {
  for (const double length : {-1.0, std::nan(""), HUGE_VAL}) {
    Options o = scaled(rope::DynamicNTK{2.0, 2048});
    o.sequence_length = length;
    const std::string named = "sequence_length " + g(length);
    require_invalid([&] { Dynamic r(o); }, {named, ">= 0"});
    require_invalid([&] { rope::frequencies(64, 1e4, rope::Unscaled{}, length); }, {named});
  }
}

// ---- scaling parameters

TEST_CASE("E12: Linear, NTKAware and DynamicNTK parameters not finite and > 0", "[errors][E12]") {
  for (const double bad : {0.0, -2.0, std::nan(""), HUGE_VAL}) {
    const std::string value = g(bad);
    require_invalid([&] { Dynamic r(scaled(rope::Linear{bad})); }, {"Linear::factor " + value});
    require_invalid([&] { Dynamic r(scaled(rope::NTKAware{bad})); }, {"NTKAware::factor " + value});
    require_invalid(
        [&] {
          Dynamic r(scaled(rope::DynamicNTK{bad, 2048}));
        },
        {"DynamicNTK::factor " + value});
    require_invalid(
        [&] {
          Dynamic r(scaled(rope::DynamicNTK{2, bad}));
        },
        {"DynamicNTK::max_position_embeddings " + value});
  }
}

TEST_CASE("E13: NTK scaling of a rotary dimension of 2", "[errors][E13]") {
  require_invalid([] { rope::frequencies(2, 1e4, rope::NTKAware{2.0}); },
                  {"rotary dimension > 2, got 2"});
  require_invalid(
      [] {
        rope::frequencies(2, 1e4, rope::DynamicNTK{2.0, 16}, 64);
      },
      {"rotary dimension > 2, got 2"});
}

TEST_CASE("E14: Yarn parameters not finite and > 0", "[errors][E14]") {
  const auto with = [](auto&& set) {
    rope::Yarn yarn{16, 4096};
    set(yarn);
    return scaled(yarn);
  };
  require_invalid([&] { Dynamic r(with([](rope::Yarn& y) { y.factor = -1; })); },
                  {"Yarn::factor -1"});
  require_invalid(
      [&] { Dynamic r(with([](rope::Yarn& y) { y.original_max_position_embeddings = 0; })); },
      {"Yarn::original_max_position_embeddings 0"});
  require_invalid([&] { Dynamic r(with([](rope::Yarn& y) { y.beta_fast = std::nan(""); })); },
                  {"Yarn::beta_fast nan"});
  require_invalid([&] { Dynamic r(with([](rope::Yarn& y) { y.beta_slow = 0; })); },
                  {"Yarn::beta_slow 0"});
  require_invalid([&] { Dynamic r(with([](rope::Yarn& y) { y.attention_factor = -0.5; })); },
                  {"Yarn attention factor -0.5"});
  // mscale / mscale_all_dim that make the factor (0.1·mscale·ln 16 + 1) / (...) negative
  require_invalid(
      [&] {
        Dynamic r(with([](rope::Yarn& y) {
          y.mscale = -10;
          y.mscale_all_dim = 1;
        }));
      },
      {"Yarn attention factor -"});
}

TEST_CASE("E15: Yarn beta_fast < beta_slow", "[errors][E15]") {
  rope::Yarn yarn{16, 4096};
  yarn.beta_fast = 1;
  yarn.beta_slow = 32;
  require_invalid([&] { Dynamic r(scaled(yarn)); }, {"Yarn::beta_fast 1", ">= beta_slow 32"});
}

TEST_CASE("E16: Llama3 parameters not finite and > 0", "[errors][E16]") {
  require_invalid([] { Dynamic r(scaled(rope::Llama3{0, 1, 4, 8192})); }, {"Llama3::factor 0"});
  require_invalid(
      [] {
        Dynamic r(scaled(rope::Llama3{8, -1, 4, 8192}));
      },
      {"Llama3::low_freq_factor -1"});
  require_invalid(
      [] {
        Dynamic r(scaled(rope::Llama3{8, 1, 4, HUGE_VAL}));
      },
      {"Llama3::original_max_position_embeddings inf"});
}

TEST_CASE("E17: Llama3 high_freq_factor < low_freq_factor", "[errors][E17]") {
  require_invalid(
      [] {
        Dynamic r(scaled(rope::Llama3{8, 4, 1, 8192}));
      },
      {"high_freq_factor 1", ">= low_freq_factor 4"});
  require_invalid(
      [] {
        Dynamic r(scaled(rope::Llama3{8, 1, HUGE_VAL, 8192}));
      },
      {"high_freq_factor inf must be finite"});
  // Equal factors are Llama 4's, and accepted (proportional_test.cpp checks their values).
  REQUIRE(Dynamic(scaled(rope::Llama3{16, 1, 1, 8192})).inverse_frequencies().size() == 32);
}

TEST_CASE("E54: Proportional parameters out of range", "[errors][E54]") {
  require_invalid(
      [] {
        Dynamic r(scaled(rope::Proportional{1.25, 1.0}));
      },
      {"Proportional::partial_rotary_factor 1.25 must be in [0, 1]"});
  require_invalid(
      [] {
        Dynamic r(scaled(rope::Proportional{std::nan(""), 1.0}));
      },
      {"Proportional::partial_rotary_factor nan"});
  require_invalid(
      [] {
        Dynamic r(scaled(rope::Proportional{0.25, 0.0}));
      },
      {"Proportional::factor 0 must be a finite number > 0"});
}

TEST_CASE("E55: theta 0 only for the last pairs, and not for all", "[errors][E55]") {
  std::vector<double> theta(32, 0.5);
  theta[3] = 0.0;
  require_invalid([&] { Dynamic r(scaled(rope::InverseFrequencies{theta})); },
                  {"theta_3 is 0 but theta_31 is not", "must be the last"});
  require_invalid([&] { Dynamic r(scaled(rope::InverseFrequencies{std::vector<double>(32)})); },
                  {"all 32 theta_j are 0: no pair rotates"});
  require_invalid(
      [] {
        Dynamic r(scaled(rope::Proportional{0.0, 1.0}));
      },
      {"all 32 theta_j are 0"});
  // Zeros at the end in each block of a multi-axis head are zeros inside the whole head.
  rope::Options options = scaled(rope::Proportional{0.5, 1.0});
  options.axes = rope::Axes::axial(2);
  require_invalid([&] { Dynamic r(options); }, {"theta_8 is 0 but theta_23 is not"});
}

TEST_CASE("E18: a per-pair list whose length is not rotary_dim/2", "[errors][E18]") {
  rope::LongRope longrope;
  longrope.short_factor.assign(31, 1.0);
  longrope.long_factor.assign(32, 1.0);
  require_invalid([&] { Dynamic r(scaled(longrope)); },
                  {"LongRope::short_factor has 31 values", "has 32 pairs"});
  longrope.short_factor.assign(32, 1.0);
  longrope.long_factor.assign(33, 1.0);
  require_invalid([&] { Dynamic r(scaled(longrope)); }, {"LongRope::long_factor has 33 values"});
  require_invalid(
      [] {
        Dynamic r(scaled(rope::InverseFrequencies{{1.0, 0.5}}));
      },
      {"InverseFrequencies::theta has 2 values", "32 pairs"});
  require_invalid(
      [] {
        Dynamic r(scaled(rope::FrequencyFactors{{1.0, 2.0}}));
      },
      {"FrequencyFactors::factors has 2 values", "32 pairs"});
}

TEST_CASE("E19: a per-pair value not finite and > 0", "[errors][E19]") {
  rope::LongRope longrope;
  longrope.short_factor.assign(32, 1.0);
  longrope.long_factor.assign(32, 1.0);
  longrope.long_factor[3] = 0;
  require_invalid([&] { Dynamic r(scaled(longrope)); }, {"LongRope::long_factor 0"});
  longrope.long_factor[3] = 1;
  longrope.short_factor[0] = std::nan("");
  require_invalid([&] { Dynamic r(scaled(longrope)); }, {"LongRope::short_factor nan"});
  std::vector<double> theta(32, 0.5);
  theta[31] = -0.5;
  require_invalid([&] { Dynamic r(scaled(rope::InverseFrequencies{theta})); },
                  {"InverseFrequencies::theta -0.5 must be a finite number >= 0"});
  theta[31] = std::nan("");
  require_invalid([&] { Dynamic r(scaled(rope::InverseFrequencies{theta})); },
                  {"InverseFrequencies::theta nan"});
  std::vector<double> factors(32, 1.0);
  factors[7] = HUGE_VAL;
  require_invalid([&] { Dynamic r(scaled(rope::FrequencyFactors{factors})); },
                  {"FrequencyFactors::factors inf"});
}

TEST_CASE("E20: LongRope lengths, factor or attention factor not finite and > 0", "[errors][E20]") {
  rope::LongRope longrope;
  longrope.short_factor.assign(32, 1.0);
  longrope.long_factor.assign(32, 1.0);
  rope::LongRope l = longrope;
  l.original_max_position_embeddings = -4096;
  require_invalid([&] { Dynamic r(scaled(l)); },
                  {"LongRope::original_max_position_embeddings -4096"});
  l = longrope;
  l.factor = 0.0;
  require_invalid([&] { Dynamic r(scaled(l)); }, {"LongRope::factor 0"});
  l = longrope;
  l.max_position_embeddings = std::nan("");  // factor = max_position_embeddings / L0
  require_invalid([&] { Dynamic r(scaled(l)); }, {"LongRope::factor nan"});
  l = longrope;
  l.attention_factor = 0.0;
  require_invalid([&] { Dynamic r(scaled(l)); }, {"LongRope attention factor 0"});
}

TEST_CASE("E40: a theta so large that an angle would overflow", "[errors][E40]") {
  std::vector<double> theta(4, 0.5);
  theta[3] = 1e300;
  require_invalid([&] { Dynamic r(scaled(rope::InverseFrequencies{theta}, 8)); },
                  {"theta_3 1e+300", "would overflow"});
  theta[3] = 1e290;  // 1e290 · 2^53 ≈ 9e305 is still finite
  REQUIRE_NOTHROW(Dynamic(scaled(rope::InverseFrequencies{theta}, 8)));
}

TEST_CASE("E41: an attention factor past the table type's range", "[errors][E41]") {
  rope::Yarn yarn{16, 4096};
  yarn.attention_factor = 1e300;
  require_invalid([&] { Dynamic r(scaled(yarn)); },
                  {"attention factor 1e+300", "largest 3.40282e+38"});
  require_invalid([&] { rope::Rotary<Eigen::half> r(scaled(yarn)); }, {"attention factor"});
  REQUIRE_NOTHROW(rope::Rotary<double>(scaled(yarn)));  // a double table holds it
  require_invalid([] { rope::Table<float> t(Layout::half_split, {1.0}, 4, 1e39); },
                  {"attention factor"});
}

// ---- calls

TEST_CASE("E21: a null data pointer", "[errors][E21]") {
  Batch b;
  require_invalid([&] { rot8.apply(static_cast<float*>(nullptr), 2, 3, b.at); },
                  {"src is a null pointer"});
  require_invalid(
      [&] {
        rot8.apply(rope_test::contiguous(b.x.data(), 2, 3, rot8.head_size()),
                   rope_test::contiguous(static_cast<float*>(nullptr), 2, 3, rot8.head_size()),
                   b.at);
      },
      {"dst is a null pointer"});
  require_invalid([&] { rot8.apply_qk(View<float>(nullptr, 2, 1, 8, 8), b.view(), b.at); },
                  {"q is a null pointer"});
  require_invalid([&] { rot8.apply_qk(b.view(), View<float>(nullptr, 2, 1, 8, 8), b.at); },
                  {"k is a null pointer"});
  require_invalid([&] { rot8.shift(View<float>(nullptr, 2, 1, 8, 8), 1); },
                  {"keys is a null pointer"});
  const rope::CachedRotary<float> cached({8, Layout::half_split, 0, 0});
  const std::vector<float> cos(4 * 4, 1.0f), sin(4 * 4, 0.0f);
  require_invalid(
      [&] {
        cached.apply(static_cast<float*>(nullptr), 2, 3, b.at, {cos.data(), sin.data(), 4});
      },
      {"src is a null pointer"});
  REQUIRE(b.untouched());
}

TEST_CASE("E22: a null positions array", "[errors][E22]") {
  Batch b;
  const auto* none = static_cast<const std::int64_t*>(nullptr);
  require_invalid([&] { rot8.apply(b.x.data(), 2, 3, none); }, {"positions is a null pointer"});
  require_invalid([&] { rot8.apply(b.x.data(), 2, 3, static_cast<const std::int32_t*>(nullptr)); },
                  {"positions is a null pointer"});
  require_invalid([&] { rot8.apply_qk(b.view(), b.dst_view(), none); },
                  {"positions is a null pointer"});
  const rope::CachedRotary<float> cached({8, Layout::half_split, 0, 0});
  const std::vector<float> cos(4 * 4, 1.0f), sin(4 * 4, 0.0f);
  require_invalid(
      [&] {
        cached.apply(b.x.data(), 2, 3, none, {cos.data(), sin.data(), 4});
      },
      {"positions is a null pointer"});
  REQUIRE(b.untouched());
}

TEST_CASE("E23: a stride that makes one head overlap the next", "[errors][E23]") {
  Batch b;
  require_invalid([&] { rot8.apply(View<float>(b.x.data(), 2, 3, 24, 4), b.at); },
                  {"src head_stride 4", "smaller than the head size 8"});
  require_invalid([&] { rot8.apply(View<float>(b.x.data(), 1, 3, 0, 7), b.at); },
                  {"head_stride 7"});
  // [heads][tokens] order, tokens inner: token_stride 6 < 8
  require_invalid([&] { rot8.apply(View<float>(b.x.data(), 2, 3, 6, 16), b.at); },
                  {"token_stride 6", "head size 8"});
  require_invalid([&] { rot8.shift(View<float>(b.x.data(), 2, 1, 6, 8), 1); },
                  {"keys token_stride 6 is smaller than the head size 8"});
  require_invalid([&] { rot8.apply_qk(b.view(), View<float>(b.dst.data(), 2, 2, 16, 5), b.at); },
                  {"k head_stride 5"});
  REQUIRE(b.untouched());
}

TEST_CASE("E24: a stride that makes one token's heads overlap the next token's", "[errors][E24]") {
  Batch b;
  require_invalid([&] { rot8.apply(View<float>(b.x.data(), 2, 3, 16, 8), b.at); },
                  {"token_stride 16", "3 x head_stride 8 = 24"});
  // equal strides: every head of a token would sit on the same memory
  require_invalid([&] { rot8.apply(View<float>(b.x.data(), 2, 3, 8, 8), b.at); },
                  {"token_stride 8", "3 x head_stride 8 = 24"});
  // [heads][tokens] order: head_stride 12 < 2 tokens × token_stride 8
  require_invalid([&] { rot8.apply(View<float>(b.x.data(), 2, 3, 8, 12), b.at); },
                  {"head_stride 12", "2 x token_stride 8 = 16"});
  REQUIRE(b.untouched());
}

TEST_CASE("E25: src and dst of different shapes", "[errors][E25]") {
  Batch b;
  require_invalid(
      [&] {
        rot8.apply(View<const float>::contiguous(b.x.data(), 2, 3, 8),
                   View<float>::contiguous(b.dst.data(), 2, 2, 8), b.at);
      },
      {"src is 2 tokens x 3 heads", "dst is 2 tokens x 2 heads"});
  require_invalid(
      [&] {
        rot8.apply(View<const float>::contiguous(b.x.data(), 2, 3, 8),
                   View<float>::contiguous(b.dst.data(), 1, 3, 8), b.at);
      },
      {"dst is 1 tokens x 3 heads"});
  REQUIRE(b.untouched());
}

namespace {

// Whether a head of a shares an element with a head of b, other than the same (token, head) on
// the same elements (in place), checked pair by pair.
bool conflict(const View<float>& a, const View<float>& b, std::size_t d) {
  for (std::size_t t = 0; t < a.tokens(); ++t) {
    for (std::size_t h = 0; h < a.heads(); ++h) {
      for (std::size_t u = 0; u < b.tokens(); ++u) {
        for (std::size_t g = 0; g < b.heads(); ++g) {
          const float* x = a.head(t, h);
          const float* y = b.head(u, g);
          const bool in_place = t == u && h == g && x == y;
          if (!in_place && x < y + d && y < x + d) return true;
        }
      }
    }
  }
  return false;
}

bool passes_check_view(const View<float>& v, std::size_t d) {
  try {
    rope::detail::check_view("v", v, d);
    return true;
  } catch (const std::invalid_argument&) {
    return false;
  }
}

}  // namespace

TEST_CASE("E26: src and dst that share memory without being the same heads", "[errors][E26]") {
  Batch b;
  float* x = b.x.data();
  const auto out_of_place = [&](View<float> src, View<float> dst) {
    rot8.apply(View<const float>(src), dst, b.at);
  };
  // dst one element past src
  require_invalid(
      [&] {
        out_of_place(View<float>::contiguous(x, 2, 2, 8), View<float>::contiguous(x + 1, 2, 2, 8));
      },
      {"src head (token 1, head 0) overlaps dst head (token 0, head 1)",
       "same heads (in place) or disjoint"});
  // the same pointer, [tokens][heads] read and [heads][tokens] written
  require_invalid([&] { out_of_place(View<float>(x, 2, 2, 16, 8), View<float>(x, 2, 2, 8, 16)); },
                  {"src head (token 0, head 1) overlaps dst head (token 1, head 0)"});
  // the same token stride (periodic case): dst's token 0 on src's token 1
  require_invalid(
      [&] { out_of_place(View<float>(x, 2, 1, 16, 8), View<float>(x + 12, 2, 1, 16, 8)); },
      {"src head (token 1, head 0) overlaps dst head (token 0, head 0)"});
  // different token strides (merged head by head): src rows at 0, 16; dst rows at 8, 20
  require_invalid(
      [&] { out_of_place(View<float>(x, 2, 1, 16, 8), View<float>(x + 8, 2, 1, 12, 8)); },
      {"src head (token 1, head 0) overlaps dst head (token 1, head 0)"});
  // CachedRotary checks the same
  const rope::CachedRotary<float> cached({8, Layout::half_split, 0, 0});
  const std::vector<float> cos(4 * 4, 1.0f), sin(4 * 4, 0.0f);
  require_invalid(
      [&] {
        cached.apply(View<const float>::contiguous(x, 1, 2, 8),
                     View<float>::contiguous(x + 1, 1, 2, 8), b.at, {cos.data(), sin.data(), 4});
      },
      {"src head (token 0, head 0) overlaps dst head (token 0, head 0)"});
  REQUIRE(b.untouched());

  // Interleaved but disjoint views are accepted: q and k halves of one buffer, out of place
  // onto the other half, give the result of separate buffers.
  std::vector<float> separate(2 * 8);
  rot8.apply(View<const float>(View<float>(x, 2, 1, 24, 8)),
             View<float>::contiguous(separate.data(), 2, 1, 8), b.at);
  rot8.apply(View<const float>(View<float>(x, 2, 1, 24, 8)), View<float>(x + 8, 2, 1, 24, 8), b.at);
  REQUIRE(std::equal(separate.begin(), separate.begin() + 8, x + 8));
  REQUIRE(std::equal(separate.begin() + 8, separate.end(), x + 32));

  // The check against a pair-by-pair search, for 4000 random pairs of small valid views in a
  // buffer of 96 floats (head size 4): it throws exactly when a head of src shares an element
  // with a head of dst other than itself in place.
  std::mt19937 rng(26);
  std::vector<float> buffer(96, 1.0f);
  const rope::Rotary<float, 4> rot4;
  const std::int64_t positions[3] = {0, 1, 2};
  const auto random_view = [&] {
    std::uniform_int_distribution<std::size_t> count(1, 3), stride(0, 20), offset(0, 30);
    return View<float>(buffer.data() + offset(rng), count(rng), count(rng), stride(rng),
                       stride(rng));
  };
  int checked = 0, overlapping = 0;
  while (checked < 4000) {
    const View<float> src = random_view(), dst_shape = random_view();
    const View<float> dst(dst_shape.data(), src.tokens(), src.heads(), dst_shape.token_stride(),
                          dst_shape.head_stride());
    if (!passes_check_view(src, 4) || !passes_check_view(dst, 4)) continue;
    ++checked;
    const bool expected = conflict(src, dst, 4);
    overlapping += expected;
    bool threw = false;
    try {
      rot4.apply(View<const float>(src), dst, positions);
    } catch (const std::invalid_argument& e) {
      threw = true;
      REQUIRE_THAT(e.what(), Catch::Matchers::Contains("overlaps"));
    }
    INFO("src " << src.tokens() << "x" << src.heads() << " strides " << src.token_stride() << ","
                << src.head_stride() << " at " << (src.data() - buffer.data()) << "; dst strides "
                << dst.token_stride() << "," << dst.head_stride() << " at "
                << (dst.data() - buffer.data()));
    REQUIRE(threw == expected);
  }
  CHECK(overlapping > 1000);  // both outcomes are well represented
  CHECK(overlapping < 3000);
}

TEST_CASE("E27: q and k with different token counts", "[errors][E27]") {
  Batch b;
  require_invalid(
      [&] {
        rot8.apply_qk(View<float>::contiguous(b.x.data(), 2, 1, 8),
                      View<float>::contiguous(b.dst.data(), 1, 1, 8), b.at);
      },
      {"q has 2 tokens but k has 1"});
  REQUIRE(b.untouched());
}

TEST_CASE("E28: q and k that share memory", "[errors][E28]") {
  Batch b;
  float* x = b.x.data();
  require_invalid(
      [&] { rot8.apply_qk(b.view(), b.view(), b.at); },
      {"q head (token 0, head 0) overlaps k head (token 0, head 0)", "must be disjoint"});
  // a fused [tokens][3 heads] buffer: q heads 0-1, k heads 1-2 share head 1
  require_invalid(
      [&] { rot8.apply_qk(View<float>(x, 2, 2, 24, 8), View<float>(x + 8, 2, 2, 24, 8), b.at); },
      {"q head (token 0, head 1) overlaps k head (token 0, head 0)"});
  REQUIRE(b.untouched());
  // q heads 0-1 and k head 2 of the same fused buffer are disjoint
  REQUIRE_NOTHROW(
      rot8.apply_qk(View<float>(x, 2, 2, 24, 8), View<float>(x + 16, 2, 1, 24, 8), b.at));
}

TEST_CASE("E29: a token range outside the batch", "[errors][E29]") {
  Batch b;
  const auto src = View<const float>(b.view());
  require_out_of_range(
      [&] {
        rot8.apply(src, b.dst_view(), b.at, rope::TokenRange{1, 3});
      },
      {"token range [1, 3)", "2 tokens"});
  require_out_of_range(
      [&] {
        rot8.apply(src, b.dst_view(), b.at, rope::TokenRange{2, 1});
      },
      {"token range [2, 1)"});
  require_out_of_range(
      [&] {
        rot8.apply_qk(b.view(), b.dst_view(), b.at, rope::TokenRange{0, 5});
      },
      {"token range [0, 5)", "2 tokens"});
  REQUIRE(b.untouched());
}

TEST_CASE("E30: a negative position", "[errors][E30]") {
  Batch b;
  const std::int64_t negative[] = {0, -1};
  require_out_of_range([&] { rot8.apply(b.x.data(), 2, 3, negative); },
                       {"position -1 of token 1", "[0, 2^53 - 1 = 9007199254740991]"});
  const std::int32_t negative32[] = {-7, 0};
  require_out_of_range([&] { rot8.apply(b.x.data(), 2, 3, negative32); },
                       {"position -7 of token 0"});
  require_out_of_range([&] { rot8.apply(b.x.data(), 2, 3, Positions::consecutive(-2)); },
                       {"position -2 of token 0"});
  require_out_of_range([&] { rot8.apply_qk(b.view(), b.dst_view(), negative); },
                       {"position -1 of token 1"});
  Eigen::VectorXf v = Eigen::VectorXf::Ones(8);
  require_out_of_range([&] { v = rot8.rotated(v, -3); }, {"position -3"});
  REQUIRE(v == Eigen::VectorXf::Ones(8));
  REQUIRE(b.untouched());
}

TEST_CASE("E31: a position past 2^53 - 1", "[errors][E31]") {
  Batch b;
  const std::int64_t big = std::int64_t{1} << 53;
  const std::int64_t past[] = {3, big};
  require_out_of_range([&] { rot8.apply(b.x.data(), 2, 3, past); },
                       {"position 9007199254740992 of token 1", "2^53 - 1 = 9007199254740991"});
  require_out_of_range([&] { rot8.apply(b.x.data(), 2, 3, Positions::consecutive(big - 1)); },
                       {"position 9007199254740992 of token 1"});
  Eigen::VectorXf v = Eigen::VectorXf::Ones(8);
  require_out_of_range([&] { v = rot8.rotated(v, big); }, {"position 9007199254740992"});
  require_out_of_range([&] { (void)rot8.rotated(v, big); }, {"position 9007199254740992"});
  REQUIRE(v == Eigen::VectorXf::Ones(8));
  REQUIRE(b.untouched());
}

TEST_CASE("E32: streaming stores in place", "[errors][E32]") {
  Batch b;
  rope::Execution streaming;
  streaming.streaming_stores = true;
  const auto forward = rope::Direction::forward;
  require_invalid(
      [&] {
        rot8.apply(b.x.data(), 2, 3, b.at, {forward, {}, streaming});
      },
      {"streaming stores are for out-of-place calls", "same buffer"});
  require_invalid(
      [&] {
        rot8.apply_qk(b.view(), b.dst_view(), b.at, {forward, {}, streaming});
      },
      {"same buffer"});
  require_invalid([&] { rot8.shift(b.view(), 1, streaming); }, {"same buffer"});
  REQUIRE(b.untouched());
}

TEST_CASE("E33: streaming stores to a dst not aligned to 64 bytes", "[errors][E33]") {
  const std::size_t n = 2 * 3 * 8;
  std::vector<float, Eigen::aligned_allocator<float>> src(n, 1.0f), dst(n + 16, 0.0f);
  // Eigen's allocator aligns to 16 bytes at least; find an element on a 64-byte boundary.
  std::size_t first = 0;
  while (reinterpret_cast<std::uintptr_t>(dst.data() + first) % 64 != 0) ++first;
  rope::Execution streaming;
  streaming.streaming_stores = true;
  const std::int64_t at[] = {1, 2};
  require_invalid(
      [&] {
        rot8.apply(rope_test::contiguous(src.data(), 2, 3, rot8.head_size()),
                   rope_test::contiguous(dst.data() + first + 1, 2, 3, rot8.head_size()), at,
                   {rope::Direction::forward, {}, streaming});
      },
      {"dst aligned to 64 bytes", "dst is 4 bytes past a boundary"});
  REQUIRE(std::all_of(dst.begin(), dst.end(), [](float v) { return v == 0.0f; }));
  REQUIRE_NOTHROW(rot8.apply(rope_test::contiguous(src.data(), 2, 3, rot8.head_size()),
                             rope_test::contiguous(dst.data() + first, 2, 3, rot8.head_size()), at,
                             {rope::Direction::forward, {}, streaming}));
}

TEST_CASE("E34: a shift by more than 2^53 - 1 positions", "[errors][E34]") {
  Batch b;
  const std::int64_t too_far = rope::kMaxPosition + 1;
  require_out_of_range([&] { rot8.shift(b.view(), too_far); },
                       {"shift delta 9007199254740992", "[-(2^53 - 1), 2^53 - 1]"});
  require_out_of_range([&] { rot8.shift(b.view(), -too_far); }, {"shift delta -9007199254740992"});
  require_out_of_range([&] { rot8.shift(b.view(), std::numeric_limits<std::int64_t>::min()); },
                       {"-9223372036854775808"});
  REQUIRE(b.untouched());
}

TEST_CASE("E35: one head of the wrong size", "[errors][E35]") {
  Eigen::VectorXf v = Eigen::VectorXf::Ones(6);
  require_invalid([&] { v = rot8.rotated(v, 0); }, {"6 coefficients", "head size is 8"});
  require_invalid([&] { (void)rot8.rotated(v, 0); }, {"6 coefficients", "head size is 8"});
  REQUIRE(v == Eigen::VectorXf::Ones(6));
}

TEST_CASE("E36: a cache with a null cos or sin", "[errors][E36]") {
  Batch b;
  const rope::CachedRotary<float> cached({8, Layout::half_split, 0, 0});
  const std::vector<float> table(4 * 4, 1.0f);
  require_invalid(
      [&] {
        cached.apply(b.x.data(), 2, 3, b.at, {nullptr, table.data(), 4});
      },
      {"the cache's cos or sin is a null pointer"});
  require_invalid(
      [&] {
        cached.apply(b.x.data(), 2, 3, b.at, {table.data(), nullptr, 4});
      },
      {"null pointer"});
  REQUIRE(b.untouched());
}

TEST_CASE("E37: a cache row_stride narrower than a row", "[errors][E37]") {
  Batch b;
  const rope::CachedRotary<float> cached({8, Layout::half_split, 0, 0});
  const std::vector<float> table(4 * 8, 1.0f);
  require_invalid(
      [&] {
        cached.apply(b.x.data(), 2, 3, b.at,
                     {table.data(), table.data(), 4, rope::CosSinRow::half, 3});
      },
      {"row_stride 3 is smaller than a row of 4 values"});
  require_invalid(
      [&] {
        cached.apply(b.x.data(), 2, 3, b.at,
                     {table.data(), table.data(), 4, rope::CosSinRow::repeated, 7});
      },
      {"row_stride 7 is smaller than a row of 8 values"});
  REQUIRE(b.untouched());
}

TEST_CASE("E38: a cache row outside the cache", "[errors][E38]") {
  Batch b;
  const rope::CachedRotary<float> cached({8, Layout::half_split, 0, 0});
  const std::vector<float> table(4 * 4, 1.0f);
  const std::int64_t past[] = {1, 4}, negative[] = {-1, 0};
  require_out_of_range(
      [&] {
        cached.apply(b.x.data(), 2, 3, past, {table.data(), table.data(), 4});
      },
      {"cache row 4 of token 1 is outside the cache [0, 4)"});
  require_out_of_range(
      [&] {
        cached.apply(b.x.data(), 2, 3, negative, {table.data(), table.data(), 4});
      },
      {"cache row -1 of token 0"});
  REQUIRE(b.untouched());
}

TEST_CASE("E39: a weight matrix whose rows are not heads x head_size", "[errors][E39]") {
  Eigen::MatrixXf w = Eigen::MatrixXf::Ones(12, 3);
  const auto from = Layout::interleaved, to = Layout::half_split;
  require_invalid([&] { rope::convert_rows(w, 0, 6, from, to); },
                  {"12 rows is not 0 heads x head_size 6"});
  require_invalid([&] { rope::convert_rows(w, 5, 2, from, to); },
                  {"12 rows is not 5 heads x head_size 2"});
  // W_k of 2 key heads of 6 converted with the query head count, 3: the rows divide, and still
  // the call refuses, because 3 heads of 6 are 18 rows.
  require_invalid([&] { rope::convert_rows(w, 3, 6, from, to); },
                  {"12 rows is not 3 heads x head_size 6"});
  require_invalid([&] { (void)rope::converted_rows(w, 3, 6, from, to); },
                  {"12 rows is not 3 heads x head_size 6"});
  REQUIRE(w == Eigen::MatrixXf::Ones(12, 3));
}

// ---- multi-axis RoPE

namespace {

Options with_axes(rope::Axes axes, std::size_t head_size = 8) {
  Options o = options(head_size);
  o.axes = std::move(axes);
  return o;
}

const rope::Rotary<float, 8> mrope8(with_axes(rope::Axes::sections({1, 1, 2})));

}  // namespace

TEST_CASE("E42: a multi-axis map of 0 or more than 4 axes", "[errors][E42]") {
  require_invalid([] { Dynamic r(with_axes(rope::Axes::sections({}))); },
                  {"multi-axis RoPE has 0 axes", "1 to 4"});
  require_invalid(
      [] {
        Dynamic r(with_axes(rope::Axes::sections({1, 1, 1, 1, 0})));
      },
      {"5 axes", "1 to 4"});
  require_invalid([] { Dynamic r(with_axes(rope::Axes::axial(0))); }, {"0 axes"});
  require_invalid([] { Dynamic r(with_axes(rope::Axes::custom(5, {0, 0, 0, 0}))); }, {"5 axes"});
}

TEST_CASE("E43: M-RoPE sections that do not add up to the rotary pairs", "[errors][E43]") {
  require_invalid(
      [] {
        Dynamic r(with_axes(rope::Axes::sections({16, 24, 20}), 128));
      },
      {"the sections add up to 60 pairs", "the rotary dimension has 64"});
  require_invalid(
      [] {
        Dynamic r(with_axes(rope::Axes::mrope_interleaved({24, 20, 21}), 128));
      },
      {"add up to 65 pairs", "has 64"});
  // A section larger than all the pairs, whose sum with the others would wrap around to 64.
  require_invalid(
      [] {
        Dynamic r(with_axes(rope::Axes::sections({SIZE_MAX, 65, 0}), 128));
      },
      {"section 0 has 18446744073709551615 pairs", "the rotary dimension has 64"});
  Options partial = with_axes(rope::Axes::sections({16, 24, 24}), 128);
  partial.rotary_dim = 64;  // 32 pairs
  require_invalid([&] { Dynamic r(partial); }, {"add up to 64 pairs", "has 32"});
}

TEST_CASE("E44: interleaved M-RoPE sections the i mod 3 rule cannot give", "[errors][E44]") {
  require_invalid(
      [] {
        Dynamic r(with_axes(rope::Axes::mrope_interleaved({32, 32}), 128));
      },
      {"interleaved M-RoPE needs 3 sections, got 2"});
  // 30 height pairs would need pairs up to 3·30 = 90: only 21 of the 64 pairs are i mod 3 = 1.
  require_invalid(
      [] {
        Dynamic r(with_axes(rope::Axes::mrope_interleaved({4, 30, 30}), 128));
      },
      {"interleaved section 0 is 4 pairs", "gives axis 0 22 pairs"});
}

TEST_CASE("E45: axial RoPE whose pairs do not split into equal blocks", "[errors][E45]") {
  require_invalid([] { Dynamic r(with_axes(rope::Axes::axial(3), 64)); },
                  {"splits 32 pairs into 3 equal blocks", "not a multiple of 3"});
}

TEST_CASE(
    "E94: blocks of odd or zero width, not adding up to the rotary dimension, or bases "
    "not one per block",
    "[errors][E94]") {
  require_invalid(
      [] {
        Dynamic r(with_axes(rope::Axes::blocks({16, 55, 57}), 128));
      },
      {"block 1 is 55 coordinates wide", "even width from 2 to the rotary dimension 128"});
  require_invalid(
      [] {
        Dynamic r(with_axes(rope::Axes::blocks({0, 64}), 64));
      },
      {"block 0 is 0 coordinates wide"});
  require_invalid(
      [] {
        Dynamic r(with_axes(rope::Axes::blocks({16, 56, 48}), 128));
      },
      {"the blocks add up to 120 coordinates but the rotary dimension has 128"});
  require_invalid(
      [] {
        Dynamic r(with_axes(rope::Axes::blocks({16, 56, 56}, {1e4, 2e3}), 128));
      },
      {"2 bases for 3 blocks"});
  // A block's base is checked as Options::base is (E06).
  require_invalid(
      [] {
        Dynamic r(with_axes(rope::Axes::blocks({64, 64}, {1e4, -1.0}), 128));
      },
      {"base -1 must be a finite number > 0"});
}

TEST_CASE("E46: a custom map of the wrong size or with an axis or theta out of range",
          "[errors][E46]") {
  require_invalid(
      [] {
        Dynamic r(with_axes(rope::Axes::custom(2, {0, 1, 1})));
      },
      {"custom axis map has 3 pairs", "rotary dimension has 4"});
  require_invalid(
      [] {
        Dynamic r(with_axes(rope::Axes::custom(2, {0, 1, 2, 1})));
      },
      {"pair 2 takes axis 2", "there are 2 axes"});
  require_invalid(
      [] {
        Dynamic r(with_axes(rope::Axes::custom(2, {0, 0, 1, 1}, {0, 1})));
      },
      {"custom theta_index has 2 pairs", "has 4"});
  require_invalid(
      [] {
        Dynamic r(with_axes(rope::Axes::custom(2, {0, 0, 1, 1}, {0, 2, 4, 1})));
      },
      {"pair 2 takes theta_4", "there are 4 frequencies"});
}

TEST_CASE("E47: multi-axis positions with another number of axes", "[errors][E47]") {
  Batch b;
  const std::int64_t two_axes[] = {0, 0, 1, 1};
  const auto positions = rope::Positions::token_major(two_axes, 2);
  require_invalid([&] { mrope8.apply(b.x.data(), 2, 3, positions); },
                  {"the positions have 2 coordinates per token", "the Rotary has 3 axes"});
  require_invalid([&] { mrope8.apply_qk(b.view(), b.dst_view(), positions); },
                  {"2 coordinates per token"});
  REQUIRE(b.untouched());
  // One coordinate per token is every axis alike (a text token), not an error.
  REQUIRE_NOTHROW(mrope8.apply(b.view(), rope::Positions::token_major(two_axes, 1)));
}

TEST_CASE("E48: a multi-axis coordinate outside [0, 2^53 - 1], or null positions",
          "[errors][E48]") {
  Batch b;
  const std::int64_t negative[] = {0, 0, 0, 1, -1, 1};
  require_out_of_range(
      [&] { mrope8.apply(b.x.data(), 2, 3, rope::Positions::token_major(negative, 3)); },
      {"coordinate 1 of token 1, -1,", "[0, 2^53 - 1 = 9007199254740991]"});
  const std::int64_t past[] = {0, 1, 0, 1, 0, std::int64_t{1} << 53};  // axis-major
  require_out_of_range(
      [&] {
        mrope8.apply(View<const float>(b.view()), b.dst_view(),
                     rope::Positions::axis_major(past, 3, 2), rope::TokenRange{0, 2});
      },
      {"coordinate 2 of token 1, 9007199254740992,"});
  const std::int32_t negative32[] = {-3, 0, 0, 0, 0, 0};
  require_out_of_range(
      [&] { mrope8.apply_qk(b.view(), b.dst_view(), rope::Positions::token_major(negative32, 3)); },
      {"coordinate 0 of token 0, -3,"});
  const auto* none = static_cast<const std::int64_t*>(nullptr);
  require_invalid([&] { mrope8.apply(b.x.data(), 2, 3, rope::Positions::token_major(none, 3)); },
                  {"positions is a null pointer"});
  // Signed coordinates (Axes::with_signed_coordinates) reach −(2^53 − 1), no further.
  const rope::Rotary<float, 8> signed8(
      with_axes(rope::Axes::sections({1, 1, 2}).with_signed_coordinates()));
  const std::int64_t below[] = {0, -5, 3, 1, 1 - (std::int64_t{1} << 53) - 1, 1};
  require_out_of_range(
      [&] { signed8.apply(b.x.data(), 2, 3, rope::Positions::token_major(below, 3)); },
      {"coordinate 1 of token 1, -9007199254740992,", "[-(2^53 - 1), 2^53 - 1"});
  REQUIRE(b.untouched());
  const std::int64_t lowest[] = {0, -5, 3, 1, 1 - (std::int64_t{1} << 53), 1};
  REQUIRE_NOTHROW(signed8.apply(b.x.data(), 2, 3, rope::Positions::token_major(lowest, 3)));
}

TEST_CASE("E96: a latent grid with an empty size, 5 coordinates, or too many tokens",
          "[errors][E96]") {
  require_invalid(
      [] {
        rope::latent_positions({2, 0, 4});
      },
      {"a latent grid of 2 x 0 x 4 patches with 3 coordinates each"});
  require_invalid([] { rope::latent_positions({1, 4, 4}, 5); }, {"the coordinates 3 or 4"});
  const std::size_t huge = std::size_t{1} << 40;
  require_invalid([&] { rope::latent_positions({huge, huge, 4}); }, {"all of them fit a vector"});
}

TEST_CASE("E97: a latent grid's coordinates past 2^53 - 1 or a negative first frame",
          "[errors][E97]") {
  require_out_of_range(
      [] {
        rope::latent_positions({1, 2, 2, -1});
      },
      {"frames from first_frame -1 to first_frame + 0"});
  const std::int64_t last = rope::kMaxPosition;
  REQUIRE(rope::latent_positions({1, 1, 1, last}).front() == last);
  require_out_of_range(
      [&] {
        rope::latent_positions({2, 1, 1, last});
      },
      {"must lie within 2^53 - 1 of 0"});
  const std::size_t rows = (std::size_t{1} << 53) + 1;
  require_out_of_range([&] { rope::latent_positions({1, rows, 1}); }, {"9007199254740993 rows"});
}

TEST_CASE("E95: a CachedRotary with signed coordinates", "[errors][E95]") {
  rope::CosSinOptions options;
  options.head_size = 8;
  options.axes = rope::Axes::sections({1, 1, 2}).with_signed_coordinates();
  require_invalid([&] { const rope::CachedRotary<float> cached(options); },
                  {"CachedRotary reads cache rows by position", "need a Rotary"});
}

TEST_CASE("E101: pairs within blocks on a map without blocks", "[errors][E101]") {
  rope::Options options;
  options.head_size = 16;
  options.axes = rope::Axes::sections({2, 3, 3}).with_pairs_within_blocks();
  require_invalid([&] { const rope::Rotary<float> rot(options); },
                  {"pairs within blocks need a map of blocks", "this map (Axes::sections)"});
  options.axes = rope::Axes::custom(2, {0, 1, 0, 1, 0, 1, 0, 1}).with_pairs_within_blocks();
  require_invalid([&] { const rope::Rotary<double> rot(options); }, {"(Axes::custom) has none"});
  options.axes = rope::Axes().with_pairs_within_blocks();
  require_invalid([&] { const rope::Rotary<float> rot(options); }, {"(one axis) has none"});
  rope::CosSinOptions cached;
  cached.head_size = 16;
  cached.axes = rope::Axes::mrope_interleaved({3, 3, 2}).with_pairs_within_blocks();
  require_invalid([&] { const rope::CachedRotary<float> rot(cached); },
                  {"(Axes::mrope_interleaved) has none"});
  // A block width on any map: even, and dividing rotary_dim.
  options.axes = rope::Axes::custom(2, {0, 1, 0, 1, 0, 1, 0, 1}).with_pairs_within_blocks(6);
  require_invalid([&] { const rope::Rotary<float> rot(options); },
                  {"pairs within blocks of 6 coordinates", "divide the rotary dimension 16"});
  options.axes = rope::Axes().with_pairs_within_blocks(3);
  require_invalid([&] { const rope::Rotary<float> rot(options); }, {"blocks of 3 coordinates"});
  options.axes = rope::Axes().with_pairs_within_blocks(0);
  require_invalid([&] { const rope::Rotary<float> rot(options); }, {"blocks of 0 coordinates"});
  options.axes = rope::Axes::custom(2, {0, 1, 0, 1, 0, 1, 0, 1}).with_pairs_within_blocks(8);
  REQUIRE(rope::Rotary<float>(options).axes() == 2);
  // The maps of blocks are accepted.
  options.axes = rope::Axes::axial().with_pairs_within_blocks();
  REQUIRE(rope::Rotary<float>(options).axes() == 2);
  options.axes = rope::Axes::blocks({4, 12}).with_pairs_within_blocks();
  REQUIRE(rope::Rotary<float>(options).axes() == 2);
}

TEST_CASE("E49: an empty image or video, or a video interval that is not > 0", "[errors][E49]") {
  rope::MultimodalPositions p;
  p.text(2);
  require_invalid([&] { p.image(0, 4); }, {"0 x 4", "empty", "at least 1"});
  require_invalid([&] { p.video(0, 2, 2); }, {"video or image of 0 x 2 x 2"});
  require_invalid([&] { p.video(2, 2, 2, 0.0); }, {"interval 0", "finite number > 0"});
  require_invalid([&] { p.video(2, 2, 2, std::nan("")); }, {"interval nan"});
  REQUIRE(p.size() == 2);
  REQUIRE(p.next() == 2);
}

TEST_CASE("E50: multimodal positions past 2^53 - 1", "[errors][E50]") {
  rope::MultimodalPositions p;
  p.text(1);
  require_out_of_range([&] { p.video(2, 1, 1, 1e300); }, {"after position 1", "2^53 - 1"});
  require_out_of_range([&] { p.image(1, std::size_t{1} << 53); },
                       {"9007199254740992 more positions after position 1"});
  REQUIRE(p.size() == 1);
  REQUIRE(p.next() == 1);
}

TEST_CASE("E51: a patch grid that is empty or not whole merge windows", "[errors][E51]") {
  rope::PatchGrid grid;
  grid.rows = 4;
  grid.columns = 0;
  require_invalid([&] { rope::patch_positions(grid); },
                  {"patch grid of 4 x 0 with merge 1", "positive multiples of merge"});
  grid.columns = 6;
  grid.merge = 4;
  require_invalid([&] { rope::patch_positions(grid); }, {"4 x 6 with merge 4"});
  grid.merge = 0;
  require_invalid([&] { rope::patch_positions(grid); }, {"with merge 0"});
}

TEST_CASE("E52: patch coordinates outside [0, 2^53 - 1]", "[errors][E52]") {
  rope::PatchGrid grid;
  grid.rows = 2;
  grid.columns = 3;
  grid.first = -1;
  require_out_of_range([&] { rope::patch_positions(grid); },
                       {"from first -1 to first + 2", "[0, 2^53 - 1]"});
  grid.first = (std::int64_t{1} << 53) - 2;
  require_out_of_range([&] { rope::patch_positions(grid); }, {"first 9007199254740990"});
}

// ---- behaviours that are not errors

TEMPLATE_TEST_CASE("B1: NaN and infinity propagate to their own pair and nowhere else",
                   "[errors][B1]", float, double, Eigen::half, Eigen::bfloat16) {
  using T = TestType;
  constexpr std::size_t d = 8, heads = 2, tokens = 2;
  for (const Layout layout : {Layout::interleaved, Layout::half_split}) {
    INFO(rope::to_string(layout));
    const rope::Rotary<T, d> rot({d, 10000.0, layout, 16});
    std::mt19937_64 rng(1);
    std::vector<T> clean = rope_test::random_vector<T>(tokens * heads * d, rng);
    std::vector<T> dirty = clean;
    // token 0 (position 0, where sin is 0) gets an infinity, token 1 a NaN
    const std::size_t inf_at = 0 * heads * d + 1 * d + 2, nan_at = 1 * heads * d + 0 * d + 1;
    dirty[inf_at] = T(std::numeric_limits<float>::infinity());
    dirty[nan_at] = T(std::numeric_limits<float>::quiet_NaN());
    const std::int64_t positions[tokens] = {0, 5};
    rot.apply(clean.data(), tokens, heads, positions);
    REQUIRE_NOTHROW(rot.apply(dirty.data(), tokens, heads, positions));
    const auto pair_of = [&](std::size_t i) {
      return std::vector<std::size_t>{i, rope_test::partner_index(i, d, layout)};
    };
    for (std::size_t i = 0; i < dirty.size(); ++i) {
      const auto inf_pair = pair_of(inf_at), nan_pair = pair_of(nan_at);
      const bool in_nan_pair = i == nan_pair[0] || i == nan_pair[1];
      const bool in_inf_pair = i == inf_pair[0] || i == inf_pair[1];
      const double value = static_cast<double>(dirty[i]);
      INFO("coordinate " << i);
      if (in_nan_pair) {
        REQUIRE(std::isnan(value));  // NaN times anything is NaN
      } else if (in_inf_pair) {
        REQUIRE(!std::isfinite(value));  // ∞·cos and ∞·0 − b·0: infinite or NaN
      } else {
        REQUIRE(static_cast<double>(clean[i]) == value);  // every other coordinate: same bits
      }
    }
  }
}

TEST_CASE("B2: an empty batch reads and writes nothing, and may pass null pointers",
          "[errors][B2]") {
  Batch b;
  float* none = nullptr;
  const std::vector<std::int64_t> no_positions;
  REQUIRE_NOTHROW(rot8.apply(rope_test::contiguous(b.x.data(), 0, 3, rot8.head_size()),
                             rope_test::contiguous(b.dst.data(), 0, 3, rot8.head_size()), b.at));
  REQUIRE_NOTHROW(rot8.apply(rope_test::contiguous(b.x.data(), 2, 0, rot8.head_size()),
                             rope_test::contiguous(b.dst.data(), 2, 0, rot8.head_size()), b.at));
  REQUIRE_NOTHROW(rot8.apply(rope_test::contiguous(none, 0, 3, rot8.head_size()),
                             rope_test::contiguous(none, 0, 3, rot8.head_size()),
                             no_positions.data()));
  REQUIRE_NOTHROW(rot8.apply(none, 0, 0, no_positions.data()));
  REQUIRE_NOTHROW(rot8.apply_qk(View<float>(none, 0, 3, 24, 8), View<float>(none, 0, 1, 8, 8),
                                no_positions.data()));
  REQUIRE_NOTHROW(rot8.shift(View<float>(none, 0, 3, 24, 8), 5));
  // an empty range of a real batch reads no position
  REQUIRE_NOTHROW(rot8.apply(View<const float>(b.view()), b.dst_view(), no_positions.data(),
                             rope::TokenRange{1, 1}));
  const rope::CachedRotary<float> cached({8, Layout::half_split, 0, 0});
  const std::vector<float> table(4 * 4, 1.0f);
  REQUIRE_NOTHROW(cached.apply(none, 0, 3, no_positions.data(), {table.data(), table.data(), 4}));
  REQUIRE(b.untouched());
}

TEST_CASE("B3: rope::unchecked gives the bits of the checked call", "[errors][B3]") {
  constexpr std::size_t d = 64, tokens = 33, heads = 4, kv_heads = 2;
  std::mt19937_64 rng(3);
  for (const Layout layout : {Layout::interleaved, Layout::half_split}) {
    Options o{d, 10000.0, layout, 64};
    o.rotary_dim = 48;  // the partial kernels too
    const rope::Rotary<float, d> rot(o);
    std::vector<std::int32_t> positions(tokens);
    for (std::size_t t = 0; t < tokens; ++t) positions[t] = std::int32_t(t * 3);  // past the table
    const std::vector<float> input = rope_test::random_vector<float>(tokens * heads * d, rng);
    std::vector<float> checked(input.size()), unchecked(input.size());
    const auto src = View<const float>::contiguous(input.data(), tokens, heads, d);
    rope::Execution two;
    two.threads = 2;
    two.min_bytes_per_thread = 1;
    const rope::TokenRange all{0, tokens};
    for (const auto direction : {rope::Direction::forward, rope::Direction::inverse}) {
      rot.apply(src, View<float>::contiguous(checked.data(), tokens, heads, d), positions.data(),
                {direction, all, two});
      rot.apply(rope::unchecked, src, View<float>::contiguous(unchecked.data(), tokens, heads, d),
                positions.data(), {direction, all, two});
      REQUIRE(checked == unchecked);
    }
    // apply_qk on a fused [tokens][q heads | k heads] buffer
    std::vector<float> fused_checked = rope_test::random_vector<float>(tokens * 6 * d, rng);
    std::vector<float> fused_unchecked = fused_checked;
    const auto q = [&](std::vector<float>& f) {
      return View<float>(f.data(), tokens, heads, 6 * d, d);
    };
    const auto k = [&](std::vector<float>& f) {
      return View<float>(f.data() + heads * d, tokens, kv_heads, 6 * d, d);
    };
    rot.apply_qk(q(fused_checked), k(fused_checked), positions.data(), all);
    rot.apply_qk(rope::unchecked, rope::Queries(q(fused_unchecked)), rope::Keys(k(fused_unchecked)),
                 positions.data(), all);
    REQUIRE(fused_checked == fused_unchecked);
    // and with a query scale
    const rope::Llama4Scaling scale{0.2, 16};
    rot.apply_qk(rope::Queries(q(fused_checked)).scaled(scale), rope::Keys(k(fused_checked)),
                 positions.data(), all);
    rot.apply_qk(rope::unchecked, rope::Queries(q(fused_unchecked)).scaled(scale),
                 rope::Keys(k(fused_unchecked)), positions.data(), all);
    REQUIRE(fused_checked == fused_unchecked);
  }
}

TEST_CASE("E53: a batched view whose sequences overlap", "[errors][E53]") {
  Batch b;                           // 2 tokens x 3 heads x 8: one sequence spans 48 elements
  std::vector<float> scratch = b.x;  // 2 sequences of 1 token, 24 apart: the span is 24
  REQUIRE_NOTHROW(rot8.apply(View<float>(scratch.data(), 2, 1, 3, 24, 24, 8), b.at));
  const View<float> bad(b.x.data(), 2, 2, 3, 40, 24, 8);  // 2 sequences of 2 tokens
  require_invalid([&] { rot8.apply(View<const float>(bad), b.dst_view(), b.at); },
                  {"src batch_stride 40", "span of one sequence, 48 elements"});
  require_invalid([&] { rot8.shift(bad, 1); }, {"keys batch_stride 40"});
  require_invalid([&] { rot8.apply_qk(bad, b.dst_view(), b.at); }, {"q batch_stride 40"});
  // Shapes differ when the sequences do (E25's rule, with batches named).
  std::vector<float> other(2 * 2 * 3 * 8);
  require_invalid(
      [&] {
        rot8.apply(View<const float>(b.view()),
                   View<float>::batch_seq_heads(other.data(), 2, 1, 3, 8), b.at);
      },
      {"src is 1 sequences x 2 tokens x 3 heads", "dst is 2 sequences x 1 tokens x 3 heads"});
  REQUIRE(b.untouched());
}

TEST_CASE("E98: a fractional coordinate outside [0, 2^53 - 1] or NaN", "[errors][E98]") {
  Batch b;
  const double negative[] = {0.5, -0.5};
  require_out_of_range([&] { rot8.apply(b.x.data(), 2, 3, negative); },
                       {"fractional coordinate 0 of token 1, -0.5,", "[0, 2^53 - 1]"});
  const double nan[] = {std::nan(""), 1.0};
  require_out_of_range([&] { rot8.apply(View<const float>(b.view()), b.dst_view(), nan); },
                       {"of token 0, nan,"});
  const double past[] = {1.5, 9007199254740992.0};
  require_out_of_range([&] { rot8.apply_qk(b.view(), b.dst_view(), past); },
                       {"of token 1, 9007199254740992,"});
  // Multi-axis: [0, 2^53 - 1] per coordinate, or from -(2^53 - 1) on a signed map.
  const double ids[] = {0.25, 0, 0, 1, -0.75, 1};
  require_out_of_range(
      [&] { mrope8.apply(b.x.data(), 2, 3, rope::Positions::token_major(ids, 3)); },
      {"fractional coordinate 1 of token 1, -0.75,"});
  const rope::Rotary<float, 8> signed8(
      with_axes(rope::Axes::sections({1, 1, 2}).with_signed_coordinates()));
  const double below[] = {0.25, 0, 0, 1, -9007199254740992.0, 1};
  require_out_of_range(
      [&] { signed8.apply(b.x.data(), 2, 3, rope::Positions::token_major(below, 3)); },
      {"coordinate 1 of token 1, -9007199254740992,", "[-(2^53 - 1), 2^53 - 1]"});
  const double inf[] = {1, 1, 1, 1, 1, HUGE_VAL};
  require_out_of_range(
      [&] { signed8.apply(b.x.data(), 2, 3, rope::Positions::token_major(inf, 3)); },
      {"coordinate 2 of token 1, inf,"});
  // A one-axis signed map: its one coordinate per token is its own, signed; one coordinate on
  // a three-axis signed map rotates every axis alike and is not.
  const rope::Rotary<float, 8> signed_one(
      with_axes(rope::Axes::custom(1, {0, 0, 0, 0}).with_signed_coordinates()));
  const double one[] = {0.5, -9007199254740992.0};
  require_out_of_range([&] { signed_one.apply(b.x.data(), 2, 3, one); },
                       {"coordinate 0 of token 1, -9007199254740992,", "[-(2^53 - 1), 2^53 - 1]"});
  require_out_of_range([&] { signed8.apply(b.x.data(), 2, 3, negative); },
                       {"fractional coordinate 0 of token 1, -0.5,", "[0, 2^53 - 1]"});
  REQUIRE(b.untouched());
  REQUIRE_NOTHROW(signed_one.apply(b.x.data(), 2, 3, negative));
  REQUIRE_NOTHROW(signed8.apply(b.x.data(), 2, 3, rope::Positions::token_major(ids, 3)));
  REQUIRE_NOTHROW(rot8.apply(b.x.data(), 2, 3, past, rope::TokenRange{0, 1}));
}

TEST_CASE("E99: fractional positions for a CachedRotary", "[errors][E99]") {
  Batch b;
  const rope::CachedRotary<float> cached({8, Layout::half_split, 0, 0});
  const std::vector<float> table(4 * 4, 1.0f);
  const double at[] = {0.0, 1.0};
  require_invalid(
      [&] {
        cached.apply(b.x.data(), 2, 3, at, {table.data(), table.data(), 4});
      },
      {"CachedRotary reads cache rows by position", "fractional positions", "need a Rotary"});
  require_invalid(
      [&] {
        cached.apply_qk(b.view(), b.dst_view(), at, {table.data(), table.data(), 4});
      },
      {"fractional positions"});
  REQUIRE(b.untouched());
}

TEST_CASE("E100: fractional positions with a query scale", "[errors][E100]") {
  Batch b;
  const double at[] = {0.5, 1.5};
  const rope::Llama4Temperature temperature{8192, 0.1};
  require_invalid(
      [&] {
        rot8.apply_qk(rope::Queries(b.view()).scaled(temperature), rope::Keys(b.dst_view()), at);
      },
      {"query scale is a function of integer positions", "take no query scale"});
  require_invalid([&] { rope::scale_queries(b.view(), 8, at, temperature); },
                  {"fractional positions"});
  REQUIRE(b.untouched());
  REQUIRE_NOTHROW(rot8.apply_qk(b.view(), b.dst_view(), at));
}
