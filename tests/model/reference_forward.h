// An independent float64 forward pass of a Llama-family decoder
// (LlamaForCausalLM, MistralForCausalLM, Qwen2ForCausalLM), for tests only.
//
// It is the yardstick the deterministic engine is measured against, so it
// shares no code with kernels/: it reads config.json and the safetensors
// files itself, widens every weight (BF16, F16, F32) to double, and computes
// what Hugging Face transformers computes, in double, with plain loops and
// sequential sums. The engine must match its logits to a relative error of
// 1e-4; nothing here is bit-exact with the engine. Sliding-window attention
// (Mistral, Qwen2) is not modelled: sequences must fit inside the window.
//
// Thread safety: a loaded RefModel is immutable, and any number of threads
// may run forwards on it at once.
#ifndef LAYERPROOF_TESTS_MODEL_REFERENCE_FORWARD_H_
#define LAYERPROOF_TESTS_MODEL_REFERENCE_FORWARD_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace layerproof::testing {

// The config.json fields the forward reads, with transformers' defaults.
struct RefConfig {
  int64_t hidden_size = 0;
  int64_t intermediate_size = 0;
  int64_t num_layers = 0;
  int64_t num_heads = 0;
  int64_t num_kv_heads = 0;  // num_key_value_heads, default num_heads
  int64_t head_dim = 0;      // default hidden_size / num_heads
  int64_t vocab_size = 0;
  double rms_norm_eps = 1e-6;
  double rope_theta = 10000.0;
  bool tie_word_embeddings = false;
  // rope_scaling with rope_type (or type) "llama3"; other kinds are refused.
  bool llama3_rope = false;
  double rope_factor = 1.0;
  double low_freq_factor = 1.0;
  double high_freq_factor = 4.0;
  double original_max_positions = 8192.0;
};

// One decoder block. Matrices are row-major [out][in] as stored; a bias is
// empty when the checkpoint has none.
struct RefBlock {
  std::vector<double> input_norm;      // [hidden]
  std::vector<double> wq, bq;          // [heads * head_dim][hidden]
  std::vector<double> wk, bk;          // [kv_heads * head_dim][hidden]
  std::vector<double> wv, bv;          // [kv_heads * head_dim][hidden]
  std::vector<double> wo, bo;          // [hidden][heads * head_dim]
  // Qwen3's per-head RMSNorm gammas of q and k ([head_dim]), applied
  // before RoPE; empty when the checkpoint has none.
  std::vector<double> q_norm, k_norm;
  std::vector<double> post_norm;       // [hidden]
  std::vector<double> w_gate, b_gate;  // [intermediate][hidden]
  std::vector<double> w_up, b_up;      // [intermediate][hidden]
  std::vector<double> w_down, b_down;  // [hidden][intermediate]
};

struct RefModel {
  RefConfig config;
  std::vector<double> embed;       // [vocab][hidden]
  std::vector<RefBlock> blocks;    // num_layers
  std::vector<double> final_norm;  // [hidden]
  // [vocab][hidden]; empty when the head is tied to `embed`, i.e. when
  // tie_word_embeddings is true or lm_head.weight is absent.
  std::vector<double> lm_head;

  const std::vector<double>& Head() const {
    return lm_head.empty() ? embed : lm_head;
  }
};

// Loads the model in the Hugging Face directory `dir`: config.json and
// either model.safetensors or the shards model.safetensors.index.json names.
// On failure returns nullptr and sets *error (which must not be null) to a
// message naming the file and the field or tensor at fault.
std::unique_ptr<RefModel> LoadRefModel(const std::string& dir,
                                       std::string* error);

// RoPE inverse frequencies, head_dim / 2 of them: 1 / theta^(2i / head_dim),
// then rescaled as transformers' _compute_llama3_parameters when the config
// has llama3 rope scaling.
std::vector<double> RefRopeInvFreq(const RefConfig& config);

// Rotates one head vector `x` (head_dim values) in place for position `pos`,
// pairing element i with i + head_dim / 2 (transformers' rotate_half).
void RefApplyRope(const std::vector<double>& inv_freq, int64_t pos, double* x,
                  int64_t head_dim);

// Logits of a full causal prefill of `tokens`: [positions][vocab], row-major.
// Throws std::invalid_argument for a token outside [0, vocab_size).
std::vector<double> RefForwardLogits(const RefModel& m,
                                     const std::vector<int32_t>& tokens);

// The residual stream of the same prefill: num_layers + 1 entries, h[0] the
// embeddings and h[l] the output of block l (before the final norm), each
// [positions][hidden], row-major. Throws as RefForwardLogits.
std::vector<std::vector<double>> RefHiddenStates(
    const RefModel& m, const std::vector<int32_t>& tokens);

}  // namespace layerproof::testing

#endif  // LAYERPROOF_TESTS_MODEL_REFERENCE_FORWARD_H_
