// Hand-coded matchers for the pre-tokenizer regexes that tokenizer.json
// files in use carry, since std::regex has no Unicode classes:
//
//   GPT-2:   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+
//            |\s+(?!\S)|\s+
//   Llama-3: (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+
//            |\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
//   Qwen2:   the Llama-3 pattern with \p{N} in place of \p{N}{1,3}.
//
// Each matcher reproduces the leftmost-first alternation and the
// backtracking of these patterns exactly, over the character classes of
// internal/unicode.h (so \p{L} and \p{N} carry its block approximation).
// The case-insensitive contractions of Llama-3 fold ASCII case only.
//
// Thread safety: pure functions.
#ifndef LAYERPROOF_KERNELS_MODEL_INTERNAL_PRETOKENIZE_H_
#define LAYERPROOF_KERNELS_MODEL_INTERNAL_PRETOKENIZE_H_

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace layerproof::kernels::model::internal {

enum class SplitPattern : uint8_t { kGpt2, kLlama3, kQwen2 };

// The pattern whose source text is exactly `regex` (as it reads after JSON
// unescaping), or nullopt for any other pattern.
std::optional<SplitPattern> RecognizeSplitPattern(std::string_view regex);

// The source text of `pattern`, as tokenizer.json carries it.
std::string_view SplitPatternRegex(SplitPattern pattern);

// Appends to *pieces the consecutive matches of `pattern` over `text`; they
// cover `text` exactly, in order, and none is empty. Precondition: `text`
// is valid UTF-8. The views point into `text`.
void SplitByPattern(SplitPattern pattern, std::string_view text,
                    std::vector<std::string_view>* pieces);

}  // namespace layerproof::kernels::model::internal

#endif  // LAYERPROOF_KERNELS_MODEL_INTERNAL_PRETOKENIZE_H_
