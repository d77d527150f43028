// Hugging Face tokenizer.json tokenizers: byte-level BPE (GPT-2, Llama-3,
// Qwen2 style) and SentencePiece-style BPE with byte fallback (Llama-2,
// TinyLlama style), with encode and decode. Token ids equal those of
// Hugging Face tokenizers for the supported files.
//
// Which kind a file is comes from its pre_tokenizer and normalizer: a
// ByteLevel pre-tokenizer (alone, or last in a Sequence after a Split)
// means byte-level BPE; a Metaspace pre-tokenizer or a normalizer writing
// "▁" (Prepend / Replace) means SentencePiece style, with byte fallback to
// <0xNN> tokens when model.byte_fallback is set. Anything else, and any
// step not listed here, is refused with an error naming the JSON field:
//   model        BPE (merges as "a b" strings or [a, b] pairs, unk_token,
//                fuse_unk, byte_fallback, ignore_merges; dropout ignored)
//   normalizer   Sequence, Prepend, Replace (literal), NFC (see below)
//   pre_tokenizer Sequence, ByteLevel, Metaspace, Split with the GPT-2,
//                Llama-3 or Qwen2 regex (recognised by its exact text)
//   decoder      Sequence, ByteLevel, Replace, ByteFallback, Fuse, Strip,
//                Metaspace
// \p{L} and \p{N} in the split patterns are approximated by Unicode block
// ranges (kernels/model/internal/unicode.h lists the blocks). NFC
// composition is not implemented: Encode returns Unimplemented for text
// with a character that NFC could change (combining marks and the like).
//
// Added tokens (specials such as <|begin_of_text|>, and the rest) are
// matched in the raw text first, longest match at the leftmost position;
// each stretch between them is normalized and pre-tokenized on its own, as
// Hugging Face does. lstrip/rstrip absorb ASCII whitespace; single_word
// and normalized are ignored.
//
// BOS/EOS: the special tokens before/after $A in a TemplateProcessing
// post_processor (or Roberta/Bert processing's cls/sep); otherwise the
// first present of <|begin_of_text|>, <s>, <|startoftext|>, <bos>,
// <|endoftext|> (BOS) and </s>, <|end_of_text|>, <|endoftext|>, <eos>,
// <|im_end|> (EOS).
//
// Thread safety: immutable after loading; Encode/Decode may run
// concurrently.
#ifndef LAYERPROOF_KERNELS_MODEL_TOKENIZER_H_
#define LAYERPROOF_KERNELS_MODEL_TOKENIZER_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/status.h"

namespace layerproof::kernels::model {

class Tokenizer {
 public:
  enum class Kind : uint8_t { kByteLevelBpe, kSentencePieceBpe };

  virtual ~Tokenizer() = default;

  // Parses tokenizer.json text; `file` names it in error messages.
  static StatusOr<std::unique_ptr<Tokenizer>> FromJson(std::string_view json,
                                                       std::string_view file);
  static StatusOr<std::unique_ptr<Tokenizer>> Load(const std::string& path);

  virtual Kind kind() const = 0;
  // One more than the largest token id (vocab plus added tokens).
  virtual int64_t vocab_size() const = 0;

  // Token ids of `text` (valid UTF-8 required; InvalidArgument otherwise).
  // add_bos prepends the BOS token when the tokenizer has one.
  virtual StatusOr<std::vector<int32_t>> Encode(std::string_view text,
                                                bool add_bos) const = 0;
  // The text of `ids`; an id out of range is InvalidArgument naming it.
  // Special (added) tokens are skipped when skip_special is true. Byte
  // tokens that do not form valid UTF-8 (a multi-byte character cut short,
  // say) come back as those bytes, unchanged: the result is then not valid
  // UTF-8, and the caller decides how to print it. (Hugging Face writes
  // U+FFFD there.)
  virtual StatusOr<std::string> Decode(const std::vector<int32_t>& ids,
                                       bool skip_special = false) const = 0;

  virtual std::optional<int32_t> TokenId(std::string_view token) const = 0;
  virtual std::optional<int32_t> bos_id() const = 0;
  virtual std::optional<int32_t> eos_id() const = 0;

 protected:
  Tokenizer() = default;
};

// A byte-level BPE tokenizer.json with exactly `vocab_size` tokens: the 256
// byte tokens, merges learned deterministically from an embedded English
// text (then seeded synthetic merges when the text runs out), and the
// specials <|begin_of_text|> and <|end_of_text|> as the last two ids; the
// Llama-3 split pattern; BOS added by its TemplateProcessing. Byte-identical
// for a given (vocab_size, seed) on every platform; 32000 tokens take tens
// of milliseconds. `model synth` writes it with vocab_size >= 512; smaller
// values are raised to 258 (the bytes and the two specials).
std::string BuildSyntheticTokenizerJson(int64_t vocab_size, uint64_t seed);

}  // namespace layerproof::kernels::model

#endif  // LAYERPROOF_KERNELS_MODEL_TOKENIZER_H_
