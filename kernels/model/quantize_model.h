// `layerproof model quantize`: a Hugging Face model directory to one GGUF
// file in a block-quantized type, with the tokenizer files copied beside it
// so that Model::Load and text::ModelText load the result like the source.
//
// Thread safety: pure functions of their inputs (and the files written).
#ifndef LAYERPROOF_KERNELS_MODEL_QUANTIZE_MODEL_H_
#define LAYERPROOF_KERNELS_MODEL_QUANTIZE_MODEL_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/dtype.h"
#include "kernels/model/gguf_model.h"
#include "kernels/status.h"

namespace layerproof::kernels::model {

// "q8_0", "q4_0", "q4_k", "q6_k" (any case); nullopt for anything else.
std::optional<DType> QuantTypeFromName(std::string_view name);
inline constexpr char kQuantTypeNames[] = "q8_0|q4_0|q4_k|q6_k";

// The files beside the weights that text::ModelText reads.
inline constexpr const char* kTokenizerFiles[] = {
    "tokenizer.json", "tokenizer_config.json", "chat_template.jinja"};

struct QuantizeResult {
  int64_t tensors = 0;
  uint64_t bytes = 0;               // of the GGUF file
  std::vector<std::string> copied;  // tokenizer files copied beside it
};

// Loads the model in `model_dir`, writes it to `out_path` (which must end
// in .gguf) with its matrices in `type` (WriteGgufModel, falling back as
// llama-quantize does for rows that no block fits), and copies each
// tokenizer file the source has to the output's directory. A tokenizer file
// already there is kept if identical and refused (FailedPrecondition)
// otherwise, so a GGUF never silently gets another model's tokenizer.
// `tokenizer`, when set, is also written into the file as tokenizer.ggml.*
// (GgufExportOptions::tokenizer), for readers without the tokenizer files.
StatusOr<QuantizeResult> QuantizeModelDir(
    const std::string& model_dir, DType type, const std::string& out_path,
    std::optional<GgufTokenizerKeys> tokenizer = std::nullopt);

}  // namespace layerproof::kernels::model

#endif  // LAYERPROOF_KERNELS_MODEL_QUANTIZE_MODEL_H_
