// rope::gguf_rope: the Options of a model from its GGUF metadata (what llama.cpp-format engines
// hold), following HuggingFace's definition of each scheme where ggml's CPU rope differs
// (docs/scaling.md, "GGUF metadata", lists the differences).
#pragma once

#include <rope/config.hpp>
#if !defined(ROPE_BELOW_CXX17)  // config.hpp stops older standards with one #error

#include <cmath>
#include <cstddef>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

#include <rope/layout.hpp>
#include <rope/options.hpp>

namespace rope {
inline namespace ROPE_DETAIL_ISA {

/// A GGUF metadata value: every integer and float type as double, a bool, a string, or an array
/// of numbers.
using GgufValue = std::variant<double, bool, std::string, std::vector<double>>;
/// GGUF metadata, key → value ("general.architecture", "llama.rope.freq_base", ...).
using GgufMetadata = std::map<std::string, GgufValue>;

/// The RoPE tensors of a GGUF file, as doubles (empty when the file has none).
struct GgufTensors {
  std::vector<double> rope_freqs{};          ///< ggml's freq_factors (Llama 3 scaling)
  std::vector<double> rope_factors_long{};   ///< LongRoPE (Phi-3)
  std::vector<double> rope_factors_short{};  ///< LongRoPE (Phi-3)
};

/// What gguf_rope read.
struct GgufRope {
  Options options;
  std::string architecture;  ///< general.architecture
  std::string scaling_type;  ///< rope.scaling.type, or "none"
  std::string layout_source;
};

/// The Options of a model of a GGUF file; `sliding` reads the sliding-window layers' base
/// (rope.freq_base_swa, unscaled). `sequence_length` becomes Options::sequence_length.
///
/// Throws std::invalid_argument naming the key for a rope key it does not understand, an
/// unknown scaling type, a missing key, a value of the wrong type or out of range, an
/// architecture without a known pair layout, or tensors of the wrong length.
GgufRope gguf_rope(const GgufMetadata& metadata, const GgufTensors& tensors = {},
                   bool sliding = false, double sequence_length = 0);

/// The pair layout of ggml's rope mode for an architecture (llama.cpp's llama_model_rope_type):
/// interleaved for "normal", half_split for "neox" (and M-RoPE). GGUF conversion permutes the
/// q/k weights of LLaMA-style checkpoints so that "normal" rotates them as HuggingFace does.
/// Throws std::invalid_argument for an architecture not in the table.
Layout gguf_layout(const std::string& architecture);

// ---- implementation ----------------------------------------------------------------------------

namespace detail {

[[noreturn]] inline void gguf_error(const std::string& what) {
  ROPE_THROW(std::invalid_argument, "rope: GGUF: " + what);
}

inline const GgufValue* gguf_find(const GgufMetadata& m, const std::string& key) {
  const auto it = m.find(key);
  return it == m.end() ? nullptr : &it->second;
}

inline double gguf_number(const GgufMetadata& m, const std::string& key) {
  const GgufValue* v = gguf_find(m, key);
  if (v == nullptr) gguf_error(key + " is required");
  if (const double* x = std::get_if<double>(v)) return *x;
  gguf_error(key + " must be a number");
}

inline double gguf_positive(const GgufMetadata& m, const std::string& key) {
  const double x = gguf_number(m, key);
  if (!(x > 0.0) || !std::isfinite(x)) {
    gguf_error(key + " " + std::to_string(x) + " must be a finite number > 0");
  }
  return x;
}

// The value of a key that may be absent, finite and > 0 when present.
inline std::optional<double> gguf_optional_positive(const GgufMetadata& m, const std::string& key) {
  if (gguf_find(m, key) == nullptr) return std::nullopt;
  return gguf_positive(m, key);
}

inline std::size_t gguf_count(const GgufMetadata& m, const std::string& key) {
  const double x = gguf_number(m, key);
  if (!(x >= 1.0 && x <= 1e15) || x != std::floor(x)) {
    gguf_error(key + " " + std::to_string(x) + " must be an integer > 0");
  }
  return static_cast<std::size_t>(x);
}

}  // namespace detail

inline Layout gguf_layout(const std::string& architecture) {
  static const char* const normal[] = {
      "llama",   "llama4",    "deci",     "baichuan", "starcoder",  "internlm2", "minicpm",
      "xverse",  "command-r", "cohere2",  "olmo",     "arctic",     "deepseek",  "deepseek2",
      "plm",     "chatglm",   "glm4",     "granite",  "granitemoe", "chameleon", "bailingmoe",
      "smollm3", "arcee",     "ernie4_5", "mistral3"};
  static const char* const neox[] = {
      "falcon",     "grok",       "dbrx",        "stablelm", "qwen",     "qwen2",   "qwen2moe",
      "qwen3",      "qwen3moe",   "qwen3next",   "olmo2",    "olmoe",    "phi2",    "phi3",
      "phimoe",     "plamo",      "gemma",       "gemma2",   "gemma3",   "gemma3n", "starcoder2",
      "openelm",    "gptneox",    "codeshell",   "orion",    "nemotron", "exaone",  "exaone4",
      "minicpm3",   "dots1",      "hunyuan-moe", "gpt-oss",  "glm4moe",  "qwen2vl", "qwen3vl",
      "qwen3vlmoe", "minimax-m2", "gemma4"};
  for (const char* a : normal) {
    if (architecture == a) return Layout::interleaved;
  }
  for (const char* a : neox) {
    if (architecture == a) return Layout::half_split;
  }
  detail::gguf_error("general.architecture \"" + architecture +
                     "\" has no entry in the table of ggml rope modes (docs/scaling.md)");
}

inline GgufRope gguf_rope(const GgufMetadata& metadata, const GgufTensors& tensors, bool sliding,
                          double sequence_length) {
  using detail::gguf_error;
  GgufRope out;
  const GgufValue* arch = detail::gguf_find(metadata, "general.architecture");
  if (arch == nullptr || !std::holds_alternative<std::string>(*arch)) {
    gguf_error("general.architecture (a string) is required");
  }
  out.architecture = std::get<std::string>(*arch);
  const std::string a = out.architecture + ".";
  const std::string r = a + "rope.";

  // Every key under <arch>.rope. must be one this reader understands.
  static const char* const kRopeKeys[] = {"freq_base",
                                          "freq_base_swa",
                                          "dimension_count",
                                          "dimension_sections",
                                          "scale_linear",
                                          "scaling.type",
                                          "scaling.factor",
                                          "scaling.original_context_length",
                                          "scaling.attn_factor",
                                          "scaling.yarn_log_multiplier",
                                          "scaling.yarn_beta_fast",
                                          "scaling.yarn_beta_slow",
                                          "scaling.finetuned"};
  for (const auto& item : metadata) {
    if (item.first.compare(0, r.size(), r) != 0) continue;
    bool understood = false;
    for (const char* k : kRopeKeys) understood = understood || item.first == r + k;
    if (!understood) gguf_error(item.first + " is not a key this reader understands");
  }

  Options& o = out.options;
  o.sequence_length = sequence_length;
  o.layout = gguf_layout(out.architecture);
  out.layout_source = "ggml's rope mode for " + out.architecture + " (llama_model_rope_type)";

  // Head size: attention.key_length, else embedding_length / attention.head_count.
  if (detail::gguf_find(metadata, a + "attention.key_length") != nullptr) {
    o.head_size = detail::gguf_count(metadata, a + "attention.key_length");
  } else if (detail::gguf_find(metadata, a + "embedding_length") != nullptr &&
             detail::gguf_find(metadata, a + "attention.head_count") != nullptr) {
    o.head_size = detail::gguf_count(metadata, a + "embedding_length") /
                  detail::gguf_count(metadata, a + "attention.head_count");
  } else {
    gguf_error("no head size: " + a + "attention.key_length, or " + a + "embedding_length and " +
               a + "attention.head_count, is required");
  }
  // ggml's n_rot: the rotated dimension, from coordinate 0.
  if (detail::gguf_find(metadata, r + "dimension_count") != nullptr) {
    const std::size_t n_rot = detail::gguf_count(metadata, r + "dimension_count");
    if (n_rot > o.head_size || n_rot % 2 != 0) {
      gguf_error(r + "dimension_count " + std::to_string(n_rot) +
                 " must be even and at most the head size " + std::to_string(o.head_size));
    }
    o.rotary_dim = n_rot == o.head_size ? 0 : n_rot;
  }
  const std::size_t d = o.rotary_dim != 0 ? o.rotary_dim : o.head_size;

  const std::optional<double> swa_base =
      detail::gguf_optional_positive(metadata, r + "freq_base_swa");
  const bool has_swa = swa_base.has_value();
  o.base = sliding && has_swa
               ? *swa_base
               : detail::gguf_optional_positive(metadata, r + "freq_base").value_or(10000.0);

  std::string type = "none";
  if (const GgufValue* t = detail::gguf_find(metadata, r + "scaling.type")) {
    if (!std::holds_alternative<std::string>(*t)) gguf_error(r + "scaling.type must be a string");
    type = std::get<std::string>(*t);
  }
  out.scaling_type = type;
  const auto factor_or = [&](double fallback) {
    if (const auto f = detail::gguf_optional_positive(metadata, r + "scaling.factor")) return *f;
    return detail::gguf_optional_positive(metadata, r + "scale_linear").value_or(fallback);
  };
  const auto per_pair = [&](const std::vector<double>& v, const char* name) {
    if (v.size() != d / 2) {
      gguf_error(std::string("the ") + name + " tensor has " + std::to_string(v.size()) +
                 " values but the rotary dimension " + std::to_string(d) + " has " +
                 std::to_string(d / 2) + " pairs");
    }
  };
  // Keys that only YaRN or LongRoPE read: with another type they would be dropped silently.
  const bool yarn_or_longrope = type == "yarn" || type == "longrope";
  if (!yarn_or_longrope && !(sliding && has_swa)) {
    if (detail::gguf_find(metadata, r + "scaling.attn_factor") != nullptr &&
        detail::gguf_number(metadata, r + "scaling.attn_factor") != 1.0) {
      gguf_error(r + "scaling.attn_factor is not a key this reader understands for " +
                 "rope.scaling.type \"" + type + "\": no HuggingFace scheme scales cos and sin " +
                 "without YaRN or LongRoPE");
    }
    for (const char* k :
         {"scaling.yarn_log_multiplier", "scaling.yarn_beta_fast", "scaling.yarn_beta_slow"}) {
      if (detail::gguf_find(metadata, r + k) != nullptr) {
        gguf_error(r + k + " is not a key this reader understands for rope.scaling.type \"" + type +
                   "\"");
      }
    }
  }
  if (sliding && has_swa) {
    // Sliding-window layers rotate unscaled with their own base (llama.cpp: scale 1).
  } else if (type == "none" || type == "linear") {
    // θ_j / factor, and with ggml's freq_factors θ_j / (ff_j · factor): one FrequencyFactors.
    const double f = factor_or(1.0);
    if (!tensors.rope_freqs.empty()) {
      per_pair(tensors.rope_freqs, "rope_freqs");
      std::vector<double> factors = tensors.rope_freqs;
      for (double& x : factors) x *= f;
      o.scaling = FrequencyFactors{factors};
    } else if (f != 1.0 || type == "linear") {
      o.scaling = Linear{f};
    }
  } else if (type == "yarn") {
    Yarn y;
    y.factor = factor_or(1.0);
    y.original_max_position_embeddings =
        detail::gguf_positive(metadata, r + "scaling.original_context_length");
    y.beta_fast = detail::gguf_optional_positive(metadata, r + "scaling.yarn_beta_fast")
                      .value_or(y.beta_fast);
    y.beta_slow = detail::gguf_optional_positive(metadata, r + "scaling.yarn_beta_slow")
                      .value_or(y.beta_slow);
    if (const auto log_multiplier =
            detail::gguf_optional_positive(metadata, r + "scaling.yarn_log_multiplier")) {
      // DeepSeek: the converter writes 0.1·mscale_all_dim; their checkpoints have
      // mscale = mscale_all_dim, which makes HuggingFace's factor on cos and sin 1.
      y.mscale = *log_multiplier / 0.1;
      y.mscale_all_dim = *log_multiplier / 0.1;
    } else if (const auto attn_factor =
                   detail::gguf_optional_positive(metadata, r + "scaling.attn_factor")) {
      // ggml multiplies its attn_factor by 1 + 0.1·ln(factor) itself (docs/scaling.md).
      y.attention_factor = *attn_factor * detail::yarn_mscale(y.factor);
    }
    if (!tensors.rope_freqs.empty()) gguf_error("YaRN with a rope_freqs tensor: no single scheme");
    o.scaling = y;
  } else if (type == "longrope") {
    LongRope l;
    per_pair(tensors.rope_factors_long, "rope_factors_long");
    per_pair(tensors.rope_factors_short, "rope_factors_short");
    l.long_factor = tensors.rope_factors_long;
    l.short_factor = tensors.rope_factors_short;
    l.original_max_position_embeddings =
        detail::gguf_positive(metadata, r + "scaling.original_context_length");
    l.attention_factor = detail::gguf_optional_positive(metadata, r + "scaling.attn_factor");
    l.max_position_embeddings = detail::gguf_optional_positive(metadata, a + "context_length")
                                    .value_or(l.max_position_embeddings);
    o.scaling = l;
  } else {
    gguf_error(r + "scaling.type \"" + type +
               "\" is not a RoPE type this reader knows (none, linear, yarn, longrope)");
  }

  // M-RoPE: dimension_sections (4 values, in pairs); Qwen3-VL's interleaved form.
  if (const GgufValue* s = detail::gguf_find(metadata, r + "dimension_sections")) {
    const auto* values = std::get_if<std::vector<double>>(s);
    if (values == nullptr || values->size() != 4) {
      gguf_error(r + "dimension_sections must be an array of 4 numbers");
    }
    std::vector<std::size_t> sections;
    std::size_t total = 0;
    for (std::size_t i = 0; i < 3; ++i) {
      const double v = (*values)[i];
      if (!(v >= 0 && v == std::floor(v) && v <= 1e15)) {
        gguf_error(r + "dimension_sections must hold integers >= 0");
      }
      sections.push_back(static_cast<std::size_t>(v));
      total += sections.back();
    }
    if ((*values)[3] != 0) {
      gguf_error(r + "dimension_sections has a 4th section of " + std::to_string((*values)[3]) +
                 " pairs, which HuggingFace's M-RoPE does not have");
    }
    if (total != d / 2) {
      gguf_error(r + "dimension_sections adds up to " + std::to_string(total) +
                 " pairs but the rotary dimension " + std::to_string(d) + " has " +
                 std::to_string(d / 2));
    }
    const bool interleaved = out.architecture == "qwen3vl" || out.architecture == "qwen3vlmoe";
    o.axes = interleaved ? Axes::mrope_interleaved(sections) : Axes::sections(sections);
  }
  return out;
}

}  // namespace ROPE_DETAIL_ISA
}  // namespace rope

#endif  // !ROPE_BELOW_CXX17
