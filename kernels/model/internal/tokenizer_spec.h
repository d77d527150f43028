// A parsed tokenizer.json: the vocabulary, the merges and the normalizer,
// pre-tokenizer and decoder pipelines, as steps the tokenizer runs in
// order. ParseTokenizerSpec() checks everything the encoder and decoder
// rely on (ids in range, merges over known tokens, only supported steps),
// so running a spec never meets malformed data.
//
// Thread safety: a value type; immutable once parsed.
#ifndef LAYERPROOF_KERNELS_MODEL_INTERNAL_TOKENIZER_SPEC_H_
#define LAYERPROOF_KERNELS_MODEL_INTERNAL_TOKENIZER_SPEC_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "kernels/model/internal/bpe.h"
#include "kernels/model/internal/pretokenize.h"
#include "kernels/model/tokenizer.h"
#include "kernels/status.h"

namespace layerproof::kernels::model::internal {

// Token ids must lie below this (larger vocabularies are not in use, and
// the bound keeps a hostile file from forcing a huge allocation).
inline constexpr int64_t kMaxTokenId = int64_t{1} << 24;

// Metaspace's prepend_scheme; add_prefix_space true/false of older files
// reads as kAlways/kNever.
enum class PrependScheme : uint8_t { kAlways, kFirst, kNever };

struct NormalizerStep {
  enum class Type : uint8_t { kPrepend, kReplace, kNfc };
  Type type = Type::kNfc;
  std::string pattern;  // kReplace: the literal string replaced.
  std::string content;  // kPrepend: the prefix; kReplace: the replacement.
};

struct PreTokenizerStep {
  enum class Type : uint8_t { kSplit, kByteLevel, kMetaspace };
  Type type = Type::kSplit;
  SplitPattern pattern = SplitPattern::kGpt2;  // kSplit.
  bool add_prefix_space = false;               // kByteLevel.
  bool use_regex = false;                      // kByteLevel.
  std::string replacement;                     // kMetaspace, e.g. "▁".
  PrependScheme prepend_scheme = PrependScheme::kAlways;  // kMetaspace.
  bool split = false;                                     // kMetaspace.
};

struct DecoderStep {
  enum class Type : uint8_t {
    kByteLevel,
    kReplace,
    kByteFallback,
    kFuse,
    kStrip,
    kMetaspace
  };
  Type type = Type::kFuse;
  std::string pattern;  // kReplace: replaced; kMetaspace: the replacement.
  std::string content;  // kReplace: replacement; kStrip: the stripped char.
  int64_t start = 0;    // kStrip: at most this many leading `content`s.
  int64_t stop = 0;     // kStrip: at most this many trailing `content`s.
  PrependScheme prepend_scheme = PrependScheme::kAlways;  // kMetaspace.
};

struct AddedToken {
  int32_t id = 0;
  std::string content;  // Never empty.
  bool special = false;
  bool lstrip = false;  // Absorbs ASCII whitespace before the match.
  bool rstrip = false;  // Absorbs ASCII whitespace after the match.
};

struct TokenizerSpec {
  Tokenizer::Kind kind = Tokenizer::Kind::kByteLevelBpe;

  // Indexed by id, vocab_size() entries; has_token false marks a gap.
  std::vector<std::string> id_to_token;
  std::vector<bool> has_token;
  std::vector<bool> is_special;

  std::unordered_map<std::string, int32_t> vocab;  // model.vocab only.
  BpeMerges merges;
  std::optional<int32_t> unk_id;
  bool byte_fallback = false;
  bool fuse_unk = false;
  bool ignore_merges = false;

  std::vector<AddedToken> added_tokens;
  std::vector<NormalizerStep> normalizers;
  // When kind is kByteLevelBpe the last step is the ByteLevel one.
  std::vector<PreTokenizerStep> pre_tokenizers;
  std::vector<DecoderStep> decoders;  // Never empty.

  std::optional<int32_t> bos_id;
  std::optional<int32_t> eos_id;
};

// Parses tokenizer.json text; errors name `file` and the JSON field.
StatusOr<TokenizerSpec> ParseTokenizerSpec(std::string_view json,
                                           std::string_view file);

}  // namespace layerproof::kernels::model::internal

#endif  // LAYERPROOF_KERNELS_MODEL_INTERNAL_TOKENIZER_SPEC_H_
