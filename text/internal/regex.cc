#include "text/internal/regex.h"

#include <oniguruma.h>

#include <mutex>

#include "text/internal/unicode.h"

namespace layerproof::text::internal {

struct Regex::Compiled {
  OnigRegex re = nullptr;
  ~Compiled() {
    if (re != nullptr) onig_free(re);
  }
};

namespace {

void InitializeOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    OnigEncoding encodings[] = {ONIG_ENCODING_UTF8};
    onig_initialize(encodings, 1);
    // A search (not only one match attempt, which has this limit by
    // default) stops with an error after this many backtracking steps, so
    // a hostile pattern cannot hold a thread: real patterns stay orders of
    // magnitude below it, and the error is InvalidArgument, never a guess.
    onig_set_retry_limit_in_search(10'000'000);
  });
}

std::string ErrorText(int code, OnigErrorInfo* info) {
  OnigUChar buf[ONIG_MAX_ERROR_MESSAGE_LEN];
  const int n = info != nullptr ? onig_error_code_to_str(buf, code, info)
                                : onig_error_code_to_str(buf, code);
  return std::string(reinterpret_cast<const char*>(buf),
                     n > 0 ? static_cast<size_t>(n) : 0);
}

const OnigUChar* Bytes(std::string_view s) {
  return reinterpret_cast<const OnigUChar*>(s.data());
}

// \p{Cn} compiled once, for IsAssigned.
const Regex& Unassigned() {
  static const Regex re = *Regex::Compile("\\p{Cn}");
  return re;
}

}  // namespace

StatusOr<Regex> Regex::Compile(std::string_view pattern) {
  InitializeOnce();
  auto compiled = std::make_shared<Compiled>();
  OnigErrorInfo info;
  const int r = onig_new(&compiled->re, Bytes(pattern),
                         Bytes(pattern) + pattern.size(), ONIG_OPTION_NONE,
                         ONIG_ENCODING_UTF8, ONIG_SYNTAX_ONIGURUMA, &info);
  if (r != ONIG_NORMAL) {
    compiled->re = nullptr;
    return kernels::InvalidArgument("regex does not compile: " +
                                    ErrorText(r, &info));
  }
  return Regex(std::string(pattern), std::move(compiled));
}

Status Regex::FindAll(std::string_view text, std::vector<Match>* out) const {
  const OnigUChar* begin = Bytes(text);
  const OnigUChar* end = begin + text.size();
  std::unique_ptr<OnigRegion, void (*)(OnigRegion*)> region(
      onig_region_new(), [](OnigRegion* r) { onig_region_free(r, 1); });
  size_t from = 0;
  bool have_last = false;
  size_t last_end = 0;
  while (from <= text.size()) {
    const int r = onig_search(compiled_->re, begin, end, begin + from, end,
                              region.get(), ONIG_OPTION_NONE);
    if (r == ONIG_MISMATCH) break;
    if (r < 0) {
      return kernels::InvalidArgument(
          "regex search stopped (the pattern backtracks past Oniguruma's "
          "limit): " + ErrorText(r, nullptr));
    }
    const auto s = static_cast<size_t>(region->beg[0]);
    const auto e = static_cast<size_t>(region->end[0]);
    if (s == e && have_last && last_end == e) {
      if (from >= text.size()) break;
      size_t len = 1;
      DecodeUtf8(text, from, &len);
      from += len;
      continue;
    }
    from = e;
    have_last = true;
    last_end = e;
    out->emplace_back(s, e);
  }
  return kernels::OkStatus();
}

bool IsWhiteSpace(char32_t cp) {
  return ONIGENC_IS_CODE_CTYPE(ONIG_ENCODING_UTF8,
                               static_cast<OnigCodePoint>(cp),
                               ONIGENC_CTYPE_SPACE);
}

bool IsWordChar(char32_t cp) {
  return ONIGENC_IS_CODE_CTYPE(ONIG_ENCODING_UTF8,
                               static_cast<OnigCodePoint>(cp),
                               ONIGENC_CTYPE_WORD);
}

size_t FindUnassigned(std::string_view text) {
  std::vector<Match> found;
  if (!Unassigned().FindAll(text, &found).ok()) return 0;  // Refuse: unsure.
  for (const auto& [begin, end] : found) {
    size_t len = 0;
    const char32_t cp = DecodeUtf8(text, begin, &len);
    const bool noncharacter =
        (cp >= 0xFDD0 && cp <= 0xFDEF) || (cp & 0xFFFE) == 0xFFFE;
    if (!noncharacter) return begin;
  }
  return std::string_view::npos;
}

std::string UnicodeVersion() {
  // Oniguruma's release notes: 6.9.8 updated to Unicode 14.0, 6.9.9 to
  // 15.1, 6.9.10 to 16.0.
  const int v = ONIGURUMA_VERSION_INT;
  if (v >= 60910) return "16.0";
  if (v >= 60909) return "15.1";
  if (v >= 60908) return "14.0";
  return "13.0 or earlier";
}

}  // namespace layerproof::text::internal
