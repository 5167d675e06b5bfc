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

/// The Options of a layer type ("full_attention", or "sliding_attention" for the sliding-window
/// layers: attention.key_length_swa, rope.dimension_count_swa and rope.freq_base_swa, unscaled)
/// of a model's GGUF metadata. `sequence_length` becomes Options::sequence_length.
///
/// Throws std::invalid_argument naming the key for a rope key it does not understand, an
/// unknown scaling type, a missing key, a value of the wrong type or out of range, an
/// architecture without RoPE or not in the table (E64), or tensors of the wrong length.
GgufRope gguf_rope(const GgufMetadata& metadata, const GgufTensors& tensors = {},
                   const std::string& layer_type = "full_attention", double sequence_length = 0);

/// How ggml rotates an architecture's q and k: llama.cpp's llama_model_rope_type.
enum class GgufRotation : unsigned char {
  none,             ///< LLAMA_ROPE_TYPE_NONE: no RoPE
  normal,           ///< LLAMA_ROPE_TYPE_NORM: pairs (2i, 2i+1)
  neox,             ///< LLAMA_ROPE_TYPE_NEOX: pairs (i, i + n_rot/2)
  mrope,            ///< LLAMA_ROPE_TYPE_MROPE: neox pairs, sections of the position's axes
  imrope,           ///< LLAMA_ROPE_TYPE_IMROPE: neox pairs, axes interleaved (Qwen3-VL)
  mrope_or_normal,  ///< MROPE when rope.dimension_sections is present, else NORM (glm4)
  mrope_or_neox,    ///< MROPE when rope.dimension_sections is present, else NEOX
  unimplemented,    ///< listed as NONE because llama.cpp has no implementation (gptj)
};

/// One row of the architecture table: general.architecture and its rotation.
struct GgufArchitecture {
  const char* name;
  GgufRotation rotation;
};

/// The row of an architecture, or nullptr.
const GgufArchitecture* gguf_architecture(const std::string& name) noexcept;

/// The pair layout of ggml's rope mode for an architecture: interleaved for "normal", half_split
/// for "neox" and M-RoPE; `sections` says whether rope.dimension_sections is present (for the
/// architectures whose mode depends on it). GGUF conversion permutes the q/k weights of
/// LLaMA-style checkpoints so that "normal" rotates them as HuggingFace does. Throws
/// std::invalid_argument (E64) for an architecture not in the table or without RoPE.
Layout gguf_layout(const std::string& architecture, bool sections = false);

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
    gguf_error(key + " " + detail::number(x) + " must be a finite number > 0");
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
    gguf_error(key + " " + detail::number(x) + " must be an integer > 0");
  }
  return static_cast<std::size_t>(x);
}

}  // namespace detail

namespace detail {

// llama.cpp's llama_model_rope_type (src/llama-model.cpp), with each llm_arch under its name of
// LLM_ARCH_NAMES (src/llama-arch.cpp): every architecture of both as of 2026.
// clang-format off
inline constexpr GgufArchitecture kGgufArchitectures[] = {
    {"afmoe", GgufRotation::neox}, {"apertus", GgufRotation::neox}, {"arcee", GgufRotation::normal},
    {"arctic", GgufRotation::normal}, {"arwkv7", GgufRotation::none}, {"baichuan", GgufRotation::normal},
    {"bailingmoe", GgufRotation::normal}, {"bailingmoe2", GgufRotation::neox}, {"bert", GgufRotation::neox},
    {"bitnet", GgufRotation::neox}, {"bloom", GgufRotation::none}, {"chameleon", GgufRotation::normal},
    {"chatglm", GgufRotation::normal}, {"clip", GgufRotation::none}, {"codeshell", GgufRotation::neox},
    {"cogvlm", GgufRotation::neox}, {"cohere2", GgufRotation::normal}, {"cohere2moe", GgufRotation::normal},
    {"command-r", GgufRotation::normal}, {"dbrx", GgufRotation::neox}, {"deci", GgufRotation::normal},
    {"deepseek", GgufRotation::normal}, {"deepseek2", GgufRotation::normal},
    {"deepseek2-ocr", GgufRotation::normal}, {"deepseek32", GgufRotation::normal},
    {"deepseek4", GgufRotation::normal}, {"dots1", GgufRotation::neox}, {"dream", GgufRotation::neox},
    {"eagle3", GgufRotation::normal}, {"ernie4_5", GgufRotation::normal},
    {"ernie4_5-moe", GgufRotation::normal}, {"eurobert", GgufRotation::neox},
    {"exaone", GgufRotation::neox}, {"exaone-moe", GgufRotation::neox}, {"exaone4", GgufRotation::neox},
    {"falcon", GgufRotation::neox}, {"falcon-h1", GgufRotation::neox}, {"gemma", GgufRotation::neox},
    {"gemma-embedding", GgufRotation::neox}, {"gemma2", GgufRotation::neox},
    {"gemma3", GgufRotation::neox}, {"gemma3n", GgufRotation::neox}, {"gemma4", GgufRotation::neox},
    {"gemma4-assistant", GgufRotation::neox}, {"glm-dsa", GgufRotation::normal},
    {"glm4", GgufRotation::mrope_or_normal}, {"glm4moe", GgufRotation::mrope_or_neox},
    {"gpt-oss", GgufRotation::neox}, {"gpt2", GgufRotation::none}, {"gptj", GgufRotation::unimplemented},
    {"gptneox", GgufRotation::neox}, {"granite", GgufRotation::normal},
    {"granitehybrid", GgufRotation::normal}, {"granitemoe", GgufRotation::normal},
    {"grok", GgufRotation::neox}, {"grovemoe", GgufRotation::neox},
    {"hunyuan-dense", GgufRotation::neox}, {"hunyuan-moe", GgufRotation::neox},
    {"hunyuan_vl", GgufRotation::mrope_or_neox}, {"hy_v3", GgufRotation::neox},
    {"internlm2", GgufRotation::normal}, {"jais", GgufRotation::none}, {"jais2", GgufRotation::neox},
    {"jamba", GgufRotation::none}, {"jina-bert-v2", GgufRotation::none},
    {"jina-bert-v3", GgufRotation::neox}, {"kimi-linear", GgufRotation::none},
    {"laguna", GgufRotation::neox}, {"lfm2", GgufRotation::neox}, {"lfm2moe", GgufRotation::neox},
    {"llada", GgufRotation::normal}, {"llada-moe", GgufRotation::neox}, {"llama", GgufRotation::normal},
    {"llama-embed", GgufRotation::normal}, {"llama4", GgufRotation::normal},
    {"maincoder", GgufRotation::normal}, {"mamba", GgufRotation::none}, {"mamba2", GgufRotation::none},
    {"mellum", GgufRotation::neox}, {"mimo2", GgufRotation::neox}, {"minicpm", GgufRotation::normal},
    {"minicpm3", GgufRotation::neox}, {"minimax-m2", GgufRotation::neox},
    {"mistral3", GgufRotation::normal}, {"mistral4", GgufRotation::normal},
    {"modern-bert", GgufRotation::neox}, {"mpt", GgufRotation::none}, {"nemotron", GgufRotation::neox},
    {"nemotron_h", GgufRotation::none}, {"nemotron_h_moe", GgufRotation::none},
    {"neo-bert", GgufRotation::normal}, {"nomic-bert", GgufRotation::neox},
    {"nomic-bert-moe", GgufRotation::neox}, {"olmo", GgufRotation::normal}, {"olmo2", GgufRotation::neox},
    {"olmoe", GgufRotation::neox}, {"openelm", GgufRotation::neox}, {"orion", GgufRotation::neox},
    {"paddleocr", GgufRotation::mrope}, {"pangu-embedded", GgufRotation::neox},
    {"phi2", GgufRotation::neox}, {"phi3", GgufRotation::neox}, {"phimoe", GgufRotation::neox},
    {"plamo", GgufRotation::neox}, {"plamo2", GgufRotation::neox}, {"plamo3", GgufRotation::neox},
    {"plm", GgufRotation::normal}, {"qwen", GgufRotation::neox}, {"qwen2", GgufRotation::neox},
    {"qwen2moe", GgufRotation::neox}, {"qwen2vl", GgufRotation::mrope}, {"qwen3", GgufRotation::neox},
    {"qwen35", GgufRotation::imrope}, {"qwen35moe", GgufRotation::imrope},
    {"qwen3moe", GgufRotation::neox}, {"qwen3next", GgufRotation::neox},
    {"qwen3vl", GgufRotation::imrope}, {"qwen3vlmoe", GgufRotation::imrope},
    {"refact", GgufRotation::none}, {"rnd1", GgufRotation::neox}, {"rwkv6", GgufRotation::none},
    {"rwkv6qwen2", GgufRotation::none}, {"rwkv7", GgufRotation::none}, {"seed_oss", GgufRotation::neox},
    {"smallthinker", GgufRotation::neox}, {"smollm3", GgufRotation::normal},
    {"stablelm", GgufRotation::neox}, {"starcoder", GgufRotation::normal},
    {"starcoder2", GgufRotation::neox}, {"step35", GgufRotation::neox}, {"t5", GgufRotation::none},
    {"t5encoder", GgufRotation::none}, {"talkie", GgufRotation::neox},
    {"wavtokenizer-dec", GgufRotation::none}, {"xverse", GgufRotation::normal},
};
// clang-format on

// What rotates: none, or the layout with whether M-RoPE sections apply.
struct GgufMode {
  bool rope;
  Layout layout;
  bool mrope;        // rope.dimension_sections are M-RoPE sections
  bool interleaved;  // IMROPE: the axes interleaved over the pairs
};

inline GgufMode gguf_mode(const std::string& architecture, bool sections) {
  const GgufArchitecture* row = gguf_architecture(architecture);
  if (row == nullptr) {
    gguf_error("general.architecture \"" + architecture +
               "\" has no entry in the table of ggml rope modes (llama.cpp's "
               "llama_model_rope_type; docs/scaling.md): build the Options by hand");
  }
  switch (row->rotation) {
    case GgufRotation::none:
      gguf_error("general.architecture \"" + architecture +
                 "\" has no RoPE (llama.cpp's llama_model_rope_type: LLAMA_ROPE_TYPE_NONE)");
    case GgufRotation::unimplemented:
      gguf_error("general.architecture \"" + architecture +
                 "\" is LLAMA_ROPE_TYPE_NONE in llama.cpp, which does not implement it; the "
                 "model rotates (GPT-J: interleaved, rotary_dim): build the Options by hand");
    case GgufRotation::normal:
      return {true, Layout::interleaved, false, false};
    case GgufRotation::neox:
      return {true, Layout::half_split, false, false};
    case GgufRotation::mrope:
      return {true, Layout::half_split, true, false};
    case GgufRotation::imrope:
      return {true, Layout::half_split, true, true};
    case GgufRotation::mrope_or_normal:
      return sections ? GgufMode{true, Layout::half_split, true, false}
                      : GgufMode{true, Layout::interleaved, false, false};
    case GgufRotation::mrope_or_neox:
      return {true, Layout::half_split, sections, false};
  }
  gguf_error("general.architecture \"" + architecture + "\": unknown rotation");
}

}  // namespace detail

inline const GgufArchitecture* gguf_architecture(const std::string& name) noexcept {
  for (const GgufArchitecture& row : detail::kGgufArchitectures) {
    if (name == row.name) return &row;
  }
  return nullptr;
}

inline Layout gguf_layout(const std::string& architecture, bool sections) {
  return detail::gguf_mode(architecture, sections).layout;
}

namespace detail {

// The keys under <arch>.rope. the reader understands.
inline constexpr const char* kGgufRopeKeys[] = {"freq_base",
                                                "freq_base_swa",
                                                "dimension_count",
                                                "dimension_count_swa",
                                                "dimension_sections",
                                                "scale_linear",
                                                "scaling.type",
                                                "scaling.factor",
                                                "scaling.original_context_length",
                                                "scaling.attn_factor",
                                                "scaling.alpha",
                                                "scaling.yarn_log_multiplier",
                                                "scaling.yarn_beta_fast",
                                                "scaling.yarn_beta_slow",
                                                "scaling.yarn_ext_factor",
                                                "scaling.yarn_attn_factor",
                                                "scaling.finetuned"};

// Whether gguf_rope reads `key` of an architecture's metadata: general.architecture, every
// <arch>.rope. key (an unknown one to reject it) and the keys of the head size (gguf_head).
inline bool gguf_rope_reads(const std::string& architecture, const std::string& key) {
  const std::string a = architecture + ".";
  if (key.compare(0, a.size(), a) != 0) return key == "general.architecture";
  const std::string k = key.substr(a.size());
  return k.compare(0, 5, "rope.") == 0 || k == "attention.key_length" ||
         k == "attention.key_length_swa" || k == "embedding_length" || k == "attention.head_count";
}

// Head size and rotated dimension of a layer type: attention.key_length(_swa), else
// embedding_length / attention.head_count; rope.dimension_count(_swa), ggml's n_rot, from
// coordinate 0; the _swa keys fall back to the full layers' as llama.cpp's do.
inline void gguf_head(const GgufMetadata& m, const std::string& a, bool sliding, Options& o) {
  const std::string key = a + "attention.key_length", rot = a + "rope.dimension_count";
  const std::string key_swa = key + "_swa", rot_swa = rot + "_swa";
  if (sliding && gguf_find(m, key_swa) != nullptr) {
    o.head_size = gguf_count(m, key_swa);
  } else if (gguf_find(m, key) != nullptr) {
    o.head_size = gguf_count(m, key);
  } else if (gguf_find(m, a + "embedding_length") != nullptr &&
             gguf_find(m, a + "attention.head_count") != nullptr) {
    const std::size_t embedding = gguf_count(m, a + "embedding_length");
    const std::size_t heads = gguf_count(m, a + "attention.head_count");
    if (embedding % heads != 0) {
      gguf_error(a + "embedding_length " + std::to_string(embedding) + " is not a multiple of " +
                 a + "attention.head_count " + std::to_string(heads));
    }
    o.head_size = embedding / heads;
  } else {
    gguf_error("no head size: " + key + ", or " + a + "embedding_length and " + a +
               "attention.head_count, is required");
  }
  const std::string& n_rot_key = sliding && gguf_find(m, rot_swa) != nullptr ? rot_swa : rot;
  if (gguf_find(m, n_rot_key) != nullptr) {
    const std::size_t n_rot = gguf_count(m, n_rot_key);
    if (n_rot > o.head_size || n_rot % 2 != 0) {
      gguf_error(n_rot_key + " " + std::to_string(n_rot) +
                 " must be even and at most the head size " + std::to_string(o.head_size));
    }
    o.rotary_dim = n_rot == o.head_size ? 0 : n_rot;
  }
  if (o.head_size % 2 != 0) {
    gguf_error("the head size " + std::to_string(o.head_size) + " is odd: RoPE rotates pairs");
  }
}

// M-RoPE: dimension_sections (4 values, in pairs), laid out as the architecture's mode says.
inline Axes gguf_sections(const GgufValue& value, const std::string& key, std::size_t d,
                          bool interleaved) {
  const auto* values = std::get_if<std::vector<double>>(&value);
  if (values == nullptr || values->size() != 4) {
    gguf_error(key + " must be an array of 4 numbers");
  }
  std::vector<std::size_t> sections;
  std::size_t total = 0;
  for (std::size_t i = 0; i < 3; ++i) {
    const double v = (*values)[i];
    if (!(v >= 0 && v == std::floor(v) && v <= 1e15)) {
      gguf_error(key + " must hold integers >= 0");
    }
    sections.push_back(static_cast<std::size_t>(v));
    total += sections.back();
  }
  if ((*values)[3] != 0) {
    gguf_error(key + " has a 4th section of " + std::to_string((*values)[3]) +
               " pairs, which HuggingFace's M-RoPE does not have");
  }
  if (total != d / 2) {
    gguf_error(key + " adds up to " + std::to_string(total) + " pairs but the rotary dimension " +
               std::to_string(d) + " has " + std::to_string(d / 2));
  }
  return interleaved ? Axes::mrope_interleaved(sections) : Axes::sections(sections);
}

}  // namespace detail

inline GgufRope gguf_rope(const GgufMetadata& metadata, const GgufTensors& tensors,
                          const std::string& layer_type, double sequence_length) {
  using detail::gguf_error;
  GgufRope out;
  const GgufValue* arch = detail::gguf_find(metadata, "general.architecture");
  if (arch == nullptr || !std::holds_alternative<std::string>(*arch)) {
    gguf_error("general.architecture (a string) is required");
  }
  if (layer_type != "full_attention" && layer_type != "sliding_attention") {
    gguf_error("layer type \"" + layer_type +
               "\" is neither \"full_attention\" nor \"sliding_attention\"");
  }
  const bool sliding = layer_type == "sliding_attention";
  out.architecture = std::get<std::string>(*arch);
  const std::string a = out.architecture + ".";
  const std::string r = a + "rope.";

  // Every key under <arch>.rope. must be one this reader understands.
  for (const auto& item : metadata) {
    if (item.first.compare(0, r.size(), r) != 0) continue;
    bool understood = false;
    for (const char* k : detail::kGgufRopeKeys) understood = understood || item.first == r + k;
    if (!understood) gguf_error(item.first + " is not a key this reader understands");
  }

  const GgufValue* sections = detail::gguf_find(metadata, r + "dimension_sections");
  const detail::GgufMode mode = detail::gguf_mode(out.architecture, sections != nullptr);
  Options& o = out.options;
  o.sequence_length = sequence_length;
  o.layout = mode.layout;
  out.layout_source = "ggml's rope mode for " + out.architecture + " (llama_model_rope_type)";
  detail::gguf_head(metadata, a, sliding, o);
  const std::size_t d = o.rotary_dim != 0 ? o.rotary_dim : o.head_size;

  const std::optional<double> swa_base =
      detail::gguf_optional_positive(metadata, r + "freq_base_swa");
  const bool sliding_base = sliding && swa_base.has_value();
  o.base = sliding_base
               ? *swa_base
               : detail::gguf_optional_positive(metadata, r + "freq_base").value_or(10000.0);
  // HunYuan's NTK alpha (llama.cpp's rope_scaling_alpha, written with the unscaled base):
  // base·α^(h/(h−2)), h the head size, as HuggingFace's HunYuan rotary embedding computes it.
  if (const auto alpha = detail::gguf_optional_positive(metadata, r + "scaling.alpha")) {
    const double h = static_cast<double>(o.head_size);
    o.base *= std::pow(*alpha, h / (h - 2));
  }

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
  const auto value_or = [&](const char* key, double fallback) {
    return detail::gguf_find(metadata, r + key) != nullptr ? detail::gguf_number(metadata, r + key)
                                                           : fallback;
  };
  // ggml's YaRN blend: ext_factor 1 is HuggingFace's YaRN, 0 its plain interpolation; other
  // blends, and a yarn_attn_factor other than 1, have no HuggingFace scheme.
  const double ext_factor = value_or("scaling.yarn_ext_factor", 1.0);
  if (value_or("scaling.yarn_attn_factor", 1.0) != 1.0) {
    gguf_error(r + "scaling.yarn_attn_factor " +
               std::to_string(value_or("scaling.yarn_attn_factor", 1.0)) +
               " is not 1: no HuggingFace scheme scales YaRN's attention factor by it");
  }
  if (type == "yarn" && ext_factor != 0.0 && ext_factor != 1.0) {
    gguf_error(r + "scaling.yarn_ext_factor " + std::to_string(ext_factor) +
               " is neither 1 (YaRN) nor 0 (linear interpolation): no HuggingFace scheme blends "
               "between them");
  }
  // Keys that only YaRN or LongRoPE read: with another type they would be dropped silently.
  const bool yarn_or_longrope = type == "yarn" || type == "longrope";
  if (!yarn_or_longrope && !sliding_base) {
    if (value_or("scaling.attn_factor", 1.0) != 1.0) {
      gguf_error(r + "scaling.attn_factor is not a key this reader understands for " +
                 "rope.scaling.type \"" + type + "\": no HuggingFace scheme scales cos and sin " +
                 "without YaRN or LongRoPE");
    }
    for (const char* k : {"scaling.yarn_log_multiplier", "scaling.yarn_beta_fast",
                          "scaling.yarn_beta_slow", "scaling.yarn_ext_factor"}) {
      if (detail::gguf_find(metadata, r + k) != nullptr) {
        gguf_error(r + k + " is not a key this reader understands for rope.scaling.type \"" + type +
                   "\"");
      }
    }
  }
  if (sliding_base) {
    // Sliding-window layers rotate unscaled with their own base (llama.cpp: scale 1).
  } else if (type == "none" || type == "linear" || (type == "yarn" && ext_factor == 0.0)) {
    // θ_j / factor, and with ggml's freq_factors θ_j / (ff_j · factor): one FrequencyFactors.
    if (type == "yarn" &&
        (value_or("scaling.attn_factor", 1.0) != 1.0 ||
         detail::gguf_find(metadata, r + "scaling.yarn_log_multiplier") != nullptr)) {
      gguf_error(r +
                 "scaling.yarn_ext_factor 0 makes YaRN a linear interpolation, which scales "
                 "neither cos nor sin: attn_factor and yarn_log_multiplier do not apply");
    }
    const double f = factor_or(1.0);
    if (!tensors.rope_freqs.empty()) {
      per_pair(tensors.rope_freqs, "rope_freqs");
      std::vector<double> factors = tensors.rope_freqs;
      for (double& x : factors) x *= f;
      o.scaling = FrequencyFactors{factors};
    } else if (f != 1.0 || type != "none") {
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

  if (sections != nullptr) {
    if (!mode.mrope) {
      gguf_error(r + "dimension_sections is present, but " + out.architecture +
                 " does not rotate by M-RoPE in llama.cpp (llama_model_rope_type)");
    }
    o.axes = detail::gguf_sections(*sections, r + "dimension_sections", d, mode.interleaved);
  }
  return out;
}

}  // namespace ROPE_DETAIL_ISA
}  // namespace rope

#endif  // !ROPE_BELOW_CXX17
