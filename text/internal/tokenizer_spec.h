// A parsed tokenizer.json: the vocabulary, the merges, the added tokens and
// the normalizer, pre-tokenizer, post-processor and decoder pipelines, as
// steps the tokenizer runs in order. ParseTokenizerSpec() checks everything
// the encoder and decoder rely on (ids in range, merges over known tokens,
// patterns that compile, only supported steps), so running a spec never
// meets malformed data.
//
// Thread safety: a value type; immutable once parsed.
#ifndef LAYERPROOF_TEXT_INTERNAL_TOKENIZER_SPEC_H_
#define LAYERPROOF_TEXT_INTERNAL_TOKENIZER_SPEC_H_

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "kernels/status.h"
#include "text/internal/bpe.h"
#include "text/internal/regex.h"
#include "text/internal/unicode.h"

namespace layerproof::text::internal {

// Token ids must lie below this (larger vocabularies are not in use, and
// the bound keeps a hostile file from forcing a huge allocation).
inline constexpr int64_t kMaxTokenId = int64_t{1} << 24;

// A Split or Replace pattern: {"String": s} matches s literally (never an
// empty match; an empty s matches nothing), {"Regex": r} is an Oniguruma
// regex.
struct Pattern {
  std::string literal;
  std::optional<Regex> regex;

  Status FindAll(std::string_view text, std::vector<Match>* out) const;
};

// Metaspace's prepend_scheme; add_prefix_space true/false of older files
// reads as kAlways/kNever.
enum class PrependScheme : uint8_t { kAlways, kFirst, kNever };

// Split's behavior: what becomes of each match (see SplitPieces()).
enum class SplitBehavior : uint8_t {
  kRemoved,
  kIsolated,
  kMergedWithPrevious,
  kMergedWithNext,
  kContiguous
};

struct NormalizerStep {
  enum class Type : uint8_t { kNormalForm, kPrepend, kReplace, kStrip };
  Type type = Type::kNormalForm;
  NormalForm form = NormalForm::kNfc;  // kNormalForm.
  Pattern pattern;                     // kReplace.
  std::string content;  // kPrepend: the prefix; kReplace: the replacement.
  bool strip_left = false, strip_right = false;  // kStrip.
};

struct PreTokenizerStep {
  enum class Type : uint8_t { kSplit, kByteLevel, kMetaspace, kDigits };
  Type type = Type::kSplit;
  Pattern pattern;  // kSplit; kByteLevel regex.
  SplitBehavior behavior = SplitBehavior::kIsolated;      // kSplit.
  bool invert = false;                                    // kSplit.
  bool add_prefix_space = false;                          // kByteLevel.
  bool use_regex = false;                                 // kByteLevel.
  std::string replacement;                                // kMetaspace, "▁".
  PrependScheme prepend_scheme = PrependScheme::kAlways;  // kMetaspace.
  bool split = false;                                     // kMetaspace.
  bool individual_digits = false;                         // kDigits.
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
  Pattern pattern;          // kReplace.
  std::string content;      // kReplace: replacement; kStrip: the stripped char.
  std::string replacement;  // kMetaspace.
  int64_t start = 0;        // kStrip: at most this many leading `content`s.
  int64_t stop = 0;         // kStrip: at most this many trailing `content`s.
  PrependScheme prepend_scheme = PrependScheme::kAlways;  // kMetaspace.
};

struct AddedToken {
  int32_t id = 0;
  std::string content;  // Never empty.
  bool special = false;
  bool normalized = false;   // Matched in the normalized text.
  bool lstrip = false;       // Absorbs white space before the match.
  bool rstrip = false;       // Absorbs white space after the match.
  bool single_word = false;  // Only between non-word characters.
};

struct TokenizerSpec {
  // Indexed by id, vocab_size() entries; has_token false marks a gap.
  std::vector<std::string> id_to_token;
  std::vector<bool> has_token;
  std::vector<bool> is_special;

  // model: BPE.
  std::unordered_map<std::string, int32_t> vocab;  // model.vocab only.
  BpeMerges merges;
  std::optional<int32_t> unk_id;
  bool byte_fallback = false;
  bool fuse_unk = false;
  bool ignore_merges = false;
  std::optional<std::string> continuing_subword_prefix;
  std::optional<std::string> end_of_word_suffix;

  std::vector<AddedToken> added_tokens;
  std::vector<NormalizerStep> normalizers;
  std::vector<PreTokenizerStep> pre_tokenizers;
  std::vector<DecoderStep> decoders;  // Empty: tokens joined by " ".

  // The post-processor's single-sequence template, when special tokens are
  // added: these ids before and after the text's own.
  std::vector<int32_t> template_prefix;
  std::vector<int32_t> template_suffix;

  // Some step reads Unicode classes or normalization tables (a Regex
  // pattern or an NF* normalizer), so text must hold only code points those
  // tables know (see FindUnassigned()).
  bool reads_unicode_tables = false;
};

// The two sides of a model.merges entry, "left right" (one space) or
// [left, right]; nullopt when it is neither.
std::optional<std::pair<std::string, std::string>> MergeSides(
    const nlohmann::json& merge);

// Parses tokenizer.json text; errors name `file` and the JSON path.
StatusOr<TokenizerSpec> ParseTokenizerSpec(std::string_view json,
                                           std::string_view file);

}  // namespace layerproof::text::internal

#endif  // LAYERPROOF_TEXT_INTERNAL_TOKENIZER_SPEC_H_
