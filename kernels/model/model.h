// A loaded Llama-family model: its config and its memory-mapped weights.
//
// Model::Load reads a Hugging Face directory (config.json plus
// model.safetensors, or shards listed in model.safetensors.index.json) or a
// GGUF file (kernels/model/gguf_model.h; given as the file, or as a
// directory without config.json that holds exactly one .gguf), validates
// every tensor against the config (kernels/model/tensor_set.h: names,
// dtypes, shapes; a missing or unexpected tensor is an error naming it) and
// computes or reads the cached model digest (kernels/model/digest.h).
// Weights stay in the mapped files; nothing is copied, except a llama GGUF's
// attn_q / attn_k, whose rows are put back in Hugging Face order.
//
// Thread safety: immutable after Load; share freely. The Model must outlive
// every engine and view built on it.
#ifndef LAYERPROOF_KERNELS_MODEL_MODEL_H_
#define LAYERPROOF_KERNELS_MODEL_MODEL_H_

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "kernels/model/config.h"
#include "kernels/model/digest.h"
#include "kernels/model/gguf.h"
#include "kernels/model/safetensors.h"
#include "kernels/model/tensor_set.h"
#include "kernels/status.h"

namespace layerproof::kernels::model {

// One decoder block's tensors (HF names model.layers.{i}.*). The bias views
// are empty (data == nullptr) unless config.qkv_bias.
struct BlockWeights {
  TensorView input_norm;  // input_layernorm.weight [hidden]
  TensorView q_proj;      // [heads * head_dim][hidden]
  TensorView k_proj;      // [kv_heads * head_dim][hidden]
  TensorView v_proj;      // [kv_heads * head_dim][hidden]
  TensorView o_proj;      // [hidden][heads * head_dim]
  TensorView q_bias, k_bias, v_bias;
  TensorView q_norm, k_norm;  // [head_dim], Qwen3 (config.qk_norm) only
  TensorView post_norm;       // post_attention_layernorm.weight [hidden]
  TensorView gate_proj;       // [intermediate][hidden]
  TensorView up_proj;         // [intermediate][hidden]
  TensorView down_proj;       // [hidden][intermediate]
};

struct LoadOptions {
  // Re-hash every tensor even when a valid digest cache exists, and fail
  // with FailedPrecondition if the cache disagrees.
  bool verify_digest = false;
  // Write the digest cache beside the model (skipped silently when the
  // directory is read-only).
  bool write_digest_cache = true;
  // Progress of hashing the weights (bytes done, total) when the digest is
  // computed rather than read from the cache; called from hashing threads.
  DigestProgress progress;
};

class Model {
 public:
  // `path`: a model directory or a .gguf file.
  static StatusOr<std::unique_ptr<Model>> Load(const std::string& path,
                                               const LoadOptions& options = {});
  Model(const Model&) = delete;
  Model& operator=(const Model&) = delete;

  // The model directory: the one given, or the GGUF file's. tokenizer.json
  // and the digest cache live here.
  const std::string& dir() const { return dir_; }
  // What the weights were read from: dir(), or the GGUF file's path.
  const std::string& source() const { return source_; }
  const ModelConfig& config() const { return config_; }
  const ModelDigest& digest() const { return digest_; }

  const TensorView& embed_tokens() const {
    return embed_tokens_;
  }  // [vocab][hidden]
  const TensorView& final_norm() const { return final_norm_; }  // [hidden]
  // lm_head.weight, or embed_tokens when the embeddings are tied.
  const TensorView& lm_head() const { return lm_head_; }  // [vocab][hidden]
  // Block l, 0-based (the block whose output is h^(l+1)).
  const BlockWeights& block(int64_t l) const { return blocks_[l]; }

  // Every tensor of the model, sorted by name.
  const std::map<std::string, TensorView>& tensors() const { return tensors_; }

 private:
  Model() = default;
  // config.json (+ generation_config.json) and the safetensors files;
  // `keyed` gets the files the digest cache is keyed by.
  static Status ReadHfModel(const std::string& dir, Model* m,
                            std::vector<std::string>* keyed);

  std::string dir_;
  std::string source_;
  ModelConfig config_;
  ModelDigest digest_;
  std::vector<std::unique_ptr<SafetensorsFile>> files_;
  std::unique_ptr<GgufFile> gguf_;
  std::vector<std::unique_ptr<unsigned char[]>> owned_;  // un-permuted q/k
  std::map<std::string, TensorView> tensors_;
  TensorView embed_tokens_, final_norm_, lm_head_;
  std::vector<BlockWeights> blocks_;
};

}  // namespace layerproof::kernels::model

#endif  // LAYERPROOF_KERNELS_MODEL_MODEL_H_
