// Rows of cos and sin (float, or double past a double table) at any position from eight small
// tables, by angle addition.
//
// Write the position in base 128, m = Σ_l d_l·128^l with digits d_l < 128 (eight digits reach
// 2^56 > kMaxPosition). Then, for each pair j,
//
//     scale·e^{i·m·θ_j} = (scale·e^{i·d_0·θ_j}) · Π_{l ≥ 1, d_l ≠ 0} e^{i·d_l·128^l·θ_j},
//
// a product of one entry of level 0 (every digit, 0 included, times the attention factor) and
// one entry of each higher level whose digit is not 0 (d = 1 .. 127; digit 0 is the factor 1).
// Each entry is cos and sin of the exact angle d·128^l·θ_j, rounded to double; the product is
// taken in double and rounded once to the row's type. The error of an entry against the exact angle
// does not grow with m, unlike one double product m·θ_j (docs/numerics.md has the bound).
//
// The entries are stored as the rows of a half_split table, [c_0 .. c_{h−1} | s_0 .. s_{h−1}],
// whatever the layout: a complex product of split halves takes four multiplies per pair and no
// shuffle; an interleaved row is interleaved as it is stored.
//
// A row is formed as (level 0's factor) · H, H the product of the higher factors taken from
// level 1 upwards, so that H can be kept: consecutive positions share it for 128 tokens, and a
// decode step asks every layer for the same position. Each thread keeps the last H it formed
// (HighProduct); a row then takes one complex product per pair, and its bits are the same
// whether H was kept or formed again.
//
// Memory: (128 + 7·127) rows of rotary_dim doubles (1017 KiB for a head of 128), and rotary_dim
// doubles per thread for H.
// Time: one complex product per pair, and one per non-zero higher digit past the first when the
// higher digits change (bench/past_table_bench.cpp).
#pragma once

#include <rope/config.hpp>
#if !defined(ROPE_BELOW_CXX17)  // config.hpp stops older standards with one #error

#include <atomic>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <vector>

#include <Eigen/Core>

#include <rope/detail/packet.hpp>
#include <rope/layout.hpp>

namespace rope {
inline namespace ROPE_DETAIL_ISA {
namespace detail {

// The index of cos(φ_j) and of sin(φ_j) in a row of `half` pairs (table.hpp shows the rows).
constexpr std::size_t cos_index(Layout layout, std::size_t half, std::size_t j) noexcept {
  return layout == Layout::interleaved ? 2 * j : (static_cast<void>(half), j);
}
constexpr std::size_t sin_index(Layout layout, std::size_t half, std::size_t j) noexcept {
  return layout == Layout::interleaved ? 2 * j + 1 : half + j;
}

// Writes the pair j entries of a row.
template <class C>
void put_pair(Layout layout, std::size_t half, std::size_t j, C cos, C sin, C* row) noexcept {
  row[cos_index(layout, half, j)] = cos;
  row[sin_index(layout, half, j)] = sin;
}

// cos and sin of the exact angle k·θ (k an integer below 2^56 with at most 7 significant bits,
// θ a double), each within a few units of double's roundoff: k·θ = hi + lo exactly (lo by one
// fma), and cos(hi + lo) = cos hi·cos lo − sin hi·sin lo, sin(hi + lo) = sin hi·cos lo +
// cos hi·sin lo.
ROPE_DETAIL_COLD inline void exact_cos_sin(double k, double theta, double& c, double& s) {
  const double hi = k * theta, lo = std::fma(k, theta, -hi);
  const double ch = std::cos(hi), sh = std::sin(hi), cl = std::cos(lo), sl = std::sin(lo);
  c = ch * cl - sh * sl;
  s = sh * cl + ch * sl;
}

// The product H of a position's higher factors, the last one a thread formed: from the levels
// of AngleSum `owner` (0: none yet), for the higher digits m >> 7 = `high`; [cos | sin].
struct HighProduct {
  std::uint64_t owner = 0, high = 0;
  std::vector<double, Eigen::aligned_allocator<double>> values;
};
inline HighProduct& high_product() noexcept {
  static thread_local HighProduct kept;
  return kept;
}

class AngleSum {
 public:
  static constexpr unsigned kDigitBits = 7, kLevels = 8;
  static constexpr std::uint64_t kRadix = std::uint64_t{1} << kDigitBits;
  static constexpr std::size_t kRows = kRadix + (kLevels - 1) * (kRadix - 1);
  // The most rotated coordinates for which the levels are built (8 MiB of them); a wider head
  // computes each row past its table directly.
  static constexpr std::size_t kMaxWidth = 1024;

  AngleSum() = default;

  // The levels for θ (at most kMaxWidth / 2 pairs); level 0 times `scale`.
  ROPE_DETAIL_COLD AngleSum(Layout layout, const std::vector<double>& theta, double scale)
      : layout_(layout), half_(theta.size()), id_(next_id()), entries_(kRows * 2 * theta.size()) {
    for (unsigned level = 0; level < kLevels; ++level) {
      for (std::uint64_t digit = level == 0 ? 0 : 1; digit < kRadix; ++digit) {
        const double k =
            std::ldexp(static_cast<double>(digit), static_cast<int>(level * kDigitBits));
        const double factor = level == 0 ? scale : 1.0;
        double* row = entries_.data() + index(level, digit);
        for (std::size_t j = 0; j < half_; ++j) {
          double c, s;
          exact_cos_sin(k, theta[j], c, s);
          row[j] = factor * c;
          row[half_ + j] = factor * s;
        }
      }
    }
  }

  bool empty() const noexcept { return entries_.empty(); }
  std::size_t bytes() const noexcept { return entries_.size() * sizeof(double); }

  // Writes the row of position m (m < 2^56): 2·half values of T (float or double) in the
  // layout's order. Forms and keeps H in the calling thread's HighProduct when m's higher digits
  // are not those of the H it keeps.
  template <class T>
  ROPE_DETAIL_NOINLINE void row(std::uint64_t m, T* out) const {
    const double* low = entries_.data() + index(0, m & (kRadix - 1));
    const std::uint64_t high = m >> kDigitBits;
    const double* h = nullptr;
    if (high != 0) {
      HighProduct& kept = high_product();
      if (kept.owner != id_ || kept.high != high) {
        form_high(high, kept.values);
        kept.owner = id_;
        kept.high = high;
      }
      h = kept.values.data();
    }
    if (layout_ == Layout::interleaved) {
      product<true, T>(low, h, out);
    } else {
      product<false, T>(low, h, out);
    }
  }

 private:
  std::size_t index(unsigned level, std::uint64_t digit) const noexcept {
    const std::size_t row =
        level == 0 ? static_cast<std::size_t>(digit)
                   : kRadix + (level - 1) * (kRadix - 1) + static_cast<std::size_t>(digit) - 1;
    return row * 2 * half_;
  }

  // H = f_1 · f_2 · ... of the higher digits' factors (the non-zero digits of `high`, from level
  // 1 up), into values ([cos | sin], 2·half doubles).
  void form_high(std::uint64_t high,
                 std::vector<double, Eigen::aligned_allocator<double>>& values) const {
    const double* factor[kLevels];
    unsigned n = 0;
    for (unsigned level = 1; high != 0; ++level, high >>= kDigitBits) {
      const std::uint64_t digit = high & (kRadix - 1);
      if (digit != 0) factor[n++] = entries_.data() + index(level, digit);
    }
    const std::size_t half = half_;
    values.resize(2 * half);
    double* out = values.data();
    using P = simd::Packet<double>;
    constexpr std::size_t kStep = simd::kLanes<double>;
    std::size_t j = 0;
    for (; j + kStep <= half; j += kStep) {
      P c = simd::load<P>(factor[0] + j), s = simd::load<P>(factor[0] + half + j);
      for (unsigned i = 1; i < n; ++i) {
        multiply(c, s, simd::load<P>(factor[i] + j), simd::load<P>(factor[i] + half + j));
      }
      simd::store(out + j, c);
      simd::store(out + half + j, s);
    }
    for (; j < half; ++j) {
      double c = factor[0][j], s = factor[0][half + j];
      for (unsigned i = 1; i < n; ++i) multiply(c, s, factor[i][j], factor[i][half + j]);
      out[j] = c;
      out[half + j] = s;
    }
  }

  // The row low · h (h = H, or nullptr: the factor 1), rounded once to T, in the layout's order.
  template <bool kInterleaved, class T>
  void product(const double* low, const double* h, T* out) const noexcept {
    using P = simd::Packet<double>;
    constexpr std::size_t kStep = simd::kLanes<double>;
    const std::size_t half = half_;
    std::size_t j = 0;
    for (; j + kStep <= half; j += kStep) {
      P c = simd::load<P>(low + j), s = simd::load<P>(low + half + j);
      if (h != nullptr) multiply(c, s, simd::load<P>(h + j), simd::load<P>(h + half + j));
      if constexpr (kInterleaved && std::is_same_v<T, double>) {
        double cosines[kStep], sines[kStep];  // interleaved doubles: past the table only
        simd::store(cosines, c);
        simd::store(sines, s);
        for (std::size_t k = 0; k < kStep; ++k) {
          put_pair(layout_, half, j + k, cosines[k], sines[k], out);
        }
      } else if constexpr (kInterleaved) {
        simd::store_interleaved(out + 2 * j, c, s);
      } else {
        simd::store(out + j, c);
        simd::store(out + half + j, s);
      }
    }
    for (; j < half; ++j) {
      double c = low[j], s = low[half + j];
      if (h != nullptr) multiply(c, s, h[j], h[half + j]);
      put_pair(layout_, half, j, static_cast<T>(c), static_cast<T>(s), out);
    }
  }

  // c·fc − s·fs and c·fs + s·fc, each as one rounded product and one multiply-add that
  // simd::madd fuses where the target has FMA: which product is fused is written here, not left
  // to the compiler's contraction, so that a row's bits are the same wherever the product is
  // inlined (a table row and the same row past the table).
  template <class P>
  static void multiply(P& c, P& s, const P& fc, const P& fs) noexcept {
    const P next_c = simd::nmadd(s, fs, simd::mul(c, fc));
    s = simd::madd(c, fs, simd::mul(s, fc));
    c = next_c;
  }

  // A number no other AngleSum of the program has (copies share it with their contents), so
  // that a thread's kept H is never taken for another's.
  static std::uint64_t next_id() noexcept {
    static std::atomic<std::uint64_t> next{1};
    return next.fetch_add(1, std::memory_order_relaxed);
  }

  Layout layout_ = Layout::half_split;
  std::size_t half_ = 0;
  std::uint64_t id_ = 0;
  std::vector<double, Eigen::aligned_allocator<double>> entries_;
};

}  // namespace detail
}  // namespace ROPE_DETAIL_ISA
}  // namespace rope

#endif  // !ROPE_BELOW_CXX17
