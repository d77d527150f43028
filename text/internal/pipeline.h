// The steps of a tokenizer.json pipeline, each as Hugging Face's
// implementation runs it (the file names are those of the `tokenizers`
// crate's sources): normalizers (normalizers/*.rs), pre-tokenizers
// (pre_tokenizers/*.rs, with the split behaviours of
// tokenizer/normalizer.rs), the BPE model's word merge
// (models/bpe/model.rs) and decoders (decoders/*.rs).
//
// Thread safety: pure functions over an immutable spec.
#ifndef LAYERPROOF_TEXT_INTERNAL_PIPELINE_H_
#define LAYERPROOF_TEXT_INTERNAL_PIPELINE_H_

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "text/internal/tokenizer_spec.h"

namespace layerproof::text::internal {

// Runs the normalizer steps over `text` (valid UTF-8) in place.
Status Normalize(const std::vector<NormalizerStep>& steps, std::string* text);

// A pre-tokenized piece; at_start: it begins at offset 0 of the original
// input (Metaspace's "first" prepend scheme looks at that).
struct Piece {
  std::string text;
  bool at_start;
};

// Runs the pre-tokenizer steps over the pieces in place; empty pieces are
// dropped, as Hugging Face drops them.
Status PreTokenize(const std::vector<PreTokenizerStep>& steps,
                   std::vector<Piece>* pieces);

// The pieces of `text` that Split with `behavior` keeps, given the pattern's
// matches (already inverted when the step says so), in order.
std::vector<std::string_view> SplitPieces(std::string_view text,
                                          const std::vector<Match>& matches,
                                          bool invert, SplitBehavior behavior);

// BPE over one piece: appends its ids.
void EncodeWord(const TokenizerSpec& spec, std::string_view word,
                std::vector<int32_t>* ids);

// Runs the decoder steps over the token strings; the decoded text is their
// concatenation.
void RunDecoders(const std::vector<DecoderStep>& steps,
                 std::vector<std::string>* tokens);

}  // namespace layerproof::text::internal

#endif  // LAYERPROOF_TEXT_INTERNAL_PIPELINE_H_
