#include "kernels/model/internal/pretokenize.h"

#include <cstddef>
#include <optional>
#include <string_view>
#include <vector>

#include "kernels/model/internal/unicode.h"

namespace layerproof::kernels::model::internal {
namespace {

constexpr std::string_view kGpt2Regex =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";
constexpr std::string_view kLlama3Regex =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr std::string_view kQwen2Regex =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

enum class Class : uint8_t { kLetter, kNumber, kSpace, kOther };

// The text decoded once: code points, their classes and byte offsets.
struct Chars {
  std::vector<char32_t> cp;
  std::vector<Class> cls;
  std::vector<size_t> offset;  // cp.size() + 1 entries.
};

Chars Decode(std::string_view text) {
  Chars chars;
  chars.cp.reserve(text.size());
  chars.cls.reserve(text.size());
  chars.offset.reserve(text.size() + 1);
  size_t pos = 0;
  while (pos < text.size()) {
    size_t len;
    const char32_t cp = DecodeUtf8(text, pos, &len);
    Class cls = IsLetter(cp)       ? Class::kLetter
                : IsNumber(cp)     ? Class::kNumber
                : IsWhitespace(cp) ? Class::kSpace
                                   : Class::kOther;
    chars.cp.push_back(cp);
    chars.cls.push_back(cls);
    chars.offset.push_back(pos);
    pos += len;
  }
  chars.offset.push_back(pos);
  return chars;
}

char32_t AsciiLower(char32_t c) {
  return (c >= 'A' && c <= 'Z') ? c + ('a' - 'A') : c;
}

// 's 't 're 've 'm 'll 'd at i: the end of the match, or 0.
size_t MatchContraction(const Chars& c, size_t i, bool fold_case) {
  const size_t n = c.cp.size();
  if (c.cp[i] != '\'' || i + 1 >= n) return 0;
  auto at = [&](size_t k) { return fold_case ? AsciiLower(c.cp[k]) : c.cp[k]; };
  const char32_t c1 = at(i + 1);
  if (c1 == 's' || c1 == 't' || c1 == 'm' || c1 == 'd') return i + 2;
  if (i + 2 >= n) return 0;
  const char32_t c2 = at(i + 2);
  if ((c1 == 'r' && c2 == 'e') || (c1 == 'v' && c2 == 'e') ||
      (c1 == 'l' && c2 == 'l')) {
    return i + 3;
  }
  return 0;
}

size_t RunOf(const Chars& c, size_t i, Class cls) {
  while (i < c.cp.size() && c.cls[i] == cls) ++i;
  return i;
}

// \s+(?!\S)|\s+ at i, where c[i] is whitespace: the run, less its last
// character when a non-space follows and the run is longer than one.
size_t MatchTrailingSpace(const Chars& c, size_t i) {
  const size_t j = RunOf(c, i, Class::kSpace);
  if (j == c.cp.size() || j - i == 1) return j;
  return j - 1;
}

size_t MatchGpt2(const Chars& c, size_t i) {
  const size_t n = c.cp.size();
  if (size_t end = MatchContraction(c, i, /*fold_case=*/false)) return end;
  // ` ?\p{L}+`, ` ?\p{N}+`, ` ?[^\s\p{L}\p{N}]+`: the optional space is
  // taken when the class follows it.
  size_t k = i;
  if (c.cp[i] == ' ' && i + 1 < n && c.cls[i + 1] != Class::kSpace) k = i + 1;
  if (c.cls[k] != Class::kSpace) return RunOf(c, k, c.cls[k]);
  return MatchTrailingSpace(c, i);
}

bool IsCrLf(char32_t cp) { return cp == '\r' || cp == '\n'; }

size_t MatchLlama3(const Chars& c, size_t i, size_t max_digits) {
  const size_t n = c.cp.size();
  if (size_t end = MatchContraction(c, i, /*fold_case=*/true)) return end;
  // [^\r\n\p{L}\p{N}]?\p{L}+
  if (c.cls[i] == Class::kLetter) return RunOf(c, i, Class::kLetter);
  if (c.cls[i] != Class::kNumber && !IsCrLf(c.cp[i]) && i + 1 < n &&
      c.cls[i + 1] == Class::kLetter) {
    return RunOf(c, i + 1, Class::kLetter);
  }
  // \p{N}{1,3} (or \p{N})
  if (c.cls[i] == Class::kNumber) {
    size_t j = i;
    while (j < n && j - i < max_digits && c.cls[j] == Class::kNumber) ++j;
    return j;
  }
  //  ?[^\s\p{L}\p{N}]+[\r\n]*
  size_t k = i;
  if (c.cp[i] == ' ' && i + 1 < n && c.cls[i + 1] == Class::kOther) k = i + 1;
  if (c.cls[k] == Class::kOther) {
    size_t j = RunOf(c, k, Class::kOther);
    while (j < n && IsCrLf(c.cp[j])) ++j;
    return j;
  }
  // Here c[i] is whitespace. \s*[\r\n]+: up to the last CR/LF of the run.
  const size_t run_end = RunOf(c, i, Class::kSpace);
  for (size_t p = run_end; p > i; --p) {
    if (IsCrLf(c.cp[p - 1])) return p;
  }
  return MatchTrailingSpace(c, i);
}

}  // namespace

std::optional<SplitPattern> RecognizeSplitPattern(std::string_view regex) {
  if (regex == kGpt2Regex) return SplitPattern::kGpt2;
  if (regex == kLlama3Regex) return SplitPattern::kLlama3;
  if (regex == kQwen2Regex) return SplitPattern::kQwen2;
  return std::nullopt;
}

std::string_view SplitPatternRegex(SplitPattern pattern) {
  switch (pattern) {
    case SplitPattern::kGpt2:
      return kGpt2Regex;
    case SplitPattern::kLlama3:
      return kLlama3Regex;
    case SplitPattern::kQwen2:
      return kQwen2Regex;
  }
  return kGpt2Regex;
}

void SplitByPattern(SplitPattern pattern, std::string_view text,
                    std::vector<std::string_view>* pieces) {
  const Chars chars = Decode(text);
  const size_t n = chars.cp.size();
  size_t i = 0;
  while (i < n) {
    size_t end;
    switch (pattern) {
      case SplitPattern::kGpt2:
        end = MatchGpt2(chars, i);
        break;
      case SplitPattern::kLlama3:
        end = MatchLlama3(chars, i, 3);
        break;
      default:
        end = MatchLlama3(chars, i, 1);
        break;
    }
    pieces->push_back(
        text.substr(chars.offset[i], chars.offset[end] - chars.offset[i]));
    i = end;
  }
}

}  // namespace layerproof::kernels::model::internal
