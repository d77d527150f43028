// Llama-family models in GGUF files: reading one into a ModelConfig and
// Hugging Face-named tensors, and writing one from a safetensors model.
//
// Reading (ReadGgufModel) maps general.architecture "llama", "qwen2" and
// "qwen3" and their <arch>.* keys to a ModelConfig (validated by the same
// ParseModelConfig that reads config.json), renames every tensor
// (token_embd.weight -> model.embed_tokens.weight, blk.N.attn_q.weight ->
// model.layers.N.self_attn.q_proj.weight, ...), checks the tensor set and
// every shape against the config, and for "llama" undoes the row
// permutation llama.cpp's convert_hf_to_gguf.py applies to attn_q and attn_k
// (PermuteQkRows), so the views hold exactly what the Hugging Face
// checkpoint holds, quantized. A "rope_freqs.weight" tensor (how llama.cpp
// stores Llama-3 RoPE scaling) is turned back into RopeScaling kLlama3.
// The tokenizer is not read: it comes from tokenizer.json beside the file.
//
// Writing (WriteGgufModel) is the inverse: it writes what llama.cpp's
// converter would (the same names, permutation, rope_freqs and keys), the
// matrices in the requested type, norms and biases in F32.
// docs/model.md "GGUF files" has the details.
//
// Thread safety: pure functions of their inputs (and the files written).
#ifndef LAYERPROOF_KERNELS_MODEL_GGUF_MODEL_H_
#define LAYERPROOF_KERNELS_MODEL_GGUF_MODEL_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/dtype.h"
#include "kernels/model/config.h"
#include "kernels/model/gguf.h"
#include "kernels/model/model.h"
#include "kernels/status.h"

namespace layerproof::kernels::model {

// A model read from a GGUF file. `tensors` holds every tensor the config
// requires (ExpectedTensorNames), under its Hugging Face name; each view
// points into the GgufFile's mapping (which must outlive it) or, for the
// un-permuted attn_q / attn_k of a llama file, into `owned`. Move-only;
// moving keeps every view valid.
struct GgufModelParts {
  ModelConfig config;
  std::map<std::string, TensorView> tensors;
  std::vector<std::unique_ptr<unsigned char[]>> owned;

  GgufModelParts() = default;
  GgufModelParts(GgufModelParts&&) = default;
  GgufModelParts& operator=(GgufModelParts&&) = default;
  GgufModelParts(const GgufModelParts&) = delete;
  GgufModelParts& operator=(const GgufModelParts&) = delete;
};

// Errors name the file and the key or tensor (GGUF and HF names), e.g.
// "m.gguf: tensor blk.0.attn_k.weight (model.layers.0.self_attn.k_proj
// .weight): shape [64, 16], want [32, 16] (...)"; an unsupported
// architecture or RoPE scaling is Unimplemented.
StatusOr<GgufModelParts> ReadGgufModel(const GgufFile& file);

// A tokenizer as llama.cpp's tokenizer.ggml.* keys hold it
// (text::GgufTokenizerKeysFor builds one from a tokenizer.json). Token ids
// are indices; WriteGgufModel pads `tokens` to the model's vocab_size with
// "[PADn]" tokens of type 5 (unused), as convert_hf_to_gguf.py does, and
// refuses more tokens than vocab_size.
struct GgufTokenizerKeys {
  std::string model;                 // tokenizer.ggml.model, e.g. "gpt2"
  std::string pre;                   // tokenizer.ggml.pre
  std::vector<std::string> tokens;   // tokenizer.ggml.tokens
  std::vector<int32_t> token_types;  // one llama_token_type per token
  std::vector<std::string> merges;   // "left right"
  bool add_bos = false;              // tokenizer.ggml.add_bos_token
  bool add_eos = false;              // tokenizer.ggml.add_eos_token
  // The tokens add_bos / add_eos add; they must be the config's
  // bos_token_id and first eos_token_id (whose keys the file carries).
  int32_t bos_id = -1, eos_id = -1;
  std::optional<std::string> chat_template;  // tokenizer.chat_template
};

struct GgufExportOptions {
  std::string name = "layerproof export";  // general.name
  // A matrix whose row length is not a multiple of the type's block size is
  // written in the nearest type whose block fits (Q4_K -> Q4_0, Q6_K ->
  // Q8_0, then F16), as llama-quantize falls back; false refuses it.
  bool fallback = true;
  // Written as tokenizer.ggml.* (and tokenizer.chat_template) when set, so
  // that llama.cpp, which reads no tokenizer.json, loads the file too. The
  // bos/eos ids always come from the config.
  std::optional<GgufTokenizerKeys> tokenizer;
};

// Writes `config` and `tensors` (Hugging Face names, exactly the set
// ExpectedTensorNames(config) lists, any DType) to a GGUF v3 file at
// `out_path`: the 2-D matrices (embeddings, projections, lm_head) in
// `type`, 1-D tensors in F32. Fails (and leaves no file) on a non-finite
// weight or a scale that overflows fp16, naming the tensor, row and column.
Status WriteGgufModel(const ModelConfig& config,
                      const std::map<std::string, TensorView>& tensors,
                      DType type, const std::string& out_path,
                      const GgufExportOptions& options = {});
Status WriteGgufModel(const Model& model, DType type,
                      const std::string& out_path,
                      const GgufExportOptions& options = {});

// The name mapping: "blk.3.ffn_up.weight" <-> "model.layers.3.mlp.up_proj
// .weight"; nullopt for a name outside it.
std::optional<std::string> HfTensorName(std::string_view gguf_name);
std::optional<std::string> GgufTensorName(std::string_view hf_name);

// llama.cpp's permute(w, n_head) of convert_hf_to_gguf.py on whole rows of
// `row_bytes` bytes (a quantized row moves as a unit): within each head of
// d = n_rows / n_head rows, out row 2i + j = in row j * d/2 + i (i < d/2,
// j < 2), i.e. the rotary halves are interleaved. `inverse` undoes it.
// n_rows must be a positive multiple of 2 * n_head; `in` and `out` must
// not overlap.
void PermuteQkRows(const unsigned char* in, int64_t n_rows, uint64_t row_bytes,
                   int64_t n_head, bool inverse, unsigned char* out);

}  // namespace layerproof::kernels::model

#endif  // LAYERPROOF_KERNELS_MODEL_GGUF_MODEL_H_
