// apply_qk into a key cache (rope/key_cache.hpp): the queries rotated into q_out and the keys into
// cache rows of another storage type, chosen by slots, in one pass. Each result is checked two
// ways: bit for bit against the separate passes a user would write with this library (rotate the
// keys out of place in the compute type, convert each value to the cache's type, write it to its
// row), and against the float64 reference rotation with the bound of a rotation in the compute
// type rounded once to the cache's type. Then the errors.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <random>
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
using rope::Slots;
using rope::View;
using rope_test::same_bits;

// A cache value no rotation produces here (inputs are in [-1, 1]): rows the call must not touch.
template <class K>
K untouched() {
  return K(7.0f);
}

enum class SlotKind { same_rows, int32, int64, ring };

// One call's shape: tokens of `batches` sequences, q_heads and k_heads heads of d coordinates,
// the slice [offset, offset + rotary_dim) rotated (0: the whole head).
struct Shape {
  std::size_t batches, tokens, q_heads, k_heads, d, rotary_dim, offset;
  std::size_t rows() const { return batches * tokens; }
};

// Runs the fused call and the separate passes, and checks the fused call's queries and cache
// against them (bit for bit) and against the float64 reference (the keys' cache rows).
template <class T, class K>
void check_fused(const Shape& shape, Layout layout, SlotKind kind, bool in_place,
                 const rope::QueryScale* scale, rope::Direction direction, std::size_t threads) {
  using C = rope::compute_t<T>;
  const std::size_t n = shape.rows(), d = shape.d;
  rope::Options options;
  options.head_size = d;
  options.layout = layout;
  options.rotary_dim = shape.rotary_dim;
  options.rotary_offset = shape.offset;
  options.max_positions = 512;  // positions past it take rows computed on the fly
  const rope::Rotary<T> rot(options);
  const rope::Rotary<C> rot_c(options);

  std::mt19937_64 rng(n * 131 + d);
  const auto q_in = rope_test::random_vector<T>(n * shape.q_heads * d, rng);
  const auto k_in = rope_test::random_vector<T>(n * shape.k_heads * d, rng);
  std::vector<std::int64_t> positions(n);
  for (std::size_t t = 0; t < n; ++t) positions[t] = std::int64_t(t * 97 % 700);

  // The cache: twice the rows of the call, or the keys' shape for same_rows. Token t goes to
  // row slot[t]; every third token is skipped (slot −1) for the explicit slots.
  const std::size_t cache_rows = kind == SlotKind::same_rows ? n : 2 * n + 1;
  std::vector<std::int64_t> slot(n);
  std::vector<std::int32_t> slot32(n);
  const std::uint64_t ring_first = 3 * n - 2;  // wraps within the call
  for (std::size_t t = 0; t < n; ++t) {
    switch (kind) {
      case SlotKind::same_rows:
        slot[t] = std::int64_t(t);
        break;
      case SlotKind::ring:
        slot[t] = std::int64_t((ring_first + t) % cache_rows);
        break;
      default:
        slot[t] = t % 3 == 1 ? -1 : std::int64_t((2 * t + n) % cache_rows);
        break;
    }
    slot32[t] = std::int32_t(slot[t]);
  }
  Slots slots;
  if (kind == SlotKind::int32) slots = Slots(slot32.data(), n);
  if (kind == SlotKind::int64) slots = Slots(slot.data(), n);
  if (kind == SlotKind::ring) slots = Slots::ring(ring_first);

  const View<const T> q_view(q_in.data(), shape.batches, shape.tokens, shape.q_heads,
                             shape.tokens * shape.q_heads * d, shape.q_heads * d, d);
  const View<const T> k_view(k_in.data(), shape.batches, shape.tokens, shape.k_heads,
                             shape.tokens * shape.k_heads * d, shape.k_heads * d, d);
  std::vector<T> q_fused = q_in;
  std::vector<T> q_out_buffer(q_in.size(), T(0));
  std::vector<K> cache(cache_rows * shape.k_heads * d, untouched<K>());
  const View<K> cache_view = kind == SlotKind::same_rows
                                 ? View<K>(cache.data(), shape.batches, shape.tokens, shape.k_heads,
                                           shape.tokens * shape.k_heads * d, shape.k_heads * d, d)
                                 : View<K>::contiguous(cache.data(), cache_rows, shape.k_heads, d);
  T* q_dst = in_place ? q_fused.data() : q_out_buffer.data();
  const View<T> q_out(q_dst, shape.batches, shape.tokens, shape.q_heads,
                      shape.tokens * shape.q_heads * d, shape.q_heads * d, d);
  const View<const T> q_src = in_place ? View<const T>(q_out) : q_view;
  rope::Call call{direction};
  call.execution.threads = threads;
  if (scale != nullptr) {
    rot.apply_qk(rope::Queries(q_src, q_out).scaled(*scale),
                 rope::Keys(k_view, rope::KeyCache<K>{cache_view, slots}), positions.data(), call);
  } else {
    rot.apply_qk(rope::Queries(q_src, q_out),
                 rope::Keys(k_view, rope::KeyCache<K>{cache_view, slots}), positions.data(), call);
  }

  // The separate passes: apply_qk on copies (the queries, scaled or not), the keys out of place in
  // the compute type, each value converted to K and written to its row.
  std::vector<T> q_sep = q_in, k_sep = k_in;
  const View<T> q_sep_view(q_sep.data(), shape.batches, shape.tokens, shape.q_heads,
                           shape.tokens * shape.q_heads * d, shape.q_heads * d, d);
  const View<T> k_sep_view(k_sep.data(), shape.batches, shape.tokens, shape.k_heads,
                           shape.tokens * shape.k_heads * d, shape.k_heads * d, d);
  if (scale != nullptr) {
    rot.apply_qk(rope::Queries(q_sep_view).scaled(*scale), rope::Keys(k_sep_view), positions.data(),
                 {direction});
  } else {
    rot.apply_qk(q_sep_view, k_sep_view, positions.data(), {direction});
  }
  const std::vector<T>& q_got = in_place ? q_fused : q_out_buffer;
  INFO("queries: bit for bit apply_qk's");
  REQUIRE(same_bits(q_got, q_sep));

  std::vector<C> k_wide(k_in.begin(), k_in.end()), k_rotated(k_in.size());
  rot_c.apply(rope_test::contiguous<const C>(k_wide.data(), n, shape.k_heads, d),
              rope_test::contiguous(k_rotated.data(), n, shape.k_heads, d), positions.data(),
              {direction});
  std::vector<K> expected_cache(cache.size(), untouched<K>());
  const std::size_t row = shape.k_heads * d;
  for (std::size_t t = 0; t < n; ++t) {
    if (slot[t] < 0) continue;
    for (std::size_t i = 0; i < row; ++i) {
      expected_cache[std::size_t(slot[t]) * row + i] = static_cast<K>(k_rotated[t * row + i]);
    }
  }
  INFO("cache: bit for bit the keys rotated in the compute type, converted, scattered");
  REQUIRE(same_bits(cache, expected_cache));

  // Against the float64 reference: rotation in C, rounded once to K.
  const std::size_t r = shape.rotary_dim == 0 ? d : shape.rotary_dim;
  rope_test::WorstCoordinate worst;
  for (std::size_t t = 0; t < n; ++t) {
    if (slot[t] < 0) continue;
    for (std::size_t h = 0; h < shape.k_heads; ++h) {
      const T* in = k_in.data() + (t * shape.k_heads + h) * d;
      const K* out = cache.data() + std::size_t(slot[t]) * row + h * d;
      std::vector<double> slice(in + shape.offset, in + shape.offset + r);
      slice = rope_test::reference_head(slice, layout, positions[t], direction, 10000.0);
      for (std::size_t i = 0; i < d; ++i) {
        const bool rotated = i >= shape.offset && i < shape.offset + r;
        const double expected = rotated ? slice[i - shape.offset] : double(in[i]);
        const double pair_abs =
            rotated
                ? std::abs(double(in[i])) +
                      std::abs(double(in[rope_test::partner_index(i, d, layout, r, shape.offset)]))
                : 0.0;
        const double bound =
            rope_test::output_bound<K>(pair_abs, double(positions[t]), expected, 10000.0);
        worst.note(std::abs(double(out[i]) - expected), bound, [&](std::ostream& s) {
          s << "token " << t << " head " << h << " coordinate " << i << ": got " << double(out[i])
            << ", reference " << expected << ", bound " << bound;
        });
      }
    }
  }
  INFO("worst cache coordinate against the float64 reference: " << worst.where());
  REQUIRE(worst.ratio() <= 1.0);
}

template <class T, class K>
void check_all_variants() {
  // Head sizes: one pair; a remainder only (6); whole registers (64); registers and a remainder
  // (130); and a partial rotation of 64 with its slice at an offset.
  const Shape shapes[] = {{1, 5, 3, 2, 2, 0, 0},
                          {1, 7, 3, 1, 6, 0, 0},
                          {2, 4, 4, 2, 64, 0, 0},
                          {1, 9, 2, 2, 130, 0, 0},
                          {1, 6, 3, 2, 64, 24, 8}};
  const rope::QueryScale scale = rope::Llama4Scaling{0.1, 2};
  for (const Layout layout : {Layout::interleaved, Layout::half_split}) {
    for (const Shape& shape : shapes) {
      for (const SlotKind kind :
           {SlotKind::same_rows, SlotKind::int32, SlotKind::int64, SlotKind::ring}) {
        for (const bool in_place : {true, false}) {
          CAPTURE(layout == Layout::interleaved, shape.d, shape.rotary_dim, int(kind), in_place);
          check_fused<T, K>(shape, layout, kind, in_place, nullptr, rope::Direction::forward, 1);
        }
      }
      CAPTURE(layout == Layout::interleaved, shape.d);
      check_fused<T, K>(shape, layout, SlotKind::int64, false, &scale, rope::Direction::forward, 1);
      check_fused<T, K>(shape, layout, SlotKind::int32, true, &scale, rope::Direction::inverse, 1);
      check_fused<T, K>(shape, layout, SlotKind::ring, true, nullptr, rope::Direction::forward, 2);
    }
  }
}

}  // namespace

TEMPLATE_TEST_CASE(
    "apply_qk into a key cache: bit for bit the separate passes, within the bound "
    "of the float64 reference",
    "[key_cache]", (std::pair<float, float>), (std::pair<float, Eigen::half>),
    (std::pair<float, Eigen::bfloat16>), (std::pair<Eigen::half, Eigen::half>),
    (std::pair<Eigen::half, float>), (std::pair<Eigen::bfloat16, Eigen::half>),
    (std::pair<Eigen::bfloat16, Eigen::bfloat16>), (std::pair<Eigen::bfloat16, float>),
    (std::pair<double, double>)) {
  check_all_variants<typename TestType::first_type, typename TestType::second_type>();
}

TEST_CASE("apply_qk into a key cache: a fixed head size and the unchecked twin give the same bits",
          "[key_cache]") {
  constexpr std::size_t d = 128, tokens = 16, q_heads = 4, k_heads = 2, rows = 40;
  std::mt19937_64 rng(5);
  const auto q_in = rope_test::random_vector<float>(tokens * q_heads * d, rng);
  const auto k_in = rope_test::random_vector<float>(tokens * k_heads * d, rng);
  std::vector<std::int64_t> positions(tokens), slot(tokens);
  std::iota(positions.begin(), positions.end(), 1000);
  for (std::size_t t = 0; t < tokens; ++t) slot[t] = std::int64_t(rows - 1 - 2 * t);
  for (const Layout layout : {Layout::interleaved, Layout::half_split}) {
    rope::Options options;
    options.layout = layout;
    options.head_size = d;
    const rope::Rotary<float, d> fixed(options);
    const rope::Rotary<float> dynamic(options);
    std::vector<float> q_a = q_in, q_b = q_in, q_c = q_in;
    std::vector<Eigen::half> a(rows * k_heads * d), b = a, c = a;
    const auto k = rope_test::contiguous<const float>(k_in.data(), tokens, k_heads, d);
    const auto call = [&](const auto& rot, std::vector<float>& q, std::vector<Eigen::half>& cache,
                          bool checked) {
      const auto q_view = rope_test::contiguous(q.data(), tokens, q_heads, d);
      const rope::KeyCache<Eigen::half> to{
          View<Eigen::half>::contiguous(cache.data(), rows, k_heads, d),
          Slots(slot.data(), tokens)};
      if (checked) {
        rot.apply_qk(rope::Queries(q_view, q_view), rope::Keys(k, to), positions.data());
      } else {
        rot.apply_qk(rope::unchecked, rope::Queries(q_view, q_view), rope::Keys(k, to),
                     positions.data());
      }
    };
    call(fixed, q_a, a, true);
    call(dynamic, q_b, b, true);
    call(fixed, q_c, c, false);
    REQUIRE(same_bits(q_a, q_b));
    REQUIRE(same_bits(q_a, q_c));
    REQUIRE(same_bits(a, b));
    REQUIRE(same_bits(a, c));
  }
}

namespace {

// A decode step (one token, or a chunk of up to 16) of plain roles goes without the walk
// (Core::apply_qk_direct): its queries and cache rows are the bits of the same call walked (two
// threads), for each kind of slot, both directions, positions in the table and past it, a cache of
// the keys' type and of another, the keys in place, a skipped token, and the unchecked form; and
// every error the checks find in such a call is the same exception, type and message, with nothing
// written.
template <class T, class K>
void check_decode_step(const rope::Rotary<T>& rot) {
  const std::size_t d = rot.head_size(), q_heads = 3, k_heads = 2, rows = 5;
  std::mt19937_64 rng(3 + d + sizeof(T) + 3 * sizeof(K));
  const std::vector<T> q0 = rope_test::random_vector<T>(q_heads * d, rng);
  const std::vector<T> k0 = rope_test::random_vector<T>(k_heads * d, rng);
  const std::vector<K> cache0(rows * k_heads * d, untouched<K>());
  const auto past = static_cast<std::int64_t>(rot.max_positions());
  rope::Execution two_threads;
  two_threads.threads = 2;
  two_threads.min_bytes_per_thread = 1;
  const std::int64_t slot64[] = {3, -1};
  const std::int32_t slot32[] = {rows - 1};
  // The call as given (direct where it may be) and walked; both unchecked too.
  // heads_outer: the cache laid out [heads][rows][d], as the [batch, heads, seq, d] caches of
  // HuggingFace; else [rows][heads][d], its buffer's length given.
  const auto same_step = [&](const Slots& slots, std::int64_t position, rope::Direction direction,
                             bool heads_outer = false) {
    INFO("position " << position << ", slots of kind " << int(slots.kind()) << ", heads outer "
                     << heads_outer);
    std::vector<T> q_direct = q0, q_walk = q0, q_unchecked = q0;
    std::vector<K> c_direct = cache0, c_walk = cache0, c_unchecked = cache0;
    const auto run = [&](std::vector<T>& q, std::vector<K>& cache, const rope::Execution& e,
                         bool checked) {
      const auto qv = View<T>::contiguous(q.data(), 1, q_heads, d);
      const View<K> rows_of = heads_outer ? View<K>(cache.data(), rows, k_heads, d, rows * d)
                                          : View<K>::contiguous(cache, rows, k_heads, d);
      const rope::KeyCache<K> to{rows_of, slots};
      const auto kv = View<const T>::contiguous(k0.data(), 1, k_heads, d);
      if (checked) {
        rot.apply_qk(rope::Queries<T>(qv, qv), rope::Keys<T, K>(kv, to), &position,
                     {direction, {}, e});
      } else {
        rot.apply_qk(rope::unchecked, rope::Queries<T>(qv, qv), rope::Keys<T, K>(kv, to), &position,
                     {direction, {}, e});
      }
    };
    run(q_direct, c_direct, {}, true);
    run(q_walk, c_walk, two_threads, true);
    run(q_unchecked, c_unchecked, {}, false);
    REQUIRE_FALSE(same_bits(q_direct, q0));
    REQUIRE(same_bits(q_direct, q_walk));
    REQUIRE(same_bits(c_direct, c_walk));
    REQUIRE(same_bits(q_unchecked, q_walk));
    REQUIRE(same_bits(c_unchecked, c_walk));
    return c_direct != cache0;
  };
  REQUIRE(same_step(Slots(slot64, 1), 7, rope::Direction::forward));
  REQUIRE(same_step(Slots(slot32, 1), past + 3, rope::Direction::inverse));
  REQUIRE(same_step(Slots::ring(rows * 3 + 2), past - 1, rope::Direction::forward));
  REQUIRE_FALSE(same_step(Slots(slot64 + 1, 1), 2, rope::Direction::forward));  // skipped
  REQUIRE(same_step(Slots(slot32, 1), 9, rope::Direction::forward, true));
  // Three tokens (a short chunk) of a fused row [q q q k k] a token: distinct slots of each
  // kind, against the walk.
  {
    constexpr std::size_t n = 3;
    const std::size_t width = (q_heads + k_heads) * d;
    const std::vector<T> fused0 = rope_test::random_vector<T>(n * width, rng);
    const std::int64_t s64[n] = {4, 0, 2}, chunk_positions[n] = {5, past + 2, 0};
    const std::int32_t s32[n] = {1, 3, 0};
    for (const Slots& slots : {Slots(s64, n), Slots(s32, n), Slots::ring(2 * rows + 4)}) {
      INFO("three tokens, slots of kind " << int(slots.kind()));
      std::vector<T> fused = fused0, fused_walk = fused0;
      std::vector<K> c = cache0, c_walk = cache0;
      const auto run = [&](std::vector<T>& f, std::vector<K>& cache, const rope::Execution& e) {
        const View<T> qv(f.data(), n, q_heads, width, d);
        const View<const T> kv(f.data() + q_heads * d, n, k_heads, width, d);
        const rope::KeyCache<K> to{View<K>::contiguous(cache, rows, k_heads, d), slots};
        rot.apply_qk(rope::Queries<T>(qv, qv), rope::Keys<T, K>(kv, to), chunk_positions,
                     {rope::Direction::forward, {}, e});
      };
      run(fused, c, {});
      run(fused_walk, c_walk, two_threads);
      REQUIRE_FALSE(same_bits(fused, fused0));
      REQUIRE(c != cache0);
      REQUIRE(same_bits(fused, fused_walk));
      REQUIRE(same_bits(c, c_walk));
    }
  }
  // One token more than a direct call takes into a cache (its slots compared pair by pair): the
  // walk's bits all the same.
  {
    const std::size_t n = 17, width = (q_heads + k_heads) * d, cache_rows = n + 3;
    const std::vector<T> fused0 = rope_test::random_vector<T>(n * width, rng);
    std::vector<T> fused = fused0, fused_walk = fused0;
    const std::vector<K> big0(cache_rows * k_heads * d, untouched<K>());
    std::vector<K> c = big0, c_walk = big0;
    const auto run = [&](std::vector<T>& f, std::vector<K>& cache, const rope::Execution& e) {
      const View<T> qv(f.data(), n, q_heads, width, d);
      const View<const T> kv(f.data() + q_heads * d, n, k_heads, width, d);
      const rope::KeyCache<K> to{View<K>::contiguous(cache, cache_rows, k_heads, d),
                                 Slots::ring(5)};
      rot.apply_qk(rope::Queries<T>(qv, qv), rope::Keys<T, K>(kv, to),
                   rope::Positions::consecutive(past - 8), {rope::Direction::forward, {}, e});
    };
    run(fused, c, {});
    run(fused_walk, c_walk, two_threads);
    REQUIRE_FALSE(same_bits(fused, fused0));
    REQUIRE(same_bits(fused, fused_walk));
    REQUIRE(same_bits(c, c_walk));
  }
  if constexpr (std::is_same_v<T, K>) {  // the keys in place, no cache: the call of two views
    std::vector<T> q1 = q0, k1 = k0, q2 = q0, k2 = k0;
    const std::int64_t position = past + 1;
    rot.apply_qk(rope::Queries<T>(View<T>::contiguous(q1.data(), 1, q_heads, d)),
                 rope::Keys<T>(View<T>::contiguous(k1.data(), 1, k_heads, d)), &position);
    rot.apply_qk(View<T>::contiguous(q2.data(), 1, q_heads, d),
                 View<T>::contiguous(k2.data(), 1, k_heads, d), &position, {{}, {}, two_threads});
    REQUIRE_FALSE(same_bits(k1, k0));
    REQUIRE(same_bits(q1, q2));
    REQUIRE(same_bits(k1, k2));
  }

  // Errors: one buffer of T holds q, k and room for a cache of K laid over them; positions and
  // slots of valid values laid inside the views.
  std::vector<T> buffer = rope_test::random_vector<T>(4 * (q_heads + k_heads) * d, rng);
  std::vector<K> cache = cache0;
  T* const q = buffer.data();
  T* const k = buffer.data() + q_heads * d;
  const std::int64_t valid[] = {1, 0};
  std::memcpy(cache.data() + d, valid, sizeof(valid));
  std::memcpy(q + d, valid, sizeof(valid));
  // Three valid positions (or slots) whose first lies just before a cache view and the others in
  // its first row: a chunk's index array that only its later tokens put in the cache.
  const std::int64_t straddling[] = {1, 0, 2};
  std::memcpy(cache.data() + 2 * d, straddling, sizeof(straddling));
  const std::vector<T> buffer0 = buffer;
  const std::vector<K> cache_with_index = cache;
  const auto* in_cache = reinterpret_cast<const std::int64_t*>(cache.data() + d);
  const auto* in_q = reinterpret_cast<const std::int64_t*>(q + d);
  const std::int64_t position = 4, zero = 0, far = rope::kMaxPosition + 1, slot_far = rows;
  const std::int64_t slot_one = 1;
  rope::Execution streaming;
  streaming.streaming_stores = true;
  const auto qv = View<T>::contiguous(q, 1, q_heads, d);
  const auto kv = View<const T>::contiguous(k, 1, k_heads, d);
  const auto cv = View<K>::contiguous(cache.data(), rows, k_heads, d);
  const auto same_error = [&](const View<T>& qs, const View<const T>& ks, const View<K>& cs,
                              const Slots& slots, const rope::Positions& p,
                              const rope::Call& call) {
    std::string direct, walked;
    try {
      rot.apply_qk(rope::Queries<T>(qs, qs), rope::Keys<T, K>(ks, rope::KeyCache<K>{cs, slots}), p,
                   call);
    } catch (const std::exception& e) {
      direct = std::string(typeid(e).name()) + ": " + e.what();
    }
    REQUIRE(same_bits(buffer, buffer0));
    REQUIRE(same_bits(cache, cache_with_index));
    rope::Call walk = call;
    walk.execution.threads = 2;
    walk.execution.min_bytes_per_thread = 1;
    try {
      rot.apply_qk(rope::Queries<T>(qs, qs), rope::Keys<T, K>(ks, rope::KeyCache<K>{cs, slots}), p,
                   walk);
    } catch (const std::exception& e) {
      walked = std::string(typeid(e).name()) + ": " + e.what();
    }
    INFO(direct);
    REQUIRE_FALSE(direct.empty());
    REQUIRE(direct == walked);
    REQUIRE(same_bits(buffer, buffer0));
    REQUIRE(same_bits(cache, cache_with_index));
  };
  const Slots one(&slot_one, 1);
  same_error(qv, kv, cv, Slots(&slot_far, 1), &position, {});  // E70
  same_error(qv, kv, cv, Slots(valid, 2), &position, {});      // E69
  same_error(qv, kv, cv, Slots(static_cast<const std::int64_t*>(nullptr), 1), &position, {});
  same_error(qv, kv, View<K>::contiguous(cache.data(), rows, 1, d), one, &position, {});  // E67
  same_error(qv, kv, View<K>::contiguous(cache.data(), 0, k_heads, d), Slots::ring(0), &position,
             {});  // a ring of no rows
  same_error(qv, kv, View<K>(nullptr, rows, k_heads, k_heads * d, d), one, &position, {});
  same_error(qv, kv, View<K>(cache.data(), rows, k_heads, d / 2, rows * d), one, &position,
             {});  // E23: rows of heads outer that overlap
  same_error(qv, kv, View<K>(cache.data(), rows, k_heads, d, (rows - 1) * d), one, &position,
             {});  // E24: heads that overlap
  same_error(qv, kv,
             View<K>::contiguous(cache.data(), rows, k_heads, d).within(rows * k_heads * d - 1),
             one, &position, {});                                             // E81
  same_error(qv, kv, cv, one, in_cache, {});                                  // E78
  same_error(qv, kv, cv, Slots(in_cache, 1), &position, {});                  // E78
  same_error(qv, kv, cv, Slots(in_q, 1), &position, {});                      // E78
  same_error(qv, kv, cv, one, &far, {});                                      // E31
  same_error(qv, kv, cv, one, &position, {static_cast<rope::Direction>(7)});  // a direction
  same_error(qv, kv, cv, one, &position, {rope::Direction::forward, {}, streaming});
  same_error(qv, kv, cv, one, &position, {rope::Direction::forward, rope::TokenRange{0, 2}, {}});
  same_error(qv, View<const T>::contiguous(q + d, 1, k_heads, d), cv, one, &zero, {});  // E72
  // Three tokens of a fused row: a row taken twice (E71), a ring of fewer rows than tokens (E71),
  // fewer slots than tokens (E69).
  const std::size_t width = (q_heads + k_heads) * d;
  const View<T> q3(q, 3, q_heads, width, d);
  const View<const T> k3(q + q_heads * d, 3, k_heads, width, d);
  const std::int64_t twice[] = {2, 0, 2}, three[] = {0, 1, 2};
  same_error(q3, k3, cv, Slots(twice, 3), three, {});
  same_error(q3, k3, View<K>::contiguous(cache.data(), 2, k_heads, d), Slots::ring(0), three, {});
  same_error(q3, k3, cv, Slots(three, 2), three, {});
  // ... a third slot outside the rows (E70), a third position past the limit (E31), positions
  // and slots that reach into the cache at the second token (E78).
  const std::int64_t third_far[] = {0, 1, rows}, third_past[] = {0, 1, far};
  same_error(q3, k3, cv, Slots(third_far, 3), three, {});
  same_error(q3, k3, cv, Slots(three, 3), third_past, {});
  const auto* before = reinterpret_cast<const std::int64_t*>(cache.data() + 2 * d);
  const auto after = View<K>::contiguous(cache.data() + 2 * d + 8 / sizeof(K), 3, k_heads, d);
  same_error(q3, k3, after, Slots(three, 3), before, {});
  same_error(q3, k3, after, Slots(before, 3), three, {});
  if constexpr (std::is_same_v<T, K>) {  // a cache over q, over k (E72)
    same_error(qv, kv, View<T>::contiguous(q + d, 1, k_heads, d), Slots(&zero, 1), &position, {});
    same_error(qv, kv, View<T>::contiguous(k, 2, k_heads, d), Slots(&zero, 1), &position, {});
    // ... over the third token's q of a chunk, not its first.
    same_error(q3, k3, View<T>::contiguous(q + 2 * width + d, 3, k_heads, d), Slots(three, 3),
               three, {});
  }
}

// The same step with the values of its tokens into a value cache (Keys::with_values): the rows
// t of a buffer [q q q | k k | v v], one token or a chunk of three, the keys and the values into
// caches of K at the same slots. The queries and both caches are the bits of the same call
// walked, for each kind of slot, both directions, a value cache laid out [heads][rows][d], and
// the unchecked form; every error of such a call the walk's, with nothing written.
template <class T, class K>
void check_decode_values(const rope::Rotary<T>& rot) {
  const std::size_t d = rot.head_size(), q_heads = 3, k_heads = 2, rows = 5;
  const std::size_t width = (q_heads + 2 * k_heads) * d;  // a token's q, k and v
  std::mt19937_64 rng(5 + d + sizeof(T) + 3 * sizeof(K));
  const std::vector<T> fused0 = rope_test::random_vector<T>(3 * width, rng);
  const std::vector<K> cache0(rows * k_heads * d, untouched<K>());
  const auto past = static_cast<std::int64_t>(rot.max_positions());
  rope::Execution two_threads;
  two_threads.threads = 2;
  two_threads.min_bytes_per_thread = 1;
  const std::int64_t slot64[] = {3, 0, 4}, positions[] = {7, past + 3, 0};
  const std::int32_t slot32[] = {1, 4, 2};
  struct Views {
    View<T> q;
    View<const T> k, v;
  };
  const auto views_of = [&](T* x, std::size_t n) {
    return Views{View<T>(x, n, q_heads, width, d),
                 View<const T>(x + q_heads * d, n, k_heads, width, d),
                 View<const T>(x + (q_heads + k_heads) * d, n, k_heads, width, d)};
  };
  const auto same_step = [&](std::size_t n, const Slots& slots, rope::Direction direction,
                             bool heads_outer) {
    INFO(n << " tokens, slots of kind " << int(slots.kind()) << ", heads outer " << heads_outer);
    std::vector<T> f_direct = fused0, f_walk = fused0, f_unchecked = fused0;
    std::vector<K> k_direct = cache0, k_walk = cache0, k_unchecked = cache0;
    std::vector<K> v_direct = cache0, v_walk = cache0, v_unchecked = cache0;
    const auto run = [&](std::vector<T>& f, std::vector<K>& kc, std::vector<K>& vc,
                         const rope::Execution& e, bool checked) {
      const Views x = views_of(f.data(), n);
      const View<K> v_rows = heads_outer ? View<K>(vc.data(), rows, k_heads, d, rows * d)
                                         : View<K>::contiguous(vc, rows, k_heads, d);
      const rope::Keys<T, K> keys =
          rope::Keys<T, K>(x.k, rope::KeyCache<K>{View<K>::contiguous(kc, rows, k_heads, d), slots})
              .with_values(x.v, rope::ValueCache<K>{v_rows});
      if (checked) {
        rot.apply_qk(rope::Queries<T>(x.q, x.q), keys, positions, {direction, {}, e});
      } else {
        rot.apply_qk(rope::unchecked, rope::Queries<T>(x.q, x.q), keys, positions,
                     {direction, {}, e});
      }
    };
    run(f_direct, k_direct, v_direct, {}, true);
    run(f_walk, k_walk, v_walk, two_threads, true);
    run(f_unchecked, k_unchecked, v_unchecked, {}, false);
    REQUIRE_FALSE(same_bits(f_direct, fused0));
    REQUIRE(k_direct != cache0);
    REQUIRE(v_direct != cache0);
    REQUIRE(same_bits(f_direct, f_walk));
    REQUIRE(same_bits(k_direct, k_walk));
    REQUIRE(same_bits(v_direct, v_walk));
    REQUIRE(same_bits(f_unchecked, f_walk));
    REQUIRE(same_bits(k_unchecked, k_walk));
    REQUIRE(same_bits(v_unchecked, v_walk));
  };
  // Values of half the keys' head size (a ValueCache's head_size, as for MLA), in heads as far
  // apart as the keys': walked, the same bits, the rest of each head's room untouched.
  {
    std::vector<T> f_direct = fused0, f_walk = fused0;
    std::vector<K> k_direct = cache0, k_walk = cache0, v_direct = cache0, v_walk = cache0;
    const auto run = [&](std::vector<T>& f, std::vector<K>& kc, std::vector<K>& vc,
                         const rope::Execution& e) {
      const Views x = views_of(f.data(), 1);
      const View<const T> v(x.v.data(), 1, k_heads, width, d);
      const rope::KeyCache<K> keys{View<K>::contiguous(kc, rows, k_heads, d), Slots(slot64, 1)};
      const rope::ValueCache<K> values{View<K>::contiguous(vc, rows, k_heads, d), {}, d / 2};
      rot.apply_qk(rope::Queries<T>(x.q, x.q), rope::Keys<T, K>(x.k, keys).with_values(v, values),
                   positions, {rope::Direction::forward, {}, e});
    };
    run(f_direct, k_direct, v_direct, {});
    run(f_walk, k_walk, v_walk, two_threads);
    REQUIRE(v_direct != cache0);
    REQUIRE(same_bits(f_direct, f_walk));
    REQUIRE(same_bits(k_direct, k_walk));
    REQUIRE(same_bits(v_direct, v_walk));
  }
  for (const std::size_t n : {std::size_t{1}, std::size_t{3}}) {
    same_step(n, Slots(slot64, n), rope::Direction::forward, false);
    same_step(n, Slots(slot32, n), rope::Direction::inverse, false);
    same_step(n, Slots::ring(rows * 3 + 2), rope::Direction::forward, false);
    same_step(n, Slots(slot64, n), rope::Direction::forward, true);
  }

  // Errors: the buffer of q, k and v; the caches; int64 values laid inside the value cache.
  std::vector<T> fused = fused0;
  std::vector<K> kc = cache0, vc = cache0;
  const std::int64_t valid[] = {1, 0, 2};
  std::memcpy(vc.data() + d, valid, sizeof(valid));
  const std::vector<K> vc0 = vc;
  const auto* in_values = reinterpret_cast<const std::int64_t*>(vc.data() + d);
  const std::int64_t three[] = {0, 1, 2};
  const auto kv_rows = View<K>::contiguous(kc, rows, k_heads, d);
  const auto v_rows = View<K>::contiguous(vc, rows, k_heads, d);
  const auto same_error = [&](std::size_t n, const View<const T>& v, const View<K>& values,
                              const Slots& slots, const rope::Positions& p,
                              const View<K>* keys = nullptr) {
    const View<K> key_rows = keys != nullptr ? *keys : kv_rows;
    const Views x = views_of(fused.data(), n);
    std::string direct, walked;
    const auto call = [&](const rope::Execution& e) {
      try {
        rot.apply_qk(rope::Queries<T>(x.q, x.q),
                     rope::Keys<T, K>(x.k, rope::KeyCache<K>{key_rows, slots})
                         .with_values(v, rope::ValueCache<K>{values}),
                     p, {rope::Direction::forward, {}, e});
      } catch (const std::exception& error) {
        return std::string(typeid(error).name()) + ": " + error.what();
      }
      return std::string();
    };
    direct = call({});
    REQUIRE(same_bits(fused, fused0));
    REQUIRE(same_bits(kc, cache0));
    REQUIRE(same_bits(vc, vc0));
    walked = call(two_threads);
    INFO(direct);
    REQUIRE_FALSE(direct.empty());
    REQUIRE(direct == walked);
    REQUIRE(same_bits(fused, fused0));
    REQUIRE(same_bits(kc, cache0));
    REQUIRE(same_bits(vc, vc0));
  };
  for (const std::size_t n : {std::size_t{1}, std::size_t{3}}) {
    INFO(n << " tokens");
    const Views x = views_of(fused.data(), n);
    const Slots slots(three, n);
    same_error(n, x.v, v_rows, slots, in_values);            // positions in the value cache
    same_error(n, x.v, v_rows, Slots(in_values, n), three);  // slots in the value cache
    same_error(n, x.v, View<K>::contiguous(vc.data(), rows - 1, k_heads, d), slots, three);
    same_error(n, View<const T>(x.v.data(), n, k_heads - 1, width, d), v_rows, slots, three);
    same_error(n, View<const T>(fused.data() + d, n, k_heads, width, d), v_rows, slots,
               three);  // v over q's second and third heads
    same_error(n, x.v, View<K>(vc.data(), rows, k_heads, d / 2, rows * d), slots,
               three);  // E23: rows of heads outer that overlap
    same_error(n, x.v, View<K>(vc.data(), rows, k_heads, d, (rows - 1) * d), slots,
               three);  // E24: heads that overlap
    same_error(n, x.v, v_rows.within(rows * k_heads * d - 1), slots, three);  // E81
    same_error(n, x.v, View<K>(nullptr, rows, k_heads, k_heads * d, d), slots, three);
    same_error(n, x.v, kv_rows, slots, three);  // the value cache is the key cache
    // v's own view: heads that overlap (E24), past its buffer (E81), a null pointer, and (a
    // chunk) fewer tokens than k.
    same_error(n, View<const T>(x.v.data(), n, k_heads, width, d / 2), v_rows, slots, three);
    same_error(n, x.v.within((n - 1) * width + k_heads * d - 1), v_rows, slots, three);
    same_error(n, View<const T>(nullptr, n, k_heads, width, d), v_rows, slots, three);
    if (n > 1)
      same_error(n, View<const T>(x.v.data(), n - 1, k_heads, width, d), v_rows, slots, three);
    same_error(n, x.v, View<K>::contiguous(kc.data() + d, rows - 1, k_heads, d), slots, three);
    if constexpr (std::is_same_v<T, K>) {
      // The value cache over q, over k, over v; v over the key cache.
      same_error(n, x.v, View<K>::contiguous(fused.data() + d, rows, k_heads, d), slots, three);
      same_error(n, x.v, View<K>::contiguous(fused.data() + 4 * d, 1, k_heads, d), Slots(three, n),
                 three);
      same_error(n, x.v, View<K>(fused.data() + (q_heads + k_heads) * d, rows, k_heads, width, d),
                 slots, three);
      same_error(n, View<const T>::contiguous(kc.data() + d, n, k_heads, d), v_rows, slots, three);
    }
  }
  if constexpr (std::is_same_v<T, K>) {
    // One token, caches of one row: the value cache over q's second and third heads only, over k
    // only.
    const auto one_row = View<K>::contiguous(kc.data(), 1, k_heads, d);
    const Views x = views_of(fused.data(), 1);
    same_error(1, x.v, View<K>::contiguous(fused.data() + d, 1, k_heads, d), Slots(three, 1), three,
               &one_row);
    same_error(1, x.v, View<K>::contiguous(fused.data() + q_heads * d, 1, k_heads, d),
               Slots(three, 1), three, &one_row);
  }
}

}  // namespace

TEMPLATE_TEST_CASE(
    "apply_qk into a key cache, and values into theirs: a decode step without the walk, bit for "
    "bit and error for error",
    "[key_cache][values][errors]", (std::pair<float, float>), (std::pair<float, Eigen::half>),
    (std::pair<Eigen::half, float>), (std::pair<Eigen::bfloat16, Eigen::half>),
    (std::pair<double, double>)) {
  using T = typename TestType::first_type;
  using K = typename TestType::second_type;
  for (const Layout layout : {Layout::interleaved, Layout::half_split}) {
    INFO(rope::to_string(layout));
    rope::Options whole;
    whole.layout = layout;
    whole.head_size = 128;
    check_decode_step<T, K>(rope::Rotary<T>(whole));
    check_decode_values<T, K>(rope::Rotary<T>(whole));
    rope::Options partial;  // pairs that rotate, and coordinates past them that do not
    partial.layout = layout;
    partial.head_size = 16;
    partial.rotary_dim = 12;
    partial.max_positions = 64;
    check_decode_step<T, K>(rope::Rotary<T>(partial));
    check_decode_values<T, K>(rope::Rotary<T>(partial));
  }
}

// ---- errors ---------------------------------------------------------------------------------

namespace {

// A call of 3 tokens, 2 query heads and 1 key head of 8 floats into a half cache of 4 rows; each
// test case breaks one requirement and checks that nothing was written.
struct ErrorCall {
  static constexpr std::size_t d = 8, tokens = 3, q_heads = 2, k_heads = 1, rows = 4;
  rope::Rotary<float, d> rot;
  std::vector<float> q = std::vector<float>(tokens * q_heads * d, 0.5f);
  std::vector<float> k = std::vector<float>(tokens * k_heads * d, 0.25f);
  std::vector<Eigen::half> cache = std::vector<Eigen::half>(rows * k_heads * d, Eigen::half(3));
  std::vector<std::int64_t> positions = {0, 1, 2};

  View<float> q_view() { return View<float>::contiguous(q.data(), tokens, q_heads, d); }
  View<const float> k_view() { return View<const float>::contiguous(k.data(), tokens, k_heads, d); }
  View<Eigen::half> cache_view() {
    return View<Eigen::half>::contiguous(cache.data(), rows, k_heads, d);
  }
  void call(const rope::KeyCache<Eigen::half>& to) {
    rot.apply_qk(rope::Queries(q_view(), q_view()), rope::Keys(k_view(), to), positions.data());
  }
  void require_untouched() const {
    REQUIRE(q == std::vector<float>(tokens * q_heads * d, 0.5f));
    REQUIRE(k == std::vector<float>(tokens * k_heads * d, 0.25f));
    REQUIRE(cache == std::vector<Eigen::half>(rows * k_heads * d, Eigen::half(3)));
  }
};

}  // namespace

TEST_CASE("key cache errors: the cache's head count is the keys'", "[errors][E67]") {
  ErrorCall c;
  const std::int64_t slots[] = {0, 1, 2};
  rope_test::require_invalid(
      [&] {
        c.call({View<Eigen::half>::contiguous(c.cache.data(), 2, 2, 8), Slots(slots, 3)});
      },
      {"the cache has 2 heads but k has 1"}, "rope: ");
  c.require_untouched();
}

TEST_CASE("key cache errors: without slots the cache has the keys' shape", "[errors][E68]") {
  ErrorCall c;
  rope_test::require_invalid([&] { c.call({c.cache_view()}); },
                             {"k is 3 tokens x 1 heads but cache is 4 tokens x 1 heads"});
  c.require_untouched();
}

TEST_CASE("key cache errors: one slot per token of k", "[errors][E69]") {
  ErrorCall c;
  const std::int32_t slots[] = {0, 1};
  rope_test::require_invalid(
      [&] {
        c.call({c.cache_view(), Slots(slots, 2)});
      },
      {"2 slots given for the 3 tokens of k"});
  c.require_untouched();
}

TEST_CASE("key cache errors: a slot inside the cache's rows", "[errors][E70]") {
  ErrorCall c;
  const std::int64_t past[] = {0, 4, 1};
  rope_test::require_out_of_range(
      [&] {
        c.call({c.cache_view(), Slots(past, 3)});
      },
      {"slot 4 of token 1 is outside the cache's rows [0, 4)"});
  const std::int32_t huge[] = {-1, -5, 2147483647};
  rope_test::require_out_of_range(
      [&] {
        c.call({c.cache_view(), Slots(huge, 3)});
      },
      {"slot 2147483647 of token 2", "[0, 4)"});
  c.require_untouched();
}

TEST_CASE("key cache errors: no cache row taken by two tokens", "[errors][E71]") {
  ErrorCall c;
  const std::int64_t twice[] = {3, -1, 3};
  rope_test::require_invalid(
      [&] {
        c.call({c.cache_view(), Slots(twice, 3)});
      },
      {"tokens 0 and 2 both have slot 3"});
  rope_test::require_invalid(
      [&] {
        c.call({View<Eigen::half>::contiguous(c.cache.data(), 2, 1, 8), Slots::ring(7)});
      },
      {"a ring of 2 cache rows cannot take the 3 tokens of the call"});
  c.require_untouched();
}

TEST_CASE("key cache errors: the cache shares no byte with q, q_out or k", "[errors][E72]") {
  // Keys and cache of the same type, so that one buffer can hold both.
  constexpr std::size_t d = 8;
  const rope::Rotary<float, d> rot;
  std::vector<float> buffer(64, 0.5f);
  const std::vector<float> before = buffer;
  const std::int64_t positions[] = {0, 1};
  const auto q = View<float>::contiguous(buffer.data(), 2, 1, d);
  const auto k = View<const float>::contiguous(buffer.data() + 16, 2, 1, d);
  const auto cache_on_k = View<float>::contiguous(buffer.data() + 24, 2, 1, d);
  rope_test::require_invalid(
      [&] {
        rot.apply_qk(rope::Queries(q, q), rope::Keys(k, rope::KeyCache<float>{cache_on_k}),
                     positions);
      },
      {"cache head (token 0, head 0) overlaps k head (token 1, head 0)", "must be disjoint"});
  const auto cache_on_q = View<float>::contiguous(buffer.data() + 8, 2, 1, d);
  rope_test::require_invalid(
      [&] {
        rot.apply_qk(rope::Queries(q, q), rope::Keys(k, rope::KeyCache<float>{cache_on_q}),
                     positions);
      },
      {"cache head (token 0, head 0) overlaps q head (token 1, head 0)"});
  const auto q_out = View<float>::contiguous(buffer.data() + 40, 2, 1, d);
  const auto cache_on_q_out = View<float>::contiguous(buffer.data() + 48, 2, 1, d);
  rope_test::require_invalid(
      [&] {
        rot.apply_qk(rope::Queries(q, q_out), rope::Keys(k, rope::KeyCache<float>{cache_on_q_out}),
                     positions);
      },
      {"cache head (token 0, head 0) overlaps q_out head (token 1, head 0)"});
  REQUIRE(buffer == before);
  // A half cache laid on float keys' own bytes, token for token (the same byte strides): not
  // the keys in place, since each half head overwrites float coordinates not yet read.
  const View<Eigen::half> half_on_k(reinterpret_cast<Eigen::half*>(buffer.data() + 16), 2, 1, 2 * d,
                                    d);
  rope_test::require_invalid(
      [&] {
        rot.apply_qk(rope::Queries(q, q), rope::Keys(k, rope::KeyCache<Eigen::half>{half_on_k}),
                     positions);
      },
      {"cache head (token 0, head 0) overlaps k head (token 0, head 0)"});
  REQUIRE(buffer == before);
}

TEST_CASE("key cache errors: the views and positions are checked as apply_qk's",
          "[errors][E21][E25][E27][E28][E30]") {
  ErrorCall c;
  const std::int64_t slots[] = {0, 1, 2};
  const rope::KeyCache<Eigen::half> to{c.cache_view(), Slots(slots, 3)};
  rope_test::require_invalid(
      [&] {
        c.rot.apply_qk(rope::Queries(c.q_view(), c.q_view()),
                       rope::Keys(c.k_view(),
                                  rope::KeyCache<Eigen::half>{
                                      View<Eigen::half>(nullptr, 4, 1, 8, 8), Slots(slots, 3)}),
                       c.positions.data());
      },
      {"cache is a null pointer"});
  std::vector<float> other(2 * 2 * 8);
  rope_test::require_invalid(
      [&] {
        c.rot.apply_qk(rope::Queries(c.q_view(), View<float>::contiguous(other.data(), 2, 2, 8)),
                       rope::Keys(c.k_view(), to), c.positions.data());
      },
      {"q is 3 tokens x 2 heads but q_out is 2 tokens x 2 heads"});
  rope_test::require_invalid(
      [&] {
        c.rot.apply_qk(rope::Queries(c.q_view(), c.q_view()),
                       rope::Keys(View<const float>::contiguous(c.k.data(), 2, 1, 8), to),
                       c.positions.data());
      },
      {"q has 3 tokens but k has 2"});
  rope_test::require_invalid(
      [&] {
        c.rot.apply_qk(rope::Queries(View<const float>::contiguous(c.k.data(), 3, 1, 8),
                                     View<float>::contiguous(c.q.data(), 3, 1, 8)),
                       rope::Keys(c.k_view(), to), c.positions.data());
      },
      {"q head (token 0, head 0) overlaps k head (token 0, head 0)"});
  rope_test::require_invalid(
      [&] {
        c.rot.apply_qk(rope::Queries(View<const float>::contiguous(c.q.data(), 3, 1, 8),
                                     View<float>::contiguous(c.k.data(), 3, 1, 8)),
                       rope::Keys(c.k_view(), to), c.positions.data());
      },
      {"q_out head (token 0, head 0) overlaps k head (token 0, head 0)"});
  const std::int64_t negative[] = {0, -1, 2};
  rope_test::require_out_of_range(
      [&] {
        c.rot.apply_qk(rope::Queries(c.q_view(), c.q_view()), rope::Keys(c.k_view(), to), negative);
      },
      {"position -1 of token 1"});
  c.require_untouched();
}
