// rope::hf_model_type: how each HuggingFace model type rotates its queries and keys, read from
// that model's modeling code, with the file and function each row was read from. A closed table:
// a model type it does not list has no answer, and the config reader then asks the caller for
// the layout instead of guessing one. Needs no JSON library.
#pragma once

#include <rope/config.hpp>
#if !defined(ROPE_BELOW_CXX17)  // config.hpp stops older standards with one #error

#include <cstddef>
#include <string>

#include <rope/layout.hpp>

namespace rope {
inline namespace ROPE_DETAIL_ISA {

/// How a model type's attention layers rotate q and k.
enum class HfRotation : unsigned char {
  half_split,   ///< pairs (i, i + d/2): rotate_half
  interleaved,  ///< pairs (2i, 2i+1): complex product, rotate_every_two, rotate_half_llm
  none,         ///< no rotary embedding: absolute, learned, relative or ALiBi positions, or none
};

/// One row of the table: a config's model_type, its rotation, and where it was read.
struct HfModelType {
  const char* model_type;
  HfRotation rotation;
  /// The file under transformers' src/transformers/models/ and the function that rotates (or
  /// what the model uses instead); for model types outside transformers, the code that defines
  /// them.
  const char* source;
};

/// The row of `model_type`, or nullptr if the table has none.
const HfModelType* hf_model_type(const std::string& model_type) noexcept;

/// The row of an architecture class name of config.json's `architectures`
/// ("DeepseekV3ForCausalLM" → deepseek_v3), or nullptr: the longest model type whose name,
/// without '_' and '-' and in lower case, begins the class name and is followed by "For",
/// "Model", "LMHeadModel" or nothing.
const HfModelType* hf_model_type_of_class(const std::string& architecture);

/// The whole table, `count` rows, in alphabetical order of model_type.
const HfModelType* hf_model_types(std::size_t& count) noexcept;

// ---- implementation ----------------------------------------------------------------------------

namespace detail {

// Sources are the model's file under transformers/src/transformers/models/.
// clang-format off
inline constexpr HfModelType kHfModelTypes[] = {
    {"albert", HfRotation::none, "albert/modeling_albert.py: absolute position embeddings"},
    {"apertus", HfRotation::half_split, "apertus/modeling_apertus.py: apply_rotary_pos_emb (rotate_half)"},
    {"arcee", HfRotation::half_split, "arcee/modeling_arcee.py: apply_rotary_pos_emb (rotate_half)"},
    {"bart", HfRotation::none, "bart/modeling_bart.py: learned position embeddings"},
    {"bert", HfRotation::none, "bert/modeling_bert.py: absolute position embeddings"},
    {"bert-generation", HfRotation::none, "bert_generation/modeling_bert_generation.py: absolute position embeddings"},
    {"big_bird", HfRotation::none, "big_bird/modeling_big_bird.py: absolute position embeddings"},
    {"bigbird_pegasus", HfRotation::none, "bigbird_pegasus/modeling_bigbird_pegasus.py: learned position embeddings"},
    {"biogpt", HfRotation::none, "biogpt/modeling_biogpt.py: learned position embeddings"},
    {"bitnet", HfRotation::half_split, "bitnet/modeling_bitnet.py: apply_rotary_pos_emb (rotate_half)"},
    {"blenderbot", HfRotation::none, "blenderbot/modeling_blenderbot.py: learned position embeddings"},
    {"blenderbot-small", HfRotation::none, "blenderbot_small/modeling_blenderbot_small.py: learned position embeddings"},
    {"bloom", HfRotation::none, "bloom/modeling_bloom.py: ALiBi"},
    {"camembert", HfRotation::none, "camembert/modeling_camembert.py: absolute position embeddings"},
    {"canine", HfRotation::none, "canine/modeling_canine.py: absolute position embeddings"},
    {"chameleon", HfRotation::half_split, "chameleon/modeling_chameleon.py: apply_rotary_pos_emb (rotate_half)"},
    {"codegen", HfRotation::interleaved, "codegen/modeling_codegen.py: apply_rotary_pos_emb (rotate_every_two)"},
    {"cohere", HfRotation::interleaved, "cohere/modeling_cohere.py: rotate_half of x[..., ::2] and x[..., 1::2], repeat_interleave'd cos/sin"},
    {"cohere2", HfRotation::interleaved, "cohere2/modeling_cohere2.py: Cohere's rotate_half (adjacent pairs); sliding layers only"},
    {"convbert", HfRotation::none, "convbert/modeling_convbert.py: absolute position embeddings"},
    {"ctrl", HfRotation::none, "ctrl/modeling_ctrl.py: sinusoidal position encoding"},
    {"data2vec-text", HfRotation::none, "data2vec/modeling_data2vec_text.py: absolute position embeddings"},
    {"dbrx", HfRotation::half_split, "dbrx/modeling_dbrx.py: apply_rotary_pos_emb (rotate_half)"},
    {"deberta", HfRotation::none, "deberta/modeling_deberta.py: disentangled relative positions"},
    {"deberta-v2", HfRotation::none, "deberta_v2/modeling_deberta_v2.py: disentangled relative positions"},
    {"deepseek_v2", HfRotation::interleaved, "deepseek_v2/modeling_deepseek_v2.py: apply_rotary_emb (view_as_complex: complex multiplication)"},
    {"deepseek_v3", HfRotation::interleaved, "deepseek_v3/modeling_deepseek_v3.py: apply_rotary_pos_emb_interleave (rope_interleave, default true)"},
    {"deepseek_v32", HfRotation::interleaved, "DeepSeek-V3.2's inference code (outside transformers): apply_rotary_emb by complex multiplication, as DeepSeek-V3"},
    {"diffllama", HfRotation::half_split, "diffllama/modeling_diffllama.py: apply_rotary_pos_emb (rotate_half)"},
    {"distilbert", HfRotation::none, "distilbert/modeling_distilbert.py: absolute or sinusoidal position embeddings"},
    {"dots1", HfRotation::half_split, "dots1/modeling_dots1.py: apply_rotary_pos_emb (rotate_half)"},
    {"electra", HfRotation::none, "electra/modeling_electra.py: absolute position embeddings"},
    {"ernie", HfRotation::none, "ernie/modeling_ernie.py: absolute position embeddings"},
    {"ernie4_5", HfRotation::interleaved, "ernie4_5/modeling_ernie4_5.py: apply_rotary_pos_emb (repeat_interleave'd cos/sin, rotate_half of adjacent pairs)"},
    {"ernie4_5_moe", HfRotation::interleaved, "ernie4_5_moe/modeling_ernie4_5_moe.py: apply_rotary_pos_emb (as ERNIE 4.5)"},
    {"esm", HfRotation::half_split, "esm/modeling_esm.py: apply_rotary_pos_emb (rotate_half)"},
    {"exaone4", HfRotation::half_split, "exaone4/modeling_exaone4.py: apply_rotary_pos_emb (rotate_half); global layers NoPE when sliding_window is set"},
    {"falcon", HfRotation::half_split, "falcon/modeling_falcon.py: apply_rotary_pos_emb (rotate_half) unless alibi"},
    {"falcon_h1", HfRotation::half_split, "falcon_h1/modeling_falcon_h1.py: apply_rotary_pos_emb (rotate_half)"},
    {"falcon_mamba", HfRotation::none, "falcon_mamba/modeling_falcon_mamba.py: state-space layers"},
    {"flaubert", HfRotation::none, "flaubert/modeling_flaubert.py: absolute or sinusoidal position embeddings"},
    {"flex_olmo", HfRotation::half_split, "flex_olmo/modeling_flex_olmo.py: apply_rotary_pos_emb (rotate_half)"},
    {"fnet", HfRotation::none, "fnet/modeling_fnet.py: absolute position embeddings"},
    {"fsmt", HfRotation::none, "fsmt/modeling_fsmt.py: sinusoidal position embeddings"},
    {"funnel", HfRotation::none, "funnel/modeling_funnel.py: relative positional attention"},
    {"gemma", HfRotation::half_split, "gemma/modeling_gemma.py: apply_rotary_pos_emb (rotate_half)"},
    {"gemma2", HfRotation::half_split, "gemma2/modeling_gemma2.py: apply_rotary_pos_emb (rotate_half)"},
    {"gemma3", HfRotation::half_split, "gemma3/modeling_gemma3.py: apply_rotary_pos_emb (rotate_half)"},
    {"gemma3_text", HfRotation::half_split, "gemma3/modeling_gemma3.py: apply_rotary_pos_emb (rotate_half)"},
    {"gemma3n", HfRotation::half_split, "gemma3n/modeling_gemma3n.py: apply_rotary_pos_emb (rotate_half)"},
    {"gemma3n_text", HfRotation::half_split, "gemma3n/modeling_gemma3n.py: apply_rotary_pos_emb (rotate_half)"},
    {"gemma4", HfRotation::half_split, "gemma4/modeling_gemma4.py: apply_rotary_pos_emb (rotate_half)"},
    {"gemma4_text", HfRotation::half_split, "gemma4/modeling_gemma4.py: apply_rotary_pos_emb (rotate_half)"},
    {"glm", HfRotation::interleaved, "glm/modeling_glm.py: apply_rotary_pos_emb (rotate_half_llm: adjacent pairs)"},
    {"glm4", HfRotation::interleaved, "glm4/modeling_glm4.py: apply_rotary_pos_emb (rotate_half_llm: adjacent pairs)"},
    {"glm4_moe", HfRotation::half_split, "glm4_moe/modeling_glm4_moe.py: apply_rotary_pos_emb (rotate_half)"},
    {"glm4v", HfRotation::interleaved, "glm4v/modeling_glm4v.py: apply_multimodal_rotary_pos_emb (rotate_half_llm: adjacent pairs)"},
    {"glm4v_text", HfRotation::interleaved, "glm4v/modeling_glm4v.py: apply_multimodal_rotary_pos_emb (rotate_half_llm: adjacent pairs)"},
    {"gpt2", HfRotation::none, "gpt2/modeling_gpt2.py: learned position embeddings"},
    {"gpt_bigcode", HfRotation::none, "gpt_bigcode/modeling_gpt_bigcode.py: learned position embeddings"},
    {"gpt_neo", HfRotation::none, "gpt_neo/modeling_gpt_neo.py: learned position embeddings"},
    {"gpt_neox", HfRotation::half_split, "gpt_neox/modeling_gpt_neox.py: apply_rotary_pos_emb (rotate_half)"},
    {"gpt_oss", HfRotation::half_split, "gpt_oss/modeling_gpt_oss.py: _apply_rotary_emb (first and second halves)"},
    {"gptj", HfRotation::interleaved, "gptj/modeling_gptj.py: apply_rotary_pos_emb (rotate_every_two)"},
    {"granite", HfRotation::half_split, "granite/modeling_granite.py: apply_rotary_pos_emb (rotate_half)"},
    {"granitemoe", HfRotation::half_split, "granitemoe/modeling_granitemoe.py: apply_rotary_pos_emb (rotate_half)"},
    {"granitemoehybrid", HfRotation::half_split, "granitemoehybrid/modeling_granitemoehybrid.py: apply_rotary_pos_emb (rotate_half) when position_embedding_type is \"rope\""},
    {"granitemoeshared", HfRotation::half_split, "granitemoeshared/modeling_granitemoeshared.py: apply_rotary_pos_emb (rotate_half)"},
    {"helium", HfRotation::half_split, "helium/modeling_helium.py: apply_rotary_pos_emb (rotate_half)"},
    {"hunyuan_v1_dense", HfRotation::half_split, "hunyuan_v1_dense/modular_hunyuan_v1_dense.py: Llama's apply_rotary_pos_emb (rotate_half)"},
    {"hunyuan_v1_moe", HfRotation::half_split, "hunyuan_v1_moe/modular_hunyuan_v1_moe.py: Llama's apply_rotary_pos_emb (rotate_half)"},
    {"ibert", HfRotation::none, "ibert/modeling_ibert.py: absolute position embeddings"},
    {"imagegpt", HfRotation::none, "imagegpt/modeling_imagegpt.py: learned position embeddings"},
    {"jamba", HfRotation::none, "jamba/modeling_jamba.py: attention without positional encoding"},
    {"jetmoe", HfRotation::half_split, "jetmoe/modeling_jetmoe.py: apply_rotary_pos_emb (rotate_half)"},
    {"kimi_k2", HfRotation::interleaved, "Kimi K2's remote code (outside transformers): DeepSeek-V3's architecture, rope_interleave"},
    {"layoutlm", HfRotation::none, "layoutlm/modeling_layoutlm.py: absolute position embeddings"},
    {"led", HfRotation::none, "led/modeling_led.py: learned position embeddings"},
    {"lfm2", HfRotation::half_split, "lfm2/modeling_lfm2.py: apply_rotary_pos_emb (rotate_half) on attention layers"},
    {"llama", HfRotation::half_split, "llama/modeling_llama.py: apply_rotary_pos_emb (rotate_half)"},
    {"llama4", HfRotation::interleaved, "llama4/modeling_llama4.py: apply_rotary_emb (view_as_complex: complex multiplication)"},
    {"llama4_text", HfRotation::interleaved, "llama4/modeling_llama4.py: apply_rotary_emb (view_as_complex: complex multiplication)"},
    {"longformer", HfRotation::none, "longformer/modeling_longformer.py: absolute position embeddings"},
    {"longt5", HfRotation::none, "longt5/modeling_longt5.py: relative attention bias"},
    {"luke", HfRotation::none, "luke/modeling_luke.py: absolute position embeddings"},
    {"m2m_100", HfRotation::none, "m2m_100/modeling_m2m_100.py: sinusoidal position embeddings"},
    {"mamba", HfRotation::none, "mamba/modeling_mamba.py: state-space layers"},
    {"mamba2", HfRotation::none, "mamba2/modeling_mamba2.py: state-space layers"},
    {"marian", HfRotation::none, "marian/modeling_marian.py: sinusoidal position embeddings"},
    {"mbart", HfRotation::none, "mbart/modeling_mbart.py: learned position embeddings"},
    {"megatron-bert", HfRotation::none, "megatron_bert/modeling_megatron_bert.py: absolute position embeddings"},
    {"minimax", HfRotation::half_split, "minimax/modeling_minimax.py: apply_rotary_pos_emb (rotate_half)"},
    {"minimax_m2", HfRotation::half_split, "minimax_m2/modeling_minimax_m2.py: apply_rotary_pos_emb (rotate_half)"},
    {"ministral", HfRotation::half_split, "ministral/modeling_ministral.py: apply_rotary_pos_emb (rotate_half)"},
    {"ministral3", HfRotation::half_split, "ministral3/modeling_ministral3.py: apply_rotary_pos_emb (rotate_half)"},
    {"mistral", HfRotation::half_split, "mistral/modeling_mistral.py: apply_rotary_pos_emb (rotate_half)"},
    {"mixtral", HfRotation::half_split, "mixtral/modeling_mixtral.py: apply_rotary_pos_emb (rotate_half)"},
    {"mllama_text_model", HfRotation::half_split, "mllama/modeling_mllama.py: apply_rotary_pos_emb (rotate_half)"},
    {"mobilebert", HfRotation::none, "mobilebert/modeling_mobilebert.py: absolute position embeddings"},
    {"modernbert", HfRotation::half_split, "modernbert/modeling_modernbert.py: apply_rotary_pos_emb (rotate_half)"},
    {"modernbert-decoder", HfRotation::half_split, "modernbert_decoder/modeling_modernbert_decoder.py: apply_rotary_pos_emb (rotate_half)"},
    {"mpnet", HfRotation::none, "mpnet/modeling_mpnet.py: relative attention bias"},
    {"mpt", HfRotation::none, "mpt/modeling_mpt.py: ALiBi"},
    {"mt5", HfRotation::none, "mt5/modeling_mt5.py: relative attention bias"},
    {"mvp", HfRotation::none, "mvp/modeling_mvp.py: learned position embeddings"},
    {"nemotron", HfRotation::half_split, "nemotron/modeling_nemotron.py: apply_rotary_pos_emb (rotate_half)"},
    {"nllb-moe", HfRotation::none, "nllb_moe/modeling_nllb_moe.py: sinusoidal position embeddings"},
    {"olmo", HfRotation::half_split, "olmo/modeling_olmo.py: apply_rotary_pos_emb (rotate_half)"},
    {"olmo2", HfRotation::half_split, "olmo2/modeling_olmo2.py: apply_rotary_pos_emb (rotate_half)"},
    {"olmo3", HfRotation::half_split, "olmo3/modeling_olmo3.py: apply_rotary_pos_emb (rotate_half)"},
    {"olmoe", HfRotation::half_split, "olmoe/modeling_olmoe.py: apply_rotary_pos_emb (rotate_half)"},
    {"openai-gpt", HfRotation::none, "openai/modeling_openai.py: learned position embeddings"},
    {"opt", HfRotation::none, "opt/modeling_opt.py: learned position embeddings"},
    {"pegasus", HfRotation::none, "pegasus/modeling_pegasus.py: sinusoidal position embeddings"},
    {"pegasus_x", HfRotation::none, "pegasus_x/modeling_pegasus_x.py: sinusoidal position embeddings"},
    {"persimmon", HfRotation::half_split, "persimmon/modeling_persimmon.py: apply_rotary_pos_emb (rotate_half)"},
    {"phi", HfRotation::half_split, "phi/modeling_phi.py: apply_rotary_pos_emb (rotate_half)"},
    {"phi3", HfRotation::half_split, "phi3/modeling_phi3.py: apply_rotary_pos_emb (rotate_half)"},
    {"phi3_v", HfRotation::half_split, "Phi-3-vision's remote code (outside transformers): Phi-3's apply_rotary_pos_emb (rotate_half)"},
    {"phi4_multimodal", HfRotation::half_split, "phi4_multimodal/modeling_phi4_multimodal.py: apply_rotary_pos_emb (rotate_half)"},
    {"phimoe", HfRotation::half_split, "phimoe/modeling_phimoe.py: apply_rotary_pos_emb (rotate_half)"},
    {"plbart", HfRotation::none, "plbart/modeling_plbart.py: learned position embeddings"},
    {"prophetnet", HfRotation::none, "prophetnet/modeling_prophetnet.py: learned position embeddings"},
    {"qwen2", HfRotation::half_split, "qwen2/modeling_qwen2.py: apply_rotary_pos_emb (rotate_half)"},
    {"qwen2_5_vl", HfRotation::half_split, "qwen2_5_vl/modeling_qwen2_5_vl.py: apply_multimodal_rotary_pos_emb (rotate_half)"},
    {"qwen2_5_vl_text", HfRotation::half_split, "qwen2_5_vl/modeling_qwen2_5_vl.py: apply_multimodal_rotary_pos_emb (rotate_half)"},
    {"qwen2_moe", HfRotation::half_split, "qwen2_moe/modeling_qwen2_moe.py: apply_rotary_pos_emb (rotate_half)"},
    {"qwen2_vl", HfRotation::half_split, "qwen2_vl/modeling_qwen2_vl.py: apply_multimodal_rotary_pos_emb (rotate_half)"},
    {"qwen2_vl_text", HfRotation::half_split, "qwen2_vl/modeling_qwen2_vl.py: apply_multimodal_rotary_pos_emb (rotate_half)"},
    {"qwen3", HfRotation::half_split, "qwen3/modeling_qwen3.py: apply_rotary_pos_emb (rotate_half)"},
    {"qwen3_5", HfRotation::half_split, "qwen3_5/modeling_qwen3_5.py: apply_rotary_pos_emb (rotate_half, partial)"},
    {"qwen3_5_moe", HfRotation::half_split, "qwen3_5_moe/modeling_qwen3_5_moe.py: apply_rotary_pos_emb (rotate_half, partial)"},
    {"qwen3_5_moe_text", HfRotation::half_split, "qwen3_5_moe/modeling_qwen3_5_moe.py: apply_rotary_pos_emb (rotate_half, partial)"},
    {"qwen3_5_text", HfRotation::half_split, "qwen3_5/modeling_qwen3_5.py: apply_rotary_pos_emb (rotate_half, partial)"},
    {"qwen3_moe", HfRotation::half_split, "qwen3_moe/modeling_qwen3_moe.py: apply_rotary_pos_emb (rotate_half)"},
    {"qwen3_next", HfRotation::half_split, "qwen3_next/modeling_qwen3_next.py: apply_rotary_pos_emb (rotate_half, partial)"},
    {"qwen3_vl", HfRotation::half_split, "qwen3_vl/modeling_qwen3_vl.py: apply_rotary_pos_emb (rotate_half)"},
    {"qwen3_vl_moe", HfRotation::half_split, "qwen3_vl_moe/modeling_qwen3_vl_moe.py: apply_rotary_pos_emb (rotate_half)"},
    {"qwen3_vl_moe_text", HfRotation::half_split, "qwen3_vl_moe/modeling_qwen3_vl_moe.py: apply_rotary_pos_emb (rotate_half)"},
    {"qwen3_vl_text", HfRotation::half_split, "qwen3_vl/modeling_qwen3_vl.py: apply_rotary_pos_emb (rotate_half)"},
    {"reformer", HfRotation::none, "reformer/modeling_reformer.py: axial position embeddings"},
    {"rembert", HfRotation::none, "rembert/modeling_rembert.py: absolute position embeddings"},
    {"roberta", HfRotation::none, "roberta/modeling_roberta.py: absolute position embeddings"},
    {"roberta-prelayernorm", HfRotation::none, "roberta_prelayernorm/modeling_roberta_prelayernorm.py: absolute position embeddings"},
    {"roc_bert", HfRotation::none, "roc_bert/modeling_roc_bert.py: absolute position embeddings"},
    {"roformer", HfRotation::interleaved, "roformer/modeling_roformer.py: apply_rotary_position_embeddings (sin/cos repeated per pair, adjacent pairs)"},
    {"rwkv", HfRotation::none, "rwkv/modeling_rwkv.py: recurrent layers"},
    {"seed_oss", HfRotation::half_split, "seed_oss/modeling_seed_oss.py: apply_rotary_pos_emb (rotate_half)"},
    {"smollm3", HfRotation::half_split, "smollm3/modeling_smollm3.py: apply_rotary_pos_emb (rotate_half) where no_rope_layers is 1"},
    {"splinter", HfRotation::none, "splinter/modeling_splinter.py: absolute position embeddings"},
    {"squeezebert", HfRotation::none, "squeezebert/modeling_squeezebert.py: absolute position embeddings"},
    {"stablelm", HfRotation::half_split, "stablelm/modeling_stablelm.py: apply_rotary_pos_emb (rotate_half, partial)"},
    {"starcoder2", HfRotation::half_split, "starcoder2/modeling_starcoder2.py: apply_rotary_pos_emb (rotate_half)"},
    {"switch_transformers", HfRotation::none, "switch_transformers/modeling_switch_transformers.py: relative attention bias"},
    {"t5", HfRotation::none, "t5/modeling_t5.py: relative attention bias"},
    {"tapas", HfRotation::none, "tapas/modeling_tapas.py: absolute position embeddings"},
    {"umt5", HfRotation::none, "umt5/modeling_umt5.py: relative attention bias"},
    {"vaultgemma", HfRotation::half_split, "vaultgemma/modeling_vaultgemma.py: apply_rotary_pos_emb (rotate_half)"},
    {"xglm", HfRotation::none, "xglm/modeling_xglm.py: sinusoidal position embeddings"},
    {"xlm", HfRotation::none, "xlm/modeling_xlm.py: absolute or sinusoidal position embeddings"},
    {"xlm-roberta", HfRotation::none, "xlm_roberta/modeling_xlm_roberta.py: absolute position embeddings"},
    {"xlm-roberta-xl", HfRotation::none, "xlm_roberta_xl/modeling_xlm_roberta_xl.py: absolute position embeddings"},
    {"xlnet", HfRotation::none, "xlnet/modeling_xlnet.py: relative positional encoding"},
    {"xmod", HfRotation::none, "xmod/modeling_xmod.py: absolute position embeddings"},
    {"yoso", HfRotation::none, "yoso/modeling_yoso.py: absolute position embeddings"},
};
// clang-format on

// Class-name stems that do not spell their model type ("HunYuanDenseV1" is hunyuan_v1_dense).
struct HfClassAlias {
  const char* stem;  // lower case, without '_' and '-'
  const char* model_type;
};
inline constexpr HfClassAlias kHfClassAliases[] = {
    {"hunyuandensev1", "hunyuan_v1_dense"},
    {"hunyuanmoev1", "hunyuan_v1_moe"},
    {"openaigpt", "openai-gpt"},
};

// Lower case without '_' and '-': "Qwen2_5_VL" and "qwen2_5_vl" both read "qwen25vl".
inline std::string hf_folded(const std::string& name) {
  std::string out;
  for (const char c : name) {
    if (c == '_' || c == '-') continue;
    out += c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
  }
  return out;
}

// What may follow a model type's stem in a class name.
inline bool hf_class_suffix(const std::string& rest) {
  return rest.empty() || rest.compare(0, 3, "for") == 0 || rest == "model" ||
         rest == "lmheadmodel" || rest == "textmodel";
}

}  // namespace detail

inline const HfModelType* hf_model_types(std::size_t& count) noexcept {
  count = sizeof(detail::kHfModelTypes) / sizeof(detail::kHfModelTypes[0]);
  return detail::kHfModelTypes;
}

inline const HfModelType* hf_model_type(const std::string& model_type) noexcept {
  for (const HfModelType& row : detail::kHfModelTypes) {
    if (model_type == row.model_type) return &row;
  }
  return nullptr;
}

inline const HfModelType* hf_model_type_of_class(const std::string& architecture) {
  const std::string folded = detail::hf_folded(architecture);
  for (const detail::HfClassAlias& alias : detail::kHfClassAliases) {
    const std::string stem = alias.stem;
    if (folded.compare(0, stem.size(), stem) == 0 &&
        detail::hf_class_suffix(folded.substr(stem.size()))) {
      return hf_model_type(alias.model_type);
    }
  }
  const HfModelType* best = nullptr;
  std::size_t best_size = 0;
  for (const HfModelType& row : detail::kHfModelTypes) {
    const std::string stem = detail::hf_folded(row.model_type);
    if (stem.size() > best_size && folded.compare(0, stem.size(), stem) == 0 &&
        detail::hf_class_suffix(folded.substr(stem.size()))) {
      best = &row;
      best_size = stem.size();
    }
  }
  return best;
}

}  // namespace ROPE_DETAIL_ISA
}  // namespace rope

#endif  // !ROPE_BELOW_CXX17
