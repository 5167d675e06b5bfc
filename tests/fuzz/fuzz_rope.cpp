// libFuzzer harness: random bytes become a configuration and a call; the call must either throw
// the documented exception (std::invalid_argument or std::out_of_range) and leave the buffers
// untouched, or give what an independent float64 rotation gives, within a derived bound. A
// configuration that this file judges valid must not be rejected, and one it judges invalid
// must be. Anything else aborts, and libFuzzer saves the input.
//
// A quarter of the inputs (chosen by the first byte) configure multi-axis RoPE (Options::axes) and
// pass several coordinates per token; the others read exactly the bytes they read before.
//
// Built two ways: with -fsanitize=fuzzer (rope_fuzz, the fuzzer) and with replay_main.cpp
// (rope_fuzz_replay, which runs the committed corpus and the regression inputs as a test).
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include <Eigen/Core>

#include <rope/rope.hpp>

namespace {

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "rope fuzz: %s\n", what.c_str());
  std::abort();
}

// Reads the input front to back; past its end every read is 0.
class Bytes {
 public:
  Bytes(const std::uint8_t* data, std::size_t size) : data_(data), size_(size) {}
  std::uint8_t u8() { return at_ < size_ ? data_[at_++] : 0; }
  std::uint16_t u16() { return static_cast<std::uint16_t>(u8() | (u8() << 8)); }
  std::uint64_t u64() {
    std::uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v |= std::uint64_t{u8()} << (8 * i);
    return v;
  }
  // One of the values, by the next byte.
  template <class V, std::size_t N>
  V pick(const V (&values)[N]) {
    return values[u8() % N];
  }

 private:
  const std::uint8_t* data_;
  std::size_t size_, at_ = 0;
};

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr std::int64_t kMaxPosition = (std::int64_t{1} << 53) - 1;

// A parameter: usually a sensible value, sometimes one at or past a limit.
double parameter(Bytes& in, double sensible) {
  const double values[] = {sensible, sensible, sensible, 1.0, 0.5, 0.0, -1.0, kNaN, kInf, 1e300};
  return in.pick(values);
}

rope::Scaling scaling(Bytes& in, std::size_t rotary_dim) {
  const std::size_t pairs = rotary_dim / 2 + (in.u8() % 8 == 0 ? 1 : 0);  // sometimes one too many
  std::vector<double> list(pairs);
  for (double& v : list) v = 0.25 + (in.u8() % 16) / 4.0;
  if (!list.empty() && in.u8() % 8 == 0) list[in.u8() % list.size()] = parameter(in, 1.0);
  switch (in.u8() % 9) {
    case 0:
      return rope::Unscaled{};
    case 1:
      return rope::Linear{parameter(in, 4.0)};
    case 2:
      return rope::NTKAware{parameter(in, 2.0)};
    case 3:
      return rope::DynamicNTK{parameter(in, 2.0), parameter(in, 64.0)};
    case 4: {
      rope::Yarn yarn{parameter(in, 16.0), parameter(in, 128.0)};
      yarn.beta_fast = parameter(in, 32.0);
      yarn.beta_slow = parameter(in, 1.0);
      if (in.u8() % 4 == 0) yarn.attention_factor = parameter(in, 1.2);
      yarn.truncate = in.u8() % 2 == 0;
      return yarn;
    }
    case 5:
      return rope::Llama3{parameter(in, 8.0), parameter(in, 1.0), parameter(in, 4.0),
                          parameter(in, 128.0)};
    case 6: {
      rope::LongRope longrope;
      longrope.short_factor = list;
      longrope.long_factor = list;
      longrope.original_max_position_embeddings = parameter(in, 64.0);
      if (in.u8() % 4 == 0) longrope.attention_factor = parameter(in, 1.1);
      return longrope;
    }
    case 7:
      // Sometimes the last pairs do not rotate (θ = 0), sometimes a pair before them either.
      if (list.size() > 1 && list[0] == 0.25) {
        for (std::size_t j = list.size() / 2; j < list.size(); ++j) list[j] = 0;
        if (list[1] == 0.25) list[0] = 0;
      }
      return rope::InverseFrequencies{list};
    default:
      // Read from the list, so that inputs of the other schemes decode as before.
      if (list.size() > 1 && list[0] == 0.25) {
        return rope::Proportional{(list[1] - 0.5) / 3.0, list.back()};  // p in [-1/12, 1.25]
      }
      return rope::FrequencyFactors{list};
  }
}

// A map of pairs to axes: usually one that fits the rotary pairs, sometimes one that does not.
rope::Axes axes(Bytes& in, std::size_t rotary_dim) {
  const std::size_t pairs = rotary_dim / 2;
  switch (in.u8() % 5) {
    case 0: {  // sections adding up to the pairs, or one off, or one huge
      std::vector<std::size_t> section(1 + in.u8() % 4);
      std::size_t left = pairs;
      for (std::size_t a = 0; a + 1 < section.size(); ++a) {
        section[a] = std::min<std::size_t>(in.u8() % (pairs + 1), left);
        left -= section[a];
      }
      section.back() = left + (in.u8() % 8 == 0 ? 1 : 0);
      if (in.u8() % 32 == 0) section.front() = SIZE_MAX;  // a sum that wraps around
      return rope::Axes::sections(section);
    }
    case 1: {  // Qwen3-VL's rule: the sections the rule gives, or others
      const std::size_t h = in.u8() % (pairs / 3 + 2), w = in.u8() % (pairs / 3 + 2);
      return rope::Axes::mrope_interleaved({pairs - std::min(pairs, h + w), h, w});
    }
    case 2:
      return rope::Axes::axial(in.u8() % 5);
    case 3: {
      const std::size_t count = 1 + in.u8() % 4;
      std::vector<std::uint8_t> axis(pairs + (in.u8() % 16 == 0 ? 1 : 0));
      for (auto& a : axis) {
        a = static_cast<std::uint8_t>(in.u8() % (count + (in.u8() % 32 == 0 ? 1U : 0U)));
      }
      std::vector<std::size_t> theta(in.u8() % 2 == 0 ? 0 : pairs);  // none, or one per pair
      for (auto& j : theta) j = in.u16() % (pairs + (in.u8() % 32 == 0 ? 1U : 0U));
      return rope::Axes::custom(count, axis, theta);
    }
    default:
      return rope::Axes();
  }
}

// Where a view's heads are: its strides and the offset of its first element in the buffer.
struct Shape {
  std::size_t offset, token_stride, head_stride;
};

// Strides that are usually valid ([tokens][heads] or [heads][tokens], with padding), sometimes
// too small.
Shape shape(Bytes& in, std::size_t tokens, std::size_t heads, std::size_t d) {
  const std::size_t pad = in.u8() % 4, offset = in.u8() % 8;
  const std::size_t squeeze = in.u8() % 8 == 0 ? 1 + in.u8() % 4 : 0;  // make heads overlap
  const std::size_t row = d + pad > squeeze ? d + pad - squeeze : 0;
  if (in.u8() % 2 == 0) return {offset, heads * row + in.u8() % 3, row};
  return {offset, row, tokens * row + in.u8() % 3};
}

// One past the last element of the view's heads, from the start of its buffer.
std::size_t extent(const Shape& s, std::size_t tokens, std::size_t heads, std::size_t d) {
  if (tokens == 0 || heads == 0) return s.offset;
  return s.offset + (tokens - 1) * s.token_stride + (heads - 1) * s.head_stride + d;
}

// Whether heads of a and b share an element, other than the same (token, head) in place
// (a == b for a view against itself: then any two different heads).
template <class A, class B>
bool conflict(const A& a, const B& b, std::size_t d, bool in_place_allowed) {
  for (std::size_t t = 0; t < a.tokens(); ++t)
    for (std::size_t h = 0; h < a.heads(); ++h)
      for (std::size_t u = 0; u < b.tokens(); ++u)
        for (std::size_t g = 0; g < b.heads(); ++g) {
          const void* x = a.head(t, h);
          const void* y = b.head(u, g);
          const auto* p = static_cast<const char*>(x);
          const auto* q = static_cast<const char*>(y);
          const std::size_t bytes = d * sizeof(*a.data());
          const bool same = t == u && h == g && p == q;
          if (same && in_place_allowed) continue;
          if (p < q + bytes && q < p + bytes) return true;
        }
  return false;
}

// The rotation of one head by the oracle: pair j by f·R(±m_j·θ_j), in long double.
template <class T>
std::vector<long double> oracle(const T* head, std::size_t d, std::size_t rotary_dim,
                                std::size_t offset, rope::Layout layout,
                                const std::vector<double>& theta, double f,
                                const std::vector<std::int64_t>& m, rope::Direction direction) {
  std::vector<long double> out(d);
  for (std::size_t i = 0; i < d; ++i)
    out[i] = static_cast<long double>(static_cast<double>(head[i]));
  const std::size_t half = rotary_dim / 2;
  const long double sign = direction == rope::Direction::forward ? 1 : -1;
  for (std::size_t j = 0; j < half; ++j) {
    const std::size_t i0 = offset + (layout == rope::Layout::interleaved ? 2 * j : j);
    const std::size_t i1 = offset + (layout == rope::Layout::interleaved ? 2 * j + 1 : j + half);
    const long double angle =
        sign * static_cast<long double>(m[j]) * static_cast<long double>(theta[j]);
    const long double scale = static_cast<long double>(f);
    const long double c = scale * std::cos(angle), s = scale * std::sin(angle);
    const long double a = out[i0], b = out[i1];
    out[i0] = a * c - b * s;
    out[i1] = b * c + a * s;
  }
  return out;
}

// Unit roundoff of a type with p significand bits.
template <class T>
double unit_roundoff() {
  return std::ldexp(1.0, -std::numeric_limits<T>::digits);
}

// |computed − oracle| for one coordinate of a pair (a, b) rotated to position m with factor f:
//  - a table entry is f·cos(m·θ) (or sin) computed in double from the double product m·θ, which
//    is off by ≤ 2^-53·m·θ; cos is within 1 ulp and the product with f adds one rounding: 3·u_d
//    absolute on an entry of size ≤ f, then one rounding to the compute type C;
//  - the kernel's two products and sum in C: with that rounding, γ_4(C), all on f·(|a| + |b|);
//  - a 16-bit T rounds the result once more: u_T of at most f·(|a| + |b|).
template <class T>
double bound(double pair_abs, double f, std::int64_t m, double theta_max) {
  using C = rope::compute_t<T>;
  const double u = unit_roundoff<C>(), u_d = unit_roundoff<double>();
  const double gamma4 = 4 * u / (1 - 4 * u);
  const double angle = u_d * static_cast<double>(m) * std::max(theta_max, 1.0);
  const double store = std::is_same_v<T, C> ? 0.0 : unit_roundoff<T>();
  return f * pair_abs * (gamma4 + 3 * u_d + angle + store) * (1 + 1e-9);
}

// The index, in its head, of the coordinate paired with rotated coordinate i.
template <class T>
std::size_t partner_of(std::size_t i, const rope::Rotary<T>& rot) {
  const std::size_t r = rot.rotary_dim(), k = i - rot.rotary_offset();
  const std::size_t partner =
      rot.layout() == rope::Layout::interleaved ? (k ^ 1U) : (k < r / 2 ? k + r / 2 : k - r / 2);
  return rot.rotary_offset() + partner;
}

template <class T>
double largest_theta(const rope::Rotary<T>& rot) {
  double largest = 0;
  for (const double t : rot.inverse_frequencies()) largest = std::max(largest, std::abs(t));
  return largest;
}

// The coordinates of a call: coordinate(t, a) of token t; one axis for Positions.
struct Coordinates {
  std::vector<std::int64_t> values;  // [tokens][axes]
  std::size_t axes = 1;
  std::int64_t operator()(std::size_t t, std::size_t a) const { return values[t * axes + a]; }
  // The position of each pair of token t, and the largest of them.
  template <class T>
  std::vector<std::int64_t> of_pairs(std::size_t t, const rope::Rotary<T>& rot) const {
    std::vector<std::int64_t> m(rot.rotary_dim() / 2);
    for (std::size_t j = 0; j < m.size(); ++j) m[j] = (*this)(t, rot.axis_of_pairs()[j]);
    return m;
  }
  std::int64_t largest(std::size_t t) const {
    std::int64_t m = 0;
    for (std::size_t a = 0; a < axes; ++a) m = std::max(m, (*this)(t, a));
    return m;
  }
};

// With a query scale, token t's expected values are the oracle's times scales[t]: a coordinate
// outside the slice is T(C(x)·C(s)) exactly, a rotated one within |s|·(the bound + the two
// roundings of s to C and of s·row, γ_2(C) on f·(|a| + |b|)).
template <class T>
void check_against_oracle(const rope::Rotary<T>& rot, const rope::View<const T>& src,
                          const rope::View<T>& out, const Coordinates& positions,
                          rope::Direction direction, std::size_t first, std::size_t last,
                          const std::vector<double>* scales = nullptr) {
  using C = rope::compute_t<T>;
  const std::size_t d = rot.head_size(), r = rot.rotary_dim(), offset = rot.rotary_offset();
  const auto& theta = rot.inverse_frequencies();
  const double theta_max = largest_theta(rot);
  const double f = rot.attention_factor();
  for (std::size_t t = first; t < last; ++t) {
    const std::vector<std::int64_t> m = positions.of_pairs(t, rot);
    const double s = scales != nullptr ? (*scales)[t] : 1.0;
    for (std::size_t h = 0; h < src.heads(); ++h) {
      auto expected = oracle(src.head(t, h), d, r, offset, rot.layout(), theta, f, m, direction);
      for (auto& e : expected) e *= static_cast<long double>(s);
      for (std::size_t i = 0; i < d; ++i) {
        const double got = static_cast<double>(out.head(t, h)[i]);
        const bool rotated = i >= offset && i < offset + r;
        if (!rotated) {
          const T x = src.head(t, h)[i];
          const double want =
              scales == nullptr
                  ? static_cast<double>(x)
                  : static_cast<double>(static_cast<T>(static_cast<C>(x) * static_cast<C>(s)));
          if (!(got == want) && !(std::isnan(got) && std::isnan(want))) {
            fail("a coordinate outside the rotary slice is not the input (times the scale)");
          }
          continue;
        }
        const double a = static_cast<double>(src.head(t, h)[i]);
        const double b = static_cast<double>(src.head(t, h)[partner_of(i, rot)]);
        const double e = std::abs(got - static_cast<double>(expected[i]));
        const double pair = std::abs(a) + std::abs(b), u = unit_roundoff<C>();
        const double limit =
            scales == nullptr ? bound<T>(pair, f, positions.largest(t), theta_max)
                              : std::abs(s) * (bound<T>(pair, f, positions.largest(t), theta_max) +
                                               f * pair * 2 * u / (1 - 2 * u));
        if (!(e <= limit)) {
          fail("token " + std::to_string(t) + " head " + std::to_string(h) + " coordinate " +
               std::to_string(i) + " at position " + std::to_string(positions.largest(t)) +
               ": got " + std::to_string(got) + ", expected " +
               std::to_string(static_cast<double>(expected[i])) + " (attention factor " +
               std::to_string(f) + ", largest theta " + std::to_string(theta_max) + ")");
        }
      }
    }
  }
}

template <class T>
void run(Bytes& in, bool multi_axis) {
  // ---- construction
  rope::Options options;
  options.head_size = in.u8() % 2 == 0 ? 2 * (1 + in.u8() % 40) : in.u8() % 81;  // mostly even
  options.layout = in.u8() % 2 == 0 ? rope::Layout::interleaved : rope::Layout::half_split;
  options.rotary_dim = in.u8() % 3 == 0 ? in.u8() % (options.head_size + 3) : 0;
  options.rotary_offset = in.u8() % 4 == 0 ? in.u8() % 5 : 0;
  options.base = parameter(in, in.pick({10000.0, 500000.0, 1e6, 2.0}));
  options.max_positions = in.u8() % 200;
  const std::size_t rotary_dim = options.rotary_dim == 0 ? options.head_size : options.rotary_dim;
  options.scaling = scaling(in, rotary_dim);
  options.sequence_length = in.pick({0.0, 100.0, 5000.0, -1.0, kNaN});
  if (multi_axis) options.axes = axes(in, rotary_dim);
  rope::Rotary<T>* made = nullptr;
  try {
    made = new rope::Rotary<T>(options);
  } catch (const std::invalid_argument&) {
    return;  // a rejected configuration: the contract allows nothing else
  }
  const std::unique_ptr<rope::Rotary<T>> owner(made);
  const rope::Rotary<T>& rot = *made;
  const std::size_t d = rot.head_size();
  if (d % 2 != 0 || d == 0 || rot.rotary_dim() + rot.rotary_offset() > d) {
    fail("an invalid head accepted");
  }

  // ---- the call
  const std::size_t tokens = in.u8() % 6, heads = 1 + in.u8() % 3;
  std::vector<std::int64_t> positions(tokens);
  for (auto& p : positions) {
    const std::uint8_t kind = in.u8() % 16;
    p = kind < 12 ? std::int64_t(in.u16() % 600)
                  : in.pick({std::int64_t{-1}, kMaxPosition, kMaxPosition + 1,
                             std::int64_t(in.u64() % (std::uint64_t{1} << 40))});
  }
  // Multi-axis calls: coordinates mostly equal to the token's position (a text token), else
  // another one; sometimes one axis too many. int32 or int64, [tokens][axes] or [axes][tokens].
  Coordinates coordinates{positions, 1};
  std::vector<std::int64_t> wide;
  std::vector<std::int32_t> narrow;
  bool axis_major = false, use_int32 = false;
  if (multi_axis) {
    coordinates.axes = std::min<std::size_t>(rot.axes() + (in.u8() % 16 == 0 ? 1 : 0), 4);
    coordinates.values.assign(tokens * coordinates.axes, 0);
    for (std::size_t t = 0; t < tokens; ++t) {
      for (std::size_t k = 0; k < coordinates.axes; ++k) {
        const std::uint8_t kind = in.u8() % 8;
        coordinates.values[t * coordinates.axes + k] = kind < 5   ? positions[t]
                                                       : kind < 7 ? std::int64_t(in.u16() % 600)
                                                                  : std::int64_t{-1};
      }
    }
    axis_major = in.u8() % 2 == 0;
    use_int32 = in.u8() % 2 == 0 &&
                std::all_of(coordinates.values.begin(), coordinates.values.end(),
                            [](std::int64_t v) { return v >= INT32_MIN && v <= INT32_MAX; });
    wide.resize(tokens * coordinates.axes);
    narrow.resize(tokens * coordinates.axes);
    for (std::size_t k = 0; k < coordinates.axes; ++k) {
      for (std::size_t t = 0; t < tokens; ++t) {
        const std::int64_t v = coordinates(t, k);
        const std::size_t at = axis_major ? k * tokens + t : t * coordinates.axes + k;
        wide[at] = v;
        narrow[at] = static_cast<std::int32_t>(use_int32 ? v : 0);
      }
    }
  }
  const auto axis_positions = [&] {
    const std::size_t n = coordinates.axes;
    const std::size_t axis_stride = axis_major ? tokens : 1, token_stride = axis_major ? 1 : n;
    return use_int32 ? rope::Positions(narrow.data(), n, axis_stride, token_stride)
                     : rope::Positions(wide.data(), n, axis_stride, token_stride);
  };
  const Shape a = shape(in, tokens, heads, d);
  const std::uint8_t mode = in.u8() % 4;  // 0 in place, 1 out of place, 2 dst in src's buffer, 3 qk
  const std::size_t b_heads = mode == 3 ? 1 + in.u8() % 2 : heads;
  const Shape b = shape(in, tokens, b_heads, d);
  const rope::Direction direction =
      in.u8() % 2 == 0 ? rope::Direction::forward : rope::Direction::inverse;
  rope::Execution execution;
  execution.threads = 1 + in.u8() % 3;
  execution.min_bytes_per_thread = 1;
  rope::TokenRange range{0, tokens};
  if (in.u8() % 4 == 0) range = {in.u8() % (tokens + 2), in.u8() % (tokens + 2)};

  // One buffer for src and, unless out of place, dst; each sized to its views, so that an access
  // past them is a sanitizer error (and a write inside them but outside dst is caught below).
  const std::size_t a_end = extent(a, tokens, heads, d);
  const std::size_t b_start = mode == 2 ? in.u8() % (a_end + 1) : (mode == 3 ? a_end : 0);
  const std::size_t b_end = b_start + extent(b, tokens, b_heads, d);
  const bool shared = mode == 2 || mode == 3;
  std::vector<T> buffer(std::max<std::size_t>(shared ? std::max(a_end, b_end) : a_end, 1));
  std::vector<T> other(mode == 1 ? std::max<std::size_t>(b_end, 1) : 1);
  // The values come from a generator seeded by the input, so that short inputs fill whole
  // buffers too.
  std::mt19937 values(static_cast<std::uint32_t>(in.u64()));
  // apply_qk with a query scale, for some inputs (read last: the inputs of the corpus from before
  // read 0 here, no scale).
  std::optional<rope::QueryScale> scale;
  const std::uint8_t scale_kind = mode == 3 ? in.u8() % 4 : 0;
  const double lengths[] = {8.0, 64.0, 1000.5, 16384.0, 0.0, -3.0, kNaN, kInf};
  const double coefficients[] = {0.1, 0.5, -0.2, 0.0, 2.0, kNaN, kInf};
  if (scale_kind == 2) scale = rope::Llama4Temperature{in.pick(lengths), in.pick(coefficients)};
  if (scale_kind == 3) scale = rope::Llama4Scaling{in.pick(coefficients), in.pick(lengths)};
  std::uniform_real_distribution<float> uniform(-2.0f, 2.0f);
  for (T& v : buffer) v = static_cast<T>(uniform(values));
  const std::vector<T> buffer_before = buffer, other_before = other;
  const rope::View<T> x(buffer.data() + a.offset, tokens, heads, a.token_stride, a.head_stride);
  T* const b_base = (mode == 1 ? other.data() : buffer.data()) + b_start + b.offset;
  const rope::View<T> y =
      mode == 0 ? x : rope::View<T>(b_base, tokens, b_heads, b.token_stride, b.head_stride);

  // Is the call valid? Judged here from the rules, by brute force.
  std::string invalid;  // why not, if not
  if (range.first > range.last || range.last > tokens) {
    invalid += " range outside the batch;";
  } else {
    for (std::size_t t = range.first; t < range.last; ++t) {  // only the range's are read
      for (std::size_t k = 0; k < coordinates.axes; ++k) {
        const std::int64_t p = coordinates(t, k);
        if (p < 0 || p > kMaxPosition) invalid += " position out of range;";
      }
    }
    if (multi_axis && range.first < range.last && coordinates.axes != rot.axes()) {
      invalid += " another number of axes;";
    }
  }
  if (conflict(x, x, d, true)) invalid += " src heads overlap;";
  if (conflict(y, y, d, true)) invalid += " dst heads overlap;";
  if (conflict(x, y, d, mode != 3)) invalid += " src and dst overlap;";
  if (scale) {
    const auto* t = std::get_if<rope::Llama4Temperature>(&*scale);
    const auto* l = std::get_if<rope::Llama4Scaling>(&*scale);
    const double length = t != nullptr ? t->floor_scale : l->original_max_position_embeddings;
    const double coefficient = t != nullptr ? t->attn_scale : l->llama_4_scaling_beta;
    if (!(std::isfinite(length) && length > 0) || !std::isfinite(coefficient)) {
      invalid += " query scale parameters;";
    }
  }
  const bool valid = invalid.empty();

  bool threw = false;
  std::string message;
  const std::vector<T>& src_copy = buffer_before;  // src as it was, when dst shares its buffer
  try {
    if (scale && multi_axis) {
      rot.apply_qk(rope::Queries(x).scaled(*scale), rope::Keys(y), axis_positions(),
                   {direction, range, execution});
    } else if (scale) {
      rot.apply_qk(rope::Queries(x).scaled(*scale), rope::Keys(y), positions.data(),
                   {direction, range, execution});
    } else if (mode == 3 && multi_axis) {
      rot.apply_qk(x, y, axis_positions(), {direction, range, execution});
    } else if (mode == 3) {
      rot.apply_qk(x, y, positions.data(), {direction, range, execution});
    } else if (multi_axis) {
      rot.apply(rope::View<const T>(x), y, axis_positions(), {direction, range, execution});
    } else {
      rot.apply(rope::View<const T>(x), y, positions.data(), {direction, range, execution});
    }
  } catch (const std::invalid_argument& e) {
    threw = true;
    message = e.what();
  } catch (const std::out_of_range& e) {
    threw = true;
    message = e.what();
  }
  if (threw) {
    if (valid) fail("a valid call was rejected: " + message);
    if (std::memcmp(buffer.data(), buffer_before.data(), buffer.size() * sizeof(T)) != 0 ||
        std::memcmp(other.data(), other_before.data(), other.size() * sizeof(T)) != 0) {
      fail("a rejected call wrote to a buffer");
    }
    return;
  }
  if (!valid) fail("an invalid call was accepted:" + invalid);
  // Only the heads of the range's tokens in dst (q and k for apply_qk) may have changed.
  const auto written = [&](const T* element) {
    const auto inside = [&](const rope::View<T>& v) {
      for (std::size_t t = range.first; t < range.last; ++t)
        for (std::size_t h = 0; h < v.heads(); ++h)
          if (element >= v.head(t, h) && element < v.head(t, h) + d) return true;
      return false;
    };
    return inside(y) || (mode == 3 && inside(x));
  };
  for (std::size_t i = 0; i < buffer.size(); ++i) {
    if (!written(&buffer[i]) && std::memcmp(&buffer[i], &buffer_before[i], sizeof(T)) != 0) {
      fail("element " + std::to_string(i) + " outside dst changed");
    }
  }
  for (std::size_t i = 0; i < other.size(); ++i) {
    if (!written(&other[i]) && std::memcmp(&other[i], &other_before[i], sizeof(T)) != 0) {
      fail("element " + std::to_string(i) + " of dst's buffer outside dst changed");
    }
  }

  // ---- the results
  const rope::View<const T> src(src_copy.data() + a.offset, tokens, heads, a.token_stride,
                                a.head_stride);
  if (mode == 3) {
    std::vector<double> scales(tokens, 1.0);
    if (scale) {
      for (std::size_t t = range.first; t < range.last; ++t) {
        scales[t] = rope::query_scale(*scale, coordinates(t, 0));
      }
    }
    check_against_oracle(rot, src, x, coordinates, direction, range.first, range.last,
                         scale ? &scales : nullptr);
    const rope::View<const T> k_src(src_copy.data() + b_start + b.offset, tokens, b_heads,
                                    b.token_stride, b.head_stride);
    check_against_oracle(rot, k_src, y, coordinates, direction, range.first, range.last);
    return;
  }
  check_against_oracle(rot, src, y, coordinates, direction, range.first, range.last);

  // The inverse undoes the forward up to f²: rotate the result back and compare with f²·src.
  if (range.first != 0 || range.last != tokens) return;
  const rope::Direction back =
      direction == rope::Direction::forward ? rope::Direction::inverse : rope::Direction::forward;
  const rope::TokenRange all{0, tokens};
  std::vector<T> round_trip(buffer.size());
  const rope::View<T> z(round_trip.data() + a.offset, tokens, heads, a.token_stride, a.head_stride);
  if (multi_axis) {
    rot.apply(rope::View<const T>(y), z, axis_positions(), {back, all});
  } else {
    rot.apply(rope::View<const T>(y), z, positions.data(), {back, all});
  }
  const double f = rot.attention_factor();
  const std::size_t r = rot.rotary_dim(), offset = rot.rotary_offset();
  const double theta_max = largest_theta(rot);
  for (std::size_t t = 0; t < tokens; ++t) {
    for (std::size_t h = 0; h < heads; ++h) {
      for (std::size_t i = offset; i < offset + r; ++i) {
        const std::size_t partner = partner_of(i, rot);
        const double a0 = static_cast<double>(src.head(t, h)[i]);
        const double b0 = static_cast<double>(src.head(t, h)[partner]);
        const double a1 = static_cast<double>(y.head(t, h)[i]);
        const double b1 = static_cast<double>(y.head(t, h)[partner]);
        // forward error (≤ bound on (a0, b0)) turned by f·R, plus the backward pass's own error
        const double limit =
            f * std::sqrt(2.0) *
                bound<T>(std::abs(a0) + std::abs(b0), f, coordinates.largest(t), theta_max) +
            bound<T>(std::abs(a1) + std::abs(b1), f, coordinates.largest(t), theta_max);
        if (!std::isfinite(limit) || !std::isfinite(f * f * a0)) continue;  // f² overflows
        const double e = std::abs(static_cast<double>(z.head(t, h)[i]) - f * f * a0);
        if (!(e <= limit * (1 + 1e-6))) {
          fail("round trip of token " + std::to_string(t) + " coordinate " + std::to_string(i) +
               ": error " + std::to_string(e) + " over " + std::to_string(limit));
        }
      }
    }
  }
}

// ---- Attacks: the inputs that once got past the checks --------------------------------------
// Inputs that begin with the bytes A5 5A (no input of the corpus from before does) draw the
// arguments of docs/errors.md's E78–E80 and their neighbours: strides that wrap around size_t or
// reach past 2^63 − 1 bytes, index arrays inside the views a call writes, enum values outside
// their enumerators, consecutive starts near the ends of int64, and rings that start near 2^64.
// The rules are judged here in 128-bit arithmetic; a call that must be rejected must throw
// before writing, and one that must pass must give the bits of the same call on plain arrays.
// Inputs that begin with A5 5B draw paged caches with strided coordinates (E89–E92, E81).

__extension__ typedef unsigned __int128 Wide;  // 128-bit arithmetic, g++ and clang
__extension__ typedef __int128 SignedWide;
constexpr Wide kMaxBytes = static_cast<Wide>(PTRDIFF_MAX);
constexpr std::size_t kD = 8;

const rope::Rotary<float>& attack_rotary() {
  static const rope::Rotary<float> rot(rope::Options{kD, 10000.0, rope::Layout::interleaved, 64});
  return rot;
}

std::size_t attack_count(Bytes& in) {
  const std::size_t values[] = {0,       1, 1, 2, 2, 3, std::size_t{1} << 31, std::size_t{1} << 33,
                                SIZE_MAX};
  return in.pick(values);
}
std::size_t attack_stride(Bytes& in) {
  const std::size_t values[] = {kD,
                                kD,
                                2 * kD,
                                3 * kD,
                                0,
                                kD - 2,
                                SIZE_MAX,
                                SIZE_MAX - 7,
                                std::size_t{1} << 60,
                                std::size_t{1} << 62,
                                static_cast<std::size_t>(in.u64())};
  return in.pick(values);
}

// Strides: rejected (E79, or the overlap rules) or, where the view lies in the buffer and its heads
// are apart, the bits of the rotation of a contiguous copy.
void attack_strides(Bytes& in) {
  const rope::Rotary<float>& rot = attack_rotary();
  std::vector<float> buffer(256);
  for (std::size_t i = 0; i < buffer.size(); ++i) buffer[i] = 0.25f * float(i % 13) - 1.0f;
  const std::vector<float> before = buffer;
  const std::size_t offset = in.u8() % 64;
  const std::size_t batches = attack_count(in), tokens = attack_count(in), heads = attack_count(in);
  const std::size_t bs = attack_stride(in), ts = attack_stride(in), hs = attack_stride(in);
  const rope::View<float> x(buffer.data() + offset, batches, tokens, heads, bs, ts, hs);
  // The rules of E79 in 128-bit arithmetic.
  bool wraps = Wide(batches) * tokens > SIZE_MAX;
  Wide extent = Wide(kD) * sizeof(float);
  const std::size_t counts[3] = {batches, tokens, heads}, steps[3] = {bs, ts, hs};
  const bool empty = batches * tokens == 0 || heads == 0;
  for (int a = 0; a < 3 && !wraps && !empty; ++a) {
    if (counts[a] <= 1) continue;
    const Wide run = Wide(steps[a]) * sizeof(float) * (counts[a] - 1);
    if (run > kMaxBytes) wraps = true;
    extent += run;
  }
  if (!empty && extent > kMaxBytes) wraps = true;
  const bool fits =
      !wraps && !empty && offset * sizeof(float) + extent <= buffer.size() * sizeof(float);
  if (!wraps && !fits && !empty) return;  // a view past the caller's buffer: outside the contract
  bool threw = false;
  try {
    rot.apply(x, rope::Positions::consecutive(3));
  } catch (const std::invalid_argument&) {
    threw = true;
  } catch (const std::out_of_range&) {
    threw = true;
  }
  if (wraps && !threw) fail("a view whose strides wrap around or pass 2^63 - 1 bytes was accepted");
  if (threw) {
    if (std::memcmp(buffer.data(), before.data(), buffer.size() * sizeof(float)) != 0) {
      fail("a rejected view was written");
    }
    return;
  }
  if (empty) return;
  // Accepted: the heads must have been apart, and each is the rotation of its own input.
  for (std::size_t r = 0; r < batches * tokens; ++r) {
    for (std::size_t h = 0; h < heads; ++h) {
      const std::size_t at = offset + (r / tokens) * bs + (r % tokens) * ts + h * hs;
      std::vector<float> head(before.begin() + std::ptrdiff_t(at),
                              before.begin() + std::ptrdiff_t(at + kD));
      rot.apply(head.data(), 1, 1, rope::Positions::consecutive(3 + std::int64_t(r % tokens)));
      if (std::memcmp(head.data(), buffer.data() + at, kD * sizeof(float)) != 0) {
        fail("a strided head differs from the same head rotated alone");
      }
    }
  }
}

// An index array inside or beside the views a call writes.
void attack_aliasing(Bytes& in) {
  const rope::Rotary<float>& rot = attack_rotary();
  alignas(64) static unsigned char bytes[2048];
  for (std::size_t i = 0; i < sizeof(bytes) / sizeof(float); ++i) {
    const float v = 0.5f + float(i % 7);
    std::memcpy(bytes + i * sizeof(float), &v, sizeof(float));
  }
  const std::size_t tokens = 1 + in.u8() % 4;
  const std::size_t written_at = 64 * (in.u8() % 4);  // bytes of the written view
  const std::size_t view_bytes = tokens * kD * sizeof(float);
  const std::size_t mode = in.u8() % 3;  // 0 apply in place, 1 apply out of place, 2 slots
  const bool wide = in.u8() % 2 == 0;
  const std::size_t element = wide ? 8 : 4;
  const std::size_t index_at = element * (in.u16() % (sizeof(bytes) / element - 8));
  const std::size_t index_bytes = tokens * element;
  for (std::size_t t = 0; t < tokens; ++t) {  // rows 0, 1, ... (positions and slots alike)
    if (wide) {
      const std::int64_t v = std::int64_t(t);
      std::memcpy(bytes + index_at + t * 8, &v, 8);
    } else {
      const std::int32_t v = std::int32_t(t);
      std::memcpy(bytes + index_at + t * 4, &v, 4);
    }
  }
  unsigned char before[sizeof(bytes)];
  std::memcpy(before, bytes, sizeof(bytes));
  auto* written = reinterpret_cast<float*>(bytes + written_at);
  const auto* read = reinterpret_cast<const float*>(bytes + 1280);  // src, k: never written
  const auto w = rope::View<float>::contiguous(written, tokens, 1, kD);
  const rope::Positions index =
      wide ? rope::Positions(reinterpret_cast<const std::int64_t*>(bytes + index_at))
           : rope::Positions(reinterpret_cast<const std::int32_t*>(bytes + index_at));
  const bool inside = index_at < written_at + view_bytes && written_at < index_at + index_bytes;
  bool threw = false;
  try {
    if (mode == 0) {
      rot.apply(w, index);
    } else if (mode == 1) {
      rot.apply(rope::View<const float>::contiguous(read, tokens, 1, kD), w, index);
    } else {
      const std::int64_t positions[4] = {0, 1, 2, 3};
      const rope::Slots slots =
          wide ? rope::Slots(reinterpret_cast<const std::int64_t*>(bytes + index_at), tokens)
               : rope::Slots(reinterpret_cast<const std::int32_t*>(bytes + index_at), tokens);
      // q in place in the buffer's last bytes, the written view the cache.
      auto* q = reinterpret_cast<float*>(bytes + 1536);
      rot.apply_qk(rope::Queries(rope::View<const float>::contiguous(q, tokens, 1, kD),
                                 rope::View<float>::contiguous(q, tokens, 1, kD)),
                   rope::Keys(rope::View<const float>::contiguous(read, tokens, 1, kD),
                              rope::KeyCache<float>{w, slots}),
                   positions);
    }
  } catch (const std::invalid_argument&) {
    threw = true;
  }
  const bool q_inside = mode == 2 && index_at < 1536 + view_bytes && 1536 < index_at + index_bytes;
  if ((inside || q_inside) != threw) {
    fail(threw ? "an index array beside the views written was rejected"
               : "an index array inside a view the call writes was accepted");
  }
  if (threw && std::memcmp(before, bytes, sizeof(bytes)) != 0) fail("a rejected call wrote");
  if (!threw && std::memcmp(before + index_at, bytes + index_at, index_bytes) != 0) {
    fail("an index array changed");
  }
}

// Enum values cast from any integer: rejected iff outside the enumerators.
void attack_enums(Bytes& in) {
  const int value = static_cast<int>(static_cast<std::int8_t>(in.u8()));
  const std::uint8_t which = in.u8() % 5;
  const int count = which == 4 ? 5 : which == 3 ? 3 : 2;
  const bool valid = value >= 0 && value < count;
  std::vector<float> x(2 * kD, 0.5f), w(kD, 1.0f);
  bool threw = false;
  try {
    if (which == 0 || which == 1) {
      rope::Options o{kD, 10000.0, rope::Layout::half_split, 8};
      if (which == 0) o.layout = static_cast<rope::Layout>(value);
      if (which == 1) o.angles = static_cast<rope::Angles>(value);
      rope::Rotary<float> r(o);
    } else if (which == 2) {
      attack_rotary().apply(x.data(), 2, 1, rope::Positions::consecutive(0),
                            {static_cast<rope::Direction>(value)});
    } else if (which == 3) {
      const rope::CachedRotary<float> cached({kD, rope::Layout::half_split, 0, 0});
      const std::vector<float> table(2 * kD, 1.0f);
      cached.apply(x.data(), 2, 1, rope::Positions::consecutive(0),
                   {table.data(), table.data(), 2, static_cast<rope::CosSinRow>(value), 0});
    } else {
      const bool l2 = value == static_cast<int>(rope::NormKind::l2_after);  // takes no weight
      rope::normalize_heads(rope::View<float>::contiguous(x.data(), 2, 1, kD), kD,
                            rope::Norm<float>{static_cast<rope::NormKind>(value),
                                              l2 ? nullptr : w.data(), l2 ? 0 : kD, 1e-6});
    }
  } catch (const std::invalid_argument&) {
    threw = true;
  }
  if (valid == threw) {
    fail("enum value " + std::to_string(value) + " of kind " + std::to_string(which) +
         (threw ? " rejected" : " accepted"));
  }
}

// consecutive(first) near the ends of int64, over batches of sequences and token ranges.
void attack_consecutive(Bytes& in) {
  const rope::Rotary<float>& rot = attack_rotary();
  const std::int64_t firsts[] = {
      INT64_MAX, INT64_MIN, kMaxPosition, kMaxPosition + 1, kMaxPosition - 2, -1, 0, 5};
  const std::int64_t first =
      in.u8() % 8 == 7 ? static_cast<std::int64_t>(in.u64()) : in.pick(firsts);
  const std::size_t batches = 1 + in.u8() % 2, tokens = 1 + in.u8() % 4;
  const std::size_t rows = batches * tokens;
  rope::TokenRange range{0, rows};
  if (in.u8() % 2 == 0) range = {in.u8() % (rows + 1), rows};
  bool valid = true;
  std::vector<std::int64_t> positions(rows);
  for (std::size_t t = range.first; t < range.last; ++t) {
    const SignedWide p = static_cast<SignedWide>(first) + static_cast<SignedWide>(t % tokens);
    valid = valid && p >= 0 && p <= kMaxPosition;
    positions[t] = valid ? static_cast<std::int64_t>(p) : 0;
  }
  std::vector<float> x(rows * kD);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = 0.125f * float(i % 11);
  std::vector<float> y = x;
  const auto view = rope::View<float>(x.data(), batches, tokens, 1, tokens * kD, kD, kD);
  bool threw = false;
  try {
    rot.apply(view, rope::Positions::consecutive(first), {rope::Direction::forward, range});
  } catch (const std::out_of_range&) {
    threw = true;
  }
  if (valid == threw)
    fail(threw ? "valid consecutive positions rejected" : "a wrapped sum accepted");
  if (threw) return;
  rot.apply(rope::View<float>(y.data(), batches, tokens, 1, tokens * kD, kD, kD), positions.data(),
            {rope::Direction::forward, range});
  if (x != y) fail("consecutive positions differ from the same positions in an array");
}

// A ring over a few rows that starts anywhere, near 2^64 most often.
void attack_ring(Bytes& in) {
  const rope::Rotary<float>& rot = attack_rotary();
  const std::uint64_t first = in.u8() % 2 == 0 ? UINT64_MAX - in.u8() % 8 : in.u64();
  const std::size_t rows = 1 + in.u8() % 5, tokens = 1 + in.u8() % rows;
  std::vector<float> q(tokens * kD, 0.5f), k(tokens * kD);
  for (std::size_t i = 0; i < k.size(); ++i) k[i] = float(i % 9) - 4.0f;
  std::vector<float> ring(rows * kD, -7.0f), explicit_rows(rows * kD, -7.0f);
  std::vector<std::int64_t> positions(tokens), slots(tokens);
  for (std::size_t t = 0; t < tokens; ++t) {
    positions[t] = std::int64_t(t);
    slots[t] = static_cast<std::int64_t>((static_cast<Wide>(first) + t) % rows);
  }
  const auto call = [&](std::vector<float>& cache, const rope::Slots& s) {
    std::vector<float> q_out(q.size());
    rot.apply_qk(rope::Queries(rope::View<const float>::contiguous(q.data(), tokens, 1, kD),
                               rope::View<float>::contiguous(q_out.data(), tokens, 1, kD)),
                 rope::Keys(rope::View<const float>::contiguous(k.data(), tokens, 1, kD),
                            rope::KeyCache<float>{
                                rope::View<float>::contiguous(cache.data(), rows, 1, kD), s}),
                 positions.data());
  };
  call(ring, rope::Slots::ring(first));
  call(explicit_rows, rope::Slots(slots.data(), tokens));
  if (ring != explicit_rows) fail("a ring's rows differ from (first + t) mod rows");
}

// A paged cache with strided coordinates (Coordinates, Slots::paged or a ring) at random strides
// in a buffer of known length: rejected, with nothing written, wherever a head's coordinate would
// fall outside the buffer or on another's; where accepted, every head apart and inside, each
// token's key the bits the same call writes into a contiguous cache, placed by the coordinates'
// formula, and nothing else written. (The library's rule, nested strides, may also reject
// layouts whose heads happen to be apart: that is not checked here.)
void attack_paged(Bytes& in) {
  const rope::Rotary<float>& rot = attack_rotary();
  const std::size_t pages = 1 + in.u8() % 3, block = 1 + in.u8() % 4, heads = 1 + in.u8() % 2;
  const std::size_t rows = pages * block, tokens = 1 + in.u8() % 3;
  const auto step = [&in](std::size_t sensible) {
    const std::size_t values[] = {sensible,
                                  sensible,
                                  sensible,
                                  0,
                                  1,
                                  static_cast<std::size_t>(in.u8() % 64),
                                  SIZE_MAX,
                                  std::size_t{1} << 61,
                                  static_cast<std::size_t>(in.u64())};
    return in.pick(values);
  };
  const std::size_t run = 1 + in.u8() % kD, coordinate_stride = step(run * block);
  const std::size_t token_stride = step(run), head_stride = step(kD * block);
  const std::size_t page_stride = step(heads * kD * block);
  std::vector<float> buffer(768);
  for (std::size_t i = 0; i < buffer.size(); ++i) buffer[i] = -8.0f - float(i % 5);
  const std::vector<float> before = buffer;
  const std::size_t offset = in.u8() % 16, length = buffer.size() - offset;
  const rope::View<float> cache = rope::View<float>(buffer.data() + offset, pages, block, heads,
                                                    page_stride, token_stride, head_stride)
                                      .within(length);
  const rope::Coordinates coordinates = rope::Coordinates::runs(run, coordinate_stride);
  // The slots: a ring, or a block table of one sequence (a page number may be −1).
  std::int32_t table[3], first[1] = {static_cast<std::int32_t>(in.u8() % 4)};
  for (std::int32_t& page : table) page = static_cast<std::int32_t>(in.u8() % (pages + 1)) - 1;
  const bool paged = in.u8() % 2 == 0;
  const std::uint64_t ring_first = in.u8();
  const rope::Slots slots =
      paged ? rope::Slots::paged({table, 1, 3, block}, first) : rope::Slots::ring(ring_first);
  std::vector<std::int64_t> positions(tokens), flat(tokens);
  bool slots_valid = true;
  for (std::size_t t = 0; t < tokens; ++t) {
    positions[t] = std::int64_t(t);
    if (paged) {
      const std::size_t i = std::size_t(first[0]) + t;
      if (i / block >= 3) {
        slots_valid = false;
        continue;
      }
      const std::int32_t page = table[i / block];
      flat[t] = page < 0 ? -1 : std::int64_t(page) * std::int64_t(block) + std::int64_t(i % block);
    } else {
      flat[t] = std::int64_t((Wide(ring_first) + t) % rows);
    }
  }
  if (!paged && tokens > rows) slots_valid = false;
  for (std::size_t a = 0; a < tokens && slots_valid; ++a) {  // a row taken twice
    for (std::size_t b = a + 1; b < tokens; ++b) {
      if (flat[a] >= 0 && flat[a] == flat[b]) slots_valid = false;
    }
  }
  // Every coordinate's element, in 128-bit arithmetic: inside the buffer, and none taken twice.
  bool layout_valid = true;
  std::vector<Wide> taken;
  for (std::size_t r = 0; r < rows && layout_valid; ++r) {
    for (std::size_t h = 0; h < heads && layout_valid; ++h) {
      for (std::size_t i = 0; i < kD; ++i) {
        const Wide at = Wide(r / block) * page_stride + Wide(r % block) * token_stride +
                        Wide(h) * head_stride + Wide(i / run) * coordinate_stride + i % run;
        if (at >= length) {
          layout_valid = false;
          break;
        }
        taken.push_back(at);
      }
    }
  }
  std::sort(taken.begin(), taken.end());
  if (std::adjacent_find(taken.begin(), taken.end()) != taken.end()) layout_valid = false;
  std::vector<float> k(tokens * heads * kD), q(tokens * kD, 0.5f);
  for (std::size_t i = 0; i < k.size(); ++i) k[i] = float(i % 9) - 4.0f;
  const auto keys = rope::View<const float>::contiguous(k.data(), tokens, heads, kD);
  bool threw = false;
  try {
    rot.apply_qk(rope::Queries(rope::View<float>::contiguous(q.data(), tokens, 1, kD)),
                 rope::Keys(keys, rope::KeyCache<float>{cache, slots, {}, coordinates}),
                 positions.data());
  } catch (const std::invalid_argument&) {
    threw = true;
  } catch (const std::out_of_range&) {
    threw = true;
  }
  if (threw) {
    if (buffer != before) fail("a rejected paged call wrote");
    return;
  }
  if (!layout_valid)
    fail("a strided cache with a head outside its buffer or on another was accepted");
  if (!slots_valid) fail("paged slots outside the table, or a row taken twice, were accepted");
  // The same call into contiguous rows at the flat slots, placed by the formula.
  std::vector<float> rows_cache(rows * heads * kD, 0.0f), expected = before, q2(tokens * kD, 0.5f);
  rot.apply_qk(rope::Queries(rope::View<float>::contiguous(q2.data(), tokens, 1, kD)),
               rope::Keys(keys, rope::KeyCache<float>{rope::View<float>::contiguous(
                                                          rows_cache.data(), rows, heads, kD),
                                                      rope::Slots(flat.data(), tokens)}),
               positions.data());
  for (std::size_t t = 0; t < tokens; ++t) {
    if (flat[t] < 0) continue;
    const auto r = std::size_t(flat[t]);
    for (std::size_t h = 0; h < heads; ++h) {
      for (std::size_t i = 0; i < kD; ++i) {
        const std::size_t at = offset + (r / block) * page_stride + (r % block) * token_stride +
                               h * head_stride + (i / run) * coordinate_stride + i % run;
        expected[at] = rows_cache[(r * heads + h) * kD + i];
      }
    }
  }
  if (std::memcmp(expected.data(), buffer.data(), buffer.size() * sizeof(float)) != 0) {
    fail("a strided cache's rows differ from the contiguous call's placed by the formula");
  }
  if (q != q2) fail("the queries differ with a strided cache");
}

void attack(Bytes& in) {
  switch (in.u8() % 5) {
    case 0:
      attack_strides(in);
      break;
    case 1:
      attack_aliasing(in);
      break;
    case 2:
      attack_enums(in);
      break;
    case 3:
      attack_consecutive(in);
      break;
    default:
      attack_ring(in);
      break;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size >= 2 && data[0] == 0xA5 && data[1] == 0x5A) {
    Bytes in(data + 2, size - 2);
    attack(in);
    return 0;
  }
  if (size >= 2 && data[0] == 0xA5 && data[1] == 0x5B) {
    Bytes in(data + 2, size - 2);
    attack_paged(in);
    return 0;
  }
  Bytes in(data, size);
  const std::uint8_t first = in.u8();
  const bool multi_axis = first / 4 % 4 == 3;
  switch (first % 4) {
    case 0:
      run<float>(in, multi_axis);
      break;
    case 1:
      run<double>(in, multi_axis);
      break;
    case 2:
      run<Eigen::half>(in, multi_axis);
      break;
    default:
      run<Eigen::bfloat16>(in, multi_axis);
      break;
  }
  return 0;
}
