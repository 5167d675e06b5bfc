// Values in the same pass (Keys::with_values): the values of the keys' tokens written into a
// value cache at the keys' slots, converted or quantised, never rotated. Each combination is
// checked bit for bit against the separate passes it replaces: the same call without values (the
// queries and keys do not change), and each value head converted by a plain cast (16-bit, float,
// double) or quantised by the references of quantized_reference.hpp, then scattered to its slot.
// Then the errors of the values.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <random>
#include <type_traits>
#include <vector>

#include <Eigen/Core>
#include <catch2/catch.hpp>

#include <rope/rope.hpp>

#include "quantized_reference.hpp"
#include "support.hpp"

namespace {

using rope::CacheScales;
using rope::Layout;
using rope::Slots;
using rope::View;
using rope_test::Format;
using rope_test::same_bytes;
using rope_test::SlotKind;

// One value head of T as a cache of V stores it: a plain cast through the compute type, or the
// reference quantiser on its float values (`scale`: an int8 head's scale).
template <class T, class V>
void reference_head(const T* x, std::size_t d, V* y, float* scale) {
  if constexpr (rope::is_quantized_v<V>) {
    std::vector<float> f(d);
    for (std::size_t i = 0; i < d; ++i) f[i] = static_cast<float>(x[i]);
    Format<V>::quantize(f.data(), d, y, scale);
  } else {
    static_cast<void>(scale);
    for (std::size_t i = 0; i < d; ++i)
      y[i] = static_cast<V>(static_cast<rope::compute_t<T>>(x[i]));
  }
}

// An element of E of `byte` bytes.
template <class E>
E filler(int byte) {
  E e;
  std::memset(static_cast<void*>(&e), byte, sizeof e);
  return e;
}

// Queries in place, keys into a cache of K (or in place: K = T and no slots, `keys_in_place`),
// values into a cache of V, one call; against the same call without values and the value heads
// converted one by one. `heads_apart`: v's heads are a [heads][tokens][d] tensor's (head stride
// tokens·d), not one token's heads side by side.
template <class T, class K, class V>
void check_values(std::size_t tokens, std::size_t d, SlotKind kind, bool keys_in_place,
                  bool heads_apart, std::size_t threads) {
  const std::size_t q_heads = 4, kv_heads = 2, k_per = rope::values_per_element_v<K>,
                    v_per = rope::values_per_element_v<V>;
  rope::Options options;
  options.head_size = d;
  options.layout = Layout::half_split;
  const rope::Rotary<T> rot(options);
  std::mt19937_64 rng(tokens * 11 + d);
  const auto q_in = rope_test::random_vector<T>(tokens * q_heads * d, rng);
  const auto k_in = rope_test::random_vector<T>(tokens * kv_heads * d, rng);
  auto v_in = rope_test::random_vector<T>(tokens * kv_heads * d, rng);
  for (std::size_t i = 0; i < v_in.size(); ++i) {  // some heads large: fp8 saturates
    if ((i / d) % 3 == 2) v_in[i] = T(float(v_in[i]) * 700.0f);
  }
  std::vector<std::int64_t> positions(tokens);
  for (std::size_t t = 0; t < tokens; ++t) positions[t] = std::int64_t(5 + 3 * t);

  const std::size_t rows = kind == SlotKind::same_rows ? tokens : 2 * tokens + 1;
  std::vector<std::int64_t> slot(tokens);
  std::vector<std::int32_t> slot32(tokens);
  const std::uint64_t ring_first = 2 * tokens + 3;
  for (std::size_t t = 0; t < tokens; ++t) {
    slot[t] = kind == SlotKind::same_rows ? std::int64_t(t)
              : kind == SlotKind::ring    ? std::int64_t((ring_first + t) % rows)
              : t % 3 == 1                ? -1
                                          : std::int64_t((2 * t + 1) % rows);
    slot32[t] = std::int32_t(slot[t]);
  }
  Slots slots;
  if (kind == SlotKind::int32) slots = Slots(slot32.data(), tokens);
  if (kind == SlotKind::int64) slots = Slots(slot.data(), tokens);
  if (kind == SlotKind::ring) slots = Slots::ring(ring_first);

  const K k_filler = filler<K>(0x5A);  // bytes where no row is written
  const V v_filler = filler<V>(0xA5);
  const auto v_view = heads_apart ? View<const T>(v_in.data(), tokens, kv_heads, d, tokens * d)
                                  : View<const T>::contiguous(v_in.data(), tokens, kv_heads, d);
  const auto v_head = [&](std::size_t t, std::size_t h) {
    return v_in.data() + (heads_apart ? h * tokens * d + t * d : (t * kv_heads + h) * d);
  };

  // The call with values, and the same call without them.
  std::vector<T> q_fused = q_in, q_alone = q_in, k_fused = k_in, k_alone = k_in;
  std::vector<K> k_cache(rows * kv_heads * d / k_per, k_filler), k_cache_alone = k_cache;
  std::vector<V> v_cache(rows * kv_heads * d / v_per, v_filler);
  std::vector<float> k_scales(rows * kv_heads, -1.0f), k_scales_alone = k_scales;
  std::vector<float> v_scales(rows * kv_heads, -3.0f);
  const rope::ValueCache<V> to{View<V>::contiguous(v_cache.data(), rows, kv_heads, d / v_per),
                               rope_test::scales_of<V>(v_scales)};
  rope::Call call;
  call.execution.threads = threads;
  const auto run = [&](std::vector<T>& q, std::vector<T>& k, std::vector<K>& cache,
                       std::vector<float>& scales, bool values) {
    const auto queries = rope::Queries<T>(View<T>::contiguous(q.data(), tokens, q_heads, d));
    if constexpr (std::is_same_v<K, T>) {
      if (keys_in_place) {
        const rope::Keys<T> keys(View<T>::contiguous(k.data(), tokens, kv_heads, d));
        rot.apply_qk(queries, values ? keys.with_values(v_view, to) : keys, positions.data(), call);
        return;
      }
    }
    const rope::Keys<T, K> keys(View<const T>::contiguous(k.data(), tokens, kv_heads, d),
                                {View<K>::contiguous(cache.data(), rows, kv_heads, d / k_per),
                                 slots, rope_test::scales_of<K>(scales)});
    rot.apply_qk(queries, values ? keys.with_values(v_view, to) : keys, positions.data(), call);
  };
  run(q_fused, k_fused, k_cache, k_scales, true);
  run(q_alone, k_alone, k_cache_alone, k_scales_alone, false);

  // The values, converted head by head and scattered to their rows (row t with keys in place).
  std::vector<V> expected(v_cache.size(), v_filler);
  std::vector<float> expected_scales(v_scales.size(), -3.0f);
  for (std::size_t t = 0; t < tokens; ++t) {
    const std::int64_t r = keys_in_place ? std::int64_t(t) : slot[t];
    if (r < 0) continue;
    for (std::size_t h = 0; h < kv_heads; ++h) {
      const std::size_t row_head = std::size_t(r) * kv_heads + h;
      reference_head(v_head(t, h), d, expected.data() + row_head * d / v_per,
                     &expected_scales[row_head]);
    }
  }
  CAPTURE(tokens, d, int(kind), keys_in_place, heads_apart, threads);
  REQUIRE(same_bytes(q_fused, q_alone));
  REQUIRE(same_bytes(k_fused, k_alone));
  REQUIRE(same_bytes(k_cache, k_cache_alone));
  REQUIRE(same_bytes(k_scales, k_scales_alone));
  REQUIRE(same_bytes(v_cache, expected));
  REQUIRE(same_bytes(v_scales, expected_scales));
}

template <class T, class K, class V>
void check_value_shapes() {
  for (const SlotKind kind :
       {SlotKind::same_rows, SlotKind::int32, SlotKind::int64, SlotKind::ring}) {
    check_values<T, K, V>(5, 64, kind, false, false, 1);
    check_values<T, K, V>(3, 128, kind, false, true, 1);
  }
  check_values<T, K, V>(40, 64, SlotKind::ring, false, true, 2);  // two threads
}

}  // namespace

TEST_CASE("values in the same pass: converted into 16-bit, float and double caches", "[values]") {
  // llama.cpp's -ctk q8_0 -ctv f16; half caches for float; keys and values of 16-bit models.
  check_value_shapes<float, rope::BlockQ8_0, Eigen::half>();
  check_value_shapes<float, Eigen::half, Eigen::half>();
  check_value_shapes<float, float, Eigen::bfloat16>();
  check_value_shapes<Eigen::bfloat16, Eigen::bfloat16, Eigen::bfloat16>();
  check_value_shapes<Eigen::half, Eigen::half, float>();
  check_value_shapes<double, double, double>();
  // Keys in place, values into a cache of the keys' shape (row t).
  check_values<float, float, Eigen::half>(6, 64, SlotKind::same_rows, true, false, 1);
  check_values<Eigen::half, Eigen::half, Eigen::half>(6, 128, SlotKind::same_rows, true, true, 1);
}

TEST_CASE("values in the same pass: quantised as a key cache of their type", "[values]") {
  // vLLM's fp8 caches (keys and values of one type, each with its scale), int8 with a scale per
  // row and head in each cache's own array, ggml's blocks.
  check_value_shapes<float, rope::Float8E4M3, rope::Float8E4M3>();
  check_value_shapes<Eigen::bfloat16, rope::Float8E5M2, rope::Float8E5M2>();
  check_value_shapes<float, std::int8_t, std::int8_t>();
  check_value_shapes<float, rope::BlockQ8_0, rope::BlockQ8_0>();
  check_value_shapes<Eigen::half, rope::BlockQ4_0, rope::BlockQ4_0>();
  check_value_shapes<float, Eigen::half, rope::BlockQ4_0>();
  check_values<float, float, rope::Float8E4M3>(6, 64, SlotKind::same_rows, true, true, 1);
}

TEST_CASE("values in the same pass: through a CachedRotary, as through a Rotary", "[values]") {
  constexpr std::size_t d = 64, tokens = 4, heads = 2, rows = 8, table_rows = 16;
  rope::Options options;
  options.head_size = d;
  options.max_positions = table_rows;
  const rope::Rotary<float> rot(options);
  const rope::CachedRotary<float> cached({d, options.layout});
  std::vector<float> cos, sin;  // the Rotary's table as the caller's rows
  for (std::size_t m = 0; m < table_rows; ++m) {
    for (std::size_t j = 0; j < d / 2; ++j) {
      cos.push_back(rot.table().cos(m, j));
      sin.push_back(rot.table().sin(m, j));
    }
  }
  const rope::CosSinCache<float> cos_sin{cos.data(), sin.data(), table_rows};
  std::mt19937_64 rng(7);
  const auto q = rope_test::random_vector<float>(tokens * heads * d, rng);
  const auto k = rope_test::random_vector<float>(tokens * heads * d, rng);
  const auto v = rope_test::random_vector<float>(tokens * heads * d, rng);
  const std::int64_t positions[tokens] = {3, 9, 4, 15};
  const std::int32_t slots[tokens] = {7, 2, -1, 0};
  struct Out {
    std::vector<float> q = std::vector<float>(tokens * heads * d);
    std::vector<rope::BlockQ8_0> k = std::vector<rope::BlockQ8_0>(rows * heads * d / 32);
    std::vector<rope::BlockQ8_0> v = std::vector<rope::BlockQ8_0>(rows * heads * d / 32);
    rope::Queries<float> queries(const std::vector<float>& in) {
      return {View<const float>::contiguous(in.data(), tokens, heads, d),
              View<float>::contiguous(q.data(), tokens, heads, d)};
    }
  };
  const auto keys = [&](Out& out) {
    return rope::Keys<float, rope::BlockQ8_0>(
               View<const float>::contiguous(k.data(), tokens, heads, d),
               {View<rope::BlockQ8_0>::contiguous(out.k.data(), rows, heads, d / 32),
                {slots, tokens}})
        .with_values(View<const float>::contiguous(v.data(), tokens, heads, d),
                     rope::ValueCache<rope::BlockQ8_0>{
                         View<rope::BlockQ8_0>::contiguous(out.v.data(), rows, heads, d / 32)});
  };
  Out with_table, with_rows;
  rot.apply_qk(with_table.queries(q), keys(with_table), positions);
  cached.apply_qk(with_rows.queries(q), keys(with_rows), positions, cos_sin);
  REQUIRE(same_bytes(with_table.q, with_rows.q));
  REQUIRE(same_bytes(with_table.k, with_rows.k));
  REQUIRE(same_bytes(with_table.v, with_rows.v));
  // Row 7 holds token 0's values: their blocks against the reference.
  for (std::size_t h = 0; h < heads; ++h) {
    for (std::size_t b = 0; b < d / 32; ++b) {
      const rope::BlockQ8_0 expected = rope_test::ggml_q8_0(v.data() + h * d + 32 * b);
      REQUIRE(std::memcmp(&with_table.v[(7 * heads + h) * (d / 32) + b], &expected,
                          sizeof expected) == 0);
    }
  }
}

namespace {

// Values of their own head size (ValueCache::head_size): heads of 96 values beside keys of 64,
// half and q8_0 (3 blocks a head).
template <class V>
void check_value_head_size() {
  constexpr std::size_t d = 64, dv = 96, tokens = 5, q_heads = 4, kv_heads = 2, rows = 9;
  constexpr std::size_t per = rope::values_per_element_v<V>;
  rope::Options options;
  options.head_size = d;
  const rope::Rotary<float> rot(options);
  std::mt19937_64 rng(5);
  std::vector<float> q = rope_test::random_vector<float>(tokens * q_heads * d, rng);
  const auto k = rope_test::random_vector<float>(tokens * kv_heads * d, rng);
  const auto v = rope_test::random_vector<float>(tokens * kv_heads * dv, rng);
  const std::int64_t positions[tokens] = {1, 2, 3, 4, 5};
  const std::int32_t slots[tokens] = {8, 0, -1, 3, 5};
  std::vector<Eigen::half> k_cache(rows * kv_heads * d);
  const V filler_v = filler<V>(0x77);
  std::vector<V> v_cache(rows * kv_heads * dv / per, filler_v);
  std::vector<float> none;
  rot.apply_qk(
      rope::Queries<float>(View<float>::contiguous(q.data(), tokens, q_heads, d)),
      rope::Keys<float, Eigen::half>(
          View<const float>::contiguous(k.data(), tokens, kv_heads, d),
          {View<Eigen::half>::contiguous(k_cache.data(), rows, kv_heads, d), {slots, tokens}})
          .with_values(
              View<const float>::contiguous(v.data(), tokens, kv_heads, dv),
              rope::ValueCache<V>{View<V>::contiguous(v_cache.data(), rows, kv_heads, dv / per),
                                  rope_test::scales_of<V>(none), dv}),
      positions);
  std::vector<V> expected(v_cache.size(), filler_v);
  for (std::size_t t = 0; t < tokens; ++t) {
    if (slots[t] < 0) continue;
    for (std::size_t h = 0; h < kv_heads; ++h) {
      const std::size_t row_head = std::size_t(slots[t]) * kv_heads + h;
      float scale = 0;
      reference_head(v.data() + (t * kv_heads + h) * dv, dv, expected.data() + row_head * dv / per,
                     &scale);
    }
  }
  REQUIRE(same_bytes(v_cache, expected));
}

// DeepSeek-V3's MLA cache row per token: the compressed latent (kv_lora_rank 512) followed by the
// rotated k_pe (qk_rope_head_dim 64, interleaved pairs), one buffer of K; the queries' rotated
// part (128 heads of 64) in the same call. Built as keys into the last 64 values of each row and
// values (of head size 512) into the first 512; against the keys rotated into a cache of their
// own and the latent cast or quantised by the reference, row by row.
template <class K>
void check_mla_rows(const CacheScales& scales) {
  constexpr std::size_t rope_dim = 64, latent = 512, width = latent + rope_dim, q_heads = 128;
  constexpr std::size_t tokens = 3, rows = 6, per = rope::values_per_element_v<K>;
  rope::Options options;
  options.head_size = rope_dim;
  options.layout = Layout::interleaved;
  const rope::Rotary<float> rot(options);
  std::mt19937_64 rng(3);
  const auto q_in = rope_test::random_vector<float>(tokens * q_heads * rope_dim, rng);
  const auto k_pe = rope_test::random_vector<float>(tokens * rope_dim, rng);
  const auto kv_latent = rope_test::random_vector<float>(tokens * latent, rng);
  const std::int64_t positions[tokens] = {7, 8, 9};
  const std::int64_t slots[tokens] = {4, 1, 2};
  const K blank = filler<K>(0x11);
  std::vector<K> cache(rows * width / per, blank);
  std::vector<float> q = q_in, q_alone = q_in;
  // The row: latent at its start, k_pe after it; one head each.
  const View<K> latent_part(cache.data(), rows, 1, width / per, latent / per);
  const View<K> rope_part(cache.data() + latent / per, rows, 1, width / per, rope_dim / per);
  rot.apply_qk(rope::Queries<float>(View<float>::contiguous(q.data(), tokens, q_heads, rope_dim)),
               rope::Keys<float, K>(View<const float>::contiguous(k_pe.data(), tokens, 1, rope_dim),
                                    {rope_part, {slots, tokens}, scales})
                   .with_values(View<const float>::contiguous(kv_latent.data(), tokens, 1, latent),
                                rope::ValueCache<K>{latent_part, scales, latent}),
               positions);
  // The separate passes: q and k_pe rotated, k_pe into a cache of its own; the latent alone.
  std::vector<K> keys(rows * rope_dim / per, blank);
  rot.apply_qk(
      rope::Queries<float>(View<float>::contiguous(q_alone.data(), tokens, q_heads, rope_dim)),
      rope::Keys<float, K>(
          View<const float>::contiguous(k_pe.data(), tokens, 1, rope_dim),
          {View<K>::contiguous(keys.data(), rows, 1, rope_dim / per), {slots, tokens}, scales}),
      positions);
  std::vector<K> expected(cache.size(), blank);
  for (std::size_t t = 0; t < tokens; ++t) {
    K* row = expected.data() + std::size_t(slots[t]) * width / per;
    float unused = 0;
    if constexpr (std::is_same_v<K, rope::Float8E4M3>) {
      for (std::size_t i = 0; i < latent; ++i) {
        row[i].bits = rope_test::reference_fp8(kv_latent[t * latent + i] / float(scales.scale),
                                               rope_test::kE4M3);
      }
    } else {
      reference_head(kv_latent.data() + t * latent, latent, row, &unused);
    }
    std::copy_n(keys.data() + std::size_t(slots[t]) * rope_dim / per, rope_dim / per,
                row + latent / per);
  }
  REQUIRE(same_bytes(q, q_alone));
  REQUIRE(same_bytes(cache, expected));
}

}  // namespace

TEST_CASE("values in the same pass: values of their own head size", "[values]") {
  check_value_head_size<Eigen::half>();
  check_value_head_size<rope::BlockQ8_0>();
}

TEST_CASE("values in the same pass: DeepSeek-V3's MLA rows, latent and rotated k_pe",
          "[values][mla]") {
  check_mla_rows<Eigen::bfloat16>({});
  check_mla_rows<Eigen::half>({});
  check_mla_rows<rope::Float8E4M3>(CacheScales::tensor(0.125));
}

// ---- errors --------------------------------------------------------------------------------

namespace {

// A call of 3 tokens, keys into a float cache of 4 rows at slots {3, 0, 2}, values into a cache
// of V; everything it could write filled, to be found untouched after an error.
template <class V>
struct ValueErrorCall {
  static constexpr std::size_t d = 64, tokens = 3, q_heads = 2, kv_heads = 1, rows = 4;
  static constexpr std::size_t per = rope::values_per_element_v<V>;
  rope::Rotary<float> rot{[] {
    rope::Options o;
    o.head_size = d;
    return o;
  }()};
  std::vector<float> q = std::vector<float>(tokens * q_heads * d, 0.5f);
  std::vector<float> k = std::vector<float>(tokens * kv_heads * d, 0.25f);
  std::vector<float> v = std::vector<float>(tokens * kv_heads * d, 0.75f);
  std::vector<float> k_cache = std::vector<float>(rows * kv_heads * d, 2.0f);
  std::vector<unsigned char> v_cache =
      std::vector<unsigned char>(rows * kv_heads * d / per * sizeof(V), 0x33);
  std::vector<float> scales = std::vector<float>(rows * kv_heads, -2.0f);
  std::vector<std::int64_t> positions = {0, 1, 2};
  std::vector<std::int64_t> slots = {3, 0, 2};

  View<V> v_rows(std::size_t row_count = rows, std::size_t heads = kv_heads) {
    return View<V>::contiguous(reinterpret_cast<V*>(v_cache.data()), row_count, heads, d / per);
  }
  View<const float> values(std::size_t token_count = tokens) {
    return View<const float>::contiguous(v.data(), token_count, kv_heads, d);
  }
  // The call with these values into this cache (head size d, or another Rotary's).
  void call(View<const float> vs, const rope::ValueCache<V>& cache, std::size_t head_size = d) {
    rope::Options o;
    o.head_size = head_size;
    const rope::Rotary<float> other(o);
    const auto queries = View<float>::contiguous(q.data(), tokens, q_heads, head_size);
    const auto keys = rope::Keys<float, float>(
        View<const float>::contiguous(k.data(), tokens, kv_heads, head_size),
        {View<float>::contiguous(k_cache.data(), rows, kv_heads, head_size),
         Slots(slots.data(), tokens)});
    (head_size == d ? rot : other)
        .apply_qk(rope::Queries<float>(queries), keys.with_values(vs, cache), positions.data());
  }
  void call(const CacheScales& s) { call(values(), {v_rows(), s}); }
  void require_untouched() const {
    REQUIRE(q == std::vector<float>(tokens * q_heads * d, 0.5f));
    REQUIRE(k == std::vector<float>(tokens * kv_heads * d, 0.25f));
    REQUIRE(v == std::vector<float>(tokens * kv_heads * d, 0.75f));
    REQUIRE(k_cache == std::vector<float>(rows * kv_heads * d, 2.0f));
    REQUIRE(v_cache == std::vector<unsigned char>(v_cache.size(), 0x33));
    REQUIRE(scales == std::vector<float>(rows * kv_heads, -2.0f));
  }
};

}  // namespace

TEST_CASE("value errors: v of k's shape, its cache of the key cache's", "[errors][E87]") {
  ValueErrorCall<Eigen::half> c;
  rope_test::require_invalid([&] { c.call(c.values(2), {c.v_rows()}); },
                             {"k is 3 tokens x 1 heads but v is 2 tokens x 1 heads"});
  c.require_untouched();
  rope_test::require_invalid([&] { c.call(c.values(), {c.v_rows(3)}); },
                             {"cache is 4 tokens x 1 heads but value cache is 3 tokens x 1 heads"});
  c.require_untouched();
  std::vector<Eigen::half> two_heads(8 * 64);
  rope_test::require_invalid(
      [&] { c.call(c.values(), {View<Eigen::half>::contiguous(two_heads.data(), 4, 2, 64)}); },
      {"but value cache is 4 tokens x 2 heads"});
  c.require_untouched();
}

TEST_CASE(
    "value errors: the value cache shares no byte with another view, nor v with a view "
    "written",
    "[errors][E88]") {
  ValueErrorCall<float> c;
  // The value cache over the key cache, over q; v over the key cache.
  rope_test::require_invalid(
      [&] { c.call(c.values(), {View<float>::contiguous(c.k_cache.data(), 4, 1, 64)}); },
      {"value cache", "overlaps cache", "must be disjoint"});
  rope_test::require_invalid(
      [&] { c.call(c.values(), {View<float>::contiguous(c.q.data(), 4, 1, 64)}); },
      {"value cache", "overlaps q"});
  rope_test::require_invalid(
      [&] { c.call(View<const float>::contiguous(c.k_cache.data(), 3, 1, 64), {c.v_rows()}); },
      {"v head", "overlaps cache"});
  rope_test::require_invalid(
      [&] { c.call(View<const float>::contiguous(c.q.data(), 3, 1, 64), {c.v_rows()}); },
      {"v head", "overlaps q"});
  c.require_untouched();
  // The value cache over v.
  std::vector<float> shared(4 * 64, 0.75f);
  rope_test::require_invalid(
      [&] {
        c.call(View<const float>::contiguous(shared.data(), 3, 1, 64),
               {View<float>::contiguous(shared.data(), 4, 1, 64)});
      },
      {"value cache", "overlaps v"});
  REQUIRE(shared == std::vector<float>(4 * 64, 0.75f));
  c.require_untouched();
  // MLA rows of 512 + 64 whose latent is given 520 wide: it reaches into the rotated part.
  const rope::Rotary<float> rot64([] {
    rope::Options o;
    o.head_size = 64;
    return o;
  }());
  std::vector<float> rows(4 * 576, 1.0f), latent(3 * 520, 0.5f), k_pe(3 * 64, 0.5f);
  const std::int64_t slots[3] = {0, 1, 2};
  rope_test::require_invalid(
      [&] {
        rot64.apply_qk(
            rope::Queries<float>(View<float>::contiguous(c.q.data(), 3, 1, 64)),
            rope::Keys<float, float>(View<const float>::contiguous(k_pe.data(), 3, 1, 64),
                                     {View<float>(rows.data() + 512, 4, 1, 576, 64), {slots, 3}})
                .with_values(
                    View<const float>::contiguous(latent.data(), 3, 1, 520),
                    rope::ValueCache<float>{View<float>(rows.data(), 4, 1, 576, 520), {}, 520}),
            c.positions.data());
      },
      {"value cache head (token 0, head 0) overlaps cache head (token 0, head 0)"});
  REQUIRE(rows == std::vector<float>(4 * 576, 1.0f));
}

TEST_CASE("value errors: the index arrays outside the value cache", "[errors][E78]") {
  ValueErrorCall<float> c;
  std::vector<float> cache(4 * 64 + 8, 1.0f);
  std::memcpy(cache.data() + 4 * 64, c.slots.data(), 3 * sizeof(std::int64_t));
  const auto* inside = reinterpret_cast<const std::int64_t*>(cache.data() + 4 * 64);
  rope_test::require_invalid(
      [&] {
        const auto keys = rope::Keys<float, float>(
            c.values(), {View<float>::contiguous(c.k_cache.data(), 4, 1, 64), Slots(inside, 3)});
        c.rot.apply_qk(
            rope::Queries<float>(View<float>::contiguous(c.q.data(), 3, 2, 64)),
            keys.with_values(View<const float>::contiguous(c.k.data(), 3, 1, 64),
                             rope::ValueCache<float>{View<float>(cache.data(), 4, 1, 66, 64)}),
            c.positions.data());
      },
      {"slot array", "lie inside value cache"});
  c.require_untouched();
}

TEST_CASE("value errors: a value cache of blocks, whole blocks", "[errors][E84]") {
  ValueErrorCall<rope::BlockQ8_0> c;
  std::vector<rope::BlockQ8_0> one(4);
  rope_test::require_invalid(
      [&] {
        c.call(View<const float>::contiguous(c.v.data(), 3, 1, 16),
               {View<rope::BlockQ8_0>::contiguous(one.data(), 4, 1, 1)}, 16);
      },
      {"the value cache's blocks hold 32 values each, but the head size 16 is not a multiple of "
       "32"});
  c.require_untouched();
}

TEST_CASE("value errors: a value cache's scales as a key cache's", "[errors][E82][E83][E85][E86]") {
  ValueErrorCall<rope::Float8E4M3> fp8;
  rope_test::require_invalid([&] { fp8.call(CacheScales::tensor(0.0)); },
                             {"the fp8 value cache's scale 0 must be finite and > 0"});
  rope_test::require_invalid([&] { fp8.call(CacheScales::rows(fp8.scales.data(), 4)); },
                             {"scales per row for a value cache that takes none"});
  fp8.require_untouched();
  ValueErrorCall<Eigen::half> half;
  rope_test::require_invalid([&] { half.call(CacheScales::tensor(2.0)); },
                             {"a scale 2 for a value cache that takes none"});
  half.require_untouched();
  ValueErrorCall<std::int8_t> int8;
  rope_test::require_invalid([&] { int8.call({}); },
                             {"an int8 value cache needs its scales array"});
  rope_test::require_invalid(
      [&] { int8.call(CacheScales::rows(int8.scales.data(), 2)); },
      {"the int8 value cache's scales array holds 2 scales but the value cache's 4 rows x 1 "
       "heads need 4"});
  rope_test::require_invalid([&] { int8.call(CacheScales::rows(int8.v.data(), 4)); },
                             {"the int8 value cache's scales", "share bytes with v"});
  rope_test::require_invalid(
      [&] { int8.call(CacheScales::rows(reinterpret_cast<float*>(int8.v_cache.data()), 4)); },
      {"share bytes with the value cache"});
  int8.require_untouched();
  // int8 keys and values: one array for both caches' scales.
  std::vector<std::int8_t> k_rows(4 * 64);
  rope_test::require_invalid(
      [&] {
        const rope::Keys<float, std::int8_t> keys(
            View<const float>::contiguous(int8.k.data(), 3, 1, 64),
            {View<std::int8_t>::contiguous(k_rows.data(), 4, 1, 64), Slots(int8.slots.data(), 3),
             CacheScales::rows(int8.scales.data(), 4)});
        int8.rot.apply_qk(
            rope::Queries<float>(View<float>::contiguous(int8.q.data(), 3, 2, 64)),
            keys.with_values(int8.values(),
                             rope::ValueCache<std::int8_t>{
                                 int8.v_rows(), CacheScales::rows(int8.scales.data(), 4)}),
            int8.positions.data());
      },
      {"the int8 value cache's scales", "share bytes with the cache's scales"});
  int8.require_untouched();
  REQUIRE(k_rows == std::vector<std::int8_t>(4 * 64, 0));
}
