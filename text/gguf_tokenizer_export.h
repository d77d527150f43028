// The inverse of text/gguf_tokenizer.h: a model directory's tokenizer.json
// (with tokenizer_config.json and chat_template.jinja) as the
// tokenizer.ggml.* keys llama.cpp's convert_hf_to_gguf.py writes, so that
// `layerproof model quantize` makes files llama.cpp loads as well.
//
// Only tokenizers whose ids llama.cpp reproduces by name are written: a
// byte-level BPE model (no byte fallback, no subword affixes) whose
// normalizer, pre-tokenizer and decoder are exactly those of one
// tokenizer.ggml.pre family text/internal/gguf_families.h knows (trim_offsets
// aside: it moves offsets, never ids). The family fixes ignore_merges in
// llama.cpp; a file that says otherwise is accepted only when the flag
// cannot change an id, i.e. when merging every vocabulary token's own
// characters gives back that token (the only words ignore_merges treats
// differently are whole vocabulary tokens). Added tokens become CONTROL
// (special) or USER_DEFINED tokens, which llama.cpp matches in the raw
// text; so each must have lstrip, rstrip and single_word false, and
// normalized false unless there is no normalizer. add_bos / add_eos are
// what transformers' prompts add (ModelText's prefix and suffix).
//
// Anything else is Unimplemented naming the JSON path; the caller then
// writes the file without tokenizer keys (tokenizer.json beside it still
// serves LayerProof). A missing tokenizer.json is NotFound.
//
// Thread safety: a pure function of the files.
#ifndef LAYERPROOF_TEXT_GGUF_TOKENIZER_EXPORT_H_
#define LAYERPROOF_TEXT_GGUF_TOKENIZER_EXPORT_H_

#include <string>

#include "kernels/model/gguf_model.h"
#include "kernels/status.h"

namespace layerproof::text {

kernels::StatusOr<kernels::model::GgufTokenizerKeys> GgufTokenizerKeysFor(
    const std::string& dir);

}  // namespace layerproof::text

#endif  // LAYERPROOF_TEXT_GGUF_TOKENIZER_EXPORT_H_
