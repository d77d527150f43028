// The English text the synthetic tokenizer's BPE merges are learned from:
// a few KB written for this project (about transparency logs, arithmetic
// and reproducible computation). Changing one byte of it changes every
// synthetic tokenizer, and so every synthetic model's digest.
//
// Thread safety: a constant.
#ifndef LAYERPROOF_TEXT_INTERNAL_SYNTHETIC_CORPUS_H_
#define LAYERPROOF_TEXT_INTERNAL_SYNTHETIC_CORPUS_H_

#include <string_view>

namespace layerproof::text::internal {

std::string_view SyntheticCorpus();

}  // namespace layerproof::text::internal

#endif  // LAYERPROOF_TEXT_INTERNAL_SYNTHETIC_CORPUS_H_
