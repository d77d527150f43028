// The synthetic tokenizer that `layerproof model synth` writes beside a
// synthetic model, so that text prompts work on it end to end.
#ifndef LAYERPROOF_TEXT_SYNTHETIC_TOKENIZER_H_
#define LAYERPROOF_TEXT_SYNTHETIC_TOKENIZER_H_

#include <cstdint>
#include <string>

#include "kernels/model/config.h"
#include "kernels/model/synth.h"
#include "kernels/status.h"

namespace layerproof::text {

using kernels::Status;

// A byte-level BPE tokenizer.json with exactly `vocab_size` tokens: the 256
// byte tokens, merges learned deterministically from an embedded English
// text (then seeded synthetic merges when the text runs out), and the
// specials <|begin_of_text|> and <|end_of_text|> as the last two ids; the
// Llama-3 split pattern; BOS added by its TemplateProcessing. Byte-identical
// for a given (vocab_size, seed) on every platform; 32000 tokens take tens
// of milliseconds. Values below 258 are raised to 258 (the bytes and the
// two specials).
std::string BuildSyntheticTokenizerJson(int64_t vocab_size, uint64_t seed);

// kernels::model::SynthesizeModel, then tokenizer.json from
// BuildSyntheticTokenizerJson(config.vocab_size, options.seed) and a plain
// chat_template.jinja ("<|begin_of_text|>" then "role: content" lines).
Status SynthesizeTextModel(const kernels::model::ModelConfig& config,
                           const kernels::model::SynthOptions& options,
                           const std::string& out_dir);

}  // namespace layerproof::text

#endif  // LAYERPROOF_TEXT_SYNTHETIC_TOKENIZER_H_
