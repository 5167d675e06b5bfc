// The examples of docs/api.md, compiled and run: each snippet
// appears in the docs line for line (tests/docs_code_blocks.cpp checks that), followed here by
// the checks that it does what the docs say.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include <Eigen/Core>
#include <catch2/catch.hpp>

#include <rope/rope.hpp>

#include "support.hpp"

TEST_CASE("api.md: Rotary, apply in place and its inverse", "[api]") {
  const std::size_t tokens = 4, heads = 8;
  // [api: construction]
  rope::Options options;
  options.head_size = 128;
  options.base = 500000.0;  // Llama 3's rope_theta
  options.layout = rope::Layout::half_split;
  options.max_positions = 8192;
  const rope::Rotary<float> rot(options);  // head size chosen at run time

  std::mt19937_64 rng(1);
  const auto original = rope_test::random_vector<float>(tokens * heads * 128, rng);
  std::vector<float> q = original;
  // [api: apply]
  const std::vector<std::int32_t> positions = {0, 1, 2, 3};
  rot.apply(q.data(), tokens, heads, positions.data());
  const std::vector<float> rotated = q;
  rot.apply(q.data(), tokens, heads, positions.data(), rope::Direction::inverse);  // undone

  const std::vector<std::int64_t> wide(positions.begin(), positions.end());
  rope_test::require_rotation_of<float>(
      rope::View<const float>::contiguous(original.data(), tokens, heads, 128),
      rope::View<const float>::contiguous(rotated.data(), tokens, heads, 128), 128,
      rope::Layout::half_split, wide, rope::Direction::forward, 500000.0);
  for (std::size_t i = 0; i < q.size(); ++i) {
    // Forward then inverse (support.hpp): ≤ γ_3·(|a| + |b|) each, with |a| + |b| ≤ 2 for
    // coordinates in [−1, 1], the second on a pair of sum ≤ √2·‖(a, b)‖ ≤ 2, and the first's
    // error turned, not grown: (2 + 2 + 2·√2)·γ_3(float) < 8·γ_3(float).
    REQUIRE(std::abs(double(q[i]) - double(original[i])) <= 8 * rope_test::gamma<float>(3));
  }
}

TEST_CASE("api.md: q and k inside a fused QKV buffer, in one pass", "[api]") {
  const std::size_t tokens = 3, q_heads = 4, kv_heads = 2, d = 64;
  const std::int64_t past = 10;
  const rope::Rotary<float, 64> rot;
  std::mt19937_64 rng(2);
  const auto original = rope_test::random_vector<float>(tokens * (q_heads + 2 * kv_heads) * d, rng);
  std::vector<float> qkv = original;
  // [api: fused qkv]
  // A fused [tokens][q_heads + 2·kv_heads][d] projection output: q and k rotated in place.
  const std::size_t row = (q_heads + 2 * kv_heads) * d;
  const rope::View<float> q_view(qkv.data(), tokens, q_heads, row, d);
  const rope::View<float> k_view(qkv.data() + q_heads * d, tokens, kv_heads, row, d);
  rot.apply_qk(q_view, k_view, rope::Positions::consecutive(past));  // tokens at past, past+1, ..

  const std::vector<std::int64_t> at = {past, past + 1, past + 2};
  const rope::View<const float> in(original.data(), tokens, q_heads + kv_heads, row, d);
  const rope::View<const float> out(qkv.data(), tokens, q_heads + kv_heads, row, d);
  rope_test::require_rotation_of<float>(in, out, d, rope::Layout::half_split, at,
                                        rope::Direction::forward);
  for (std::size_t t = 0; t < tokens; ++t) {  // v untouched
    const std::size_t v = t * row + (q_heads + kv_heads) * d;
    REQUIRE(std::memcmp(qkv.data() + v, original.data() + v, kv_heads * d * sizeof(float)) == 0);
  }
}

TEST_CASE("api.md: out of place on all threads", "[api]") {
  const std::size_t tokens = 64, heads = 8;
  const rope::Rotary<float, 128> rot;
  std::mt19937_64 rng(3);
  const auto src = rope_test::random_vector<float>(tokens * heads * 128, rng);
  std::vector<float> dst(src.size()), one(src.size());
  std::vector<std::int64_t> positions(tokens);
  for (std::size_t t = 0; t < tokens; ++t) positions[t] = std::int64_t(3 * t);
  // [api: execution]
  rope::Execution execution;
  execution.threads = 0;  // every hardware thread, if the call is large enough to use them
  const auto from = rope::View<const float>::contiguous(src.data(), tokens, heads, 128);
  rot.apply(from, rope::View<float>::contiguous(dst.data(), tokens, heads, 128), positions.data(),
            execution);

  rot.apply(from, rope::View<float>::contiguous(one.data(), tokens, heads, 128), positions.data());
  REQUIRE(std::memcmp(dst.data(), one.data(), dst.size() * sizeof(float)) == 0);
}

TEST_CASE("api.md: one head as an Eigen vector", "[api]") {
  rope::Options options;
  options.head_size = 128;
  const rope::Rotary<float> rot(options);
  // [api: one head]
  Eigen::VectorXf head = Eigen::VectorXf::LinSpaced(128, -1.0f, 1.0f);
  const Eigen::VectorXf at_5 = rot.rotated(head, 5);  // a rotated copy
  head = rot.rotated(head, 5);                        // "in place": now equal to at_5

  REQUIRE(head == at_5);
  Eigen::VectorXf expected = Eigen::VectorXf::LinSpaced(128, -1.0f, 1.0f);
  rot.apply(expected.data(), 1, 1, rope::Positions::consecutive(5));
  REQUIRE(head == expected);
}

TEST_CASE("api.md: context shift of a KV cache", "[api][shift]") {
  const std::size_t kv_heads = 2, d = 64, cached = 100;
  const rope::Rotary<float, 64> rot;
  std::mt19937_64 rng(4);
  const auto keys = rope_test::random_vector<float>(cached * kv_heads * d, rng);
  std::vector<float> k_cache = keys;
  rot.apply(k_cache.data(), cached, kv_heads, rope::Positions::consecutive(0));
  // [api: shift]
  // The cache holds keys of positions 0..99, [token][kv_heads][d]. Drop tokens 4..19: tokens
  // 20..99 move back by 16 positions, to 4..83, and down in memory.
  const rope::View<float> moved(k_cache.data() + 20 * kv_heads * d, 80, kv_heads, kv_heads * d, d);
  rot.shift(moved, -16);
  std::memmove(k_cache.data() + 4 * kv_heads * d, moved.data(), 80 * kv_heads * d * sizeof(float));

  // As if tokens 20..99 had been rotated at 4..83, within the shift bound (support.hpp): from
  // m ≤ 99 by δ = −16.
  std::vector<float> direct(keys.begin() + 20 * kv_heads * d, keys.end());
  rot.apply(direct.data(), 80, kv_heads, rope::Positions::consecutive(4));
  for (std::size_t i = 0; i < direct.size(); ++i) {
    const std::size_t partner = rope_test::partner_index(i, d, rope::Layout::half_split);
    const double p = std::abs(double(keys[20 * kv_heads * d + i])) +
                     std::abs(double(keys[20 * kv_heads * d + partner]));
    const double bound = rope_test::shift_bound<float>(p, 1.0, 99.0, -16.0);
    REQUIRE(std::abs(double(k_cache[4 * kv_heads * d + i]) - double(direct[i])) <= bound);
  }
}

TEST_CASE("api.md: converting W_q and W_k to the other pairing", "[api][weights]") {
  const std::size_t q_heads = 4, kv_heads = 2, d = 16, hidden = 32;
  std::mt19937_64 rng(5);
  const Eigen::MatrixXf meta_q = Eigen::MatrixXf::Random(q_heads * d, hidden);
  const Eigen::MatrixXf meta_k = Eigen::MatrixXf::Random(kv_heads * d, hidden);
  Eigen::MatrixXf w_q = meta_q, w_k = meta_k;
  // [api: convert rows]
  // Meta's W_q [q_heads·d, hidden] and W_k [kv_heads·d, hidden] → HuggingFace's row order.
  rope::convert_rows(w_q, q_heads, d, rope::Layout::interleaved, rope::Layout::half_split);
  rope::convert_rows(w_k, kv_heads, d, rope::Layout::interleaved, rope::Layout::half_split);

  const auto order = rope::head_permutation(d, rope::Layout::interleaved, rope::Layout::half_split);
  for (Eigen::Index r = 0; r < w_k.rows(); ++r) {
    const Eigen::Index source = r - r % Eigen::Index(d) + Eigen::Index(order[std::size_t(r) % d]);
    REQUIRE(w_k.row(r) == meta_k.row(source));
  }
  std::vector<float> buffer(kv_heads * d * hidden);
  Eigen::Map<Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>(
      buffer.data(), Eigen::Index(kv_heads * d), Eigen::Index(hidden)) = w_k;
  float* data = buffer.data();
  const auto rows = Eigen::Index(kv_heads * d), columns = Eigen::Index(hidden);
  // [api: convert a raw buffer]
  // A row-major float buffer from a checkpoint, converted back to Meta's order.
  using RowMajor = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  Eigen::Map<RowMajor> w(data, rows, columns);
  rope::convert_rows(w, kv_heads, d, rope::Layout::half_split, rope::Layout::interleaved);

  REQUIRE(w == meta_k);
  REQUIRE(rope::converted_rows(w_q, q_heads, d, rope::Layout::half_split,
                               rope::Layout::interleaved) == meta_q);
}

TEST_CASE("api.md: caller-supplied ONNX caches", "[api][cache]") {
  const std::size_t tokens = 2, heads = 3, rows = 16;
  std::vector<float> cos_cache(rows * 32), sin_cache(rows * 32);
  const std::vector<double> theta = rope::inverse_frequencies(64);
  for (std::size_t m = 0; m < rows; ++m) {
    for (std::size_t j = 0; j < 32; ++j) {
      cos_cache[m * 32 + j] = float(std::cos(double(m) * theta[j]));
      sin_cache[m * 32 + j] = float(std::sin(double(m) * theta[j]));
    }
  }
  std::mt19937_64 rng(6);
  const auto original = rope_test::random_vector<float>(tokens * heads * 64, rng);
  std::vector<float> x = original;
  const std::vector<std::int64_t> position_ids = {7, 3};
  // [api: cached]
  rope::CosSinOptions cache_options;
  cache_options.head_size = 64;
  const rope::CachedRotary<float> onnx(cache_options);
  const rope::CosSinCache<float> cache{cos_cache.data(), sin_cache.data(), rows,
                                       rope::CosSinRow::half, 0};
  onnx.apply(x.data(), tokens, heads, position_ids.data(), cache);

  std::vector<float> expected = original;
  const rope::Rotary<float, 64> rot;
  rot.apply(expected.data(), tokens, heads, position_ids.data());
  // The caches hold cos and sin rounded once to float, as rot's table does: the same values.
  REQUIRE(std::memcmp(x.data(), expected.data(), x.size() * sizeof(float)) == 0);
}

TEST_CASE("api.md: frequencies, tables and the reference", "[api][scaling]") {
  // [api: frequencies]
  rope::Yarn yarn;
  yarn.factor = 4;
  yarn.original_max_position_embeddings = 32768;
  const rope::Frequencies f = rope::frequencies(128, 1000000.0, yarn);
  // f.theta: the 64 scaled θ_j; f.attention_factor: 0.1·ln(4) + 1

  REQUIRE(f.theta.size() == 64);
  REQUIRE_THAT(f.attention_factor, Catch::WithinULP(0.1 * std::log(4.0) + 1, 0));

  // [api: table]
  const std::vector<double> theta = rope::inverse_frequencies(128, 10000.0);
  const rope::Table<float> table(rope::Layout::interleaved, theta, 4096);
  const float c = table.cos(7, 3);  // cos(7·θ_3), rounded once to float

  REQUIRE(c == float(std::cos(7 * theta[3])));

  // [api: reference]
  std::vector<double> head(128, 1.0);
  rope::reference::rotate_half_split(head.data(), head.size(), 42.0);  // position 42

  const double angle = 42.0 * std::pow(10000.0, -2.0 * 5 / 128);
  REQUIRE_THAT(head[5], Catch::WithinULP(std::cos(angle) - std::sin(angle), 4));
}

TEST_CASE("api.md: a batch of sequences in one call", "[api]") {
  const std::size_t batch = 2, heads = 4, seq = 3, d = 64;
  const rope::Rotary<float, 64> rot;
  std::mt19937_64 rng(12);
  const auto original = rope_test::random_vector<float>(batch * heads * seq * d, rng);
  std::vector<float> query_states = original;
  // [api: batch]
  // HuggingFace's query_states, [batch, heads, seq, d], with position_ids [batch][seq]: the
  // second sequence is left-padded by one token, so its positions start one later.
  const std::int64_t position_ids[batch][seq] = {{0, 1, 2}, {0, 0, 1}};
  rot.apply(rope::View<float>::batch_heads_seq(query_states.data(), batch, heads, seq, d),
            &position_ids[0][0]);

  const std::vector<std::int64_t> at = {0, 1, 2, 0, 0, 1};
  rope_test::require_rotation_of<float>(
      rope::View<const float>::batch_heads_seq(original.data(), batch, heads, seq, d),
      rope::View<const float>::batch_heads_seq(query_states.data(), batch, heads, seq, d), d,
      rope::Layout::half_split, at, rope::Direction::forward);
}

TEST_CASE("api.md: a packed batch of sequences", "[api]") {
  const std::size_t heads = 4, d = 64, total = 5;
  const rope::Rotary<float, 64> rot;
  std::mt19937_64 rng(21);
  const auto original = rope_test::random_vector<float>(total * heads * d, rng);
  std::vector<float> packed = original;
  // [api: packed]
  // Two prompts of 3 and 2 tokens packed into one [5][heads][d] buffer, as engines batch
  // sequences of different lengths: each token carries its position in its own sequence.
  const std::int64_t positions[] = {0, 1, 2, 0, 1};
  rot.apply(packed.data(), 5, heads, positions);

  rope_test::require_rotation_of<float>(
      rope::View<const float>::contiguous(original.data(), total, heads, d),
      rope::View<const float>::contiguous(packed.data(), total, heads, d), d,
      rope::Layout::half_split, {0, 1, 2, 0, 1}, rope::Direction::forward);
  // Bit for bit what rotating each sequence on its own gives.
  std::vector<float> first(original.begin(), original.begin() + 3 * heads * d);
  std::vector<float> second(original.begin() + 3 * heads * d, original.end());
  rot.apply(first.data(), 3, heads, rope::Positions::consecutive(0));
  rot.apply(second.data(), 2, heads, rope::Positions::consecutive(0));
  REQUIRE(std::memcmp(first.data(), packed.data(), first.size() * sizeof(float)) == 0);
  const float* tail = packed.data() + first.size();
  REQUIRE(std::memcmp(second.data(), tail, second.size() * sizeof(float)) == 0);
}

#if defined(__FLT16_MAX__)
__extension__ typedef _Float16 CompilerHalf;  // the compiler's own binary16 type, where it has one
#endif

TEST_CASE("api.md: an engine's 16-bit buffers", "[api]") {
  const std::size_t tokens = 3, heads = 2, d = 128, n = tokens * heads * d;
  const rope::Rotary<Eigen::half, 128> rot_half;
  const rope::Rotary<Eigen::bfloat16, 128> rot_bf16;
  const std::int64_t positions[] = {7, 300, 5000};
  std::mt19937_64 rng(22);
  const auto values = rope_test::random_vector<float>(n, rng);
  // The engine's tensors as raw 16-bit words, and the same values as rope's types.
  std::vector<Eigen::half> half(n);
  std::vector<Eigen::bfloat16> bf16(n);
  std::vector<std::uint16_t> f16_words(n), bf16_words(n);
  for (std::size_t i = 0; i < n; ++i) {
    half[i] = Eigen::half(values[i]);
    bf16[i] = Eigen::bfloat16(values[i]);
    f16_words[i] = Eigen::numext::bit_cast<std::uint16_t>(half[i]);
    bf16_words[i] = Eigen::numext::bit_cast<std::uint16_t>(bf16[i]);
  }
  const std::vector<std::uint16_t> f16_input = f16_words;
  // [api: 16-bit buffers]
  // An engine's f16 and bf16 tensors, held as 16-bit words: Eigen::half and Eigen::bfloat16 are
  // 2-byte types holding the IEEE binary16 and bfloat16 bit patterns, so a pointer to the words
  // is passed as a pointer to them, without a copy.
  static_assert(sizeof(Eigen::half) == 2 && alignof(Eigen::half) <= alignof(std::uint16_t));
  static_assert(sizeof(Eigen::bfloat16) == 2 && alignof(Eigen::bfloat16) <= alignof(std::uint16_t));
  rot_half.apply(reinterpret_cast<Eigen::half*>(f16_words.data()), tokens, heads, positions);
  rot_bf16.apply(reinterpret_cast<Eigen::bfloat16*>(bf16_words.data()), tokens, heads, positions);

  rot_half.apply(half.data(), tokens, heads, positions);
  rot_bf16.apply(bf16.data(), tokens, heads, positions);
  REQUIRE(std::memcmp(f16_words.data(), half.data(), n * 2) == 0);
  REQUIRE(std::memcmp(bf16_words.data(), bf16.data(), n * 2) == 0);
#if defined(__FLT16_MAX__)
  // The compiler's _Float16 has the same bits as Eigen::half.
  std::vector<CompilerHalf> native(n);
  for (std::size_t i = 0; i < n; ++i) native[i] = static_cast<CompilerHalf>(values[i]);
  REQUIRE(std::memcmp(native.data(), f16_input.data(), n * 2) == 0);
  rot_half.apply(reinterpret_cast<Eigen::half*>(native.data()), tokens, heads, positions);
  REQUIRE(std::memcmp(native.data(), half.data(), n * 2) == 0);
#endif
}

TEST_CASE("api.md: position-dependent query scales", "[api][query_scale]") {
  constexpr std::size_t q_heads = 4, k_heads = 2, d = 128, tokens = 2;
  const rope::Rotary<float, 128> rot;
  std::mt19937_64 rng(23);
  const auto q_in = rope_test::random_vector<float>(tokens * q_heads * d, rng);
  const auto k_in = rope_test::random_vector<float>(tokens * k_heads * d, rng);
  std::vector<float> q = q_in, k = k_in, q_plain = q_in, k_plain = k_in, nope = q_in;
  const auto q_view = rope::View<float>::contiguous(q.data(), tokens, q_heads, d);
  const auto k_view = rope::View<float>::contiguous(k.data(), tokens, k_heads, d);
  const std::int64_t positions[tokens] = {16383, 16384};
  // [api: query scale]
  // Ministral 3: q rotated and multiplied by 1 + 0.1·ln(1 + ⌊p / 16384⌋) in the pass that
  // rotates k (the scale folded into the token's cos/sin row); k rotated as apply_qk rotates it.
  rot.apply_qk(rope::Queries(q_view).scaled(rope::Llama4Scaling{0.1, 16384}), rope::Keys(k_view),
               positions);
  // Llama 4's layers without RoPE: the queries scaled by its temperature, nothing rotated.
  const auto nope_view = rope::View<float>::contiguous(nope.data(), tokens, q_heads, d);
  rope::scale_queries(nope_view, d, positions, rope::Llama4Temperature{8192, 0.1});

  rot.apply_qk(rope::View<float>::contiguous(q_plain.data(), tokens, q_heads, d),
               rope::View<float>::contiguous(k_plain.data(), tokens, k_heads, d), positions);
  REQUIRE(k == k_plain);
  const double s[tokens] = {1.0, 1.0 + 0.1 * std::log(2.0)};  // Ministral, at 16383 and 16384
  // Llama 4: ⌊(p + 1) / 8192⌋ = 2 at both positions.
  const double t[tokens] = {1.0 + 0.1 * std::log(3.0), 1.0 + 0.1 * std::log(3.0)};
  for (std::size_t i = 0; i < q.size(); ++i) {
    const std::size_t token = i / (q_heads * d), j = i % d;
    const std::size_t partner = i - j + (j < d / 2 ? j + d / 2 : j - d / 2);
    const double pair = std::abs(double(q_in[i])) + std::abs(double(q_in[partner]));
    // Both rotations within coordinate_bound of the exact one; the scaled one has two more
    // roundings (s to float, s·row) on terms adding up to s·pair.
    const double bound = s[token] * (2 * rope_test::coordinate_bound<float>(pair, 16384.0) +
                                     rope_test::gamma<float>(2) * pair);
    REQUIRE(std::abs(double(q[i]) - s[token] * double(q_plain[i])) <= bound);
    REQUIRE(std::abs(double(nope[i]) - t[token] * double(q_in[i])) <=
            rope_test::gamma<float>(2) * t[token] * std::abs(double(q_in[i])));
  }
}

TEST_CASE("api.md: the options of a call", "[api]") {
  const std::size_t tokens = 8, heads = 2, d = 64;
  const rope::Rotary<float, 64> rot;
  std::mt19937_64 rng(13);
  const auto original = rope_test::random_vector<float>(tokens * heads * d, rng);
  std::vector<float> x = original, y = original;
  const auto view = rope::View<float>::contiguous(x.data(), tokens, heads, d);
  // [api: call]
  rot.apply(view, rope::Positions::consecutive(0));                            // R_m, all tokens
  rot.apply(view, rope::Positions::consecutive(0), rope::Direction::inverse);  // undone
  rot.apply(view, rope::Positions::consecutive(0), rope::TokenRange{0, 4});    // tokens 0..3
  rope::Call call;
  call.tokens = rope::TokenRange{4, 8};
  call.execution.threads = 2;
  rot.apply(view, rope::Positions::consecutive(0), call);  // tokens 4..7, on two threads

  rot.apply(rope::View<float>::contiguous(y.data(), tokens, heads, d),
            rope::Positions::consecutive(0));
  // x went forward, back and forward again; y forward once. After the first two x is within
  // 8·γ_3(float) of the input per coordinate ("api.md: apply"); the third rotation maps that to
  // at most 8·γ_3 + 8·γ_3 (|c·e_a − s·e_b| ≤ |e_a| + |e_b|); each last rotation, of x and of y,
  // adds γ_3·(|a| + |b|) ≤ 2·γ_3 for coordinates in [−1, 1]: 20·γ_3 in all.
  for (std::size_t i = 0; i < x.size(); ++i) {
    REQUIRE(std::abs(double(x[i]) - double(y[i])) <= 20 * rope_test::gamma<float>(3));
  }
  // The range each call resolves: the one given, or every token.
  REQUIRE(rope::Call{}.range(8).first == 0);
  REQUIRE(rope::Call{}.range(8).last == 8);
  const rope::Call some(rope::TokenRange{4, 6});
  REQUIRE(some.range(8).first == 4);
  REQUIRE(some.range(8).last == 6);
}

TEST_CASE("api.md: views, positions and token ranges", "[api]") {
  const std::size_t tokens = 3, heads = 2, d = 64;
  const rope::Rotary<float, 64> rot;
  std::mt19937_64 rng(8);
  const auto original = rope_test::random_vector<float>(tokens * heads * d, rng);
  std::vector<float> k = original;
  // [api: view]
  // A [heads][tokens][d] tensor (HuggingFace's attention layout) as one View.
  const rope::View<float> by_head(k.data(), tokens, heads, d, tokens * d);
  rot.apply(by_head, rope::Positions::consecutive(0));

  const std::vector<std::int64_t> at = {0, 1, 2};
  rope_test::require_rotation_of<float>(
      rope::View<const float>(original.data(), tokens, heads, d, tokens * d), by_head, d,
      rope::Layout::half_split, at, rope::Direction::forward);

  std::vector<float> a = original, b = original, c = original;
  // [api: positions]
  const std::int64_t position_ids[] = {5, 6, 7};      // PyTorch's dtype
  const std::int32_t engine_positions[] = {5, 6, 7};  // llama.cpp's
  rot.apply(a.data(), 3, heads, position_ids);
  rot.apply(b.data(), 3, heads, engine_positions);
  rot.apply(c.data(), 3, heads, rope::Positions::consecutive(5));  // the same three rotations

  REQUIRE(a == b);
  REQUIRE(a == c);
  REQUIRE(a != original);

  std::vector<float> whole(original.size()), parts(original.size());
  const auto src_view = rope::View<const float>::contiguous(original.data(), tokens, heads, d);
  const auto dst_view = rope::View<float>::contiguous(parts.data(), tokens, heads, d);
  rot.apply(rope::View<const float>::contiguous(original.data(), tokens, heads, d),
            rope::View<float>::contiguous(whole.data(), tokens, heads, d), position_ids);
  for (std::size_t w = 0, n = 2; w < n; ++w) {
    // [api: token range]
    // Worker w of n rotates its share of the batch; every worker uses the same rot.
    const rope::TokenRange range{tokens * w / n, tokens * (w + 1) / n};
    rot.apply(src_view, dst_view, position_ids, range);
  }
  REQUIRE(whole == parts);

  // [api: layout name]
  const char* name = rope::to_string(rot.layout());  // "half_split"

  REQUIRE(std::string(name) == "half_split");
  static_assert(std::is_same_v<rope::Rotary<Eigen::bfloat16>::Compute, float>);
  static_assert(std::is_same_v<rope::compute_t<double>, double>);
}

TEST_CASE("api.md: rope::unchecked in a decode loop", "[api]") {
  const std::size_t q_heads = 4, kv_heads = 2, d = 64, steps = 5;
  const rope::Rotary<float, 64> rot;
  std::mt19937_64 rng(11);
  const std::size_t row = (q_heads + 2 * kv_heads) * d;
  const auto original = rope_test::random_vector<float>(steps * row, rng);
  std::vector<float> qkv = original, checked = original;
  // [api: unchecked]
  // Validated once: the views are fixed, and the engine's positions count up from 0.
  const rope::View<float> q(qkv.data(), 1, q_heads, row, d);
  const rope::View<float> k(qkv.data() + q_heads * d, 1, kv_heads, row, d);
  rot.apply_qk(q, k, rope::Positions::consecutive(0));  // the first step, checked
  for (std::int64_t step = 1; step < std::int64_t(steps); ++step) {
    const std::ptrdiff_t next = step * std::ptrdiff_t(row);  // token `step` of the buffer
    rot.apply_qk(rope::unchecked,
                 rope::Queries(rope::View<float>(q.data() + next, 1, q_heads, row, d)),
                 rope::Keys(rope::View<float>(k.data() + next, 1, kv_heads, row, d)),
                 rope::Positions::consecutive(step), rope::TokenRange{0, 1});
  }

  rot.apply_qk(rope::View<float>(checked.data(), steps, q_heads, row, d),
               rope::View<float>(checked.data() + q_heads * d, steps, kv_heads, row, d),
               rope::Positions::consecutive(0));
  REQUIRE(std::memcmp(qkv.data(), checked.data(), qkv.size() * sizeof(float)) == 0);
}

TEST_CASE("api.md: multi-axis RoPE for a vision-language model and its vision encoder",
          "[api][multi_axis]") {
  const std::size_t q_heads = 4, kv_heads = 2, d = 128;
  std::mt19937_64 rng(13);
  // [api: multi-axis]
  rope::Options options;
  options.head_size = 128;
  options.base = 5000000.0;
  options.axes = rope::Axes::mrope_interleaved({24, 20, 20});  // Qwen3-VL
  const rope::Rotary<float> rot(options);

  rope::MultimodalPositions prompt;
  prompt.text(3).image(2, 2).text(1);  // 8 tokens; decoding goes on at prompt.next()
  const std::size_t tokens = prompt.size();

  const std::size_t row = (q_heads + 2 * kv_heads) * d;
  const auto original = rope_test::random_vector<float>(tokens * row, rng);
  std::vector<float> qkv = original, by_axis = original;
  const auto q_of = [&](std::vector<float>& v) {
    return rope::View<float>(v.data(), tokens, q_heads, row, d);
  };
  const auto k_of = [&](std::vector<float>& v) {
    return rope::View<float>(v.data() + q_heads * d, tokens, kv_heads, row, d);
  };
  const rope::View<float> q = q_of(qkv), k = k_of(qkv);
  // [api: multi-axis qk]
  rot.apply_qk(q, k, prompt.positions());  // (t, h, w) triples, [tokens][3]

  // The same coordinates as HuggingFace's position_ids of shape (3, tokens), in int32.
  std::vector<std::int32_t> position_ids(3 * tokens);
  for (std::size_t t = 0; t < tokens; ++t) {
    for (std::size_t a = 0; a < 3; ++a) {
      position_ids[a * tokens + t] = std::int32_t(prompt.data()[3 * t + a]);
    }
  }
  // [api: multi-axis position_ids]
  const auto ids = rope::Positions::axis_major(position_ids.data(), 3, tokens);
  rot.apply_qk(q_of(by_axis), k_of(by_axis), ids);

  REQUIRE(qkv == by_axis);
  REQUIRE(prompt.next() == 6);
  REQUIRE(qkv != original);

  // [api: axial]
  rope::Options vision;
  vision.head_size = 80;
  vision.axes = rope::Axes::axial();  // rows, then columns; θ restarts per axis
  const rope::Rotary<float> vit(vision);
  rope::PatchGrid grid;
  grid.rows = 4;
  grid.columns = 6;
  grid.merge = 2;  // Qwen2-VL's spatial_merge_size
  const std::vector<std::int64_t> patches = rope::patch_positions(grid);  // [24][2]
  std::vector<float> x(24 * 16 * 80, 1.0f);                               // 24 patches x 16 heads
  vit.apply(x.data(), 24, 16, rope::Positions::token_major(patches.data(), 2));

  REQUIRE(patches.size() == 48);
  // 2 x 2 windows: (0, 0), (0, 1), (1, 0), (1, 1), then (0, 2), ...
  REQUIRE((patches[2] == 0 && patches[3] == 1 && patches[4] == 1 && patches[5] == 0));
  REQUIRE((patches[8] == 0 && patches[9] == 2));
  REQUIRE(std::all_of(x.begin(), x.begin() + 16 * 80, [](float v) { return v == 1.0f; }));
  REQUIRE(x[16 * 80 + 20] != 1.0f);
}

TEST_CASE("api.md: keys into a KV cache", "[api][key_cache]") {
  constexpr std::size_t q_heads = 4, k_heads = 2, d = 128, tokens = 3, pages = 2, page_rows = 4;
  const rope::Rotary<float, 128> rot;
  std::mt19937_64 rng(29);
  const auto q_in = rope_test::random_vector<float>(tokens * q_heads * d, rng);
  const auto k = rope_test::random_vector<float>(tokens * k_heads * d, rng);
  std::vector<float> q = q_in, q_ring(q_in.size()), q_sep = q_in, k_sep = k;
  std::vector<Eigen::half> cache(pages * page_rows * k_heads * d, Eigen::half(0));
  const std::int64_t positions[tokens] = {5, 6, 7};
  // [api: key cache]
  // A half cache of 8 rows (two pages of 4): token 0 into row 6, token 2 into row 1, token 1
  // skipped; q rotated in place in the same pass.
  const auto cache_rows =
      rope::View<Eigen::half>::contiguous(cache.data(), pages * page_rows, k_heads, d);
  const std::int32_t slots[tokens] = {6, -1, 1};
  const auto q_view = rope::View<float>::contiguous(q.data(), tokens, q_heads, d);
  const auto k_view = rope::View<const float>::contiguous(k.data(), tokens, k_heads, d);
  rot.apply_qk(rope::Queries(q_view),
               rope::Keys(k_view, rope::KeyCache<Eigen::half>{cache_rows, {slots, tokens}}),
               positions);
  // A ring buffer of the last 8 positions: token t into row (5 + t) mod 8; q out of place.
  const auto q_source = rope::View<const float>::contiguous(q_in.data(), tokens, q_heads, d);
  const auto q_out = rope::View<float>::contiguous(q_ring.data(), tokens, q_heads, d);
  rot.apply_qk(rope::Queries(q_source, q_out),
               rope::Keys(k_view, rope::KeyCache<Eigen::half>{cache_rows, rope::Slots::ring(5)}),
               positions);
  // [api: key cache end]
  // Both: the queries bit for bit apply_qk's, each key value converted to half into its row.
  rot.apply_qk(rope::View<float>::contiguous(q_sep.data(), tokens, q_heads, d),
               rope::View<float>::contiguous(k_sep.data(), tokens, k_heads, d), positions);
  REQUIRE(q == q_sep);
  REQUIRE(q_ring == q_sep);
  // Rows 5, 6, 7: the ring's tokens 0, 1, 2; row 1: token 2 of the first call; the rest 0.
  const std::size_t row = k_heads * d;
  for (std::size_t i = 0; i < cache.size(); ++i) {
    const std::size_t r = i / row;
    const float value = r >= 5   ? k_sep[(r - 5) * row + i % row]
                        : r == 1 ? k_sep[2 * row + i % row]
                                 : 0.0f;
    const Eigen::half want(value);
    REQUIRE(std::memcmp(&cache[i], &want, sizeof want) == 0);
  }
}

TEST_CASE("api.md: keys into a quantised cache", "[api][quantized]") {
  constexpr std::size_t q_heads = 4, k_heads = 2, d = 128, tokens = 3, rows = 16;
  const rope::Rotary<float, 128> rot;
  std::mt19937_64 rng(31);
  const auto q_in = rope_test::random_vector<float>(tokens * q_heads * d, rng);
  const auto k = rope_test::random_vector<float>(tokens * k_heads * d, rng);
  std::vector<float> q = q_in, q_float = q_in, keys_float(rows * k_heads * d, 0.0f);
  std::vector<rope::BlockQ8_0> blocks(rows * k_heads * d / 32);
  std::vector<rope::Float8E4M3> fp8(rows * k_heads * d);
  const std::int64_t positions[tokens] = {40, 41, 42};
  const std::int64_t slots[tokens] = {9, 10, 11};
  const auto q_view = rope::View<float>::contiguous(q.data(), tokens, q_heads, d);
  const auto k_view = rope::View<const float>::contiguous(k.data(), tokens, k_heads, d);
  // [api: quantized cache]
  // llama.cpp's -ctk q8_0: a row of each token is k_heads × d/32 blocks; the keys are rotated
  // in float and quantised once, straight into rows 9, 10 and 11.
  const auto q8_rows =
      rope::View<rope::BlockQ8_0>::contiguous(blocks.data(), rows, k_heads, d / 32);
  rot.apply_qk(rope::Queries(q_view),
               rope::Keys(k_view, rope::KeyCache<rope::BlockQ8_0>{q8_rows, {slots, tokens}}),
               positions);
  // An fp8 (E4M3) cache with vLLM's k_scale: each value stored as fp8(x / 0.05).
  const auto fp8_rows = rope::View<rope::Float8E4M3>::contiguous(fp8.data(), rows, k_heads, d);
  rot.apply_qk(rope::Queries(q_view),
               rope::Keys(k_view,
                          rope::KeyCache<rope::Float8E4M3>{
                              fp8_rows, {slots, tokens}, rope::CacheScales::tensor(0.05)}),
               positions);
  // [api: quantized cache end]
  // Each q8_0 value decodes (d·q) to the key rotated in float within half a step and the
  // scale's rounding to binary16; each fp8 value within half its spacing (2^-4 of it, E4M3's 3
  // mantissa bits) times the scale.
  rot.apply_qk(rope::Queries(rope::View<float>::contiguous(q_float.data(), tokens, q_heads, d)),
               rope::Keys<float, float>(
                   k_view, {rope::View<float>::contiguous(keys_float.data(), rows, k_heads, d),
                            {slots, tokens}}),
               positions);
  for (std::size_t t = 0; t < tokens; ++t) {
    for (std::size_t i = 0; i < k_heads * d; ++i) {
      const std::size_t at = std::size_t(slots[t]) * k_heads * d + i;
      const rope::BlockQ8_0& block = blocks[at / 32];
      const float step = float(Eigen::numext::bit_cast<Eigen::half>(block.d));
      REQUIRE(std::fabs(step * float(block.q[at % 32]) - keys_float[at]) <=
              std::fabs(step) * (0.5f + 127 * 0x1p-10f));
      const float stored = rope::to_float(fp8[at]);
      REQUIRE(std::fabs(stored * 0.05f - keys_float[at]) <=
              std::fabs(keys_float[at]) * 0x1p-4f + 0.05f * 0x1p-10f);
    }
  }
}

TEST_CASE("api.md: values in the same pass", "[api][values]") {
  constexpr std::size_t q_heads = 8, kv_heads = 2, d = 64, tokens = 3, rows = 16;
  const rope::Rotary<float, 64> rot;
  std::mt19937_64 rng(41);
  // One projection output per token: [q heads | k heads | v heads], as a fused qkv matmul gives.
  const std::size_t width = (q_heads + 2 * kv_heads) * d;
  const auto qkv_in = rope_test::random_vector<float>(tokens * width, rng);
  std::vector<float> qkv = qkv_in;
  std::vector<rope::BlockQ8_0> k_blocks(rows * kv_heads * d / 32);
  std::vector<Eigen::half> v_halves(rows * kv_heads * d);
  const std::int64_t positions[tokens] = {20, 21, 22};
  const std::int32_t slots[tokens] = {12, 13, 14};
  // [api: values]
  // llama.cpp's -ctk q8_0 -ctv f16, one layer's append: q rotated in place, k rotated into its
  // q8_0 rows and v converted into its half rows, at the same slots, in one pass.
  const rope::View<float> q_view(qkv.data(), tokens, q_heads, width, d);
  const rope::View<const float> k_view(qkv.data() + q_heads * d, tokens, kv_heads, width, d);
  const rope::View<const float> v_view(qkv.data() + (q_heads + kv_heads) * d, tokens, kv_heads,
                                       width, d);
  const auto k_rows =
      rope::View<rope::BlockQ8_0>::contiguous(k_blocks.data(), rows, kv_heads, d / 32);
  const auto v_rows = rope::View<Eigen::half>::contiguous(v_halves.data(), rows, kv_heads, d);
  rot.apply_qk(rope::Queries(q_view),
               rope::Keys(k_view, rope::KeyCache<rope::BlockQ8_0>{k_rows, {slots, tokens}})
                   .with_values(v_view, rope::ValueCache<Eigen::half>{v_rows}),
               positions);
  // [api: values end]
  // Row slots[t] of the value cache holds token t's values rounded to half; no other row is
  // written.
  for (std::size_t r = 0; r < rows; ++r) {
    for (std::size_t i = 0; i < kv_heads * d; ++i) {
      const float stored = float(v_halves[r * kv_heads * d + i]);
      if (r < 12 || r > 14) {
        REQUIRE(stored == 0.0f);
      } else {
        const float value = qkv_in[(r - 12) * width + (q_heads + kv_heads) * d + i];
        REQUIRE(stored == float(Eigen::half(value)));
      }
    }
  }
}

TEST_CASE("api.md: MLA rows", "[api][values][mla]") {
  constexpr std::size_t q_heads = 128, tokens = 2, rows = 8, kv_lora_rank = 512, rope_dim = 64;
  constexpr std::size_t width = kv_lora_rank + rope_dim;
  rope::Options options;
  options.layout = rope::Layout::interleaved;  // DeepSeek's k_pe and q_pe pairs
  const rope::Rotary<float, 64> rot(options);
  std::mt19937_64 rng(43);
  std::vector<float> q_pe = rope_test::random_vector<float>(tokens * q_heads * rope_dim, rng);
  const auto k_pe = rope_test::random_vector<float>(tokens * rope_dim, rng);
  const auto latent = rope_test::random_vector<float>(tokens * kv_lora_rank, rng);
  std::vector<Eigen::bfloat16> cache(rows * width);
  const std::int64_t positions[tokens] = {30, 31};
  const std::int64_t slots[tokens] = {5, 6};
  // [api: mla rows]
  // DeepSeek-V3's MLA cache: one row of 576 bfloat16 per token, the latent (kv_lora_rank 512)
  // then k_pe (64) rotated; q_pe rotated in the same pass. Two views of the same rows.
  const rope::View<Eigen::bfloat16> latent_part(cache.data(), rows, 1, width, kv_lora_rank);
  const rope::View<Eigen::bfloat16> rope_part(cache.data() + kv_lora_rank, rows, 1, width,
                                              rope_dim);
  rot.apply_qk(
      rope::Queries(rope::View<float>::contiguous(q_pe.data(), tokens, q_heads, rope_dim)),
      rope::Keys(rope::View<const float>::contiguous(k_pe.data(), tokens, 1, rope_dim),
                 rope::KeyCache<Eigen::bfloat16>{rope_part, {slots, tokens}})
          .with_values(rope::View<const float>::contiguous(latent.data(), tokens, 1, kv_lora_rank),
                       rope::ValueCache<Eigen::bfloat16>{latent_part, {}, kv_lora_rank}),
      positions);
  // [api: mla rows end]
  for (std::size_t t = 0; t < tokens; ++t) {
    const Eigen::bfloat16* row = cache.data() + std::size_t(slots[t]) * width;
    for (std::size_t i = 0; i < kv_lora_rank; ++i) {
      REQUIRE(float(row[i]) == float(Eigen::bfloat16(latent[t * kv_lora_rank + i])));
    }
    std::vector<double> expected(k_pe.begin() + std::ptrdiff_t(t * rope_dim),
                                 k_pe.begin() + std::ptrdiff_t((t + 1) * rope_dim));
    rope::reference::rotate_interleaved(expected.data(), rope_dim, double(positions[t]));
    for (std::size_t i = 0; i < rope_dim; ++i) {  // rotated in float, rounded once to bfloat16
      REQUIRE(std::fabs(double(float(row[kv_lora_rank + i])) - expected[i]) <=
              std::fabs(expected[i]) * 0x1p-8 + 1e-5);
    }
  }
}

TEST_CASE("api.md: paged caches", "[api][values][paged]") {
  constexpr std::size_t q_heads = 8, kv_heads = 2, d = 128, sequences = 2, block_size = 16;
  constexpr std::size_t pages = 6, x = 8;  // x: the halves of 16 bytes
  const rope::Rotary<float, 128> rot;
  std::mt19937_64 rng(47);
  std::vector<float> q = rope_test::random_vector<float>(sequences * q_heads * d, rng);
  const auto k = rope_test::random_vector<float>(sequences * kv_heads * d, rng);
  const auto v = rope_test::random_vector<float>(sequences * kv_heads * d, rng);
  std::vector<Eigen::half> key_pages(pages * kv_heads * d * block_size);
  std::vector<Eigen::half> value_pages(key_pages.size());
  // [api: paged]
  // A decode step of two sequences into vLLM CPU's paged cache: keys as
  // [pages][heads][d / 8][16][8] halves, values as [pages][heads][d][16]. Sequence 0 holds 20
  // tokens in pages 4 and 1, sequence 1 holds 3 in page 5: their new tokens go to index 20 and 3.
  const std::int32_t block_table[sequences][3] = {{4, 1, 2}, {5, 0, 3}};
  const std::int32_t cached[sequences] = {20, 3};
  const std::int64_t positions[sequences] = {20, 3};
  const rope::PageTable table{&block_table[0][0], sequences, 3, block_size};
  const std::size_t page = kv_heads * d * block_size;  // elements of a page
  const rope::View<Eigen::half> k_pages(key_pages.data(), pages, block_size, kv_heads, page, x,
                                        d * block_size);
  const rope::View<Eigen::half> v_pages(value_pages.data(), pages, block_size, kv_heads, page, 1,
                                        d * block_size);
  rot.apply_qk(
      rope::Queries(rope::View<float>::batch_seq_heads(q.data(), sequences, 1, q_heads, d)),
      rope::Keys(rope::View<const float>::batch_seq_heads(k.data(), sequences, 1, kv_heads, d),
                 rope::KeyCache<Eigen::half>{k_pages,
                                             rope::Slots::paged(table, cached),
                                             {},
                                             rope::Coordinates::runs(x, x * block_size)})
          .with_values(
              rope::View<const float>::batch_seq_heads(v.data(), sequences, 1, kv_heads, d),
              rope::ValueCache<Eigen::half>{
                  v_pages, {}, 0, rope::Coordinates::strided(block_size)}),
      positions);
  // [api: paged end]
  // Index 20 of sequence 0 is row 4 of page 1; index 3 of sequence 1 is row 3 of page 5. Each
  // key rotated in float and rounded once to half: within 2^-11 of it, plus the float rotation's
  // error (below 1e-6 for keys below 1 at these positions).
  const std::size_t page_of[sequences] = {1, 5}, row_of[sequences] = {4, 3};
  for (std::size_t b = 0; b < sequences; ++b) {
    for (std::size_t h = 0; h < kv_heads; ++h) {
      std::vector<double> expected(k.begin() + std::ptrdiff_t((b * kv_heads + h) * d),
                                   k.begin() + std::ptrdiff_t((b * kv_heads + h + 1) * d));
      rope::reference::rotate_half_split(expected.data(), d, double(positions[b]));
      const std::size_t head = page_of[b] * kv_heads * d * block_size + h * d * block_size;
      for (std::size_t i = 0; i < d; ++i) {
        const double key =
            double(float(key_pages[head + (i / x * block_size + row_of[b]) * x + i % x]));
        REQUIRE(std::fabs(key - expected[i]) <= std::fabs(expected[i]) * 0x1p-11 + 1e-6);
        const float value = float(value_pages[head + i * block_size + row_of[b]]);
        REQUIRE(value == float(Eigen::half(v[(b * kv_heads + h) * d + i])));
      }
    }
  }
}

TEST_CASE("api.md: QK-norm fused with RoPE", "[api][qk_norm]") {
  constexpr std::size_t q_heads = 4, k_heads = 2, d = 128, tokens = 2, rows = 8;
  rope::Options options;
  options.base = 1000000.0;
  const rope::Rotary<float, 128> rot(options);
  std::mt19937_64 rng(37);
  const auto q_in = rope_test::random_vector<float>(tokens * q_heads * d, rng);
  const auto k_in = rope_test::random_vector<float>(tokens * k_heads * d, rng);
  std::vector<float> q = q_in, k = k_in, q2 = q_in;
  const std::vector<float> q_norm_weight(d, 1.25f), k_norm_weight(d, 0.75f);
  std::vector<Eigen::half> cache(rows * k_heads * d);
  const std::int64_t positions[tokens] = {10, 11};
  const std::int64_t slot[tokens] = {3, 4};
  // [api: qk norm]
  // Qwen3: RMSNorm of each query and key head (its q_norm and k_norm weights, rms_norm_eps),
  // then RoPE, in one pass over q and k in place.
  const rope::Norm<float> q_norm{rope::NormKind::rms, q_norm_weight.data(), d, 1e-6};
  const rope::Norm<float> k_norm{rope::NormKind::rms, k_norm_weight.data(), d, 1e-6};
  const auto q_view = rope::View<float>::contiguous(q.data(), tokens, q_heads, d);
  const auto k_view = rope::View<float>::contiguous(k.data(), tokens, k_heads, d);
  rot.apply_qk(rope::Queries(q_view).normalized(q_norm), rope::Keys(k_view).normalized(k_norm),
               positions);
  // The same with the keys written into a half cache at their slots.
  const auto q2_view = rope::View<float>::contiguous(q2.data(), tokens, q_heads, d);
  const rope::KeyCache<Eigen::half> half_cache{
      rope::View<Eigen::half>::contiguous(cache.data(), rows, k_heads, d), {slot, tokens}};
  rot.apply_qk(
      rope::Queries(q2_view).normalized(q_norm),
      rope::Keys(rope::View<const float>::contiguous(k_in.data(), tokens, k_heads, d), half_cache)
          .normalized(k_norm),
      positions);
  // Llama 4: an L2 norm of each rotated head, no weight: {rope::NormKind::l2_after, nullptr, 0,
  // rms_norm_eps} for both.
  // [api: qk norm end]
  // Both: bit for bit normalize_heads, then apply_qk (then the conversion into the cache).
  std::vector<float> q_sep = q_in, k_sep = k_in;
  const auto q_sep_view = rope::View<float>::contiguous(q_sep.data(), tokens, q_heads, d);
  const auto k_sep_view = rope::View<float>::contiguous(k_sep.data(), tokens, k_heads, d);
  rope::normalize_heads(q_sep_view, d, q_norm);
  rope::normalize_heads(k_sep_view, d, k_norm);
  rot.apply_qk(q_sep_view, k_sep_view, positions);
  REQUIRE(q == q_sep);
  REQUIRE(k == k_sep);
  REQUIRE(q2 == q_sep);
  for (std::size_t t = 0; t < tokens; ++t) {
    for (std::size_t i = 0; i < k_heads * d; ++i) {
      const Eigen::half want(k_sep[t * k_heads * d + i]);
      REQUIRE(std::memcmp(&cache[std::size_t(slot[t]) * k_heads * d + i], &want, 2) == 0);
    }
  }
}

TEST_CASE("api.md: views that know their buffer's length", "[api]") {
  constexpr std::size_t tokens = 3, q_heads = 8, kv_heads = 2, d = 64;
  const rope::Rotary<float, 64> rot;
  std::mt19937_64 rng(41);
  constexpr std::size_t row = (q_heads + 2 * kv_heads) * d;
  const auto keys_in = rope_test::random_vector<float>(tokens * kv_heads * d, rng);
  const auto qkv_in = rope_test::random_vector<float>(tokens * row, rng);
  std::vector<float> keys = keys_in, qkv = qkv_in;
  const std::int64_t positions[tokens] = {4, 5, 6};
  // [api: buffer size]
  // The keys of a vector, and k inside a fused [tokens][(q_heads + 2·kv_heads)·d] buffer: both
  // views know how many elements their buffers hold from their first.
  const auto k_view = rope::View<float>::contiguous(keys, tokens, kv_heads, d);
  const auto k_in_qkv = rope::View<float>(qkv.data() + q_heads * d, tokens, kv_heads, row, d)
                            .within(qkv.size() - q_heads * d);
  rot.apply(k_view, positions);
  rot.apply(k_in_qkv, positions);
  // Given q's head count by mistake, k's heads would end past qkv: std::invalid_argument,
  // "src needs ... elements from its first, but its buffer holds ...", and nothing written.

  REQUIRE(k_view.buffer_size() == keys.size());
  REQUIRE(k_in_qkv.buffer_size() == qkv.size() - q_heads * d);
  const std::vector<float> rotated = qkv;
  rope_test::require_invalid(
      [&] {
        rot.apply(rope::View<float>(qkv.data() + q_heads * d, tokens, q_heads, row, d)
                      .within(qkv.size() - q_heads * d),
                  positions);
      },
      {"src needs 2048 elements from its first, but its buffer holds 1792"});
  REQUIRE(qkv == rotated);
  // Both rotated as views without a length rotate them.
  std::vector<float> keys_plain = keys_in, qkv_plain = qkv_in;
  rot.apply(keys_plain.data(), tokens, kv_heads, positions);
  rot.apply(rope::View<float>(qkv_plain.data() + q_heads * d, tokens, kv_heads, row, d), positions);
  REQUIRE(keys == keys_plain);
  REQUIRE(qkv == qkv_plain);
}
