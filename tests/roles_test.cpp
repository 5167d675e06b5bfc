// The fused call's roles (rope/roles.hpp) in every combination: the queries' norm (none, before
// RoPE, NormKind::l2_after) with or without a position-dependent scale, in place or out of place;
// the keys' norm (none or before RoPE), in place or into a KV cache of the keys' type or of a
// 16-bit type; through Rotary and through CachedRotary. Each combination is checked bit for bit
// against the calls it is made of, each of which has its own reference test (qk_norm_test,
// query_scale_test, key_cache_test):
//   - the queries' bits do not depend on the keys' role, nor the keys' on the queries';
//   - a norm before RoPE with a scale = normalize_heads, then the call with the scale alone;
//   - NormKind::l2_after with a scale = the call with the norm alone, then scale_queries;
//   - out of place = in place, with the sources untouched;
//   - the rope::unchecked twin = the checked call;
//   - CachedRotary given a Rotary's own table as its cos/sin rows = that Rotary.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <random>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <typeinfo>
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

struct Shape {
  std::size_t d, rotary_dim, offset;
};

constexpr std::size_t kTokens = 6, kQHeads = 4, kKHeads = 2, kRows = 32, kCacheRows = 9;
const std::int64_t kRolePositions[kTokens] = {0, 5, 17, 3, 30, 31};
const std::int64_t kSlots[kTokens] = {8, 0, 3, 7, 1, 5};
const rope::QueryScale kScale = rope::Llama4Scaling{0.5, 4};  // s(p) from 1 to 1 + 0.5·ln 8

// The rotators, called alike: Rotary with its table, CachedRotary with the caller's rows.
template <class T>
struct WithTable {
  const rope::Rotary<T>& rot;
  template <class K>
  void fused(const rope::Queries<T>& q, const rope::Keys<T, K>& k, bool unchecked) const {
    if (unchecked) {
      rot.apply_qk(rope::unchecked, q, k, kRolePositions, rope::TokenRange{0, kTokens});
    } else {
      rot.apply_qk(q, k, kRolePositions);
    }
  }
};

template <class T>
struct WithCosSin {
  const rope::CachedRotary<T>& rot;
  rope::CosSinCache<T> cos_sin;
  template <class K>
  void fused(const rope::Queries<T>& q, const rope::Keys<T, K>& k, bool unchecked) const {
    if (unchecked) {
      rot.apply_qk(rope::unchecked, q, k, kRolePositions, cos_sin, rope::TokenRange{0, kTokens});
    } else {
      rot.apply_qk(q, k, kRolePositions, cos_sin);
    }
  }
};

// A Rotary's table as [row][pair] cos and sin arrays of T (rounded once for a 16-bit T).
template <class T>
struct Tables {
  std::vector<T> cos, sin;
  Tables(const rope::Rotary<T>& rot, std::size_t pairs) {
    for (std::size_t m = 0; m < kRows; ++m) {
      for (std::size_t j = 0; j < pairs; ++j) {
        cos.push_back(static_cast<T>(rot.table().cos(m, j)));
        sin.push_back(static_cast<T>(rot.table().sin(m, j)));
      }
    }
  }
  rope::CosSinCache<T> rows() const { return {cos.data(), sin.data(), kRows}; }
};

// One combination's results: the queries (q_out, or q in place) and the keys (k in place, or the
// cache's rows in slot order), as bytes.
struct Result {
  std::vector<unsigned char> q, k;
};

template <class V>
std::vector<unsigned char> bytes_of(const std::vector<V>& v) {
  const auto* p = reinterpret_cast<const unsigned char*>(v.data());
  return {p, p + v.size() * sizeof(V)};
}

// The bytes of the cache rows kSlots names, token by token (rows of `row` values).
template <class K>
std::vector<unsigned char> slot_rows(const std::vector<K>& cache, std::size_t row) {
  std::vector<K> rows;
  for (std::size_t t = 0; t < kTokens; ++t) {
    const auto first = cache.begin() + std::ptrdiff_t(std::size_t(kSlots[t]) * row);
    rows.insert(rows.end(), first, first + std::ptrdiff_t(row));
  }
  return bytes_of(rows);
}

template <class T>
struct Inputs {
  Shape s;
  std::vector<T> q, k, q_weight, k_weight;

  View<T> q_view(std::vector<T>& v) const {
    return View<T>::contiguous(v.data(), kTokens, kQHeads, s.d);
  }
  View<T> k_view(std::vector<T>& v) const {
    return View<T>::contiguous(v.data(), kTokens, kKHeads, s.d);
  }
  View<const T> q_in() const { return View<const T>::contiguous(q.data(), kTokens, kQHeads, s.d); }
  View<const T> k_in() const { return View<const T>::contiguous(k.data(), kTokens, kKHeads, s.d); }
  rope::Norm<T> norm(NormKind kind, const std::vector<T>& weight) const {
    if (kind == NormKind::none) return {};
    if (kind == NormKind::l2_after) return {kind, nullptr, 0, 1e-6};
    return {kind, weight.data(), weight.size(), 1e-6};
  }
};

// The fused call of one combination, and its checks against the calls it is made of.
template <class T, class K, class Rotator>
Result check_combination(const Rotator& rotator, const Inputs<T>& in, NormKind q_kind,
                         NormKind k_kind, bool scaled, bool q_out_of_place, bool into_cache) {
  const rope::Norm<T> q_norm = in.norm(q_kind, in.q_weight);
  const rope::Norm<T> k_norm = in.norm(k_kind, in.k_weight);
  const std::size_t d = in.s.d;
  const std::vector<T> q_before = in.q, k_before = in.k;
  const K unwritten(3);

  // The call, checked and unchecked.
  Result results[2];
  for (const bool unchecked : {false, true}) {
    std::vector<T> q = in.q, q_out(in.q.size(), T(7)), k = in.k;
    std::vector<K> cache(kCacheRows * kKHeads * d, unwritten);
    rope::Queries<T> queries = q_out_of_place ? rope::Queries<T>(in.q_in(), in.q_view(q_out))
                                              : rope::Queries<T>(in.q_view(q));
    queries.norm = q_norm;
    if (scaled) queries.scale = kScale;
    const rope::KeyCache<K> key_cache{View<K>::contiguous(cache.data(), kCacheRows, kKHeads, d),
                                      rope::Slots(kSlots, kTokens)};
    if constexpr (std::is_same_v<T, K>) {
      if (!into_cache) {
        rotator.fused(queries, rope::Keys<T>(in.k_view(k)).normalized(k_norm), unchecked);
      }
    }
    if (into_cache) {
      rotator.fused(queries, rope::Keys<T, K>(in.k_in(), key_cache).normalized(k_norm), unchecked);
    }
    Result& r = results[unchecked ? 1 : 0];
    if (q_out_of_place) {
      REQUIRE(same_bits(q, q_before));
      r.q = bytes_of(q_out);
    } else {
      r.q = bytes_of(q);
    }
    if (into_cache) {
      REQUIRE(same_bits(k, k_before));
      const std::size_t row = kKHeads * d;
      r.k = slot_rows(cache, row);
      for (const std::size_t free_row : {2U, 4U, 6U}) {  // the rows no slot names
        for (std::size_t i = 0; i < row; ++i) {
          REQUIRE(std::memcmp(&cache[free_row * row + i], &unwritten, sizeof(K)) == 0);
        }
      }
    } else {
      r.k = bytes_of(k);
    }
  }
  {
    INFO("the rope::unchecked twin gives the checked call's bits");
    REQUIRE(results[1].q == results[0].q);
    REQUIRE(results[1].k == results[0].k);
  }

  // The queries as the calls they are made of leave them, with plain keys in place.
  std::vector<T> q_parts = in.q, k_scratch = in.k;
  const bool after = q_kind == NormKind::l2_after;
  if (!after) rope::normalize_heads(in.q_view(q_parts), d, q_norm);
  rope::Queries<T> q_step(in.q_view(q_parts));
  if (after) q_step.norm = q_norm;
  if (scaled && !after) q_step.scale = kScale;
  rotator.fused(q_step, rope::Keys<T>(in.k_view(k_scratch)), false);
  if (scaled && after) rope::scale_queries(in.q_view(q_parts), d, kRolePositions, kScale);
  {
    INFO("the queries: the norm, the rotation and the scale as separate calls");
    REQUIRE(results[0].q == bytes_of(q_parts));
  }

  // The keys as the call with plain queries in place leaves them.
  std::vector<T> q_plain = in.q, k_alone = in.k;
  std::vector<K> cache_alone(kCacheRows * kKHeads * d, unwritten);
  if (into_cache) {
    const rope::KeyCache<K> key_cache{
        View<K>::contiguous(cache_alone.data(), kCacheRows, kKHeads, d),
        rope::Slots(kSlots, kTokens)};
    rotator.fused(rope::Queries<T>(in.q_view(q_plain)),
                  rope::Keys<T, K>(in.k_in(), key_cache).normalized(k_norm), false);
    INFO("the keys into the cache: the same bits with plain queries");
    REQUIRE(results[0].k == slot_rows(cache_alone, kKHeads * d));
  } else {
    rotator.fused(rope::Queries<T>(in.q_view(q_plain)),
                  rope::Keys<T>(in.k_view(k_alone)).normalized(k_norm), false);
    INFO("the keys in place: the same bits with plain queries");
    REQUIRE(results[0].k == bytes_of(k_alone));
  }
  return results[0];
}

template <class T, class K16>
void check_all_combinations() {
  const Shape shapes[] = {{64, 0, 0},
                          {40, 24, 8}};  // whole heads; a slice with coordinates outside
  for (const Shape& s : shapes) {
    for (const Layout layout : {Layout::interleaved, Layout::half_split}) {
      rope::Options options;
      options.head_size = s.d;
      options.layout = layout;
      options.rotary_dim = s.rotary_dim;
      options.rotary_offset = s.offset;
      options.max_positions = kRows;
      const rope::Rotary<T> rot(options);
      const std::size_t rotary = s.rotary_dim == 0 ? s.d : s.rotary_dim;
      const rope::CachedRotary<T> cached({s.d, layout, s.rotary_dim, s.offset});
      const Tables<T> tables(rot, rotary / 2);
      const WithTable<T> with_table{rot};
      const WithCosSin<T> with_cos_sin{cached, tables.rows()};
      std::mt19937_64 rng(s.d + 3 * std::size_t(layout));
      Inputs<T> in{s,
                   rope_test::random_vector<T>(kTokens * kQHeads * s.d, rng),
                   rope_test::random_vector<T>(kTokens * kKHeads * s.d, rng),
                   {},
                   {}};
      for (std::size_t i = 0; i < s.d; ++i) {
        in.q_weight.push_back(static_cast<T>(0.75 + 0.5 * double(i % 7) / 7));
        in.k_weight.push_back(static_cast<T>(1.25 - 0.5 * double(i % 5) / 5));
      }
      for (const NormKind q_kind : {NormKind::none, NormKind::rms, NormKind::l2_after}) {
        for (const NormKind k_kind : {NormKind::none, NormKind::rms}) {
          for (const bool scaled : {false, true}) {
            for (const bool q_out_of_place : {false, true}) {
              for (const int keys : {0, 1, 2}) {  // in place, a cache of T, a cache of K16
                CAPTURE(s.d, s.rotary_dim, rope::to_string(layout), int(q_kind), int(k_kind),
                        scaled, q_out_of_place, keys);
                const auto both = [&](auto key_type) {
                  using K = decltype(key_type);
                  const Result table = check_combination<T, K>(with_table, in, q_kind, k_kind,
                                                               scaled, q_out_of_place, keys != 0);
                  const Result rows = check_combination<T, K>(with_cos_sin, in, q_kind, k_kind,
                                                              scaled, q_out_of_place, keys != 0);
                  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
                    INFO("CachedRotary with the Rotary's table: the Rotary's bits");
                    REQUIRE(rows.q == table.q);
                    REQUIRE(rows.k == table.k);
                  }
                };
                if (keys == 2) {
                  both(K16{});
                } else {
                  both(T{});
                }
              }
            }
          }
        }
      }
    }
  }
}

}  // namespace

TEMPLATE_TEST_CASE("fused call: every combination of the roles, through both rotators", "[roles]",
                   (std::pair<float, Eigen::half>), (std::pair<float, Eigen::bfloat16>),
                   (std::pair<Eigen::half, Eigen::bfloat16>),
                   (std::pair<Eigen::bfloat16, Eigen::half>), (std::pair<double, double>)) {
  check_all_combinations<typename TestType::first_type, typename TestType::second_type>();
}

TEST_CASE("fused call: the roles' one-line forms build the roles they name", "[roles]") {
  std::vector<float> q(8), q_out(8), k(8), weight(8, 1.0f);
  const auto qv = View<float>::contiguous(q.data(), 1, 1, 8);
  const auto kv = View<float>::contiguous(k.data(), 1, 1, 8);
  const rope::Norm<float> norm{NormKind::rms, weight.data(), 8, 1e-5};
  const rope::Queries in_place(qv);
  REQUIRE(in_place.in.data() == q.data());
  REQUIRE(in_place.out.data() == q.data());
  REQUIRE(in_place.norm.kind == NormKind::none);
  REQUIRE_FALSE(in_place.scale.has_value());
  const auto both =
      rope::Queries(View<const float>(qv), View<float>::contiguous(q_out.data(), 1, 1, 8))
          .normalized(norm)
          .scaled(kScale);
  REQUIRE(both.in.data() == q.data());
  REQUIRE(both.out.data() == q_out.data());
  REQUIRE(both.norm.weight == weight.data());
  REQUIRE(both.norm.epsilon == 1e-5);
  REQUIRE(both.scale.has_value());
  const rope::Keys keys = rope::Keys(kv).normalized(norm);
  REQUIRE(keys.out.data() == k.data());
  REQUIRE(keys.norm.kind == NormKind::rms);
  REQUIRE(keys.slots.kind() == rope::Slots::Kind::same_rows);
  std::vector<Eigen::half> rows(16);
  const std::int64_t slot[] = {1};
  const rope::Keys to_cache(
      View<const float>(kv),
      rope::KeyCache<Eigen::half>{View<Eigen::half>::contiguous(rows.data(), 2, 1, 8),
                                  rope::Slots(slot, 1)});
  static_assert(std::is_same_v<decltype(to_cache), const rope::Keys<float, Eigen::half>>);
  REQUIRE(to_cache.out.data() == rows.data());
  REQUIRE(to_cache.slots.kind() == rope::Slots::Kind::int64);
}

// apply_qk of two views takes a path of its own (no roles built, check_qk instead of
// check_fused): the same bits as the roles' call with plain Queries and Keys, and the same
// exception, type and message, for each error that path checks.
template <class T>
void check_views_as_roles(Layout layout) {
  constexpr std::size_t d = 16, tokens = 5, q_heads = 3, k_heads = 2;
  rope::Options options;
  options.layout = layout;
  options.rotary_dim = 12;  // pairs that rotate, and coordinates past them that do not
  options.max_positions = 64;
  const rope::Rotary<T, d> rot(options);
  std::mt19937_64 rng(7);
  const std::vector<T> q0 = rope_test::random_vector<T>(tokens * q_heads * d, rng);
  const std::vector<T> k0 = rope_test::random_vector<T>(tokens * k_heads * d, rng);
  const std::int64_t positions[tokens] = {0, 9, 63, 2, 40};
  std::vector<T> q1 = q0, k1 = k0, q2 = q0, k2 = k0;
  rot.apply_qk(View<T>::contiguous(q1.data(), tokens, q_heads, d),
               View<T>::contiguous(k1.data(), tokens, k_heads, d), positions);
  rot.apply_qk(rope::Queries(View<T>::contiguous(q2.data(), tokens, q_heads, d)),
               rope::Keys(View<T>::contiguous(k2.data(), tokens, k_heads, d)), positions);
  REQUIRE_FALSE(same_bits(q1, q0));
  REQUIRE(same_bits(q1, q2));
  REQUIRE(same_bits(k1, k2));

  // Each error of check_qk, through both forms.
  std::vector<T> x(2 * tokens * q_heads * d);
  const auto q = View<T>::contiguous(x.data(), tokens, q_heads, d);
  const auto k = View<T>::contiguous(x.data() + tokens * q_heads * d, tokens, k_heads, d);
  const std::int64_t far[tokens] = {0, 1, std::int64_t{1} << 53, 3, 4};
  rope::Execution streaming;
  streaming.streaming_stores = true;
  const auto same_error = [&](auto call) {
    std::string as_views, as_roles;
    try {
      call(q, k, std::false_type{});
    } catch (const std::exception& e) {
      as_views = std::string(typeid(e).name()) + ": " + e.what();
    }
    try {
      call(q, k, std::true_type{});
    } catch (const std::exception& e) {
      as_roles = std::string(typeid(e).name()) + ": " + e.what();
    }
    REQUIRE_FALSE(as_views.empty());
    REQUIRE(as_views == as_roles);
  };
  const auto run = [&](View<T> qv, View<T> kv, const rope::Positions& p, const rope::Call& call,
                       auto roles) {
    if constexpr (decltype(roles)::value) {
      rot.apply_qk(rope::Queries(qv), rope::Keys(kv), p, call);
    } else {
      rot.apply_qk(qv, kv, p, call);
    }
  };
  same_error([&](View<T>, View<T> kv, auto roles) {  // a null view
    run(View<T>(nullptr, tokens, q_heads, q_heads * d, d), kv, positions, {}, roles);
  });
  same_error([&](View<T> qv, View<T>, auto roles) {  // k of fewer tokens
    run(qv, View<T>::contiguous(x.data() + tokens * q_heads * d, tokens - 1, k_heads, d), positions,
        {}, roles);
  });
  same_error([&](View<T> qv, View<T>, auto roles) {  // k inside q
    run(qv, View<T>::contiguous(x.data() + d, tokens, k_heads, d), positions, {}, roles);
  });
  same_error([&](View<T> qv, View<T> kv, auto roles) {  // a range past the tokens
    run(qv, kv, positions, {rope::Direction::forward, rope::TokenRange{0, tokens + 1}, {}}, roles);
  });
  same_error([&](View<T> qv, View<T> kv, auto roles) {  // a position past 2^53 − 1
    run(qv, kv, far, {}, roles);
  });
  same_error([&](View<T> qv, View<T> kv, auto roles) {  // positions inside k
    run(qv, kv, reinterpret_cast<const std::int64_t*>(kv.data()), {}, roles);
  });
  same_error([&](View<T> qv, View<T> kv, auto roles) {  // streaming stores in place
    run(qv, kv, positions, {rope::Direction::forward, {}, streaming}, roles);
  });
  same_error([&](View<T> qv, View<T> kv, auto roles) {  // a direction out of range
    run(qv, kv, positions, {static_cast<rope::Direction>(7), {}, {}}, roles);
  });
}

TEMPLATE_TEST_CASE("apply_qk of two views: the plain roles' call, bit for bit and error for error",
                   "[roles]", float, double, Eigen::half, Eigen::bfloat16) {
  check_views_as_roles<TestType>(Layout::half_split);
  check_views_as_roles<TestType>(Layout::interleaved);
}
