// The architecture hyper-parameters of a Llama-family decoder, parsed from a
// Hugging Face config.json.
//
// Supported: LlamaForCausalLM (Llama 2/3, rope_scaling type "llama3",
// TinyLlama, SmolLM), MistralForCausalLM, Qwen2ForCausalLM (QKV bias) and
// Qwen3ForCausalLM (per-head q/k RMSNorm, explicit head_dim).
// Anything else is refused with an error naming the field. Thread safety:
// value type.
#ifndef LAYERPROOF_KERNELS_MODEL_CONFIG_H_
#define LAYERPROOF_KERNELS_MODEL_CONFIG_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/ref/rope_table.h"
#include "kernels/status.h"

namespace layerproof::kernels::model {

struct ModelConfig {
  std::string architecture;  // "LlamaForCausalLM", ...
  std::string model_type;    // "llama", "mistral", "qwen2", "qwen3"
  int64_t hidden_size = 0;
  int64_t intermediate_size = 0;
  int64_t num_layers = 0;
  int64_t num_heads = 0;
  int64_t num_kv_heads = 0;  // == num_heads without GQA
  int64_t head_dim = 0;      // hidden_size / num_heads unless given
  int64_t vocab_size = 0;
  int64_t max_positions = 0;  // max_position_embeddings, capped by
                              // sliding_window when one is set
  double rms_norm_eps = 1e-5;
  double rope_theta = 10000.0;
  RopeScaling rope_scaling;  // kNone unless config has rope_scaling
  bool tie_word_embeddings = false;
  bool qkv_bias = false;  // Qwen2, or attention_bias: true
  bool qk_norm = false;   // Qwen3: q_norm / k_norm over each head
  std::vector<int32_t> eos_token_ids;
  int32_t bos_token_id = -1;  // -1: none
};

// Field-by-field equality; doubles compare exactly.
bool operator==(const ModelConfig& a, const ModelConfig& b);

// Parses and validates config.json text. `file` names the file in error
// messages, e.g. "config.json: num_key_value_heads: got 5, want a divisor
// of num_attention_heads (32)".
StatusOr<ModelConfig> ParseModelConfig(std::string_view json_text,
                                       std::string_view file);

// generation_config.json: its eos_token_id, when present, replaces the
// config's eos_token_ids, as Hugging Face's generate() takes the stop ids
// from the generation config (e.g. Qwen3's [<|im_end|>, <|endoftext|>],
// Llama-3.1-Instruct's <|eot_id|> among others). Other fields are ignored:
// sampling is set per request.
Status ApplyGenerationConfig(std::string_view json_text, std::string_view file,
                             ModelConfig* c);

// A config.json for `c`, in the Hugging Face schema (what `model synth`
// writes); ParseModelConfig(WriteModelConfig(c)) == c.
std::string WriteModelConfig(const ModelConfig& c);

}  // namespace layerproof::kernels::model

#endif  // LAYERPROOF_KERNELS_MODEL_CONFIG_H_
