// The tokenizer.json tokenizer: runs a parsed TokenizerSpec through the
// steps of internal/pipeline.h, in Hugging Face's order (see tokenizer.h).
#include "text/tokenizer.h"

#include <oniguruma.h>
#include <utf8proc.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kernels/model/internal/file_io.h"
#include "kernels/printable.h"
#include "kernels/status.h"
#include "text/internal/added_tokens.h"
#include "text/internal/pipeline.h"
#include "text/internal/regex.h"
#include "text/internal/tokenizer_spec.h"
#include "text/internal/unicode.h"

namespace layerproof::text {

using kernels::InvalidArgument;
using kernels::OkStatus;
using kernels::StatusCode;

// A tokenizer.json, tokenizer_config.json or chat template larger than
// this is refused (real ones are at most tens of MiB).
constexpr uint64_t kMaxFileBytes = uint64_t{1} << 30;

class Tokenizer::Impl {
 public:
  explicit Impl(internal::TokenizerSpec spec);

  StatusOr<std::vector<int32_t>> Encode(std::string_view text,
                                        bool add_special_tokens) const;
  StatusOr<std::string> Decode(const std::vector<int32_t>& ids,
                               bool skip_special) const;

  const internal::TokenizerSpec& spec() const { return spec_; }

 private:
  // Encodes a stretch of text without raw-text added tokens that starts at
  // byte `offset` of the input.
  Status EncodeSegment(std::string_view text, size_t offset,
                       std::vector<int32_t>* ids) const;

  internal::TokenizerSpec spec_;
  internal::AddedTokenMatcher raw_tokens_;         // normalized: false
  internal::AddedTokenMatcher normalized_tokens_;  // normalized: true
};

Tokenizer::Impl::Impl(internal::TokenizerSpec spec) : spec_(std::move(spec)) {
  std::vector<const internal::AddedToken*> raw, normalized;
  std::vector<std::string> raw_patterns, normalized_patterns;
  for (const internal::AddedToken& t : spec_.added_tokens) {
    if (!t.normalized) {
      raw.push_back(&t);
      raw_patterns.push_back(t.content);
      continue;
    }
    // Found in normalized text, so looked for in its normalized form.
    std::string content = t.content;
    if (!internal::Normalize(spec_.normalizers, &content).ok()) continue;
    normalized.push_back(&t);
    normalized_patterns.push_back(std::move(content));
  }
  raw_tokens_ = internal::AddedTokenMatcher(raw, raw_patterns);
  normalized_tokens_ =
      internal::AddedTokenMatcher(normalized, normalized_patterns);
}

StatusOr<std::vector<int32_t>> Tokenizer::Impl::Encode(
    std::string_view text, bool add_special_tokens) const {
  const size_t bad = internal::FindInvalidUtf8(text);
  if (bad != std::string_view::npos) {
    return InvalidArgument("Encode: text is not valid UTF-8 at byte offset " +
                           std::to_string(bad));
  }
  if (spec_.reads_unicode_tables) {
    const size_t at = internal::FindUnassigned(text);
    if (at != std::string_view::npos) {
      size_t len = 0;
      const char32_t cp = internal::DecodeUtf8(text, at, &len);
      char hex[16];
      std::snprintf(hex, sizeof hex, "U+%04X", static_cast<unsigned>(cp));
      return InvalidArgument(
          std::string("Encode: text: ") + hex + " at byte offset " +
          std::to_string(at) + " is unassigned in Unicode " +
          internal::UnicodeVersion() +
          " (this build's character tables), so its class is unknown and "
          "no tokenization of it could be known to match the model's; "
          "send token ids instead");
    }
  }
  std::vector<int32_t> ids;
  if (add_special_tokens) ids = spec_.template_prefix;
  size_t segment = 0;
  for (const internal::AddedMatch& m : raw_tokens_.Find(text)) {
    if (m.begin > segment) {
      LP_RETURN_IF_ERROR(EncodeSegment(text.substr(segment, m.begin - segment),
                                       segment, &ids));
    }
    ids.push_back(m.id);
    segment = m.end;
  }
  if (segment < text.size()) {
    LP_RETURN_IF_ERROR(EncodeSegment(text.substr(segment), segment, &ids));
  }
  if (add_special_tokens) {
    ids.insert(ids.end(), spec_.template_suffix.begin(),
               spec_.template_suffix.end());
  }
  return ids;
}

Status Tokenizer::Impl::EncodeSegment(std::string_view text, size_t offset,
                                      std::vector<int32_t>* ids) const {
  std::string normalized(text);
  LP_RETURN_IF_ERROR(internal::Normalize(spec_.normalizers, &normalized));
  std::vector<internal::Piece> pieces;
  auto encode_pieces = [&](std::string_view stretch, bool at_start) -> Status {
    if (stretch.empty()) return OkStatus();
    pieces.clear();
    pieces.push_back(internal::Piece{std::string(stretch), at_start});
    LP_RETURN_IF_ERROR(internal::PreTokenize(spec_.pre_tokenizers, &pieces));
    for (const internal::Piece& p : pieces) {
      internal::EncodeWord(spec_, p.text, ids);
    }
    return OkStatus();
  };
  size_t pos = 0;
  for (const internal::AddedMatch& m : normalized_tokens_.Find(normalized)) {
    LP_RETURN_IF_ERROR(
        encode_pieces(std::string_view(normalized).substr(pos, m.begin - pos),
                      offset == 0 && pos == 0));
    ids->push_back(m.id);
    pos = m.end;
  }
  return encode_pieces(std::string_view(normalized).substr(pos),
                       offset == 0 && pos == 0);
}

StatusOr<std::string> Tokenizer::Impl::Decode(const std::vector<int32_t>& ids,
                                              bool skip_special) const {
  const auto size = static_cast<int64_t>(spec_.id_to_token.size());
  std::vector<std::string> tokens;
  tokens.reserve(ids.size());
  for (int32_t id : ids) {
    if (id < 0 || id >= size) {
      return InvalidArgument("Decode: token id " + std::to_string(id) +
                             " out of range [0, " + std::to_string(size) + ")");
    }
    if (!spec_.has_token[id]) {
      return InvalidArgument("Decode: token id " + std::to_string(id) +
                             " has no token in the vocabulary");
    }
    if (skip_special && spec_.is_special[id]) continue;
    tokens.push_back(spec_.id_to_token[id]);
  }
  std::string out;
  if (spec_.decoders.empty()) {
    // No decoder: Hugging Face joins the tokens with spaces.
    for (size_t i = 0; i < tokens.size(); ++i) {
      if (i > 0) out += ' ';
      out += tokens[i];
    }
    return out;
  }
  internal::RunDecoders(spec_.decoders, &tokens);
  for (const std::string& token : tokens) out += token;
  return out;
}

Tokenizer::Tokenizer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Tokenizer::~Tokenizer() = default;

StatusOr<std::unique_ptr<Tokenizer>> Tokenizer::FromJson(
    std::string_view json, std::string_view file) {
  StatusOr<internal::TokenizerSpec> parsed =
      internal::ParseTokenizerSpec(json, file);
  if (!parsed.ok()) return kernels::PrintableStatus(parsed.status());
  internal::TokenizerSpec spec = *std::move(parsed);
  return std::unique_ptr<Tokenizer>(
      new Tokenizer(std::make_unique<Impl>(std::move(spec))));
}

StatusOr<std::unique_ptr<Tokenizer>> Tokenizer::Load(const std::string& path) {
  LP_ASSIGN_OR_RETURN(std::string text, kernels::model::internal::ReadSmallFile(
                                            path, kMaxFileBytes));
  return FromJson(text, path);
}

int64_t Tokenizer::vocab_size() const {
  return static_cast<int64_t>(impl_->spec().id_to_token.size());
}

StatusOr<std::vector<int32_t>> Tokenizer::Encode(
    std::string_view text, bool add_special_tokens) const {
  StatusOr<std::vector<int32_t>> ids = impl_->Encode(text, add_special_tokens);
  if (!ids.ok()) return kernels::PrintableStatus(ids.status());
  return ids;
}

StatusOr<std::string> Tokenizer::Decode(const std::vector<int32_t>& ids,
                                        bool skip_special) const {
  StatusOr<std::string> text = impl_->Decode(ids, skip_special);
  if (!text.ok()) return kernels::PrintableStatus(text.status());
  return text;
}

std::optional<int32_t> Tokenizer::TokenId(std::string_view token) const {
  const internal::TokenizerSpec& s = impl_->spec();
  for (const internal::AddedToken& t : s.added_tokens) {
    if (t.content == token) return t.id;
  }
  auto it = s.vocab.find(std::string(token));
  if (it == s.vocab.end()) return std::nullopt;
  return it->second;
}

std::optional<std::string> Tokenizer::TokenText(int32_t id) const {
  const internal::TokenizerSpec& s = impl_->spec();
  if (id < 0 || static_cast<size_t>(id) >= s.id_to_token.size() ||
      !s.has_token[id]) {
    return std::nullopt;
  }
  return s.id_to_token[id];
}

bool Tokenizer::IsSpecial(int32_t id) const {
  const internal::TokenizerSpec& s = impl_->spec();
  return id >= 0 && static_cast<size_t>(id) < s.is_special.size() &&
         s.is_special[id];
}

const std::vector<int32_t>& Tokenizer::template_prefix() const {
  return impl_->spec().template_prefix;
}
const std::vector<int32_t>& Tokenizer::template_suffix() const {
  return impl_->spec().template_suffix;
}

std::string UnicodeTablesDescription() {
  return "regex classes Unicode " + internal::UnicodeVersion() +
         " (Oniguruma " + onig_version() + "), normalization Unicode " +
         std::string(internal::NormalizationUnicodeVersion()) + " (utf8proc " +
         utf8proc_version() + ")";
}

}  // namespace layerproof::text
