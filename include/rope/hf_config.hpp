// rope::hf_rope: the Options of one layer type of a checkpoint, read from its HuggingFace
// config.json. The only header that needs nlohmann/json; <rope/rope.hpp> does not include it.
//
// The keys and their precedence follow transformers' RotaryEmbeddingConfigMixin and each
// model's rotary embedding (docs/scaling.md, "Reading config.json", lists them with the traps).
// A key of the RoPE part of a config (rope_scaling / rope_parameters) that this reader does not
// understand is an error that names it, never ignored.
#pragma once

#include <rope/config.hpp>
#if !defined(ROPE_BELOW_CXX17)  // config.hpp stops older standards with one #error

#include <cmath>
#include <cstddef>
#include <fstream>
#include <iterator>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <rope/layout.hpp>
#include <rope/options.hpp>
#include <rope/query_scale.hpp>

#include <nlohmann/json.hpp>

namespace rope {
inline namespace ROPE_DETAIL_ISA {

/// What hf_rope read for one layer type.
struct HfRope {
  /// head_size, base, layout, scaling, sequence_length, rotary_dim and axes of the layer;
  /// max_positions and the other fields keep their defaults.
  Options options;
  /// The config's model_type (of text_config when nested), which chose the layout.
  std::string model_type;
  /// HuggingFace's rope_type after standardisation: default, linear, dynamic, yarn, longrope,
  /// llama3 or proportional ("mrope" reads as default, "su" as longrope).
  std::string rope_type;
  /// Why options.layout is what it is: the entry of the layout table (docs/scaling.md).
  std::string layout_source;
  /// max_position_embeddings, or 0 if the config has none.
  double max_position_embeddings = 0;
  /// The queries' position-dependent scale after RoPE, where the RoPE dictionary has
  /// llama_4_scaling_beta (Ministral 3): Llama4Scaling with its original_max_position_embeddings.
  /// Pass it to Rotary::apply_qk(q, k, positions, *query_scale).
  std::optional<QueryScale> query_scale;
};

/// The RoPE of layer type `layer_type` ("full_attention", "sliding_attention", ...) of a parsed
/// config.json; `sequence_length` becomes Options::sequence_length (DynamicNTK and LongRope
/// depend on it; 0 reads as HuggingFace's seq_len None).
///
/// Throws std::invalid_argument naming the key for a key of the RoPE part it does not
/// understand, an unknown rope_type, a missing required key, a value of the wrong type, a
/// factor or length that is not finite and > 0, or a layer type the config does not have.
HfRope hf_rope(const nlohmann::json& config, const std::string& layer_type = "full_attention",
               double sequence_length = 0);

/// hf_rope of the config.json at `path`. Throws std::invalid_argument if the file cannot be
/// read or is not JSON, and as hf_rope.
HfRope hf_rope_file(const std::string& path, const std::string& layer_type = "full_attention",
                    double sequence_length = 0);

/// The layer types with RoPE of a config, in order of first appearance: its layer_types
/// (without linear_attention and other layers that are not attention), else the keys of a
/// per-layer-type rope_parameters, else sliding_attention and full_attention for a config with
/// rope_local_base_freq (Gemma 3), else full_attention. Llama 4's NoPE layers (no_rope_layers)
/// are full_attention layers that the engine leaves unrotated.
std::vector<std::string> hf_layer_types(const nlohmann::json& config);

/// The query scale of Llama 4's layers without RoPE (its no_rope_layers): Llama4Temperature
/// {floor_scale, attn_scale} when attn_temperature_tuning is true (HuggingFace's default for
/// model_type llama4 and llama4_text when the key is absent; floor_scale 8192 and attn_scale 0.1
/// likewise), else none. Pass it to rope::scale_queries for those layers. Throws
/// std::invalid_argument for a value of the wrong type or a floor_scale not finite and > 0 (E59).
std::optional<QueryScale> hf_nope_query_scale(const nlohmann::json& config);

/// The pair layout a checkpoint's q/k projection weights expect, by model_type, and its source
/// (half_split, "HuggingFace rotate_half", unless the architecture is listed otherwise).
struct HfLayout {
  Layout layout;
  std::string source;
};
HfLayout hf_layout(const std::string& model_type);

// ---- implementation ----------------------------------------------------------------------------

namespace detail {

using Json = nlohmann::json;

[[noreturn]] inline void config_error(const std::string& what) {
  throw std::invalid_argument("rope: config.json: " + what);
}

// The text model's keys: text_config when nested (vision-language models), else the config.
// A key absent there is looked up at the top level (Qwen2-VL keeps rope_scaling at the top).
struct ConfigKeys {
  const Json& root;
  const Json& text;

  explicit ConfigKeys(const Json& config)
      : root(config),
        text(config.contains("text_config") && config["text_config"].is_object()
                 ? config["text_config"]
                 : config) {}

  // The value of a key, null if absent (or null) in both.
  const Json& at(const char* key) const {
    static const Json null;
    if (in_text(key)) return text[key];
    if (root.contains(key) && !root[key].is_null()) return root[key];
    return null;
  }

  // Where at(key) found it, for messages: text_config.key or key.
  std::string path(const char* key) const {
    return &text != &root && in_text(key) ? std::string("text_config.") + key : std::string(key);
  }

 private:
  bool in_text(const char* key) const { return text.contains(key) && !text[key].is_null(); }
};

// The number v of the key `name` (its path in the config).
inline double number_of(const Json& v, const std::string& name) {
  if (!v.is_number()) config_error(name + " must be a number, got " + v.dump());
  return v.get<double>();
}

inline double positive_of(const Json& v, const std::string& name) {
  const double x = number_of(v, name);
  if (!(x > 0.0) || !std::isfinite(x)) {
    config_error(name + " " + v.dump() + " must be a finite number > 0");
  }
  return x;
}

inline double number_at(const Json& object, const std::string& key, const std::string& where) {
  if (!object.contains(key)) config_error(where + key + " is required");
  return number_of(object[key], where + key);
}

inline double positive_at(const Json& object, const std::string& key, const std::string& where) {
  if (!object.contains(key)) config_error(where + key + " is required");
  return positive_of(object[key], where + key);
}

inline std::optional<double> optional_number(const Json& object, const std::string& key,
                                             const std::string& where) {
  if (!object.contains(key) || object[key].is_null()) return std::nullopt;
  return number_at(object, key, where);
}

inline std::vector<double> numbers_at(const Json& object, const std::string& key,
                                      const std::string& where) {
  if (!object.contains(key) || object[key].is_null()) {
    config_error(where + key + " is required");
  }
  const Json& v = object[key];
  if (!v.is_array()) config_error(where + key + " must be a list of numbers");
  std::vector<double> out;
  for (const Json& x : v) {
    if (!x.is_number()) config_error(where + key + " must be a list of numbers, got " + x.dump());
    out.push_back(x.get<double>());
  }
  return out;
}

// The keys each rope_type reads, besides rope_type/type, rope_theta, partial_rotary_factor and
// the M-RoPE keys.
inline const std::vector<std::string>& scheme_keys(const std::string& rope_type) {
  static const std::vector<std::string> none{}, linear{"factor"}, dynamic{"factor"},
      yarn{"factor",
           "original_max_position_embeddings",
           "beta_fast",
           "beta_slow",
           "mscale",
           "mscale_all_dim",
           "attention_factor",
           "truncate",
           "max_position_embeddings"},
      longrope{"short_factor", "long_factor", "factor", "attention_factor",
               "original_max_position_embeddings"},
      llama3{"factor", "low_freq_factor", "high_freq_factor", "original_max_position_embeddings"},
      proportional{"factor"};
  if (rope_type == "linear") return linear;
  if (rope_type == "dynamic") return dynamic;
  if (rope_type == "yarn") return yarn;
  if (rope_type == "longrope") return longrope;
  if (rope_type == "llama3") return llama3;
  if (rope_type == "proportional") return proportional;
  return none;
}

// Layer types without RoPE: linear attention (Qwen3-Next, Kimi Linear), state-space and
// convolution layers. hf_layer_types leaves them out; hf_rope rejects them.
inline bool has_rope(const std::string& layer_type) {
  return layer_type.find("attention") != std::string::npos &&
         layer_type.find("linear") == std::string::npos;
}

// A per-layer-type dictionary: some key is a layer type of the config holding an object.
inline bool per_layer(const Json& parameters, const std::vector<std::string>& types) {
  for (const std::string& t : types) {
    if (parameters.contains(t) && parameters[t].is_object()) return true;
  }
  return false;
}

}  // namespace detail

inline HfLayout hf_layout(const std::string& model_type) {
  struct Entry {
    const char* model_type;
    const char* source;
  };
  // Interleaved pairs (2i, 2i+1); every other architecture rotates half_split.
  static const Entry interleaved[] = {
      {"gptj", "HuggingFace GPT-J: rotate_every_two"},
      {"llama4", "HuggingFace Llama 4: apply_rotary_emb by complex multiplication"},
      {"llama4_text", "HuggingFace Llama 4: apply_rotary_emb by complex multiplication"},
      {"deepseek_v2", "HuggingFace DeepSeek-V2: apply_rotary_emb by complex multiplication"},
      {"deepseek_v3", "HuggingFace DeepSeek-V3: rope_interleave (default true)"},
      {"kimi_k2", "DeepSeek-V3 architecture: rope_interleave (default true)"},
      {"cohere", "HuggingFace Cohere: rotate_half of x[..., ::2] and x[..., 1::2]"},
      {"glm", "HuggingFace GLM: rotate_half_llm (interleaved)"},
      {"glm4", "HuggingFace GLM-4: rotate_half_llm (interleaved)"},
  };
  for (const Entry& e : interleaved) {
    if (model_type == e.model_type) return {Layout::interleaved, e.source};
  }
  return {Layout::half_split,
          "HuggingFace rotate_half: the default of every architecture not "
          "listed as interleaved"};
}

inline std::optional<QueryScale> hf_nope_query_scale(const nlohmann::json& config) {
  const detail::ConfigKeys keys(config);
  const nlohmann::json& type = keys.at("model_type");
  const bool llama4 = type.is_string() && (type.get<std::string>() == "llama4" ||
                                           type.get<std::string>() == "llama4_text");
  const nlohmann::json& tuning = keys.at("attn_temperature_tuning");
  if (!tuning.is_null() && !tuning.is_boolean()) {
    detail::config_error(keys.path("attn_temperature_tuning") + " must be true or false");
  }
  if (!(tuning.is_null() ? llama4 : tuning.get<bool>())) return std::nullopt;
  Llama4Temperature t;
  if (!keys.at("floor_scale").is_null()) {
    t.floor_scale = detail::positive_of(keys.at("floor_scale"), keys.path("floor_scale"));
  }
  if (!keys.at("attn_scale").is_null()) {
    t.attn_scale = detail::number_of(keys.at("attn_scale"), keys.path("attn_scale"));
    if (!std::isfinite(t.attn_scale)) {
      detail::config_error(keys.path("attn_scale") + " must be a finite number");
    }
  }
  return t;
}

inline std::vector<std::string> hf_layer_types(const nlohmann::json& config) {
  const detail::ConfigKeys keys(config);
  std::vector<std::string> types;
  const auto add = [&](const std::string& t) {
    for (const std::string& u : types) {
      if (u == t) return;
    }
    types.push_back(t);
  };
  const nlohmann::json& listed = keys.at("layer_types");
  if (listed.is_array()) {
    for (const nlohmann::json& t : listed) {
      if (!t.is_string()) detail::config_error("layer_types must be a list of strings");
      if (detail::has_rope(t.get<std::string>())) add(t.get<std::string>());
    }
    return types;
  }
  const nlohmann::json& parameters = keys.at("rope_parameters");
  if (parameters.is_object()) {
    for (const auto& item : parameters.items()) {
      if (item.value().is_object()) add(item.key());
    }
    if (!types.empty()) return types;
  }
  if (!keys.at("rope_local_base_freq").is_null()) return {"sliding_attention", "full_attention"};
  return {"full_attention"};
}

inline HfRope hf_rope(const nlohmann::json& config, const std::string& layer_type,
                      double sequence_length) {
  using detail::config_error;
  using Json = nlohmann::json;
  if (!config.is_object()) config_error("the config must be a JSON object");
  const detail::ConfigKeys keys(config);
  const std::vector<std::string> types = hf_layer_types(config);
  bool known_type = false;
  for (const std::string& t : types) known_type = known_type || t == layer_type;
  if (!detail::has_rope(layer_type)) {
    config_error("layer type \"" + layer_type + "\" has no RoPE");
  }
  if (!known_type) {
    std::string list;
    for (const std::string& t : types) list += (list.empty() ? "" : ", ") + t;
    config_error("layer type \"" + layer_type + "\" is not one of the config's (" + list + ")");
  }

  HfRope out;
  const Json& model_type = keys.at("model_type");
  out.model_type = model_type.is_string() ? model_type.get<std::string>() : "";
  if (keys.at("max_position_embeddings").is_number()) {
    out.max_position_embeddings = keys.at("max_position_embeddings").get<double>();
  }
  Options& o = out.options;
  o.sequence_length = sequence_length;

  // Head size: global_head_dim (full-attention layers), qk_rope_head_dim (MLA: the rotated part
  // of q and k), head_dim, hidden_size / num_attention_heads (n_embd / n_head for GPT-J).
  const auto count_at = [&](const char* key) -> std::size_t {
    const Json& v = keys.at(key);
    if (!v.is_number_integer() || v.get<long long>() <= 0) {
      config_error(keys.path(key) + " " + v.dump() + " must be an integer > 0");
    }
    return static_cast<std::size_t>(v.get<long long>());
  };
  const auto has = [&](const char* key) { return !keys.at(key).is_null(); };
  std::string head_key;
  if (layer_type == "full_attention" && has("global_head_dim")) {
    head_key = "global_head_dim";
  } else if (has("qk_rope_head_dim")) {
    head_key = "qk_rope_head_dim";
  } else if (has("head_dim")) {
    head_key = "head_dim";
  }
  if (!head_key.empty()) {
    o.head_size = count_at(head_key.c_str());
  } else if (has("hidden_size") && has("num_attention_heads")) {
    o.head_size = count_at("hidden_size") / count_at("num_attention_heads");
  } else if (has("n_embd") && has("n_head")) {
    o.head_size = count_at("n_embd") / count_at("n_head");
  } else {
    config_error("no head size: head_dim, or hidden_size and num_attention_heads, is required");
  }

  // The RoPE parameters of this layer type: rope_parameters (transformers 5) or rope_scaling,
  // flat or keyed by layer type. Gemma 3's flat rope_scaling is for its full-attention layers;
  // its sliding layers rotate unscaled with rope_local_base_freq.
  const bool rope_parameters = keys.at("rope_parameters").is_object();
  const char* const dict_key = rope_parameters ? "rope_parameters" : "rope_scaling";
  const std::string dict_name = keys.path(dict_key);
  Json parameters = keys.at(dict_key);
  if (!parameters.is_null() && !parameters.is_object()) {
    config_error(dict_name + " must be an object or null");
  }
  if (parameters.is_null()) parameters = Json::object();
  std::string where = dict_name + ".";
  const bool gemma3_sliding = layer_type == "sliding_attention" && has("rope_local_base_freq");
  if (detail::per_layer(parameters, types)) {
    for (const auto& item : parameters.items()) {
      const bool is_type = item.value().is_object();
      if (!is_type && !item.value().is_null()) {
        config_error(dict_name + " is keyed by layer type but also has key \"" + item.key() +
                     "\", which this reader does not understand");
      }
    }
    if (!parameters.contains(layer_type)) {
      config_error(dict_name + " has no entry for layer type \"" + layer_type + "\"");
    }
    parameters = Json(parameters[layer_type]);
    where = dict_name + "." + layer_type + ".";
  } else if (gemma3_sliding) {
    parameters = Json::object();
  }
  // Null values read as absent, as in HuggingFace.
  for (auto it = parameters.begin(); it != parameters.end();) {
    it = it.value().is_null() ? parameters.erase(it) : std::next(it);
  }

  // rope_type: "type" in older configs; Qwen2-VL's "mrope" is default RoPE on sections, Phi-3's
  // early "su" is longrope.
  std::string rope_type = "default", type_key = "rope_type";
  for (const char* key : {"rope_type", "type"}) {
    if (!parameters.contains(key)) continue;
    if (!parameters[key].is_string()) config_error(where + key + " must be a string");
    rope_type = parameters[key].get<std::string>();
    type_key = key;
    break;
  }
  if (rope_type == "mrope") rope_type = "default";
  if (rope_type == "su") rope_type = "longrope";
  static const char* const kTypes[] = {"default",  "linear", "dynamic",     "yarn",
                                       "longrope", "llama3", "proportional"};
  bool known = false;
  for (const char* t : kTypes) known = known || rope_type == t;
  if (!known) {
    config_error(where + type_key + " \"" + rope_type +
                 "\" is not a RoPE type this reader knows (default, linear, dynamic, yarn, "
                 "longrope, llama3, proportional)");
  }
  out.rope_type = rope_type;

  // Every key of the dictionary must be one this rope_type reads.
  for (const auto& item : parameters.items()) {
    const std::string& key = item.key();
    bool understood = key == "rope_type" || key == "type" || key == "rope_theta" ||
                      key == "partial_rotary_factor" || key == "mrope_section" ||
                      key == "mrope_interleaved" || key == "llama_4_scaling_beta";
    for (const std::string& k : detail::scheme_keys(rope_type)) understood = understood || key == k;
    if (!understood) {
      config_error(where + key + " is not a key this reader understands for rope_type \"" +
                   rope_type + "\"");
    }
  }

  // Base: the dictionary's rope_theta, rope_local_base_freq (Gemma 3's sliding layers), the
  // top-level rope_theta, GPT-NeoX's rotary_emb_base, else 10000.
  if (parameters.contains("rope_theta")) {
    o.base = detail::positive_at(parameters, "rope_theta", where);
  } else {
    const char* base_key = gemma3_sliding           ? "rope_local_base_freq"
                           : has("rope_theta")      ? "rope_theta"
                           : has("rotary_emb_base") ? "rotary_emb_base"
                                                    : nullptr;
    if (base_key != nullptr) o.base = detail::positive_of(keys.at(base_key), keys.path(base_key));
  }

  // Rotary dimension: partial_rotary_factor (with HuggingFace's int() truncation), rotary_pct
  // (GPT-NeoX), rotary_dim (GPT-J, MiniMax-M2); the whole head otherwise. The proportional type
  // rotates over the whole head and takes the factor itself.
  std::optional<double> partial;
  std::string partial_key;
  if (parameters.contains("partial_rotary_factor")) {
    partial = detail::number_at(parameters, "partial_rotary_factor", where);
    partial_key = where + "partial_rotary_factor";
  } else if (has("partial_rotary_factor")) {
    partial_key = keys.path("partial_rotary_factor");
    partial = detail::number_of(keys.at("partial_rotary_factor"), partial_key);
  } else if (has("rotary_pct")) {
    partial_key = keys.path("rotary_pct");
    partial = detail::number_of(keys.at("rotary_pct"), partial_key);
  }
  if (partial && !(*partial > 0.0 && *partial <= 1.0)) {
    config_error(partial_key + " " + std::to_string(*partial) + " must be in (0, 1]");
  }
  if (rope_type != "proportional") {
    if (partial) {
      o.rotary_dim = static_cast<std::size_t>(*partial * static_cast<double>(o.head_size));
      if (o.rotary_dim % 2 != 0 || o.rotary_dim == 0) {
        config_error(partial_key + " " + std::to_string(*partial) + " of the head size " +
                     std::to_string(o.head_size) + " gives an odd or zero rotary dimension " +
                     std::to_string(o.rotary_dim));
      }
    } else if (has("rotary_dim")) {
      o.rotary_dim = count_at("rotary_dim");
    }
  }
  const std::size_t d = o.rotary_dim != 0 ? o.rotary_dim : o.head_size;

  // The scheme.
  const auto length_at = [&](const char* key) -> double {
    if (parameters.contains(key)) return detail::positive_at(parameters, key, where);
    if (has(key)) return detail::positive_of(keys.at(key), keys.path(key));
    config_error(where + key + " is required for rope_type \"" + rope_type + "\"");
  };
  if (rope_type == "linear") {
    o.scaling = Linear{detail::positive_at(parameters, "factor", where)};
  } else if (rope_type == "dynamic") {
    o.scaling = DynamicNTK{detail::positive_at(parameters, "factor", where),
                           length_at("max_position_embeddings")};
  } else if (rope_type == "yarn") {
    Yarn y;
    // original_max_position_embeddings: the dictionary's, the top-level one, else
    // max_position_embeddings (transformers 4's fallback).
    if (!parameters.contains("original_max_position_embeddings") &&
        !has("original_max_position_embeddings") && !has("max_position_embeddings")) {
      config_error(where +
                   "original_max_position_embeddings (or max_position_embeddings) is "
                   "required for rope_type \"yarn\"");
    }
    y.original_max_position_embeddings = parameters.contains("original_max_position_embeddings") ||
                                                 has("original_max_position_embeddings")
                                             ? length_at("original_max_position_embeddings")
                                             : length_at("max_position_embeddings");
    // factor null (or absent): max_position_embeddings / original_max_position_embeddings.
    y.factor = parameters.contains("factor")
                   ? detail::positive_at(parameters, "factor", where)
                   : length_at("max_position_embeddings") / y.original_max_position_embeddings;
    // beta_fast, beta_slow: `or` defaults, so 0 reads as the default too.
    const std::optional<double> fast = detail::optional_number(parameters, "beta_fast", where);
    const std::optional<double> slow = detail::optional_number(parameters, "beta_slow", where);
    y.beta_fast = fast && *fast != 0 ? *fast : 32;
    y.beta_slow = slow && *slow != 0 ? *slow : 1;
    y.mscale = detail::optional_number(parameters, "mscale", where);
    y.mscale_all_dim = detail::optional_number(parameters, "mscale_all_dim", where);
    y.attention_factor = detail::optional_number(parameters, "attention_factor", where);
    if (parameters.contains("truncate")) {
      if (!parameters["truncate"].is_boolean())
        config_error(where + "truncate must be true or false");
      y.truncate = parameters["truncate"].get<bool>();
    }
    o.scaling = y;
  } else if (rope_type == "longrope") {
    LongRope l;
    l.short_factor = detail::numbers_at(parameters, "short_factor", where);
    l.long_factor = detail::numbers_at(parameters, "long_factor", where);
    l.original_max_position_embeddings = length_at("original_max_position_embeddings");
    if (has("max_position_embeddings"))
      l.max_position_embeddings = length_at("max_position_embeddings");
    l.factor = detail::optional_number(parameters, "factor", where);
    l.attention_factor = detail::optional_number(parameters, "attention_factor", where);
    if (l.short_factor.size() != d / 2 || l.long_factor.size() != d / 2) {
      config_error(where + (l.short_factor.size() != d / 2 ? "short_factor" : "long_factor") +
                   " has " +
                   std::to_string(l.short_factor.size() != d / 2 ? l.short_factor.size()
                                                                 : l.long_factor.size()) +
                   " values but the rotary dimension " + std::to_string(d) + " has " +
                   std::to_string(d / 2) + " pairs");
    }
    o.scaling = l;
  } else if (rope_type == "llama3") {
    o.scaling = Llama3{detail::positive_at(parameters, "factor", where),
                       detail::positive_at(parameters, "low_freq_factor", where),
                       detail::positive_at(parameters, "high_freq_factor", where),
                       length_at("original_max_position_embeddings")};
  } else if (rope_type == "proportional") {
    const double factor =
        parameters.contains("factor") ? detail::positive_at(parameters, "factor", where) : 1.0;
    o.scaling = Proportional{partial.value_or(1.0), factor};
  }

  // Ministral 3's query scale, 1 + llama_4_scaling_beta·ln(1 + ⌊p / L0⌋), L0 the
  // original_max_position_embeddings of the dictionary (or the top level).
  if (parameters.contains("llama_4_scaling_beta")) {
    const std::optional<double> beta =
        detail::optional_number(parameters, "llama_4_scaling_beta", where);
    if (beta) out.query_scale = Llama4Scaling{*beta, length_at("original_max_position_embeddings")};
  }

  // M-RoPE: mrope_section (in pairs), interleaved over the pairs if mrope_interleaved.
  const Json* section = nullptr;
  std::string section_key;
  if (parameters.contains("mrope_section")) {
    section = &parameters["mrope_section"];
    section_key = where + "mrope_section";
  } else if (has("mrope_section")) {
    section = &keys.at("mrope_section");
    section_key = keys.path("mrope_section");
  }
  if (section != nullptr) {
    std::vector<std::size_t> pairs;
    std::size_t total = 0;
    if (!section->is_array()) config_error(section_key + " must be a list of integers");
    for (const Json& s : *section) {
      if (!s.is_number_integer() || s.get<long long>() < 0) {
        config_error(section_key + " must be a list of integers >= 0, got " + s.dump());
      }
      pairs.push_back(static_cast<std::size_t>(s.get<long long>()));
      total += pairs.back();
    }
    if (total != d / 2) {
      config_error(section_key + " adds up to " + std::to_string(total) +
                   " pairs but the rotary dimension " + std::to_string(d) + " has " +
                   std::to_string(d / 2));
    }
    const bool interleaved =
        parameters.contains("mrope_interleaved")
            ? parameters["mrope_interleaved"].is_boolean() &&
                  parameters["mrope_interleaved"].get<bool>()
            : keys.at("mrope_interleaved").is_boolean() && keys.at("mrope_interleaved").get<bool>();
    o.axes = interleaved ? Axes::mrope_interleaved(pairs) : Axes::sections(pairs);
  }

  // Layout: the architecture's, and DeepSeek-V3's explicit rope_interleave.
  const std::string arch = out.model_type;
  HfLayout layout = hf_layout(arch);
  if (keys.at("rope_interleave").is_boolean()) {
    const bool interleave = keys.at("rope_interleave").get<bool>();
    layout = {interleave ? Layout::interleaved : Layout::half_split,
              std::string("rope_interleave ") + (interleave ? "true" : "false")};
  }
  o.layout = layout.layout;
  out.layout_source = layout.source;
  return out;
}

inline HfRope hf_rope_file(const std::string& path, const std::string& layer_type,
                           double sequence_length) {
  std::ifstream file(path);
  if (!file) throw std::invalid_argument("rope: cannot read the config file " + path);
  nlohmann::json config;
  try {
    config = nlohmann::json::parse(file);
  } catch (const nlohmann::json::exception& e) {
    throw std::invalid_argument("rope: " + path + " is not JSON: " + e.what());
  }
  return hf_rope(config, layer_type, sequence_length);
}

}  // namespace ROPE_DETAIL_ISA
}  // namespace rope

#endif  // !ROPE_BELOW_CXX17
