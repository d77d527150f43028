// Hugging Face tokenizer.json tokenizers, with ids equal to those of
// Hugging Face `tokenizers` (the Rust library; tests/peer/ checks nine real
// model families against it): BPE models with byte fallback,
// ignore_merges, unk fusing and subword affixes; every normalizer,
// pre-tokenizer, post-processor and decoder listed in docs/text.md.
// Anything else is refused at load with an error naming the JSON path.
//
// Encoding is Hugging Face's pipeline: added tokens whose `normalized` is
// false are split out of the raw text first (longest match at the leftmost
// position); each remaining stretch is normalized, then split on the added
// tokens whose `normalized` is true, then pre-tokenized, and each piece is
// merged by BPE. With add_special_tokens the post-processor's template
// (TemplateProcessing, Roberta/Bert processing) wraps the ids.
//
// Unicode: split patterns and character classes use Oniguruma's tables,
// normalization utf8proc's (text/internal/). When some step reads those
// tables, text holding a code point they leave unassigned is refused
// (InvalidArgument naming the code point and its offset): the reference
// may be built on a later Unicode version, in which that code point has a
// class, so no answer here could be known to agree (docs/text.md).
//
// Thread safety: immutable after loading; Encode/Decode may run
// concurrently.
#ifndef LAYERPROOF_TEXT_TOKENIZER_H_
#define LAYERPROOF_TEXT_TOKENIZER_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/status.h"

namespace layerproof::text {

using kernels::Status;
using kernels::StatusOr;

namespace internal {
struct TokenizerSpec;
}

class Tokenizer {
 public:
  ~Tokenizer();
  Tokenizer(const Tokenizer&) = delete;
  Tokenizer& operator=(const Tokenizer&) = delete;

  // Parses tokenizer.json text; `file` names it in error messages.
  static StatusOr<std::unique_ptr<Tokenizer>> FromJson(std::string_view json,
                                                       std::string_view file);
  static StatusOr<std::unique_ptr<Tokenizer>> Load(const std::string& path);

  // One more than the largest token id (vocab plus added tokens).
  int64_t vocab_size() const;

  // Token ids of `text` (valid UTF-8 required; InvalidArgument otherwise).
  // add_special_tokens applies the post-processor's template, as Hugging
  // Face's encode(text, add_special_tokens=True) does.
  StatusOr<std::vector<int32_t>> Encode(std::string_view text,
                                        bool add_special_tokens) const;

  // The text of `ids`, as Hugging Face's decode: special (added) tokens are
  // skipped when skip_special is true, and bytes that do not form valid
  // UTF-8 become U+FFFD. An id out of range is InvalidArgument naming it.
  StatusOr<std::string> Decode(const std::vector<int32_t>& ids,
                               bool skip_special = false) const;

  // The id of a token's text: an added token first, then the vocabulary.
  std::optional<int32_t> TokenId(std::string_view token) const;
  // The text of token `id`, or nullopt when out of range or a gap.
  std::optional<std::string> TokenText(int32_t id) const;
  bool IsSpecial(int32_t id) const;

  // The ids the template puts before the text (the BOS, for most models),
  // and after it.
  const std::vector<int32_t>& template_prefix() const;
  const std::vector<int32_t>& template_suffix() const;

 private:
  class Impl;
  explicit Tokenizer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// The Unicode versions of the tables this build's tokenizers read, e.g.
// "regex classes Unicode 14.0 (Oniguruma 6.9.8), normalization Unicode
// 15.0.0 (utf8proc 2.8.0)".
std::string UnicodeTablesDescription();

}  // namespace layerproof::text

#endif  // LAYERPROOF_TEXT_TOKENIZER_H_
