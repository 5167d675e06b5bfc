// The contract under attack: arguments an adversarial caller passes through the public headers
// that once got past the checks (strides that wrap around size_t, index arrays inside the views a
// call writes, sums that overflow, enums out of range, huge sizes). Each is an exception naming
// the value and the limit, thrown before anything is written, or, where the input is supported
// (a ring that starts near 2^64), the right result.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <utility>
#include <vector>

#include <Eigen/Core>
#include <catch2/catch.hpp>

#include <rope/rope.hpp>

#include "support.hpp"

namespace {

using rope::Layout;
using rope::Positions;
using rope::View;
using rope_test::require_invalid;
using rope_test::require_out_of_range;

constexpr std::size_t kHead = 8;
constexpr std::size_t kWrap8 = std::size_t(0) - 8;  // −8 cast to size_t
constexpr std::size_t kWrap4 = std::size_t(0) - 4;

const rope::Rotary<float, kHead>& rot() {
  static const rope::Rotary<float, kHead> r;
  return r;
}

// Bytes that hold floats and an index array at once, so that the array can lie inside a view.
struct Shared {
  alignas(64) unsigned char bytes[1024];
  Shared() {
    for (std::size_t i = 0; i < sizeof(bytes) / sizeof(float); ++i) {
      const float v = 0.5f + float(i);
      std::memcpy(bytes + i * sizeof(float), &v, sizeof(float));
    }
  }
  float* floats(std::size_t at = 0) { return reinterpret_cast<float*>(bytes) + at; }
  template <class Int>
  const Int* put(std::size_t byte, std::initializer_list<Int> values) {
    std::memcpy(bytes + byte, values.begin(), values.size() * sizeof(Int));
    return reinterpret_cast<const Int*>(bytes + byte);
  }
};

}  // namespace

TEST_CASE("E79: a view whose strides wrap around size_t or reach past 2^63 - 1 bytes",
          "[errors][E79]") {
  std::vector<float> buffer(64, 1.0f);
  const std::vector<float> before = buffer;
  // −8 as a token stride: token 1 would be 32 bytes before token 0.
  require_invalid(
      [&] {
        rot().apply(View<float>(buffer.data() + 32, 2, 1, kWrap8, kHead),
                    Positions::consecutive(0));
      },
      {"src token_stride 18446744073709551608", "more than 9223372036854775807 bytes",
       "wraps around"});
  // −4: two heads sharing four floats, which no overlap check saw.
  require_invalid(
      [&] {
        rot().apply(View<float>(buffer.data() + 4, 2, 1, kWrap4, kHead), Positions::consecutive(0));
      },
      {"src token_stride 18446744073709551612"});
  require_invalid(
      [&] {
        rot().apply(View<const float>(buffer.data(), 1, 2, kHead, kWrap8),
                    View<float>(buffer.data() + 32, 1, 2, kHead, kHead), Positions::consecutive(0));
      },
      {"src head_stride 18446744073709551608"});
  require_invalid(
      [&] {
        rot().apply(View<float>(buffer.data(), 2, 1, 1, kWrap8, 8, kHead),
                    Positions::consecutive(0));
      },
      {"src batch_stride 18446744073709551608"});
  // A large stride that does not wrap but spans more than 2^63 − 1 bytes with the others.
  const std::size_t quarter = std::size_t{1} << 60;  // 2^62 bytes of float
  require_invalid(
      [&] {
        rot().apply(View<float>(buffer.data(), 2, 2, 2, quarter, quarter, kHead),
                    Positions::consecutive(0));
      },
      {"src spans more than 9223372036854775807 bytes"});
  // The caller's cos/sin rows: a row_stride that wraps around.
  const rope::CachedRotary<float> cached({kHead, Layout::half_split, 0, 0});
  require_invalid(
      [&] {
        cached.apply(buffer.data(), 1, 1, Positions::consecutive(0),
                     {buffer.data(), buffer.data(), 3, rope::CosSinRow::half, kWrap4});
      },
      {"cache row_stride 18446744073709551612 over 3 rows", "wraps around"});
  REQUIRE(buffer == before);
}

TEST_CASE("E78: an index array inside a view the call writes", "[errors][E78]") {
  Shared s;
  unsigned char before[sizeof(s.bytes)];
  std::memcpy(before, s.bytes, sizeof(before));
  const auto x = View<float>::contiguous(s.floats(), 4, 1, kHead);  // bytes [0, 128)
  // Positions of the last tokens stored in the first token's head, in place.
  const std::int64_t* inside = s.put<std::int64_t>(16, {0, 1, 2, 3});
  std::memcpy(before, s.bytes, sizeof(before));
  require_invalid(
      [&] { rot().apply(x, inside); },
      {"the positions array's 32 bytes lie inside dst, 16 bytes from its first", "pass a copy"});
  // Out of place, the array may lie in src (which is only read), not in dst.
  const auto out = View<float>::contiguous(s.floats(64), 4, 1, kHead);  // bytes [256, 384)
  require_invalid(
      [&] {
        rot().apply(View<const float>(x), out, s.put<std::int64_t>(264, {0, 1, 2, 3}));
      },
      {"positions array's 32 bytes lie inside dst, 8 bytes"});
  std::memcpy(before, s.bytes, sizeof(before));
  // q and k in place: the array inside q.
  const auto q = View<float>::contiguous(s.floats(128), 4, 1, kHead);  // [512, 640)
  const std::int64_t* in_q = s.put<std::int64_t>(520, {0, 1, 2, 3});
  std::memcpy(before, s.bytes, sizeof(before));
  require_invalid([&] { rot().apply_qk(q, out, in_q); },
                  {"positions array's 32 bytes lie inside q, 8 bytes"});
  // A slot array inside q_out: read again after q_out is written.
  std::vector<Eigen::half> cache(4 * kHead, Eigen::half(3));
  const std::int32_t* slots = s.put<std::int32_t>(260, {3, 2, 1, 0});
  std::memcpy(before, s.bytes, sizeof(before));
  const std::int64_t positions[] = {0, 1, 2, 3};
  require_invalid(
      [&] {
        rot().apply_qk(rope::Queries(View<const float>(q), out),
                       rope::Keys(View<const float>(x),
                                  rope::KeyCache<Eigen::half>{
                                      View<Eigen::half>::contiguous(cache.data(), 4, 1, kHead),
                                      rope::Slots(slots, 4)}),
                       positions);
      },
      {"the slot array's 16 bytes lie inside q_out, 4 bytes"});
  // A CachedRotary's cache rows inside dst.
  const rope::CachedRotary<float> cached({kHead, Layout::half_split, 0, 0});
  const std::vector<float> table(4 * kHead / 2, 1.0f);
  require_invalid(
      [&] {
        cached.apply(x, inside, {table.data(), table.data(), 4, rope::CosSinRow::half, 0});
      },
      {"positions array's 32 bytes lie inside dst"});
  REQUIRE(std::memcmp(before, s.bytes, sizeof(before)) == 0);
  REQUIRE(cache == std::vector<Eigen::half>(4 * kHead, Eigen::half(3)));
}

TEST_CASE("E31: consecutive positions whose sum would wrap around int64", "[errors][E31]") {
  std::vector<float> x(2 * kHead, 1.0f);
  const std::vector<float> before = x;
  const std::int64_t max = std::numeric_limits<std::int64_t>::max();
  require_out_of_range(
      [&] {
        rot().apply(x.data(), 2, 1, Positions::consecutive(max), {rope::TokenRange{1, 2}});
      },
      {"position 9223372036854775807 + 1 of token 1", "[0, 2^53 - 1 = 9007199254740991]"});
  require_out_of_range([&] { rot().apply(x.data(), 2, 1, Positions::consecutive(max)); },
                       {"position 9223372036854775807 of token 0"});
  REQUIRE(x == before);
}

TEST_CASE("E02: a huge head size fails at once, before anything of its size is allocated",
          "[errors][E02]") {
  rope::Options o;
  o.head_size = std::size_t{1} << 40;  // once std::bad_alloc, or seconds of work first
  require_invalid([&] { rope::Rotary<float> r(o); },
                  {"head_size 1099511627776 exceeds the largest head size 16777216 (2^24)"});
  require_invalid([] { rope::CachedRotary<float> c({std::size_t{1} << 40}); },
                  {"head_size 1099511627776 exceeds"});
  require_invalid([] { rope::inverse_frequencies(std::size_t{1} << 40); },
                  {"head_size 1099511627776 exceeds"});
  require_invalid(
      [] { rope::head_permutation(std::size_t{1} << 40, Layout::interleaved, Layout::half_split); },
      {"head_size 1099511627776 exceeds"});
}

TEST_CASE("E08: the table size checked before θ is computed", "[errors][E08]") {
  rope::Options o;
  o.head_size = std::size_t{1} << 24;  // within a row, not within 4096 rows
  require_invalid([&] { rope::Rotary<float> r(o); },
                  {"a table of max_positions 4096 x 67108864 bytes", "(at most 16 positions)"});
  o.head_size = 512;
  o.table_memory_limit = 1000;
  require_invalid(
      [&] { rope::Rotary<float> r(o); },
      {"a table row of rotary_dim 512 x 4 bytes exceeds table_memory_limit 1000 bytes"});
}

TEST_CASE("E21: a null slot array", "[errors][E21]") {
  std::vector<float> q(3 * kHead, 0.5f), k(3 * kHead, 0.25f), cache(3 * kHead, 3.0f);
  const std::int64_t positions[] = {0, 1, 2};
  require_invalid(
      [&] {
        rot().apply_qk(
            rope::Queries(View<const float>::contiguous(q.data(), 3, 1, kHead),
                          View<float>::contiguous(q.data(), 3, 1, kHead)),
            rope::Keys(View<const float>::contiguous(k.data(), 3, 1, kHead),
                       rope::KeyCache<float>{View<float>::contiguous(cache.data(), 3, 1, kHead),
                                             {static_cast<const std::int32_t*>(nullptr), 3}}),
            positions);
      },
      {"the slot array is a null pointer"});
  REQUIRE(cache == std::vector<float>(3 * kHead, 3.0f));
  REQUIRE(q == std::vector<float>(3 * kHead, 0.5f));
}

TEST_CASE("Slots::ring: a ring that starts near 2^64 keeps (first + t) mod rows", "[key_cache]") {
  // Rows of 3: (2^64 − 1) mod 3 = 0, so tokens 0, 1, 2 go to rows 0, 1, 2 (first + 1 wraps to 0
  // in 64 bits, which once put token 1 into row 0 too).
  const std::uint64_t first = std::numeric_limits<std::uint64_t>::max();
  const rope::Slots ring = rope::Slots::ring(first);
  for (std::size_t t = 0; t < 3; ++t) CHECK(ring.row(t, 3) == std::int64_t(t));
  CHECK(rope::Slots::ring(first - 1).row(1, 3) == 0);  // 2^64 − 1 ≡ 0
  CHECK(rope::Slots::ring(first - 1).row(0, 3) == 2);
  CHECK(rope::Slots::ring(first).row(5, 7) == std::int64_t((first % 7 + 5) % 7));
  // Through a call: every row written, each with its token's keys.
  std::vector<float> q(3 * kHead, 0.5f), k(3 * kHead), cache(3 * kHead, -1.0f);
  for (std::size_t i = 0; i < k.size(); ++i) k[i] = float(i);
  const std::int64_t positions[] = {0, 0, 0};
  rot().apply_qk(
      rope::Queries(View<const float>::contiguous(q.data(), 3, 1, kHead),
                    View<float>::contiguous(q.data(), 3, 1, kHead)),
      rope::Keys(View<const float>::contiguous(k.data(), 3, 1, kHead),
                 rope::KeyCache<float>{View<float>::contiguous(cache.data(), 3, 1, kHead), ring}),
      positions);
  CHECK(cache == k);  // position 0 leaves the keys as they are, each in its own row
}

TEST_CASE("E73: a NormKind outside the enumeration", "[errors][E73]") {
  std::vector<float> q(2 * kHead, 0.5f), k(kHead, 0.25f), w(2 * kHead, 1.0f);
  const std::int64_t position = 4;
  const auto seven = static_cast<rope::NormKind>(7);
  require_invalid(
      [&] {
        rot().apply_qk(
            rope::Queries(View<float>::contiguous(q.data(), 1, 2, kHead))
                .normalized(rope_test::NormPair<float>{{seven, w.data(), 2 * kHead, 1e-6}, {}}.q),
            rope::Keys(View<float>::contiguous(k.data(), 1, 1, kHead))
                .normalized(rope_test::NormPair<float>{{seven, w.data(), 2 * kHead, 1e-6}, {}}.k),
            &position);
      },
      {"q norm kind 7 is not a NormKind"});
  require_invalid(
      [&] {
        rope::normalize_heads(View<float>::contiguous(q.data(), 1, 2, kHead), kHead,
                              rope::Norm<float>{seven, w.data(), 2 * kHead, 1e-6});
      },
      {"x norm kind 7 is not a NormKind"});
  REQUIRE(q == std::vector<float>(2 * kHead, 0.5f));
  REQUIRE(k == std::vector<float>(kHead, 0.25f));
}

TEST_CASE("E47: positions with no coordinate", "[errors][E47]") {
  std::vector<float> q(2 * kHead, 0.5f);
  const std::int64_t negative[] = {-5, -6};
  const Positions none(negative, 0, 1, 1);
  require_invalid(
      [&] {
        rope::scale_queries(View<float>::contiguous(q.data(), 2, 1, kHead), kHead, none,
                            rope::Llama4Temperature{});
      },
      {"the positions have 0 coordinates per token"});
  require_invalid([&] { rot().apply(q.data(), 2, 1, none); },
                  {"the positions have 0 coordinates per token"});
  REQUIRE(q == std::vector<float>(2 * kHead, 0.5f));
}

// ---- The weaker spots: values printed as given, the argument named, underflow refused ---------

TEST_CASE("E06: a tiny negative base is printed as given", "[errors][E06]") {
  require_invalid([] { rope::inverse_frequencies(8, -1e-10); },
                  {"base -1e-10 must be a finite number > 0"});
}

TEST_CASE("E12: an NTK factor that takes the base past the largest double names the factor",
          "[errors][E12]") {
  rope::Options o;
  o.head_size = 64;
  o.scaling = rope::NTKAware{1e300};
  require_invalid([&] { rope::Rotary<float> r(o); },
                  {"NTKAware::factor 1e+300 scales base 10000 past the largest double"});
}

TEST_CASE("E14: YaRN on a base of 1 or less", "[errors][E14]") {
  rope::Options o;
  o.head_size = 64;
  o.base = 1.0;
  o.scaling = rope::Yarn{};
  require_invalid([&] { rope::Rotary<float> r(o); }, {"Yarn needs a base > 1", "got base 1"});
}

TEST_CASE("E41: an attention factor that underflows the table's type", "[errors][E41]") {
  const std::vector<double> theta = {1.0, 0.5};
  require_invalid([&] { rope::Table<float> t(Layout::half_split, theta, 4, 1e-300); },
                  {"the attention factor 1e-300 is below the smallest normal value of the "
                   "table's type (1.17549e-38)"});
  rope::Table<double> fine(Layout::half_split, theta, 4, 1e-300);  // a normal double
  CHECK(fine.positions() == 4);
}

TEST_CASE("E10: a Table's theta NaN or negative", "[errors][E10]") {
  require_invalid(
      [] {
        rope::Table<float> t(Layout::interleaved, {1.0, std::nan("")}, 4);
      },
      {"theta_1 nan must be a finite number >= 0"});
  require_invalid(
      [] {
        rope::Table<float> t(Layout::interleaved, {-0.5, 1.0}, 4);
      },
      {"theta_0 -0.5 must be a finite number >= 0"});
}

TEST_CASE("E74: a norm epsilon that vanishes in float", "[errors][E74]") {
  std::vector<float> x(2 * kHead, 0.5f), w(kHead, 1.0f);
  require_invalid(
      [&] {
        rope::normalize_heads(View<float>::contiguous(x.data(), 1, 2, kHead), kHead,
                              rope::Norm<float>{rope::NormKind::rms, w.data(), kHead, 1e-310});
      },
      {"x norm epsilon 1e-310 is below the smallest normal float"});
  REQUIRE(x == std::vector<float>(2 * kHead, 0.5f));
}

TEST_CASE("E79: sequences x tokens past what a size_t counts", "[errors][E79]") {
  std::vector<float> x(kHead, 0.5f);
  const std::size_t batches = std::size_t{1} << 33, tokens = std::size_t{1} << 31;
  require_invalid(
      [&] {
        rot().apply(View<float>(x.data(), batches, tokens, 1, kHead, kHead, kHead),
                    Positions::consecutive(0));
      },
      {"src has 8589934592 sequences x 2147483648 tokens: more rows than a size_t counts"});
  REQUIRE(x == std::vector<float>(kHead, 0.5f));
}

TEST_CASE("E80: an enum argument outside its enumerators", "[errors][E80]") {
  std::vector<float> x(2 * kHead, 0.5f);
  const std::vector<float> before = x;
  rope::Options o;
  o.head_size = kHead;
  o.layout = static_cast<Layout>(7);
  require_invalid([&] { rope::Rotary<float> r(o); },
                  {"Layout 7 is not one of its enumerators (interleaved, half_split)"});
  o.layout = Layout::half_split;
  o.angles = static_cast<rope::Angles>(9);
  require_invalid([&] { rope::Rotary<float> r(o); }, {"Angles 9 is not one of its enumerators"});
  require_invalid(
      [&] {
        rot().apply(x.data(), 2, 1, Positions::consecutive(0), {static_cast<rope::Direction>(5)});
      },
      {"Direction 5 is not one of its enumerators (forward, inverse)"});
  require_invalid(
      [&] {
        rope::CachedRotary<float> c({kHead, static_cast<Layout>(3), 0, 0});
      },
      {"Layout 3"});
  const rope::CachedRotary<float> cached({kHead, Layout::half_split, 0, 0});
  const std::vector<float> table(2 * kHead, 1.0f);
  require_invalid(
      [&] {
        cached.apply(x.data(), 2, 1, Positions::consecutive(0),
                     {table.data(), table.data(), 2, static_cast<rope::CosSinRow>(4), 0});
      },
      {"CosSinRow 4 is not one of its enumerators"});
  require_invalid(
      [] { rope::head_permutation(kHead, static_cast<Layout>(2), Layout::interleaved); },
      {"Layout 2"});
  require_invalid([] { rope::Table<float> t(static_cast<Layout>(-1), {1.0}, 2); }, {"Layout -1"});
  require_invalid([] { rope::frequencies(kHead, 1e4, rope::Unscaled{}, 0, rope::Angles(2)); },
                  {"Angles 2"});
  require_invalid(
      [] {
        rope::patch_positions({2, 2, 1, 0}, static_cast<rope::ClassToken>(3));
      },
      {"ClassToken 3"});
  REQUIRE(x == before);
}

TEST_CASE("E81: a view whose heads end past the buffer it was given", "[errors][E81]") {
  // A fused [2 tokens][4 + 1 + 1 heads][8] QKV buffer: q 4 heads, k 1, v 1.
  constexpr std::size_t tokens = 2, q_heads = 4, k_heads = 1, row = (q_heads + 2) * kHead;
  std::vector<float> qkv(tokens * row);
  for (std::size_t i = 0; i < qkv.size(); ++i) qkv[i] = 0.25f * float(i % 13);
  const std::vector<float> before = qkv;
  const std::int64_t positions[tokens] = {3, 4};
  const View<float> q = View<float>(qkv.data(), tokens, q_heads, row, kHead).within(qkv.size());
  // k given q's head count: its last head ends 48 + 3·8 + 8 = 80 elements from its first, and
  // the buffer holds 96 − 32 = 64 from there. Without the buffer's length only an overlap, where
  // another view lies next to k, could catch it.
  const View<float> k_wrong = View<float>(qkv.data() + q_heads * kHead, tokens, q_heads, row, kHead)
                                  .within(qkv.size() - q_heads * kHead);
  require_invalid([&] { rot().apply_qk(q, k_wrong, positions); },
                  {"k needs 80 elements from its first, but its buffer holds 64"});
  // A container's view: one token too many for the vector.
  std::vector<float> x(tokens * q_heads * kHead, 1.0f);
  require_invalid(
      [&] { rot().apply(View<float>::contiguous(x, tokens + 1, q_heads, kHead), positions); },
      {"src needs 96 elements from its first, but its buffer holds 64"});
  // Out of place: the destination named.
  std::vector<float> small(tokens * q_heads * kHead - 1);
  require_invalid(
      [&] {
        rot().apply(View<const float>::contiguous(std::as_const(x), tokens, q_heads, kHead),
                    View<float>::contiguous(small, tokens, q_heads, kHead), positions);
      },
      {"dst needs 64 elements from its first, but its buffer holds 63"});
  // Into a KV cache of 3 rows given a slot-less (row t) shape of 2 tokens: fine; a cache view of
  // 4 rows over a vector of 3 rows is not.
  std::vector<Eigen::half> cache(3 * k_heads * kHead);
  const View<const float> k =
      View<const float>(qkv.data() + q_heads * kHead, tokens, k_heads, row, kHead)
          .within(qkv.size() - q_heads * kHead);
  const std::int64_t slots[tokens] = {0, 2};
  require_invalid(
      [&] {
        rot().apply_qk(rope::Queries(q),
                       rope::Keys(k, rope::KeyCache<Eigen::half>{View<Eigen::half>::contiguous(
                                                                     cache, 4, k_heads, kHead),
                                                                 rope::Slots(slots, tokens)}),
                       positions);
      },
      {"cache needs 32 elements from its first, but its buffer holds 24"});
  REQUIRE(qkv == before);
  // The same calls on buffers that hold the heads: no error, and the views without a length
  // (View::unknown) rotate the same bits.
  rot().apply_qk(rope::Queries(q),
                 rope::Keys(k, rope::KeyCache<Eigen::half>{View<Eigen::half>::contiguous(
                                                               cache, 3, k_heads, kHead),
                                                           rope::Slots(slots, tokens)}),
                 positions);
  std::vector<float> plain = before;
  rot().apply(View<float>(plain.data(), tokens, q_heads, row, kHead), positions);
  REQUIRE(std::memcmp(plain.data(), qkv.data(), plain.size() * sizeof(float)) == 0);
  STATIC_REQUIRE(View<float>::unknown == std::size_t(-1));
  REQUIRE(View<float>(plain.data(), tokens, q_heads, row, kHead).buffer_size() ==
          View<float>::unknown);
  REQUIRE(View<const float>(q).buffer_size() == qkv.size());
}

TEST_CASE("E78: an array the call reads inside a view it writes (norm weights, cos/sin tables)",
          "[errors][E78]") {
  // Each was accepted: the first token's write changed what later tokens read.
  Shared s;
  const std::int64_t positions[] = {0, 1};
  const Shared before;
  // A q norm's weight inside q_out.
  const rope::Norm<float> weight_in_q_out{rope::NormKind::rms, s.floats(32 + 4), kHead, 1e-6};
  require_invalid(
      [&] {
        rot().apply_qk(rope::Queries<float>(View<const float>::contiguous(s.floats(0), 2, 1, kHead),
                                            View<float>::contiguous(s.floats(32), 2, 1, kHead))
                           .normalized(weight_in_q_out),
                       rope::Keys<float>(View<float>::contiguous(s.floats(64), 2, 1, kHead)),
                       positions);
      },
      {"the q norm weight array's 32 bytes lie inside q_out, 16 bytes from its first element"});
  // A k norm's weight inside the keys rotated in place.
  const rope::Norm<float> weight_in_k{rope::NormKind::rms, s.floats(64), kHead, 1e-6};
  require_invalid(
      [&] {
        rot().apply_qk(rope::Queries<float>(View<float>::contiguous(s.floats(0), 2, 1, kHead)),
                       rope::Keys<float>(View<float>::contiguous(s.floats(64), 2, 1, kHead))
                           .normalized(weight_in_k),
                       positions);
      },
      {"the k norm weight array's 32 bytes lie inside k"});
  REQUIRE(std::memcmp(s.bytes, before.bytes, sizeof s.bytes) == 0);

  // A CachedRotary's cos table inside the key cache it writes, and inside dst.
  const rope::CachedRotary<float> cached(rope::CosSinOptions{kHead, Layout::half_split, 0, 0});
  const rope::CosSinCache<float> tables{s.floats(96), s.floats(128), 2, rope::CosSinRow::half};
  require_invalid(
      [&] {
        cached.apply_qk(
            rope::Queries<float>(View<float>::contiguous(s.floats(0), 2, 1, kHead)),
            rope::Keys<float, float>(View<const float>::contiguous(s.floats(32), 2, 1, kHead),
                                     {View<float>::contiguous(s.floats(92), 2, 1, kHead)}),
            positions, tables);
      },
      {"the cos table array's 32 bytes lie inside cache, 16 bytes from its first element"});
  require_invalid(
      [&] {
        cached.apply(View<const float>::contiguous(s.floats(0), 2, 1, kHead),
                     View<float>::contiguous(s.floats(124), 2, 1, kHead), positions, tables);
      },
      {"the sin table array's 32 bytes lie inside dst"});
  REQUIRE(std::memcmp(s.bytes, before.bytes, sizeof s.bytes) == 0);
}

TEST_CASE("E86: an int8 cache's scales on a norm's weight", "[errors][E86]") {
  // The scales the call writes are the weight it reads for the next token's keys.
  std::vector<float> q(2 * kHead, 0.5f), k(2 * kHead, 0.5f), weight(kHead, 1.0f);
  std::vector<std::int8_t> cache(2 * kHead, 0);
  const std::int64_t positions[] = {0, 1};
  const rope::Norm<float> k_norm{rope::NormKind::rms, weight.data(), kHead, 1e-6};
  require_invalid(
      [&] {
        rot().apply_qk(rope::Queries<float>(View<float>::contiguous(q.data(), 2, 1, kHead)),
                       rope::Keys<float, std::int8_t>(
                           View<const float>::contiguous(k.data(), 2, 1, kHead),
                           {View<std::int8_t>::contiguous(cache.data(), 2, 1, kHead), rope::Slots{},
                            rope::CacheScales::rows(weight.data(), 2)})
                           .normalized(k_norm),
                       positions);
      },
      {"the int8 cache's scales", "share bytes with the k norm's weight"});
  REQUIRE(weight == std::vector<float>(kHead, 1.0f));
  REQUIRE(cache == std::vector<std::int8_t>(2 * kHead, 0));
}
