// The definitions of rope/hf_config.hpp's functions: included by that header, or compiled once
// in src/hf_config.cpp (ROPE_HF_CONFIG_SOURCE), where they are not inline.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <iterator>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <rope/hf_models.hpp>
#include <rope/multimodal.hpp>

#include <nlohmann/json.hpp>

#if defined(ROPE_HF_CONFIG_SOURCE)
#define ROPE_DETAIL_HF_INLINE
#else
#define ROPE_DETAIL_HF_INLINE inline
#endif

namespace rope {
inline namespace ROPE_DETAIL_ISA {

namespace detail {

using Json = nlohmann::json;

[[noreturn]] inline void config_error(const std::string& what) {
  ROPE_THROW(std::invalid_argument, "rope: config.json: " + what);
}

// "a string "1e6"", "true", "a list": what a value is, for messages.
inline std::string json_found(const Json& v) {
  switch (v.type()) {
    case Json::value_t::string:
      return "a string " + v.dump();
    case Json::value_t::boolean:
      return "a boolean " + v.dump();
    case Json::value_t::array:
      return "a list";
    case Json::value_t::object:
      return "an object";
    case Json::value_t::null:
      return "null";
    default:
      return "the number " + v.dump();
  }
}

[[noreturn]] inline void type_error(const std::string& path, const Json& v, const char* wanted) {
  config_error(path + " must be " + wanted + ", got " + json_found(v));
}

// The deepest nesting a config may have: released configs nest 4 levels (text_config's
// rope_parameters per layer type); copies, comparisons and dumps of nlohmann's values recurse,
// so a config nested 10^5 levels deep would overflow the stack.
inline constexpr std::size_t kMaxConfigDepth = 64;

// Rejects a config nested deeper than kMaxConfigDepth, without recursion (E93).
inline void check_depth(const Json& config) {
  std::vector<std::pair<const Json*, std::size_t>> open{{&config, 1}};
  while (!open.empty()) {
    const auto [value, depth] = open.back();
    open.pop_back();
    if (!value->is_structured()) continue;
    if (depth > kMaxConfigDepth) {
      config_error("the config nests deeper than " + std::to_string(kMaxConfigDepth) +
                   " levels of objects and lists");
    }
    for (const Json& child : *value) open.emplace_back(&child, depth + 1);
  }
}

// The text model's keys: text_config when nested (vision-language models), else the config.
// A key absent there is looked up at the top level (Qwen2-VL keeps rope_scaling at the top).
struct ConfigKeys {
  const Json& root;
  const Json& text;

  explicit ConfigKeys(const Json& config)
      : root((check_depth(config), config)),
        text(config.contains("text_config") && config["text_config"].is_object()
                 ? config["text_config"]
                 : config) {}

  // The value of a key, null if absent (or null) in both.
  const Json& at(const std::string& key) const {
    static const Json null;
    if (in_text(key)) return text[key];
    if (root.contains(key) && !root[key].is_null()) return root[key];
    return null;
  }
  bool has(const std::string& key) const { return !at(key).is_null(); }

  // Where at(key) found it, for messages: text_config.key or key.
  std::string path(const std::string& key) const {
    return &text != &root && in_text(key) ? "text_config." + key : key;
  }

  double number(const std::string& key) const {
    if (!at(key).is_number()) type_error(path(key), at(key), "a number");
    return at(key).get<double>();
  }
  bool boolean(const std::string& key) const {
    if (!at(key).is_boolean()) type_error(path(key), at(key), "true or false");
    return at(key).get<bool>();
  }
  std::string string(const std::string& key) const {
    if (!at(key).is_string()) type_error(path(key), at(key), "a string");
    return at(key).get<std::string>();
  }
  // An integer > 0 (head sizes, head counts, layer counts).
  std::size_t count(const std::string& key) const {
    const Json& v = at(key);
    if (!v.is_number_integer()) type_error(path(key), v, "an integer > 0");
    if (v.get<long long>() <= 0) {
      config_error(path(key) + " " + v.dump() + " must be an integer > 0");
    }
    return static_cast<std::size_t>(v.get<long long>());
  }

 private:
  bool in_text(const std::string& key) const { return text.contains(key) && !text[key].is_null(); }
};

inline double positive_of(const Json& v, const std::string& path) {
  if (!v.is_number()) type_error(path, v, "a number");
  const double x = v.get<double>();
  if (!(x > 0.0) || !std::isfinite(x)) {
    config_error(path + " " + v.dump() + " must be a finite number > 0");
  }
  return x;
}

// Levenshtein distance, for "did you mean".
inline std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

// "; did you mean rope_theta?", the closest of `known`, or nothing when none is close.
inline std::string suggestion(const std::string& key, const std::vector<const char*>& known) {
  std::size_t best = key.size() / 2 + 1;
  const char* closest = nullptr;
  for (const char* k : known) {
    const std::size_t d = edit_distance(key, k);
    if (d < best) {
      best = d;
      closest = k;
    }
  }
  return closest != nullptr ? std::string("; did you mean ") + closest + "?" : std::string();
}

// ---- the RoPE dictionary: one small reader per rope_type, keys from one table ---------------

// The keys of a RoPE dictionary every rope_type accepts.
inline const std::vector<const char*>& common_keys() {
  static const std::vector<const char*> keys{"rope_type",           "type",
                                             "rope_theta",          "partial_rotary_factor",
                                             "mrope_section",       "mrope_interleaved",
                                             "llama_4_scaling_beta"};
  return keys;
}

// A RoPE dictionary being read: its keys, their path, and the config's top-level keys that
// stand in for absent ones.
struct RopeDictionary {
  const Json& parameters;
  const std::string& where;  // "rope_scaling." or "text_config.rope_parameters.full_attention."
  const ConfigKeys& keys;
  const std::string& rope_type;

  bool has(const char* key) const { return parameters.contains(key); }
  double positive(const char* key) const {
    if (!has(key)) config_error(where + key + " is required");
    return positive_of(parameters[key], where + key);
  }
  std::optional<double> optional_number(const char* key) const {
    if (!has(key)) return std::nullopt;
    if (!parameters[key].is_number()) type_error(where + key, parameters[key], "a number");
    return parameters[key].get<double>();
  }
  std::vector<double> numbers(const char* key) const {
    if (!has(key)) config_error(where + key + " is required");
    const Json& v = parameters[key];
    if (!v.is_array()) type_error(where + key, v, "a list of numbers");
    std::vector<double> out;
    for (const Json& x : v) {
      if (!x.is_number())
        type_error(where + key + "[" + std::to_string(out.size()) + "]", x, "a number");
      out.push_back(x.get<double>());
    }
    return out;
  }
  // A length: the dictionary's, else the config's top-level key.
  double length(const char* key) const {
    if (has(key)) return positive(key);
    if (keys.has(key)) return positive_of(keys.at(key), keys.path(key));
    config_error(where + key + " is required for rope_type \"" + rope_type + "\"");
  }
};

// What a scheme's reader fills in: the Options, and the rotary dimension it reads for.
struct SchemeTarget {
  Options& options;
  std::size_t rotary_dim;
  std::optional<double> partial;  // partial_rotary_factor, where given
};

using SchemeReader = void (*)(const RopeDictionary&, SchemeTarget&);

struct HfScheme {
  const char* rope_type;
  std::vector<const char*> keys;  // beside common_keys()
  SchemeReader read;
};

inline void read_default(const RopeDictionary&, SchemeTarget&) {}

inline void read_linear(const RopeDictionary& p, SchemeTarget& t) {
  t.options.scaling = Linear{p.positive("factor")};
}

// Dynamic NTK; with HunYuan's `alpha`, HuggingFace's HunYuan rotary embedding (static NTK):
// base·α^(d/(d−2)) up to max_position_embeddings tokens, and past them its dynamic update, which
// recomputes Dynamic NTK from rope_theta and drops α (docs/scaling.md).
inline void read_dynamic(const RopeDictionary& p, SchemeTarget& t) {
  const double factor = p.positive("factor");
  const double max_positions = p.length("max_position_embeddings");
  if (!p.has("alpha")) {
    t.options.scaling = DynamicNTK{factor, max_positions};
    return;
  }
  const double alpha = p.positive("alpha");
  if (t.options.sequence_length > max_positions) {
    t.options.scaling = DynamicNTK{factor, max_positions};
  } else {
    const double d = static_cast<double>(t.options.head_size);
    t.options.base *= std::pow(alpha, d / (d - 2));
  }
}

inline void read_yarn(const RopeDictionary& p, SchemeTarget& t) {
  Yarn y;
  // original_max_position_embeddings: the dictionary's, the top-level one, else
  // max_position_embeddings (transformers 4's fallback).
  const bool original =
      p.has("original_max_position_embeddings") || p.keys.has("original_max_position_embeddings");
  if (!original && !p.keys.has("max_position_embeddings")) {
    config_error(p.where +
                 "original_max_position_embeddings (or max_position_embeddings) is required for "
                 "rope_type \"yarn\"");
  }
  y.original_max_position_embeddings =
      original ? p.length("original_max_position_embeddings") : p.length("max_position_embeddings");
  // factor null (or absent): max_position_embeddings / original_max_position_embeddings.
  y.factor = p.has("factor")
                 ? p.positive("factor")
                 : p.length("max_position_embeddings") / y.original_max_position_embeddings;
  // beta_fast, beta_slow: `or` defaults, so 0 reads as the default too.
  const std::optional<double> fast = p.optional_number("beta_fast");
  const std::optional<double> slow = p.optional_number("beta_slow");
  y.beta_fast = fast && *fast != 0 ? *fast : 32;
  y.beta_slow = slow && *slow != 0 ? *slow : 1;
  y.mscale = p.optional_number("mscale");
  y.mscale_all_dim = p.optional_number("mscale_all_dim");
  y.attention_factor = p.optional_number("attention_factor");
  if (p.has("truncate")) {
    if (!p.parameters["truncate"].is_boolean()) {
      type_error(p.where + "truncate", p.parameters["truncate"], "true or false");
    }
    y.truncate = p.parameters["truncate"].get<bool>();
  }
  t.options.scaling = y;
}

inline void read_longrope(const RopeDictionary& p, SchemeTarget& t) {
  LongRope l;
  l.short_factor = p.numbers("short_factor");
  l.long_factor = p.numbers("long_factor");
  l.original_max_position_embeddings = p.length("original_max_position_embeddings");
  if (p.keys.has("max_position_embeddings")) {
    l.max_position_embeddings = p.length("max_position_embeddings");
  }
  l.factor = p.optional_number("factor");
  l.attention_factor = p.optional_number("attention_factor");
  const std::size_t pairs = t.rotary_dim / 2;
  for (const char* key : {"short_factor", "long_factor"}) {
    const std::size_t n = key[0] == 's' ? l.short_factor.size() : l.long_factor.size();
    if (n != pairs) {
      config_error(p.where + key + " has " + std::to_string(n) + " values but the rotary " +
                   "dimension " + std::to_string(t.rotary_dim) + " has " + std::to_string(pairs) +
                   " pairs");
    }
  }
  t.options.scaling = l;
}

inline void read_llama3(const RopeDictionary& p, SchemeTarget& t) {
  t.options.scaling =
      Llama3{p.positive("factor"), p.positive("low_freq_factor"), p.positive("high_freq_factor"),
             p.length("original_max_position_embeddings")};
}

inline void read_proportional(const RopeDictionary& p, SchemeTarget& t) {
  const double factor = p.has("factor") ? p.positive("factor") : 1.0;
  t.options.scaling = Proportional{t.partial.value_or(1.0), factor};
}

// HuggingFace's ROPE_INIT_FUNCTIONS, one row per rope_type: the keys it reads and its reader.
inline const std::vector<HfScheme>& hf_schemes() {
  static const std::vector<HfScheme> schemes{
      {"default", {}, read_default},
      {"linear", {"factor"}, read_linear},
      // HunYuan's dynamic dictionaries carry YaRN's keys too; its code reads alpha alone.
      {"dynamic",
       {"factor", "max_position_embeddings", "alpha", "beta_fast", "beta_slow", "mscale",
        "mscale_all_dim"},
       read_dynamic},
      {"yarn",
       {"factor", "original_max_position_embeddings", "beta_fast", "beta_slow", "mscale",
        "mscale_all_dim", "attention_factor", "truncate", "max_position_embeddings"},
       read_yarn},
      {"longrope",
       {"short_factor", "long_factor", "factor", "attention_factor",
        "original_max_position_embeddings"},
       read_longrope},
      {"llama3",
       {"factor", "low_freq_factor", "high_freq_factor", "original_max_position_embeddings"},
       read_llama3},
      {"proportional", {"factor"}, read_proportional},
  };
  return schemes;
}

// Every key a RoPE dictionary may hold, for any rope_type.
inline std::vector<const char*> dictionary_keys() {
  std::vector<const char*> all = common_keys();
  for (const HfScheme& s : hf_schemes()) all.insert(all.end(), s.keys.begin(), s.keys.end());
  return all;
}

// The config's own keys that this reader reads or knows, among those that look like RoPE keys.
inline const std::vector<const char*>& rope_config_keys() {
  static const std::vector<const char*> keys{"rope_theta",
                                             "rope_scaling",
                                             "rope_parameters",
                                             "rope_local_base_freq",
                                             "rope_interleave",
                                             "rotary_pct",
                                             "rotary_dim",
                                             "rotary_emb_base",
                                             "partial_rotary_factor",
                                             "qk_rope_head_dim",
                                             "mrope_section",
                                             "mrope_interleaved",
                                             "no_rope_layers",
                                             "no_rope_layer_interval",
                                             "indexer_rope_interleave",
                                             "compress_rope_theta",  // DeepSeek-V4
                                             "use_mem_rope",         // Zamba2
                                             "rotary"};  // GPT-J's released config: "rotary": true
  return keys;
}

// A key of the config that looks like a RoPE key (contains "rope" or "rotary") but is not one
// the reader knows is an error: rope_thetta would otherwise read as base 10000.
inline void check_rope_looking_keys(const Json& object, const std::string& prefix) {
  for (const auto& item : object.items()) {
    std::string lower;
    for (const char c : item.key()) lower += c >= 'A' && c <= 'Z' ? char(c - 'A' + 'a') : c;
    if (lower.find("rope") == std::string::npos && lower.find("rotary") == std::string::npos) {
      continue;
    }
    bool known = false;
    for (const char* k : rope_config_keys()) known = known || item.key() == k;
    if (!known) {
      config_error(prefix + item.key() + " looks like a RoPE key but is not one this reader " +
                   "understands" + suggestion(item.key(), rope_config_keys()));
    }
  }
}

// Layer types, a closed list: those that may rotate (HuggingFace's attention layer types, and
// the names this reader gives layers it derives: "attention", "compressed_attention"), those
// that never do (linear attention, state-space, convolution, recurrent), and anything else is
// unknown (E76), however much its name looks like attention: "nope_attention" and
// "cross_attention" are not known to rotate, nor "attention_linear" not to.
enum class LayerKind { attention, no_rope, unknown };
inline LayerKind layer_kind(const std::string& t) {
  for (const char* k : {"full_attention", "sliding_attention", "chunked_attention", "attention",
                        "compressed_attention", "compressed_sparse_attention",
                        "heavily_compressed_attention", "deepseek_sparse_attention"}) {
    if (t == k) return LayerKind::attention;
  }
  for (const char* k :
       {"linear_attention", "mamba", "mamba2", "conv", "linear", "recurrent", "ssm"}) {
    if (t == k) return LayerKind::no_rope;
  }
  return LayerKind::unknown;
}

// A per-layer-type dictionary: some key is a layer type of the config holding an object.
inline bool per_layer(const Json& parameters, const std::vector<std::string>& types) {
  for (const std::string& t : types) {
    if (parameters.contains(t) && parameters[t].is_object()) return true;
  }
  return false;
}

// A model type whose row says it is no text decoder: an error, whatever else the config says.
inline std::string text_model(std::string model_type) {
  const HfModelType* row = hf_model_type(model_type);
  if (row != nullptr && row->rotation == HfRotation::not_text) {
    config_error("model type \"" + model_type + "\" is not a text model whose RoPE this reader " +
                 "reads (" + row->source +
                 "); vision RoPE is built with Axes (docs/multimodal.md)");
  }
  return model_type;
}

// The model type: text_config's, the config's, else the first of `architectures` that names a
// row of the table. Empty if none.
inline std::string model_type_of(const ConfigKeys& keys) {
  for (const Json* object : {&keys.text, &keys.root}) {
    if (object->contains("model_type") && !(*object)["model_type"].is_null()) {
      const Json& v = (*object)["model_type"];
      if (!v.is_string()) {
        type_error(object == &keys.root ? "model_type" : "text_config.model_type", v, "a string");
      }
      return text_model(v.get<std::string>());
    }
  }
  // (nlohmann's const operator[] of a key an object does not have is undefined behaviour.)
  static const Json absent;
  const bool at_root = keys.root.contains("architectures");
  const Json& architectures = at_root                               ? keys.root["architectures"]
                              : keys.text.contains("architectures") ? keys.text["architectures"]
                                                                    : absent;
  if (!architectures.is_null() && !architectures.is_array()) {
    type_error(at_root ? "architectures" : "text_config.architectures", architectures,
               "a list of strings");
  }
  if (architectures.is_array()) {
    for (const Json& a : architectures) {
      if (!a.is_string()) type_error("architectures", a, "a list of strings");
      if (const HfModelType* row = hf_model_type_of_class(a.get<std::string>())) {
        return text_model(row->model_type);
      }
    }
  }
  return {};
}

[[noreturn]] inline void unknown_pairing(const std::string& model_type, const ConfigKeys& keys) {
  if (model_type.empty()) {
    std::string names;
    if (keys.root.contains("architectures") && keys.root["architectures"].is_array()) {
      names = " and its architectures " + keys.root["architectures"].dump();
    }
    config_error("the config has no model_type" + names +
                 " name no model type of the table (rope/hf_models.hpp): pass the pairing its "
                 "q/k weights expect as HfRequest::layout");
  }
  const HfModelType* row = hf_model_type(model_type);
  if (row != nullptr && row->rotation == HfRotation::composite) {
    config_error("model_type \"" + model_type + "\" wraps a text model whose type its " +
                 "text_config should name, and none does (" + row->source +
                 "): read the text model's own config, or pass the pairing its q/k weights " +
                 "expect as HfRequest::layout");
  }
  config_error("model_type \"" + model_type +
               "\" is not in the table of model types (rope/hf_models.hpp): pass the pairing its "
               "q/k weights expect as HfRequest::layout (interleaved for adjacent pairs, "
               "half_split for rotate_half)");
}

// The model types of the table whose code pairs q and k as the config's rope_interleave says
// (DeepSeek-V3's attention and its descendants); the table's row is their default.
inline bool reads_rope_interleave(const std::string& model_type) {
  for (const char* t :
       {"deepseek_v3", "glm4_moe_lite", "glm_moe_dsa", "kimi_k2", "mistral4", "youtu"}) {
    if (model_type == t) return true;
  }
  return false;
}

// The layout: the table's row, the config's rope_interleave where the model's code reads it
// (or the model type is not in the table), the caller's HfRequest::layout; where two of them
// speak, they must agree. A rope_interleave the model's code does not read is not read here
// either (longcat_flash pairs adjacent coordinates whatever it says, llama rotate_half).
inline HfLayout resolve_layout(const ConfigKeys& keys, const std::string& model_type,
                               const std::optional<Layout>& requested) {
  std::optional<HfLayout> known;
  const HfModelType* row = hf_model_type(model_type);
  const bool row_pairs = row != nullptr && (row->rotation == HfRotation::interleaved ||
                                            row->rotation == HfRotation::half_split);
  if (keys.has("rope_interleave") && (!row_pairs || reads_rope_interleave(model_type))) {
    const bool interleave = keys.boolean("rope_interleave");
    known = HfLayout{interleave ? Layout::interleaved : Layout::half_split,
                     keys.path("rope_interleave") + (interleave ? " true" : " false")};
  } else if (row_pairs) {
    known = HfLayout{
        row->rotation == HfRotation::interleaved ? Layout::interleaved : Layout::half_split,
        row->source};
    if (keys.has("rope_interleave")) {
      known->source += std::string("; ") + keys.path("rope_interleave") +
                       (keys.boolean("rope_interleave") ? " true" : " false") +
                       " is not read by its code";
    }
  }
  if (known && requested && *requested != known->layout) {
    config_error(std::string("HfRequest::layout ") + to_string(*requested) +
                 " contradicts the model's " + to_string(known->layout) + " (" + known->source +
                 ")");
  }
  if (known) return *known;
  if (requested) return {*requested, "HfRequest::layout"};
  unknown_pairing(model_type, keys);
}

// The layer type of each layer: layer_types, else HuggingFace's patterns (Gemma 2 alternates;
// Gemma 3 and Cohere2 make every sliding_window_pattern-th layer full), else full_attention.
inline std::vector<std::string> layer_type_list(const ConfigKeys& keys,
                                                const std::string& model_type) {
  // num_hidden_layers, or n_layer where HuggingFace's attribute map names it so (GPT-J); a list
  // of that many types is built, so the count is bounded first.
  const char* layers_key =
      keys.has("num_hidden_layers") || !keys.has("n_layer") ? "num_hidden_layers" : "n_layer";
  const std::size_t layers = keys.count(layers_key);
  constexpr std::size_t kMaxLayers = std::size_t{1} << 20;
  if (layers > kMaxLayers) {
    config_error(keys.path(layers_key) + " " + std::to_string(layers) + " exceeds " +
                 std::to_string(kMaxLayers) + " layers");
  }
  if (keys.has("layer_types")) {
    const Json& listed = keys.at("layer_types");
    if (!listed.is_array()) type_error(keys.path("layer_types"), listed, "a list of strings");
    if (listed.size() != layers) {
      config_error(keys.path("layer_types") + " has " + std::to_string(listed.size()) +
                   " entries but num_hidden_layers is " + std::to_string(layers));
    }
    std::vector<std::string> types;
    for (const Json& t : listed) {
      if (!t.is_string()) {
        type_error(keys.path("layer_types") + "[" + std::to_string(types.size()) + "]", t,
                   "a string");
      }
      types.push_back(t.get<std::string>());
    }
    return types;
  }
  if (model_type == "qwen3_next" || model_type == "qwen3_5" || model_type == "qwen3_5_text" ||
      model_type == "qwen3_5_moe" || model_type == "qwen3_5_moe_text") {
    // Qwen3-Next and Qwen3.5: every full_attention_interval-th layer is full attention, the
    // others linear attention (HuggingFace's config default, interval 4).
    const std::size_t interval =
        keys.has("full_attention_interval") ? keys.count("full_attention_interval") : 4;
    std::vector<std::string> types;
    for (std::size_t i = 0; i < layers; ++i) {
      types.push_back((i + 1) % interval == 0 ? "full_attention" : "linear_attention");
    }
    return types;
  }
  if (model_type == "bamba") {
    // Bamba: the layers of attn_layer_indices are attention layers, the others Mamba 2.
    const Json& listed = keys.at("attn_layer_indices");
    if (!listed.is_array()) {
      type_error(keys.path("attn_layer_indices"), listed, "a list of layer indices");
    }
    std::vector<std::string> types(layers, "mamba");
    for (const Json& i : listed) {
      if (!i.is_number_integer() || i.get<long long>() < 0 ||
          static_cast<std::size_t>(i.get<long long>()) >= layers) {
        type_error(keys.path("attn_layer_indices") + "[]", i,
                   ("a layer index below num_hidden_layers " + std::to_string(layers)).c_str());
      }
      types[static_cast<std::size_t>(i.get<long long>())] = "attention";
    }
    return types;
  }
  if (model_type == "deepseek_v4") {
    // DeepSeek-V4: compress_ratios[i] 0 is a window (sliding) layer, any other ratio a
    // compressed one; the list may go on past the layers (the MTP block's).
    const Json& ratios = keys.at("compress_ratios");
    if (!ratios.is_array()) type_error(keys.path("compress_ratios"), ratios, "a list of integers");
    if (ratios.size() < layers) {
      config_error(keys.path("compress_ratios") + " has " + std::to_string(ratios.size()) +
                   " entries but num_hidden_layers is " + std::to_string(layers));
    }
    std::vector<std::string> types;
    for (std::size_t i = 0; i < layers; ++i) {
      if (!ratios[i].is_number_integer() || ratios[i].get<long long>() < 0) {
        type_error(keys.path("compress_ratios") + "[" + std::to_string(i) + "]", ratios[i],
                   "an integer >= 0");
      }
      types.push_back(ratios[i].get<long long>() == 0 ? "sliding_attention"
                                                      : "compressed_attention");
    }
    return types;
  }
  if (model_type == "recurrent_gemma") {
    // RecurrentGemma: block_types repeated over the layers, "recurrent" and "attention"
    // (RecurrentGemmaConfig.layers_block_type; recurrent, recurrent, attention by default).
    std::vector<std::string> cycle = {"recurrent", "recurrent", "attention"};
    if (keys.has("block_types")) {
      const Json& listed = keys.at("block_types");
      if (!listed.is_array() || listed.empty()) {
        type_error(keys.path("block_types"), listed, "a non-empty list of strings");
      }
      cycle.clear();
      for (const Json& t : listed) {
        if (!t.is_string() || (t != "recurrent" && t != "attention")) {
          type_error(keys.path("block_types") + "[]", t, "\"recurrent\" or \"attention\"");
        }
        cycle.push_back(t.get<std::string>());
      }
    }
    std::vector<std::string> types;
    for (std::size_t i = 0; i < layers; ++i) types.push_back(cycle[i % cycle.size()]);
    return types;
  }
  if (model_type == "zamba2") {
    // Zamba2: "hybrid" layers run the shared attention block, the others are Mamba 2 only
    // (layers_block_type; Zamba2Config's default list is for its 54 layers).
    const Json& listed = keys.at("layers_block_type");
    if (!listed.is_array() || listed.size() != layers) {
      config_error(keys.path("layers_block_type") +
                   " (a list of \"mamba\" and \"hybrid\", one per layer) is required for zamba2");
    }
    std::vector<std::string> types;
    for (const Json& t : listed) {
      if (!t.is_string()) type_error(keys.path("layers_block_type") + "[]", t, "a string");
      types.push_back(t == "hybrid" ? "full_attention" : "mamba");
    }
    return types;
  }
  if (model_type == "olmo_hybrid") {
    // OLMo Hybrid: every 4th layer full attention, the others linear attention, and at least one
    // full-attention layer (OlmoHybridConfig's default).
    std::vector<std::string> types(layers, "linear_attention");
    for (std::size_t i = 3; i < layers; i += 4) types[i] = "full_attention";
    if (layers > 0 && layers < 4) types.back() = "full_attention";
    return types;
  }
  if ((model_type == "exaone4" || model_type == "exaone_moe") && keys.has("sliding_window")) {
    // EXAONE MoE's default: every sliding_window_pattern-th layer (4) is full. EXAONE 4's
    // default and pattern strings are not read here: their configs list layer_types.
    const Json& p = keys.at("sliding_window_pattern");
    if (model_type == "exaone4" || !(p.is_null() || p.is_number_integer())) {
      config_error(keys.path("layer_types") + " is required for model type " + model_type +
                   " with sliding_window set");
    }
  }
  std::size_t pattern = 0;  // every pattern-th layer is full; 0: none slides
  if (model_type == "gemma2" || model_type == "t5_gemma_module") pattern = 2;
  if (model_type == "afmoe") {
    pattern = keys.has("global_attn_every_n_layers") ? keys.count("global_attn_every_n_layers") : 4;
  }
  if (model_type == "exaone_moe" && keys.has("sliding_window")) {
    pattern = keys.has("sliding_window_pattern") ? keys.count("sliding_window_pattern") : 4;
  }
  const bool gemma3 =
      model_type == "gemma3" || model_type == "gemma3_text" || keys.has("rope_local_base_freq");
  if (gemma3 || model_type == "cohere2") {
    pattern = keys.has("sliding_window_pattern") ? keys.count("sliding_window_pattern")
                                                 : (gemma3 ? 6 : 4);
  }
  std::vector<std::string> types;
  for (std::size_t i = 0; i < layers; ++i) {
    types.push_back(pattern != 0 && (i + 1) % pattern != 0 ? "sliding_attention"
                                                           : "full_attention");
  }
  return types;
}

// Why layer i of type t does not rotate, or "" when it does. `types` is layer_type_list.
inline std::string no_rope_reason(const ConfigKeys& keys, const std::string& model_type,
                                  const std::vector<std::string>& types, std::size_t i) {
  const std::string& t = types[i];
  const std::string index = "[" + std::to_string(i) + "]";
  switch (layer_kind(t)) {
    case LayerKind::no_rope:
      return (keys.has("layer_types") ? "layer_types" + index : "layer " + std::to_string(i)) +
             " is \"" + t + "\"";
    case LayerKind::unknown:
      config_error(keys.path("layer_types") + index + " \"" + t +
                   "\" is not a layer type this reader knows (full_attention, "
                   "sliding_attention, chunked_attention, attention; linear_attention, mamba, "
                   "conv)");
    case LayerKind::attention:
      break;
  }
  const HfModelType* row = hf_model_type(model_type);
  if (row != nullptr && row->rotation == HfRotation::none && !keys.has("rope_interleave")) {
    return std::string("model type ") + model_type + " has no RoPE (" + row->source + ")";
  }
  if (keys.has("mla_use_nope") && keys.boolean("mla_use_nope")) {
    return keys.path("mla_use_nope") + " is true";
  }
  if (model_type == "granitemoehybrid") {
    if (!keys.has("position_embedding_type")) {
      config_error(keys.path("position_embedding_type") +
                   " (\"rope\" or \"nope\") is required for granitemoehybrid");
    }
    const std::string kind = keys.string("position_embedding_type");
    if (kind != "rope" && kind != "nope") {
      config_error(keys.path("position_embedding_type") + " \"" + kind +
                   "\" is neither \"rope\" nor \"nope\"");
    }
    if (kind == "nope") return keys.path("position_embedding_type") + " is \"nope\"";
  }
  if (model_type == "falcon" && keys.has("alibi") && keys.boolean("alibi")) {
    return keys.path("alibi") + " is true";
  }
  if (keys.has("no_rope_layers") || keys.has("no_rope_layer_interval")) {
    // SmolLM3 and Llama 4: use_rope = no_rope_layers[i]; an empty or absent list is built as
    // int((i + 1) % no_rope_layer_interval != 0), interval 4 by default.
    const bool known =
        model_type == "smollm3" || model_type == "llama4" || model_type == "llama4_text";
    if (!known) {
      config_error(
          keys.path(keys.has("no_rope_layers") ? "no_rope_layers" : "no_rope_layer_interval") +
          ": which value means RoPE is not known for model type \"" + model_type + "\"");
    }
    const Json& listed = keys.at("no_rope_layers");
    if (!listed.is_null() && !listed.is_array()) {
      type_error(keys.path("no_rope_layers"), listed, "a list of 0 and 1");
    }
    if (!listed.is_null() && !listed.empty()) {
      if (listed.size() != types.size()) {
        config_error(keys.path("no_rope_layers") + " has " + std::to_string(listed.size()) +
                     " entries but num_hidden_layers is " + std::to_string(types.size()));
      }
      const Json& v = listed[i];
      if (!v.is_number_integer() || (v.get<long long>() != 0 && v.get<long long>() != 1)) {
        type_error(keys.path("no_rope_layers") + index, v, "0 or 1");
      }
      if (v.get<long long>() == 0) return keys.path("no_rope_layers") + index + " is 0";
    } else {
      const std::size_t interval =
          keys.has("no_rope_layer_interval") ? keys.count("no_rope_layer_interval") : 4;
      if ((i + 1) % interval == 0) {
        return "layer " + std::to_string(i) + " is a multiple of no_rope_layer_interval " +
               std::to_string(interval) + " (counting from 1)";
      }
    }
  } else if (model_type == "llama4" || model_type == "llama4_text") {
    if ((i + 1) % 4 == 0) {
      return "layer " + std::to_string(i) + ": Llama 4's default no_rope_layers, every 4th";
    }
  }
  if (model_type == "cohere2" && t == "full_attention") {
    return "Cohere2 rotates its sliding layers only (Cohere2Attention, modeling_cohere2.py)";
  }
  if ((model_type == "exaone4" || model_type == "exaone_moe") && t == "full_attention" &&
      keys.has("sliding_window")) {
    return "EXAONE 4's global layers are NoPE when sliding_window is set (Exaone4Attention, "
           "modeling_exaone4.py)";
  }
  if (model_type == "afmoe" && t == "full_attention") {
    return "AFMoE rotates its sliding layers only (AfmoeAttention, modular_afmoe.py)";
  }
  if (model_type == "olmo_hybrid") {
    const Json& p = keys.at("rope_parameters");
    const bool theta = (p.is_object() && p.contains("rope_theta") && !p["rope_theta"].is_null()) ||
                       keys.has("rope_theta");
    if (!theta) {
      return "OLMo Hybrid has no RoPE without a rope_theta (rope_parameters; OlmoHybridModel)";
    }
  }
  if (model_type == "zamba2") {
    if (!keys.has("use_mem_rope") || !keys.boolean("use_mem_rope")) {
      return keys.path("use_mem_rope") + " is false or absent (Zamba2Config's default)";
    }
    if (keys.has("use_long_context") && keys.boolean("use_long_context")) {
      config_error(keys.path("use_long_context") +
                   " is true: its rescaled base is not read here; pass the Options yourself");
    }
  }
  return {};
}

// Why no layer of type `layer_type` rotates (the first layer's reason), or "" when some layer of
// it does, none has it, or the config does not give the layer count.
inline std::string type_without_rope(const ConfigKeys& keys, const std::string& model_type,
                                     const std::string& layer_type) {
  if (!keys.has("num_hidden_layers") && !keys.has("n_layer")) return {};
  const std::vector<std::string> types = layer_type_list(keys, model_type);
  std::string reason;
  for (std::size_t i = 0; i < types.size(); ++i) {
    if (types[i] != layer_type) continue;
    const std::string why = no_rope_reason(keys, model_type, types, i);
    if (why.empty()) return {};
    if (reason.empty()) reason = why;
  }
  return reason;
}

// The head size of a layer type: global_head_dim (full-attention layers), qk_rope_head_dim (MLA:
// the rotated part of q and k), head_dim, hidden_size / num_attention_heads (n_embd / n_head for
// GPT-J), which must divide into an even head size.
inline std::size_t head_size_of(const ConfigKeys& keys, const std::string& layer_type) {
  std::string head_key;
  if (layer_type == "full_attention" && keys.has("global_head_dim")) {
    head_key = "global_head_dim";
  } else if (keys.has("qk_rope_head_dim")) {
    head_key = "qk_rope_head_dim";
  } else if (keys.has("head_dim")) {
    head_key = "head_dim";
  }
  const auto divided = [&](const char* total, const char* heads) {
    const std::size_t t = keys.count(total), h = keys.count(heads);
    if (t % h != 0) {
      config_error(keys.path(total) + " " + std::to_string(t) + " is not a multiple of " +
                   keys.path(heads) + " " + std::to_string(h) + ": no whole head size");
    }
    return t / h;
  };
  std::size_t head_size = 0;
  if (model_type_of(keys) == "zamba2") {
    // Zamba2's attention heads take the concatenation of two hidden states:
    // attention_head_dim = 2 hidden_size / num_attention_heads (Zamba2Config).
    head_key = keys.has("attention_head_dim") ? "attention_head_dim" : "";
    head_size = keys.has("attention_head_dim") ? keys.count("attention_head_dim")
                                               : divided("hidden_size", "num_attention_heads") * 2;
  } else if (!head_key.empty()) {
    head_size = keys.count(head_key);
  } else if (keys.has("hidden_size") && keys.has("num_attention_heads")) {
    head_size = divided("hidden_size", "num_attention_heads");
  } else if (keys.has("n_embd") && keys.has("n_head")) {
    head_size = divided("n_embd", "n_head");
  } else {
    config_error("no head size: head_dim, or hidden_size and num_attention_heads, is required");
  }
  if (head_size % 2 != 0) {
    config_error("the head size " + std::to_string(head_size) + " (" +
                 (head_key.empty() ? std::string("hidden_size / num_attention_heads")
                                   : keys.path(head_key)) +
                 ") is odd: RoPE rotates pairs");
  }
  return head_size;
}

// The RoPE dictionary of a layer type, its null values dropped, and the path of its keys:
// rope_parameters (transformers 5) or rope_scaling, flat or keyed by layer type. Gemma 3's flat
// rope_scaling is for its full-attention layers; its sliding layers rotate unscaled.
inline Json dictionary_of(const ConfigKeys& keys, const std::vector<std::string>& types,
                          const std::string& layer_type, bool gemma3_sliding, std::string& where) {
  const std::string dict_key = keys.has("rope_parameters") ? "rope_parameters" : "rope_scaling";
  const std::string dict_name = keys.path(dict_key);
  Json parameters = keys.at(dict_key);
  if (!parameters.is_null() && !parameters.is_object()) {
    type_error(dict_name, parameters, "an object or null");
  }
  if (parameters.is_null()) parameters = Json::object();
  where = dict_name + ".";
  if (per_layer(parameters, types)) {
    for (const auto& item : parameters.items()) {
      if (!item.value().is_object() && !item.value().is_null()) {
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
  for (auto it = parameters.begin(); it != parameters.end();) {  // null reads as absent
    it = it.value().is_null() ? parameters.erase(it) : std::next(it);
  }
  return parameters;
}

// The scheme of a dictionary, every key checked: first against all the keys any rope_type reads
// (so a misspelt rope_type is reported as itself), then against its rope_type's. rope_type is
// "type" in older configs; Qwen2-VL's "mrope" is default RoPE on sections, Phi-3's "su" longrope.
inline const HfScheme& scheme_of(const Json& parameters, const std::string& where,
                                 std::string& rope_type) {
  const std::vector<const char*> all_keys = dictionary_keys();
  for (const auto& item : parameters.items()) {
    bool any = false;
    for (const char* k : all_keys) any = any || item.key() == k;
    if (!any) {
      config_error(where + item.key() + " is not a key this reader understands" +
                   suggestion(item.key(), all_keys));
    }
  }
  rope_type = "default";
  std::string type_key = "rope_type";
  for (const char* key : {"rope_type", "type"}) {
    if (!parameters.contains(key)) continue;
    if (!parameters[key].is_string()) type_error(where + key, parameters[key], "a string");
    rope_type = parameters[key].get<std::string>();
    type_key = key;
    break;
  }
  if (rope_type == "mrope") rope_type = "default";
  if (rope_type == "su") rope_type = "longrope";
  const HfScheme* scheme = nullptr;
  std::string names;
  for (const HfScheme& s : hf_schemes()) {
    if (rope_type == s.rope_type) scheme = &s;
    names += (names.empty() ? "" : ", ") + std::string(s.rope_type);
  }
  if (scheme == nullptr) {
    config_error(where + type_key + " \"" + rope_type +
                 "\" is not a RoPE type this reader knows (" + names + ")");
  }
  for (const auto& item : parameters.items()) {
    bool understood = false;
    for (const char* k : common_keys()) understood = understood || item.key() == k;
    for (const char* k : scheme->keys) understood = understood || item.key() == k;
    if (!understood) {
      config_error(where + item.key() + " is not a key this reader understands for rope_type \"" +
                   rope_type + "\"");
    }
  }
  return *scheme;
}

// partial_rotary_factor (the dictionary's, then the config's) or rotary_pct (GPT-NeoX), and the
// rotary dimension they give with HuggingFace's int() truncation; else rotary_dim (GPT-J,
// MiniMax-M2); else the whole head. The proportional type rotates over the whole head and takes
// the factor itself.
inline std::optional<double> read_rotary_dim(const RopeDictionary& p, Options& o) {
  const ConfigKeys& keys = p.keys;
  std::optional<double> partial;
  std::string partial_key;
  if (p.has("partial_rotary_factor")) {
    partial_key = p.where + "partial_rotary_factor";
    partial = positive_of(p.parameters["partial_rotary_factor"], partial_key);
  } else {
    for (const char* key : {"partial_rotary_factor", "rotary_pct"}) {
      if (!keys.has(key)) continue;
      partial_key = keys.path(key);
      partial = positive_of(keys.at(key), partial_key);
      break;
    }
  }
  if (!partial && model_type_of(keys) == "recurrent_gemma") {
    partial_key = "partial_rotary_factor (RecurrentGemmaConfig's default)";
    partial = 0.5;
  }
  const std::string partial_text = partial ? partial_key + " " + Json(*partial).dump() : "";
  if (partial && !(*partial <= 1.0)) config_error(partial_text + " must be in (0, 1]");
  if (p.rope_type == "proportional") return partial;
  if (partial && keys.has("qk_rope_head_dim") && o.head_size == keys.count("qk_rope_head_dim")) {
    // MLA (Mistral 4): the factor is of HuggingFace's head_dim, qk_nope_head_dim +
    // qk_rope_head_dim, and must give the rotated part, qk_rope_head_dim, whole.
    if (!keys.has("qk_nope_head_dim")) {
      config_error(partial_text + " with qk_rope_head_dim needs qk_nope_head_dim");
    }
    const std::size_t full = keys.count("qk_nope_head_dim") + o.head_size;
    const auto rotated = static_cast<std::size_t>(*partial * static_cast<double>(full));
    if (rotated != o.head_size) {
      config_error(partial_text + " of qk_nope_head_dim + qk_rope_head_dim " +
                   std::to_string(full) + " rotates " + std::to_string(rotated) +
                   " coordinates, not qk_rope_head_dim " + std::to_string(o.head_size));
    }
    return partial;
  }
  if (partial) {
    o.rotary_dim = static_cast<std::size_t>(*partial * static_cast<double>(o.head_size));
    if (o.rotary_dim % 2 != 0 || o.rotary_dim == 0) {
      config_error(partial_text + " of the head size " + std::to_string(o.head_size) +
                   " gives an odd or zero rotary dimension " + std::to_string(o.rotary_dim));
    }
  } else if (keys.has("rotary_dim")) {
    o.rotary_dim = keys.count("rotary_dim");
    if (o.rotary_dim % 2 != 0 || o.rotary_dim > o.head_size) {
      config_error(keys.path("rotary_dim") + " " + std::to_string(o.rotary_dim) +
                   " must be even and at most the head size " + std::to_string(o.head_size));
    }
  }
  return partial;
}

// ERNIE 4.5-VL's 3-D map (Ernie4_5_VLMoeTextRotaryEmbedding): of the pairs, in θ order, the
// first 2·s pairs alternate height and width (section [s, s, t] of mrope_section, [22, 22, 20] by
// default), the last t take the temporal coordinate; θ_i is the whole head's.
inline Axes ernie_vl_axes(const RopeDictionary& p, std::size_t d) {
  std::vector<std::size_t> section = {22, 22, 20};
  std::string key = "mrope_section (Ernie4_5_VLMoeTextRotaryEmbedding's default [22, 22, 20])";
  if (p.has("mrope_section")) {
    key = p.where + "mrope_section";
    const Json& listed = p.parameters["mrope_section"];
    if (!listed.is_array() || listed.size() != 3) type_error(key, listed, "three integers");
    for (std::size_t a = 0; a < 3; ++a) {
      if (!listed[a].is_number_integer() || listed[a].get<long long>() < 0) {
        type_error(key + "[" + std::to_string(a) + "]", listed[a], "an integer >= 0");
      }
      section[a] = static_cast<std::size_t>(listed[a].get<long long>());
    }
  }
  if (section[0] != section[1] || section[0] + section[1] + section[2] != d / 2) {
    config_error(key + " must be [s, s, t] with 2 s + t = " + std::to_string(d / 2) +
                 ", the pairs of the rotary dimension " + std::to_string(d));
  }
  std::vector<std::uint8_t> axis(d / 2, 0);
  for (std::size_t i = 0; i < 2 * section[0]; ++i) axis[i] = std::uint8_t(i % 2 == 0 ? 1 : 2);
  return Axes::custom(3, std::move(axis));
}

// M-RoPE: mrope_section (in pairs, the dictionary's or the config's), interleaved over the pairs
// if mrope_interleaved; one axis without sections.
inline Axes axes_of(const RopeDictionary& p, std::size_t d) {
  const ConfigKeys& keys = p.keys;
  if (model_type_of(keys) == "ernie4_5_vl_moe_text") return ernie_vl_axes(p, d);
  bool interleaved = false;
  if (p.has("mrope_interleaved")) {
    if (!p.parameters["mrope_interleaved"].is_boolean()) {
      type_error(p.where + "mrope_interleaved", p.parameters["mrope_interleaved"], "true or false");
    }
    interleaved = p.parameters["mrope_interleaved"].get<bool>();
  } else if (keys.has("mrope_interleaved")) {
    interleaved = keys.boolean("mrope_interleaved");
  }
  const bool local = p.has("mrope_section");
  if (!local && !keys.has("mrope_section")) return {};
  const Json& section = local ? p.parameters["mrope_section"] : keys.at("mrope_section");
  const std::string key = local ? p.where + "mrope_section" : keys.path("mrope_section");
  if (!section.is_array()) type_error(key, section, "a list of integers");
  std::vector<std::size_t> pairs;
  std::size_t total = 0;
  for (const Json& s : section) {
    if (!s.is_number_integer() || s.get<long long>() < 0) {
      type_error(key + "[" + std::to_string(pairs.size()) + "]", s, "an integer >= 0");
    }
    pairs.push_back(static_cast<std::size_t>(s.get<long long>()));
    total += pairs.back();
  }
  if (total != d / 2) {
    config_error(key + " adds up to " + std::to_string(total) + " pairs but the rotary dimension " +
                 std::to_string(d) + " has " + std::to_string(d / 2));
  }
  return interleaved ? Axes::mrope_interleaved(pairs) : Axes::sections(pairs);
}

// DeepSeek-V4's two rotations (its inference code; transformers has no deepseek_v4): window
// layers rotate by rope_theta unscaled, compressed layers by compress_rope_theta with the YaRN of
// rope_scaling. Its code scales the softmax, not cos and sin, by YaRN's mscale, so the attention
// factor here is 1 and the mscale is the engine's, as for DeepSeek-V3.
inline void deepseek_v4_layer(const ConfigKeys& keys, const std::string& layer_type, HfRope& out) {
  if (layer_type == "sliding_attention") {
    out.options.scaling = Unscaled{};
    out.rope_type = "default";
    return;
  }
  if (!keys.has("compress_rope_theta")) {
    config_error(keys.path("compress_rope_theta") +
                 " is required for DeepSeek-V4's compressed "
                 "layers");
  }
  out.options.base = positive_of(keys.at("compress_rope_theta"), keys.path("compress_rope_theta"));
  if (Yarn* y = std::get_if<Yarn>(&out.options.scaling)) y->attention_factor = 1.0;
}

// The base of a config without rope_theta (nor rotary_emb_base): the default of the model's
// config class, where this reader has read it. HuggingFace's classes do not share one default,
// and some have changed theirs between releases, so any other model type is an error naming the
// key (E58), never 10000 by guess.
inline double default_base(const ConfigKeys& keys, const std::string& model_type) {
  // LlamaConfig's rope_theta (10000.0); GPT-J's code rotates by 10000 and has no key for it.
  if (model_type == "llama" || model_type == "gptj") return 10000.0;
  config_error(keys.path("rope_theta") + " is required: the default base of model type \"" +
               model_type +
               "\"'s config class is not one this reader knows (HuggingFace's classes differ): "
               "add the model's rope_theta to the config");
}

// The RoPE of one layer type, its layout given.
inline HfRope read_layer(const Json& config, const HfRequest& request, const HfLayout& layout,
                         const std::string& model_type) {
  const std::string& layer_type = request.layer_type;
  const ConfigKeys keys(config);
  const std::vector<std::string> types = hf_layer_types(config);
  bool known_type = false;
  for (const std::string& t : types) known_type = known_type || t == layer_type;
  if (layer_kind(layer_type) != LayerKind::attention) {
    config_error("layer type \"" + layer_type + "\" has no RoPE");
  }
  if (!known_type) {
    std::string list;
    for (const std::string& t : types) list += (list.empty() ? "" : ", ") + t;
    config_error("layer type \"" + layer_type + "\" is not one of the config's (" + list + ")");
  }

  HfRope out;
  out.model_type = model_type;
  if (keys.has("max_position_embeddings")) {
    out.max_position_embeddings = keys.number("max_position_embeddings");
  }
  Options& o = out.options;
  o.sequence_length = request.sequence_length;
  o.layout = layout.layout;
  out.layout_source = layout.source;
  o.head_size = head_size_of(keys, layer_type);

  const bool gemma3_sliding = layer_type == "sliding_attention" && keys.has("rope_local_base_freq");
  std::string where;
  const Json parameters = dictionary_of(keys, types, layer_type, gemma3_sliding, where);
  const HfScheme& scheme = scheme_of(parameters, where, out.rope_type);
  const RopeDictionary dictionary{parameters, where, keys, out.rope_type};

  // Base: the dictionary's rope_theta, rope_local_base_freq (Gemma 3's sliding layers), the
  // top-level rope_theta, GPT-NeoX's rotary_emb_base, else the model's own default.
  if (parameters.contains("rope_theta")) {
    o.base = dictionary.positive("rope_theta");
  } else {
    const char* base_key = gemma3_sliding                ? "rope_local_base_freq"
                           : keys.has("rope_theta")      ? "rope_theta"
                           : keys.has("rotary_emb_base") ? "rotary_emb_base"
                                                         : nullptr;
    if (base_key != nullptr) {
      o.base = positive_of(keys.at(base_key), keys.path(base_key));
    } else {
      o.base = default_base(keys, model_type);
    }
  }

  const std::optional<double> partial = read_rotary_dim(dictionary, o);
  const std::size_t d = o.rotary_dim != 0 ? o.rotary_dim : o.head_size;
  SchemeTarget target{o, d, partial};
  scheme.read(dictionary, target);

  // Ministral 3's query scale, 1 + llama_4_scaling_beta·ln(1 + ⌊p / L0⌋), L0 the
  // original_max_position_embeddings of the dictionary (or the top level).
  if (const std::optional<double> beta = dictionary.optional_number("llama_4_scaling_beta")) {
    out.query_scale = Llama4Scaling{*beta, dictionary.length("original_max_position_embeddings")};
  }
  o.axes = axes_of(dictionary, d);
  if (model_type == "deepseek_v4") deepseek_v4_layer(keys, layer_type, out);
  return out;
}

// Gemma 4's vision encoder, a vision_config of model type gemma4_vision passed on its own:
// Gemma4VisionRotaryEmbedding's θ from rope_parameters.rope_theta over half of head_dim (or of
// hidden_size / num_attention_heads), applied by apply_multidimensional_rope, rotate_half inside
// two blocks: gemma4_vision_options. rope_type "default" and "axial" (both seen in its configs)
// name that rotation; any other, or another key in rope_parameters, is not read by guess.
inline HfRope gemma4_vision(const ConfigKeys& keys, const HfRequest& request) {
  if (request.layout && *request.layout != Layout::half_split) {
    config_error(
        "HfRequest::layout is interleaved, but model type gemma4_vision rotates half "
        "of each block with the other (rotate_half)");
  }
  std::size_t d = 0;
  std::string head = "head_dim";
  if (keys.has("head_dim")) {
    d = keys.count("head_dim");
  } else if (keys.has("hidden_size") && keys.has("num_attention_heads")) {
    const std::size_t t = keys.count("hidden_size"), h = keys.count("num_attention_heads");
    if (t % h != 0) {
      config_error("hidden_size " + std::to_string(t) + " is not a multiple of " +
                   "num_attention_heads " + std::to_string(h) + ": no whole head size");
    }
    d = t / h;
    head = "hidden_size / num_attention_heads";
  } else {
    config_error("no head size: head_dim, or hidden_size and num_attention_heads, is required");
  }
  if (d % 4 != 0) {
    config_error("the head size " + std::to_string(d) + " (" + head +
                 ") is not a multiple of 4: Gemma 4's vision RoPE splits a head into two blocks "
                 "of whole pairs");
  }
  const Json& parameters = keys.at("rope_parameters");
  if (!parameters.is_object()) {
    if (parameters.is_null()) {
      config_error("rope_parameters.rope_theta is required for model type gemma4_vision");
    }
    type_error("rope_parameters", parameters, "an object");
  }
  std::string rope_type = "default";
  for (const auto& item : parameters.items()) {
    if (item.key() == "rope_type") {
      if (!item.value().is_string()) {
        type_error("rope_parameters.rope_type", item.value(), "a string");
      }
      rope_type = item.value().get<std::string>();
    } else if (item.key() != "rope_theta") {
      config_error("rope_parameters." + item.key() +
                   " is not a key this reader understands for model type gemma4_vision "
                   "(rope_theta, rope_type)");
    }
  }
  if (rope_type != "default" && rope_type != "axial") {
    config_error("rope_parameters.rope_type \"" + rope_type +
                 "\" for model type gemma4_vision: this reader knows \"default\" and \"axial\" "
                 "(apply_multidimensional_rope)");
  }
  if (!parameters.contains("rope_theta")) {
    config_error("rope_parameters.rope_theta is required for model type gemma4_vision");
  }
  HfRope out;
  out.options =
      gemma4_vision_options(d, positive_of(parameters["rope_theta"], "rope_parameters.rope_theta"));
  out.model_type = "gemma4_vision";
  out.rope_type = rope_type;
  out.layout_source =
      "gemma4/modeling_gemma4.py: apply_multidimensional_rope, rotate_half inside two blocks "
      "(x, then y)";
  if (keys.has("max_position_embeddings")) {
    out.max_position_embeddings = keys.number("max_position_embeddings");
  }
  return out;
}

// Whether a config is Gemma 4's vision encoder's own (its model_type, not text_config's).
inline bool is_gemma4_vision(const Json& config) {
  return config.is_object() && config.contains("model_type") &&
         config["model_type"] == "gemma4_vision";
}

// The checks every entry point makes first: an object, and no unknown RoPE-looking key.
inline void check_config(const Json& config, const ConfigKeys& keys) {
  if (!config.is_object()) config_error("the config must be a JSON object");
  check_rope_looking_keys(keys.root, "");
  if (keys.has("compress_rope_theta") && model_type_of(keys) != "deepseek_v4") {
    config_error(keys.path("compress_rope_theta") + " is read for model type deepseek_v4 only");
  }
  if (keys.has("rotary") && !keys.boolean("rotary")) {
    config_error(keys.path("rotary") + " is false, but the model type's code rotates");
  }
  if (&keys.text != &keys.root) check_rope_looking_keys(keys.text, "text_config.");
}

}  // namespace detail

ROPE_DETAIL_HF_INLINE HfLayout hf_layout(const std::string& model_type) {
  const HfModelType* row = hf_model_type(model_type);
  if (row == nullptr) {
    detail::config_error("model_type \"" + model_type +
                         "\" is not in the table of model types (rope/hf_models.hpp): pass the "
                         "pairing its q/k weights expect as HfRequest::layout");
  }
  if (row->rotation != HfRotation::interleaved && row->rotation != HfRotation::half_split) {
    detail::config_error("model_type \"" + model_type + "\" has no pairing of its own (" +
                         row->source + ")");
  }
  return {row->rotation == HfRotation::interleaved ? Layout::interleaved : Layout::half_split,
          row->source};
}

ROPE_DETAIL_HF_INLINE std::optional<QueryScale> hf_nope_query_scale(const nlohmann::json& config) {
  const detail::ConfigKeys keys(config);
  const std::string type = detail::model_type_of(keys);
  const bool llama4 = type == "llama4" || type == "llama4_text";
  if (!(keys.has("attn_temperature_tuning") ? keys.boolean("attn_temperature_tuning") : llama4)) {
    return std::nullopt;
  }
  Llama4Temperature t;
  if (keys.has("floor_scale")) {
    t.floor_scale = detail::positive_of(keys.at("floor_scale"), keys.path("floor_scale"));
  }
  if (keys.has("attn_scale")) {
    t.attn_scale = keys.number("attn_scale");
    if (!std::isfinite(t.attn_scale)) {
      detail::config_error(keys.path("attn_scale") + " must be a finite number");
    }
  }
  return t;
}

ROPE_DETAIL_HF_INLINE std::vector<std::string> hf_layer_types(const nlohmann::json& config) {
  const detail::ConfigKeys keys(config);
  const std::string model_type = detail::model_type_of(keys);
  std::vector<std::string> types, seen;
  // A layer type none of whose layers rotates (Cohere2's and EXAONE 4's global layers) is left
  // out, as layers that are not attention are. Each type is looked at once: type_without_rope
  // reads every layer, and asking it again for each layer of a type left out took time in the
  // square of the layer count (4 minutes for 8192 layers of Cohere2 under the fuzzer).
  const auto add = [&](const std::string& t) {
    for (const std::string& u : seen) {
      if (u == t) return;
    }
    seen.push_back(t);
    if (detail::type_without_rope(keys, model_type, t).empty()) types.push_back(t);
  };
  if (keys.has("layer_types")) {
    const nlohmann::json& listed = keys.at("layer_types");
    if (!listed.is_array()) detail::type_error(keys.path("layer_types"), listed, "a list");
    for (const nlohmann::json& t : listed) {
      if (!t.is_string()) detail::type_error(keys.path("layer_types") + "[]", t, "a string");
      if (detail::layer_kind(t.get<std::string>()) == detail::LayerKind::attention) {
        add(t.get<std::string>());
      }
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
  if (keys.has("num_hidden_layers") || keys.has("n_layer")) {
    for (const std::string& t : detail::layer_type_list(keys, model_type)) {
      if (detail::layer_kind(t) == detail::LayerKind::attention) add(t);
    }
    return types;
  }
  if (keys.has("rope_local_base_freq")) return {"sliding_attention", "full_attention"};
  return {"full_attention"};
}

ROPE_DETAIL_HF_INLINE HfRope hf_rope(const nlohmann::json& config, const HfRequest& request) {
  const detail::ConfigKeys keys(config);
  if (detail::is_gemma4_vision(config)) {
    detail::check_rope_looking_keys(config, "");
    return detail::gemma4_vision(keys, request);
  }
  detail::check_config(config, keys);
  const std::string model_type = detail::model_type_of(keys);
  if (const HfModelType* row = hf_model_type(model_type)) {
    if (row->rotation == HfRotation::none && !keys.has("rope_interleave")) {
      detail::config_error("model type \"" + model_type + "\" has no RoPE (" + row->source + ")");
    }
  }
  if (keys.has("mla_use_nope") && keys.boolean("mla_use_nope")) {
    detail::config_error(keys.path("mla_use_nope") +
                         " is true: the attention layers have no RoPE (hf_indexer_rope reads "
                         "the indexer's)");
  }
  const std::string reason = detail::type_without_rope(keys, model_type, request.layer_type);
  if (!reason.empty()) {
    detail::config_error("no layer of type \"" + request.layer_type + "\" has RoPE: " + reason);
  }
  const HfLayout layout = detail::resolve_layout(keys, model_type, request.layout);
  return detail::read_layer(config, request, layout, model_type);
}

ROPE_DETAIL_HF_INLINE HfRope hf_rope(const nlohmann::json& config, const std::string& layer_type,
                                     double sequence_length) {
  return hf_rope(config, HfRequest{layer_type, sequence_length, std::nullopt});
}

ROPE_DETAIL_HF_INLINE std::vector<HfLayer> hf_layers(const nlohmann::json& config,
                                                     const HfRequest& request) {
  const detail::ConfigKeys keys(config);
  detail::check_config(config, keys);
  const std::string model_type = detail::model_type_of(keys);
  const std::vector<std::string> types = detail::layer_type_list(keys, model_type);
  std::vector<HfLayer> layers;
  std::vector<std::pair<std::string, HfRope>> read;  // one read per layer type
  std::optional<HfLayout> layout;
  for (std::size_t i = 0; i < types.size(); ++i) {
    HfLayer layer;
    layer.layer_type = types[i];
    layer.no_rope_reason = detail::no_rope_reason(keys, model_type, types, i);
    if (layer.no_rope_reason.empty()) {
      if (!layout) layout = detail::resolve_layout(keys, model_type, request.layout);
      for (const auto& r : read) {
        if (r.first == types[i]) layer.rope = r.second;
      }
      if (!layer.rope) {
        HfRequest one = request;
        one.layer_type = types[i];
        layer.rope = detail::read_layer(config, one, *layout, model_type);
        read.emplace_back(types[i], *layer.rope);
      }
    }
    layers.push_back(std::move(layer));
  }
  return layers;
}

ROPE_DETAIL_HF_INLINE std::optional<HfRope> hf_indexer_rope(const nlohmann::json& config,
                                                            const HfRequest& request) {
  const detail::ConfigKeys keys(config);
  detail::check_config(config, keys);
  if (!keys.has("index_head_dim")) return std::nullopt;
  const std::string model_type = detail::model_type_of(keys);
  HfLayout layout{Layout::half_split, ""};
  if (keys.has("indexer_rope_interleave")) {
    const bool interleave = keys.boolean("indexer_rope_interleave");
    layout = {interleave ? Layout::interleaved : Layout::half_split,
              keys.path("indexer_rope_interleave") + (interleave ? " true" : " false")};
  } else if (model_type == "deepseek_v32") {
    layout.source =
        "DeepSeek-V3.2's indexer rotates half_split (indexer_rope_interleave absent reads as "
        "false)";
  } else if (model_type == "glm_moe_dsa") {
    layout = {Layout::interleaved,
              "GLM-5's indexer rotates interleaved (GlmMoeDsaIndexer, modular_glm_moe_dsa.py)"};
  } else {
    detail::config_error(keys.path("indexer_rope_interleave") +
                         " is required: the indexer's pairing is not known for model type \"" +
                         model_type + "\"");
  }
  if (request.layout && *request.layout != layout.layout) {
    detail::config_error(std::string("HfRequest::layout ") + to_string(*request.layout) +
                         " contradicts the indexer's " + to_string(layout.layout) + " (" +
                         layout.source + ")");
  }
  HfRequest full = request;
  full.layer_type = "full_attention";
  HfRope out = detail::read_layer(config, full, layout, model_type);
  const std::size_t rotated = keys.count("qk_rope_head_dim");
  out.options.head_size = keys.count("index_head_dim");
  if (rotated > out.options.head_size) {
    detail::config_error(keys.path("qk_rope_head_dim") + " " + std::to_string(rotated) +
                         " is larger than " + keys.path("index_head_dim") + " " +
                         std::to_string(out.options.head_size));
  }
  out.options.rotary_dim = rotated == out.options.head_size ? 0 : rotated;
  return out;
}

ROPE_DETAIL_HF_INLINE HfRope hf_rope_file(const std::string& path, const HfRequest& request) {
  std::ifstream file(path);
  if (!file) ROPE_THROW(std::invalid_argument, "rope: cannot read the config file " + path);
  nlohmann::json config;
#if defined(__cpp_exceptions) || defined(__EXCEPTIONS)
  try {
    config = nlohmann::json::parse(file);
  } catch (const std::exception& e) {  // nlohmann's parse errors, and reading a directory
    ROPE_THROW(std::invalid_argument, "rope: " + path + " is not JSON: " + e.what());
  }
#else
  config = nlohmann::json::parse(file, nullptr, false);
  if (config.is_discarded()) ROPE_THROW(std::invalid_argument, "rope: " + path + " is not JSON");
#endif
  return hf_rope(config, request);
}

ROPE_DETAIL_HF_INLINE HfRope hf_rope_file(const std::string& path, const std::string& layer_type,
                                          double sequence_length) {
  return hf_rope_file(path, HfRequest{layer_type, sequence_length, std::nullopt});
}

}  // namespace ROPE_DETAIL_ISA
}  // namespace rope
