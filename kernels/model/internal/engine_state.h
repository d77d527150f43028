// The engine's private state: prepared weights, sequences with their KV
// caches, and the activation workspace of one batch. Shared by engine.cc
// (scheduling) and engine_block.cc (the forward pass).
#ifndef LAYERPROOF_KERNELS_MODEL_INTERNAL_ENGINE_STATE_H_
#define LAYERPROOF_KERNELS_MODEL_INTERNAL_ENGINE_STATE_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "kernels/model/engine.h"
#include "kernels/model/executor.h"

namespace layerproof::kernels::model {

struct Engine::LayerParams {
  std::unique_ptr<Vector> input_norm, post_norm;
  std::unique_ptr<Matrix> q, k, v, o, gate, up, down;
  Bias q_bias, k_bias, v_bias;  // count() == 0 when the model has none
  std::unique_ptr<Vector> q_norm, k_norm;  // null unless config.qk_norm
};

// One layer's KV cache: [capacity][n_kv_heads][head_dim] each, the layout
// AttentionArgs reads.
struct KvLayer {
  Buffer k, v;
};

struct Engine::Sequence {
  SequenceId id = 0;
  GenerationRequest request;
  std::vector<int32_t> tokens;  // prompt, then generated tokens
  int64_t n_cached = 0;         // positions whose K/V are in the cache
  int64_t generated = 0;
  bool cancelled = false;
  std::vector<KvLayer> kv;  // one per layer
  int64_t kv_capacity = 0;  // positions each KvLayer holds
};

// The rows of one sequence within a batch: rows row0 .. row0 + rows - 1 are
// its positions pos0 .. pos0 + rows - 1. Block l reads and extends
// kv[l - kv_base].
struct Engine::Segment {
  SequenceId seq = 0;
  int64_t row0 = 0;
  int64_t rows = 0;
  int64_t pos0 = 0;
  std::vector<KvLayer>* kv = nullptr;
  int64_t kv_base = 0;
  LayerTap* tap = nullptr;
};

// Activations of a batch of `capacity` rows, in executor memory, plus host
// staging for taps.
struct Engine::Workspace {
  int64_t capacity = 0;
  Buffer x, xn, q, k, v, attn, gate, up;
  Buffer head_in, logits;  // the rows that sample, and their logits
  std::vector<float> host_rows;
};

}  // namespace layerproof::kernels::model

#endif  // LAYERPROOF_KERNELS_MODEL_INTERNAL_ENGINE_STATE_H_
