// Rotary<T, Dim>: every entry point against the float64 reference, and the algebraic properties
// of the rotation, for float, double, Eigen::half and bfloat16, both layouts.
//
// Head sizes are looped at run time through Rotary<T> (Eigen::Dynamic), as Highway's tests loop
// theirs: one class per type covers every size. Fixed sizes are instantiated only where the
// generated code differs: 2 (no whole register), 6 (a remainder only), 128 (whole registers only)
// and 130 (registers and a remainder).
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <random>
#include <vector>

#include <Eigen/Core>
#include <catch2/catch.hpp>

#include <rope/rope.hpp>

#include "support.hpp"

namespace {

using rope::Call;
using rope::Direction;
using rope::Layout;
using rope::Positions;
using rope::TokenRange;
using rope::View;
using rope_test::require_rotation_of;

// Sizes with and without a remainder after whole registers of every x86 and NEON width.
constexpr std::size_t kSizes[] = {2, 4, 6, 8, 34, 64, 96, 128, 130, 256};

template <class T>
double dot(const std::vector<T>& a, const std::vector<T>& b) {
  double sum = 0;
  for (std::size_t i = 0; i < a.size(); ++i) sum += double(a[i]) * double(b[i]);
  return sum;
}

template <class T>
double norm(const std::vector<T>& a) {
  return std::sqrt(dot(a, a));
}

// One head rotated by R_m (m ≥ 0) or R_{|m|}ᵀ = R_m (m < 0).
template <class R, class T>
std::vector<T> rotate(const R& rot, std::vector<T> x, std::int64_t m) {
  rot.apply(x.data(), 1, 1, Positions::consecutive(m < 0 ? -m : m),
            {m < 0 ? Direction::inverse : Direction::forward});
  return x;
}

constexpr std::size_t kTablePositions = 4096;

// Every entry point of rot against the float64 reference, both directions.
template <class R>
void check_entry_points(const R& rot, std::mt19937_64& rng) {
  using T = typename R::Scalar;
  const std::size_t d = rot.head_size();
  const Layout layout = rot.layout();
  const std::size_t tokens = 5, heads = 3, n = tokens * heads * d;
  const std::vector<T> input = rope_test::random_vector<T>(n, rng);
  const auto input_view = View<const T>::contiguous(input.data(), tokens, heads, d);
  std::uniform_int_distribution<std::int64_t> any_position(0, kTablePositions - 1);
  const std::vector<std::int64_t> positions = {kTablePositions - 1, 0, 1, any_position(rng),
                                               any_position(rng)};
  const std::vector<std::int32_t> positions32(positions.begin(), positions.end());
  const auto contiguous = [&](const std::vector<T>& v, std::size_t offset = 0) {
    return View<const T>::contiguous(v.data() + offset, tokens, heads, d);
  };

  for (const Direction dir : {Direction::forward, Direction::inverse}) {
    INFO((dir == Direction::forward ? "forward" : "inverse"));
    {
      INFO("in place, int64 positions");
      std::vector<T> x = input;
      rot.apply(x.data(), tokens, heads, positions.data(), {dir});
      require_rotation_of<T>(input_view, contiguous(x), d, layout, positions, dir);
    }
    {
      INFO("in place, int32 positions");
      std::vector<T> x = input;
      rot.apply(x.data(), tokens, heads, positions32.data(), {dir});
      require_rotation_of<T>(input_view, contiguous(x), d, layout, positions, dir);
    }
    {
      INFO("consecutive positions from an offset (prefill after a cache, decode)");
      const std::int64_t first = kTablePositions - tokens;
      std::vector<std::int64_t> expected(tokens);
      std::iota(expected.begin(), expected.end(), first);
      std::vector<T> x = input;
      rot.apply(x.data(), tokens, heads, Positions::consecutive(first), {dir});
      require_rotation_of<T>(input_view, contiguous(x), d, layout, expected, dir);
    }
    {
      INFO("out of place leaves the source unchanged; unchecked gives the same bits");
      std::vector<T> dst(n, T(7)), unchecked(n, T(7));
      const auto out = View<T>::contiguous(dst.data(), tokens, heads, d);
      rot.apply(input_view, out, positions.data(), {dir});
      require_rotation_of<T>(input_view, contiguous(dst), d, layout, positions, dir);
      rot.apply(rope::unchecked, input_view,
                View<T>::contiguous(unchecked.data(), tokens, heads, d), positions.data(), {dir});
      REQUIRE(unchecked == dst);
    }
    {
      INFO("pointers one element past an aligned address");
      std::vector<T> buffer(n + 1);
      std::copy(input.begin(), input.end(), buffer.begin() + 1);
      rot.apply(buffer.data() + 1, tokens, heads, positions.data(), {dir});
      require_rotation_of<T>(input_view, contiguous(buffer, 1), d, layout, positions, dir);
      std::vector<T> dst(n + 1);
      rot.apply(input_view, View<T>::contiguous(dst.data() + 1, tokens, heads, d), positions.data(),
                {dir});
      require_rotation_of<T>(input_view, contiguous(dst, 1), d, layout, positions, dir);
    }
    {
      INFO("strided [heads][tokens][d] view with padding, in place and out of place");
      // Odd padding puts heads at every alignment; the padding must stay untouched.
      const std::size_t token_stride = d + 1, head_stride = tokens * token_stride + 3;
      const T pad = T(-9);
      std::vector<T> buffer(heads * head_stride, pad);
      const View<T> x(buffer.data(), tokens, heads, token_stride, head_stride);
      for (std::size_t t = 0; t < tokens; ++t)
        for (std::size_t h = 0; h < heads; ++h) std::copy_n(input_view.head(t, h), d, x.head(t, h));
      const std::vector<T> before = buffer;
      rot.apply(x, positions.data(), {dir});
      require_rotation_of<T>(input_view, View<const T>(x), d, layout, positions, dir);
      std::size_t touched_padding = 0;
      for (std::size_t i = 0; i < buffer.size(); ++i) {
        const std::size_t in_head = i % head_stride, in_token = in_head % token_stride;
        const bool padding = in_head >= tokens * token_stride || in_token >= d;
        if (padding && buffer[i] != before[i]) ++touched_padding;
      }
      REQUIRE(touched_padding == 0);

      std::vector<T> out(heads * head_stride, pad);
      const View<T> y(out.data(), tokens, heads, token_stride, head_stride);
      rot.apply(input_view, y, positions.data(), {dir});
      require_rotation_of<T>(input_view, View<const T>(y), d, layout, positions, dir);
    }
    {
      INFO("a token range rotates its tokens only, each at its own position");
      std::vector<T> x = input;
      rot.apply(x.data(), tokens, heads, positions.data(), {dir, TokenRange{1, 4}});
      const auto part = [&](const std::vector<T>& v) {
        return View<const T>(v.data() + heads * d, 3, heads, heads * d, d);
      };
      require_rotation_of<T>(part(input), part(x), d, layout,
                             {positions[1], positions[2], positions[3]}, dir);
      REQUIRE(std::equal(x.begin(), x.begin() + long(heads * d), input.begin()));
      REQUIRE(std::equal(x.end() - long(heads * d), x.end(), input.end() - long(heads * d)));
    }
    {
      INFO("q and k of a fused QKV buffer in one call, grouped-query heads; unchecked alike");
      // Per token: 4 query heads, 2 key heads, 2 value heads, [tokens][(4 + 2 + 2)·d].
      const std::size_t hq = 4, hk = 2, row = (hq + 2 * hk) * d;
      const std::vector<T> qkv = rope_test::random_vector<T>(tokens * row, rng);
      std::vector<T> x = qkv, y = qkv;
      const View<T> q(x.data(), tokens, hq, row, d);
      const View<T> k(x.data() + hq * d, tokens, hk, row, d);
      rot.apply_qk(q, k, positions.data(), {dir});
      const View<const T> q_in(qkv.data(), tokens, hq, row, d);
      const View<const T> k_in(qkv.data() + hq * d, tokens, hk, row, d);
      require_rotation_of<T>(q_in, View<const T>(q), d, layout, positions, dir);
      require_rotation_of<T>(k_in, View<const T>(k), d, layout, positions, dir);
      for (std::size_t t = 0; t < tokens; ++t) {
        const std::size_t v = t * row + (hq + hk) * d;  // value heads are not rotated
        REQUIRE(std::equal(x.data() + v, x.data() + v + hk * d, qkv.data() + v));
      }
      rot.apply_qk(rope::unchecked, rope::Queries(View<T>(y.data(), tokens, hq, row, d)),
                   rope::Keys(View<T>(y.data() + hq * d, tokens, hk, row, d)), positions.data(),
                   {dir});
      REQUIRE(y == x);
    }
    {
      INFO("a batch: [batch, heads, seq, d] and [batch, seq, heads, d], positions [batch][seq]");
      const std::size_t batch = 2, seq = 3;
      const std::vector<T> bhsd = rope_test::random_vector<T>(batch * heads * seq * d, rng);
      const std::vector<std::int64_t> at = {5, 6, 7, 0, 1, kTablePositions + 2};  // [2][3]
      std::vector<T> x = bhsd;
      const auto view = View<T>::batch_heads_seq(x.data(), batch, heads, seq, d);
      rot.apply(view, at.data(), {dir});
      const auto in = View<const T>::batch_heads_seq(bhsd.data(), batch, heads, seq, d);
      require_rotation_of<T>(in, View<const T>(view), d, layout, at, dir);
      // The same heads in the other layout, out of place into [batch, seq, heads, d].
      std::vector<T> out(bhsd.size());
      const auto bshd = View<T>::batch_seq_heads(out.data(), batch, seq, heads, d);
      rot.apply(in, bshd, at.data(), {dir});
      require_rotation_of<T>(in, View<const T>(bshd), d, layout, at, dir);
      // The same, indexed by hand: element (b, h, s, i) of [B, H, S, D] at ((b·H + h)·S + s)·d
      // + i and of [B, S, H, D] at ((b·S + s)·H + h)·d + i, at position at[b·S + s]; one head
      // at a time, so that no View maps the indices for the oracle.
      for (std::size_t b = 0; b < batch; ++b) {
        for (std::size_t s = 0; s < seq; ++s) {
          for (std::size_t h = 0; h < heads; ++h) {
            INFO("sequence " << b << ", token " << s << ", head " << h);
            const std::size_t by_head = ((b * heads + h) * seq + s) * d;
            const std::size_t by_token = ((b * seq + s) * heads + h) * d;
            const auto one = [&](const std::vector<T>& v, std::size_t at_element) {
              return View<const T>::contiguous(v.data() + at_element, 1, 1, d);
            };
            require_rotation_of<T>(one(bhsd, by_head), one(x, by_head), d, layout,
                                   {at[b * seq + s]}, dir);
            require_rotation_of<T>(one(bhsd, by_head), one(out, by_token), d, layout,
                                   {at[b * seq + s]}, dir);
          }
        }
      }
      // Consecutive positions restart in every sequence.
      std::vector<T> z = bhsd;
      rot.apply(View<T>::batch_heads_seq(z.data(), batch, heads, seq, d),
                Positions::consecutive(10), {dir});
      require_rotation_of<T>(in, View<const T>::batch_heads_seq(z.data(), batch, heads, seq, d), d,
                             layout, {10, 11, 12, 10, 11, 12}, dir);
    }
    {
      INFO("one head as an Eigen vector, matrix row, segment or Ref: rotated copies");
      using Vector = Eigen::Matrix<T, Eigen::Dynamic, 1>;
      using Matrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic>;  // column-major
      const std::vector<std::int64_t> at = {positions[0]};
      const auto one = View<const T>::contiguous(input.data(), 1, 1, d);
      const auto check = [&](const Vector& got) {
        require_rotation_of<T>(one, View<const T>::contiguous(got.data(), 1, 1, d), d, layout, at,
                               dir);
      };
      const Vector head = Eigen::Map<const Vector>(input.data(), Eigen::Index(d));
      check(rot.rotated(head, at[0], dir));
      Matrix m = Matrix::Zero(3, Eigen::Index(d));
      m.row(1) = head.transpose();
      m.row(1) = rot.rotated(m.row(1), at[0], dir);  // a strided row
      check(m.row(1).transpose());
      REQUIRE(m.row(0).isZero(T(0)));
      REQUIRE(m.row(2).isZero(T(0)));
      Vector longer = Vector::Zero(Eigen::Index(d) + 4);
      longer.segment(2, Eigen::Index(d)) = head;
      check(rot.rotated(longer.segment(2, Eigen::Index(d)), at[0], dir));
      Vector w = head;
      const Eigen::Ref<Vector> ref(w);
      check(rot.rotated(ref, at[0], dir));
      REQUIRE(head == Eigen::Map<const Vector>(input.data(), Eigen::Index(d)));
    }
  }
}

// ⟨R_m q, R_n k⟩ = ⟨q, R_{n−m} k⟩, ‖R_m q‖ = ‖q‖, R_m R_n = R_{m+n}, R_mᵀ R_m = I, R_0 = I.
template <class R>
void check_properties(const R& rot, std::mt19937_64& rng) {
  using T = typename R::Scalar;
  using rope_test::gamma;
  using rope_test::head_bound;
  const std::size_t d = rot.head_size();
  // Positions up to 10^6: the first 4096 from the table, the others from rows computed on the
  // fly (tested to equal the table's in beyond_table_test.cpp).
  constexpr std::int64_t kLargest = 1000000;
  std::uniform_int_distribution<std::int64_t> any_position(0, kLargest);
  const double dot_rounding = gamma<double>(int(d));  // an inner product of length d in double
  for (int trial = 0; trial < 16; ++trial) {
    const std::vector<T> q = rope_test::random_vector<T>(d, rng);
    const std::vector<T> k = rope_test::random_vector<T>(d, rng);
    const std::int64_t m = any_position(rng), n = any_position(rng);
    INFO("m = " << m << ", n = " << n);
    const double qk = norm(q) * norm(k);
    {
      const double left = dot(rotate(rot, q, m), rotate(rot, k, n));
      const double right = dot(q, rotate(rot, k, n - m));
      const double em = head_bound<T>(double(m)), en = head_bound<T>(double(n));
      const double bound =
          (em + en + em * en + head_bound<T>(double(n - m)) + 2 * dot_rounding) * qk;
      CHECK_THAT(left, Catch::Matchers::WithinAbs(right, bound));
    }
    CHECK_THAT(norm(rotate(rot, q, m)),
               Catch::Matchers::WithinAbs(norm(q), (head_bound<T>(0) + dot_rounding) * norm(q)));
    {
      const std::vector<T> twice = rotate(rot, rotate(rot, q, n), m);
      const std::vector<T> once = rotate(rot, q, m + n);
      const double em = head_bound<T>(double(m)), en = head_bound<T>(double(n));
      const double bound = em + en + em * en + head_bound<T>(double(m + n));
      std::vector<double> diff(d);
      for (std::size_t i = 0; i < d; ++i) diff[i] = double(twice[i]) - double(once[i]);
      CHECK(norm(diff) <= bound * norm(q) * (1 + dot_rounding));
    }
    {
      const std::vector<T> back = rotate(rot, rotate(rot, q, m), -m);
      const double e = head_bound<T>(0);
      std::vector<double> diff(d);
      for (std::size_t i = 0; i < d; ++i) diff[i] = double(back[i]) - double(q[i]);
      CHECK(norm(diff) <= (2 * e + e * e) * norm(q) * (1 + dot_rounding));
    }
    // Position 0 is the identity, exactly: cos 0 = 1 and sin 0 = 0 are exact in any type.
    REQUIRE(rotate(rot, q, 0) == q);
    std::vector<T> x = q;
    rot.apply(x.data(), 1, 1, Positions::consecutive(0), {Direction::inverse});
    REQUIRE(x == q);
  }
}

template <class T, int D>
rope::Rotary<T, D> make(std::size_t d, Layout layout) {
  rope::Options options;
  options.head_size = d;
  options.layout = layout;
  options.max_positions = kTablePositions;
  return rope::Rotary<T, D>(options);
}

}  // namespace

TEMPLATE_TEST_CASE("Rotary: every entry point matches the float64 reference, any head size",
                   "[rotary][reference]", float, double, Eigen::half, Eigen::bfloat16) {
  for (const std::size_t d : kSizes) {
    for (const Layout layout : {Layout::interleaved, Layout::half_split}) {
      INFO("head size " << d << ", " << rope::to_string(layout));
      std::mt19937_64 rng(100 + d + sizeof(TestType));
      check_entry_points(make<TestType, Eigen::Dynamic>(d, layout), rng);
    }
  }
}

TEMPLATE_TEST_CASE("Rotary: a head's last pairs past whole registers, with more heads than a group",
                   "[rotary][reference]", float, double, Eigen::half, Eigen::bfloat16) {
  // Heads whose pairs are not a whole number of registers (17, 36, 40, 50, 65, 100 pairs; on
  // every instruction set some of these leave a remainder) rotate their last pairs as one
  // register overlapping the one before it, 8 heads at a time: 9 and 17 heads take a second and
  // third group. In place, out of place, and in place with heads apart (a fused QKV row).
  using T = TestType;
  const std::size_t tokens = 4;
  const std::vector<std::int64_t> positions = {0, 1, 777, kTablePositions - 1};
  for (const std::size_t d : std::initializer_list<std::size_t>{34, 72, 80, 100, 130, 200}) {
    for (const Layout layout : {Layout::interleaved, Layout::half_split}) {
      const auto rot = make<T, Eigen::Dynamic>(d, layout);
      for (const std::size_t heads : std::initializer_list<std::size_t>{9, 17}) {
        INFO("head size " << d << ", " << rope::to_string(layout) << ", " << heads << " heads");
        std::mt19937_64 rng(300 + d + heads + sizeof(T));
        const std::vector<T> input = rope_test::random_vector<T>(tokens * heads * d, rng);
        const auto input_view = View<const T>::contiguous(input.data(), tokens, heads, d);
        for (const Direction dir : {Direction::forward, Direction::inverse}) {
          std::vector<T> x = input;
          rot.apply(x.data(), tokens, heads, positions.data(), {dir});
          require_rotation_of<T>(input_view, View<const T>::contiguous(x.data(), tokens, heads, d),
                                 d, layout, positions, dir);
          std::vector<T> y(input.size());
          rot.apply(input_view, View<T>::contiguous(y.data(), tokens, heads, d), positions.data(),
                    {dir});
          REQUIRE(rope_test::same_bits(x, y));
          // Heads 2·d apart, the gaps between them left alone.
          std::vector<T> apart(2 * input.size(), T(3));
          const View<T> spread(apart.data(), tokens, heads, 2 * heads * d, 2 * d);
          for (std::size_t t = 0; t < tokens; ++t) {
            for (std::size_t h = 0; h < heads; ++h) {
              std::copy_n(input_view.head(t, h), d, spread.head(t, h));
            }
          }
          rot.apply(spread, positions.data(), {dir});
          for (std::size_t t = 0; t < tokens; ++t) {
            for (std::size_t h = 0; h < heads; ++h) {
              REQUIRE(std::equal(spread.head(t, h), spread.head(t, h) + d,
                                 x.begin() + long((t * heads + h) * d)));
              REQUIRE(std::all_of(spread.head(t, h) + d, spread.head(t, h) + 2 * d,
                                  [](T v) { return v == T(3); }));
            }
          }
        }
      }
    }
  }
}

TEMPLATE_TEST_CASE_SIG("Rotary: every entry point matches the float64 reference, fixed head size",
                       "[rotary][reference]", ((typename T, int D), T, D), (float, 2), (float, 6),
                       (float, 128), (float, 130), (double, 6), (double, 128), (Eigen::half, 128),
                       (Eigen::bfloat16, 130)) {
  for (const Layout layout : {Layout::interleaved, Layout::half_split}) {
    INFO(rope::to_string(layout));
    std::mt19937_64 rng(100 + D + sizeof(T));
    check_entry_points(make<T, D>(D, layout), rng);
  }
}

TEMPLATE_TEST_CASE("Rotary: the rotation's algebraic properties hold", "[rotary][property]", float,
                   double) {
  for (const std::size_t d : kSizes) {
    for (const Layout layout : {Layout::interleaved, Layout::half_split}) {
      INFO("head size " << d << ", " << rope::to_string(layout));
      std::mt19937_64 rng(200 + d + sizeof(TestType));
      check_properties(make<TestType, Eigen::Dynamic>(d, layout), rng);
    }
  }
}

TEMPLATE_TEST_CASE_SIG("Rotary: the rotation's algebraic properties hold, fixed head size",
                       "[rotary][property]", ((typename T, int D), T, D), (float, 2), (float, 130),
                       (double, 6), (double, 128)) {
  for (const Layout layout : {Layout::interleaved, Layout::half_split}) {
    INFO(rope::to_string(layout));
    std::mt19937_64 rng(200 + D + sizeof(T));
    check_properties(make<T, D>(D, layout), rng);
  }
}
