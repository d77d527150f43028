// The peer of bench/model_bench: a plain fp32 Llama forward pass on
// OpenBLAS, the way a straightforward CPU implementation runs a Hugging Face
// checkpoint.
//
// Create upcasts every weight of a loaded model (bf16, fp16 or fp32) once to
// fp32. A step runs contiguous rows of one or more sequences ("slots"), each
// with its own fp32 KV cache [position][kv_head][head_dim] per layer:
//   projections: cblas_sgemv for one row, cblas_sgemm for several;
//   attention: per sequence and query head, scores = Q·K^T and out = P·V
//     through cblas_sgemm, a causal softmax in a plain loop, GQA by mapping
//     query head h to KV head h / (heads / kv_heads);
//   RMSNorm, RoPE (HF rotate_half), SiLU-GLU and residual adds: plain loops.
// Results are close to, not bit-identical with, the LayerProof engine (fp32
// in another order); model_bench checks that they agree on greedy tokens.
//
// Thread safety: none; one caller at a time. OpenBLAS's own thread count
// (openblas_set_num_threads) sets how many threads the BLAS calls use; the
// plain loops run on the calling thread.
#ifndef LAYERPROOF_BENCH_OPENBLAS_LLAMA_H_
#define LAYERPROOF_BENCH_OPENBLAS_LLAMA_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "bench/memory_bandwidth.h"
#include "kernels/model/config.h"
#include "kernels/model/model.h"
#include "kernels/status.h"

namespace layerproof::bench {

class OpenblasLlama {
 public:
  // Tokens of one sequence for one step: they take positions
  // length(slot) .. length(slot) + n - 1.
  struct SlotRows {
    int slot = 0;
    const int32_t* tokens = nullptr;
    int64_t n = 0;
  };

  // Upcasts `model`'s weights (the model may be dropped afterwards). Slots
  // 0 .. slots-1 hold up to max_context positions each.
  static kernels::StatusOr<std::unique_ptr<OpenblasLlama>> Create(
      const kernels::model::Model& model, int slots, int64_t max_context);
  OpenblasLlama(const OpenblasLlama&) = delete;
  OpenblasLlama& operator=(const OpenblasLlama&) = delete;

  const kernels::model::ModelConfig& config() const { return config_; }
  // fp32 bytes of the weights one decode step reads: every layer matrix, the
  // norms and the LM head (the embedding row is not counted).
  int64_t WeightBytesPerToken() const;

  // Empties a slot's KV cache.
  void Reset(int slot);
  int64_t length(int slot) const { return lengths_[slot]; }

  // Runs every row of `batch` (slots distinct) through the model, appends
  // their K/V to the slots' caches and writes the logits of each entry's last
  // row to logits[batch.size()][vocab]. Fails if a slot would overflow.
  kernels::Status Step(const std::vector<SlotRows>& batch, float* logits);

 private:
  using Floats = std::unique_ptr<float[], FreeDeleter>;
  struct Layer {
    Floats input_norm, post_norm, q, k, v, o, gate, up, down;
  };
  OpenblasLlama() = default;
  // y[m][n] = x[m][k] · W[n][k]^T.
  static void Project(const float* x, int64_t m, const float* w, int64_t n,
                      int64_t k, float* y);
  void RmsNorm(const float* x, int64_t rows, const float* gamma,
               float* y) const;
  void Rope(float* x, int64_t rows, int64_t heads,
            const int64_t* positions) const;
  void Attention(int slot, int64_t layer, int64_t row0, int64_t rows,
                 int64_t pos0);
  void EnsureRows(int64_t rows);

  kernels::model::ModelConfig config_;
  int64_t max_context_ = 0;
  std::vector<Layer> layers_;
  Floats embed_, final_norm_, lm_head_;
  std::vector<float> cos_, sin_;  // [position][head_dim / 2]
  // Per slot and layer: K and V, [max_context][kv_heads * head_dim] each.
  std::vector<std::vector<Floats>> k_cache_, v_cache_;
  std::vector<int64_t> lengths_;
  // Activations of the current step.
  int64_t capacity_ = 0;
  std::vector<float> x_, xn_, q_, k_, v_, attn_, gate_, up_, scores_;
};

}  // namespace layerproof::bench

#endif  // LAYERPROOF_BENCH_OPENBLAS_LLAMA_H_
