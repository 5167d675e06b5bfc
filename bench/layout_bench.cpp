// The benchmark suite: rope's kernels against the memory-bandwidth limit and the scalar loop, over
// the shapes of real models, both layouts, four element types, in place, out of place, fused
// q+k, two threads, streaming stores and context shifts.
//
// Cost model, per element rotated: one load and one store of T (2·sizeof(T) bytes), plus the
// token's table row (read once for all heads of the token); 3 flops (a pair takes 4 multiplies
// and 2 additions). At 3 flops per 8 bytes (float) RoPE is bound by memory bandwidth, so the
// yardstick, "the limit", is a vectorised pass over the same bytes: x[i] *= k in place, a copy
// loop out of place. glibc memcpy and a streaming-store copy are shown beside them; memcpy is
// erratic at small sizes on shared virtual machines, so no ratio is taken against it.
//
// Benchmark names are kernel[/layout]/dtype/shape, e.g. apply/half_split/float/d128x40/t512.
// The summary table at the end takes the median of the repetitions and divides times of the
// same run; bench/plot_performance.py draws the same ratios from --benchmark_out JSON.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include <Eigen/Core>
#include <benchmark/benchmark.h>

#include <rope/detail/packet.hpp>
#include <rope/detail/quantize.hpp>
#include <rope/rope.hpp>

#include "buffers.hpp"
#include "scalar_kernels.hpp"
#if defined(__AVX512FP16__)
#include <immintrin.h>
#endif
#include <sys/resource.h>
#include <unistd.h>

namespace {

using rope::Layout;

// Llama 3 8B (32 query + 8 key heads of 128) from a decode step to a long prefill; a small-head
// and a large-head model at 512 tokens. 8192 tokens (160 MiB of float) is beyond the last-level
// caches of current servers for the 16-bit types too; it has only the calls that memory bounds.
struct Shape {
  std::size_t head_size, q_heads, k_heads, tokens;
  std::size_t heads() const { return q_heads + k_heads; }
  std::size_t elements() const { return tokens * heads() * head_size; }
  std::string name() const {
    return "d" + std::to_string(head_size) + "x" + std::to_string(heads()) + "/t" +
           std::to_string(tokens);
  }
};
const Shape kShapes[] = {{128, 32, 8, 1},    {128, 32, 8, 16},   {128, 32, 8, 512},
                         {128, 32, 8, 4096}, {128, 32, 8, 8192}, {64, 32, 0, 512},
                         {256, 8, 0, 512}};
constexpr std::size_t kBeyondCacheTokens = 8192;
const Layout kLayouts[] = {Layout::interleaved, Layout::half_split};
// Ministral 3's query scale (its 32 query + 8 key heads of 128 are the d128x40 shapes).
const rope::QueryScale kQueryScale = rope::Llama4Scaling{0.1, 16384};
constexpr std::size_t kTablePositions = 8192;
constexpr std::int64_t kDecodePosition = 4000;

template <class T>
const char* type_name() {
  if constexpr (std::is_same_v<T, float>) return "float";
  if constexpr (std::is_same_v<T, double>) return "double";
  if constexpr (std::is_same_v<T, Eigen::half>) return "half";
  return "bfloat16";
}

using bench::Buffer;
using bench::filled;

// One token at a decode position, or a prefill at positions 0 .. tokens-1.
std::vector<std::int64_t> positions_for(const Shape& shape) {
  return bench::positions_for(shape.tokens, kDecodePosition);
}

// Bytes a pass reads and writes (each element once each way), elements rotated.
template <class T>
void count(benchmark::State& state, const Shape& shape) {
  const auto n = std::int64_t(shape.elements());
  state.SetBytesProcessed(state.iterations() * 2 * n * std::int64_t(sizeof(T)));
  state.SetItemsProcessed(state.iterations() * n);
}

// Calls f(std::integral_constant<int, d>) for the head sizes of kShapes.
template <class F>
void with_head_size(std::size_t d, const F& f) {
  if (d == 64) f(std::integral_constant<int, 64>{});
  if (d == 128) f(std::integral_constant<int, 128>{});
  if (d == 256) f(std::integral_constant<int, 256>{});
}

template <class T, int D>
rope::Rotary<T, D> make_rotary(Layout layout, std::size_t head_size = 0) {
  rope::Options options;
  options.layout = layout;
  options.head_size = head_size;  // 0: D
  options.max_positions = kTablePositions;
  return rope::Rotary<T, D>(options);
}

// --- baselines -------------------------------------------------------------------------------

// The in-place limit: read and write every element once, x[i] *= k, vectorised by Eigen (in
// float for the 16-bit types: the same bytes, and Eigen's 16-bit products are not vectorised).
template <class T>
void limit_in_place(benchmark::State& state, Shape shape) {
  using C = rope::compute_t<T>;
  const std::size_t n = shape.elements() * sizeof(T) / sizeof(C);
  Buffer<C> x = filled<C>(n, 1);
  Eigen::Map<Eigen::Array<C, Eigen::Dynamic, 1>> a(x.data(), Eigen::Index(n));
  C k = 1;
  benchmark::DoNotOptimize(k);  // the compiler may not drop the multiply by a known 1
  for (auto _ : state) {
    a *= k;
    benchmark::ClobberMemory();
  }
  count<T>(state, shape);
}

// The out-of-place limit: a vectorised copy loop over the same bytes.
template <class T>
void limit_copy(benchmark::State& state, Shape shape) {
  const std::size_t n = shape.elements() * sizeof(T) / sizeof(float);
  const Buffer<float> src = filled<float>(n, 1);
  Buffer<float> dst(n);
  using Array = Eigen::Array<float, Eigen::Dynamic, 1>;
  for (auto _ : state) {
    Eigen::Map<Array>(dst.data(), Eigen::Index(n)) =
        Eigen::Map<const Array>(src.data(), Eigen::Index(n));
    benchmark::ClobberMemory();
  }
  count<T>(state, shape);
}

// For Eigen::half and bfloat16, the in-place limit of a kernel that computes in float: widen each
// register of 16-bit values, multiply by k, round back; the same conversions rope's 16-bit
// kernels do, and nothing else.
template <class T>
void convert_in_place(benchmark::State& state, Shape shape) {
  namespace simd = rope::detail::simd;
  // The registers the kernels use for T: one of float, or a Split of two (bfloat16 on AVX2 and
  // AVX-512).
  using P = rope::detail::ValueRegister<T>;
  constexpr std::size_t L = std::size_t(rope::detail::Registers<T>::kValues);
  const std::size_t n = shape.elements();
  Buffer<T> x = filled<T>(n, 1);
  std::vector<float> ones(L, 1.0F);
  benchmark::DoNotOptimize(ones.data());
  const P kk = simd::load<P>(ones.data());
  const float k = ones[0];
  for (auto _ : state) {
    std::size_t i = 0;
    for (; i + L <= n; i += L)
      simd::store(x.data() + i, simd::mul(simd::load<P>(x.data() + i), kk));
    for (; i < n; ++i) x[i] = T(float(x[i]) * k);
    benchmark::ClobberMemory();
  }
  count<T>(state, shape);
}

// The 16-bit kernels' own arithmetic over the same elements, without the table's rows or the
// loop over heads: widen, rotate by one angle held in registers with the kernels' operations (the
// product and fused multiply-adds of half_split's pairs of registers, or interleaved's turn of
// each register of pairs), narrow. Its time over convert_in_place's is what the rotation's
// arithmetic adds to the conversions; a kernel's time over its own is what the rest adds.
template <class T>
void rotate_convert_in_place(benchmark::State& state, Layout layout, Shape shape) {
  namespace simd = rope::detail::simd;
  using R = rope::detail::Registers<T>;
  using P = typename R::Values;
  using Z = typename R::Pairs;
  constexpr std::size_t L = std::size_t(R::kValues);      // values in a register of P
  constexpr std::size_t LZ = 2 * std::size_t(R::kPairs);  // and of Z
  const std::size_t n = shape.elements();
  Buffer<T> x = filled<T>(n, 1);
  const float c = std::cos(0.5F), s = std::sin(0.5F);
  std::vector<float> cs(L + LZ), sines(L, s);
  for (std::size_t i = 0; i < L; ++i) cs[i] = c;
  for (std::size_t i = 0; i < LZ; i += 2) cs[L + i] = c, cs[L + i + 1] = s;  // [c s c s ..]
  benchmark::DoNotOptimize(cs.data());
  benchmark::DoNotOptimize(sines.data());
  const P cos_p = simd::load<P>(cs.data()), sin_p = simd::load<P>(sines.data());
  const auto e = simd::prepare(simd::load<Z>(cs.data() + L), false);
  for (auto _ : state) {
    T* y = x.data();
    if (layout == Layout::half_split) {
      for (std::size_t i = 0; i + 2 * L <= n; i += 2 * L) {
        const P a = simd::load<P>(y + i), b = simd::load<P>(y + i + L);
        simd::store(y + i, simd::nmadd(b, sin_p, simd::mul(a, cos_p)));
        simd::store(y + i + L, simd::madd(a, sin_p, simd::mul(b, cos_p)));
      }
    } else {
      for (std::size_t i = 0; i + LZ <= n; i += LZ)
        simd::store(y + i, simd::turn(simd::load<Z>(y + i), e));
    }
    benchmark::ClobberMemory();
  }
  count<T>(state, shape);
}

#if defined(__AVX512FP16__)
// convert_in_place for Eigen::half with AVX512-FP16's own conversions (vcvtph2psx, vcvtps2phx)
// instead of F16C's (vcvtph2ps, vcvtps2ph, what the kernels use): the same widen, multiply and
// narrow, to show whether the newer instructions would make the 16-bit kernels faster.
void convert_in_place_avx512fp16(benchmark::State& state, Shape shape) {
  const std::size_t n = shape.elements();
  Buffer<Eigen::half> x = filled<Eigen::half>(n, 1);
  float one = 1.0F;
  benchmark::DoNotOptimize(one);
  const __m512 k = _mm512_set1_ps(one);
  for (auto _ : state) {
    std::size_t i = 0;
    for (; i + 16 <= n; i += 16) {
      auto* at = reinterpret_cast<__m256h*>(x.data() + i);
      _mm256_storeu_ph(at,
                       _mm512_cvtxps_ph(_mm512_mul_ps(_mm512_cvtxph_ps(_mm256_loadu_ph(at)), k)));
    }
    for (; i < n; ++i) x[i] = Eigen::half(float(x[i]) * one);
    benchmark::ClobberMemory();
  }
  count<Eigen::half>(state, shape);
}
#endif

// A copy loop with non-temporal stores: what streaming stores can gain on DRAM-sized buffers.
template <class T>
void stream_copy(benchmark::State& state, Shape shape) {
  namespace simd = rope::detail::simd;
  const std::size_t n = shape.elements() * sizeof(T) / sizeof(float);
  const Buffer<float> src = filled<float>(n, 1);
  Buffer<float> dst(n);
  for (auto _ : state) {
    simd::stream_copy(dst.data(), src.data(), n * sizeof(float));
    simd::fence();
    benchmark::ClobberMemory();
  }
  count<T>(state, shape);
}

template <class T>
void glibc_memcpy(benchmark::State& state, Shape shape) {
  const Buffer<T> src = filled<T>(shape.elements(), 1);
  Buffer<T> dst(shape.elements());
  for (auto _ : state) {
    std::memcpy(dst.data(), src.data(), shape.elements() * sizeof(T));
    benchmark::ClobberMemory();
  }
  count<T>(state, shape);
}

// rope::reference's loops, not auto-vectorised, reading separate cos and sin tables.
template <class T>
void scalar(benchmark::State& state, Layout layout, Shape shape) {
  const std::size_t d = shape.head_size, h = d / 2;
  Buffer<T> x = filled<T>(shape.elements(), 1);
  const auto positions = positions_for(shape);
  Buffer<T> cos(kTablePositions * h), sin(cos.size());
  with_head_size(d, [&](auto dim) {
    const auto rot = make_rotary<T, decltype(dim)::value>(Layout::half_split);  // rows [cos|sin]
    for (std::size_t m = 0; m < kTablePositions; ++m) {
      std::copy_n(rot.table().row(m), h, cos.data() + m * h);
      std::copy_n(rot.table().row(m) + h, h, sin.data() + m * h);
    }
  });
  for (auto _ : state) {
    rope_bench::scalar_apply(layout, x.data(), shape.tokens, shape.heads(), d, positions.data(),
                             cos.data(), sin.data());
    benchmark::ClobberMemory();
  }
  count<T>(state, shape);
}

// What a first Eigen version writes, one head at a time with public expressions: the
// interleaved pairs as complex numbers times e^{iφ}; the half_split halves as arrays, in blocks
// of 64 bytes loaded before they are overwritten. rope's kernels replaced these (docs/design.md).
template <class T, int D>
void eigen_expression_loop(const rope::Rotary<T, D>& rot, Layout layout, const Shape& shape, T* x,
                           const std::vector<std::int64_t>& positions) {
  constexpr Eigen::Index kHalf = D / 2, kBlock = 64 / sizeof(T);
  using Pairs = Eigen::Array<std::complex<T>, kHalf, 1>;
  using Block = Eigen::Array<T, kBlock, 1>;
  for (std::size_t t = 0; t < shape.tokens; ++t) {
    const T* row = rot.table().row(std::size_t(positions[t]));
    for (std::size_t h = 0; h < shape.heads(); ++h) {
      T* head = x + (t * shape.heads() + h) * D;
      if (layout == Layout::interleaved) {
        Eigen::Map<Pairs> z(reinterpret_cast<std::complex<T>*>(head));
        z *= Eigen::Map<const Pairs>(reinterpret_cast<const std::complex<T>*>(row));
      } else {
        for (Eigen::Index j = 0; j < kHalf; j += kBlock) {
          const Block a = Block::Map(head + j), b = Block::Map(head + kHalf + j);
          const Block c = Block::Map(row + j), s = Block::Map(row + kHalf + j);
          Block::Map(head + j) = a * c - b * s;
          Block::Map(head + kHalf + j) = b * c + a * s;
        }
      }
    }
  }
}

template <class T>
void eigen_expression(benchmark::State& state, Layout layout, Shape shape) {
  Buffer<T> x = filled<T>(shape.elements(), 1);
  const auto positions = positions_for(shape);
  with_head_size(shape.head_size, [&](auto dim) {
    const auto rot = make_rotary<T, decltype(dim)::value>(layout);
    for (auto _ : state) {
      eigen_expression_loop(rot, layout, shape, x.data(), positions);
      benchmark::ClobberMemory();
    }
  });
  count<T>(state, shape);
}

// What Execution::threads pays per extra thread without OpenMP: start and join a std::thread.
void std_thread_start_join(benchmark::State& state) {
  for (auto _ : state) {
    std::thread thread([] {});
    thread.join();
  }
}

// --- rope --------------------------------------------------------------------------------------

// How a rope benchmark calls the library.
enum class Call {
  in_place,
  out_of_place,
  qk,
  two_threads,
  two_threads_unthrottled,
  streaming,
  shift,
  run_time_dim,               // apply in place by Rotary<T, Eigen::Dynamic>
  run_time_dim_out_of_place,  // and out of place
  qk_scaled,                  // apply_qk with Ministral 3's query scale, one pass
  qk_then_scale,              // apply_qk, then scale_queries: the two passes it replaces
};

const char* call_name(Call call) {
  switch (call) {
    case Call::in_place:
      return "apply";
    case Call::out_of_place:
      return "apply_out_of_place";
    case Call::qk:
      return "apply_qk";
    case Call::two_threads:
      return "apply_2_threads";
    case Call::two_threads_unthrottled:
      return "apply_2_threads_unthrottled";
    case Call::streaming:
      return "apply_streaming";
    case Call::shift:
      return "shift";
    case Call::run_time_dim:
      return "apply_run_time_d";
    case Call::run_time_dim_out_of_place:
      return "apply_run_time_d_out_of_place";
    case Call::qk_scaled:
      return "apply_qk_scaled";
    case Call::qk_then_scale:
      return "apply_qk_then_scale";
  }
  return "";
}

template <class T>
void rope_kernel(benchmark::State& state, Call call, Layout layout, Shape shape) {
  const std::size_t d = shape.head_size, tokens = shape.tokens;
  Buffer<T> x = filled<T>(shape.elements(), 1), y(shape.elements());
  const auto positions = positions_for(shape);
  rope::Execution execution;
  if (call == Call::two_threads || call == Call::two_threads_unthrottled) execution.threads = 2;
  if (call == Call::two_threads_unthrottled) execution.min_bytes_per_thread = 1;
  execution.streaming_stores = call == Call::streaming;
  // q and k as the separate tensors of an engine: [tokens][q_heads][d] and [tokens][k_heads][d].
  const auto q = rope::View<T>::contiguous(x.data(), tokens, shape.q_heads, d);
  const auto k =
      rope::View<T>::contiguous(x.data() + tokens * shape.q_heads * d, tokens, shape.k_heads, d);
  const auto run = [&](const auto& rot) {
    for (auto _ : state) {
      switch (call) {
        case Call::out_of_place:
        case Call::run_time_dim_out_of_place:
        case Call::streaming:
          rot.apply(rope::View<const T>::contiguous(x.data(), tokens, shape.heads(), d),
                    rope::View<T>::contiguous(y.data(), tokens, shape.heads(), d), positions.data(),
                    execution);
          break;
        case Call::qk:
          rot.apply_qk(q, k, positions.data());
          break;
        case Call::qk_scaled:
          rot.apply_qk(rope::Queries(q).scaled(kQueryScale), rope::Keys(k), positions.data());
          break;
        case Call::qk_then_scale:
          rot.apply_qk(q, k, positions.data());
          rope::scale_queries(q, d, positions.data(), kQueryScale);
          break;
        case Call::shift:  // a context shift of every token by the same delta
          rot.shift(rope::View<T>::contiguous(x.data(), tokens, shape.heads(), d), -3);
          break;
        default:
          rot.apply(x.data(), tokens, shape.heads(), positions.data(), execution);
      }
      benchmark::ClobberMemory();
    }
  };
  if (call == Call::run_time_dim || call == Call::run_time_dim_out_of_place) {
    run(make_rotary<T, Eigen::Dynamic>(layout, d));
  } else {
    with_head_size(d, [&](auto dim) { run(make_rotary<T, decltype(dim)::value>(layout)); });
  }
  count<T>(state, shape);
}

// The cost of the argument checks (docs/errors.md): q and k inside a fused
// [tokens][32 + 8 + 8 heads][128] QKV buffer, whose extents interleave, so that the overlap check
// walks one token's heads; checked, and with rope::unchecked.
void fused_qk(benchmark::State& state, bool checked, std::size_t tokens) {
  constexpr std::size_t d = 128, q_heads = 32, kv_heads = 8, row = (q_heads + 2 * kv_heads) * d;
  Buffer<float> qkv = filled<float>(tokens * row, 1);
  std::vector<std::int64_t> positions(tokens);
  for (std::size_t t = 0; t < tokens; ++t) positions[t] = std::int64_t(tokens == 1 ? 100 : t);
  const auto rot = make_rotary<float, 128>(Layout::half_split);
  const rope::View<float> q(qkv.data(), tokens, q_heads, row, d);
  const rope::View<float> k(qkv.data() + q_heads * d, tokens, kv_heads, row, d);
  for (auto _ : state) {
    if (checked) {
      rot.apply_qk(q, k, positions.data());
    } else {
      rot.apply_qk(rope::unchecked, rope::Queries(q), rope::Keys(k), positions.data(),
                   rope::TokenRange{0, tokens});
    }
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(std::int64_t(state.iterations()) *
                          std::int64_t(2 * tokens * (q_heads + kv_heads) * d * sizeof(float)));
}

// Keys into a KV cache (Qwen3-8B's attention: 32 query + 8 key heads of 128): the queries rotated
// in place and the keys written rotated into a half cache at one slot per token, from float or
// bfloat16 activations. Per token: q read and written (32·128 values of T), k read (8·128 of T),
// 8·128 halves written to the cache row.
//   fused     apply_qk(q, q, k, KeyCache<half>{cache, slots}, positions): one pass;
//   separate  the passes a user writes with this library: apply_qk(q, k) in place, then each
//             key row converted to half into its slot (vectorised, as the kernels convert);
//   limit     the fused pass's bytes with the least work: x *= 1 over q's bytes (as float), and
//             each key row into its slot by the cheapest pass that reads the keys and writes the
//             row: a narrowing conversion from float (one instruction per register), a copy from
//             bfloat16 (the same size).
//   fused_unchecked  the fused pass with rope::unchecked: what the checks cost.
// kv_cache_norm_* adds Qwen3's QK-norm (RMSNorm of each head, a weight of 128, before RoPE): fused
// into the same call, and as two more separate passes (normalize_heads on q, then on k) before
// apply_qk. The limit is the same bytes.
// The slots are a permutation of the cache's first rows, as a paged cache gives them.
// kv_append only: keys_then_values, the fused call for q and k, then the values' pass alone.
enum class KvPass { fused, fused_unchecked, separate, limit, keys_then_values };
constexpr std::size_t kKvHeadSize = 128, kKvQueryHeads = 32, kKvKeyHeads = 8;

// A limit pass's work on one token's float activations, the least that reads and writes them:
// q (q_count values) multiplied by one in place, a and b read and summed in registers (b may be
// none).
void touch_token(float one, float* q, std::size_t q_count, const float* a, std::size_t a_count,
                 const float* b = nullptr, std::size_t b_count = 0) {
  using FloatArray = Eigen::Array<float, Eigen::Dynamic, 1>;
  Eigen::Map<FloatArray>(q, Eigen::Index(q_count)) *= one;
  float sum = Eigen::Map<const FloatArray>(a, Eigen::Index(a_count)).sum();
  if (b != nullptr) sum += Eigen::Map<const FloatArray>(b, Eigen::Index(b_count)).sum();
  benchmark::DoNotOptimize(sum);
}

template <class T>
void kv_cache(benchmark::State& state, KvPass pass, Layout layout, std::size_t tokens, bool norm) {
  using Half = Eigen::half;
  constexpr std::size_t d = kKvHeadSize, q_row = kKvQueryHeads * d, k_row = kKvKeyHeads * d;
  const std::size_t cache_rows = 2 * tokens + 64;
  Buffer<T> q = filled<T>(tokens * q_row, 1);
  const Buffer<T> k = filled<T>(tokens * k_row, 2);
  Buffer<Half> cache(cache_rows * k_row, Half(0));
  std::vector<std::int64_t> slots(tokens);
  for (std::size_t t = 0; t < tokens; ++t) slots[t] = std::int64_t((t * 7 + 3) % cache_rows);
  const std::vector<std::int64_t> positions = bench::positions_for(tokens, kDecodePosition);
  const auto rot = make_rotary<T, 128>(layout);
  const auto q_view = rope::View<T>::contiguous(q.data(), tokens, kKvQueryHeads, d);
  const auto k_view = rope::View<const T>::contiguous(k.data(), tokens, kKvKeyHeads, d);
  const rope::KeyCache<Half> to{
      rope::View<Half>::contiguous(cache.data(), cache_rows, kKvKeyHeads, d),
      rope::Slots(slots.data(), tokens)};
  // Qwen3's QK-norm: RMSNorm of each head with a weight of 128, ε = 1e-6. Weights of 1, so that
  // q, normalised in place at every iteration, keeps its scale (other weights shrink some of its
  // coordinates at each iteration, into subnormals); the arithmetic is the same for any weight.
  const Buffer<T> q_weight(d, T(1)), k_weight(d, T(1));
  const struct {
    rope::Norm<T> q, k;
  } norms{{rope::NormKind::rms, q_weight.data(), d, 1e-6},
          {rope::NormKind::rms, k_weight.data(), d, 1e-6}};
  Buffer<T> k_work = k;  // the separate passes rotate the keys in place
  const auto k_work_view = rope::View<T>::contiguous(k_work.data(), tokens, kKvKeyHeads, d);
  using FloatArray = Eigen::Array<float, Eigen::Dynamic, 1>;
  float one = 1;  // the compiler may not drop the multiplies by a known 1
  benchmark::DoNotOptimize(one);
  for (auto _ : state) {
    switch (pass) {
      case KvPass::fused:
        if (norm) {
          rot.apply_qk(rope::Queries(q_view, q_view).normalized(norms.q),
                       rope::Keys(k_view, to).normalized(norms.k), positions.data());
        } else {
          rot.apply_qk(rope::Queries(q_view, q_view), rope::Keys(k_view, to), positions.data());
        }
        break;
      case KvPass::fused_unchecked:
        if (norm) {
          rot.apply_qk(rope::unchecked, rope::Queries(q_view, q_view).normalized(norms.q),
                       rope::Keys(k_view, to).normalized(norms.k), positions.data());
        } else {
          rot.apply_qk(rope::unchecked, rope::Queries(q_view, q_view), rope::Keys(k_view, to),
                       positions.data());
        }
        break;
      case KvPass::separate:
        if (norm) {
          rope::normalize_heads(q_view, d, norms.q);
          rope::normalize_heads(k_work_view, d, norms.k);
        }
        rot.apply_qk(q_view, k_work_view, positions.data());
        for (std::size_t t = 0; t < tokens; ++t) {
          rope::detail::convert_values(k_work.data() + t * k_row,
                                       cache.data() + std::size_t(slots[t]) * k_row, k_row);
        }
        break;
      case KvPass::keys_then_values:  // kv_append only
        break;
      case KvPass::limit:
        for (std::size_t t = 0; t < tokens; ++t) {
          Eigen::Map<FloatArray>(reinterpret_cast<float*>(q.data() + t * q_row),
                                 Eigen::Index(q_row * sizeof(T) / sizeof(float))) *= one;
          Half* row = cache.data() + std::size_t(slots[t]) * k_row;
          if constexpr (std::is_same_v<T, float>) {
            rope::detail::convert_values(k.data() + t * k_row, row, k_row);
          } else {
            std::memcpy(static_cast<void*>(row), k.data() + t * k_row, k_row * sizeof(Half));
          }
        }
        break;
    }
    benchmark::ClobberMemory();
  }
  // Bytes read and written by the fused pass.
  const std::size_t bytes =
      tokens * (2 * q_row * sizeof(T) + k_row * sizeof(T) + k_row * sizeof(Half));
  state.SetBytesProcessed(std::int64_t(state.iterations()) * std::int64_t(bytes));
  state.SetItemsProcessed(std::int64_t(state.iterations()) *
                          std::int64_t(tokens * (q_row + k_row)));
}

// The scales a cache of E takes in these benchmarks: fp8 a tensor scale of 0.05, int8 the
// array `per_row`, others none.
template <class E>
rope::CacheScales bench_scales(std::vector<float>& per_row) {
  if constexpr (std::is_same_v<E, std::int8_t>) {
    return rope::CacheScales::rows(per_row.data(), per_row.size());
  } else if constexpr (std::is_same_v<E, rope::Float8E4M3> || std::is_same_v<E, rope::Float8E5M2>) {
    return rope::CacheScales::tensor(0.05);
  } else {
    return {};
  }
}

// Keys into a quantised cache (Qwen3-8B's attention as kv_cache above, float activations,
// half_split): the queries rotated in place and the keys rotated in float and quantised into
// their slot's row, fp8 E4M3 (a scale for the tensor), int8 (a scale per head) or ggml's q8_0 and
// q4_0 blocks.
//   fused     apply_qk(Queries(q), Keys(k, KeyCache<K>{rows, slots, scales})): one pass;
//   separate  the passes it replaces: apply_qk(q, k) in place, then each key row quantised into
//             its slot by the same quantiser (rope::detail's, the one the fused pass calls);
//   limit     the same bytes with the least work: x *= 1 over q, each key row read (summed in
//             registers), the cache row's bytes written (a memset).
template <class K>
void kv_quantized(benchmark::State& state, KvPass pass, std::size_t tokens) {
  constexpr std::size_t d = kKvHeadSize, q_row = kKvQueryHeads * d, k_row = kKvKeyHeads * d;
  constexpr std::size_t per = rope::values_per_element_v<K>;
  constexpr std::size_t row_bytes = k_row / per * sizeof(K);
  const std::size_t cache_rows = 2 * tokens + 64;
  Buffer<float> q = filled<float>(tokens * q_row, 1);
  const Buffer<float> k = filled<float>(tokens * k_row, 2);
  Buffer<K> cache(cache_rows * k_row / per);
  std::vector<float> row_scales(cache_rows * kKvKeyHeads);
  std::vector<std::int64_t> slots(tokens);
  for (std::size_t t = 0; t < tokens; ++t) slots[t] = std::int64_t((t * 7 + 3) % cache_rows);
  const std::vector<std::int64_t> positions = bench::positions_for(tokens, kDecodePosition);
  const auto rot = make_rotary<float, 128>(Layout::half_split);
  const auto q_view = rope::View<float>::contiguous(q.data(), tokens, kKvQueryHeads, d);
  const auto k_view = rope::View<const float>::contiguous(k.data(), tokens, kKvKeyHeads, d);
  const rope::CacheScales scales = bench_scales<K>(row_scales);
  const rope::KeyCache<K> to{
      rope::View<K>::contiguous(cache.data(), cache_rows, kKvKeyHeads, d / per),
      rope::Slots(slots.data(), tokens), scales};
  const rope::detail::QuantizeJob quantize = rope::detail::quantize_job<K>(scales, d, kKvKeyHeads);
  Buffer<float> k_work = k;
  const auto k_work_view = rope::View<float>::contiguous(k_work.data(), tokens, kKvKeyHeads, d);
  float one = 1;
  benchmark::DoNotOptimize(one);
  auto* bytes = reinterpret_cast<unsigned char*>(cache.data());
  for (auto _ : state) {
    switch (pass) {
      case KvPass::fused:
        rot.apply_qk(rope::Queries(q_view), rope::Keys(k_view, to), positions.data());
        break;
      case KvPass::fused_unchecked:
        rot.apply_qk(rope::unchecked, rope::Queries(q_view), rope::Keys(k_view, to),
                     positions.data());
        break;
      case KvPass::separate:
        rot.apply_qk(q_view, k_work_view, positions.data());
        for (std::size_t t = 0; t < tokens; ++t) {
          const std::size_t r = std::size_t(slots[t]);
          quantize.store(quantize, k_work.data() + t * k_row, kKvKeyHeads, bytes + r * row_bytes,
                         row_bytes / kKvKeyHeads, r);
        }
        break;
      case KvPass::keys_then_values:  // kv_append only
        break;
      case KvPass::limit:
        for (std::size_t t = 0; t < tokens; ++t) {
          touch_token(one, q.data() + t * q_row, q_row, k.data() + t * k_row, k_row);
          std::memset(bytes + std::size_t(slots[t]) * row_bytes, int(t & 0x7F), row_bytes);
        }
        break;
    }
    benchmark::ClobberMemory();
  }
  const std::size_t moved =
      tokens * (2 * q_row * sizeof(float) + k_row * sizeof(float) + row_bytes);
  state.SetBytesProcessed(std::int64_t(state.iterations()) * std::int64_t(moved));
  state.SetItemsProcessed(std::int64_t(state.iterations()) *
                          std::int64_t(tokens * (q_row + k_row)));
}

// The quantiser alone (what bounds kv_quantized and kv_append): each key row of float quantised
// into its slot's row of K by the function the fused pass calls, nothing rotated.
template <class K>
void quantize_rows(benchmark::State& state, std::size_t tokens) {
  constexpr std::size_t d = kKvHeadSize, k_row = kKvKeyHeads * d;
  constexpr std::size_t row_bytes = k_row / rope::values_per_element_v<K> * sizeof(K);
  const std::size_t cache_rows = 2 * tokens + 64;
  Buffer<float> k = filled<float>(tokens * k_row, 2);
  Buffer<K> cache(cache_rows * k_row / rope::values_per_element_v<K>);
  std::vector<float> row_scales(cache_rows * kKvKeyHeads);
  const rope::CacheScales scales = bench_scales<K>(row_scales);
  const rope::detail::QuantizeJob quantize = rope::detail::quantize_job<K>(scales, d, kKvKeyHeads);
  auto* bytes = reinterpret_cast<unsigned char*>(cache.data());
  for (auto _ : state) {
    for (std::size_t t = 0; t < tokens; ++t) {
      const std::size_t r = (t * 7 + 3) % cache_rows;
      quantize.store(quantize, k.data() + t * k_row, kKvKeyHeads, bytes + r * row_bytes,
                     row_bytes / kKvKeyHeads, r);
    }
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(std::int64_t(state.iterations()) * std::int64_t(tokens * k_row));
}

// A layer's whole cache append (Qwen3-8B's attention, float activations, half_split): q rotated
// in place, k rotated into a cache of K and v written into a cache of V at the same slots:
// half/half (a 16-bit cache), fp8/fp8 (vLLM's fp8 caches, one scale each), q8_0/half (llama.cpp's
// -ctk q8_0 -ctv f16), q8_0/q8_0.
//   fused     apply_qk(Queries(q), Keys(k, KeyCache<K>{...}).with_values(v, ValueCache<V>{...}));
//   fused_unchecked  the same with rope::unchecked: what the checks cost;
//   keys_then_values  the fused call for q and k alone, then the values' pass (as below): what
//             taking the values into the pass saves or costs;
//   separate  the passes it replaces: apply_qk(q, k) in place, each key row into its slot
//             (converted, or quantised by the quantiser the fused pass calls), then each value
//             row alike;
//   limit     the same bytes with the least work: x *= 1 over q, each key and value row read
//             (summed in registers) and its cache row's bytes written (a memset).
template <class E>
struct RowStore {  // one row of kv heads of float into a cache row of E, as the separate passes
  rope::CacheScales scales;
  std::optional<rope::detail::QuantizeJob> quantize;
  RowStore(const rope::CacheScales& s, std::size_t d, std::size_t heads) : scales(s) {
    if constexpr (rope::is_quantized_v<E>) quantize = rope::detail::quantize_job<E>(s, d, heads);
  }
  void operator()(const float* x, E* row, std::size_t count, std::size_t heads,
                  std::size_t r) const {
    if constexpr (rope::is_quantized_v<E>) {
      const std::size_t bytes = count / rope::values_per_element_v<E> * sizeof(E);
      quantize->store(*quantize, x, heads, reinterpret_cast<unsigned char*>(row), bytes / heads, r);
    } else {
      rope::detail::convert_values(x, row, count);
    }
  }
};

template <class K, class V>
void kv_append(benchmark::State& state, KvPass pass, std::size_t tokens) {
  constexpr std::size_t d = kKvHeadSize, q_row = kKvQueryHeads * d, kv_row = kKvKeyHeads * d;
  constexpr std::size_t k_bytes = kv_row / rope::values_per_element_v<K> * sizeof(K);
  constexpr std::size_t v_bytes = kv_row / rope::values_per_element_v<V> * sizeof(V);
  const std::size_t cache_rows = 2 * tokens + 64;
  Buffer<float> q = filled<float>(tokens * q_row, 1);
  const Buffer<float> k = filled<float>(tokens * kv_row, 2);
  const Buffer<float> v = filled<float>(tokens * kv_row, 3);
  Buffer<K> k_cache(cache_rows * kv_row / rope::values_per_element_v<K>);
  Buffer<V> v_cache(cache_rows * kv_row / rope::values_per_element_v<V>);
  std::vector<float> k_scales(cache_rows * kKvKeyHeads), v_scales(k_scales.size());
  std::vector<std::int64_t> slots(tokens);
  for (std::size_t t = 0; t < tokens; ++t) slots[t] = std::int64_t((t * 7 + 3) % cache_rows);
  const std::vector<std::int64_t> positions = bench::positions_for(tokens, kDecodePosition);
  const auto rot = make_rotary<float, 128>(Layout::half_split);
  const auto q_view = rope::View<float>::contiguous(q.data(), tokens, kKvQueryHeads, d);
  const auto k_view = rope::View<const float>::contiguous(k.data(), tokens, kKvKeyHeads, d);
  const auto v_view = rope::View<const float>::contiguous(v.data(), tokens, kKvKeyHeads, d);
  const rope::CacheScales ks = bench_scales<K>(k_scales), vs = bench_scales<V>(v_scales);
  const auto keys_alone = rope::Keys(
      k_view, rope::KeyCache<K>{rope::View<K>::contiguous(k_cache.data(), cache_rows, kKvKeyHeads,
                                                          d / rope::values_per_element_v<K>),
                                rope::Slots(slots.data(), tokens), ks});
  const auto keys = keys_alone.with_values(
      v_view, rope::ValueCache<V>{rope::View<V>::contiguous(v_cache.data(), cache_rows, kKvKeyHeads,
                                                            d / rope::values_per_element_v<V>),
                                  vs});
  const RowStore<K> store_key(ks, d, kKvKeyHeads);
  const RowStore<V> store_value(vs, d, kKvKeyHeads);
  Buffer<float> k_work = k;
  const auto k_work_view = rope::View<float>::contiguous(k_work.data(), tokens, kKvKeyHeads, d);
  float one = 1;
  benchmark::DoNotOptimize(one);
  auto* k_raw = reinterpret_cast<unsigned char*>(k_cache.data());
  auto* v_raw = reinterpret_cast<unsigned char*>(v_cache.data());
  for (auto _ : state) {
    switch (pass) {
      case KvPass::fused:
        rot.apply_qk(rope::Queries(q_view), keys, positions.data());
        break;
      case KvPass::fused_unchecked:
        rot.apply_qk(rope::unchecked, rope::Queries(q_view), keys, positions.data());
        break;
      case KvPass::keys_then_values:
        rot.apply_qk(rope::Queries(q_view), keys_alone, positions.data());
        for (std::size_t t = 0; t < tokens; ++t) {
          const std::size_t r = std::size_t(slots[t]);
          store_value(v.data() + t * kv_row, reinterpret_cast<V*>(v_raw + r * v_bytes), kv_row,
                      kKvKeyHeads, r);
        }
        break;
      case KvPass::separate:
        rot.apply_qk(q_view, k_work_view, positions.data());
        for (std::size_t t = 0; t < tokens; ++t) {
          const std::size_t r = std::size_t(slots[t]);
          store_key(k_work.data() + t * kv_row, reinterpret_cast<K*>(k_raw + r * k_bytes), kv_row,
                    kKvKeyHeads, r);
        }
        for (std::size_t t = 0; t < tokens; ++t) {
          const std::size_t r = std::size_t(slots[t]);
          store_value(v.data() + t * kv_row, reinterpret_cast<V*>(v_raw + r * v_bytes), kv_row,
                      kKvKeyHeads, r);
        }
        break;
      case KvPass::limit:
        for (std::size_t t = 0; t < tokens; ++t) {
          const std::size_t r = std::size_t(slots[t]);
          touch_token(one, q.data() + t * q_row, q_row, k.data() + t * kv_row, kv_row,
                      v.data() + t * kv_row, kv_row);
          std::memset(k_raw + r * k_bytes, int(t & 0x7F), k_bytes);
          std::memset(v_raw + r * v_bytes, int(t & 0x7F), v_bytes);
        }
        break;
    }
    benchmark::ClobberMemory();
  }
  const std::size_t moved =
      tokens * (2 * q_row * sizeof(float) + 2 * kv_row * sizeof(float) + k_bytes + v_bytes);
  state.SetBytesProcessed(std::int64_t(state.iterations()) * std::int64_t(moved));
  state.SetItemsProcessed(std::int64_t(state.iterations()) *
                          std::int64_t(tokens * (q_row + 2 * kv_row)));
}

// DeepSeek-V3's MLA cache append (float activations, interleaved pairs): q_pe (128 heads of 64)
// rotated in place, and one cache row of K per token: the latent (kv_lora_rank 512) then k_pe
// (64) rotated.
//   fused     one apply_qk: Keys(k_pe) into the rows' last 64 values, with_values(latent) into
//             their first 512 (two views of the same rows);
//   separate  apply_qk(q_pe, k_pe) in place, then each token's row: the latent, then k_pe,
//             converted or quantised into it;
//   limit     x *= 1 over q_pe, the latent and k_pe read (summed), the row's bytes written.
template <class K>
void kv_mla(benchmark::State& state, KvPass pass, std::size_t tokens) {
  constexpr std::size_t q_heads = 128, rope_dim = 64, latent = 512, width = latent + rope_dim;
  constexpr std::size_t per = rope::values_per_element_v<K>, row_bytes = width / per * sizeof(K);
  const std::size_t cache_rows = 2 * tokens + 64;
  Buffer<float> q = filled<float>(tokens * q_heads * rope_dim, 1);
  const Buffer<float> k_pe = filled<float>(tokens * rope_dim, 2);
  const Buffer<float> kv = filled<float>(tokens * latent, 3);
  Buffer<K> cache(cache_rows * width / per);
  std::vector<std::int64_t> slots(tokens);
  for (std::size_t t = 0; t < tokens; ++t) slots[t] = std::int64_t((t * 7 + 3) % cache_rows);
  const std::vector<std::int64_t> positions = bench::positions_for(tokens, kDecodePosition);
  const auto rot = make_rotary<float, 64>(Layout::interleaved);
  const auto q_view = rope::View<float>::contiguous(q.data(), tokens, q_heads, rope_dim);
  std::vector<float> no_rows;
  const rope::CacheScales scales = bench_scales<K>(no_rows);
  const rope::View<K> rope_part(cache.data() + latent / per, cache_rows, 1, width / per,
                                rope_dim / per);
  const rope::View<K> latent_part(cache.data(), cache_rows, 1, width / per, latent / per);
  const auto keys =
      rope::Keys(rope::View<const float>::contiguous(k_pe.data(), tokens, 1, rope_dim),
                 rope::KeyCache<K>{rope_part, rope::Slots(slots.data(), tokens), scales})
          .with_values(rope::View<const float>::contiguous(kv.data(), tokens, 1, latent),
                       rope::ValueCache<K>{latent_part, scales, latent});
  const RowStore<K> store_latent(scales, latent, 1), store_rope(scales, rope_dim, 1);
  Buffer<float> k_work = k_pe;
  const auto k_work_view = rope::View<float>::contiguous(k_work.data(), tokens, 1, rope_dim);
  float one = 1;
  benchmark::DoNotOptimize(one);
  auto* raw = reinterpret_cast<unsigned char*>(cache.data());
  for (auto _ : state) {
    switch (pass) {
      case KvPass::fused:
        rot.apply_qk(rope::Queries(q_view), keys, positions.data());
        break;
      case KvPass::separate:
        rot.apply_qk(q_view, k_work_view, positions.data());
        for (std::size_t t = 0; t < tokens; ++t) {
          const std::size_t r = std::size_t(slots[t]);
          unsigned char* row = raw + r * row_bytes;
          store_latent(kv.data() + t * latent, reinterpret_cast<K*>(row), latent, 1, r);
          store_rope(k_work.data() + t * rope_dim,
                     reinterpret_cast<K*>(row + latent / per * sizeof(K)), rope_dim, 1, r);
        }
        break;
      case KvPass::limit:
        for (std::size_t t = 0; t < tokens; ++t) {
          touch_token(one, q.data() + t * q_heads * rope_dim, q_heads * rope_dim,
                      kv.data() + t * latent, latent, k_pe.data() + t * rope_dim, rope_dim);
          std::memset(raw + std::size_t(slots[t]) * row_bytes, int(t & 0x7F), row_bytes);
        }
        break;
      default:  // the other passes are kv_append's
        break;
    }
    benchmark::ClobberMemory();
  }
  const std::size_t moved =
      tokens * (2 * q_heads * rope_dim * sizeof(float) + width * sizeof(float) + row_bytes);
  state.SetBytesProcessed(std::int64_t(state.iterations()) * std::int64_t(moved));
  state.SetItemsProcessed(std::int64_t(state.iterations()) *
                          std::int64_t(tokens * (q_heads * rope_dim + width)));
}

// A layer's cache append into vLLM CPU's pages (Qwen3-8B's attention, float activations,
// half_split, pages of 16 rows): keys into [pages][heads][d / x][16][x] (x: the elements of 16
// bytes), values into [pages][heads][d][16]; one sequence with 1 000 tokens cached before the call,
// its pages shuffled in the block table.
//   fused     apply_qk(Queries(q), Keys(k, KeyCache<E>{pages, Slots::paged(table, first),
//             {}, Coordinates::runs(x, 16x)}).with_values(v, {..., Coordinates::strided(16)}));
//   separate  apply_qk(q, k) in place, then each token's key and value heads converted (or
//             quantised) and copied to their places at the slots vLLM computes from the table (its
//             reshape_and_cache);
//   limit     x *= 1 over q, k and v read (summed), and the cache's bytes at the same places
//             written (a run of x elements of each key, each element of each value).
template <class E>
void kv_paged(benchmark::State& state, KvPass pass, std::size_t tokens) {
  constexpr std::size_t d = kKvHeadSize, heads = kKvKeyHeads, q_row = kKvQueryHeads * d,
                        kv_row = heads * d, block = 16, x = 16 / sizeof(E), cached = 1000;
  const std::size_t pages = (cached + tokens + block - 1) / block + 8;
  Buffer<float> q = filled<float>(tokens * q_row, 1);
  const Buffer<float> k = filled<float>(tokens * kv_row, 2);
  const Buffer<float> v = filled<float>(tokens * kv_row, 3);
  Buffer<E> k_cache(pages * block * kv_row), v_cache(pages * block * kv_row);
  std::vector<std::int32_t> table(pages);
  for (std::size_t p = 0; p < pages; ++p) table[p] = std::int32_t((p * 37 + 11) % pages);
  const std::int32_t first[1] = {std::int32_t(cached)};
  std::vector<std::int64_t> slots(tokens);
  for (std::size_t t = 0; t < tokens; ++t) {
    const std::size_t i = cached + t;
    slots[t] = std::int64_t(table[i / block]) * std::int64_t(block) + std::int64_t(i % block);
  }
  std::vector<std::int64_t> positions(tokens);
  for (std::size_t t = 0; t < tokens; ++t) positions[t] = std::int64_t(cached + t);
  const auto rot = make_rotary<float, 128>(Layout::half_split);
  const auto q_view = rope::View<float>::contiguous(q.data(), tokens, kKvQueryHeads, d);
  const auto k_view = rope::View<const float>::contiguous(k.data(), tokens, heads, d);
  const auto v_view = rope::View<const float>::contiguous(v.data(), tokens, heads, d);
  std::vector<float> no_rows;
  const rope::CacheScales scales = bench_scales<E>(no_rows);
  const rope::View<E> k_pages(k_cache.data(), pages, block, heads, block * kv_row, x, d * block);
  const rope::View<E> v_pages(v_cache.data(), pages, block, heads, block * kv_row, 1, d * block);
  const auto keys =
      rope::Keys(
          k_view,
          rope::KeyCache<E>{k_pages, rope::Slots::paged({table.data(), 1, pages, block}, first),
                            scales, rope::Coordinates::runs(x, x * block)})
          .with_values(v_view,
                       rope::ValueCache<E>{v_pages, scales, 0, rope::Coordinates::strided(block)});
  const RowStore<E> store(scales, d, heads);
  Buffer<float> k_work = k;
  const auto k_work_view = rope::View<float>::contiguous(k_work.data(), tokens, heads, d);
  Buffer<E> row(kv_row);
  float one = 1;
  benchmark::DoNotOptimize(one);
  // The heads of one token's row of E (row) to their places: keys in runs of x, values one by one.
  const auto place = [&](E* cache, std::size_t slot, bool keys_layout) {
    const std::size_t page = slot / block, at = slot % block;
    for (std::size_t h = 0; h < heads; ++h) {
      E* head = cache + page * block * kv_row + h * d * block;
      const E* from = row.data() + h * d;
      if (keys_layout) {
        for (std::size_t i = 0; i < d; i += x) {
          std::memcpy(static_cast<void*>(head + (i / x * block + at) * x), from + i, x * sizeof(E));
        }
      } else {
        for (std::size_t i = 0; i < d; ++i) head[i * block + at] = from[i];
      }
    }
  };
  for (auto _ : state) {
    switch (pass) {
      case KvPass::fused:
        rot.apply_qk(rope::Queries(q_view), keys, positions.data());
        break;
      case KvPass::separate:
        rot.apply_qk(q_view, k_work_view, positions.data());
        for (std::size_t t = 0; t < tokens; ++t) {
          const auto slot = std::size_t(slots[t]);
          store(k_work.data() + t * kv_row, row.data(), kv_row, heads, slot);
          place(k_cache.data(), slot, true);
        }
        for (std::size_t t = 0; t < tokens; ++t) {
          const auto slot = std::size_t(slots[t]);
          store(v.data() + t * kv_row, row.data(), kv_row, heads, slot);
          place(v_cache.data(), slot, false);
        }
        break;
      case KvPass::limit:
        for (std::size_t t = 0; t < tokens; ++t) {
          touch_token(one, q.data() + t * q_row, q_row, k.data() + t * kv_row, kv_row,
                      v.data() + t * kv_row, kv_row);
          const auto slot = std::size_t(slots[t]);
          std::memset(static_cast<void*>(row.data()), int(t & 0x7F), kv_row * sizeof(E));
          place(k_cache.data(), slot, true);
          place(v_cache.data(), slot, false);
        }
        break;
      default:  // the other passes are kv_append's
        break;
    }
    benchmark::ClobberMemory();
  }
  const std::size_t moved =
      tokens * (2 * q_row * sizeof(float) + 2 * kv_row * sizeof(float) + 2 * kv_row * sizeof(E));
  state.SetBytesProcessed(std::int64_t(state.iterations()) * std::int64_t(moved));
  state.SetItemsProcessed(std::int64_t(state.iterations()) *
                          std::int64_t(tokens * (q_row + 2 * kv_row)));
}

// Multi-axis RoPE against ordinary RoPE on the same buffer: q and k of a fused
// [tokens][28 + 4 + 4 heads][128] QKV buffer (Qwen2-VL-7B's attention), rotated by apply_qk.
//   1d           Positions, ordinary RoPE (the reference cost);
//   text         Positions whose 3 coordinates are equal (text tokens of M-RoPE);
//   sections     image tokens of an H×W grid, Qwen2-VL's sections {16, 24, 24}: 3 runs per row;
//   interleaved  the same tokens, Qwen3-VL's interleaved {24, 20, 20}: 61 runs per row;
//   fractional   the sections' tokens at half their coordinates, as doubles: each token's row
//                computed (64 cos and sin in double) instead of read from the table.
enum class AxisKind { one_d, text, sections, interleaved, fractional };

void multi_axis(benchmark::State& state, AxisKind kind, std::size_t tokens) {
  constexpr std::size_t d = 128, q_heads = 28, kv_heads = 4, row = (q_heads + 2 * kv_heads) * d;
  Buffer<float> qkv = filled<float>(tokens * row, 1);
  rope::Options options;
  options.head_size = d;
  options.base = 1000000.0;
  options.axes = kind == AxisKind::interleaved ? rope::Axes::mrope_interleaved({24, 20, 20})
                                               : rope::Axes::sections({16, 24, 24});
  const rope::Rotary<float, 128> rot(options);
  rope::MultimodalPositions prompt;
  if (kind != AxisKind::one_d && kind != AxisKind::text) {
    prompt.text(7).image(tokens < 16 ? 2 : tokens / 16, tokens < 16 ? 2 : 16);
  } else {
    prompt.text(7 + tokens);
  }
  const std::size_t first = prompt.size() - tokens;  // the last tokens: (7, 8, 8) for one
  const rope::Positions positions(prompt.data().data() + 3 * first, 3, 1, 3);
  const std::vector<std::int64_t>& all = prompt.data();
  std::vector<std::int64_t> one_d(tokens);
  for (std::size_t t = 0; t < tokens; ++t) one_d[t] = all[3 * (first + t)];
  std::vector<double> halves(3 * tokens);
  for (std::size_t i = 0; i < 3 * tokens; ++i) halves[i] = 0.5 * double(all[3 * first + i]);
  const rope::View<float> q(qkv.data(), tokens, q_heads, row, d);
  const rope::View<float> k(qkv.data() + q_heads * d, tokens, kv_heads, row, d);
  for (auto _ : state) {
    if (kind == AxisKind::one_d) {
      rot.apply_qk(q, k, one_d.data());
    } else if (kind == AxisKind::fractional) {
      rot.apply_qk(q, k, rope::Positions::token_major(halves.data(), 3));
    } else {
      rot.apply_qk(q, k, positions);
    }
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(std::int64_t(state.iterations()) *
                          std::int64_t(2 * tokens * (q_heads + kv_heads) * d * sizeof(float)));
}

// Gemma 4's vision encoder (16 heads of 72, base 100), q of a [patches][16][72] buffer at the
// (x, y) of a grid of patches 56 wide:
//   one_pass   gemma4_vision_options: half_split pairs within the two blocks, one call;
//   two_calls  the form before it: one Rotary per block (rotary_dim 36, rotary_offset 0 and 36),
//              each with its one coordinate per token;
//   axial      Axes::axial() without the flag (pairs across the head): the kernel's usual pass.
enum class BlockPass { one_pass, two_calls, axial };

void blocks_within(benchmark::State& state, BlockPass pass, std::size_t tokens) {
  constexpr std::size_t d = 72, heads = 16;
  Buffer<float> q = filled<float>(tokens * heads * d, 1);
  rope::Options options = rope::gemma4_vision_options(d);
  if (pass == BlockPass::axial) options.axes = rope::Axes::axial();
  const rope::Rotary<float> rot(options);
  std::vector<std::int64_t> xy(2 * tokens), x(tokens), y(tokens);
  for (std::size_t t = 0; t < tokens; ++t) {
    xy[2 * t] = x[t] = std::int64_t(t % 56);
    xy[2 * t + 1] = y[t] = std::int64_t(t / 56);
  }
  std::vector<rope::Rotary<float>> blocks;
  for (std::size_t b = 0; b < 2; ++b) {
    rope::Options o;
    o.head_size = d;
    o.base = 100.0;
    o.rotary_dim = d / 2;
    o.rotary_offset = b * d / 2;
    blocks.emplace_back(o);
  }
  const rope::View<float> view = rope::View<float>::contiguous(q.data(), tokens, heads, d);
  for (auto _ : state) {
    if (pass == BlockPass::two_calls) {
      blocks[0].apply(view, x.data());
      blocks[1].apply(view, y.data());
    } else {
      rot.apply(view, rope::Positions::token_major(xy.data(), 2));
    }
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(std::int64_t(state.iterations()) *
                          std::int64_t(2 * tokens * heads * d * sizeof(float)));
}

// LTX-2's video self-attention RoPE (rope_type "split", 32 heads of 128 rotated as one hidden
// state of 4096) on the first tokens of a 4 x 16 x 24 latent grid at 24 fps (1536 tokens: all of
// it): every row is fractional, put together from rows of each axis's coordinates, each computed
// once per call (2046 pairs' cos and sin in double for the first token).
void ltx2_video(benchmark::State& state, std::size_t tokens) {
  const rope::Rotary<float> rot(rope::ltx2_options(32, 128, 3));
  const std::vector<double> xyz = rope::ltx2_video_positions({4, 16, 24}, 24.0);
  Buffer<float> q = filled<float>(tokens * 4096, 1);
  for (auto _ : state) {
    rot.apply(q.data(), tokens, 1, rope::Positions::token_major(xyz.data(), 3));
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(std::int64_t(state.iterations()) *
                          std::int64_t(2 * tokens * 4096 * sizeof(float)));
}

// --- registration and the summary table ---------------------------------------------------------

std::string name(const std::string& kernel, const char* type, const Shape& shape) {
  return kernel + "/" + type + "/" + shape.name();
}

// Shapes beyond the caches take milliseconds per iteration and vary most from run to run: they
// get more time per repetition than the command line's --benchmark_min_time.
constexpr double kDramMinTime = 0.3;

template <class... Args>
void add(const std::string& benchmark_name, const Shape& shape, Args&&... args) {
  auto* b = benchmark::RegisterBenchmark(benchmark_name.c_str(), std::forward<Args>(args)...);
  if (shape.tokens >= 4096) b->MinTime(kDramMinTime);
}

template <class T>
void register_type() {
  const char* type = type_name<T>();
  constexpr bool wide = std::is_same_v<T, float> || std::is_same_v<T, double>;
  for (const Shape& shape : kShapes) {
    const bool beyond_cache = shape.tokens >= kBeyondCacheTokens;
    if (beyond_cache && std::is_same_v<T, double>) continue;  // 640 MiB a call: float says it
    add(name("limit_in_place", type, shape), shape, limit_in_place<T>, shape);
    add(name("limit_copy", type, shape), shape, limit_copy<T>, shape);
    add(name("memcpy", type, shape), shape, glibc_memcpy<T>, shape);
    add(name("stream_copy", type, shape), shape, stream_copy<T>, shape);
    if constexpr (!wide)
      add(name("convert_in_place", type, shape), shape, convert_in_place<T>, shape);
#if defined(__AVX512FP16__)
    if constexpr (std::is_same_v<T, Eigen::half>) {
      add(name("convert_in_place_avx512fp16", type, shape), shape, convert_in_place_avx512fp16,
          shape);
    }
#endif
    for (const Layout layout : kLayouts) {
      const std::string l = std::string("/") + rope::to_string(layout);
      if constexpr (!wide) {
        add(name("rotate_convert_in_place" + l, type, shape), shape, rotate_convert_in_place<T>,
            layout, shape);
      }
      if (beyond_cache) {
        for (const Call call : {Call::in_place, Call::out_of_place, Call::qk, Call::streaming})
          add(name(call_name(call) + l, type, shape), shape, rope_kernel<T>, call, layout, shape);
        continue;
      }
      std::vector<Call> calls = {Call::in_place, Call::out_of_place, Call::two_threads};
      if (shape.k_heads > 0) calls.push_back(Call::qk);
      if (shape.tokens >= 512) calls.push_back(Call::streaming);
      if (shape.tokens >= 512) calls.push_back(Call::shift);
      if (shape.tokens <= 16) calls.push_back(Call::two_threads_unthrottled);
      if (shape.k_heads > 0 && shape.tokens <= 512) {  // what an engine that loads models calls
        calls.push_back(Call::run_time_dim);
        calls.push_back(Call::run_time_dim_out_of_place);
        calls.push_back(Call::qk_scaled);
        calls.push_back(Call::qk_then_scale);
      }
      for (const Call call : calls) {
        add(name(call_name(call) + l, type, shape), shape, rope_kernel<T>, call, layout, shape);
      }
      if constexpr (wide) {
        add(name("scalar" + l, type, shape), shape, scalar<T>, layout, shape);
        add(name("eigen_expression" + l, type, shape), shape, eigen_expression<T>, layout, shape);
      }
    }
  }
}

// Keeps each benchmark's median (or only) real time for the summary table. Prints the runs
// themselves only when asked (--rows), in colour only on a terminal.
class SummaryReporter : public benchmark::ConsoleReporter {
 public:
  SummaryReporter(bool rows, bool colour)
      : ConsoleReporter(colour ? OO_ColorTabular : OO_Tabular), rows_(rows) {}

  bool ReportContext(const Context& context) override {
    return !rows_ || ConsoleReporter::ReportContext(context);
  }

  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& run : runs) {
      const bool median = run.run_type == Run::RT_Aggregate && run.aggregate_name == "median";
      const bool only = run.run_type == Run::RT_Iteration && run.repetitions <= 1;
      if (median || only) {
        nanoseconds_[run.run_name.function_name] =
            run.GetAdjustedRealTime() * benchmark::GetTimeUnitMultiplier(benchmark::kNanosecond) /
            benchmark::GetTimeUnitMultiplier(run.time_unit);
      }
    }
    if (rows_) ConsoleReporter::ReportRuns(runs);
  }

  // One markdown table, a row per dtype × shape × layout; the columns this run measured. Returns
  // the number of rows.
  std::size_t print_summary() const {
    std::printf(
        "\n## Summary (median real time of the repetitions; ratios within this run)\n\n"
        "GB/s: bytes read + written by the in-place call per second. x limit: time / time of the\n"
        "limit pass over the same bytes (x *= k for in place and q+k, a vectorised copy loop for\n"
        "out of place and streaming). run-time d: Rotary<T, Eigen::Dynamic>, the head size taken\n"
        "at run time, else Rotary<T, d>. q scaled: apply_qk with Ministral 3's query scale; 2\n"
        "passes: apply_qk, then scale_queries. 2 threads: 1-thread time / 2-thread time\n"
        "(Execution with threads = 2; small calls stay on one thread). vs scalar: scalar loop\n"
        "time / in-place time. memcpy and stream copy: time / the copy loop's time. x convert:\n"
        "(16-bit types) in-place time / time of a pass that only widens to float, multiplies and\n"
        "rounds back. x rotate-convert: in-place time / time of a pass that widens, rotates by "
        "one\n"
        "angle in registers with the kernel's own operations and rounds back (no table, no loop\n"
        "over heads); rotate-convert x convert: that pass over the conversion-only one, what the\n"
        "rotation's arithmetic adds to the conversions. FP16 convert (half, AVX512-FP16 targets): "
        "time of that pass with\n"
        "vcvtph2psx/vcvtps2phx / its time with F16C's vcvtph2ps/vcvtps2ph, which the kernels\n"
        "use. convert x float: that pass's time (F16C) / float's in-place rotation of the same\n"
        "elements: at 1 or more, converting alone takes as long as float's whole rotation, so no\n"
        "16-bit kernel that computes in float can match float's element rate on that shape.\n"
        "shift: Rotary::shift time / the in-place limit. x float (16-bit types):\n"
        "time / float's time for the same elements, shape, layout and call: below 1, more\n"
        "elements per second.\n"
        "Shapes: d128x40/t512 is a head size of 128, 40 heads (32 query + 8 key, Llama 3 8B), 512\n"
        "tokens; t1 is one token decoded at position 4000.\n\n");
#if defined(_OPENMP)
    std::printf("Threads: OpenMP. ");
#else
    std::printf("Threads: std::thread. ");
#endif
    const auto start = nanoseconds_.find("std_thread_start_join");
    if (start != nanoseconds_.end()) {
      std::printf("Starting and joining one std::thread: %.1f us.", start->second / 1000);
    }
    std::printf("\n\n");
    const std::vector<std::string> headers = {"dtype",
                                              "shape",
                                              "layout",
                                              "GB/s",
                                              "x limit",
                                              "out of place",
                                              "run-time d",
                                              "run-time d, out of place",
                                              "q+k",
                                              "q+k, q scaled",
                                              "2 passes / q+k scaled",
                                              "2 threads",
                                              "streaming",
                                              "vs scalar",
                                              "memcpy",
                                              "stream copy",
                                              "x convert",
                                              "x rotate-convert",
                                              "rotate-convert x convert",
                                              "FP16 convert",
                                              "convert x float",
                                              "shift",
                                              "x float",
                                              "x float, out of place"};
    std::vector<std::vector<std::string>> rows;
    for (const char* type : {"float", "double", "half", "bfloat16"}) {
      const std::size_t size = std::string(type) == "double"  ? 8
                               : std::string(type) == "float" ? 4
                                                              : 2;
      for (const Shape& shape : kShapes) {
        const auto time_of = [&](const std::string& kernel, const char* of_type) {
          const auto it = nanoseconds_.find(name(kernel, of_type, shape));
          return it == nanoseconds_.end() ? std::nan("") : it->second;
        };
        const auto time = [&](const std::string& kernel) { return time_of(kernel, type); };
        const bool narrow = size == 2;
        const double in_place_limit = time("limit_in_place"), copy_limit = time("limit_copy");
        for (const Layout layout : kLayouts) {
          const std::string l = std::string("/") + rope::to_string(layout);
          const double apply = time("apply" + l);
          if (std::isnan(apply)) continue;
          const auto cell = [](double value) {
            char text[32];
            if (std::isnan(value)) return std::string();
            std::snprintf(text, sizeof text, "%.2f", value);
            return std::string(text);
          };
          const auto vs_float = [&](const std::string& kernel) {
            return narrow ? time(kernel) / time_of(kernel, "float") : std::nan("");
          };
          char gbs[32];
          std::snprintf(gbs, sizeof gbs, "%.1f", double(2 * shape.elements() * size) / apply);
          rows.push_back({type,
                          shape.name(),
                          rope::to_string(layout),
                          gbs,
                          cell(apply / in_place_limit),
                          cell(time("apply_out_of_place" + l) / copy_limit),
                          cell(time("apply_run_time_d" + l) / in_place_limit),
                          cell(time("apply_run_time_d_out_of_place" + l) / copy_limit),
                          cell(time("apply_qk" + l) / in_place_limit),
                          cell(time("apply_qk_scaled" + l) / in_place_limit),
                          cell(time("apply_qk_then_scale" + l) / time("apply_qk_scaled" + l)),
                          cell(apply / time("apply_2_threads" + l)),
                          cell(time("apply_streaming" + l) / copy_limit),
                          cell(time("scalar" + l) / apply),
                          cell(time("memcpy") / copy_limit),
                          cell(time("stream_copy") / copy_limit),
                          cell(apply / time("convert_in_place")),
                          cell(apply / time("rotate_convert_in_place" + l)),
                          cell(time("rotate_convert_in_place" + l) / time("convert_in_place")),
                          cell(time("convert_in_place_avx512fp16") / time("convert_in_place")),
                          cell(narrow ? time("convert_in_place") / time_of("apply" + l, "float")
                                      : std::nan("")),
                          cell(time("shift" + l) / in_place_limit),
                          cell(vs_float("apply" + l)),
                          cell(vs_float("apply_out_of_place" + l))});
        }
      }
    }
    std::vector<std::size_t> shown;
    for (std::size_t c = 0; c < headers.size(); ++c) {
      const bool any =
          std::any_of(rows.begin(), rows.end(), [&](const auto& row) { return !row[c].empty(); });
      if (any) shown.push_back(c);
    }
    const auto print_row = [&](const auto& cell_of) {
      for (const std::size_t c : shown) std::printf("| %s ", cell_of(c).c_str());
      std::printf("|\n");
    };
    print_row([&](std::size_t c) { return headers[c]; });
    print_row([](std::size_t c) { return std::string(c < 3 ? "---" : "---:"); });
    for (const auto& row : rows) print_row([&](std::size_t c) { return row[c]; });
    return rows.size();
  }

 private:
  bool rows_;
  std::map<std::string, double> nanoseconds_;
};

// The CPU time every CPU of the machine spent busy (Linux's /proc/stat: user, nice, system, irq,
// softirq and steal, the last being time the hypervisor gave to other machines), in seconds; -1
// where unknown.
double machine_busy_seconds() {
  std::ifstream stat("/proc/stat");
  std::string cpu;
  unsigned long long user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0,
                     steal = 0;
  if (!(stat >> cpu >> user >> nice >> system >> idle >> iowait >> irq >> softirq >> steal) ||
      cpu != "cpu") {
    return -1;
  }
  return double(user + nice + system + irq + softirq + steal) / double(sysconf(_SC_CLK_TCK));
}

// The CPU time of this process, all its threads.
double own_cpu_seconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  const auto seconds = [](const timeval& t) { return double(t.tv_sec) + double(t.tv_usec) * 1e-6; };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

std::string load_average() {
  std::ifstream file("/proc/loadavg");
  std::string one_minute;
  return file >> one_minute ? one_minute : std::string("unknown");
}

// The CPU's model name (Linux: /proc/cpuinfo), for the record of every run.
std::string cpu_model() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);) {
    if (line.rfind("model name", 0) == 0 || line.rfind("CPU part", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) return line.substr(colon + 2);
    }
  }
  return "unknown";
}

// The last-level cache in bytes, as Linux's sysfs gives it for CPU 0 (the cache a core of this
// machine sees; glibc's sysconf(_SC_LEVEL3_CACHE_SIZE) can report the whole package instead), or
// 0 where neither says.
std::size_t last_level_cache_bytes() {
  for (const char* index : {"index3", "index2"}) {
    std::ifstream file(std::string("/sys/devices/system/cpu/cpu0/cache/") + index + "/size");
    std::size_t size = 0;
    char unit = 0;
    if (file >> size >> unit) return unit == 'K' ? size << 10 : unit == 'M' ? size << 20 : size;
  }
#if defined(_SC_LEVEL3_CACHE_SIZE)
  const long size = sysconf(_SC_LEVEL3_CACHE_SIZE);
  if (size > 0) return static_cast<std::size_t>(size);
#endif
  return 0;
}

// Whether the largest shape is beyond the last-level cache, said in every run: the "DRAM" rows
// measure memory only where its bytes exceed the cache several times.
std::string largest_shape_note() {
  const Shape& largest =
      *std::max_element(std::begin(kShapes), std::end(kShapes),
                        [](const Shape& a, const Shape& b) { return a.elements() < b.elements(); });
  const double mib = double(largest.elements() * sizeof(float)) / double(1 << 20);
  const std::size_t cache = last_level_cache_bytes();
  char text[256];
  if (cache == 0) {
    std::snprintf(text, sizeof text, "%s: %.0f MiB of float; last-level cache unknown",
                  largest.name().c_str(), mib);
  } else {
    const double times = mib / (double(cache) / double(1 << 20));
    std::snprintf(text, sizeof text,
                  "%s: %.0f MiB of float = %.1fx the %zu MiB last-level cache (16-bit: %.1fx)%s",
                  largest.name().c_str(), mib, times, cache >> 20, times / 2,
                  times >= 3 ? "" : "; below 3x, so its rows measure the cache in part");
  }
  return text;
}

}  // namespace

int main(int argc, char** argv) {
  // In the console header and the JSON's context: which CPU, and which kernels (the instruction
  // set this file was compiled for).
  benchmark::AddCustomContext("cpu_model", cpu_model());
  benchmark::AddCustomContext("instruction_set", rope::instruction_set());
  std::printf("CPU: %s; kernels compiled for %s\n", cpu_model().c_str(), rope::instruction_set());
  benchmark::AddCustomContext("largest_shape", largest_shape_note());
  std::printf("Largest shape %s\n", largest_shape_note().c_str());
  benchmark::RegisterBenchmark("std_thread_start_join", std_thread_start_join);
  register_type<float>();
  register_type<double>();
  register_type<Eigen::half>();
  register_type<Eigen::bfloat16>();
  for (const std::size_t tokens : {1U, 512U}) {
    const std::string shape = "/float/d128x48/t" + std::to_string(tokens);
    benchmark::RegisterBenchmark(("fused_qk_checked" + shape).c_str(), fused_qk, true, tokens);
    benchmark::RegisterBenchmark(("fused_qk_unchecked" + shape).c_str(), fused_qk, false, tokens);
  }
  for (const std::size_t tokens : {1U, 16U, 512U}) {
    for (const Layout layout : kLayouts) {
      const std::pair<const char*, KvPass> passes[] = {{"fused", KvPass::fused},
                                                       {"fused_unchecked", KvPass::fused_unchecked},
                                                       {"separate", KvPass::separate},
                                                       {"limit", KvPass::limit}};
      for (const auto& [pass_name, pass] : passes) {
        for (const bool norm : {false, true}) {
          if (norm && pass == KvPass::limit) continue;  // the same bytes: one limit for both
          const std::string kernel = std::string(norm ? "kv_cache_norm_" : "kv_cache_") + pass_name;
          const std::string tail =
              std::string("/") + rope::to_string(layout) + "/t" + std::to_string(tokens);
          benchmark::RegisterBenchmark((kernel + "/float" + tail).c_str(), kv_cache<float>, pass,
                                       layout, tokens, norm);
          benchmark::RegisterBenchmark((kernel + "/bfloat16" + tail).c_str(),
                                       kv_cache<Eigen::bfloat16>, pass, layout, tokens, norm);
        }
      }
    }
  }
  for (const std::size_t tokens : {1U, 16U, 512U}) {
    const std::pair<const char*, KvPass> passes[] = {
        {"fused", KvPass::fused}, {"separate", KvPass::separate}, {"limit", KvPass::limit}};
    for (const auto& [pass_name, pass] : passes) {
      const std::string kernel = std::string("kv_quantized_") + pass_name;
      const std::string tail = "/half_split/t" + std::to_string(tokens);
      benchmark::RegisterBenchmark((kernel + "/fp8_e4m3" + tail).c_str(),
                                   kv_quantized<rope::Float8E4M3>, pass, tokens);
      benchmark::RegisterBenchmark((kernel + "/int8" + tail).c_str(), kv_quantized<std::int8_t>,
                                   pass, tokens);
      benchmark::RegisterBenchmark((kernel + "/q8_0" + tail).c_str(), kv_quantized<rope::BlockQ8_0>,
                                   pass, tokens);
      benchmark::RegisterBenchmark((kernel + "/q4_0" + tail).c_str(), kv_quantized<rope::BlockQ4_0>,
                                   pass, tokens);
    }
  }
  for (const std::size_t tokens : {1U, 16U, 512U}) {
    const std::pair<const char*, KvPass> passes[] = {
        {"fused", KvPass::fused}, {"separate", KvPass::separate}, {"limit", KvPass::limit}};
    for (const auto& [pass_name, pass] : passes) {
      const std::string kernel = std::string("kv_mla_") + pass_name;
      const std::string tail = "/interleaved/t" + std::to_string(tokens);
      benchmark::RegisterBenchmark((kernel + "/bfloat16" + tail).c_str(), kv_mla<Eigen::bfloat16>,
                                   pass, tokens);
      benchmark::RegisterBenchmark((kernel + "/fp8_e4m3" + tail).c_str(), kv_mla<rope::Float8E4M3>,
                                   pass, tokens);
    }
  }
  for (const std::size_t tokens : {1U, 16U, 512U}) {
    const std::string tail = "/t" + std::to_string(tokens);
    benchmark::RegisterBenchmark(("quantize_rows/fp8_e4m3" + tail).c_str(),
                                 quantize_rows<rope::Float8E4M3>, tokens);
    benchmark::RegisterBenchmark(("quantize_rows/int8" + tail).c_str(), quantize_rows<std::int8_t>,
                                 tokens);
    benchmark::RegisterBenchmark(("quantize_rows/q8_0" + tail).c_str(),
                                 quantize_rows<rope::BlockQ8_0>, tokens);
    benchmark::RegisterBenchmark(("quantize_rows/q4_0" + tail).c_str(),
                                 quantize_rows<rope::BlockQ4_0>, tokens);
  }
  for (const std::size_t tokens : {1U, 16U, 512U}) {
    const std::pair<const char*, KvPass> passes[] = {{"fused", KvPass::fused},
                                                     {"fused_unchecked", KvPass::fused_unchecked},
                                                     {"keys_then_values", KvPass::keys_then_values},
                                                     {"separate", KvPass::separate},
                                                     {"limit", KvPass::limit}};
    for (const auto& [pass_name, pass] : passes) {
      const std::string kernel = std::string("kv_append_") + pass_name;
      const std::string tail = "/half_split/t" + std::to_string(tokens);
      benchmark::RegisterBenchmark((kernel + "/half+half" + tail).c_str(),
                                   kv_append<Eigen::half, Eigen::half>, pass, tokens);
      benchmark::RegisterBenchmark((kernel + "/fp8_e4m3+fp8_e4m3" + tail).c_str(),
                                   kv_append<rope::Float8E4M3, rope::Float8E4M3>, pass, tokens);
      benchmark::RegisterBenchmark((kernel + "/q8_0+half" + tail).c_str(),
                                   kv_append<rope::BlockQ8_0, Eigen::half>, pass, tokens);
      benchmark::RegisterBenchmark((kernel + "/q8_0+q8_0" + tail).c_str(),
                                   kv_append<rope::BlockQ8_0, rope::BlockQ8_0>, pass, tokens);
    }
  }
  for (const std::size_t tokens : {1U, 16U, 512U}) {
    const std::pair<const char*, KvPass> passes[] = {
        {"fused", KvPass::fused}, {"separate", KvPass::separate}, {"limit", KvPass::limit}};
    for (const auto& [pass_name, pass] : passes) {
      const std::string kernel = std::string("kv_paged_") + pass_name;
      const std::string tail = "/half_split/t" + std::to_string(tokens);
      benchmark::RegisterBenchmark((kernel + "/half" + tail).c_str(), kv_paged<Eigen::half>, pass,
                                   tokens);
      benchmark::RegisterBenchmark((kernel + "/fp8_e4m3" + tail).c_str(),
                                   kv_paged<rope::Float8E4M3>, pass, tokens);
    }
  }
  for (const std::size_t tokens : {1U, 512U}) {
    const std::string shape = "/float/d128x36/t" + std::to_string(tokens);
    const std::pair<const char*, AxisKind> kinds[] = {{"1d", AxisKind::one_d},
                                                      {"text", AxisKind::text},
                                                      {"sections", AxisKind::sections},
                                                      {"interleaved", AxisKind::interleaved},
                                                      {"fractional", AxisKind::fractional}};
    for (const auto& [kind_name, kind] : kinds) {
      benchmark::RegisterBenchmark(("multi_axis/" + std::string(kind_name) + shape).c_str(),
                                   multi_axis, kind, tokens);
    }
  }
  for (const std::size_t tokens : {1U, 256U, 2520U}) {
    const std::string shape = "/float/d72x16/t" + std::to_string(tokens);
    const std::pair<const char*, BlockPass> passes[] = {{"one_pass", BlockPass::one_pass},
                                                        {"two_calls", BlockPass::two_calls},
                                                        {"axial", BlockPass::axial}};
    for (const auto& [pass_name, pass] : passes) {
      benchmark::RegisterBenchmark(("blocks_within/" + std::string(pass_name) + shape).c_str(),
                                   blocks_within, pass, tokens);
    }
    benchmark::RegisterBenchmark(("blocks_within/limit" + shape).c_str(), limit_in_place<float>,
                                 Shape{72, 16, 0, tokens});
  }
  for (const std::size_t tokens : {1U, 256U, 1536U}) {
    const std::string shape = "/float/d4096x1/t" + std::to_string(tokens);
    benchmark::RegisterBenchmark(("ltx2_video/split" + shape).c_str(), ltx2_video, tokens);
    benchmark::RegisterBenchmark(("ltx2_video/limit" + shape).c_str(), limit_in_place<float>,
                                 Shape{4096, 1, 0, tokens});
  }
  // --rows: print every run as Google Benchmark does; by default only the summary table.
  bool rows = false;
  std::string json;
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--rows") {
      rows = true;
      continue;
    }
    if (arg.rfind("--benchmark_out=", 0) == 0) json = arg.substr(std::strlen("--benchmark_out="));
    argv[kept++] = argv[i];
  }
  argc = kept;
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  const char* term = std::getenv("TERM");
  const bool terminal = isatty(STDOUT_FILENO) && term != nullptr && std::string(term) != "dumb";
  SummaryReporter reporter(rows, terminal);
  if (!rows) std::printf("Running the benchmarks (--rows prints each run)...\n");
  std::fflush(stdout);
  const double busy = machine_busy_seconds(), own = own_cpu_seconds();
  const auto started = std::chrono::steady_clock::now();
  benchmark::RunSpecifiedBenchmarks(&reporter);
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  // Other work on the machine during the run: its busy time less this process's own.
  if (busy >= 0 && wall > 0) {
    const double others = (machine_busy_seconds() - busy - (own_cpu_seconds() - own)) / wall;
    if (others > 0.1) {
      std::printf(
          "\nWARNING: other work used %.0f%% of a CPU during the run (load average %s): the "
          "figures, the 2 threads column most, are unreliable; run again on an idle machine.\n",
          100 * others, load_average().c_str());
    } else {
      std::printf("\nOther work during the run: %.0f%% of a CPU (load average %s).\n",
                  100 * std::max(others, 0.0), load_average().c_str());
    }
  }
  if (reporter.print_summary() == 0) {
    std::printf("\nNo in-place rope benchmark ran: nothing to summarise (--benchmark_filter?).\n");
    return 1;
  }
  if (!json.empty()) {
    std::printf("\nJSON: %s\n", std::filesystem::absolute(json).string().c_str());
  }
  benchmark::Shutdown();
  return 0;
}
