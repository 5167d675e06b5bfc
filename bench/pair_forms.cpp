// The forms of the interleaved product on AVX-512, apart from the kernels' loops: what each costs
// over a pass that only loads, multiplies and stores (for 16-bit values: widens, multiplies and
// narrows), on float in memory and on half widened in registers (docs/design.md, "16-bit
// storage").
//
//   forms/<form>/<float|half>/kib<K>   K KiB of values, each register of pairs turned in place by
//       one register e = [c s c s ..]:
//     limit     z·k: the pass the kernels' ratios are taken against (for half, `x convert`);
//     dup       the kernels' form (simd::turn, the kernels' own function): the real parts and
//               the imaginary parts each duplicated into both lanes of a pair (vmovsldup,
//               vmovshdup), a product with e's swapped copy and a fused multiply-add with e:
//               re = a·c − round(b·s), im = a·s + round(b·c);
//     blend     the same products and bits, the duplicates made from z and its swapped copy by
//               two masked blends: one shuffle, not two;
//     shifts    the same products and bits, the duplicates made without a shuffle: each 64-bit
//               lane shifted by 32 bits and blended with z;
//     one_swap  the AVX2 kernels' form: z·[c c] ∓± round(swap(z)·[s s]), one shuffle; other
//               bits (im = b·c + round(a·s));
//     swap16    (half) one_swap's products, the pairs swapped before widening by a rotation of
//               each 32 bits (vprold) and widened twice: no shuffle but a second conversion.
//   The counter `values unlike dup` counts the values of one pass that differ from dup's: 0 for
//   blend and shifts, more than 0 for one_swap and swap16.
//
// On a Zen 5 each shuffle of a widened register cost a sixth to a third of the conversion-only
// pass (docs/measurements/, "pair forms"). The values are loaded (widened) and stored (narrowed)
// by rope's packet functions, as the kernels do; the other forms are written with intrinsics:
// AVX-512 F and VL with F16C only (elsewhere the program has no rows). Internal: it uses
// rope::detail's packet functions, which have no stable interface.
//
//   pair_forms --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <Eigen/Core>
#include <benchmark/benchmark.h>

#include <rope/rope.hpp>

#include "buffers.hpp"

#if defined(__AVX512F__) && defined(__AVX512VL__) && defined(__F16C__)
#include <immintrin.h>

namespace {

enum class Form { limit, dup, blend, shifts, one_swap, swap16 };

namespace simd = rope::detail::simd;
using Z = simd::ComplexPacket<float>;  // 8 pairs: a register of 16 floats
constexpr std::size_t kLanes = 16;     // floats in a register
static_assert(simd::kLanes<float> == static_cast<int>(kLanes), "AVX-512's registers of float");

// One pass of form F over the n values at x, each register of pairs turned by e.
template <Form F, class T>
void pass(T* x, std::size_t n, __m512 e, __m512 k) {
  // In registers, as the kernels hold their row's registers across the heads: not re-read from
  // the stack as a memory operand of each register's product.
  __asm__("" : "+v"(e), "+v"(k));
  const __m512 swapped = _mm512_permute_ps(e, _MM_SHUFFLE(2, 3, 0, 1));  // [s c s c ..]
  const __m512 c = _mm512_moveldup_ps(e), s = _mm512_movehdup_ps(e);     // [c c ..], [s s ..]
  const simd::Turn<Z> prepared = simd::prepare(Z(e), false);
  for (std::size_t i = 0; i + kLanes <= n; i += kLanes) {
    const __m512 z = simd::load<simd::Packet<float>>(x + i);
    __m512 y;
    if constexpr (F == Form::limit) {
      y = _mm512_mul_ps(z, k);
    } else if constexpr (F == Form::dup) {
      y = simd::turn(Z(z), prepared).v;
    } else if constexpr (F == Form::blend) {
      const __m512 zs = _mm512_permute_ps(z, _MM_SHUFFLE(2, 3, 0, 1));
      const __m512 a = _mm512_mask_blend_ps(0xAAAA, z, zs);  // [a a ..]: odd lanes from zs
      const __m512 b = _mm512_mask_blend_ps(0xAAAA, zs, z);  // [b b ..]: even lanes from zs
      y = _mm512_fmaddsub_ps(a, e, _mm512_mul_ps(b, swapped));
    } else if constexpr (F == Form::shifts) {
      const __m512i w = _mm512_castps_si512(z);
      const __m512 a =
          _mm512_castsi512_ps(_mm512_mask_blend_epi32(0xAAAA, w, _mm512_slli_epi64(w, 32)));
      const __m512 b =
          _mm512_castsi512_ps(_mm512_mask_blend_epi32(0x5555, w, _mm512_srli_epi64(w, 32)));
      y = _mm512_fmaddsub_ps(a, e, _mm512_mul_ps(b, swapped));
    } else if constexpr (F == Form::one_swap) {
      y = _mm512_fmaddsub_ps(z, c, _mm512_mul_ps(_mm512_permute_ps(z, _MM_SHUFFLE(2, 3, 0, 1)), s));
    } else {
      static_assert(std::is_same_v<T, Eigen::half>, "swap16 widens half");
      const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + i));
      const __m512 zs = _mm512_cvtph_ps(_mm256_rol_epi32(h, 16));
      y = _mm512_fmaddsub_ps(z, c, _mm512_mul_ps(zs, s));
    }
    simd::store(x + i, simd::Packet<float>(y));
  }
}

// e = [c s ..] of the angle 0.5: a rotation, so that the values keep their size over the passes.
__m512 angle() {
  alignas(64) float e[kLanes];
  for (std::size_t i = 0; i < kLanes; i += 2) {
    e[i] = std::cos(0.5F);
    e[i + 1] = std::sin(0.5F);
  }
  benchmark::DoNotOptimize(e);
  return _mm512_load_ps(e);
}

template <class T>
std::size_t unlike_dup(void (*form)(T*, std::size_t, __m512, __m512), std::size_t n) {
  auto a = bench::filled<T>(n), b = a;
  const __m512 one = _mm512_set1_ps(1.0F);
  pass<Form::dup>(a.data(), n, angle(), one);
  form(b.data(), n, angle(), one);
  std::size_t differ = 0;
  for (std::size_t i = 0; i < n; ++i) differ += std::memcmp(&a[i], &b[i], sizeof(T)) != 0;
  return differ;
}

template <Form F, class T>
void forms(benchmark::State& state, std::size_t kib) {
  const std::size_t n = kib * 1024 / sizeof(T);
  auto x = bench::filled<T>(n);
  const __m512 e = angle();
  float one = 1.0F;
  benchmark::DoNotOptimize(one);
  const __m512 k = _mm512_set1_ps(one);
  for (auto _ : state) {
    pass<F>(x.data(), n, e, k);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(2 * n * sizeof(T)));
  state.counters["values unlike dup"] =
      static_cast<double>(F == Form::limit ? 0 : unlike_dup<T>(pass<F, T>, n));
}

template <class T>
void register_type(const char* type) {
  using Entry = std::pair<const char*, void (*)(benchmark::State&, std::size_t)>;
  for (const std::size_t kib : {std::size_t{16}, std::size_t{256}}) {
    std::vector<Entry> entries = {{"limit", forms<Form::limit, T>},
                                  {"dup", forms<Form::dup, T>},
                                  {"blend", forms<Form::blend, T>},
                                  {"shifts", forms<Form::shifts, T>},
                                  {"one_swap", forms<Form::one_swap, T>}};
    if constexpr (std::is_same_v<T, Eigen::half>) {
      entries.push_back({"swap16", forms<Form::swap16, T>});
    }
    for (const Entry& f : entries) {
      const std::string name =
          std::string("forms/") + f.first + "/" + type + "/kib" + std::to_string(kib);
      benchmark::RegisterBenchmark(name.c_str(), f.second, kib);
    }
  }
}

void register_all() {
  register_type<float>("float");
  register_type<Eigen::half>("half");
}

}  // namespace

#else
namespace {
void register_all() {}  // the forms are AVX-512's: nothing to run on this target
}  // namespace
#endif

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  register_all();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
