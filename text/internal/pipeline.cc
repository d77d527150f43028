#include "text/internal/pipeline.h"

#include <utf8proc.h>

#include <algorithm>
#include <cstddef>
#include <optional>
#include <utility>

#include "text/internal/regex.h"
#include "text/internal/unicode.h"

namespace layerproof::text::internal {
namespace {

using kernels::OkStatus;

bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

// `text` with every match of `pattern` replaced by `content`.
Status ReplaceMatches(const Pattern& pattern, std::string_view content,
                      std::string* text) {
  // Hugging Face finds no match in empty text, even for a pattern that
  // matches the empty string.
  if (text->empty()) return OkStatus();
  std::vector<Match> matches;
  LP_RETURN_IF_ERROR(pattern.FindAll(*text, &matches));
  if (matches.empty()) return OkStatus();
  std::string out;
  out.reserve(text->size());
  size_t pos = 0;
  for (const auto& [begin, end] : matches) {
    out.append(*text, pos, begin - pos);
    out.append(content);
    pos = end;
  }
  out.append(*text, pos, std::string::npos);
  *text = std::move(out);
  return OkStatus();
}

void ReplaceLiteral(std::string* s, std::string_view from, std::string_view to) {
  Pattern p;
  p.literal = std::string(from);
  (void)ReplaceMatches(p, to, s);  // A literal search cannot fail.
}

// Strips White_Space code points from the ends of `text`.
void StripWhiteSpace(bool left, bool right, std::string* text) {
  size_t begin = 0, end = text->size(), len = 0;
  if (left) {
    while (begin < end && IsWhiteSpace(DecodeUtf8(*text, begin, &len))) {
      begin += len;
    }
  }
  if (right) {
    while (end > begin) {
      size_t b = end - 1;
      while (b > begin && (static_cast<uint8_t>((*text)[b]) & 0xC0) == 0x80) --b;
      if (!IsWhiteSpace(DecodeUtf8(*text, b, &len))) break;
      end = b;
    }
  }
  *text = text->substr(begin, end - begin);
}

// The matches of a character predicate, one per character.
std::vector<Match> CharMatches(std::string_view text, bool (*pred)(char32_t)) {
  std::vector<Match> out;
  for (size_t pos = 0, len = 0; pos < text.size(); pos += len) {
    if (pred(DecodeUtf8(text, pos, &len))) out.emplace_back(pos, pos + len);
  }
  return out;
}

// Rust's char::is_numeric, which Hugging Face's Digits uses: the general
// categories Nd, Nl and No.
bool IsNumeric(char32_t c) {
  const utf8proc_category_t cat = utf8proc_category(static_cast<utf8proc_int32_t>(c));
  return cat == UTF8PROC_CATEGORY_ND || cat == UTF8PROC_CATEGORY_NL ||
         cat == UTF8PROC_CATEGORY_NO;
}

// Splits each piece with `split`, which returns the kept sub-ranges.
template <typename SplitFn>
Status SplitEach(std::vector<Piece>* pieces, SplitFn split) {
  std::vector<Piece> next;
  next.reserve(pieces->size());
  for (Piece& piece : *pieces) {
    std::vector<std::string_view> parts;
    LP_RETURN_IF_ERROR(split(piece, &parts));
    for (std::string_view part : parts) {
      if (part.empty()) continue;
      const bool first = part.data() == piece.text.data();
      next.push_back(Piece{std::string(part), piece.at_start && first});
    }
  }
  *pieces = std::move(next);
  return OkStatus();
}

}  // namespace

Status Normalize(const std::vector<NormalizerStep>& steps, std::string* text) {
  for (const NormalizerStep& step : steps) {
    switch (step.type) {
      case NormalizerStep::Type::kNormalForm: {
        LP_ASSIGN_OR_RETURN(*text, internal::Normalize(*text, step.form));
        break;
      }
      case NormalizerStep::Type::kPrepend:
        if (!text->empty()) text->insert(0, step.content);
        break;
      case NormalizerStep::Type::kReplace:
        LP_RETURN_IF_ERROR(ReplaceMatches(step.pattern, step.content, text));
        break;
      case NormalizerStep::Type::kStrip:
        StripWhiteSpace(step.strip_left, step.strip_right, text);
        break;
    }
  }
  return OkStatus();
}

std::vector<std::string_view> SplitPieces(std::string_view text,
                                          const std::vector<Match>& matches,
                                          bool invert,
                                          SplitBehavior behavior) {
  // (range, is_match) covering the text, as Pattern::find_matches.
  struct Part {
    size_t begin, end;
    bool is_match;
  };
  std::vector<Part> parts;
  if (text.empty()) {
    parts.push_back({0, 0, false});
  } else {
    size_t prev = 0;
    for (const auto& [s, e] : matches) {
      if (prev != s) parts.push_back({prev, s, false});
      parts.push_back({s, e, true});
      prev = e;
    }
    if (prev != text.size()) parts.push_back({prev, text.size(), false});
  }
  if (invert) {
    for (Part& p : parts) p.is_match = !p.is_match;
  }
  // (range, removed) after the behaviour.
  std::vector<Part> kept;
  bool previous_match = false;
  switch (behavior) {
    case SplitBehavior::kRemoved:
      for (const Part& p : parts) {
        if (!p.is_match) kept.push_back(p);
      }
      break;
    case SplitBehavior::kIsolated:
      kept = parts;
      break;
    case SplitBehavior::kMergedWithPrevious:
      for (const Part& p : parts) {
        if (p.is_match && !previous_match && !kept.empty()) {
          kept.back().end = p.end;
        } else {
          kept.push_back(p);
        }
        previous_match = p.is_match;
      }
      break;
    case SplitBehavior::kMergedWithNext:
      for (size_t k = parts.size(); k-- > 0;) {
        const Part& p = parts[k];
        if (p.is_match && !previous_match && !kept.empty()) {
          kept.back().begin = p.begin;
        } else {
          kept.push_back(p);
        }
        previous_match = p.is_match;
      }
      std::reverse(kept.begin(), kept.end());
      break;
    case SplitBehavior::kContiguous:
      for (const Part& p : parts) {
        if (p.is_match == previous_match && !kept.empty()) {
          kept.back().end = p.end;
        } else {
          kept.push_back(p);
        }
        previous_match = p.is_match;
      }
      break;
  }
  std::vector<std::string_view> out;
  out.reserve(kept.size());
  for (const Part& p : kept) out.push_back(text.substr(p.begin, p.end - p.begin));
  return out;
}

Status PreTokenize(const std::vector<PreTokenizerStep>& steps,
                   std::vector<Piece>* pieces) {
  for (const PreTokenizerStep& step : steps) {
    switch (step.type) {
      case PreTokenizerStep::Type::kSplit:
        LP_RETURN_IF_ERROR(SplitEach(
            pieces, [&](const Piece& p, std::vector<std::string_view>* out) {
              std::vector<Match> m;
              LP_RETURN_IF_ERROR(step.pattern.FindAll(p.text, &m));
              *out = SplitPieces(p.text, m, step.invert, step.behavior);
              return OkStatus();
            }));
        break;
      case PreTokenizerStep::Type::kByteLevel: {
        for (Piece& p : *pieces) {
          if (step.add_prefix_space && !StartsWith(p.text, " ")) {
            p.text.insert(0, " ");
          }
        }
        if (step.use_regex) {
          LP_RETURN_IF_ERROR(SplitEach(
              pieces, [&](const Piece& p, std::vector<std::string_view>* out) {
                std::vector<Match> m;
                LP_RETURN_IF_ERROR(step.pattern.FindAll(p.text, &m));
                *out = SplitPieces(p.text, m, false, SplitBehavior::kIsolated);
                return OkStatus();
              }));
        }
        // Each byte as its printable stand-in.
        const auto& table = ByteToUnicode();
        for (Piece& p : *pieces) {
          std::string mapped;
          mapped.reserve(p.text.size() * 2);
          for (char c : p.text) AppendUtf8(table[static_cast<uint8_t>(c)], &mapped);
          p.text = std::move(mapped);
        }
        break;
      }
      case PreTokenizerStep::Type::kMetaspace: {
        for (Piece& p : *pieces) {
          ReplaceLiteral(&p.text, " ", step.replacement);
          const bool prepend =
              step.prepend_scheme == PrependScheme::kAlways ||
              (step.prepend_scheme == PrependScheme::kFirst && p.at_start);
          if (prepend && !StartsWith(p.text, step.replacement)) {
            p.text.insert(0, step.replacement);
          }
        }
        if (step.split) {
          Pattern rep;
          rep.literal = step.replacement;
          LP_RETURN_IF_ERROR(SplitEach(
              pieces, [&](const Piece& p, std::vector<std::string_view>* out) {
                std::vector<Match> m;
                LP_RETURN_IF_ERROR(rep.FindAll(p.text, &m));
                *out = SplitPieces(p.text, m, false,
                                   SplitBehavior::kMergedWithNext);
                return OkStatus();
              }));
        }
        break;
      }
      case PreTokenizerStep::Type::kDigits:
        LP_RETURN_IF_ERROR(SplitEach(
            pieces, [&](const Piece& p, std::vector<std::string_view>* out) {
              *out = SplitPieces(p.text, CharMatches(p.text, IsNumeric),
                                 false,
                                 step.individual_digits
                                     ? SplitBehavior::kIsolated
                                     : SplitBehavior::kContiguous);
              return OkStatus();
            }));
        break;
    }
  }
  std::erase_if(*pieces, [](const Piece& p) { return p.text.empty(); });
  return OkStatus();
}

void EncodeWord(const TokenizerSpec& spec, std::string_view word,
                std::vector<int32_t>* ids) {
  if (word.empty()) return;
  if (spec.ignore_merges) {
    auto it = spec.vocab.find(std::string(word));
    if (it != spec.vocab.end()) {
      ids->push_back(it->second);
      return;
    }
  }
  static const char kHex[] = "0123456789ABCDEF";
  std::vector<int32_t> symbols;
  symbols.reserve(word.size());
  // A pending unknown: Hugging Face adds it only when the next known
  // character (or the end) comes, so byte-fallback tokens in between go
  // first; fuse_unk folds consecutive unknowns into one.
  bool pending_unk = false;
  std::string s;
  for (size_t pos = 0, len = 0; pos < word.size(); pos += len) {
    DecodeUtf8(word, pos, &len);
    s.assign(word.substr(pos, len));
    if (pos != 0 && spec.continuing_subword_prefix.has_value()) {
      s.insert(0, *spec.continuing_subword_prefix);
    }
    if (pos + len == word.size() && spec.end_of_word_suffix.has_value()) {
      s += *spec.end_of_word_suffix;
    }
    if (auto it = spec.vocab.find(s); it != spec.vocab.end()) {
      if (pending_unk) symbols.push_back(*spec.unk_id);
      pending_unk = false;
      symbols.push_back(it->second);
      continue;
    }
    if (spec.byte_fallback) {
      std::vector<int32_t> bytes;
      for (char c : s) {
        const auto b = static_cast<uint8_t>(c);
        const std::string name =
            std::string("<0x") + kHex[b >> 4] + kHex[b & 15] + ">";
        auto it = spec.vocab.find(name);
        if (it == spec.vocab.end()) break;
        bytes.push_back(it->second);
      }
      if (bytes.size() == s.size()) {
        symbols.insert(symbols.end(), bytes.begin(), bytes.end());
        continue;
      }
    }
    if (spec.unk_id.has_value()) {
      if (pending_unk && !spec.fuse_unk) symbols.push_back(*spec.unk_id);
      pending_unk = true;
    }
  }
  if (pending_unk) symbols.push_back(*spec.unk_id);
  spec.merges.Apply(&symbols);
  ids->insert(ids->end(), symbols.begin(), symbols.end());
}

void RunDecoders(const std::vector<DecoderStep>& steps,
                 std::vector<std::string>* tokens) {
  std::vector<std::string>& t = *tokens;
  for (const DecoderStep& step : steps) {
    switch (step.type) {
      case DecoderStep::Type::kByteLevel: {
        // Each token's characters back to bytes; a token with a character
        // outside the byte mapping passes through as its UTF-8. The whole
        // becomes one string, ill-formed bytes as U+FFFD.
        std::string bytes;
        for (const std::string& token : t) {
          std::string mapped;
          bool ok = true;
          for (size_t pos = 0, len = 0; pos < token.size() && ok; pos += len) {
            const int b = UnicodeToByte(DecodeUtf8(token, pos, &len));
            ok = b >= 0;
            mapped.push_back(static_cast<char>(b));
          }
          bytes += ok ? mapped : token;
        }
        t.assign(1, Utf8Lossy(bytes));
        break;
      }
      case DecoderStep::Type::kReplace:
        for (std::string& token : t) {
          (void)ReplaceMatches(step.pattern, step.content, &token);
        }
        break;
      case DecoderStep::Type::kByteFallback: {
        // Runs of <0xNN> tokens become their bytes when those are valid
        // UTF-8, else one U+FFFD per byte.
        std::vector<std::string> out;
        std::string bytes;
        auto hex = [](char c) -> int {
          if (c >= '0' && c <= '9') return c - '0';
          if (c >= 'A' && c <= 'F') return c - 'A' + 10;
          if (c >= 'a' && c <= 'f') return c - 'a' + 10;
          return -1;
        };
        auto flush = [&] {
          if (bytes.empty()) return;
          if (FindInvalidUtf8(bytes) == std::string::npos) {
            out.push_back(bytes);
          } else {
            for (size_t k = 0; k < bytes.size(); ++k) out.push_back("\xEF\xBF\xBD");
          }
          bytes.clear();
        };
        for (std::string& token : t) {
          const bool is_byte = token.size() == 6 && StartsWith(token, "<0x") &&
                               token[5] == '>' && hex(token[3]) >= 0 &&
                               hex(token[4]) >= 0;
          if (is_byte) {
            bytes.push_back(static_cast<char>(hex(token[3]) * 16 + hex(token[4])));
            continue;
          }
          flush();
          out.push_back(std::move(token));
        }
        flush();
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
          ReplaceLiteral(&t[i], step.replacement, drop ? "" : " ");
        }
        break;
    }
  }
}

}  // namespace layerproof::text::internal
