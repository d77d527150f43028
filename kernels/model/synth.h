// Seeded synthetic Llama-shaped models in the Hugging Face format: the
// embedded default model of the demo and the tests (no downloads).
//
// `layerproof model synth --preset tiny|small|medium|qwen3-tiny --seed N
// --out DIR` writes config.json and model.safetensors (bf16 by default);
// text::SynthesizeTextModel adds a byte-level BPE tokenizer.json. Weights are uniform with the standard deviation of a
// variance-preserving init (1/sqrt(fan_in)), output projections scaled by
// 1/sqrt(2L), so activations stay O(1) through every layer, as in a trained
// model, and attention is far from uniform. Every value comes from Philox
// keyed by the seed and indexed by (tensor name, element): the files are
// byte-identical on every platform. Thread safety: pure functions, except
// for the files written.
#ifndef LAYERPROOF_KERNELS_MODEL_SYNTH_H_
#define LAYERPROOF_KERNELS_MODEL_SYNTH_H_

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "kernels/dtype.h"
#include "kernels/model/config.h"
#include "kernels/status.h"

namespace layerproof::kernels::model {

// tiny: ~1M params (unit tests); small: ~27M, GQA, tied embeddings (the
// demo default); medium: TinyLlama's block shape (hidden 2048, 32 heads,
// 8 KV heads, FFN 5632, vocab 32000) with 16 layers, ~0.85B params
// (benchmarks); qwen3-tiny: tiny's size in Qwen3's shape (per-head q/k
// norms, head_dim 64 with hidden 128 and 4 heads, tied embeddings).
StatusOr<ModelConfig> SynthPreset(std::string_view preset);

struct SynthOptions {
  uint64_t seed = 0;
  DType dtype = DType::kBF16;
  // Called after each tensor with the parameters written so far and the
  // total; may be empty.
  std::function<void(int64_t done, int64_t total)> progress;
};

// Writes the model `config` describes into `out_dir` (created if missing;
// existing model files are replaced).
Status SynthesizeModel(const ModelConfig& config, const SynthOptions& options,
                       const std::string& out_dir);

// Parameters of a model with this config.
int64_t ParameterCount(const ModelConfig& config);

}  // namespace layerproof::kernels::model

#endif  // LAYERPROOF_KERNELS_MODEL_SYNTH_H_
