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
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <typeinfo>
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

namespace {

// The calls of a pointer, a view and two views (apply in place and out of place, checked and
// unchecked, apply_qk) rotate small calls on the calling thread without the walk
// (Core::apply_direct): the bits of the walk's calls (two threads, and apply_qk with roles), for
// positions in the table, past it and consecutive, views with gaps and a fused QKV row, and the
// calls they hand on to the walk; and for every error the checks find, the same exception, type
// and message from the pointer as from the view, with nothing written.
template <class T>
void check_pointer_as_view(const rope::Rotary<T>& rot) {
  using rope_test::same_bits;
  const std::size_t d = rot.head_size(), heads = 3, tokens = 4;
  std::mt19937_64 rng(11 + d + sizeof(T));
  // Room for the widest views below: heads 2·d apart, and a fused row of 7 heads a token with a
  // head past its last token.
  const std::vector<T> x0 = rope_test::random_vector<T>((7 * tokens + 1) * d, rng);
  const auto past = static_cast<std::int64_t>(rot.max_positions());  // the first row past it
  // (positions + 1 for a call of one token up to three)
  const std::int64_t positions[tokens + 1] = {0, past - 1, past, 1'000'003, 5};
  const std::int32_t positions32[tokens] = {7, 0, static_cast<std::int32_t>(past + 5), 2};
  rope::Execution two_threads;
  two_threads.threads = 2;
  two_threads.min_bytes_per_thread = 1;
  // Heads `gap` · d apart (1: contiguous), in place three ways and out of place.
  const auto same_rotation = [&](std::size_t t, std::size_t h, std::size_t gap, const Positions& p,
                                 const Call& call) {
    INFO(t << " tokens, " << h << " heads " << gap << " · d apart");
    std::vector<T> source = x0, by_pointer = x0, by_view = x0, out_of_place = x0, by_walk = x0;
    std::vector<T> unchecked = x0, unchecked_in_place = x0;
    const auto view = [&](std::vector<T>& v) {
      return View<T>(v.data(), t, h, h * gap * d, gap * d);
    };
    if (gap == 1) rot.apply(by_pointer.data(), t, h, p, call);
    rot.apply(view(by_view), p, call);
    rot.apply(View<const T>(view(source)), view(out_of_place), p, call);
    rot.apply(rope::unchecked, View<const T>(view(source)), view(unchecked), p, call);
    rot.apply(rope::unchecked, View<const T>(view(unchecked_in_place)), view(unchecked_in_place), p,
              call);
    // The walk: a call of two threads is never direct (its tokens split, or one part).
    rope::Execution walk = two_threads;
    if (call.execution.threads != 1) walk = call.execution;
    rot.apply(View<const T>(view(source)), view(by_walk), p, {call.direction, call.tokens, walk});
    REQUIRE_FALSE(same_bits(by_view, x0));
    REQUIRE(same_bits(by_view, by_walk));
    REQUIRE(same_bits(out_of_place, by_walk));
    REQUIRE(same_bits(unchecked, by_walk));
    REQUIRE(same_bits(unchecked_in_place, by_walk));
    REQUIRE(same_bits(source, x0));
    if (gap == 1) REQUIRE(same_bits(by_pointer, by_walk));
  };
  same_rotation(1, heads, 1, positions + 1, {});
  same_rotation(1, 1, 1, positions + 2, {Direction::inverse});
  same_rotation(tokens, heads, 1, positions, {});
  same_rotation(tokens, heads, 2, positions, {});
  same_rotation(tokens, 1, 2, positions32, {Direction::inverse});
  same_rotation(tokens, heads, 1, positions32, {Direction::inverse});
  same_rotation(tokens, 2, 1, Positions::consecutive(past - 2), {});
  same_rotation(tokens, heads, 1, positions, {Direction::forward, TokenRange{1, 3}});
  same_rotation(tokens, heads, 1, positions, two_threads);
  // q and k of a fused row [q q q k k v v] per token: one token's two extents are apart, more
  // tokens' interleave with each token's heads apart (rows_apart); out of place, the row's first
  // three heads into the next three. Against the walk (two threads).
  for (const std::size_t t : {std::size_t{1}, tokens}) {
    INFO(t << " tokens of a fused row");
    const std::vector<T> row0(x0.begin(), x0.begin() + long(t * 7 * d));
    std::vector<T> two_views = row0, roles = row0, walked = row0, moved = row0, moved_walk = row0;
    const auto q = [&](std::vector<T>& v) { return View<T>(v.data(), t, 3, 7 * d, d); };
    const auto k = [&](std::vector<T>& v) { return View<T>(v.data() + 3 * d, t, 2, 7 * d, d); };
    const auto next = [&](std::vector<T>& v) { return View<T>(v.data() + 3 * d, t, 3, 7 * d, d); };
    rot.apply_qk(q(two_views), k(two_views), positions + 1);
    rot.apply_qk(rope::Queries<T>(q(roles)), rope::Keys<T>(k(roles)), positions + 1);
    rot.apply_qk(q(walked), k(walked), positions + 1, {Direction::forward, {}, two_threads});
    rot.apply(View<const T>(q(moved)), next(moved), positions + 1);
    rot.apply(View<const T>(q(moved_walk)), next(moved_walk), positions + 1,
              {Direction::forward, {}, two_threads});
    REQUIRE_FALSE(same_bits(two_views, row0));
    REQUIRE(same_bits(two_views, walked));
    REQUIRE(same_bits(roles, walked));
    REQUIRE_FALSE(same_bits(moved, row0));
    REQUIRE(same_bits(moved, moved_walk));
  }
  // Rows whose heads meet: k from the second of q's three heads, or from the row's last head into
  // the next token's first (E28); out of place, the destination's from the third (E26). The same
  // error with one thread as with two, nothing written.
  for (const auto& [t, k_first] :
       {std::pair<std::size_t, std::size_t>{1, 1}, {tokens, 1}, {tokens, 6}}) {
    INFO(t << " tokens, k from head " << k_first);
    std::vector<T> row(x0.begin(), x0.begin() + long((t * 7 + 1) * d));
    const std::vector<T> row0 = row;
    const View<T> q(row.data(), t, 3, 7 * d, d), k(row.data() + k_first * d, t, 2, 7 * d, d);
    const View<T> dst(row.data() + 2 * d, t, 3, 7 * d, d);
    const auto message = [&](const auto& call) {
      std::string text;
      try {
        call();
      } catch (const std::exception& e) {
        text = std::string(typeid(e).name()) + ": " + e.what();
      }
      REQUIRE(same_bits(row, row0));
      return text;
    };
    const std::string one = message([&] { rot.apply_qk(q, k, positions + 1); });
    INFO(one);
    REQUIRE_FALSE(one.empty());
    REQUIRE(one == message([&] {
              rot.apply_qk(q, k, positions + 1, {Direction::forward, {}, two_threads});
            }));
    const std::string moved = message([&] { rot.apply(View<const T>(q), dst, positions + 1); });
    INFO(moved);
    REQUIRE_FALSE(moved.empty());
    REQUIRE(
        moved == message([&] {
          rot.apply(View<const T>(q), dst, positions + 1, {Direction::forward, {}, two_threads});
        }));
  }

  std::vector<T> x = x0;
  const std::int64_t negative[tokens] = {3, -1, 0, 0};
  const std::int32_t negative32[tokens] = {3, 4, -2, 0};
  const std::int64_t far[tokens] = {0, 1, rope::kMaxPosition + 1, 3};
  const std::int64_t two_axes[2 * tokens] = {};
  const double fractional[tokens] = {0.5, -0.5, 1, 2};
  rope::Execution streaming;
  streaming.streaming_stores = true;
  // Positions that would pass, stored in the second head of token 0 of `inside`.
  std::vector<T> inside = x0;
  const std::int64_t valid[tokens] = {0, 1, 2, 3};
  std::memcpy(inside.data() + d, valid, sizeof(valid));
  // ... and at its start, for a view of one token fewer that begins 8 bytes later: positions
  // whose first entry lies before the view and the others in it.
  std::memcpy(inside.data(), valid, sizeof(valid));
  const std::vector<T> inside0 = inside;
  const auto same_error = [&](T* data, std::size_t t, const Positions& p, const Call& call) {
    std::string by_pointer, by_view;
    try {
      rot.apply(data, t, heads, p, call);
    } catch (const std::exception& e) {
      by_pointer = std::string(typeid(e).name()) + ": " + e.what();
    }
    REQUIRE(same_bits(x, x0));
    REQUIRE(same_bits(inside, inside0));
    try {
      rot.apply(View<T>::contiguous(data, t, heads, d), p, call);
    } catch (const std::exception& e) {
      by_view = std::string(typeid(e).name()) + ": " + e.what();
    }
    INFO(by_pointer);
    REQUIRE_FALSE(by_pointer.empty());
    REQUIRE(by_pointer == by_view);
  };
  same_error(nullptr, tokens, positions, {});                                   // E21
  same_error(x.data(), tokens, static_cast<const std::int64_t*>(nullptr), {});  // E22
  same_error(x.data(), tokens, negative, {});                                   // E30
  same_error(x.data(), tokens, negative32, {});                                 // E30
  same_error(x.data(), tokens, Positions::consecutive(-1), {});                 // E30
  same_error(x.data(), tokens, far, {});                                        // E31
  same_error(x.data(), 2, Positions::consecutive(rope::kMaxPosition), {});      // E31
  same_error(x.data(), tokens, fractional, {});                                 // E98
  same_error(x.data(), tokens, Positions::token_major(two_axes, 2), {});        // axes
  same_error(inside.data(), tokens, reinterpret_cast<const std::int64_t*>(inside.data() + d),
             {});  // E78
  same_error(inside.data() + 8 / sizeof(T), tokens - 1,
             reinterpret_cast<const std::int64_t*>(inside.data()), {});  // E78
  same_error(x.data(), tokens, positions, {Direction::forward, TokenRange{0, tokens + 1}});
  same_error(x.data(), tokens, positions, {static_cast<Direction>(7)});
  same_error(x.data(), tokens, positions, streaming);
  same_error(x.data(), SIZE_MAX / 2, positions, {});  // more bytes than the address space
}

}  // namespace

namespace {

// Heads of 16 of which 12 coordinates rotate: pairs that rotate, and coordinates past them that
// do not.
rope::Options partial_options(Layout layout) {
  rope::Options partial;
  partial.layout = layout;
  partial.head_size = 16;
  partial.rotary_dim = 12;
  partial.max_positions = 64;
  return partial;
}

// A call of many tokens goes to the kernels in runs (Core::apply_direct, walk_runs): each token
// of it gets the bits of its own call of one token, which goes through the kernel of one token.
// Runs of 16, broken where a position is past the table (that token alone) and, walked, at a
// sequence's end; positions in the table in no order, past it, and past it by the kept rows'
// slots apart; in place (a pointer, heads apart), out of place, walked on two threads and in two
// sequences; both directions.
template <class T, int D>
void check_runs(const rope::Rotary<T, D>& rot, std::size_t tokens = 37, std::size_t heads = 3) {
  using rope_test::same_bits;
  const std::size_t d = rot.head_size();
  const auto past = static_cast<std::int64_t>(rot.max_positions());
  std::vector<std::int64_t> positions(tokens);
  for (std::size_t t = 0; t < tokens; ++t) {
    positions[t] = static_cast<std::int64_t>((t * 7919) % rot.max_positions());
  }
  positions[5] = past;
  positions[20] = past + 3;
  positions[21] = past + 3 + 512;
  positions[tokens - 1] = past - 1;
  std::mt19937_64 rng(23 + d + sizeof(T));
  const std::vector<T> x0 = rope_test::random_vector<T>(2 * tokens * heads * d, rng);
  rope::Execution two_threads;
  two_threads.threads = 2;
  two_threads.min_bytes_per_thread = 1;
  for (const Direction direction : {Direction::forward, Direction::inverse}) {
    INFO((direction == Direction::forward ? "forward" : "inverse"));
    for (const std::size_t gap : {std::size_t{1}, std::size_t{2}}) {
      INFO("heads " << gap << " · d apart");
      const std::size_t token_stride = heads * gap * d;
      const auto view = [&](std::vector<T>& v, std::size_t t, std::size_t count) {
        return View<T>(v.data() + t * token_stride, count, heads, token_stride, gap * d);
      };
      std::vector<T> in_place = x0, out_of_place = x0, token_by_token = x0, source = x0;
      std::vector<T> walked = x0, sequences = x0;
      if (gap == 1) {
        rot.apply(in_place.data(), tokens, heads, positions.data(), {direction});
      } else {
        rot.apply(view(in_place, 0, tokens), positions.data(), {direction});
      }
      rot.apply(View<const T>(view(source, 0, tokens)), view(out_of_place, 0, tokens),
                positions.data(), {direction});
      rot.apply(view(walked, 0, tokens), positions.data(), {direction, {}, two_threads});
      // All tokens but the last as two sequences.
      const std::size_t half = (tokens - 1) / 2;
      const View<T> two(sequences.data(), 2, half, heads, half * token_stride, token_stride,
                        gap * d);
      rot.apply(two, positions.data(), {direction});
      for (std::size_t t = 0; t < tokens; ++t) {
        rot.apply(view(token_by_token, t, 1), positions.data() + t, {direction});
      }
      REQUIRE_FALSE(same_bits(in_place, x0));
      REQUIRE(same_bits(in_place, token_by_token));
      REQUIRE(same_bits(out_of_place, token_by_token));
      REQUIRE(same_bits(walked, token_by_token));
      REQUIRE(same_bits(source, x0));
      std::vector<T> expected = token_by_token;
      std::copy(x0.begin() + long(2 * half * token_stride), x0.end(),
                expected.begin() + long(2 * half * token_stride));
      REQUIRE(same_bits(sequences, expected));
    }
  }
}

}  // namespace

TEMPLATE_TEST_CASE("Rotary: a direct call of many tokens rotates each as its call of one token",
                   "[rotary][runs]", float, double, Eigen::half, Eigen::bfloat16) {
  for (const Layout layout : {Layout::interleaved, Layout::half_split}) {
    INFO(rope::to_string(layout));
    check_runs(make<TestType, 64>(64, layout));
    check_runs(make<TestType, 256>(256, layout));
    for (const std::size_t d : {std::size_t{2}, std::size_t{72}, std::size_t{128}}) {
      INFO("head " << d);
      check_runs(make<TestType, Eigen::Dynamic>(d, layout));
    }
    check_runs(rope::Rotary<TestType>(partial_options(layout)));
  }
}

TEST_CASE("Rotary: a call of many tokens past the caches rotates each as its call of one token",
          "[rotary][runs]") {
  // 1200 tokens of 4 heads of 128 floats read and write 4.9 MiB, more than the walk's one-pass
  // threshold; 4500 of 8, 36 MiB, more than its memory threshold (walk.hpp).
  for (const Layout layout : {Layout::interleaved, Layout::half_split}) {
    INFO(rope::to_string(layout));
    check_runs(make<float, 128>(128, layout), 1200, 4);
    check_runs(make<float, Eigen::Dynamic>(128, layout), 4500, 8);
  }
}

TEMPLATE_TEST_CASE(
    "Rotary: apply of a pointer in place is the view's call, bit for bit and error "
    "for error",
    "[rotary][errors]", float, double, Eigen::half, Eigen::bfloat16) {
  for (const Layout layout : {Layout::interleaved, Layout::half_split}) {
    INFO(rope::to_string(layout));
    check_pointer_as_view(make<TestType, Eigen::Dynamic>(128, layout));
    check_pointer_as_view(rope::Rotary<TestType>(partial_options(layout)));
  }
}
