// UTF-8 and Unicode normalization for the tokenizers, on utf8proc (Debian's
// libutf8proc): validation, decoding and encoding of code points, the four
// normalization forms, and GPT-2's byte-to-unicode mapping (an arithmetic
// rule of the byte-level BPE format, not a Unicode property).
//
// Character classes (\p{L}, \s, ...) are not here: they belong to the regex
// engine (internal/regex.h), so that a split pattern and every class test
// of the tokenizer read one and the same Unicode table.
//
// Thread safety: pure functions.
#ifndef LAYERPROOF_TEXT_INTERNAL_UNICODE_H_
#define LAYERPROOF_TEXT_INTERNAL_UNICODE_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "kernels/status.h"

namespace layerproof::text::internal {

using kernels::Status;
using kernels::StatusOr;

// Offset of the first byte that does not begin a well-formed UTF-8 sequence
// (overlong forms, surrogates and code points above U+10FFFF are
// ill-formed), or std::string_view::npos when all of `text` is valid.
size_t FindInvalidUtf8(std::string_view text);

// Decodes the code point at `text[pos]`. Precondition: `text` is valid UTF-8
// and pos < text.size(). Sets *len to the sequence length (1..4).
char32_t DecodeUtf8(std::string_view text, size_t pos, size_t* len);

// Appends the UTF-8 encoding of `cp` (a Unicode scalar value).
void AppendUtf8(char32_t cp, std::string* out);

// Number of code points in valid UTF-8 `text`.
size_t CountCodePoints(std::string_view text);

enum class NormalForm : uint8_t { kNfc, kNfd, kNfkc, kNfkd };

// `text` (valid UTF-8) in the normal form, by utf8proc's tables.
StatusOr<std::string> Normalize(std::string_view text, NormalForm form);

// The Unicode version of utf8proc's tables, e.g. "15.0.0".
std::string_view NormalizationUnicodeVersion();

// GPT-2's bytes_to_unicode(): each byte as a printable code point. The
// printable bytes 0x21-0x7E, 0xA1-0xAC and 0xAE-0xFF map to themselves; the
// other 68 map, in byte order, to U+0100 upward.
const std::array<char32_t, 256>& ByteToUnicode();

// The inverse of ByteToUnicode(): the byte for `cp`, or -1 when `cp` is not
// the image of any byte.
int UnicodeToByte(char32_t cp);

// Replaces each ill-formed subsequence of `bytes` by U+FFFD, as Rust's
// String::from_utf8_lossy does (one U+FFFD per maximal subpart, the
// practice the Unicode Standard §3.9 recommends).
std::string Utf8Lossy(std::string_view bytes);

}  // namespace layerproof::text::internal

#endif  // LAYERPROOF_TEXT_INTERNAL_UNICODE_H_
