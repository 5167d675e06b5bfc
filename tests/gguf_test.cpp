// rope::gguf_rope: GGUF metadata to Options. Run on the RoPE configurations of ggml's own tests
// (test-backend-ops: llama 7B, falcon, stablelm, phi-2 shapes; freq_scale 1 and 1.4245, and
// 0.25 for a YaRN factor of 4 as released models use;
// attn_factor 1 and 1.4245, ext_factor 0 and the 1 that llama.cpp uses for YaRN, with and
// without freq_factors), the library agrees with a float64 model of ggml's rope written below,
// within float rounding, wherever the GGUF metadata maps to one scheme; where ggml differs from
// HuggingFace's definition the library follows HuggingFace, and the tests show the difference.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include <rope/gguf.hpp>
#include <rope/rope.hpp>

#include "support.hpp"

namespace {

using rope::Layout;

constexpr double kPi = 3.141592653589793238462643383279502884;

// ---- a float64 model of ggml's rope (ggml_rope_ext / ggml_rope_multi, CPU) ----------------------

struct Ggml {
  std::size_t n_dims;
  bool neox;  // GGML_ROPE_TYPE_NEOX: pairs (i, i + n_dims/2); else (2i, 2i+1)
  double freq_base = 10000, freq_scale = 1, ext_factor = 0, attn_factor = 1;
  double beta_fast = 32, beta_slow = 1, n_ctx_orig = 512;
  std::vector<double> freq_factors{};  // empty: none
  bool hf_mscale = false;              // HuggingFace's mscale (1 for factor <= 1) instead of ggml's
};

// ggml_rope_yarn_corr_dim and ggml_rope_yarn_corr_dims.
double corr_dim(const Ggml& g, double n_rot) {
  return double(g.n_dims) * std::log(g.n_ctx_orig / (n_rot * 2 * kPi)) /
         (2 * std::log(g.freq_base));
}

// Pair i's angle and magnitude at position p (rope_yarn).
void ggml_pair(const Ggml& g, std::size_t i, double p, double& theta, double& mscale) {
  double theta_extrap = p * std::pow(g.freq_base, -2.0 * double(i) / double(g.n_dims));
  if (!g.freq_factors.empty()) theta_extrap /= g.freq_factors[i];
  const double theta_interp = g.freq_scale * theta_extrap;
  theta = theta_interp;
  mscale = g.attn_factor;
  if (g.ext_factor != 0) {
    const double low = std::max(0.0, std::floor(corr_dim(g, g.beta_fast)));
    const double high = std::min(double(g.n_dims) - 1, std::ceil(corr_dim(g, g.beta_slow)));
    const double y = (double(i) - low) / std::max(0.001, high - low);
    const double ramp_mix = (1 - std::min(1.0, std::max(0.0, y))) * g.ext_factor;
    theta = theta_interp * (1 - ramp_mix) + theta_extrap * ramp_mix;
    const double factor = 1 / g.freq_scale;
    mscale *= g.hf_mscale ? (factor <= 1 ? 1.0 : 1 + 0.1 * std::log(factor))
                          : 1 + 0.1 * std::log(1 / g.freq_scale);
  }
}

// One head of ne0 coordinates rotated to position p; coordinates from n_dims pass through.
std::vector<double> ggml_rope(const Ggml& g, std::vector<double> x, double p,
                              std::vector<double>* thetas = nullptr) {
  for (std::size_t i = 0; i < g.n_dims / 2; ++i) {
    double theta = 0, mscale = 0;
    ggml_pair(g, i, p, theta, mscale);
    if (thetas != nullptr) thetas->push_back(theta);
    const std::size_t a = g.neox ? i : 2 * i, b = g.neox ? i + g.n_dims / 2 : 2 * i + 1;
    const double x0 = x[a], x1 = x[b], c = std::cos(theta) * mscale, s = std::sin(theta) * mscale;
    x[a] = x0 * c - x1 * s;
    x[b] = x0 * s + x1 * c;
  }
  return x;
}

// The GGUF metadata a llama.cpp model with these rope parameters holds.
rope::GgufMetadata metadata_of(const Ggml& g, std::size_t ne0) {
  rope::GgufMetadata m;
  const std::string arch = g.neox ? "qwen2" : "llama";
  m["general.architecture"] = arch;
  m[arch + ".attention.key_length"] = double(ne0);
  m[arch + ".rope.dimension_count"] = double(g.n_dims);
  m[arch + ".rope.freq_base"] = g.freq_base;
  if (g.ext_factor != 0) {
    m[arch + ".rope.scaling.type"] = std::string("yarn");
    m[arch + ".rope.scaling.factor"] = 1 / g.freq_scale;
    m[arch + ".rope.scaling.original_context_length"] = g.n_ctx_orig;
    m[arch + ".rope.scaling.attn_factor"] = g.attn_factor;
  } else if (g.freq_scale != 1) {
    m[arch + ".rope.scale_linear"] = 1 / g.freq_scale;
  }
  return m;
}

// Rotates one head by Rotary<float> of the options and checks it against ggml's model, with
// the bound of support.hpp around both sides' angles (θ apart by (2·ln base + 20)·u relative).
void require_ggml(const Ggml& g, const rope::Options& o, std::size_t ne0, std::mt19937_64& rng) {
  const rope::Rotary<float> rot(o);
  const double tolerance = (2 * std::log(g.freq_base) + rope_test::kAngleRoundings + 12) *
                           rope_test::unit_roundoff<double>;
  rope_test::WorstCoordinate worst;
  for (const std::int64_t p : {0, 1, 17, 511, 3000}) {
    std::vector<float> x = rope_test::random_vector<float>(ne0, rng);
    const std::vector<double> input(x.begin(), x.end());
    std::vector<double> thetas;
    const std::vector<double> expected = ggml_rope(g, input, double(p), &thetas);
    rot.apply(x.data(), 1, 1, &p);
    for (std::size_t i = 0; i < ne0; ++i) {
      if (i >= g.n_dims) {
        worst.note(std::abs(double(x[i]) - input[i]), 0.0,
                   [&](std::ostream& s) { s << "pass-through coordinate " << i << " changed"; });
        continue;
      }
      const std::size_t pair = g.neox ? i % (g.n_dims / 2) : i / 2;
      const std::size_t partner =
          g.neox ? (i < g.n_dims / 2 ? i + g.n_dims / 2 : i - g.n_dims / 2) : i ^ 1U;
      double theta = 0, mscale = 0;
      ggml_pair(g, pair, 1.0, theta, mscale);
      const double bound =
          std::abs(mscale) * (std::abs(input[i]) + std::abs(input[partner])) *
          (rope_test::gamma<float>(3) + rope_test::gamma<double>(2) +
           double(p) * theta * tolerance + rope_test::unit_roundoff<double> * double(p));
      worst.note(std::abs(double(x[i]) - expected[i]), bound, [&](std::ostream& s) {
        s << "position " << p << " coordinate " << i << ": got " << x[i] << ", ggml "
          << expected[i];
      });
    }
  }
  INFO("worst coordinate: " << worst.where());
  CHECK(worst.ratio() <= 1.0);
}

}  // namespace

TEST_CASE("gguf_rope agrees with ggml's rope on ggml's test configurations", "[gguf][scaling]") {
  std::mt19937_64 rng(1900);
  struct Shape {
    const char* name;
    std::size_t ne0, n_dims;
    bool neox;
  };
  const Shape shapes[] = {{"llama 7B", 128, 128, false},
                          {"falcon 7B (neox)", 64, 64, true},
                          {"stablelm (neox, 20 of 80)", 80, 20, true},
                          {"phi-2 (neox, 32 of 80)", 80, 32, true}};
  std::uniform_real_distribution<double> ff(0.9, 1.1);  // as ggml's test draws freq_factors
  int agreed = 0, no_single_scheme = 0, hf_differs = 0;
  for (const Shape& shape : shapes) {
    for (const double fs : {1.0, 1.4245, 0.25}) {
      for (const double ef : {0.0, 1.0}) {
        for (const double af : {1.0, 1.4245}) {
          for (const bool with_ff : {false, true}) {
            Ggml g{shape.n_dims, shape.neox};
            g.freq_scale = fs;
            g.ext_factor = ef;
            g.attn_factor = af;
            rope::GgufTensors tensors;
            if (with_ff) {
              for (std::size_t i = 0; i < shape.n_dims / 2; ++i) g.freq_factors.push_back(ff(rng));
              tensors.rope_freqs = g.freq_factors;
            }
            INFO(shape.name << ", freq_scale " << fs << ", ext_factor " << ef << ", attn_factor "
                            << af << (with_ff ? ", freq_factors" : ""));
            rope::GgufMetadata m = metadata_of(g, shape.ne0);
            if (ef == 0 && af != 1) {
              // attn_factor without YaRN scales cos and sin: no HuggingFace scheme does.
              m[std::string(shape.neox ? "qwen2" : "llama") + ".rope.scaling.attn_factor"] = af;
              CHECK_THROWS_WITH(rope::gguf_rope(m, tensors),
                                Catch::Matchers::Contains("without YaRN or LongRoPE"));
              ++no_single_scheme;
              continue;
            }
            if (with_ff && ef != 0) {
              // freq_factors on top of YaRN: no one scheme of HuggingFace's (on top of linear
              // scaling they are FrequencyFactors of ff_j·factor).
              CHECK_THROWS_WITH(rope::gguf_rope(m, tensors),
                                Catch::Matchers::Contains("with a rope_freqs tensor: no single"));
              ++no_single_scheme;
              continue;
            }
            const rope::GgufRope r = rope::gguf_rope(m, tensors);
            CHECK(r.options.layout == (shape.neox ? Layout::half_split : Layout::interleaved));
            if (ef != 0 && fs > 1) {
              // YaRN with factor < 1: HuggingFace's mscale is 1, ggml's 1 + 0.1·ln(1/fs) < 1.
              Ggml hf = g;
              hf.hf_mscale = true;
              require_ggml(hf, r.options, shape.ne0, rng);
              const rope::Rotary<float> rot(r.options);
              CHECK(rot.attention_factor() == Approx(af).epsilon(1e-12));
              CHECK(1 + 0.1 * std::log(1 / fs) < 0.97);
              ++hf_differs;
              continue;
            }
            require_ggml(g, r.options, shape.ne0, rng);
            ++agreed;
          }
        }
      }
    }
  }
  CHECK(agreed == 4 * 10);
  CHECK(no_single_scheme == 4 * 12);
  CHECK(hf_differs == 4 * 2);
}

TEST_CASE("gguf_rope: where ggml's rope differs from HuggingFace's", "[gguf][scaling]") {
  SECTION("YaRN with a degenerate correction range (high < low): ggml divides by 0.001") {
    // beta_fast < beta_slow puts cd(beta_fast) above cd(beta_slow). HuggingFace's ramp
    // (j − low)/(high − low) then runs backwards; ggml's (j − low)/max(0.001, high − low) is a
    // step. Yarn rejects beta_fast < beta_slow (E15) rather than pick either.
    rope::GgufMetadata m = metadata_of(Ggml{128, false, 10000, 0.25, 1, 1}, 128);
    m["llama.rope.scaling.yarn_beta_fast"] = 1.0;
    m["llama.rope.scaling.yarn_beta_slow"] = 32.0;
    CHECK_THROWS_WITH(rope::Rotary<float>(rope::gguf_rope(m).options),
                      Catch::Matchers::Contains("beta_fast 1 must be >= beta_slow"));
  }
  SECTION("interleaved M-RoPE: ggml gives pairs past 3·section a 4th axis, HuggingFace t") {
    // Qwen3-VL, sections [24, 20, 20]: pairs 61 and 62 are neither h (i mod 3 = 1, i < 60) nor
    // w (i mod 3 = 2, i < 60); HuggingFace rotates them by t, ggml by its 4th coordinate,
    // which llama.cpp sets to 0 for text tokens.
    rope::GgufMetadata m;
    m["general.architecture"] = std::string("qwen3vl");
    m["qwen3vl.attention.key_length"] = 128.0;
    m["qwen3vl.rope.dimension_count"] = 128.0;
    m["qwen3vl.rope.freq_base"] = 5e6;
    m["qwen3vl.rope.dimension_sections"] = std::vector<double>{24, 20, 20, 0};
    const rope::Rotary<float> rot(rope::gguf_rope(m).options);
    REQUIRE(rot.axes() == 3);
    CHECK(rot.axis_of_pairs()[60] == 0);
    CHECK(rot.axis_of_pairs()[61] == 0);  // ggml: axis 3
    CHECK(rot.axis_of_pairs()[62] == 0);  // ggml: axis 3
    CHECK(rot.axis_of_pairs()[58] == 1);
    CHECK(rot.axis_of_pairs()[59] == 2);
    m["qwen3vl.rope.dimension_sections"] = std::vector<double>{24, 20, 16, 4};
    CHECK_THROWS_WITH(rope::gguf_rope(m), Catch::Matchers::Contains("has a 4th section of"));
  }
  SECTION("negative positions (llama.cpp's K-shift): shift is the route") {
    // ggml rotates by R_p for any integer p; apply takes positions in [0, 2^53 − 1] and
    // Rotary::shift(keys, −k) rotates by R_{−k}, as llama.cpp's K-shift does.
    rope::GgufMetadata m = metadata_of(Ggml{64, true}, 64);
    const rope::Rotary<float> rot(rope::gguf_rope(m).options);
    std::mt19937_64 rng(1901);
    std::vector<float> k = rope_test::random_vector<float>(64, rng);
    const std::vector<double> input(k.begin(), k.end());
    const std::int64_t minus_one = -1;
    CHECK_THROWS_AS(rot.apply(k.data(), 1, 1, &minus_one), std::out_of_range);
    rot.shift(rope::View<float>::contiguous(k.data(), 1, 1, 64), -5);
    const std::vector<double> expected = ggml_rope(Ggml{64, true}, input, -5.0);
    for (std::size_t i = 0; i < 64; ++i) {
      INFO("coordinate " << i);
      CHECK(std::abs(double(k[i]) - expected[i]) <= 4 * rope_test::gamma<float>(3) * 2.0);
    }
  }
}

TEST_CASE("gguf_rope: released models' metadata", "[gguf][scaling]") {
  SECTION("Llama 3.1 8B: rope_freqs as llama.cpp's converter writes them = HF's llama3 scheme") {
    // The converter's factors: 1 below L0/high, factor above L0/low, 1/((1 − s)/factor + s)
    // between (convert_hf_to_gguf.py, LlamaModel.generate_extra_tensors).
    const double base = 500000, factor = 8, low = 1, high = 4, l0 = 8192;
    const std::vector<double> theta = rope::inverse_frequencies(128, base);
    std::vector<double> rope_freqs;
    for (const double t : theta) {
      const double wavelen = 2 * kPi / t;
      if (wavelen < l0 / high) {
        rope_freqs.push_back(1);
      } else if (wavelen > l0 / low) {
        rope_freqs.push_back(factor);
      } else {
        const double smooth = (l0 / wavelen - low) / (high - low);
        rope_freqs.push_back(1 / ((1 - smooth) / factor + smooth));
      }
    }
    rope::GgufMetadata m;
    m["general.architecture"] = std::string("llama");
    m["llama.embedding_length"] = 4096.0;
    m["llama.attention.head_count"] = 32.0;
    m["llama.rope.dimension_count"] = 128.0;
    m["llama.rope.freq_base"] = base;
    const rope::GgufRope r = rope::gguf_rope(m, rope::GgufTensors{rope_freqs});
    CHECK(r.options.head_size == 128);
    CHECK(r.options.layout == Layout::interleaved);  // the converter permuted q and k
    const rope::Frequencies ours = rope::frequencies(128, base, r.options.scaling);
    const rope::Frequencies hf = rope::frequencies(128, base, rope::Llama3{factor, low, high, l0});
    for (std::size_t j = 0; j < 64; ++j) {
      INFO("theta_" << j);
      CHECK(std::abs(ours.theta[j] - hf.theta[j]) <=
            8 * rope_test::unit_roundoff<double> * hf.theta[j]);
    }
  }
  SECTION("DeepSeek-V3: yarn_log_multiplier 0.1 is mscale = mscale_all_dim = 1") {
    rope::GgufMetadata m;
    m["general.architecture"] = std::string("deepseek2");
    m["deepseek2.attention.key_length"] = 64.0;  // the rope part, qk_rope_head_dim
    m["deepseek2.rope.dimension_count"] = 64.0;
    m["deepseek2.rope.freq_base"] = 10000.0;
    m["deepseek2.rope.scaling.type"] = std::string("yarn");
    m["deepseek2.rope.scaling.factor"] = 40.0;
    m["deepseek2.rope.scaling.original_context_length"] = 4096.0;
    m["deepseek2.rope.scaling.yarn_log_multiplier"] = 0.1;
    const rope::Rotary<float> rot(rope::gguf_rope(m).options);
    CHECK(rot.attention_factor() == 1.0);
  }
  SECTION("Gemma 3: the sliding layers' freq_base_swa, unscaled") {
    rope::GgufMetadata m;
    m["general.architecture"] = std::string("gemma3");
    m["gemma3.attention.key_length"] = 128.0;
    m["gemma3.rope.freq_base"] = 1e6;
    m["gemma3.rope.freq_base_swa"] = 10000.0;
    m["gemma3.rope.scaling.type"] = std::string("linear");
    m["gemma3.rope.scaling.factor"] = 8.0;
    const rope::GgufRope full = rope::gguf_rope(m);
    const rope::GgufRope sliding = rope::gguf_rope(m, {}, "sliding_attention");
    CHECK(full.options.base == 1e6);
    CHECK(std::holds_alternative<rope::Linear>(full.options.scaling));
    CHECK(sliding.options.base == 10000.0);
    CHECK(std::holds_alternative<rope::Unscaled>(sliding.options.scaling));
  }
}

namespace {

void require_gguf_error(const rope::GgufMetadata& m, const std::vector<std::string>& fragments,
                        const rope::GgufTensors& tensors = {}) {
  rope_test::require_invalid([&] { rope::gguf_rope(m, tensors); }, fragments, "rope: GGUF: ");
}

rope::GgufMetadata llama() { return metadata_of(Ggml{128, false}, 128); }

}  // namespace

TEST_CASE("E56: gguf_rope: an unknown rope.scaling.type", "[errors][E56]") {
  rope::GgufMetadata m = llama();
  m["llama.rope.scaling.type"] = std::string("yarnn");
  require_gguf_error(m, {"llama.rope.scaling.type \"yarnn\" is not a RoPE type"});
}

TEST_CASE("E57: gguf_rope: a rope key it does not understand", "[errors][E57]") {
  rope::GgufMetadata m = llama();
  m["llama.rope.scaling.yarn_ext_factr"] = 1.0;
  require_gguf_error(m, {"llama.rope.scaling.yarn_ext_factr is not a key"});
}

TEST_CASE("E57: gguf_rope: a YaRN or LongRoPE key with another scaling type", "[errors][E57]") {
  // ggml would scale cos and sin by attn_factor whatever the type; dropping it would rotate
  // otherwise than llama.cpp does, so it is an error.
  rope::GgufMetadata m = llama();
  m["llama.rope.scaling.attn_factor"] = 1.25;
  require_gguf_error(m, {"llama.rope.scaling.attn_factor is not a key", "type \"none\"",
                         "without YaRN or LongRoPE"});
  m["llama.rope.scaling.attn_factor"] = 1.0;  // 1 changes nothing
  CHECK(std::holds_alternative<rope::Unscaled>(rope::gguf_rope(m).options.scaling));
  m["llama.rope.scaling.type"] = std::string("linear");
  m["llama.rope.scaling.factor"] = 4.0;
  m["llama.rope.scaling.yarn_beta_fast"] = 32.0;
  require_gguf_error(m, {"llama.rope.scaling.yarn_beta_fast is not a key", "\"linear\""});
}

TEST_CASE("E58: gguf_rope: a required key is missing", "[errors][E58]") {
  rope::GgufMetadata m = llama();
  m["llama.rope.scaling.type"] = std::string("yarn");
  require_gguf_error(m, {"llama.rope.scaling.original_context_length is required"});
  rope::GgufMetadata none;
  require_gguf_error(none, {"general.architecture (a string) is required"});
}

TEST_CASE("E59: gguf_rope: a value of the wrong type or out of range", "[errors][E59]") {
  rope::GgufMetadata m = llama();
  m["llama.rope.freq_base"] = -1.0;
  require_gguf_error(m, {"llama.rope.freq_base -1 must be a finite number > 0"});
  m["llama.rope.freq_base"] = std::string("10000");
  require_gguf_error(m, {"llama.rope.freq_base must be a number"});
}

TEST_CASE("E61: gguf_rope: a rotary dimension the keys or tensors do not fit", "[errors][E61]") {
  rope::GgufMetadata m = llama();
  m["llama.rope.dimension_count"] = 130.0;
  require_gguf_error(m, {"llama.rope.dimension_count 130 must be even and at most the head"});
  require_gguf_error(llama(), {"the rope_freqs tensor has 3 values", "64 pairs"},
                     rope::GgufTensors{{1.0, 1.0, 1.0}});
}

TEST_CASE("E63: gguf_rope: no head size", "[errors][E63]") {
  rope::GgufMetadata m = llama();
  m.erase("llama.attention.key_length");
  require_gguf_error(m, {"no head size", "llama.attention.key_length"});
}

TEST_CASE("E64: gguf_rope: an architecture without a known ggml rope mode", "[errors][E64]") {
  rope::GgufMetadata m = llama();
  m["general.architecture"] = std::string("mystery");
  m["mystery.attention.key_length"] = 128.0;
  require_gguf_error(m, {"general.architecture \"mystery\" has no entry"});
}
