// The calls that bench/ab/compare.sh times, compiled once per build compared: a shared object
// whose only visible symbols are the C functions below, so that two builds of the library (two
// revisions, or one revision under two sets of flags) live side by side in one process, each
// with its own copy of every inline function and template.
//
// Each row is one call shape: a Rotary, its buffers (allocated by the driver, the same bytes for
// every build) and its positions. Only calls spelled alike in every release are used, so that this
// file compiles against older revisions' headers.
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <type_traits>
#include <vector>

#include <Eigen/Core>

#include <rope/rope.hpp>

#define AB_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

enum class Call {
  apply,
  apply_unchecked,
  apply_out_of_place,
  apply_qk,
  apply_qk_roles,
  multi_axis,
  apply_qk_cache,
  apply_qk_values
};
enum class Type { f32, f16, f64 };

struct Row {
  Call call;
  Type type;
  rope::Layout layout;
  std::size_t head_size, heads, kv_heads, tokens;  // kv_heads: apply_qk's keys
  std::string name;
};

std::vector<Row> make_rows() {
  std::vector<Row> rows;
  const auto layout_name = [](rope::Layout l) {
    return l == rope::Layout::interleaved ? std::string("interleaved") : std::string("half_split");
  };
  const auto add = [&](Call call, Type type, rope::Layout layout, std::size_t d, std::size_t heads,
                       std::size_t kv_heads, std::size_t tokens) {
    const char* call_name = call == Call::apply                ? "apply"
                            : call == Call::apply_unchecked    ? "apply_unchecked"
                            : call == Call::apply_out_of_place ? "apply_out_of_place"
                            : call == Call::apply_qk           ? "apply_qk"
                            : call == Call::apply_qk_roles     ? "apply_qk_roles"
                            : call == Call::apply_qk_cache     ? "apply_qk_cache"
                            : call == Call::apply_qk_values    ? "apply_qk_values"
                                                               : "multi_axis";
    std::string shape = "d" + std::to_string(d) + "x" + std::to_string(heads);
    if (kv_heads != 0) shape += "+" + std::to_string(kv_heads);
    rows.push_back({call, type, layout, d, heads, kv_heads, tokens,
                    std::string(call_name) + "/" +
                        (type == Type::f32   ? "float"
                         : type == Type::f64 ? "double"
                                             : "half") +
                        "/" + layout_name(layout) + "/" + shape + "/t" + std::to_string(tokens)});
  };
  const rope::Layout layouts[] = {rope::Layout::half_split, rope::Layout::interleaved};
  // In place, Llama 3 8B's 32 + 8 heads in one buffer: decode, a chunk, a prefill, out of cache.
  for (const Type type : {Type::f32, Type::f16}) {
    for (const rope::Layout layout : layouts) {
      for (const std::size_t tokens : std::initializer_list<std::size_t>{1, 16, 512, 4096, 8192}) {
        add(Call::apply, type, layout, 128, 40, 0, tokens);
      }
    }
  }
  for (const rope::Layout layout : layouts) {
    add(Call::apply, Type::f32, layout, 64, 32, 0, 512);
    for (const std::size_t tokens : std::initializer_list<std::size_t>{1, 16, 512, 4096}) {
      add(Call::apply, Type::f32, layout, 256, 8, 0, tokens);
    }
    // 32 tokens (in the second-level cache) of few and many heads: the time of a token's heads
    // apart from what each token costs besides (the row, the call of the kernel, its prologue).
    for (const std::size_t heads : std::initializer_list<std::size_t>{2, 8, 32}) {
      add(Call::apply, Type::f32, layout, 256, heads, 0, 32);
    }
    for (const std::size_t heads : std::initializer_list<std::size_t>{4, 16, 64}) {
      add(Call::apply, Type::f32, layout, 128, heads, 0, 32);
    }
    // Either side of the calls that take each head in one pass (more than 4 MiB).
    add(Call::apply, Type::f32, layout, 128, 40, 0, 64);
    add(Call::apply, Type::f32, layout, 128, 40, 0, 128);
    // Either side of a 32 MiB last-level cache: 20 and 40 MiB of heads.
    add(Call::apply, Type::f32, layout, 128, 40, 0, 1024);
    add(Call::apply, Type::f32, layout, 128, 40, 0, 2048);
    for (const std::size_t tokens : std::initializer_list<std::size_t>{1, 512, 4096, 8192}) {
      add(Call::apply_out_of_place, Type::f32, layout, 128, 40, 0, tokens);
      add(Call::apply_qk, Type::f32, layout, 128, 32, 8, tokens);
    }
    // A chunk of a few tokens (speculative decoding, a short prompt): q and k interleave row by
    // row in the fused buffer.
    add(Call::apply_qk, Type::f32, layout, 128, 32, 8, 16);
    // An engine's decode and prefill: the keys into a half KV cache at their slots (the roles).
    for (const std::size_t tokens : std::initializer_list<std::size_t>{1, 16, 512}) {
      add(Call::apply_qk_cache, Type::f32, layout, 128, 32, 8, tokens);
    }
    // ... and the values of the same tokens (the buffer's third part) into a half value cache.
    for (const std::size_t tokens : std::initializer_list<std::size_t>{1, 16}) {
      add(Call::apply_qk_values, Type::f32, layout, 128, 32, 8, tokens);
    }
    // The roles in place, without a cache: apply_qk's call of two views, spelled as roles.
    for (const std::size_t tokens : std::initializer_list<std::size_t>{1, 16}) {
      add(Call::apply_qk_roles, Type::f32, layout, 128, 32, 8, tokens);
    }
  }
  // Heads whose pairs do not fill whole registers (vision encoders: 16 heads of 72, Gemma 4's
  // larger towers and SigLIP; of 80, Qwen2-VL's ViT): the last pairs of each head.
  for (const rope::Layout layout : layouts) {
    for (const std::size_t tokens : std::initializer_list<std::size_t>{1, 256}) {
      add(Call::apply, Type::f32, layout, 72, 16, 0, tokens);
    }
  }
  add(Call::apply, Type::f16, rope::Layout::half_split, 72, 16, 0, 256);
  add(Call::apply, Type::f32, rope::Layout::half_split, 80, 16, 0, 256);
  // Double: its interleaved product has a shuffle of its own (the imaginary parts).
  for (const rope::Layout layout : layouts) {
    for (const std::size_t tokens : std::initializer_list<std::size_t>{1, 16, 512}) {
      add(Call::apply, Type::f64, layout, 128, 40, 0, tokens);
    }
  }
  // In place through rope::unchecked (the walk, without the checks), beside the checked call.
  for (const rope::Layout layout : layouts) {
    for (const std::size_t tokens : std::initializer_list<std::size_t>{1, 16}) {
      add(Call::apply_unchecked, Type::f32, layout, 128, 40, 0, tokens);
    }
  }
  // One head of one token: little more than what a call costs before and after its kernel.
  for (const rope::Layout layout : layouts) add(Call::apply, Type::f32, layout, 128, 1, 0, 1);
  // Multi-axis: Qwen2-VL's sections on image tokens (q and k of 28 + 4 heads).
  for (const std::size_t tokens : std::initializer_list<std::size_t>{1, 512}) {
    add(Call::multi_axis, Type::f32, rope::Layout::half_split, 128, 28, 4, tokens);
  }
  return rows;
}

const std::vector<Row>& rows() {
  static const std::vector<Row> all = make_rows();
  return all;
}

std::size_t element_size(const Row& r) {
  return r.type == Type::f64 ? 8 : r.type == Type::f32 ? 4 : 2;
}
std::size_t row_elements(const Row& r) {
  const std::size_t v_heads = r.call == Call::apply_qk_values ? r.kv_heads : 0;
  return (r.heads + r.kv_heads + v_heads) * r.head_size;
}

// What a build makes for a row: its Rotary, and the call on the driver's buffers.
struct Made {
  virtual ~Made() = default;
  virtual void run(void* const* buffers, long repeat) = 0;
};

template <class T>
struct Rotating final : Made {
  Row row;
  rope::Rotary<T> rot;
  std::vector<std::int64_t> slots;  // apply_qk_cache, _values: token t into row t of the caches
  Rotating(const Row& r, const rope::Options& options) : row(r), rot(options), slots(r.tokens) {
    for (std::size_t t = 0; t < r.tokens; ++t) slots[t] = static_cast<std::int64_t>(t);
  }

  void run(void* const* buffers, long repeat) override {
    T* x = static_cast<T*>(buffers[0]);
    T* dst = static_cast<T*>(buffers[1]);
    const auto* positions = static_cast<const std::int64_t*>(buffers[2]);
    const std::size_t d = row.head_size, stride = row_elements(row), t = row.tokens;
    for (long i = 0; i < repeat; ++i) {
      switch (row.call) {
        case Call::apply:
          rot.apply(x, t, row.heads, positions);
          break;
        case Call::apply_unchecked:
          rot.apply(rope::unchecked, rope::View<const T>::contiguous(x, t, row.heads, d),
                    rope::View<T>::contiguous(x, t, row.heads, d), positions);
          break;
        case Call::apply_out_of_place:
          rot.apply(rope::View<const T>::contiguous(x, t, row.heads, d),
                    rope::View<T>::contiguous(dst, t, row.heads, d), positions);
          break;
        case Call::apply_qk:
          rot.apply_qk(rope::View<T>(x, t, row.heads, stride, d),
                       rope::View<T>(x + row.heads * d, t, row.kv_heads, stride, d), positions);
          break;
        case Call::apply_qk_roles:
          rot.apply_qk(rope::Queries<T>(rope::View<T>(x, t, row.heads, stride, d)),
                       rope::Keys<T>(rope::View<T>(x + row.heads * d, t, row.kv_heads, stride, d)),
                       positions);
          break;
        case Call::apply_qk_cache:
        case Call::apply_qk_values:
          if constexpr (!std::is_same_v<T, double>) {
            auto* cache = static_cast<Eigen::half*>(buffers[1]);
            const std::size_t kv = row.kv_heads;
            const rope::KeyCache<Eigen::half> rows{
                rope::View<Eigen::half>::contiguous(cache, t, kv, d), rope::Slots(slots.data(), t)};
            rope::Keys<T, Eigen::half> keys(
                rope::View<const T>(x + row.heads * d, t, kv, stride, d), rows);
            if (row.call == Call::apply_qk_values) {  // v after k; its cache after the keys'
              keys = keys.with_values(
                  rope::View<const T>(x + (row.heads + kv) * d, t, kv, stride, d),
                  rope::ValueCache<Eigen::half>{
                      rope::View<Eigen::half>::contiguous(cache + t * kv * d, t, kv, d)});
            }
            rot.apply_qk(rope::Queries<T>(rope::View<T>(x, t, row.heads, stride, d)), keys,
                         positions);
          }
          break;
        case Call::multi_axis:
          rot.apply_qk(rope::View<T>(x, t, row.heads, stride, d),
                       rope::View<T>(x + row.heads * d, t, row.kv_heads, stride, d),
                       rope::Positions::token_major(positions, 3));
          break;
      }
    }
  }
};

}  // namespace

AB_EXPORT int ab_rows() { return static_cast<int>(rows().size()); }

AB_EXPORT const char* ab_name(int row) { return rows()[std::size_t(row)].name.c_str(); }

// Bytes of buffer k of a row: 0 the elements (q and k for apply_qk, and v for apply_qk_values), 1
// dst (out of place) or the keys' half cache (apply_qk_cache; its rows and then the values' for
// apply_qk_values), 2 the positions (int64, one or three per token).
AB_EXPORT std::size_t ab_bytes(int row, int k) {
  const Row& r = rows()[std::size_t(row)];
  const std::size_t elements = r.tokens * row_elements(r) * element_size(r);
  if (k == 0) return elements;
  if (k == 1 && r.call == Call::apply_qk_cache) return r.tokens * r.kv_heads * r.head_size * 2;
  if (k == 1 && r.call == Call::apply_qk_values) return 2 * r.tokens * r.kv_heads * r.head_size * 2;
  if (k == 1) return r.call == Call::apply_out_of_place ? elements : 0;
  return r.tokens * (r.call == Call::multi_axis ? 3 : 1) * sizeof(std::int64_t);
}

// Fills the buffers: values in [−1, 1), positions 0 .. tokens − 1 (one token: position 4000;
// multi-axis: image tokens of a 16-column grid after 7 text tokens, Qwen2-VL's numbering).
AB_EXPORT void ab_fill(int row, void* const* buffers) {
  const Row& r = rows()[std::size_t(row)];
  const std::size_t n = r.tokens * row_elements(r);
  std::uint32_t state = 1;
  for (std::size_t i = 0; i < n; ++i) {
    state = state * 1664525U + 1013904223U;
    const float v = float(state >> 8) * (2.0F / 16777216.0F) - 1.0F;
    if (r.type == Type::f32) {
      static_cast<float*>(buffers[0])[i] = v;
    } else if (r.type == Type::f64) {
      static_cast<double*>(buffers[0])[i] = double(v);
    } else {
      static_cast<Eigen::half*>(buffers[0])[i] = Eigen::half(v);
    }
  }
  auto* p = static_cast<std::int64_t*>(buffers[2]);
  for (std::size_t t = 0; t < r.tokens; ++t) {
    if (r.call == Call::multi_axis) {
      const auto i = std::int64_t(t);
      p[3 * t] = 7;
      p[3 * t + 1] = 7 + i / 16;
      p[3 * t + 2] = 7 + i % 16;
    } else {
      p[t] = r.tokens == 1 ? 4000 : std::int64_t(t);
    }
  }
}

AB_EXPORT void* ab_make(int row) {
  const Row& r = rows()[std::size_t(row)];
  rope::Options options;
  options.head_size = r.head_size;
  options.layout = r.layout;
  if (r.call == Call::multi_axis) {
    options.base = 1000000.0;
    options.axes = rope::Axes::sections({16, 24, 24});
  }
  if (r.type == Type::f32) return new Rotating<float>(r, options);
  if (r.type == Type::f64) return new Rotating<double>(r, options);
  return new Rotating<Eigen::half>(r, options);
}

// The row's limit (docs/performance.md, "Method"), repeat times: a vectorised pass over the bytes
// the call reads and writes, x *= k in place (q and k together for apply_qk; in float for every
// type, as layout_bench's limit), a copy of x into dst out of place. False for a row without one
// (the keys into a cache of another type). k is 1, read through a volatile: the buffers keep
// their values for the builds. Written four registers an iteration, not as Eigen's `x *= k`,
// whose loop of one register a time ran slower in this shared object on a Zen 3.
AB_EXPORT bool ab_limit(int row, void* const* buffers, long repeat) {
  using P = Eigen::internal::packet_traits<float>::type;
  constexpr std::size_t L = Eigen::internal::packet_traits<float>::size;
  const Row& r = rows()[std::size_t(row)];
  if (r.call == Call::apply_qk_cache) return false;
  const std::size_t n = ab_bytes(row, 0) / sizeof(float);
  static volatile float one = 1.0F;
  const float k = one;
  const P kk = Eigen::internal::pset1<P>(k);
  const bool copy = r.call == Call::apply_out_of_place;
  float* x = static_cast<float*>(buffers[0]);
  float* y = copy ? static_cast<float*>(buffers[1]) : x;
  // One pass of y = op(x), op the identity or the product by k, chosen once outside the loop.
  const auto pass = [&](auto op) {
    std::size_t i = 0;
    for (; i + 4 * L <= n; i += 4 * L) {
      const P a = Eigen::internal::ploadu<P>(x + i), b = Eigen::internal::ploadu<P>(x + i + L),
              c = Eigen::internal::ploadu<P>(x + i + 2 * L),
              d = Eigen::internal::ploadu<P>(x + i + 3 * L);
      Eigen::internal::pstoreu(y + i, op(a));
      Eigen::internal::pstoreu(y + i + L, op(b));
      Eigen::internal::pstoreu(y + i + 2 * L, op(c));
      Eigen::internal::pstoreu(y + i + 3 * L, op(d));
    }
    for (; i < n; ++i) y[i] = copy ? x[i] : x[i] * k;
    __asm__ __volatile__("" : : : "memory");  // each pass reads and writes memory
  };
  for (long p = 0; p < repeat; ++p) {
    if (copy) {
      pass([](const P& v) { return v; });
    } else {
      pass([&](const P& v) { return Eigen::internal::pmul(v, kk); });
    }
  }
  return true;
}

AB_EXPORT void ab_run(void* made, void* const* buffers, long repeat) {
  static_cast<Made*>(made)->run(buffers, repeat);
}

AB_EXPORT void ab_free(void* made) { delete static_cast<Made*>(made); }
