// The tokenizer.json tokenizer: runs a parsed TokenizerSpec. Encoding is
// Hugging Face's pipeline: split the text on added tokens, then per
// remaining segment the normalizer, the pre-tokenizer and BPE per piece.
// Decoding maps ids to token strings and runs the decoder steps.
#include "kernels/model/tokenizer.h"

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kernels/model/internal/pretokenize.h"
#include "kernels/model/internal/tokenizer_spec.h"
#include "kernels/model/internal/unicode.h"
#include "kernels/status.h"

namespace layerproof::kernels::model {
namespace {

using internal::DecoderStep;
using internal::NormalizerStep;
using internal::PrependScheme;
using internal::PreTokenizerStep;

bool IsAsciiSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' ||
         c == '\f';
}

void ReplaceAll(std::string* s, std::string_view from, std::string_view to) {
  if (s->find(from) == std::string::npos) return;
  std::string out;
  out.reserve(s->size());
  size_t pos = 0;
  for (size_t hit; (hit = s->find(from, pos)) != std::string::npos;
       pos = hit + from.size()) {
    out.append(*s, pos, hit - pos);
    out.append(to);
  }
  out.append(*s, pos, std::string::npos);
  *s = std::move(out);
}

bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

// A pre-tokenized piece; at_start: it begins at offset 0 of the input text
// (Metaspace's "first" prepend scheme looks at that).
struct Piece {
  std::string text;
  bool at_start;
};

class BpeTokenizer final : public Tokenizer {
 public:
  explicit BpeTokenizer(internal::TokenizerSpec spec);
  BpeTokenizer(const BpeTokenizer&) = delete;
  BpeTokenizer& operator=(const BpeTokenizer&) = delete;

  Kind kind() const override { return spec_.kind; }
  int64_t vocab_size() const override {
    return static_cast<int64_t>(spec_.id_to_token.size());
  }
  StatusOr<std::vector<int32_t>> Encode(std::string_view text,
                                        bool add_bos) const override;
  StatusOr<std::string> Decode(const std::vector<int32_t>& ids,
                               bool skip_special) const override;
  std::optional<int32_t> TokenId(std::string_view token) const override;
  std::optional<int32_t> bos_id() const override { return spec_.bos_id; }
  std::optional<int32_t> eos_id() const override { return spec_.eos_id; }

 private:
  // Encodes a stretch of text without added tokens that starts at byte
  // `offset` of the input.
  Status EncodeSegment(std::string_view text, size_t offset,
                       std::vector<int32_t>* ids) const;
  Status Normalize(size_t offset, std::string* text) const;
  // Runs the pre-tokenizer steps; the last (ByteLevel) step of a byte-level
  // tokenizer is left to EncodePiece, which maps bytes to symbols directly.
  void PreTokenize(std::string text, bool at_start,
                   std::vector<Piece>* pieces) const;
  void EncodePiece(std::string_view piece, std::vector<int32_t>* ids) const;
  // The GPT-2 unicode form of raw bytes.
  static std::string ByteLevelForm(std::string_view bytes);

  internal::TokenizerSpec spec_;
  // The model.vocab id of each byte's GPT-2 character (byte-level), or of
  // its <0xNN> token (byte fallback); -1 when absent.
  std::array<int32_t, 256> byte_ids_;
  // Indices into spec_.added_tokens by first byte, longest content first.
  std::array<std::vector<size_t>, 256> added_by_first_byte_;
};

BpeTokenizer::BpeTokenizer(internal::TokenizerSpec spec)
    : spec_(std::move(spec)) {
  static const char kHex[] = "0123456789ABCDEF";
  for (int b = 0; b < 256; ++b) {
    std::string token;
    if (spec_.kind == Kind::kByteLevelBpe) {
      internal::AppendUtf8(internal::ByteToUnicode()[b], &token);
    } else {
      token = std::string("<0x") + kHex[b >> 4] + kHex[b & 15] + ">";
    }
    auto it = spec_.vocab.find(token);
    byte_ids_[b] = it == spec_.vocab.end() ? -1 : it->second;
  }
  for (size_t i = 0; i < spec_.added_tokens.size(); ++i) {
    const uint8_t first =
        static_cast<uint8_t>(spec_.added_tokens[i].content[0]);
    added_by_first_byte_[first].push_back(i);
  }
  for (auto& list : added_by_first_byte_) {
    std::stable_sort(list.begin(), list.end(), [this](size_t a, size_t b) {
      return spec_.added_tokens[a].content.size() >
             spec_.added_tokens[b].content.size();
    });
  }
}

StatusOr<std::vector<int32_t>> BpeTokenizer::Encode(std::string_view text,
                                                    bool add_bos) const {
  const size_t bad = internal::FindInvalidUtf8(text);
  if (bad != std::string_view::npos) {
    return InvalidArgument("Encode: text is not valid UTF-8 at byte offset " +
                           std::to_string(bad));
  }
  std::vector<int32_t> ids;
  if (add_bos && spec_.bos_id.has_value()) ids.push_back(*spec_.bos_id);

  // Split on added tokens: at each byte the longest content that matches.
  size_t segment = 0;
  for (size_t i = 0; i < text.size();) {
    const internal::AddedToken* match = nullptr;
    for (size_t k : added_by_first_byte_[static_cast<uint8_t>(text[i])]) {
      const internal::AddedToken& t = spec_.added_tokens[k];
      if (text.substr(i, t.content.size()) == t.content) {
        match = &t;
        break;
      }
    }
    if (match == nullptr) {
      ++i;
      continue;
    }
    size_t begin = i;
    size_t end = i + match->content.size();
    if (match->lstrip) {
      while (begin > segment && IsAsciiSpace(text[begin - 1])) --begin;
    }
    if (match->rstrip) {
      while (end < text.size() && IsAsciiSpace(text[end])) ++end;
    }
    LP_RETURN_IF_ERROR(
        EncodeSegment(text.substr(segment, begin - segment), segment, &ids));
    ids.push_back(match->id);
    segment = i = end;
  }
  LP_RETURN_IF_ERROR(EncodeSegment(text.substr(segment), segment, &ids));
  return ids;
}

Status BpeTokenizer::EncodeSegment(std::string_view text, size_t offset,
                                   std::vector<int32_t>* ids) const {
  if (text.empty()) return OkStatus();
  std::string normalized(text);
  LP_RETURN_IF_ERROR(Normalize(offset, &normalized));
  std::vector<Piece> pieces;
  PreTokenize(std::move(normalized), offset == 0, &pieces);
  for (const Piece& piece : pieces) EncodePiece(piece.text, ids);
  return OkStatus();
}

Status BpeTokenizer::Normalize(size_t offset, std::string* text) const {
  for (const NormalizerStep& step : spec_.normalizers) {
    switch (step.type) {
      case NormalizerStep::Type::kPrepend:
        if (!text->empty()) text->insert(0, step.content);
        break;
      case NormalizerStep::Type::kReplace:
        ReplaceAll(text, step.pattern, step.content);
        break;
      case NormalizerStep::Type::kNfc:
        // Composition is not implemented: refuse text that NFC could
        // change rather than tokenize it differently from the reference.
        for (size_t pos = 0, len = 0; pos < text->size(); pos += len) {
          const char32_t cp = internal::DecodeUtf8(*text, pos, &len);
          if (internal::MayChangeUnderNfc(cp)) {
            std::ostringstream msg;
            msg << "Encode: normalizer NFC: the character U+" << std::hex
                << std::uppercase << static_cast<uint32_t>(cp) << std::dec
                << " near byte offset " << offset + pos
                << " may change under NFC, and NFC composition is not "
                   "implemented";
            return Status(StatusCode::kUnimplemented, msg.str());
          }
        }
        break;
    }
  }
  return OkStatus();
}

void BpeTokenizer::PreTokenize(std::string text, bool at_start,
                               std::vector<Piece>* pieces) const {
  std::vector<Piece> current;
  current.push_back(Piece{std::move(text), at_start});
  std::vector<std::string_view> parts;
  for (const PreTokenizerStep& step : spec_.pre_tokenizers) {
    std::vector<Piece> next;
    for (Piece& piece : current) {
      switch (step.type) {
        case PreTokenizerStep::Type::kSplit:
        case PreTokenizerStep::Type::kByteLevel: {
          if (step.type == PreTokenizerStep::Type::kByteLevel &&
              step.add_prefix_space && !StartsWith(piece.text, " ")) {
            piece.text.insert(0, " ");
          }
          const bool split =
              step.type == PreTokenizerStep::Type::kSplit || step.use_regex;
          if (!split) {
            next.push_back(std::move(piece));
            break;
          }
          parts.clear();
          internal::SplitByPattern(step.type == PreTokenizerStep::Type::kSplit
                                       ? step.pattern
                                       : internal::SplitPattern::kGpt2,
                                   piece.text, &parts);
          for (size_t i = 0; i < parts.size(); ++i) {
            next.push_back(
                Piece{std::string(parts[i]), piece.at_start && i == 0});
          }
          break;
        }
        case PreTokenizerStep::Type::kMetaspace: {
          ReplaceAll(&piece.text, " ", step.replacement);
          const bool prepend =
              step.prepend_scheme == PrependScheme::kAlways ||
              (step.prepend_scheme == PrependScheme::kFirst && piece.at_start);
          if (prepend && !StartsWith(piece.text, step.replacement)) {
            piece.text.insert(0, step.replacement);
          }
          if (!step.split) {
            next.push_back(std::move(piece));
            break;
          }
          // Each replacement character begins a new piece.
          std::string_view s = piece.text;
          size_t begin = 0;
          for (size_t hit = s.find(step.replacement, 1);
               hit != std::string_view::npos;
               hit = s.find(step.replacement, hit + step.replacement.size())) {
            if (hit > begin) {
              next.push_back(Piece{std::string(s.substr(begin, hit - begin)),
                                   piece.at_start && begin == 0});
            }
            begin = hit;
          }
          next.push_back(Piece{std::string(s.substr(begin)),
                               piece.at_start && begin == 0});
          break;
        }
      }
    }
    current = std::move(next);
  }
  for (Piece& piece : current) {
    if (!piece.text.empty()) pieces->push_back(std::move(piece));
  }
}

std::string BpeTokenizer::ByteLevelForm(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size() * 2);
  for (char c : bytes) {
    internal::AppendUtf8(internal::ByteToUnicode()[static_cast<uint8_t>(c)],
                         &out);
  }
  return out;
}

void BpeTokenizer::EncodePiece(std::string_view piece,
                               std::vector<int32_t>* ids) const {
  const bool byte_level = spec_.kind == Kind::kByteLevelBpe;
  if (spec_.ignore_merges) {
    auto it = spec_.vocab.find(byte_level ? ByteLevelForm(piece)
                                          : std::string(piece));
    if (it != spec_.vocab.end()) {
      ids->push_back(it->second);
      return;
    }
  }

  std::vector<int32_t> symbols;
  symbols.reserve(piece.size());
  bool last_unk = false;
  auto push_unk = [&] {
    if (!spec_.unk_id.has_value()) return;  // Dropped, as Hugging Face does.
    if (!(spec_.fuse_unk && last_unk)) symbols.push_back(*spec_.unk_id);
    last_unk = true;
  };
  if (byte_level) {
    for (char c : piece) {
      const int32_t id = byte_ids_[static_cast<uint8_t>(c)];
      if (id < 0) {
        push_unk();
      } else {
        symbols.push_back(id);
        last_unk = false;
      }
    }
  } else {
    std::string ch;
    for (size_t pos = 0, len = 0; pos < piece.size(); pos += len) {
      internal::DecodeUtf8(piece, pos, &len);
      ch.assign(piece.substr(pos, len));
      auto it = spec_.vocab.find(ch);
      if (it != spec_.vocab.end()) {
        symbols.push_back(it->second);
        last_unk = false;
        continue;
      }
      const bool fallback = spec_.byte_fallback &&
                            std::all_of(ch.begin(), ch.end(), [this](char c) {
                              return byte_ids_[static_cast<uint8_t>(c)] >= 0;
                            });
      if (fallback) {
        for (char c : ch) symbols.push_back(byte_ids_[static_cast<uint8_t>(c)]);
        last_unk = false;
      } else {
        push_unk();
      }
    }
  }
  spec_.merges.Apply(&symbols);
  ids->insert(ids->end(), symbols.begin(), symbols.end());
}

// Decoder steps. Each maps the token strings to new token strings, as the
// decoders of Hugging Face's decode_chain do.
void RunDecoderStep(const DecoderStep& step, std::vector<std::string>* tokens) {
  std::vector<std::string>& t = *tokens;
  switch (step.type) {
    case DecoderStep::Type::kByteLevel: {
      // Each token's characters back to bytes; a token with a character
      // outside the byte mapping (an added token, say) passes through as is.
      std::string out;
      for (const std::string& token : t) {
        std::string bytes;
        bool mapped = true;
        for (size_t pos = 0, len = 0; pos < token.size() && mapped;
             pos += len) {
          const int b =
              internal::UnicodeToByte(internal::DecodeUtf8(token, pos, &len));
          if (b < 0) {
            mapped = false;
          } else {
            bytes.push_back(static_cast<char>(b));
          }
        }
        out += mapped ? bytes : token;
      }
      t.assign(1, std::move(out));
      break;
    }
    case DecoderStep::Type::kReplace:
      for (std::string& token : t)
        ReplaceAll(&token, step.pattern, step.content);
      break;
    case DecoderStep::Type::kByteFallback: {
      // Runs of <0xNN> tokens become their bytes, kept as-is even when they
      // are not valid UTF-8 (Hugging Face writes U+FFFD per byte there).
      std::vector<std::string> out;
      std::string bytes;
      auto hex = [](char c) -> int {
        if (c >= '0' && c <= '9') return c - '0';
        if (c >= 'A' && c <= 'F') return c - 'A' + 10;
        if (c >= 'a' && c <= 'f') return c - 'a' + 10;
        return -1;
      };
      for (std::string& token : t) {
        const bool is_byte = token.size() == 6 && StartsWith(token, "<0x") &&
                             token[5] == '>' && hex(token[3]) >= 0 &&
                             hex(token[4]) >= 0;
        if (is_byte) {
          bytes.push_back(
              static_cast<char>(hex(token[3]) * 16 + hex(token[4])));
          continue;
        }
        if (!bytes.empty()) out.push_back(std::move(bytes));
        bytes.clear();
        out.push_back(std::move(token));
      }
      if (!bytes.empty()) out.push_back(std::move(bytes));
      t = std::move(out);
      break;
    }
    case DecoderStep::Type::kFuse: {
      std::string out;
      for (const std::string& token : t) out += token;
      t.assign(1, std::move(out));
      break;
    }
    case DecoderStep::Type::kStrip:
      for (std::string& token : t) {
        const std::string_view c = step.content;
        std::string_view rest = token;
        for (int64_t k = 0; k < step.start && StartsWith(rest, c); ++k) {
          rest.remove_prefix(c.size());
        }
        for (int64_t k = 0; k < step.stop && rest.size() >= c.size() &&
                            rest.substr(rest.size() - c.size()) == c;
             ++k) {
          rest.remove_suffix(c.size());
        }
        token = std::string(rest);
      }
      break;
    case DecoderStep::Type::kMetaspace:
      // Hugging Face drops every replacement character of the first token
      // (not only a leading one) unless the prepend scheme is "never".
      for (size_t i = 0; i < t.size(); ++i) {
        const bool drop =
            i == 0 && step.prepend_scheme != PrependScheme::kNever;
        ReplaceAll(&t[i], step.pattern, drop ? "" : " ");
      }
      break;
  }
}

StatusOr<std::string> BpeTokenizer::Decode(const std::vector<int32_t>& ids,
                                           bool skip_special) const {
  std::vector<std::string> tokens;
  tokens.reserve(ids.size());
  for (int32_t id : ids) {
    if (id < 0 || id >= vocab_size()) {
      return InvalidArgument("Decode: token id " + std::to_string(id) +
                             " out of range [0, " +
                             std::to_string(vocab_size()) + ")");
    }
    if (!spec_.has_token[id]) {
      return InvalidArgument("Decode: token id " + std::to_string(id) +
                             " has no token in the vocabulary");
    }
    if (skip_special && spec_.is_special[id]) continue;
    tokens.push_back(spec_.id_to_token[id]);
  }
  for (const DecoderStep& step : spec_.decoders) RunDecoderStep(step, &tokens);
  std::string out;
  for (const std::string& token : tokens) out += token;
  return out;
}

std::optional<int32_t> BpeTokenizer::TokenId(std::string_view token) const {
  for (const internal::AddedToken& t : spec_.added_tokens) {
    if (t.content == token) return t.id;
  }
  auto it = spec_.vocab.find(std::string(token));
  if (it == spec_.vocab.end()) return std::nullopt;
  return it->second;
}

}  // namespace

StatusOr<std::unique_ptr<Tokenizer>> Tokenizer::FromJson(
    std::string_view json, std::string_view file) {
  LP_ASSIGN_OR_RETURN(internal::TokenizerSpec spec,
                      internal::ParseTokenizerSpec(json, file));
  return std::unique_ptr<Tokenizer>(new BpeTokenizer(std::move(spec)));
}

StatusOr<std::unique_ptr<Tokenizer>> Tokenizer::Load(const std::string& path) {
  constexpr std::streamoff kMaxBytes = std::streamoff{1} << 30;
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) {
    return Status(StatusCode::kNotFound, path + ": cannot open tokenizer file");
  }
  const std::streamoff size = in.tellg();
  if (size < 0 || size > kMaxBytes) {
    return InvalidArgument(path + ": tokenizer file size " +
                           std::to_string(size) + " is not in [0, 1 GiB]");
  }
  std::string text(static_cast<size_t>(size), '\0');
  in.seekg(0);
  if (!in.read(text.data(), size)) {
    return Unavailable(path + ": reading the tokenizer file failed");
  }
  return FromJson(text, path);
}

}  // namespace layerproof::kernels::model
