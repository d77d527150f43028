// Tokenizers from GGUF metadata: the tokenizer.ggml.* keys that llama.cpp's
// convert_hf_to_gguf.py writes, turned back into the Hugging Face
// tokenizer.json (and tokenizer_config.json) of the family that
// tokenizer.ggml.pre names, so that the same text/ pipeline encodes them.
//
// Supported: tokenizer.ggml.model "gpt2" (byte-level BPE) with
// tokenizer.ggml.pre one of llama-bpe (also llama3, llama-v3: Llama 3),
// qwen2 (Qwen2, Qwen2.5, Qwen3), deepseek-v3 and gpt-4o (o200k). Each
// maps onto the normalizer, pre-tokenizer and decoder of that family's own
// tokenizer.json. Control and user-defined tokens become added tokens
// (special and not, both matched in the raw text, as llama.cpp matches
// them); unused tokens (type 5) are gaps. BOS/EOS are added to prompts as
// tokenizer.ggml.add_bos_token / add_eos_token say, with llama.cpp's
// defaults when absent (BOS for the Llama 3 names only).
//
// Refused with Unimplemented naming the key and value: any other model
// (the SentencePiece "llama" model among them) or pre. Malformed metadata
// (a missing or mistyped key, a token_type array of another length, an
// unknown token type, a merge naming an unknown token, a special token id
// out of range, duplicate tokens, ill-formed UTF-8) is InvalidArgument
// naming the file and the key.
//
// Precedence (the callers'): a tokenizer.json beside the file wins.
#ifndef LAYERPROOF_TEXT_GGUF_TOKENIZER_H_
#define LAYERPROOF_TEXT_GGUF_TOKENIZER_H_

#include <memory>
#include <optional>
#include <string>

#include "kernels/model/gguf.h"
#include "kernels/status.h"
#include "text/model_text.h"

namespace layerproof::text {

// The files a Hugging Face model directory would hold.
struct GgufTokenizerFiles {
  std::string tokenizer_json;
  std::string config_json;  // bos/eos/unk/pad tokens
  std::optional<std::string> chat_template;
};

StatusOr<GgufTokenizerFiles> TokenizerFilesFromGguf(
    const kernels::model::GgufFile& gguf);
// TokenizerFilesFromGguf(gguf).tokenizer_json.
StatusOr<std::string> TokenizerJsonFromGguf(
    const kernels::model::GgufFile& gguf);
StatusOr<std::unique_ptr<ModelText>> ModelTextFromGguf(
    const kernels::model::GgufFile& gguf);

// A model's text side: DIR/tokenizer.json when present (ModelText::Load);
// else, when `source` is a GGUF file (source != dir), its metadata. Null
// when neither has a tokenizer (no tokenizer.json and no
// tokenizer.ggml.model key).
StatusOr<std::unique_ptr<ModelText>> LoadModelTextFor(
    const std::string& dir, const std::string& source);

}  // namespace layerproof::text

#endif  // LAYERPROOF_TEXT_GGUF_TOKENIZER_H_
