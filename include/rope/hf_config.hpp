// rope::hf_rope: the Options of one layer type of a checkpoint, read from its HuggingFace
// config.json; rope::hf_layers: the answer for every layer, RoPE or none. The only header that
// needs nlohmann/json; <rope/rope.hpp> does not include it. Linking the CMake target
// rope::hf_config compiles the definitions once (src/hf_config.cpp), and a translation unit that
// includes this header then reads only the declarations and nlohmann's forward declarations.
//
// The keys and their precedence follow transformers' RotaryEmbeddingConfigMixin and each
// model's rotary embedding (docs/scaling.md, "Reading config.json", lists them with the traps).
// The reader knows or says so: a key it would read of the wrong JSON type, a key that looks like
// a RoPE key but is not one it understands, a model type whose pairing the table
// (rope/hf_models.hpp) does not give: each is an error that names the key's path and what to do.
#pragma once

#include <rope/config.hpp>
#if !defined(ROPE_BELOW_CXX17)  // config.hpp stops older standards with one #error

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include <rope/hf_models.hpp>
#include <rope/layout.hpp>
#include <rope/options.hpp>
#include <rope/query_scale.hpp>

#include <nlohmann/json_fwd.hpp>

namespace rope {
inline namespace ROPE_DETAIL_ISA {

/// What hf_rope read for one layer type.
struct HfRope {
  /// head_size, base, layout, scaling, sequence_length, rotary_dim and axes of the layer;
  /// max_positions and the other fields keep their defaults.
  Options options;
  /// The config's model_type (of text_config when nested; from `architectures` when the config
  /// has none), which chose the layout.
  std::string model_type;
  /// HuggingFace's rope_type after standardisation: default, linear, dynamic, yarn, longrope,
  /// llama3 or proportional ("mrope" reads as default, "su" as longrope).
  std::string rope_type;
  /// Why options.layout is what it is: the table row (rope/hf_models.hpp), rope_interleave, or
  /// the caller's HfRequest::layout.
  std::string layout_source;
  /// max_position_embeddings, or 0 if the config has none.
  double max_position_embeddings = 0;
  /// The queries' position-dependent scale after RoPE, where the RoPE dictionary has
  /// llama_4_scaling_beta (Ministral 3): Llama4Scaling with its original_max_position_embeddings.
  /// Pass it to Rotary::apply_qk(q, k, positions, *query_scale).
  std::optional<QueryScale> query_scale;
};

/// What the caller asks of the reader, beyond the config.
struct HfRequest {
  /// The layer type ("full_attention", "sliding_attention", ...).
  std::string layer_type = "full_attention";
  /// Becomes Options::sequence_length (DynamicNTK, LongRope and HunYuan's alpha depend on it; 0
  /// reads as HuggingFace's seq_len None).
  double sequence_length = 0;
  /// The pairing the checkpoint's q/k weights expect, for a model type the table does not list.
  /// Where the table or the config's rope_interleave gives one too, the two must agree.
  std::optional<Layout> layout{};
};

/// The RoPE of one layer type of a parsed config.json. Gemma 4's vision_config passed alone
/// (model type gemma4_vision) reads as gemma4_vision_options(head_dim, rope_theta): half_split
/// pairs within the two blocks of its multi-axis map (docs/multimodal.md).
///
/// Throws std::invalid_argument naming the key's path for: a key it reads of the wrong JSON type
/// (E59), a key that looks like a RoPE key but is not one it understands (E57), an unknown
/// rope_type (E56), a missing required key (E58), a factor or length that is not finite and > 0
/// (E59), a layer type the config does not have or one without RoPE (E60), a head size that is
/// 0 or does not divide (E63), and a model type whose pairing it does not know (E75).
HfRope hf_rope(const nlohmann::json& config, const HfRequest& request);
HfRope hf_rope(const nlohmann::json& config, const std::string& layer_type = "full_attention",
               double sequence_length = 0);

/// hf_rope of the config.json at `path`. Throws std::invalid_argument if the file cannot be
/// read or is not JSON (E62), and as hf_rope.
HfRope hf_rope_file(const std::string& path, const HfRequest& request);
HfRope hf_rope_file(const std::string& path, const std::string& layer_type = "full_attention",
                    double sequence_length = 0);

/// One layer of a model: its type and its RoPE, or none and why.
struct HfLayer {
  /// layer_types[i], or what HuggingFace derives where the config lists none.
  std::string layer_type;
  /// The layer's RoPE; empty when the layer does not rotate.
  std::optional<HfRope> rope;
  /// Why it does not rotate (the key or table row that says so); empty when it does.
  std::string no_rope_reason;
};

/// The answer for every layer 0 .. num_hidden_layers − 1 of a config: layer_types (full,
/// sliding, chunked, linear_attention, mamba, conv), no_rope_layers (1 means RoPE, for SmolLM3
/// and Llama 4), Cohere2's and EXAONE 4's global layers, mla_use_nope, position_embedding_type
/// (granitemoehybrid), Falcon's alibi, and model types without RoPE. `request.layer_type` is not
/// read. Throws as hf_rope, and E76 for per-layer keys that do not fit the layer count or whose
/// meaning for the model type is not known.
std::vector<HfLayer> hf_layers(const nlohmann::json& config, const HfRequest& request = {});

/// The RoPE of a DeepSeek sparse-attention indexer (DeepSeek-V3.2, GLM-5): its head of
/// index_head_dim rotates its first qk_rope_head_dim coordinates with the model's base and
/// scaling, paired as indexer_rope_interleave says (absent: half_split for deepseek_v32,
/// interleaved for glm_moe_dsa, an error E75 for other model types). Empty when the config has no
/// indexer (no index_head_dim).
std::optional<HfRope> hf_indexer_rope(const nlohmann::json& config, const HfRequest& request = {});

/// The layer types with RoPE of a config, in order of first appearance: its layer_types (without
/// linear_attention and other layers that are not attention), else the keys of a per-layer-type
/// rope_parameters, else the types of HuggingFace's layer patterns (hf_layers), else
/// sliding_attention and full_attention for a config with rope_local_base_freq (Gemma 3), else
/// full_attention; a type none of whose layers rotates (Cohere2's and EXAONE 4's global layers) is
/// left out. hf_layers says which layers of those types rotate.
std::vector<std::string> hf_layer_types(const nlohmann::json& config);

/// The query scale of Llama 4's layers without RoPE (its no_rope_layers): Llama4Temperature
/// {floor_scale, attn_scale} when attn_temperature_tuning is true (HuggingFace's default for
/// model_type llama4 and llama4_text when the key is absent; floor_scale 8192 and attn_scale 0.1
/// likewise), else none. Pass it to rope::scale_queries for those layers. Throws
/// std::invalid_argument for a value of the wrong type or a floor_scale not finite and > 0 (E59).
std::optional<QueryScale> hf_nope_query_scale(const nlohmann::json& config);

/// The pair layout a checkpoint's q/k projection weights expect, by model_type, and its source:
/// the row of the table in rope/hf_models.hpp. Throws std::invalid_argument (E75) for a model
/// type the table does not list or lists without RoPE.
struct HfLayout {
  Layout layout;
  std::string source;
};
HfLayout hf_layout(const std::string& model_type);

}  // namespace ROPE_DETAIL_ISA
}  // namespace rope

// The definitions: here, or compiled once in the rope::hf_config library (src/hf_config.cpp),
// whose users get ROPE_HF_CONFIG_COMPILED and include only the declarations above.
#if !defined(ROPE_HF_CONFIG_COMPILED) || defined(ROPE_HF_CONFIG_SOURCE)
#include <rope/detail/hf_config_impl.hpp>
#endif

#endif  // !ROPE_BELOW_CXX17
