// Split and Replace patterns of tokenizer.json, and every character class
// the tokenizer tests, on Oniguruma (Debian's libonig): the regex engine
// Hugging Face tokenizers itself uses (through the `onig` crate), with the
// same syntax (ONIG_SYNTAX_ONIGURUMA, UTF-8), the same leftmost-first
// backtracking and the same empty-match rule, so any pattern a real file
// carries means here what it means there.
//
// The Unicode tables are Oniguruma's own, of the version the installed
// library was built with (UnicodeVersion()). A code point that those tables
// leave unassigned has no known class; FindUnassigned() lets the tokenizer
// refuse it rather than guess (docs/text.md, "Unicode versions").
//
// Thread safety: a compiled Regex is immutable and may be searched from
// many threads at once (Oniguruma keeps search state per call).
#ifndef LAYERPROOF_TEXT_INTERNAL_REGEX_H_
#define LAYERPROOF_TEXT_INTERNAL_REGEX_H_

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kernels/status.h"

namespace layerproof::text::internal {

using kernels::Status;
using kernels::StatusOr;

// A match as byte offsets [begin, end) into the searched text.
using Match = std::pair<size_t, size_t>;

class Regex {
 public:
  // Compiles `pattern` (UTF-8). The error carries Oniguruma's message.
  static StatusOr<Regex> Compile(std::string_view pattern);

  // The successive non-overlapping matches in valid UTF-8 `text`, as the
  // onig crate's find_iter yields them: each search starts where the last
  // match ended, and an empty match right at the end of the previous one is
  // skipped by advancing one character. InvalidArgument when Oniguruma
  // stops a search at its backtracking limit (a hostile pattern).
  Status FindAll(std::string_view text, std::vector<Match>* out) const;

  const std::string& pattern() const { return pattern_; }

 private:
  struct Compiled;
  Regex(std::string pattern, std::shared_ptr<const Compiled> compiled)
      : pattern_(std::move(pattern)), compiled_(std::move(compiled)) {}

  std::string pattern_;
  std::shared_ptr<const Compiled> compiled_;
};

// Character classes by Oniguruma's Unicode tables.
bool IsWhiteSpace(char32_t cp);  // \s: the White_Space property.
bool IsWordChar(char32_t cp);    // \w
// The byte offset in valid UTF-8 `text` of the first code point whose
// General_Category is Cn (unassigned) in those tables, or npos. The 66
// noncharacters do not count: they are unassigned in every version.
size_t FindUnassigned(std::string_view text);

// The Unicode version of Oniguruma's tables, e.g. "14.0" (from the
// library's version: Oniguruma's release notes name it).
std::string UnicodeVersion();

}  // namespace layerproof::text::internal

#endif  // LAYERPROOF_TEXT_INTERNAL_REGEX_H_
