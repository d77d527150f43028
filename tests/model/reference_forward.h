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
// Block-quantized models (GGUF: Q8_0, Q4_0, Q4_K, Q6_K) come in through
// RefModelFromModel instead: the weights are taken from a loaded
// kernels::model::Model, the quantized ones as kernels::quant::DequantizeRow
// decodes them (the exact fp32 weights, docs/determinism.md §3.12) widened to
// double. Only the weight values come from kernels/; the forward itself is the
// same double-precision code. RefForwardOptions::quantize_activations adds
// the engine's other approximation, int8 activations per 32-element unit, so
// the accuracy benchmark (bench/quant_accuracy.cc) can tell the error sources
// apart.
//
// Thread safety: a loaded RefModel is immutable, and any number of threads
// may run forwards on it at once.
#ifndef LAYERPROOF_TESTS_MODEL_REFERENCE_FORWARD_H_
#define LAYERPROOF_TESTS_MODEL_REFERENCE_FORWARD_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace layerproof::kernels::model {
class Model;
}  // namespace layerproof::kernels::model

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
  std::vector<double> input_norm;  // [hidden]
  std::vector<double> wq, bq;      // [heads * head_dim][hidden]
  std::vector<double> wk, bk;      // [kv_heads * head_dim][hidden]
  std::vector<double> wv, bv;      // [kv_heads * head_dim][hidden]
  std::vector<double> wo, bo;      // [hidden][heads * head_dim]
  // Qwen3's per-head RMSNorm gammas of q and k ([head_dim]), applied
  // before RoPE; empty when the checkpoint has none.
  std::vector<double> q_norm, k_norm;
  std::vector<double> post_norm;       // [hidden]
  std::vector<double> w_gate, b_gate;  // [intermediate][hidden]
  std::vector<double> w_up, b_up;      // [intermediate][hidden]
  std::vector<double> w_down, b_down;  // [hidden][intermediate]
  // Which matrices were stored block-quantized (set by RefModelFromModel;
  // all false for LoadRefModel): with quantize_activations their inputs are
  // quantized as the engine quantizes them.
  struct Quantized {
    bool wq = false, wk = false, wv = false, wo = false;
    bool w_gate = false, w_up = false, w_down = false;
  } quantized;
};

struct RefModel {
  RefConfig config;
  std::vector<double> embed;       // [vocab][hidden]
  std::vector<RefBlock> blocks;    // num_layers
  std::vector<double> final_norm;  // [hidden]
  // [vocab][hidden]; empty when the head is tied to `embed`, i.e. when
  // tie_word_embeddings is true or lm_head.weight is absent.
  std::vector<double> lm_head;
  bool head_quantized = false;  // Head() was stored block-quantized

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

// The weights of a loaded model (safetensors or GGUF, any DType) as a
// RefModel: float weights widened exactly, block-quantized ones dequantized
// row by row with kernels::quant::DequantizeRow and widened; the config from
// model.config(). The views already hold Hugging Face order (the loader
// undoes llama's q/k permutation). On failure returns nullptr and sets
// *error (not null) naming the tensor.
std::unique_ptr<RefModel> RefModelFromModel(const kernels::model::Model& model,
                                            std::string* error);

struct RefForwardOptions {
  // Before every block-quantized matrix, quantize its input rows as
  // docs/determinism.md §3.12 "Activations" does, but in double: per unit of
  // 32, d = max |x| / 127, q = clamp(round_half_even(x / d), -127, 127), and
  // the matrix sees q * d. A unit with a non-finite element is NaN; d == 0
  // gives zeros. Without block-quantized matrices this changes nothing.
  bool quantize_activations = false;
};

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
                                     const std::vector<int32_t>& tokens,
                                     const RefForwardOptions& options = {});

// The residual stream of the same prefill: num_layers + 1 entries, h[0] the
// embeddings and h[l] the output of block l (before the final norm), each
// [positions][hidden], row-major. Throws as RefForwardLogits.
std::vector<std::vector<double>> RefHiddenStates(
    const RefModel& m, const std::vector<int32_t>& tokens,
    const RefForwardOptions& options = {});

// Logits [positions][vocab] against reference logits of the same positions,
// position by position: the relative error ||got - want||_2 / ||want||_2 and
// whether the top-1 tokens (first maximum) agree. Add may be called for
// several prompts; the statistics cover every position added.
class LogitComparison {
 public:
  void Add(const double* got, const double* want, int64_t positions,
           int64_t vocab);
  int64_t positions() const { return positions_; }
  double mean_rel_err() const {
    return positions_ ? sum_rel_err_ / positions_ : 0.0;
  }
  double max_rel_err() const { return max_rel_err_; }
  double median_rel_err() const;
  // Share of positions whose relative error is at most `bound`.
  double share_within(double bound) const;
  // Top-1 agreement in [0, 1].
  double top1_agreement() const {
    return positions_ ? static_cast<double>(top1_agree_) / positions_ : 0.0;
  }

 private:
  int64_t positions_ = 0;
  int64_t top1_agree_ = 0;
  double sum_rel_err_ = 0.0;
  double max_rel_err_ = 0.0;
  std::vector<double> rel_errs_;  // per position, in the order added
};

}  // namespace layerproof::testing

#endif  // LAYERPROOF_TESTS_MODEL_REFERENCE_FORWARD_H_
