// QK-norm fused with RoPE (rope/qk_norm.hpp): apply_qk with QkNorms, in place and into a key cache,
// checked bit for bit against the separate passes a user writes with this library
// (normalize_heads, then apply_qk; or apply_qk, then normalize_heads; then the conversion into the
// cache), and against float64 transcriptions of the HuggingFace classes composed with the float64
// reference rotation, within bounds derived below. Then the errors.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <random>
#include <utility>
#include <vector>

#include <Eigen/Core>
#include <catch2/catch.hpp>

#include <rope/rope.hpp>

#include "support.hpp"

namespace {

using rope::Layout;
using rope::NormKind;
using rope::View;
using rope_test::same_bits;

// ---- float64 transcriptions of the HuggingFace classes (exact arithmetic, no roundings) -------

// 1 / sqrt(mean(x²) + eps) over x.
double inverse_rms(const double* x, std::size_t n, double eps) {
  double sum = 0;
  for (std::size_t i = 0; i < n; ++i) sum += x[i] * x[i];
  return 1.0 / std::sqrt(sum / double(n) + eps);
}

// Qwen3RMSNorm: weight * (x * rsqrt(mean(x²) + eps)); Gemma3RMSNorm: (x * rsqrt(..)) * (1 + w);
// Olmo2RMSNorm: the same as Qwen3's over the token's whole projection. `heads` heads of d.
std::vector<double> reference_pre_norm(NormKind kind, std::vector<double> x,
                                       const std::vector<double>& w, std::size_t heads,
                                       std::size_t d, double eps) {
  const double whole = inverse_rms(x.data(), heads * d, eps);
  for (std::size_t h = 0; h < heads; ++h) {
    double* head = x.data() + h * d;
    const double r = kind == NormKind::rms_projection ? whole : inverse_rms(head, d, eps);
    for (std::size_t i = 0; i < d; ++i) {
      const double wi = kind == NormKind::rms_projection ? w[h * d + i] : w[i];
      head[i] = kind == NormKind::rms_one_plus ? head[i] * r * (1 + wi) : wi * (head[i] * r);
    }
  }
  return x;
}

// ---- bounds ---------------------------------------------------------------------------------
// A computed r̃ = r(1 + δ_r): the sum of m squares in C errs by at most γ_m(C) relative (any
// order of summation, Higham Lemma 3.1), the mean and the sum with ε one rounding each, the square
// root halves the relative error of its argument and adds one rounding, the quotient one:
// |δ_r| ≤ γ_m/2 + 3u. A normalised coordinate then takes at most three roundings in C (x·r, the
// weight's product and 1 + w) and two in T (rms: n and w·n): relative error at most
// δ_pre = γ_m(C)/2 + γ_6(C) + 2·u(T) (u(T) = u(C) for float and double, where those roundings
// are C's). The rotation of a pair (ã, b̃) = (a, b) + (e_a, e_b) moves each coordinate by at most
// |e_a| + |e_b| (|cos|, |sin| ≤ 1), plus coordinate_bound<C> of the rotation itself.
template <class T>
double pre_norm_relative(std::size_t m) {
  using C = rope::compute_t<T>;
  return rope_test::gamma<C>(int(m)) / 2 + rope_test::gamma<C>(6) + 2 * rope_test::unit_roundoff<T>;
}

// After RoPE (l2_after): y = R x exactly; the kernel's ỹ differs by Δ per coordinate (its
// coordinate_bound<C>, then the rounding to T). The map y ↦ y·r(y), r(y) = (‖y‖²/d + ε)^(−1/2),
// has Jacobian r·(I − r²/d·y yᵀ), of norm at most r, and along the segment from y to ỹ r grows by
// at most 1/(1 − ‖Δ‖/‖y‖) ≤ 2 here (‖Δ‖ ≤ 10⁻² ‖y‖ by orders of magnitude): each coordinate moves
// by at most 2·r(y)·‖Δ‖₂. r̃ itself errs by γ_d/2 + 3u, the product by u and T by u(T).
template <class T>
double post_norm_relative(std::size_t d) {
  using C = rope::compute_t<T>;
  return rope_test::gamma<C>(int(d)) / 2 + rope_test::gamma<C>(4) + rope_test::unit_roundoff<T>;
}

// The final rounding of a value computed in C with error `computed` into K.
template <class K, class C>
double into(double expected, double computed) {
  if constexpr (std::is_same_v<K, C>) {
    return computed;
  } else {
    return computed + rope_test::unit_roundoff<K> * (std::abs(expected) + computed) +
           double(std::numeric_limits<K>::denorm_min()) / 2;
  }
}

struct Shape {
  std::size_t tokens, q_heads, k_heads, d, rotary_dim, offset;
};

// The float64 expectation of one role (q or k): every head of `in` normalised and rotated (or
// rotated and normalised), and the bound of each coordinate of a result stored as K.
template <class T, class K>
void expected_role(const std::vector<T>& in, std::size_t heads, const Shape& s, NormKind kind,
                   const std::vector<T>& weight, double eps, Layout layout,
                   const std::vector<std::int64_t>& positions, std::vector<double>& expected,
                   std::vector<double>& bound) {
  using C = rope::compute_t<T>;
  const std::size_t d = s.d, r_dim = s.rotary_dim == 0 ? d : s.rotary_dim, row = heads * d;
  const std::vector<double> w(weight.begin(), weight.end());
  expected.assign(in.size(), 0);
  bound.assign(in.size(), 0);
  for (std::size_t t = 0; t < s.tokens; ++t) {
    std::vector<double> x(in.begin() + std::ptrdiff_t(t * row),
                          in.begin() + std::ptrdiff_t((t + 1) * row));
    const bool pre = kind != NormKind::none && kind != NormKind::l2_after;
    if (pre) x = reference_pre_norm(kind, x, w, heads, d, eps);
    const std::size_t m = kind == NormKind::rms_projection ? row : d;
    for (std::size_t h = 0; h < heads; ++h) {
      const double* head = x.data() + h * d;
      std::vector<double> slice(head + s.offset, head + s.offset + r_dim);
      slice =
          rope_test::reference_head(slice, layout, positions[t], rope::Direction::forward, 10000.0);
      std::vector<double> y(head, head + d), err(d, 0);
      for (std::size_t i = 0; i < d; ++i) {
        const bool rotated = i >= s.offset && i < s.offset + r_dim;
        // The input pair's error (normalised inputs) and the rotation's.
        const std::size_t partner = rope_test::partner_index(i, d, layout, r_dim, s.offset);
        const double pair = rotated ? std::abs(head[i]) + std::abs(head[partner]) : 0.0;
        const double input_error =
            pre ? pre_norm_relative<T>(m) * (rotated ? pair : std::abs(head[i])) : 0.0;
        y[i] = rotated ? slice[i - s.offset] : head[i];
        err[i] = input_error +
                 (rotated ? rope_test::coordinate_bound<C>(pair, double(positions[t])) : 0.0);
      }
      if (kind == NormKind::l2_after) {
        // The rotated head rounded to T, then normalised.
        double delta2 = 0;
        for (std::size_t i = 0; i < d; ++i) {
          const double e = into<T, C>(y[i], err[i]);
          delta2 += e * e;
        }
        const double r = inverse_rms(y.data(), d, eps);
        for (std::size_t i = 0; i < d; ++i) {
          y[i] *= r;
          err[i] = 2 * r * std::sqrt(delta2) + post_norm_relative<T>(d) * std::abs(y[i]);
        }
      }
      for (std::size_t i = 0; i < d; ++i) {
        expected[t * row + h * d + i] = y[i];
        bound[t * row + h * d + i] = into<K, C>(y[i], err[i]);
      }
    }
  }
}

template <class V>
void require_within(const std::vector<V>& got, const std::vector<double>& expected,
                    const std::vector<double>& bound, const char* what) {
  rope_test::WorstCoordinate worst;
  for (std::size_t i = 0; i < got.size(); ++i) {
    worst.note(std::abs(double(got[i]) - expected[i]), bound[i], [&](std::ostream& s) {
      s << what << " value " << i << ": got " << double(got[i]) << ", reference " << expected[i]
        << ", bound " << bound[i];
    });
  }
  INFO("worst " << what << " coordinate against the float64 reference: " << worst.where());
  REQUIRE(worst.ratio() <= 1.0);
}

template <class T>
std::vector<T> weights_for(NormKind kind, std::size_t size, std::mt19937_64& rng) {
  // Qwen3's and OLMo's weights are near 1, Gemma's (1 + w) near 0 around 1.
  std::uniform_real_distribution<double> near_one(0.5, 1.5), near_zero(-0.5, 0.5);
  std::vector<T> w(size);
  for (T& v : w) v = T(kind == NormKind::rms_one_plus ? near_zero(rng) : near_one(rng));
  return w;
}

// One shape, layout and pair of kinds: the fused call in place and into a cache of K, against
// the separate passes (bit for bit) and the float64 reference.
template <class T, class K>
void check_norms(const Shape& s, Layout layout, NormKind q_kind, NormKind k_kind,
                 std::size_t threads) {
  rope::Options options;
  options.head_size = s.d;
  options.layout = layout;
  options.rotary_dim = s.rotary_dim;
  options.rotary_offset = s.offset;
  options.max_positions = 512;  // positions past it take rows computed on the fly
  const rope::Rotary<T> rot(options);
  const double eps = 1e-6;
  std::mt19937_64 rng(s.d * 7 + std::size_t(q_kind) * 3 + std::size_t(k_kind));
  const auto q_in = rope_test::random_vector<T>(s.tokens * s.q_heads * s.d, rng);
  const auto k_in = rope_test::random_vector<T>(s.tokens * s.k_heads * s.d, rng);
  const auto weight_size = [&](NormKind kind, std::size_t heads) {
    return kind == NormKind::none || kind == NormKind::l2_after ? 0
           : kind == NormKind::rms_projection                   ? heads * s.d
                                                                : s.d;
  };
  const auto q_w = weights_for<T>(q_kind, weight_size(q_kind, s.q_heads), rng);
  const auto k_w = weights_for<T>(k_kind, weight_size(k_kind, s.k_heads), rng);
  const rope_test::NormPair<T> norms{{q_kind, q_w.empty() ? nullptr : q_w.data(), q_w.size(), eps},
                                     {k_kind, k_w.empty() ? nullptr : k_w.data(), k_w.size(), eps}};
  std::vector<std::int64_t> positions(s.tokens);
  for (std::size_t t = 0; t < s.tokens; ++t) positions[t] = std::int64_t(t * 131 % 3000);
  const auto q_of = [&](std::vector<T>& v) {
    return rope_test::contiguous(v.data(), s.tokens, s.q_heads, s.d);
  };
  const auto k_of = [&](std::vector<T>& v) {
    return rope_test::contiguous(v.data(), s.tokens, s.k_heads, s.d);
  };
  rope::Call call;
  call.execution.threads = threads;

  // Fused, in place.
  std::vector<T> q = q_in, k = k_in;
  rot.apply_qk(rope::Queries(q_of(q)).normalized(norms.q), rope::Keys(k_of(k)).normalized(norms.k),
               positions.data(), call);

  // Separate: the norms before RoPE, apply_qk, the norms after it.
  std::vector<T> q_sep = q_in, k_sep = k_in;
  const auto pre = [](const rope::Norm<T>& n) {
    return n.kind != NormKind::l2_after ? n : rope::Norm<T>{};
  };
  const auto post = [](const rope::Norm<T>& n) {
    return n.kind == NormKind::l2_after ? n : rope::Norm<T>{};
  };
  rope::normalize_heads(q_of(q_sep), s.d, pre(norms.q));
  rope::normalize_heads(k_of(k_sep), s.d, pre(norms.k));
  rot.apply_qk(q_of(q_sep), k_of(k_sep), positions.data());
  rope::normalize_heads(q_of(q_sep), s.d, post(norms.q));
  rope::normalize_heads(k_of(k_sep), s.d, post(norms.k));
  {
    INFO("in place: bit for bit the separate passes");
    REQUIRE(same_bits(q, q_sep));
    REQUIRE(same_bits(k, k_sep));
  }

  // Fused into a cache of K at slots in reverse order; q out of place.
  const std::size_t rows = s.tokens + 3;
  std::vector<std::int64_t> slots(s.tokens);
  for (std::size_t t = 0; t < s.tokens; ++t) slots[t] = std::int64_t(rows - 1 - t);
  std::vector<T> q_out(q_in.size());
  std::vector<K> cache(rows * s.k_heads * s.d, K(0));
  rot.apply_qk(rope::Queries(rope_test::contiguous<const T>(q_in.data(), s.tokens, s.q_heads, s.d),
                             q_of(q_out))
                   .normalized(norms.q),
               rope::Keys(rope_test::contiguous<const T>(k_in.data(), s.tokens, s.k_heads, s.d),
                          rope::KeyCache<K>{View<K>::contiguous(cache.data(), rows, s.k_heads, s.d),
                                            rope::Slots(slots.data(), s.tokens)})
                   .normalized(norms.k),
               positions.data(), call);
  // The keys as the cache's separate passes leave them: normalised (before RoPE), rotated out of
  // place in C, converted to K; or (after RoPE) rotated, normalised in T, converted to K.
  using C = rope::compute_t<T>;
  std::vector<C> k_rotated(k_sep.begin(), k_sep.end());
  if (k_kind != NormKind::l2_after) {
    std::vector<T> k_normed = k_in;
    rope::normalize_heads(k_of(k_normed), s.d, norms.k);
    const std::vector<C> wide(k_normed.begin(), k_normed.end());
    rope::Rotary<C>(options).apply(
        rope_test::contiguous<const C>(wide.data(), s.tokens, s.k_heads, s.d),
        rope_test::contiguous(k_rotated.data(), s.tokens, s.k_heads, s.d), positions.data());
  }
  std::vector<K> cache_sep(cache.size(), K(0));
  const std::size_t row = s.k_heads * s.d;
  for (std::size_t t = 0; t < s.tokens; ++t) {
    for (std::size_t i = 0; i < row; ++i) {
      cache_sep[std::size_t(slots[t]) * row + i] = static_cast<K>(k_rotated[t * row + i]);
    }
  }
  {
    INFO("into a cache: bit for bit the separate passes, then the conversion");
    REQUIRE(same_bits(q_out, q_sep));
    REQUIRE(same_bits(cache, cache_sep));
  }

  // Against the float64 reference.
  std::vector<double> expected, bound;
  expected_role<T, T>(q_in, s.q_heads, s, q_kind, q_w, eps, layout, positions, expected, bound);
  require_within(q, expected, bound, "q");
  expected_role<T, K>(k_in, s.k_heads, s, k_kind, k_w, eps, layout, positions, expected, bound);
  std::vector<K> cached(k_in.size());
  for (std::size_t t = 0; t < s.tokens; ++t) {
    std::copy_n(cache.begin() + std::ptrdiff_t(std::size_t(slots[t]) * row), row,
                cached.begin() + std::ptrdiff_t(t * row));
  }
  require_within(cached, expected, bound, "cached k");
}

template <class T, class K>
void check_all_norms() {
  const Shape shapes[] = {
      {3, 3, 2, 6, 0, 0}, {5, 4, 2, 64, 0, 0}, {2, 2, 1, 130, 0, 0}, {4, 3, 2, 64, 24, 8}};
  const NormKind kinds[] = {NormKind::rms, NormKind::rms_one_plus, NormKind::rms_projection,
                            NormKind::l2_after};
  for (const Layout layout : {Layout::interleaved, Layout::half_split}) {
    for (const Shape& shape : shapes) {
      for (const NormKind kind : kinds) {
        CAPTURE(layout == Layout::interleaved, shape.d, shape.rotary_dim, int(kind));
        check_norms<T, K>(shape, layout, kind, kind, 1);
      }
      CAPTURE(layout == Layout::interleaved, shape.d);
      check_norms<T, K>(shape, layout, NormKind::rms, NormKind::none, 1);
      check_norms<T, K>(shape, layout, NormKind::none, NormKind::l2_after, 2);
    }
  }
}

}  // namespace

TEMPLATE_TEST_CASE(
    "QK-norm + RoPE in one pass: bit for bit the separate passes, within the bound "
    "of the float64 HuggingFace norms and rotation",
    "[qk_norm]", (std::pair<float, float>), (std::pair<float, Eigen::half>),
    (std::pair<double, double>), (std::pair<Eigen::half, Eigen::half>),
    (std::pair<Eigen::bfloat16, Eigen::bfloat16>), (std::pair<Eigen::bfloat16, Eigen::half>)) {
  check_all_norms<typename TestType::first_type, typename TestType::second_type>();
}

TEST_CASE("QK-norm: Qwen3's form rounds x·r to T before the weight, Gemma's and OLMo's do not",
          "[qk_norm]") {
  // One bfloat16 head of 2 coordinates: x = (1, 1 + 2^-7) and ε → 0, so mean(x²) and r are known.
  // With w = 1 + 2^-7 (exact in bfloat16), Qwen3's T(w·T(x·r)) and OLMo's T(w·(x·r)) differ
  // where T(x·r) loses a bit that w·(x·r) keeps; compute both from the formula here in double,
  // rounded as each class rounds, and require rope's bits for each.
  using B = Eigen::bfloat16;
  const std::vector<B> x = {B(1.0f), B(1.0f + 1.0f / 128)};
  const std::vector<B> w = {B(1.0f + 1.0f / 128), B(1.0f + 1.0f / 128)};
  const double eps = 1e-30;
  const double r = double(
      1.0f / std::sqrt((1.0f + (1.0f + 1.0f / 128) * (1.0f + 1.0f / 128)) / 2.0f + float(eps)));
  for (const NormKind kind : {NormKind::rms, NormKind::rms_projection, NormKind::rms_one_plus}) {
    std::vector<B> y = x;
    rope::normalize_heads(View<B>::contiguous(y.data(), 1, 1, 2), 2,
                          rope::Norm<B>{kind, w.data(), 2, eps});
    for (std::size_t i = 0; i < 2; ++i) {
      const float xr = float(double(float(x[i])) * r);
      const float wi = float(w[i]);
      const B want = kind == NormKind::rms            ? B(wi * float(B(xr)))
                     : kind == NormKind::rms_one_plus ? B(xr * (1.0f + wi))
                                                      : B(wi * xr);
      CAPTURE(int(kind), i, float(y[i]), float(want));
      REQUIRE(std::memcmp(&y[i], &want, sizeof(B)) == 0);
    }
  }
}

TEMPLATE_TEST_CASE("QK-norm: each head's r is the scalar formula's bits at every head count",
                   "[qk_norm]", float, double) {
  // Coordinates that are multiples of 1/8 below 4: their squares and every sum of them are exact
  // in any order, so r = 1 / √(sum / d + ε), each step rounded once in T, is known here; with
  // w = 1 the rms form is y = T(x·r). Head counts 1 to 40 take r a register of heads at a time
  // and through the partial register at the end, on every target.
  using T = TestType;
  constexpr std::size_t d = 16;
  const double eps = 1e-6;
  const std::vector<T> w(d, T(1));
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<int> eighths(-31, 31);
  for (std::size_t heads = 1; heads <= 40; ++heads) {
    std::vector<T> x(heads * d);
    for (T& v : x) v = T(eighths(rng)) / T(8);
    std::vector<T> y = x;
    rope::normalize_heads(View<T>::contiguous(y.data(), 1, heads, d), d,
                          rope::Norm<T>{NormKind::rms, w.data(), d, eps});
    for (std::size_t h = 0; h < heads; ++h) {
      T sum = 0;
      for (std::size_t i = 0; i < d; ++i) sum += x[h * d + i] * x[h * d + i];
      const T r = T(1) / std::sqrt(sum / T(d) + T(eps));
      for (std::size_t i = 0; i < d; ++i) {
        const T want = x[h * d + i] * r;
        CAPTURE(heads, h, i);
        REQUIRE(std::memcmp(&y[h * d + i], &want, sizeof(T)) == 0);
      }
    }
  }
}

TEST_CASE("QK-norm errors: a weight of the length the norm takes", "[errors][E73]") {
  constexpr std::size_t d = 8;
  const rope::Rotary<float, d> rot;
  std::vector<float> q(2 * d, 0.5f), k(d, 0.25f), w(2 * d, 1.0f);
  const std::int64_t position = 4;
  const auto call = [&](const rope_test::NormPair<float>& norms) {
    rot.apply_qk(rope::Queries(View<float>::contiguous(q.data(), 1, 2, d)).normalized(norms.q),
                 rope::Keys(View<float>::contiguous(k.data(), 1, 1, d)).normalized(norms.k),
                 &position);
  };
  rope_test::require_invalid(
      [&] {
        call({{NormKind::rms, w.data(), 6, 1e-6}, {}});
      },
      {"q norm weight has 6 values but the head size is 8"}, "rope: ");
  rope_test::require_invalid(
      [&] {
        call({{}, {NormKind::rms_projection, w.data(), 4, 1e-6}});
      },
      {"k norm weight has 4 values but heads x head size is 1 x 8 = 8"});
  rope_test::require_invalid(
      [&] {
        call({{NormKind::rms_projection, w.data(), 8, 1e-6}, {}});
      },
      {"q norm weight has 8 values but heads x head size is 2 x 8 = 16"});
  rope_test::require_invalid(
      [&] {
        call({{NormKind::rms_one_plus, nullptr, 8, 1e-6}, {}});
      },
      {"q norm weight is a null pointer"});
  rope_test::require_invalid(
      [&] {
        call({{}, {NormKind::l2_after, w.data(), 8, 1e-6}});
      },
      {"k norm l2_after takes no weight, but 8 values were given"});
  rope_test::require_invalid(
      [&] {
        rope::normalize_heads(View<float>::contiguous(q.data(), 1, 2, d), d,
                              rope::Norm<float>{NormKind::rms, w.data(), 16, 1e-6});
      },
      {"x norm weight has 16 values but the head size is 8"});
  REQUIRE(q == std::vector<float>(2 * d, 0.5f));
  REQUIRE(k == std::vector<float>(d, 0.25f));
}

TEST_CASE("QK-norm errors: epsilon finite and > 0", "[errors][E74]") {
  constexpr std::size_t d = 8;
  const rope::Rotary<float, d> rot;
  std::vector<float> q(d, 0.5f), k(d, 0.25f), w(d, 1.0f);
  std::vector<Eigen::half> cache(2 * d, Eigen::half(3));
  const std::int64_t position = 4;
  rope_test::require_invalid(
      [&] {
        rot.apply_qk(
            rope::Queries(View<float>::contiguous(q.data(), 1, 1, d))
                .normalized(rope_test::NormPair<float>{{NormKind::rms, w.data(), d, 0.0}, {}}.q),
            rope::Keys(View<float>::contiguous(k.data(), 1, 1, d))
                .normalized(rope_test::NormPair<float>{{NormKind::rms, w.data(), d, 0.0}, {}}.k),
            &position);
      },
      {"q norm epsilon 0 must be finite and > 0"});
  const std::int64_t slot = 1;
  rope_test::require_invalid(
      [&] {
        const auto q_view = View<float>::contiguous(q.data(), 1, 1, d);
        rot.apply_qk(rope::Queries(q_view, q_view)
                         .normalized(rope_test::NormPair<float>{
                             {}, {NormKind::l2_after, nullptr, 0, std::nan("")}}
                                         .q),
                     rope::Keys(View<const float>::contiguous(k.data(), 1, 1, d),
                                rope::KeyCache<Eigen::half>{
                                    View<Eigen::half>::contiguous(cache.data(), 2, 1, d),
                                    rope::Slots(&slot, 1)})
                         .normalized(rope_test::NormPair<float>{
                             {}, {NormKind::l2_after, nullptr, 0, std::nan("")}}
                                         .k),
                     &position);
      },
      {"k norm epsilon nan must be finite and > 0"});
  rope_test::require_invalid(
      [&] {
        rope::normalize_heads(View<float>::contiguous(q.data(), 1, 1, d), d,
                              rope::Norm<float>{NormKind::l2_after, nullptr, 0, -1e-6});
      },
      {"x norm epsilon -1e-06"});
  REQUIRE(q == std::vector<float>(d, 0.5f));
  REQUIRE(k == std::vector<float>(d, 0.25f));
  REQUIRE(cache == std::vector<Eigen::half>(2 * d, Eigen::half(3)));
}
