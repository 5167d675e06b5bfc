// Paged caches as engines keep them: slots given as a block table (Slots::paged) and cache rows
// whose coordinates lie at a stride (Coordinates: vLLM CPU's key and value pages). Each is checked
// bit for bit against the separate passes: the same call into flat slots of a contiguous cache
// (key_cache_test, quantized_cache_test and value_cache_test check that against rotating,
// quantising and scattering), then, for strided coordinates, each head copied to its place by
// vLLM CPU's indexing, written out here: key_cache[page][head][i / x][slot][i % x] and
// value_cache[page][head][i][slot]. Then the errors of both.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <optional>
#include <random>
#include <type_traits>
#include <vector>

#include <Eigen/Core>
#include <catch2/catch.hpp>

#include <rope/rope.hpp>

#include "quantized_reference.hpp"
#include "support.hpp"

namespace {

using rope::Coordinates;
using rope::Layout;
using rope::PageTable;
using rope::Slots;
using rope::View;

// A block table of `sequences` rows of `stride` pages, the pages 0 .. pages − 1 shuffled, and
// the flat slot of each token that vLLM computes from it: page · block_size + index mod
// block_size, index = first[b] + t for token t of sequence b (−1 where the page is negative).
struct Paging {
  std::size_t sequences, tokens, stride, block_size;
  std::vector<std::int32_t> table, first;

  Paging(std::size_t sequences_, std::size_t tokens_, std::size_t block_size_, std::mt19937_64& rng)
      : sequences(sequences_), tokens(tokens_), block_size(block_size_) {
    stride = (tokens + block_size - 1) / block_size + 2;
    table.resize(sequences * stride);
    std::iota(table.begin(), table.end(), 0);
    std::shuffle(table.begin(), table.end(), rng);
    for (std::size_t b = 0; b < sequences; ++b) {
      first.push_back(static_cast<std::int32_t>((b * 5 + 3) % block_size + block_size * (b % 2)));
    }
  }
  std::size_t pages() const { return sequences * stride; }
  PageTable page_table() const { return {table.data(), sequences, stride, block_size}; }
  std::int64_t slot(std::size_t b, std::size_t index) const {
    const std::int32_t page = table[b * stride + index / block_size];
    return page < 0
               ? -1
               : std::int64_t{page} * std::int64_t(block_size) + std::int64_t(index % block_size);
  }
  std::vector<std::int64_t> slots() const {
    std::vector<std::int64_t> s;
    for (std::size_t b = 0; b < sequences; ++b) {
      for (std::size_t t = 0; t < tokens; ++t) s.push_back(slot(b, std::size_t(first[b]) + t));
    }
    return s;
  }
};

}  // namespace

TEST_CASE("paged slots: a block table's rows are the flat slots vLLM computes from it", "[paged]") {
  const std::size_t d = 64, q_heads = 4, kv_heads = 2, sequences = 3, tokens = 7, block_size = 4;
  std::mt19937_64 rng(7);
  Paging paging(sequences, tokens, block_size, rng);
  paging.table[1 * paging.stride + 1] = -1;  // a page sequence 1 does not have: its tokens skipped
  const std::vector<std::int64_t> flat = paging.slots();
  const std::size_t rows = paging.pages() * block_size, n = sequences * tokens;
  rope::Options options;
  options.head_size = d;
  const rope::Rotary<float> rot(options);
  const auto q_in = rope_test::random_vector<float>(n * q_heads * d, rng);
  const auto k = rope_test::random_vector<float>(n * kv_heads * d, rng);
  const auto v = rope_test::random_vector<float>(n * kv_heads * d, rng);
  std::vector<std::int64_t> positions(n);
  for (std::size_t i = 0; i < n; ++i)
    positions[i] = std::int64_t{paging.first[i / tokens]} + std::int64_t(i % tokens);

  // The call with `slots`, on keys of `batches` sequences (the n tokens either way).
  const auto run = [&](const Slots& slots, std::size_t batches) {
    struct Out {
      std::vector<float> q;
      std::vector<Eigen::half> k_cache, v_cache;
    } out{q_in, std::vector<Eigen::half>(rows * kv_heads * d, Eigen::half(-7.0f)),
          std::vector<Eigen::half>(rows * kv_heads * d, Eigen::half(-9.0f))};
    const std::size_t per = n / batches;
    const auto q = View<float>::batch_seq_heads(out.q.data(), batches, per, q_heads, d);
    const auto kv = View<const float>::batch_seq_heads(k.data(), batches, per, kv_heads, d);
    const auto vv = View<const float>::batch_seq_heads(v.data(), batches, per, kv_heads, d);
    const rope::KeyCache<Eigen::half> keys{
        View<Eigen::half>::contiguous(out.k_cache.data(), rows, kv_heads, d), slots};
    const rope::ValueCache<Eigen::half> values{
        View<Eigen::half>::contiguous(out.v_cache.data(), rows, kv_heads, d)};
    rot.apply_qk(rope::Queries(q), rope::Keys(kv, keys).with_values(vv, values), positions.data());
    return out;
  };
  const auto expected = run(Slots(flat.data(), flat.size()), sequences);
  REQUIRE(std::count(flat.begin(), flat.end(), -1) == 4);  // indices 4..7 of sequence 1: skipped

  SECTION("a first index per sequence") {
    const auto got = run(Slots::paged(paging.page_table(), paging.first.data()), sequences);
    REQUIRE(rope_test::same_bits(got.q, expected.q));
    REQUIRE(rope_test::same_bits(got.k_cache, expected.k_cache));
    REQUIRE(rope_test::same_bits(got.v_cache, expected.v_cache));
  }
  SECTION("a sequence and an index per token, the sequences in one view") {
    std::vector<std::int32_t> sequence(n), index(n);
    for (std::size_t i = 0; i < n; ++i) {
      sequence[i] = std::int32_t(i / tokens);
      index[i] = paging.first[i / tokens] + std::int32_t(i % tokens);
    }
    const auto got = run(Slots::paged(paging.page_table(), sequence.data(), index.data(), n), 1);
    REQUIRE(rope_test::same_bits(got.q, expected.q));
    REQUIRE(rope_test::same_bits(got.k_cache, expected.k_cache));
    REQUIRE(rope_test::same_bits(got.v_cache, expected.v_cache));
  }
}

namespace {

// Elements of 16 bytes: vLLM's x, the run of a key page.
template <class K>
constexpr std::size_t run_of() {
  return 16 / sizeof(K);
}

// Keys of T into a paged cache of K, values into one of V, both in vLLM CPU's page layouts
// ([pages][heads][d / x][block_size][x] and [pages][heads][d][block_size]), against the same call
// into contiguous [rows][heads][d] caches at the same slots, each written head then copied to its
// place. `paged`: the slots as a block table (per sequence), else flat int64 slots. `norm`: the
// keys normalised (the walk's normalised path into a strided cache).
template <class T, class K, class V>
void check_pages(std::size_t d, bool paged, bool norm, std::size_t threads) {
  const std::size_t q_heads = 4, kv_heads = 2, sequences = 2, tokens = 9, block_size = 8;
  const std::size_t x = run_of<K>();
  std::mt19937_64 rng(d * 31 + threads + (paged ? 1 : 0));
  const Paging paging(sequences, tokens, block_size, rng);
  const std::vector<std::int64_t> flat = paging.slots();
  const std::size_t pages = paging.pages(), rows = pages * block_size, n = sequences * tokens;
  rope::Options options;
  options.head_size = d;
  options.layout = Layout::interleaved;
  const rope::Rotary<T> rot(options);
  const auto q_in = rope_test::random_vector<T>(n * q_heads * d, rng);
  const auto k = rope_test::random_vector<T>(n * kv_heads * d, rng);
  const auto v = rope_test::random_vector<T>(n * kv_heads * d, rng);
  const auto weight = rope_test::random_vector<T>(d, rng);
  rope::Norm<T> k_norm;
  if (norm) k_norm = {rope::NormKind::rms, weight.data(), d, 1e-6};
  std::vector<std::int64_t> positions(n);
  for (std::size_t i = 0; i < n; ++i)
    positions[i] = std::int64_t{paging.first[i / tokens]} + std::int64_t(i % tokens);
  rope::Call call;
  call.execution.threads = threads;
  call.execution.min_bytes_per_thread = 1;
  const auto filler = [](auto& buffer, int byte) {
    std::memset(static_cast<void*>(buffer.data()), byte, buffer.size() * sizeof(buffer[0]));
  };
  std::vector<K> k_pages(rows * kv_heads * d), k_rows(rows * kv_heads * d);
  std::vector<V> v_pages(rows * kv_heads * d), v_rows(rows * kv_heads * d);
  filler(k_pages, 0x5a), filler(k_rows, 0x5a), filler(v_pages, 0x3c), filler(v_rows, 0x3c);
  std::vector<float> k_scales_pages(rows * kv_heads, -1.0f), k_scales_rows = k_scales_pages;
  std::vector<float> v_scales_pages(rows * kv_heads, -2.0f), v_scales_rows = v_scales_pages;
  std::vector<T> q_pages = q_in, q_rows = q_in;
  const auto k_view = View<const T>::batch_seq_heads(k.data(), sequences, tokens, kv_heads, d);
  const auto v_view = View<const T>::batch_seq_heads(v.data(), sequences, tokens, kv_heads, d);
  const Slots flat_slots(flat.data(), flat.size());
  {  // into the pages: rows as pages × block_size, coordinates at their strides
    const std::size_t page = kv_heads * d * block_size;
    const View<K> k_cache(k_pages.data(), pages, block_size, kv_heads, page, x, d * block_size);
    const View<V> v_cache(v_pages.data(), pages, block_size, kv_heads, page, 1, d * block_size);
    const Slots slots = paged ? Slots::paged(paging.page_table(), paging.first.data()) : flat_slots;
    const rope::KeyCache<K> keys{k_cache, slots, rope_test::scales_of<K>(k_scales_pages),
                                 Coordinates::runs(x, x * block_size)};
    const rope::ValueCache<V> values{v_cache, rope_test::scales_of<V>(v_scales_pages), 0,
                                     Coordinates::strided(block_size)};
    rot.apply_qk(
        rope::Queries<T>(View<T>::batch_seq_heads(q_pages.data(), sequences, tokens, q_heads, d)),
        rope::Keys(k_view, keys).normalized(k_norm).with_values(v_view, values), positions.data(),
        call);
  }
  {  // into contiguous rows at the flat slots
    const rope::KeyCache<K> keys{View<K>::contiguous(k_rows.data(), rows, kv_heads, d), flat_slots,
                                 rope_test::scales_of<K>(k_scales_rows)};
    const rope::ValueCache<V> values{View<V>::contiguous(v_rows.data(), rows, kv_heads, d),
                                     rope_test::scales_of<V>(v_scales_rows)};
    rot.apply_qk(
        rope::Queries<T>(View<T>::batch_seq_heads(q_rows.data(), sequences, tokens, q_heads, d)),
        rope::Keys(k_view, keys).normalized(k_norm).with_values(v_view, values), positions.data(),
        call);
  }
  // vLLM's indexing of the rows written: element (row r, head h, coordinate i) of the rows at
  // its place in the pages.
  std::vector<K> k_expected(k_pages.size());
  std::vector<V> v_expected(v_pages.size());
  filler(k_expected, 0x5a), filler(v_expected, 0x3c);
  for (const std::int64_t slot : flat) {
    const auto r = static_cast<std::size_t>(slot), page = r / block_size, at = r % block_size;
    for (std::size_t h = 0; h < kv_heads; ++h) {
      for (std::size_t i = 0; i < d; ++i) {
        const std::size_t from = (r * kv_heads + h) * d + i;
        k_expected[(((page * kv_heads + h) * (d / x) + i / x) * block_size + at) * x + i % x] =
            k_rows[from];
        v_expected[((page * kv_heads + h) * d + i) * block_size + at] = v_rows[from];
      }
    }
  }
  CAPTURE(d, paged, norm, threads);
  REQUIRE(rope_test::same_bits(q_pages, q_rows));
  REQUIRE(rope_test::same_bits(k_pages, k_expected));
  REQUIRE(rope_test::same_bits(v_pages, v_expected));
  REQUIRE(k_scales_pages == k_scales_rows);
  REQUIRE(v_scales_pages == v_scales_rows);
}

template <class T, class K, class V>
void check_pages_all() {
  for (const std::size_t d : {std::size_t{64}, std::size_t{128}}) {
    for (const bool paged : {false, true}) check_pages<T, K, V>(d, paged, false, 1);
  }
  check_pages<T, K, V>(128, true, true, 1);
  check_pages<T, K, V>(128, true, false, 2);
}

}  // namespace

TEST_CASE("strided coordinates: keys and values into vLLM CPU's pages, bit for bit",
          "[paged][coordinates]") {
  using rope::Float8E4M3;
  using rope::Float8E5M2;
  SECTION("float into half") { check_pages_all<float, Eigen::half, Eigen::half>(); }
  SECTION("float into float") { check_pages_all<float, float, float>(); }
  SECTION("bfloat16 into bfloat16") {
    check_pages_all<Eigen::bfloat16, Eigen::bfloat16, Eigen::bfloat16>();
  }
  SECTION("half into float, values into half") {
    check_pages_all<Eigen::half, float, Eigen::half>();
  }
  SECTION("double into double") { check_pages_all<double, double, double>(); }
  SECTION("float into fp8 e4m3 and e5m2") { check_pages_all<float, Float8E4M3, Float8E5M2>(); }
  SECTION("float into int8") { check_pages_all<float, std::int8_t, std::int8_t>(); }
}

namespace {

// A call of 3 tokens of one head of 16 into half pages of 4 rows (vLLM's key layout, x = 8)
// and, with values, value pages; every error leaves q and both caches untouched.
struct PagedErrorCall {
  static constexpr std::size_t d = 16, block_size = 4, pages = 4, tokens = 3;
  rope::Rotary<float> rot{rope::Options{d}};
  std::vector<float> q = std::vector<float>(tokens * d, 0.5f), k = q, v = q;
  std::vector<Eigen::half> k_cache =
                               std::vector<Eigen::half>(pages * block_size * d, Eigen::half(-1.0f)),
                           v_cache = k_cache;
  std::vector<std::int64_t> positions = {0, 1, 2};
  std::vector<std::int32_t> table = {2, 0, 3, 1}, first = {1};
  std::vector<std::int64_t> flat = {9, 10, 11};

  View<Eigen::half> pages_of(std::vector<Eigen::half>& cache, std::size_t token_stride) {
    return View<Eigen::half>(cache.data(), pages, block_size, 1, d * block_size, token_stride,
                             d * block_size);
  }
  rope::KeyCache<Eigen::half> keys(const Slots& slots, Coordinates c = Coordinates::runs(8, 32)) {
    return {pages_of(k_cache, 8), slots, {}, c};
  }
  void call(const rope::KeyCache<Eigen::half>& cache,
            std::optional<rope::ValueCache<Eigen::half>> values = {}) {
    const rope::Keys<float, Eigen::half> keys(View<const float>::contiguous(k.data(), tokens, 1, d),
                                              cache);
    const rope::Queries<float> queries(View<float>::contiguous(q.data(), tokens, 1, d));
    if (values) {
      rot.apply_qk(queries,
                   keys.with_values(View<const float>::contiguous(v.data(), tokens, 1, d), *values),
                   positions.data());
    } else {
      rot.apply_qk(queries, keys, positions.data());
    }
  }
  void require_untouched() const {
    REQUIRE(q == std::vector<float>(tokens * d, 0.5f));
    REQUIRE(k_cache == std::vector<Eigen::half>(k_cache.size(), Eigen::half(-1.0f)));
    REQUIRE(v_cache == std::vector<Eigen::half>(v_cache.size(), Eigen::half(-1.0f)));
  }
};

}  // namespace

TEST_CASE("paged errors: strided coordinates that fit the cache's heads", "[errors][E89]") {
  PagedErrorCall c;
  const Slots slots(c.flat.data(), c.flat.size());
  rope_test::require_invalid([&] { c.call(c.keys(slots, Coordinates::runs(8, 4))); },
                             {"coordinates in runs of 8, 4 apart, would overlap"});
  // Runs of 8 at stride 16: the token stride 8 leaves no room for four tokens' runs.
  rope_test::require_invalid([&] { c.call(c.keys(slots, Coordinates::runs(8, 16))); },
                             {"cache coordinate stride 16 is smaller than 32", "would overlap"});
  rope_test::require_invalid(
      [&] {
        c.call(c.keys(slots), rope::ValueCache<Eigen::half>{
                                  c.pages_of(c.v_cache, 1), {}, 0, Coordinates::strided(2)});
      },
      {"value cache coordinate stride 2 is smaller than 4"});
  // A coordinate stride that reaches past 2^63 − 1 bytes from a head's first element.
  rope_test::require_invalid(
      [&] { c.call(c.keys(slots, Coordinates::runs(8, std::size_t{1} << 62))); },
      {"the cache's coordinate stride 4611686018427387904 reaches 1 x 4611686018427387904 "
       "elements past a head's first"});
  // The buffer's length, given, against the last head's last coordinate (E81's check).
  rope_test::require_invalid(
      [&] {
        rope::KeyCache<Eigen::half> cache = c.keys(slots);
        cache.rows = cache.rows.within(255);
        c.call(cache);
      },
      {"cache needs 256 elements from its first, but its buffer holds 255"});
  c.require_untouched();
  // A block cache's heads are contiguous blocks.
  std::vector<rope::BlockQ8_0> blocks(c.pages * c.block_size * 2);
  const rope::KeyCache<rope::BlockQ8_0> block_cache{
      View<rope::BlockQ8_0>::contiguous(blocks.data(), 16, 1, 1),
      slots,
      {},
      Coordinates::strided(4)};
  rope::Rotary<float> rot32{rope::Options{32}};
  std::vector<float> k32(3 * 32), q32(3 * 32);
  rope_test::require_invalid(
      [&] {
        rot32.apply_qk(rope::Queries<float>(View<float>::contiguous(q32.data(), 3, 1, 32)),
                       rope::Keys(View<const float>::contiguous(k32.data(), 3, 1, 32), block_cache),
                       c.positions.data());
      },
      {"the cache's heads are blocks of 32 values", "take no strided coordinates"});
}

TEST_CASE("paged errors: a cache with strided coordinates apart from every other view",
          "[errors][E90]") {
  PagedErrorCall c;
  const Slots slots(c.flat.data(), c.flat.size());
  // Value pages on the key pages.
  rope_test::require_invalid(
      [&] {
        c.call(c.keys(slots), rope::ValueCache<Eigen::half>{
                                  c.pages_of(c.k_cache, 8), {}, 0, Coordinates::runs(8, 32)});
      },
      {"value cache and cache share bytes", "must lie apart from every other view"});
  c.require_untouched();
  // The key pages over q (as bytes: the check compares addresses, nothing is read).
  std::vector<float> shared(c.pages * c.block_size * c.d, 0.5f);
  rope_test::require_invalid(
      [&] {
        const View<Eigen::half> over_q(reinterpret_cast<Eigen::half*>(shared.data()), c.pages,
                                       c.block_size, 1, c.d * c.block_size, 8, c.d * c.block_size);
        const rope::Keys<float, Eigen::half> keys(
            View<const float>::contiguous(c.k.data(), c.tokens, 1, c.d),
            {over_q, slots, {}, Coordinates::runs(8, 32)});
        c.rot.apply_qk(rope::Queries<float>(View<float>::contiguous(shared.data(), 3, 1, c.d)),
                       keys, c.positions.data());
      },
      {"cache and q share bytes"});
  REQUIRE(shared == std::vector<float>(shared.size(), 0.5f));
  c.require_untouched();
}

TEST_CASE("paged errors: the page table and its index arrays given", "[errors][E91]") {
  PagedErrorCall c;
  const std::int32_t sequence[3] = {0, 0, 0}, index[3] = {1, 2, 3};
  const PageTable table{c.table.data(), 1, 4, 4};
  rope_test::require_invalid(
      [&] {
        c.call(c.keys(Slots::paged({nullptr, 1, 4, 4}, c.first.data())));
      },
      {"the page table is a null pointer"});
  rope_test::require_invalid(
      [&] {
        c.call(c.keys(Slots::paged({c.table.data(), 1, 4, 0}, c.first.data())));
      },
      {"the page table has block_size 0 and stride 4: both must be > 0"});
  rope_test::require_invalid(
      [&] {
        c.call(c.keys(Slots::paged({c.table.data(), 0, 4, 4}, c.first.data())));
      },
      {"the page table has 0 sequences but k has 1"});
  rope_test::require_invalid([&] { c.call(c.keys(Slots::paged(table, nullptr))); },
                             {"the paged slots' first array is a null pointer"});
  rope_test::require_invalid([&] { c.call(c.keys(Slots::paged(table, sequence, index, 2))); },
                             {"2 paged entries given for the 3 tokens of k"});
  rope_test::require_invalid([&] { c.call(c.keys(Slots::paged(table, nullptr, index, 3))); },
                             {"the paged slots' sequence array is a null pointer"});
  rope_test::require_invalid(
      [&] {
        c.call(c.keys(Slots::paged({c.table.data(), SIZE_MAX / 8, 4, 4}, c.first.data())));
      },
      {"sequences x 4 pages exceed"});
  c.require_untouched();
}

TEST_CASE("paged errors: each token's sequence and index inside the page table", "[errors][E92]") {
  PagedErrorCall c;
  const PageTable table{c.table.data(), 1, 4, 4};
  const std::int32_t past[1] = {14}, negative[1] = {-1};
  rope_test::require_out_of_range(
      [&] { c.call(c.keys(Slots::paged(table, past))); },
      {"token 2 is at index 16 of its sequence, outside the 4 pages x 4 rows its row of the page "
       "table holds"});
  rope_test::require_out_of_range([&] { c.call(c.keys(Slots::paged(table, negative))); },
                                  {"token 0 is at index -1 of its sequence"});
  const std::int32_t sequence[3] = {0, 1, 0}, index[3] = {1, 2, 3};
  rope_test::require_out_of_range([&] { c.call(c.keys(Slots::paged(table, sequence, index, 3))); },
                                  {"token 1 is of sequence 1, outside the page table's [0, 1)"});
  // A page number past the cache.
  const std::int32_t far[4] = {7, 0, 1, 2};
  rope_test::require_out_of_range(
      [&] {
        c.call(c.keys(Slots::paged({far, 1, 4, 4}, c.first.data())));
      },
      {"token 0 is on page 7, past the cache's 16 rows (4 rows a page)"});
  // Pages so large that page x block_size leaves 64 bits: refused before the row is computed
  // (it wrapped around into rows 3 and 4 of the cache).
  for (const std::size_t huge : {std::size_t{1} << 62, SIZE_MAX}) {
    rope_test::require_out_of_range(
        [&] {
          c.call(c.keys(Slots::paged({c.table.data(), 1, 4, huge}, c.first.data())));
        },
        {"token 0 is on page 2, past the cache's 16 rows"});
  }
  c.require_untouched();
}

TEST_CASE("paged errors: the page table outside the views written", "[errors][E78]") {
  PagedErrorCall c;
  // Pages of 4 rows 8 elements apart from one another's end: page 0's gap holds the table.
  std::vector<Eigen::half> gapped(c.pages * (c.d * c.block_size + 8), Eigen::half(-1.0f));
  std::memcpy(static_cast<void*>(gapped.data() + c.d * c.block_size), c.table.data(),
              4 * sizeof(std::int32_t));
  const auto* inside = reinterpret_cast<const std::int32_t*>(gapped.data() + c.d * c.block_size);
  const View<Eigen::half> pages(gapped.data(), c.pages, c.block_size, 1, c.d * c.block_size + 8, 8,
                                c.d * c.block_size);
  rope_test::require_invalid(
      [&] {
        c.call(
            {pages, Slots::paged({inside, 1, 4, 4}, c.first.data()), {}, Coordinates::runs(8, 32)});
      },
      {"the page table array's 16 bytes lie inside cache"});
  c.require_untouched();
}
