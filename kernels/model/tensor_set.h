// The tensors a model config requires: their Hugging Face names, shapes and
// dtypes, checked in one place for every file format (safetensors
// directories and GGUF files).
//
// A shape error names the config fields the shape comes from, spelled the
// way the source spells them: "(config intermediate_size 24, hidden_size
// 16)" for config.json, "(llama.feed_forward_length 64,
// llama.embedding_length 32)" for GGUF metadata.
//
// Thread safety: pure functions.
#ifndef LAYERPROOF_KERNELS_MODEL_TENSOR_SET_H_
#define LAYERPROOF_KERNELS_MODEL_TENSOR_SET_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "kernels/model/config.h"
#include "kernels/model/safetensors.h"
#include "kernels/status.h"

namespace layerproof::kernels::model {

// How a source names the config fields shapes come from.
struct ConfigFieldNames {
  std::string prefix;  // before the list of fields, e.g. "config "
  std::string hidden, intermediate, heads, kv_heads, vocab, layers, tied;
  std::string model;  // what the tensors belong to, e.g. "LlamaForCausalLM"
};
// config.json's names, for c.architecture.
ConfigFieldNames ConfigJsonFieldNames(const ModelConfig& c);
// GGUF's <arch>.* keys.
ConfigFieldNames GgufFieldNames(const std::string& arch);

struct ExpectedTensor {
  std::string name;            // Hugging Face name
  std::vector<int64_t> shape;  // [rows, cols] or [n]
  std::string why;             // "(config hidden_size 16)"
};

// Every tensor `c` requires, in no particular order.
std::vector<ExpectedTensor> ExpectedTensors(const ModelConfig& c,
                                            const ConfigFieldNames& names);

// The HF tensor names `config` requires, sorted.
std::vector<std::string> ExpectedTensorNames(const ModelConfig& config);

// Where a tensor is, for errors: "dir/model.safetensors: NAME" or
// "m.gguf: tensor blk.0.attn_q.weight (NAME)". `t` is null for a tensor
// that is missing.
using TensorWhere =
    std::function<std::string(const std::string& name, const TensorView* t)>;

// Every expected tensor present with its shape, and nothing else; vectors
// (norms, biases) in F32, F16 or BF16 (a block-quantized vector is
// Unimplemented); matrices in any of those or a block-quantized type.
Status CheckModelTensors(const ModelConfig& c,
                         const std::map<std::string, TensorView>& tensors,
                         const ConfigFieldNames& names,
                         const TensorWhere& where);

// "[24, 16]".
std::string ShapeText(const std::vector<int64_t>& shape);

}  // namespace layerproof::kernels::model

#endif  // LAYERPROOF_KERNELS_MODEL_TENSOR_SET_H_
