// rope::hf_rope on the configs of released checkpoints (tests/data/configs/): for each layer
// type, what HuggingFace reads from the config (written out below by hand, model by model), θ_j
// and the attention factor against a float64 transcription of HuggingFace's init function for
// its rope_type, and one rotation against a float64 rotation by those θ_j. Bad configs get an
// error that names the key.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include <rope/hf_config.hpp>
#include <rope/rope.hpp>

#include "support.hpp"

namespace {

using Json = nlohmann::json;
using rope::Layout;

constexpr double kPi = 3.141592653589793238462643383279502884;

Json load(const std::string& name) {
  std::ifstream file(std::string(ROPE_TEST_DATA_DIR) + "/configs/" + name + ".json");
  REQUIRE(file.good());
  return Json::parse(file);
}

// ---- HuggingFace's init functions (modeling_rope_utils.py), transcribed in double -------------

struct Hf {
  std::vector<double> inv_freq;
  double attention_factor = 1.0;
};

// _compute_default_rope_parameters: 1 / base^(arange(0, dim, 2) / dim).
std::vector<double> hf_default(std::size_t dim, double base) {
  std::vector<double> inv(dim / 2);
  for (std::size_t i = 0; i < inv.size(); ++i) {
    inv[i] = 1.0 / std::pow(base, double(2 * i) / double(dim));
  }
  return inv;
}

Hf hf_linear(std::size_t dim, double base, double factor) {
  Hf out{hf_default(dim, base)};
  for (double& t : out.inv_freq) t /= factor;
  return out;
}

// _compute_dynamic_ntk_parameters: seq_len = max(seq_len, max_position_embeddings).
Hf hf_dynamic(std::size_t dim, double base, double factor, double max_pos, double seq_len) {
  seq_len = std::max(seq_len, max_pos);
  const double d = double(dim);
  base = base * std::pow(factor * seq_len / max_pos - (factor - 1), d / (d - 2));
  return Hf{hf_default(dim, base)};
}

struct YarnParams {
  double factor, original, beta_fast = 32, beta_slow = 1;
  double mscale = 0, mscale_all_dim = 0;  // 0: absent
  bool truncate = true;
};

double get_mscale(double scale, double mscale = 1) {
  return scale <= 1 ? 1.0 : 0.1 * mscale * std::log(scale) + 1.0;
}

// _compute_yarn_parameters.
Hf hf_yarn(std::size_t dim, double base, const YarnParams& p) {
  Hf out;
  out.attention_factor =
      p.mscale != 0 && p.mscale_all_dim != 0
          ? get_mscale(p.factor, p.mscale) / get_mscale(p.factor, p.mscale_all_dim)
          : get_mscale(p.factor);
  const auto correction_dim = [&](double rotations) {
    return double(dim) * std::log(p.original / (rotations * 2 * kPi)) / (2 * std::log(base));
  };
  double low = correction_dim(p.beta_fast), high = correction_dim(p.beta_slow);
  if (p.truncate) {
    low = std::floor(low);
    high = std::ceil(high);
  }
  low = std::max(low, 0.0);
  high = std::min(high, double(dim) - 1);
  if (low == high) high += 0.001;
  for (std::size_t i = 0; i < dim / 2; ++i) {
    const double pos_freq = std::pow(base, double(2 * i) / double(dim));
    const double extrapolation = 1.0 / pos_freq, interpolation = 1.0 / (p.factor * pos_freq);
    const double ramp = std::clamp((double(i) - low) / (high - low), 0.0, 1.0);
    const double extrapolation_factor = 1 - ramp;
    out.inv_freq.push_back(interpolation * (1 - extrapolation_factor) +
                           extrapolation * extrapolation_factor);
  }
  return out;
}

// _compute_longrope_parameters: factor None -> max_position_embeddings / original.
Hf hf_longrope(std::size_t dim, double base, const std::vector<double>& short_factor,
               const std::vector<double>& long_factor, double original, double max_pos,
               double seq_len) {
  Hf out;
  const double factor = max_pos / original;
  out.attention_factor = factor <= 1 ? 1.0 : std::sqrt(1 + std::log(factor) / std::log(original));
  const std::vector<double>& ext = seq_len > original ? long_factor : short_factor;
  for (std::size_t i = 0; i < dim / 2; ++i) {
    out.inv_freq.push_back(1.0 / (ext[i] * std::pow(base, double(2 * i) / double(dim))));
  }
  return out;
}

// _compute_llama3_parameters.
Hf hf_llama3(std::size_t dim, double base, double factor, double low_freq_factor,
             double high_freq_factor, double old_context_len) {
  Hf out{hf_default(dim, base)};
  const double low_freq_wavelen = old_context_len / low_freq_factor;
  const double high_freq_wavelen = old_context_len / high_freq_factor;
  for (double& inv : out.inv_freq) {
    const double wavelen = 2 * kPi / inv;
    double llama = wavelen > low_freq_wavelen ? inv / factor : inv;
    const bool medium = !(wavelen < high_freq_wavelen) && !(wavelen > low_freq_wavelen);
    if (medium) {
      const double smooth =
          (old_context_len / wavelen - low_freq_factor) / (high_freq_factor - low_freq_factor);
      llama = (1 - smooth) * llama / factor + smooth * llama;
    }
    inv = llama;
  }
  return out;
}

// _compute_proportional_rope_parameters.
Hf hf_proportional(std::size_t head_dim, double base, double partial, double factor) {
  Hf out;
  const auto rope_angles = static_cast<std::size_t>(std::floor(partial * double(head_dim) / 2));
  for (std::size_t i = 0; i < head_dim / 2; ++i) {
    out.inv_freq.push_back(i < rope_angles ? 1.0 / std::pow(base, double(2 * i) / double(head_dim))
                                           : 0.0);
  }
  for (double& t : out.inv_freq) t /= factor;
  return out;
}

// ---- one layer type of one checkpoint --------------------------------------------------------

struct Layer {
  const char* file;
  const char* model;
  const char* layer_type;
  std::size_t head_size;
  std::size_t rotary_dim;  // 0: the whole head
  double base;
  Layout layout;
  const char* rope_type;
  Hf hf;                       // what HuggingFace computes for it
  double sequence_length = 0;  // passed to hf_rope
};

// θ_j of both sides: each rounds base^x (the transcription's x = 2j/d rounded too, amplified by
// ln(base)), a pow (1 ulp), a reciprocal and the product with the position, as in support.hpp;
// the schemes add at most 12 roundings over both sides (Llama 3's blend: the wavelength, L0/λ, a
// difference, a quotient, 1 − s and two products and a sum; YaRN's ramp and blend as many).
constexpr double kSchemeRoundings = 12;

double theta_tolerance(double base) {
  return (2 * std::log(base) + rope_test::kAngleRoundings + kSchemeRoundings) *
         rope_test::unit_roundoff<double>;
}

void check_layer(const Layer& l, std::mt19937_64& rng) {
  INFO(l.model << " (" << l.file << ".json), " << l.layer_type);
  const rope::HfRope got = rope::hf_rope(load(l.file), l.layer_type, l.sequence_length);
  const rope::Options& o = got.options;
  CHECK(o.head_size == l.head_size);
  CHECK(o.rotary_dim == l.rotary_dim);
  CHECK(o.base == l.base);
  CHECK(o.layout == l.layout);
  CHECK(got.rope_type == l.rope_type);
  CHECK(o.sequence_length == l.sequence_length);

  const rope::Rotary<float> rot(o);
  const std::vector<double>& theta = rot.inverse_frequencies();
  REQUIRE(theta.size() == l.hf.inv_freq.size());
  const double tolerance = theta_tolerance(l.base);
  for (std::size_t j = 0; j < theta.size(); ++j) {
    INFO("theta_" << j << ": " << theta[j] << ", HuggingFace " << l.hf.inv_freq[j]);
    if (l.hf.inv_freq[j] == 0.0) {
      CHECK(theta[j] == 0.0);
    } else {
      CHECK(std::abs(theta[j] - l.hf.inv_freq[j]) <= tolerance * l.hf.inv_freq[j]);
    }
  }
  CHECK(std::abs(rot.attention_factor() - l.hf.attention_factor) <=
        4 * rope_test::unit_roundoff<double> * l.hf.attention_factor);

  // One head at position 1000 against the float64 rotation by HuggingFace's θ_j and factor:
  // pair j of the rotated slice [0, d) is (2j, 2j+1) or (j, j + d/2); the rest passes through.
  const std::size_t d = l.rotary_dim != 0 ? l.rotary_dim : l.head_size;
  const std::int64_t m = 1000;
  std::vector<float> head = rope_test::random_vector<float>(l.head_size, rng);
  const std::vector<float> input = head;
  const std::vector<std::int64_t> positions(rot.axes(), m);  // all axes alike for M-RoPE
  rot.apply(head.data(), 1, 1, rope::Positions(positions.data(), rot.axes(), 1, 1));
  const double a = l.hf.attention_factor;
  rope_test::WorstCoordinate worst;
  for (std::size_t j = 0; j < d / 2; ++j) {
    const std::size_t i0 = l.layout == Layout::interleaved ? 2 * j : j;
    const std::size_t i1 = l.layout == Layout::interleaved ? 2 * j + 1 : j + d / 2;
    const double x = double(input[i0]), y = double(input[i1]);
    const double angle = double(m) * l.hf.inv_freq[j];
    const double expected[2] = {a * (x * std::cos(angle) - y * std::sin(angle)),
                                a * (y * std::cos(angle) + x * std::sin(angle))};
    // Rotary<float>: γ_3(float) of the pair (support.hpp), the double reference γ_2(double), and
    // the two sides' θ_j, apart by the tolerance above, moving the angle by m·θ_j·tolerance.
    const double bound =
        a * (std::abs(x) + std::abs(y)) *
        (rope_test::gamma<float>(3) + rope_test::gamma<double>(2) +
         double(m) * l.hf.inv_freq[j] * tolerance + rope_test::unit_roundoff<double> * double(m));
    for (int k = 0; k < 2; ++k) {
      const std::size_t i = k == 0 ? i0 : i1;
      worst.note(std::abs(double(head[i]) - expected[k]), bound, [&](std::ostream& s) {
        s << "coordinate " << i << ": got " << head[i] << ", expected " << expected[k];
      });
    }
  }
  for (std::size_t i = d; i < l.head_size; ++i) CHECK(head[i] == input[i]);
  INFO("worst coordinate: " << worst.where());
  CHECK(worst.ratio() <= 1.0);
}

std::vector<double> numbers(const Json& list) { return list.get<std::vector<double>>(); }

}  // namespace

TEST_CASE("hf_rope: configs of released checkpoints", "[hf_config]") {
  std::mt19937_64 rng(1800);
  const Json phi3 = load("phi-3-vision-128k")["rope_scaling"];
  const std::vector<double> short_factor = numbers(phi3["short_factor"]);
  const std::vector<double> long_factor = numbers(phi3["long_factor"]);
  const Layout H = Layout::half_split, I = Layout::interleaved;
  const Layer layers[] = {
      {"llama-2-7b", "Llama 2 7B", "full_attention", 128, 0, 10000, H, "default",
       Hf{hf_default(128, 10000)}},
      {"llama-3.1-8b", "Llama 3.1 8B", "full_attention", 128, 0, 500000, H, "llama3",
       hf_llama3(128, 500000, 8, 1, 4, 8192)},
      {"llama-3.2-1b", "Llama 3.2 1B", "full_attention", 64, 0, 500000, H, "llama3",
       hf_llama3(64, 500000, 32, 1, 4, 8192)},
      {"llama-4-scout-17b-16e", "Llama 4 Scout", "full_attention", 128, 0, 500000, I, "llama3",
       hf_llama3(128, 500000, 16, 1, 1, 8192)},
      {"qwen2.5-7b", "Qwen2.5 7B", "full_attention", 128, 0, 1e6, H, "default",
       Hf{hf_default(128, 1e6)}},
      {"qwen3-8b", "Qwen3 8B", "full_attention", 128, 0, 1e6, H, "default",
       Hf{hf_default(128, 1e6)}},
      {"qwen3-next-80b-a3b", "Qwen3-Next 80B-A3B", "full_attention", 256, 64, 1e7, H, "default",
       Hf{hf_default(64, 1e7)}},
      {"qwen2-vl-7b", "Qwen2-VL 7B", "full_attention", 128, 0, 1e6, H, "default",
       Hf{hf_default(128, 1e6)}},
      {"qwen2.5-vl-7b", "Qwen2.5-VL 7B", "full_attention", 128, 0, 1e6, H, "default",
       Hf{hf_default(128, 1e6)}},
      {"qwen3-vl-8b", "Qwen3-VL 8B", "full_attention", 128, 0, 5e6, H, "default",
       Hf{hf_default(128, 5e6)}},
      {"gemma-2-9b", "Gemma 2 9B", "full_attention", 256, 0, 10000, H, "default",
       Hf{hf_default(256, 10000)}},
      {"gemma-3-27b", "Gemma 3 27B", "full_attention", 128, 0, 1e6, H, "linear",
       hf_linear(128, 1e6, 8)},
      {"gemma-3-27b", "Gemma 3 27B", "sliding_attention", 128, 0, 10000, H, "default",
       Hf{hf_default(128, 10000)}},
      {"gemma-4-26b-a4b", "Gemma 4 26B-A4B", "full_attention", 512, 0, 1e6, H, "proportional",
       hf_proportional(512, 1e6, 0.25, 1)},
      {"gemma-4-26b-a4b", "Gemma 4 26B-A4B", "sliding_attention", 256, 0, 10000, H, "default",
       Hf{hf_default(256, 10000)}},
      {"phi-2", "Phi-2", "full_attention", 80, 32, 10000, H, "default", Hf{hf_default(32, 10000)}},
      {"phi-3-vision-128k", "Phi-3-vision-128k", "full_attention", 96, 0, 10000, H, "longrope",
       hf_longrope(96, 10000, short_factor, long_factor, 4096, 131072, 1000), 1000},
      {"phi-3-vision-128k", "Phi-3-vision-128k past L0", "full_attention", 96, 0, 10000, H,
       "longrope", hf_longrope(96, 10000, short_factor, long_factor, 4096, 131072, 8192), 8192},
      {"gpt-neox-20b", "GPT-NeoX-20B", "full_attention", 96, 24, 10000, H, "default",
       Hf{hf_default(24, 10000)}},
      {"gpt-j-6b", "GPT-J 6B", "full_attention", 256, 64, 10000, I, "default",
       Hf{hf_default(64, 10000)}},
      {"deepseek-v2-lite", "DeepSeek-V2-Lite", "full_attention", 64, 0, 10000, I, "yarn",
       hf_yarn(64, 10000, {40, 4096, 32, 1, 0.707, 0.707})},
      {"deepseek-v3", "DeepSeek-V3", "full_attention", 64, 0, 10000, I, "yarn",
       hf_yarn(64, 10000, {40, 4096, 32, 1, 1.0, 1.0})},
      {"kimi-k2", "Kimi K2", "full_attention", 64, 0, 50000, I, "yarn",
       hf_yarn(64, 50000, {32, 4096, 1, 1, 1.0, 1.0})},
      {"gpt-oss-20b", "GPT-OSS 20B", "full_attention", 64, 0, 150000, H, "yarn",
       hf_yarn(64, 150000, {32, 4096, 32, 1, 0, 0, false})},
      {"gpt-oss-20b", "GPT-OSS 20B", "sliding_attention", 64, 0, 150000, H, "yarn",
       hf_yarn(64, 150000, {32, 4096, 32, 1, 0, 0, false})},
      {"mistral-7b-v0.1", "Mistral 7B v0.1", "full_attention", 128, 0, 10000, H, "default",
       Hf{hf_default(128, 10000)}},
      {"glm-4.5", "GLM-4.5", "full_attention", 128, 64, 1e6, H, "default", Hf{hf_default(64, 1e6)}},
      {"minimax-m2", "MiniMax-M2", "full_attention", 128, 64, 5e6, H, "default",
       Hf{hf_default(64, 5e6)}},
      {"command-r", "Cohere Command R", "full_attention", 128, 0, 8e6, I, "default",
       Hf{hf_default(128, 8e6)}},
      {"ernie-4.5-21b-a3b", "ERNIE 4.5 21B-A3B", "full_attention", 128, 0, 500000, I, "default",
       Hf{hf_default(128, 500000)}},
      {"command-r7b", "Cohere Command R7B", "sliding_attention", 128, 0, 50000, I, "default",
       Hf{hf_default(128, 50000)}},
      {"glm-4.1v-9b", "GLM-4.1V 9B", "full_attention", 128, 64, 10000, I, "default",
       Hf{hf_default(64, 10000)}},
      {"smollm3-3b", "SmolLM3 3B", "full_attention", 128, 0, 5e6, H, "default",
       Hf{hf_default(128, 5e6)}},
      {"exaone-4.0-32b", "EXAONE 4.0 32B", "sliding_attention", 128, 0, 1e6, H, "llama3",
       hf_llama3(128, 1e6, 16, 1, 4, 8192)},
      // HunYuan's alpha: HuggingFace's base θ·α^(d/(d−2)) up to max_position_embeddings, and
      // past it Dynamic NTK recomputed from θ without α.
      {"hunyuan-a13b", "HunYuan-A13B", "full_attention", 128, 0,
       10000.0 * std::pow(1000.0, 128.0 / 126.0), H, "dynamic",
       Hf{hf_default(128, 10000.0 * std::pow(1000.0, 128.0 / 126.0))}, 1000},
      {"hunyuan-a13b", "HunYuan-A13B past 32768", "full_attention", 128, 0, 10000, H, "dynamic",
       hf_dynamic(128, 10000, 1.0, 32768, 131072), 131072},
      {"deepseek-v3.2-exp", "DeepSeek-V3.2-Exp", "full_attention", 64, 0, 10000, I, "yarn",
       hf_yarn(64, 10000, {40, 4096, 32, 1, 1.0, 1.0})},
      {"deepseek-v3-no-model-type", "DeepSeek-V3 by its architectures", "full_attention", 64, 0,
       10000, I, "yarn", hf_yarn(64, 10000, {40, 4096, 32, 1, 1.0, 1.0})},
      {"seed-oss-36b", "Seed-OSS 36B", "full_attention", 128, 0, 1e7, H, "default",
       Hf{hf_default(128, 1e7)}},
      {"apertus-8b", "Apertus 8B", "full_attention", 128, 0, 1.2e7, H, "llama3",
       hf_llama3(128, 1.2e7, 8, 1, 4, 8192)},
      {"mixtral-8x7b", "Mixtral 8x7B", "full_attention", 128, 0, 1e6, H, "default",
       Hf{hf_default(128, 1e6)}},
      {"qwen3-30b-a3b", "Qwen3 30B-A3B", "full_attention", 128, 0, 1e6, H, "default",
       Hf{hf_default(128, 1e6)}},
      {"gpt-oss-120b", "GPT-OSS 120B", "sliding_attention", 64, 0, 150000, H, "yarn",
       hf_yarn(64, 150000, {32, 4096, 32, 1, 0, 0, false})},
      {"ministral-3-8b", "Ministral 3 8B", "full_attention", 128, 0, 1e6, H, "yarn",
       hf_yarn(128, 1e6, {16, 16384, 32, 1, 1.0, 1.0})},
      {"glm-4.5v", "GLM-4.5V", "full_attention", 128, 64, 10000, H, "default",
       Hf{hf_default(64, 10000)}},
      {"glm-5", "GLM-5", "full_attention", 64, 0, 1e6, I, "default", Hf{hf_default(64, 1e6)}},
      {"llama-3.3-70b", "Llama 3.3 70B", "full_attention", 128, 0, 500000, H, "llama3",
       hf_llama3(128, 500000, 8, 1, 4, 8192)},
      {"mistral-small-24b", "Mistral Small 24B", "full_attention", 128, 0, 1e8, H, "default",
       Hf{hf_default(128, 1e8)}},
      {"command-a", "Cohere Command A", "sliding_attention", 128, 0, 50000, I, "default",
       Hf{hf_default(128, 50000)}},
      {"qwen3-vl-30b-a3b", "Qwen3-VL 30B-A3B", "full_attention", 128, 0, 5e6, H, "default",
       Hf{hf_default(128, 5e6)}},
      // DeepSeek-V4: window layers by rope_theta unscaled; compressed layers by
      // compress_rope_theta with YaRN, whose mscale its code puts in the softmax scale.
      {"deepseek-v4-flash", "DeepSeek-V4-Flash window layers", "sliding_attention", 64, 0, 10000, I,
       "default", Hf{hf_default(64, 10000)}},
      {"deepseek-v4-flash", "DeepSeek-V4-Flash compressed layers", "compressed_attention", 64, 0,
       160000, I, "yarn", Hf{hf_yarn(64, 160000, {16, 65536}).inv_freq, 1.0}},
  };
  for (const Layer& l : layers) check_layer(l, rng);
}

TEST_CASE("hf_rope: layer types, M-RoPE axes and the layout's source", "[hf_config]") {
  CHECK(rope::hf_layer_types(load("gemma-4-26b-a4b")) ==
        std::vector<std::string>{"sliding_attention", "full_attention"});
  CHECK(rope::hf_layer_types(load("gemma-3-27b")) ==
        std::vector<std::string>{"sliding_attention", "full_attention"});
  CHECK(rope::hf_layer_types(load("llama-3.1-8b")) == std::vector<std::string>{"full_attention"});

  // Qwen2-VL: sections [16, 24, 24] of the 64 pairs; Qwen3-VL: interleaved [24, 20, 20].
  const rope::Rotary<float> qwen2vl(rope::hf_rope(load("qwen2-vl-7b")).options);
  REQUIRE(qwen2vl.axes() == 3);
  CHECK(qwen2vl.axis_of_pairs()[15] == 0);
  CHECK(qwen2vl.axis_of_pairs()[16] == 1);
  CHECK(qwen2vl.axis_of_pairs()[40] == 2);
  const rope::Rotary<float> qwen3vl(rope::hf_rope(load("qwen3-vl-8b")).options);
  REQUIRE(qwen3vl.axes() == 3);
  CHECK(qwen3vl.axis_of_pairs()[0] == 0);
  CHECK(qwen3vl.axis_of_pairs()[1] == 1);
  CHECK(qwen3vl.axis_of_pairs()[2] == 2);
  CHECK(qwen3vl.axis_of_pairs()[61] == 0);  // past 3·20: temporal

  const rope::HfRope scout = rope::hf_rope(load("llama-4-scout-17b-16e"));
  CHECK(scout.model_type == "llama4_text");
  CHECK_THAT(scout.layout_source, Catch::Matchers::Contains("complex multiplication"));
  CHECK(rope::hf_rope(load("deepseek-v3")).options.layout == Layout::interleaved);
  Json v3 = load("deepseek-v3");
  v3["rope_interleave"] = false;
  const rope::HfRope flat = rope::hf_rope(v3);
  CHECK(flat.options.layout == Layout::half_split);
  CHECK(flat.layout_source == "rope_interleave false");

  // YaRN's factor null: max_position_embeddings / original_max_position_embeddings.
  Json yarn = load("deepseek-v3");
  yarn["rope_scaling"]["factor"] = nullptr;
  const rope::HfRope from_null = rope::hf_rope(yarn);
  const auto* y = std::get_if<rope::Yarn>(&from_null.options.scaling);
  REQUIRE(y != nullptr);
  CHECK(y->factor == 163840.0 / 4096.0);
  // Dynamic NTK (Qwen2.5's documented long-context option, written as older configs do) at a
  // sequence of 200000 tokens: HuggingFace's M is max_position_embeddings.
  Json dynamic = load("qwen2.5-7b");
  dynamic["rope_scaling"] = {{"type", "dynamic"}, {"factor", 4.0}};
  const rope::HfRope ntk = rope::hf_rope(dynamic, "full_attention", 200000);
  const rope::Frequencies f =
      rope::frequencies(128, ntk.options.base, ntk.options.scaling, ntk.options.sequence_length);
  const Hf hf = hf_dynamic(128, 1e6, 4.0, 131072, 200000);
  for (std::size_t j = 0; j < 64; ++j) {
    INFO("theta_" << j);
    CHECK(std::abs(f.theta[j] - hf.inv_freq[j]) <= theta_tolerance(1e6) * hf.inv_freq[j]);
  }
  // rope_parameters (transformers 5) in the flat form, with rope_theta inside.
  Json v5 = load("llama-3.1-8b");
  v5["rope_parameters"] = v5["rope_scaling"];
  v5["rope_parameters"]["rope_theta"] = 500000.0;
  v5.erase("rope_scaling");
  v5.erase("rope_theta");
  const rope::HfRope from_v5 = rope::hf_rope(v5);
  CHECK(from_v5.options.base == 500000.0);
  CHECK(from_v5.rope_type == "llama3");
}

TEST_CASE("hf_rope: Ministral 3's llama_4_scaling_beta, the query scale after RoPE",
          "[hf_config][query_scale]") {
  // HuggingFace's Ministral3Config defaults (configuration_ministral3.py), the config of
  // Ministral-3-8B: its rope_parameters dictionary as __post_init__ writes it, with the two keys
  // the class exempts from RoPE validation (llama_4_scaling_beta, max_position_embeddings).
  const Json config = {{"model_type", "ministral3"},
                       {"hidden_size", 4096},
                       {"num_attention_heads", 32},
                       {"head_dim", 128},
                       {"max_position_embeddings", 262144},
                       {"rope_parameters",
                        {{"type", "yarn"},
                         {"rope_theta", 1000000.0},
                         {"factor", 16.0},
                         {"original_max_position_embeddings", 16384},
                         {"max_position_embeddings", 262144},
                         {"beta_fast", 32.0},
                         {"beta_slow", 1.0},
                         {"mscale_all_dim", 1.0},
                         {"mscale", 1.0},
                         {"llama_4_scaling_beta", 0.1}}}};
  const rope::HfRope got = rope::hf_rope(config);
  CHECK(got.rope_type == "yarn");
  CHECK(got.options.layout == Layout::half_split);
  const rope::Rotary<float> rot(got.options);
  const Hf hf = hf_yarn(128, 1000000.0, YarnParams{16, 16384, 32, 1, 1, 1});
  REQUIRE(rot.inverse_frequencies().size() == hf.inv_freq.size());
  for (std::size_t j = 0; j < hf.inv_freq.size(); ++j) {
    CHECK(std::abs(rot.inverse_frequencies()[j] - hf.inv_freq[j]) <=
          theta_tolerance(1000000.0) * hf.inv_freq[j]);
  }
  CHECK(std::abs(rot.attention_factor() - hf.attention_factor) <=
        4 * rope_test::unit_roundoff<double> * hf.attention_factor);
  REQUIRE(got.query_scale.has_value());
  const auto& scale = std::get<rope::Llama4Scaling>(*got.query_scale);
  CHECK(scale.llama_4_scaling_beta == 0.1);
  CHECK(scale.original_max_position_embeddings == 16384);
  // s(p) = 1 + 0.1·ln(1 + ⌊p / 16384⌋): 1 below the first step, 1 + 0.1·ln 2 at it.
  CHECK(rope::query_scale(*got.query_scale, 16383) == 1.0);
  CHECK(std::abs(rope::query_scale(*got.query_scale, 16384) - (1 + 0.1 * std::log(2.0))) <= 1e-15);
  // Without the key, no query scale.
  Json plain = config;
  plain["rope_parameters"].erase("llama_4_scaling_beta");
  CHECK_FALSE(rope::hf_rope(plain).query_scale.has_value());
}

TEST_CASE("hf_nope_query_scale: Llama 4's attention temperature on its NoPE layers",
          "[hf_config][query_scale]") {
  // Llama 4 Scout's released config: attn_temperature_tuning true, floor_scale 8192,
  // attn_scale 0.1.
  const Json scout = load("llama-4-scout-17b-16e");
  const std::optional<rope::QueryScale> s = rope::hf_nope_query_scale(scout);
  REQUIRE(s.has_value());
  const auto& t = std::get<rope::Llama4Temperature>(*s);
  CHECK(t.floor_scale == 8192);
  CHECK(t.attn_scale == 0.1);
  // HuggingFace's Llama4TextAttention at p + 1 = 8192: log(1 + 1)·0.1 + 1.
  CHECK(std::abs(rope::query_scale(*s, 8191) - (std::log(2.0) * 0.1 + 1)) <= 1e-15);
  Json off = scout;
  off["text_config"]["attn_temperature_tuning"] = false;
  CHECK_FALSE(rope::hf_nope_query_scale(off).has_value());
  Json defaults = scout;  // absent keys: HuggingFace's Llama4TextConfig defaults
  for (const char* key : {"attn_temperature_tuning", "floor_scale", "attn_scale"}) {
    defaults["text_config"].erase(key);
  }
  const auto d = std::get<rope::Llama4Temperature>(*rope::hf_nope_query_scale(defaults));
  CHECK(d.floor_scale == 8192);
  CHECK(d.attn_scale == 0.1);
  CHECK_FALSE(rope::hf_nope_query_scale(load("llama-3.1-8b")).has_value());  // not Llama 4
}

TEST_CASE("hf_rope_file reads a file and names a missing one", "[hf_config]") {
  const rope::HfRope r =
      rope::hf_rope_file(std::string(ROPE_TEST_DATA_DIR) + "/configs/qwen3-8b.json");
  CHECK(r.options.head_size == 128);
  CHECK_THROWS_WITH(rope::hf_rope_file("/nonexistent/config.json"),
                    Catch::Matchers::Contains("cannot read the config file /nonexistent"));
}

// ---- bad configs: each error names the key ---------------------------------------------------

namespace {

void require_config_error(const Json& config, const std::vector<std::string>& fragments,
                          const std::string& layer_type = "full_attention") {
  rope_test::require_invalid([&] { rope::hf_rope(config, layer_type); }, fragments,
                             "rope: config.json: ");
}

}  // namespace

TEST_CASE("E56: a rope_type the reader does not know", "[errors][E56]") {
  Json c = load("llama-3.1-8b");
  c["rope_scaling"]["rope_type"] = "llama33";
  require_config_error(c, {"rope_scaling.rope_type \"llama33\" is not a RoPE type"});
  Json v = load("deepseek-v3");
  v["rope_scaling"]["type"] = "yarnn";
  require_config_error(v, {"rope_scaling.type \"yarnn\""});
}

TEST_CASE("E57: a key of the RoPE part the reader does not understand", "[errors][E57]") {
  Json c = load("gemma-3-27b");
  c["text_config"]["rope_scaling"]["factr"] = 8.0;
  require_config_error(c, {"text_config.rope_scaling.factr is not a key", "did you mean factor?"});
  Json d = load("llama-2-7b");
  d["rope_scaling"] = {{"factor", 2.0}};  // no rope_type: default, which takes no factor
  require_config_error(d, {"rope_scaling.factor is not a key", "rope_type \"default\""});
  Json g = load("gemma-4-26b-a4b");
  g["text_config"]["rope_parameters"]["rope_theta"] = 10000.0;
  require_config_error(g, {"text_config.rope_parameters is keyed by layer type but also has key "
                           "\"rope_theta\""});
}

TEST_CASE("E58: a key the rope_type requires is missing", "[errors][E58]") {
  Json c = load("llama-3.1-8b");
  c["rope_scaling"].erase("low_freq_factor");
  require_config_error(c, {"rope_scaling.low_freq_factor is required"});
  Json l = load("phi-3-vision-128k");
  l["rope_scaling"].erase("short_factor");
  require_config_error(l, {"rope_scaling.short_factor is required"});
  Json y = load("gpt-oss-20b");
  y["rope_scaling"].erase("original_max_position_embeddings");
  y.erase("max_position_embeddings");
  require_config_error(y, {"original_max_position_embeddings", "max_position_embeddings"});
}

TEST_CASE("E59: a value of the wrong type, or a factor or length not finite and > 0",
          "[errors][E59]") {
  Json c = load("gemma-3-27b");
  c["text_config"]["rope_scaling"]["factor"] = 0.0;
  require_config_error(c, {"text_config.rope_scaling.factor 0.0 must be a finite number > 0"});
  Json n = load("llama-3.1-8b");
  n["rope_scaling"]["factor"] = -8.0;
  require_config_error(n, {"rope_scaling.factor -8.0 must be a finite number > 0"});
  Json t = load("qwen3-8b");
  t["rope_theta"] = "1e6";
  require_config_error(t, {"rope_theta must be a number, got a string \"1e6\""});
  Json b = load("gpt-oss-20b");
  b["rope_scaling"]["truncate"] = "no";
  require_config_error(b, {"rope_scaling.truncate must be true or false"});
  // hf_nope_query_scale's keys
  Json l = load("llama-4-scout-17b-16e");
  l["text_config"]["floor_scale"] = 0;
  rope_test::require_invalid([&] { rope::hf_nope_query_scale(l); },
                             {"text_config.floor_scale 0 must be a finite number > 0"});
  l["text_config"]["floor_scale"] = 8192;
  l["text_config"]["attn_temperature_tuning"] = "yes";
  rope_test::require_invalid([&] { rope::hf_nope_query_scale(l); },
                             {"text_config.attn_temperature_tuning must be true or false"});
}

TEST_CASE("E60: a layer type the config does not have, or one without RoPE", "[errors][E60]") {
  Json next = load("qwen3-next-80b-a3b");
  next["layer_types"] = Json::array();
  for (int i = 0; i < 48; ++i) {
    next["layer_types"].push_back((i + 1) % 4 == 0 ? "full_attention" : "linear_attention");
  }
  CHECK(rope::hf_layer_types(next) == std::vector<std::string>{"full_attention"});
  require_config_error(next, {"no layer of type \"linear_attention\" has RoPE"},
                       "linear_attention");
  require_config_error(load("qwen3-8b"), {"layer type \"sliding_attention\"", "(full_attention)"},
                       "sliding_attention");
  Json g = load("gemma-4-26b-a4b");
  g["text_config"]["rope_parameters"].erase("sliding_attention");
  require_config_error(g,
                       {"text_config.rope_parameters has no entry for layer type "
                        "\"sliding_attention\""},
                       "sliding_attention");
}

TEST_CASE("E61: a rotary dimension the config's keys do not fit", "[errors][E61]") {
  Json p = load("phi-2");
  p["partial_rotary_factor"] = 1.5;
  require_config_error(p, {"partial_rotary_factor 1.5", "must be in (0, 1]"});
  p["partial_rotary_factor"] = 0.0125;  // 80 · 0.0125 = 1: odd
  require_config_error(p, {"partial_rotary_factor 0.0125", "odd or zero rotary dimension 1"});
  Json q = load("qwen2-vl-7b");
  q["rope_scaling"]["mrope_section"] = {16, 24, 16};
  require_config_error(q, {"rope_scaling.mrope_section adds up to 56 pairs", "has 64"});
  Json l = load("phi-3-vision-128k");
  l["rope_scaling"]["long_factor"].erase(0);
  require_config_error(l, {"rope_scaling.long_factor has 47 values", "48 pairs"});
}

TEST_CASE("E62: a config file that cannot be read or is not JSON", "[errors][E62]") {
  CHECK_THROWS_WITH(rope::hf_rope_file("/nonexistent/config.json"),
                    Catch::Matchers::Contains("cannot read the config file /nonexistent"));
  CHECK_THROWS_AS(rope::hf_rope_file(std::string(ROPE_TEST_DATA_DIR) + "/pytorch_float32_rope.csv"),
                  std::invalid_argument);
  CHECK_THROWS_WITH(
      rope::hf_rope_file(std::string(ROPE_TEST_DATA_DIR) + "/pytorch_float32_rope.csv"),
      Catch::Matchers::Contains("is not JSON"));
  CHECK_THROWS_AS(rope::hf_rope_file(ROPE_TEST_DATA_DIR), std::invalid_argument);  // a directory
}

TEST_CASE("E63: a config without a head size", "[errors][E63]") {
  Json c = load("llama-2-7b");
  c.erase("hidden_size");
  require_config_error(c, {"no head size", "head_dim, or hidden_size and num_attention_heads"});
  Json h = load("qwen3-8b");
  h["head_dim"] = -128;
  require_config_error(h, {"head_dim -128 must be an integer > 0"});
}

// ---- one answer per layer --------------------------------------------------------------------

namespace {

// Which layers rotate, written from each model's HuggingFace code: true where the layer applies
// apply_rotary_pos_emb (or its model's equivalent).
std::vector<bool> rotating(std::size_t layers, bool (*rotates)(std::size_t)) {
  std::vector<bool> out;
  for (std::size_t i = 0; i < layers; ++i) out.push_back(rotates(i));
  return out;
}

std::vector<bool> rotating(const std::vector<rope::HfLayer>& layers) {
  std::vector<bool> out;
  for (const rope::HfLayer& l : layers) {
    CHECK(l.rope.has_value() == l.no_rope_reason.empty());
    out.push_back(l.rope.has_value());
  }
  return out;
}

bool every_layer(std::size_t) { return true; }
bool no_layer(std::size_t) { return false; }
bool all_but_every_4th(std::size_t i) { return (i + 1) % 4 != 0; }
bool every_4th(std::size_t i) { return (i + 1) % 4 == 0; }

}  // namespace

TEST_CASE("hf_layers: RoPE or none for each layer of released checkpoints", "[hf_config]") {
  struct Model {
    const char* file;
    std::size_t layers;
    bool (*rotates)(std::size_t);
  };
  // SmolLM3 and Llama 4: use_rope = no_rope_layers[i] (Llama 4's default: every 4th layer NoPE);
  // Cohere2 and EXAONE 4: sliding layers only, every 4th layer is global; Qwen3-Next: every 4th
  // layer full attention, the rest linear attention; granitemoehybrid with "nope" and Kimi
  // Linear (mla_use_nope): none.
  const Model models[] = {
      {"llama-3.1-8b", 32, every_layer},      {"gemma-3-27b", 62, every_layer},
      {"smollm3-3b", 36, all_but_every_4th},  {"llama-4-scout-17b-16e", 48, all_but_every_4th},
      {"command-r7b", 32, all_but_every_4th}, {"exaone-4.0-32b", 64, all_but_every_4th},
      {"qwen3-next-80b-a3b", 48, every_4th},  {"granite-4.0-h-small", 40, no_layer},
      {"kimi-linear-48b-a3b", 27, no_layer},  {"gpt-oss-20b", 24, every_layer},
      {"ernie-4.5-21b-a3b", 28, every_layer}, {"deepseek-v3.2-exp", 61, every_layer},
      {"command-a", 64, all_but_every_4th},   {"glm-5", 78, every_layer},
      {"gpt-oss-120b", 36, every_layer},      {"glm-4.5v", 46, every_layer},
      {"deepseek-v4-flash", 43, every_layer},
  };
  for (const Model& m : models) {
    INFO(m.file);
    const std::vector<rope::HfLayer> layers = rope::hf_layers(load(m.file));
    REQUIRE(layers.size() == m.layers);
    CHECK(rotating(layers) == rotating(m.layers, m.rotates));
  }
  // Gemma 3: sliding layers (five of six) unscaled at base 10000, full layers linear ×8 at 1e6.
  const std::vector<rope::HfLayer> gemma = rope::hf_layers(load("gemma-3-27b"));
  CHECK(gemma[0].layer_type == "sliding_attention");
  CHECK(gemma[0].rope->options.base == 10000.0);
  CHECK(gemma[5].layer_type == "full_attention");
  CHECK(gemma[5].rope->rope_type == "linear");
  CHECK(gemma[5].rope->options.base == 1e6);
  // Every layer that rotates has the layer type's hf_rope.
  const std::vector<rope::HfLayer> exaone = rope::hf_layers(load("exaone-4.0-32b"));
  CHECK(exaone[0].rope->rope_type == "llama3");
  CHECK_THAT(exaone[3].no_rope_reason, Catch::Matchers::Contains("sliding_window"));
  // hf_rope of a layer type none of whose layers rotates says so; hf_layer_types leaves it out.
  require_config_error(load("exaone-4.0-32b"),
                       {"no layer of type \"full_attention\" has RoPE", "sliding_window"});
  require_config_error(load("command-r7b"), {"no layer of type \"full_attention\" has RoPE"});
  CHECK(rope::hf_layer_types(load("command-r7b")) == std::vector<std::string>{"sliding_attention"});
  // The same at 2^18 layers (no layer_types: the count builds them): each layer type is looked
  // at once. Asked again for each of the 65536 layers of the type left out, as before, the reader
  // took time in the square of the layer count: 230 s for the fuzzer's build on 8192 layers
  // (fuzz/config_regressions/cohere2_many_layers.json), 0.6 s since.
  Json many = load("command-r7b");
  many["num_hidden_layers"] = std::size_t{1} << 18;
  CHECK(rope::hf_layer_types(many) == std::vector<std::string>{"sliding_attention"});
  require_config_error(load("granite-4.0-h-small"), {"position_embedding_type is \"nope\""},
                       "attention");
  // EXAONE 4 without sliding_window (its 1.2B model): every layer rotates.
  Json dense = load("exaone-4.0-32b");
  dense.erase("sliding_window");
  CHECK(rotating(rope::hf_layers(dense)) == rotating(64, every_layer));
  // DeepSeek-V4: compress_ratios 0 is a window layer, others compressed (the 44th entry is the
  // MTP block's).
  const std::vector<rope::HfLayer> v4 = rope::hf_layers(load("deepseek-v4-flash"));
  CHECK(v4[0].layer_type == "sliding_attention");
  CHECK(v4[0].rope->options.base == 10000.0);
  CHECK(v4[2].layer_type == "compressed_attention");
  CHECK(v4[2].rope->options.base == 160000.0);
  CHECK(v4[42].layer_type == "compressed_attention");
  // Qwen3-Next's layer types are derived from full_attention_interval when not listed.
  CHECK(rope::hf_layers(load("qwen3-next-80b-a3b"))[0].layer_type == "linear_attention");
  // A model type without RoPE: every layer none, and hf_rope says so.
  const Json bert = {{"model_type", "bert"},
                     {"hidden_size", 768},
                     {"num_attention_heads", 12},
                     {"num_hidden_layers", 12}};
  CHECK(rotating(rope::hf_layers(bert)) == rotating(12, no_layer));
  require_config_error(bert, {"model type \"bert\" has no RoPE", "absolute position"});
  // Bamba: attention (with RoPE) on attn_layer_indices, Mamba 2 elsewhere.
  const Json bamba = {{"model_type", "bamba"},        {"hidden_size", 4096},
                      {"num_attention_heads", 32},    {"num_hidden_layers", 6},
                      {"partial_rotary_factor", 0.5}, {"attn_layer_indices", {1, 4}},
                      {"rope_theta", 10000.0}};
  const std::vector<rope::HfLayer> bamba_layers = rope::hf_layers(bamba);
  CHECK(rotating(bamba_layers) == std::vector<bool>{false, true, false, false, true, false});
  CHECK(bamba_layers[1].rope->options.rotary_dim == 64);
  Json bamba_without = bamba;
  bamba_without.erase("attn_layer_indices");
  rope_test::require_invalid([&] { rope::hf_layers(bamba_without); },
                             {"attn_layer_indices must be a list of layer indices"},
                             "rope: config.json: ");
  // Falcon with ALiBi.
  const Json falcon = {{"model_type", "falcon"},
                       {"hidden_size", 4544},
                       {"num_attention_heads", 71},
                       {"num_hidden_layers", 32},
                       {"alibi", true}};
  CHECK(rotating(rope::hf_layers(falcon)) == rotating(32, no_layer));
}

TEST_CASE("hf_indexer_rope: the DeepSeek sparse-attention indexer's own rotation", "[hf_config]") {
  const Json v32 = load("deepseek-v3.2-exp");
  const std::optional<rope::HfRope> indexer = rope::hf_indexer_rope(v32);
  REQUIRE(indexer.has_value());
  CHECK(indexer->options.head_size == 128);  // index_head_dim
  CHECK(indexer->options.rotary_dim == 64);  // qk_rope_head_dim, from coordinate 0
  CHECK(indexer->options.layout == Layout::half_split);
  CHECK(indexer->rope_type == "yarn");
  // The main attention of the same model: interleaved.
  CHECK(rope::hf_rope(v32).options.layout == Layout::interleaved);
  // GLM-5 states indexer_rope_interleave; a model type that does not is an error.
  Json glm5 = v32;
  glm5["model_type"] = "glm_moe_dsa";
  glm5["rope_interleave"] = true;
  glm5["indexer_rope_interleave"] = true;
  CHECK(rope::hf_indexer_rope(glm5)->options.layout == Layout::interleaved);
  const std::optional<rope::HfRope> glm5_file = rope::hf_indexer_rope(load("glm-5"));
  REQUIRE(glm5_file.has_value());
  CHECK(glm5_file->options.layout == Layout::interleaved);  // indexer_rope_interleave true
  CHECK(glm5_file->options.head_size == 128);
  CHECK(glm5_file->options.rotary_dim == 64);
  glm5.erase("indexer_rope_interleave");  // GLM-5's indexer is interleaved (GlmMoeDsaIndexer)
  CHECK(rope::hf_indexer_rope(glm5)->options.layout == Layout::interleaved);
  glm5["model_type"] = "mystery_dsa";  // another model type must say
  rope_test::require_invalid([&] { rope::hf_indexer_rope(glm5); },
                             {"indexer_rope_interleave is required", "mystery_dsa"},
                             "rope: config.json: ");
  CHECK_FALSE(rope::hf_indexer_rope(load("deepseek-v3")).has_value());
  // Kimi Linear: no RoPE in its attention (mla_use_nope).
  require_config_error(load("kimi-linear-48b-a3b"), {"mla_use_nope is true"});
}

TEST_CASE("hf_model_type: the closed table of model types and their sources", "[hf_config]") {
  std::size_t count = 0;
  const rope::HfModelType* rows = rope::hf_model_types(count);
  REQUIRE(count > 100);
  for (std::size_t i = 1; i < count; ++i) {
    INFO(rows[i].model_type);
    CHECK(std::string(rows[i - 1].model_type) < std::string(rows[i].model_type));  // sorted, unique
    CHECK(std::string(rows[i].source).find(": ") != std::string::npos);            // file: function
  }
  // Every row is a model type of transformers' list, or one of the few outside it; every model
  // type of the list is a row, or a text model still to be read (hf_model_types_unread.txt).
  const auto lines = [](const std::string& name) {
    std::ifstream file(std::string(ROPE_TEST_DATA_DIR) + "/" + name);
    REQUIRE(file.good());
    std::vector<std::string> out;
    for (std::string line; std::getline(file, line);) {
      if (!line.empty() && line[0] != '#') out.push_back(line);
    }
    return out;
  };
  const std::vector<std::string> listed = lines("hf_model_types.txt");
  const std::vector<std::string> unread = lines("hf_model_types_unread.txt");
  REQUIRE(listed.size() > 500);
  const std::vector<std::string> outside = {"deepseek_v32",  "deepseek_v4", "gemma4", "gemma4_text",
                                            "gemma4_vision", "kimi_k2",     "phi3_v"};
  const auto has = [](const std::vector<std::string>& v, const std::string& t) {
    return std::find(v.begin(), v.end(), t) != v.end();
  };
  for (std::size_t i = 0; i < count; ++i) {
    const std::string t = rows[i].model_type;
    INFO(t);
    CHECK((has(listed, t) || has(outside, t)));
    CHECK_FALSE(has(unread, t));
  }
  std::size_t answered = 0;
  for (const std::string& t : listed) {
    INFO(t);
    const rope::HfModelType* row = rope::hf_model_type(t);
    CHECK((row != nullptr || has(unread, t)));
    const Json c = {
        {"model_type", t},
        {"head_dim", 128},
        {"num_hidden_layers", 4},
        {"rope_theta", 10000.0},                                         // OLMo Hybrid: RoPE
        {"position_embedding_type", "rope"},                             // read by granitemoehybrid
        {"attn_layer_indices", {0, 1, 2, 3}},                            // read by bamba
        {"use_mem_rope", true},                                          // read by zamba2
        {"attention_head_dim", 128},                                     // read by zamba2
        {"layers_block_type", {"hybrid", "mamba", "hybrid", "mamba"}}};  // read by zamba2
    rope::HfRequest request;
    request.layout = Layout::interleaved;
    if (row == nullptr) {
      // A text model not read yet: an error that asks for the layout, and with it, it reads.
      require_config_error(c,
                           {"model_type \"" + t + "\" is not in the table", "HfRequest::layout"});
      CHECK(rope::hf_rope(c, request).layout_source == "HfRequest::layout");
      continue;
    }
    ++answered;
    switch (row->rotation) {
      case rope::HfRotation::not_text:  // never read, with or without a layout
        rope_test::require_invalid([&] { rope::hf_rope(c, request); },
                                   {"is not a text model whose RoPE this reader reads"},
                                   "rope: config.json: ");
        break;
      case rope::HfRotation::composite:  // its text_config names no model type here
        require_config_error(c, {"wraps a text model", "HfRequest::layout"});
        CHECK(rope::hf_rope(c, request).layout_source == "HfRequest::layout");
        break;
      case rope::HfRotation::none:
        require_config_error(c, {"has no RoPE"});
        break;
      default: {  // each layer that rotates has the row's layout
        std::size_t rotating = 0;
        for (const rope::HfLayer& layer : rope::hf_layers(c)) {
          if (!layer.rope) continue;
          ++rotating;
          CHECK(layer.rope->layout_source == row->source);
        }
        CHECK(rotating > 0);
      }
    }
  }
  INFO(answered << " of " << listed.size() << " listed model types are in the table");
  CHECK(answered + unread.size() == listed.size());
  CHECK(answered + outside.size() == count);

  // Class names of config.json's architectures.
  const auto of = [](const char* name) {
    const rope::HfModelType* row = rope::hf_model_type_of_class(name);
    return row == nullptr ? std::string() : std::string(row->model_type);
  };
  CHECK(of("LlamaForCausalLM") == "llama");
  CHECK(of("Llama4ForConditionalGeneration") == "llama4");
  CHECK(of("Qwen2_5_VLForConditionalGeneration") == "qwen2_5_vl");
  CHECK(of("Qwen3MoeForCausalLM") == "qwen3_moe");
  CHECK(of("DeepseekV3ForCausalLM") == "deepseek_v3");
  CHECK(of("GPTNeoXForCausalLM") == "gpt_neox");
  CHECK(of("HunYuanDenseV1ForCausalLM") == "hunyuan_v1_dense");
  CHECK(of("Ernie4_5_MoeForCausalLM") == "ernie4_5_moe");
  CHECK(of("MysteryForCausalLM").empty());
  CHECK(of("Llama9ForCausalLM").empty());  // "llama" followed by "9": not a class of llama
}

TEST_CASE("E75: a model whose pairing the reader does not know, or contradicted", "[errors][E75]") {
  // The model types the layout table used to get wrong silently.
  CHECK(rope::hf_rope(load("ernie-4.5-21b-a3b")).options.layout == Layout::interleaved);
  CHECK(rope::hf_rope(load("command-r7b"), "sliding_attention").options.layout ==
        Layout::interleaved);
  CHECK(rope::hf_rope(load("glm-4.1v-9b")).options.layout == Layout::interleaved);
  Json mystery = load("llama-3.1-8b");
  mystery["model_type"] = "mystery_lm";
  require_config_error(mystery, {"model_type \"mystery_lm\" is not in the table",
                                 "pass the pairing its q/k weights expect as HfRequest::layout"});
  Json anonymous = load("llama-3.1-8b");
  anonymous.erase("model_type");
  anonymous["architectures"] = {"MysteryForCausalLM"};
  require_config_error(anonymous, {"no model_type", "MysteryForCausalLM", "HfRequest::layout"});
  rope::HfRequest request;
  request.layout = Layout::interleaved;
  rope_test::require_invalid(
      [&] { rope::hf_rope(load("llama-3.1-8b"), request); },
      {"HfRequest::layout interleaved contradicts the model's half_split", "modeling_llama.py"},
      "rope: config.json: ");
  // Agreeing with the table is fine.
  request.layout = Layout::half_split;
  CHECK(rope::hf_rope(load("llama-3.1-8b"), request).options.layout == Layout::half_split);
  rope_test::require_invalid([&] { rope::hf_layout("mystery_lm"); }, {"not in the table"},
                             "rope: config.json: ");
}

TEST_CASE("E57: a key that looks like a RoPE key but is not one the reader understands",
          "[errors][E57]") {
  Json thetta = load("qwen3-8b");
  thetta.erase("rope_theta");
  thetta["rope_thetta"] = 1e6;
  require_config_error(thetta, {"rope_thetta looks like a RoPE key", "did you mean rope_theta?"});
  Json scalling = load("llama-3.1-8b");
  scalling["rope_scalling"] = scalling["rope_scaling"];
  scalling.erase("rope_scaling");
  require_config_error(scalling,
                       {"rope_scalling looks like a RoPE key", "did you mean rope_scaling?"});
  Json nested = load("qwen3-vl-8b");
  nested["text_config"]["rotary_emb_fraction"] = 0.5;
  require_config_error(nested, {"text_config.rotary_emb_fraction looks like a RoPE key"});
  // A misspelt rope_type is reported as itself, not as the keys of the default type.
  Json typ = load("llama-3.1-8b");
  typ["rope_scaling"]["rope_typ"] = typ["rope_scaling"]["rope_type"];
  typ["rope_scaling"].erase("rope_type");
  require_config_error(typ, {"rope_scaling.rope_typ is not a key this reader understands",
                             "did you mean rope_type?"});
  Json gptj = load("gpt-j-6b");
  gptj["rotary"] = false;
  require_config_error(gptj, {"rotary is false"});
  Json v3_with_v4_key = load("deepseek-v3");  // a RoPE key of another model type
  v3_with_v4_key["compress_rope_theta"] = 160000;
  require_config_error(v3_with_v4_key, {"compress_rope_theta is read for model type deepseek_v4"});
}

TEST_CASE("E59: each key read is of its JSON type, wherever it is read", "[errors][E59]") {
  Json vl = load("qwen3-vl-8b");  // mrope_interleaved as a string would read as sections
  vl["text_config"]["rope_scaling"]["mrope_interleaved"] = "true";
  require_config_error(vl, {"text_config.rope_scaling.mrope_interleaved must be true or false, "
                            "got a string \"true\""});
  Json v3 = load("deepseek-v3");
  v3["rope_interleave"] = "false";
  require_config_error(v3, {"rope_interleave must be true or false, got a string \"false\""});
  Json head = load("qwen3-8b");
  head["head_dim"] = "128";
  require_config_error(head, {"head_dim must be an integer > 0, got a string \"128\""});
  Json factor = load("gemma-3-27b");
  factor["text_config"]["rope_scaling"]["factor"] = "8";
  require_config_error(factor, {"text_config.rope_scaling.factor must be a number, got a string"});
  Json type = load("llama-3.1-8b");
  type["model_type"] = 3;
  require_config_error(type, {"model_type must be a string, got the number 3"});
  Json section = load("qwen2-vl-7b");
  section["rope_scaling"]["mrope_section"] = {16, "24", 24};
  require_config_error(section, {"rope_scaling.mrope_section[1] must be an integer >= 0"});
  Json alpha = load("hunyuan-a13b");
  alpha["rope_scaling"]["alpha"] = -1;
  require_config_error(alpha, {"rope_scaling.alpha -1 must be a finite number > 0"});
}

TEST_CASE("E63: a head size of 0 or one that does not divide", "[errors][E63]") {
  Json c = load("llama-2-7b");
  c["hidden_size"] = 16;  // 16 / 32 heads: head size 0
  require_config_error(c, {"hidden_size 16 is not a multiple of num_attention_heads 32"});
  c["hidden_size"] = 4100;
  require_config_error(c, {"hidden_size 4100 is not a multiple of num_attention_heads 32"});
  c["hidden_size"] = 32 * 7;  // head size 7: odd
  require_config_error(c, {"the head size 7", "is odd"});
}

TEST_CASE("E76: per-layer keys that do not fit the layers or whose meaning is not known",
          "[errors][E76]") {
  const auto layers_error = [](const Json& config, const std::vector<std::string>& fragments) {
    rope_test::require_invalid([&] { rope::hf_layers(config); }, fragments, "rope: config.json: ");
  };
  Json short_list = load("smollm3-3b");
  short_list["no_rope_layers"].erase(0);
  layers_error(short_list, {"no_rope_layers has 35 entries but num_hidden_layers is 36"});
  Json two = load("smollm3-3b");
  two["no_rope_layers"][1] = 2;
  layers_error(two, {"no_rope_layers[1] must be 0 or 1, got the number 2"});
  Json other = load("llama-3.1-8b");
  other["no_rope_layers"] = Json::array();
  for (int i = 0; i < 32; ++i) other["no_rope_layers"].push_back(1);
  layers_error(other, {"no_rope_layers: which value means RoPE is not known for model type "
                       "\"llama\""});
  Json types = load("gpt-oss-20b");
  types["layer_types"][2] = "hyena";
  layers_error(types, {"layer_types[2] \"hyena\" is not a layer type this reader knows"});
  // Names that look like attention are not known to rotate (nor "attention_linear" not to):
  // the list of layer types is closed.
  for (const char* unknown : {"nope_attention", "cross_attention", "attention_linear"}) {
    Json named = load("gpt-oss-20b");
    named["layer_types"][3] = unknown;
    layers_error(named, {std::string("layer_types[3] \"") + unknown +
                         "\" is not a layer type this reader knows"});
  }
  Json count = load("gpt-oss-20b");
  count["layer_types"].erase(0);
  layers_error(count, {"layer_types has 23 entries but num_hidden_layers is 24"});
  // A layer count that a list of layer types cannot hold: refused before one is built.
  Json huge = load("llama-3.1-8b");
  huge["num_hidden_layers"] = std::int64_t{1} << 61;
  layers_error(huge, {"num_hidden_layers 2305843009213693952 exceeds 1048576 layers"});
  require_config_error(huge, {"num_hidden_layers 2305843009213693952 exceeds 1048576 layers"});
  Json granite = load("granite-4.0-h-small");
  granite.erase("position_embedding_type");
  layers_error(granite, {"position_embedding_type (\"rope\" or \"nope\") is required"});
  granite["position_embedding_type"] = "alibi";
  layers_error(granite, {"position_embedding_type \"alibi\" is neither"});
}

TEST_CASE("E93: a config nested deeper than 64 levels", "[errors][E93]") {
  // rope_scaling.factor inside 200 000 lists: the copies and dumps of nlohmann's values recurse,
  // so the reader measures the depth first, without recursion.
  const std::size_t depth = 200000;
  Json c = load("llama-3.1-8b");
  c["rope_scaling"]["factor"] =
      Json::parse(std::string(depth, '[') + "8.0" + std::string(depth, ']'));
  require_config_error(c, {"the config nests deeper than 64 levels of objects and lists"});
  rope_test::require_invalid([&] { rope::hf_layers(c); }, {"nests deeper than 64 levels"},
                             "rope: config.json: ");
  rope_test::require_invalid([&] { rope::hf_layer_types(c); }, {"nests deeper than 64 levels"},
                             "rope: config.json: ");
  // 64 levels are read: the config (1), rope_scaling (2) and 62 lists around the factor.
  Json deep = load("llama-3.1-8b");
  deep["rope_scaling"]["factor"] = Json::parse(std::string(62, '[') + "8.0" + std::string(62, ']'));
  require_config_error(deep, {"rope_scaling.factor must be a number, got a list"});
}

// ---- The model types read last: their per-layer rules, head sizes and maps --------------------

namespace {

// A config of `layers` layers of head 128 for `model_type`, with `extra` keys merged in.
Json small_config(const std::string& model_type, std::size_t layers, const Json& extra) {
  Json c = {{"model_type", model_type},
            {"head_dim", 128},
            {"num_hidden_layers", layers},
            {"rope_theta", 10000.0}};
  c.update(extra);
  return c;
}

// A config of ERNIE 4.5-VL as HuggingFace's classes describe it (head 128, rope_theta 500000),
// with the given mrope_section; written here, not copied from a checkpoint.
Json ernie_vl_config(const std::vector<int>& section) {
  return {{"model_type", "ernie4_5_vl_moe"},
          {"text_config",
           {{"model_type", "ernie4_5_vl_moe_text"},
            {"num_hidden_layers", 2},
            {"hidden_size", 2560},
            {"num_attention_heads", 20},
            {"rope_parameters",
             {{"rope_type", "default"}, {"rope_theta", 500000.0}, {"mrope_section", section}}}}}};
}

// The layers of `c` that rotate, by index.
std::vector<std::size_t> rotating_layers(const Json& c) {
  std::vector<std::size_t> out;
  const std::vector<rope::HfLayer> layers = rope::hf_layers(c);
  for (std::size_t i = 0; i < layers.size(); ++i) {
    if (layers[i].rope) out.push_back(i);
  }
  return out;
}

}  // namespace

TEST_CASE(
    "hf_layers: the layers that rotate in AFMoE, OLMo Hybrid, RecurrentGemma, Zamba2, "
    "EXAONE MoE and T5Gemma",
    "[hf_config]") {
  using V = std::vector<std::size_t>;
  // AFMoE: every global_attn_every_n_layers-th layer (4) is full attention, without RoPE.
  CHECK(rotating_layers(small_config("afmoe", 8, Json::object())) == V{0, 1, 2, 4, 5, 6});
  CHECK(rotating_layers(small_config("afmoe", 6, {{"global_attn_every_n_layers", 3}})) ==
        V{0, 1, 3, 4});
  CHECK(rope::hf_layers(small_config("afmoe", 4, Json::object()))[3].no_rope_reason.find(
            "AFMoE rotates its sliding layers only") != std::string::npos);
  // OLMo Hybrid: every 4th layer attention, RoPE only with a rope_theta (released checkpoints
  // have none).
  Json olmo = small_config("olmo_hybrid", 8, Json::object());
  CHECK(rotating_layers(olmo) == V{3, 7});
  CHECK(rope::hf_rope(olmo).options.layout == Layout::half_split);
  olmo.erase("rope_theta");
  olmo["rope_parameters"] = {{"rope_type", "default"}, {"rope_theta", nullptr}};
  CHECK(rotating_layers(olmo).empty());
  require_config_error(olmo, {"OLMo Hybrid has no RoPE without a rope_theta"});
  // RecurrentGemma: block_types repeated; half the head by default.
  Json griffin = small_config("recurrent_gemma", 6, Json::object());
  griffin.erase("head_dim");
  griffin["hidden_size"] = 2560;
  griffin["num_attention_heads"] = 10;
  CHECK(rotating_layers(griffin) == V{2, 5});
  const rope::HfRope g = rope::hf_rope(griffin, "attention");
  CHECK(g.options.head_size == 256);
  CHECK(g.options.rotary_dim == 128);  // RecurrentGemmaConfig's partial_rotary_factor 0.5
  griffin["block_types"] = {"attention", "recurrent"};
  CHECK(rotating_layers(griffin) == V{0, 2, 4});
  // Zamba2: the shared attention of "hybrid" layers, head 2·hidden_size/heads, use_mem_rope.
  Json zamba = small_config("zamba2", 4,
                            {{"hidden_size", 2560},
                             {"num_attention_heads", 32},
                             {"use_mem_rope", true},
                             {"layers_block_type", {"mamba", "hybrid", "mamba", "hybrid"}}});
  zamba.erase("head_dim");
  CHECK(rotating_layers(zamba) == V{1, 3});
  CHECK(rope::hf_rope(zamba).options.head_size == 160);
  zamba.erase("use_mem_rope");
  CHECK(rotating_layers(zamba).empty());
  // EXAONE MoE: every sliding_window_pattern-th layer (4) global and NoPE with a sliding window.
  Json exaone = small_config("exaone_moe", 8, {{"sliding_window", 4096}});
  CHECK(rotating_layers(exaone) == V{0, 1, 2, 4, 5, 6});
  exaone.erase("sliding_window");
  CHECK(rotating_layers(exaone) == V{0, 1, 2, 3, 4, 5, 6, 7});
  // T5Gemma's encoder and decoder: Gemma 2's alternation.
  CHECK(rope::hf_layer_types(small_config("t5_gemma_module", 4, Json::object())) ==
        std::vector<std::string>{"sliding_attention", "full_attention"});
}

TEST_CASE("E76: per-layer keys of Zamba2, EXAONE and RecurrentGemma", "[errors][E76]") {
  Json zamba = small_config("zamba2", 4, {{"attention_head_dim", 160}, {"use_mem_rope", true}});
  rope_test::require_invalid([&] { rope::hf_layers(zamba); },
                             {"layers_block_type", "is required for zamba2"},
                             "rope: config.json: ");
  Json exaone = small_config("exaone4", 4, {{"sliding_window", 4096}});
  rope_test::require_invalid([&] { rope::hf_layers(exaone); },
                             {"layer_types is required for model type exaone4"},
                             "rope: config.json: ");
  Json pattern = small_config("exaone_moe", 4, {{"sliding_window", 4096}});
  pattern["sliding_window_pattern"] = "LLLG";
  rope_test::require_invalid([&] { rope::hf_layers(pattern); },
                             {"layer_types is required for model type exaone_moe"},
                             "rope: config.json: ");
  Json griffin = small_config("recurrent_gemma", 3, {{"block_types", {"attention", "mamba"}}});
  rope_test::require_invalid([&] { rope::hf_layers(griffin); },
                             {"block_types[]", "\"recurrent\" or \"attention\""},
                             "rope: config.json: ");
}

TEST_CASE("E57: Zamba2's use_long_context is not read", "[errors][E57]") {
  const Json zamba = small_config("zamba2", 2,
                                  {{"attention_head_dim", 160},
                                   {"use_mem_rope", true},
                                   {"use_long_context", true},
                                   {"layers_block_type", {"hybrid", "hybrid"}}});
  require_config_error(zamba, {"use_long_context is true", "not read"});
}

TEST_CASE("E61: MLA's partial_rotary_factor (Mistral 4) and ERNIE 4.5-VL's sections",
          "[errors][E61]") {
  // Mistral 4: the factor is of qk_nope_head_dim + qk_rope_head_dim and gives the rotated part.
  Json mistral4 = {{"model_type", "mistral4"},
                   {"num_hidden_layers", 2},
                   {"qk_rope_head_dim", 64},
                   {"qk_nope_head_dim", 64},
                   {"head_dim", 128},
                   {"rope_parameters",
                    {{"rope_type", "yarn"},
                     {"rope_theta", 10000.0},
                     {"factor", 128.0},
                     {"original_max_position_embeddings", 8192},
                     {"beta_fast", 32.0},
                     {"beta_slow", 1.0},
                     {"mscale", 1.0},
                     {"mscale_all_dim", 1.0},
                     {"llama_4_scaling_beta", 0.1},
                     {"partial_rotary_factor", 0.5}}}};
  const rope::HfRope m = rope::hf_rope(mistral4);
  CHECK(m.options.head_size == 64);
  CHECK(m.options.rotary_dim == 0);                // the whole rotated part
  CHECK(m.options.layout == Layout::interleaved);  // rope_interleave's default
  mistral4["rope_interleave"] = false;
  CHECK(rope::hf_rope(mistral4).options.layout == Layout::half_split);
  mistral4["rope_parameters"]["partial_rotary_factor"] = 0.25;
  require_config_error(mistral4, {"partial_rotary_factor 0.25",
                                  "qk_nope_head_dim + qk_rope_head_dim 128 rotates 32"});
  // ERNIE 4.5-VL: [s, s, t] adding up to the pairs.
  require_config_error(ernie_vl_config({22, 20, 22}),
                       {"text_config.rope_parameters.mrope_section must be [s, s, t]"});
}

// ERNIE 4.5-VL's text model: Ernie4_5_VLMoeTextRotaryEmbedding and apply_rotary_pos_emb
// (modular_ernie4_5_vl_moe.py), transcribed in double, on (t, h, w) positions of an image grid.
TEST_CASE("hf_rope: ERNIE 4.5-VL's 3-D map against HuggingFace's rotary embedding", "[hf_config]") {
  const rope::HfRope got = rope::hf_rope(ernie_vl_config({22, 22, 20}));
  CHECK(got.options.layout == Layout::interleaved);
  const rope::Rotary<float> rot(got.options);
  REQUIRE(rot.axes() == 3);
  const std::size_t d = 128, pairs = d / 2;
  const double base = 500000.0;
  const std::size_t s[3] = {22, 22, 20};
  // inv_freq, pre-rotated on the hw part: even θ first, then odd θ; the t part as is.
  std::vector<double> inv(pairs), inv3d(pairs);
  for (std::size_t i = 0; i < pairs; ++i) inv[i] = 1.0 / std::pow(base, double(2 * i) / double(d));
  const std::size_t hw = s[0] + s[1];
  for (std::size_t k = 0; k < hw / 2; ++k) {
    inv3d[k] = inv[2 * k];
    inv3d[hw / 2 + k] = inv[2 * k + 1];
  }
  for (std::size_t i = hw; i < pairs; ++i) inv3d[i] = inv[i];
  std::mt19937_64 rng(45);
  const double tolerance = theta_tolerance(base);
  for (const std::array<std::int64_t, 3> p :
       {std::array<std::int64_t, 3>{7, 7, 7}, {12, 3, 9}, {0, 31, 2}, {400, 415, 433}}) {
    INFO("position (t, h, w) = (" << p[0] << ", " << p[1] << ", " << p[2] << ")");
    // freqs[a][j] = p[a]·inv3d[j]; h from section 0 (axis 1), w from section 1 (axis 2), t from
    // section 2 (axis 0); h and w stacked alternately, then t; each angle repeated twice.
    std::vector<double> angle;
    for (std::size_t k = 0; k < s[0]; ++k) {
      angle.push_back(double(p[1]) * inv3d[k]);
      angle.push_back(double(p[2]) * inv3d[s[0] + k]);
    }
    for (std::size_t k = 0; k < s[2]; ++k) angle.push_back(double(p[0]) * inv3d[hw + k]);
    REQUIRE(angle.size() == pairs);
    std::vector<float> head = rope_test::random_vector<float>(d, rng);
    const std::vector<float> input = head;
    rot.apply(head.data(), 1, 1, rope::Positions::token_major(p.data(), 3));
    rope_test::WorstCoordinate worst;
    for (std::size_t k = 0; k < pairs; ++k) {
      // q·cos + rotate_half_text(q)·sin: rotate_half_text puts −q[2k+1] at 2k and q[2k] at 2k+1.
      const double x = double(input[2 * k]), y = double(input[2 * k + 1]);
      const double expected[2] = {x * std::cos(angle[k]) - y * std::sin(angle[k]),
                                  y * std::cos(angle[k]) + x * std::sin(angle[k])};
      const double bound = (std::abs(x) + std::abs(y)) *
                           (rope_test::gamma<float>(3) + rope_test::gamma<double>(2) +
                            angle[k] * tolerance + rope_test::unit_roundoff<double> * 433.0);
      for (std::size_t c = 0; c < 2; ++c) {
        worst.note(std::abs(double(head[2 * k + c]) - expected[c]), bound, [&](std::ostream& o) {
          o << "coordinate " << 2 * k + c << ": got " << head[2 * k + c] << ", expected "
            << expected[c];
        });
      }
    }
    INFO("worst coordinate: " << worst.where());
    CHECK(worst.ratio() <= 1.0);
  }
}

TEST_CASE("hf_rope: the readings of GLM-5, BLT and the other last model types", "[hf_config]") {
  // GLM-5: interleaved without rope_interleave, its indexer too.
  Json glm5 = load("glm-5");
  glm5.erase("rope_interleave");
  glm5.erase("indexer_rope_interleave");
  CHECK(rope::hf_rope(glm5).options.layout == Layout::interleaved);
  CHECK(rope::hf_indexer_rope(glm5)->options.layout == Layout::interleaved);
  // BLT's parts pair adjacent coordinates; the wrapper asks for a part's own config.
  CHECK(rope::hf_rope(small_config("blt_global_transformer", 2, Json::object())).options.layout ==
        Layout::interleaved);
  require_config_error(
      small_config("blt", 2, Json::object()),
      {"wraps a text model", "patcher_config", "read the text model's own config"});
  // Moshi's depth decoder and Zamba have no RoPE; Moshi's main decoder is half_split.
  require_config_error(small_config("moshi_depth", 2, Json::object()), {"has no RoPE"});
  require_config_error(small_config("zamba", 2, Json::object()), {"has no RoPE"});
  CHECK(rope::hf_rope(small_config("moshi", 2, Json::object())).options.layout ==
        Layout::half_split);
  // LongCat-Flash rotates adjacent pairs whatever rope_interleave says; Youtu by its default.
  CHECK(rope::hf_rope(small_config("longcat_flash", 2, Json::object())).options.layout ==
        Layout::interleaved);
  CHECK(rope::hf_rope(small_config("youtu", 2, Json::object())).options.layout ==
        Layout::interleaved);
}

// ---- Every key, every wrong JSON type ---------------------------------------------------------

namespace {

// What the reader answers for a config: each layer's type and RoPE (θ, factor, axes, ...) or
// why none, the indexer's (where `indexer`) and the NoPE query scale, as text to compare.
std::string answers(const Json& config, bool indexer) {
  std::ostringstream out;
  out << std::hexfloat;
  const auto rope_text = [&](const rope::HfRope& r) {
    const rope::Options& o = r.options;
    const std::size_t d = o.rotary_dim != 0 ? o.rotary_dim : o.head_size;
    const rope::Frequencies f =
        o.axes.frequencies(d, o.base, o.scaling, o.sequence_length, o.angles);
    out << o.head_size << ' ' << o.rotary_dim << ' ' << o.rotary_offset << ' ' << o.base << ' '
        << int(o.layout) << ' ' << r.rope_type << ' ' << r.max_position_embeddings << ' '
        << f.attention_factor << ' ' << r.query_scale.has_value() << " θ";
    for (double t : f.theta) out << ' ' << t;
    out << " axes";
    for (std::uint8_t a : o.axes.axis_of_pairs(d / 2)) out << ' ' << int(a);
    out << '\n';
  };
  for (const rope::HfLayer& layer : rope::hf_layers(config)) {
    out << layer.layer_type << ": " << layer.no_rope_reason << '\n';
    if (layer.rope) rope_text(*layer.rope);
  }
  if (indexer) {
    if (const std::optional<rope::HfRope> answer = rope::hf_indexer_rope(config)) {
      out << "indexer ";
      rope_text(*answer);
    }
  }
  out << "nope scale " << rope::hf_nope_query_scale(config).has_value() << '\n';
  return out.str();
}

}  // namespace

TEST_CASE("E59: a key of the wrong JSON type is rejected by name or has no effect",
          "[errors][E59]") {
  // For every released config, every key at the top level, in text_config and in the RoPE
  // dictionaries, given a value of each other JSON type: the reader either throws
  // std::invalid_argument naming the key, or answers exactly as before (the key is not read for
  // that model). Never a different answer, never another exception.
  const std::vector<Json> wrong = {Json("x"), Json(3.5), Json(true), Json::array(), Json::object()};
  const auto kind = [](const Json& v) {
    return v.is_number() ? 0 : v.is_string() ? 1 : v.is_boolean() ? 2 : v.is_array() ? 3 : 4;
  };
  std::size_t mutations = 0, rejected = 0;
  std::ifstream list(std::string(ROPE_TEST_DATA_DIR) + "/configs/README.md");
  REQUIRE(list.good());
  std::vector<std::string> files;
  for (std::string line; std::getline(list, line);) {
    const std::size_t json = line.find(".json |");
    if (line.rfind("| ", 0) == 0 && json != std::string::npos)
      files.push_back(line.substr(2, json - 2));
  }
  REQUIRE(files.size() >= 45);
  for (const std::string& file : files) {
    const Json config = load(file);
    bool indexer = true;  // DeepSeek-V4's indexer must state its pairing: left out
    try {
      (void)rope::hf_indexer_rope(config);
    } catch (const std::invalid_argument&) {
      indexer = false;
    }
    const std::string before = answers(config, indexer);
    // The objects whose keys are mutated, as JSON pointers.
    std::vector<Json::json_pointer> objects = {Json::json_pointer("")};
    for (const char* nested : {"/text_config", "/rope_scaling", "/rope_parameters",
                               "/text_config/rope_scaling", "/text_config/rope_parameters"}) {
      const Json::json_pointer p(nested);
      if (config.contains(p) && config[p].is_object()) objects.push_back(p);
    }
    for (const Json::json_pointer& object : objects) {
      for (const auto& item : config[object].items()) {
        if (item.value().is_null() || item.value().is_object()) continue;
        for (const Json& value : wrong) {
          if (kind(value) == kind(item.value())) continue;
          Json mutated = config;
          mutated[object / item.key()] = value;
          INFO(file << ".json: " << (object / item.key()).to_string() << " = " << value.dump());
          ++mutations;
          std::string after;
          try {
            after = answers(mutated, indexer);
          } catch (const std::invalid_argument& e) {
            ++rejected;
            CHECK_THAT(e.what(), Catch::Matchers::Contains(item.key()));
            continue;
          }
          CHECK(after == before);
        }
      }
    }
  }
  INFO(rejected << " of " << mutations << " mutations rejected, the others without effect");
  CHECK(mutations > 1000);
}

TEST_CASE("hf_rope: rope_interleave is read only where the model's code reads it", "[hf_config]") {
  // DeepSeek-V3's attention reads it (the table's row is its default).
  Json v3 = load("deepseek-v3");
  v3["rope_interleave"] = false;
  CHECK(rope::hf_rope(v3).options.layout == Layout::half_split);
  CHECK(rope::hf_rope(v3).layout_source == "rope_interleave false");
  v3.erase("rope_interleave");
  CHECK(rope::hf_rope(v3).options.layout == Layout::interleaved);
  // LongCat-Flash pairs adjacent coordinates whatever it says; Llama rotates half_split.
  Json longcat = small_config("longcat_flash", 4, {{"rope_interleave", false}});
  const rope::HfRope l = rope::hf_rope(longcat);
  CHECK(l.options.layout == Layout::interleaved);
  CHECK_THAT(l.layout_source, Catch::Matchers::Contains("rope_interleave false is not read by its "
                                                        "code"));
  Json llama = load("llama-3.1-8b");
  llama["rope_interleave"] = true;
  CHECK(rope::hf_rope(llama).options.layout == Layout::half_split);
  for (const rope::HfLayer& layer : rope::hf_layers(llama)) {
    REQUIRE(layer.rope);
    CHECK(layer.rope->options.layout == Layout::half_split);
  }
  // A model type outside the table: rope_interleave is what says.
  Json other = load("llama-3.1-8b");
  other["model_type"] = "mystery_lm";
  other["rope_interleave"] = true;
  CHECK(rope::hf_rope(other).options.layout == Layout::interleaved);
}

TEST_CASE("E58: no rope_theta for a model type whose class default is not known", "[errors][E58]") {
  // HuggingFace's config classes do not share one default base: an absent rope_theta reads as
  // the class's default only where the reader has read it (LlamaConfig's 10000), else it is an
  // error naming the key, never 10000 by guess.
  for (const char* type : {"jais2", "jina_embeddings_v3", "higgs_audio_v2", "qwen2"}) {
    Json c = small_config(type, 2, Json::object());
    c.erase("rope_theta");
    require_config_error(c, {std::string("rope_theta is required: the default base of model type "
                                         "\"") +
                             type + "\"'s config class is not one this reader knows"});
  }
  Json llama = small_config("llama", 2, Json::object());
  llama.erase("rope_theta");
  CHECK(rope::hf_rope(llama).options.base == 10000.0);
}

TEST_CASE("hf_rope: Gemma 4's vision encoder, its vision_config alone", "[hf_config]") {
  // Gemma4VisionRotaryEmbedding: inv_freq = 1 / rope_theta^(arange(0, dim/2, 2) / (dim/2)) for
  // each of the two spatial blocks, applied by apply_multidimensional_rope with rotate_half inside
  // each block; rope_type "default" in some configs, "axial" in others.
  Json vision = {{"model_type", "gemma4_vision"},
                 {"head_dim", 72},
                 {"num_attention_heads", 16},
                 {"hidden_size", 1152},
                 {"rope_parameters", {{"rope_theta", 100.0}, {"rope_type", "default"}}}};
  for (const char* rope_type : {"default", "axial"}) {
    INFO(rope_type);
    vision["rope_parameters"]["rope_type"] = rope_type;
    const rope::HfRope read = rope::hf_rope(vision);
    CHECK(read.model_type == "gemma4_vision");
    CHECK(read.rope_type == rope_type);
    CHECK(read.options.head_size == 72);
    CHECK(read.options.base == 100.0);
    CHECK(read.options.layout == rope::Layout::half_split);
    CHECK(read.options.axes.count() == 2);
    CHECK(read.options.axes.pairs_within_blocks());
    CHECK(read.options.axes.signed_coordinates());
    const rope::Rotary<float> rot(read.options);
    const std::size_t spatial = 36;
    REQUIRE(rot.inverse_frequencies().size() == spatial);
    for (std::size_t i = 0; i < spatial; ++i) {
      const std::size_t k = i % (spatial / 2);  // both blocks: arange(0, spatial, 2)[k]
      const double inv_freq = 1.0 / std::pow(100.0, double(2 * k) / double(spatial));
      CHECK(std::abs(rot.inverse_frequencies()[i] - inv_freq) <= theta_tolerance(100.0) * inv_freq);
    }
  }
  // No head_dim: hidden_size / num_attention_heads (768 / 12 for the smaller towers).
  const Json small = {{"model_type", "gemma4_vision"},
                      {"num_attention_heads", 12},
                      {"hidden_size", 768},
                      {"rope_parameters", {{"rope_theta", 100.0}, {"rope_type", "default"}}}};
  CHECK(rope::hf_rope(small).options.head_size == 64);
  // hf_layers reads text models' layers: the vision encoder is not one.
  rope_test::require_invalid([&] { rope::hf_layers(vision); },
                             {"model type \"gemma4_vision\" is not a text model",
                              "apply_multidimensional_rope", "gemma4_vision_options"});
}

TEST_CASE("E56, E57, E58, E63: what hf_rope does not read by guess in Gemma 4's vision_config",
          "[errors][E56][E57][E58][E63]") {
  const Json vision = {{"model_type", "gemma4_vision"},
                       {"head_dim", 72},
                       {"rope_parameters", {{"rope_theta", 100.0}, {"rope_type", "axial"}}}};
  CHECK(rope::hf_rope(vision).options.head_size == 72);
  Json other = vision;
  other["rope_parameters"]["rope_type"] = "linear";
  rope_test::require_invalid([&] { rope::hf_rope(other); },
                             {"rope_parameters.rope_type \"linear\"", "\"default\" and \"axial\""});
  other = vision;
  other["rope_parameters"]["factor"] = 2.0;
  rope_test::require_invalid([&] { rope::hf_rope(other); },
                             {"rope_parameters.factor is not a key this reader understands"});
  other = vision;
  other["rope_parameters"].erase("rope_theta");
  rope_test::require_invalid([&] { rope::hf_rope(other); },
                             {"rope_parameters.rope_theta is required"});
  other = vision;
  other["head_dim"] = 70;
  rope_test::require_invalid([&] { rope::hf_rope(other); },
                             {"head size 70 (head_dim) is not a multiple of 4"});
  rope::HfRequest interleaved;
  interleaved.layout = rope::Layout::interleaved;
  rope_test::require_invalid([&] { rope::hf_rope(vision, interleaved); },
                             {"HfRequest::layout is interleaved", "gemma4_vision"});
}
