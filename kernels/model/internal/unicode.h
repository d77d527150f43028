// UTF-8 and the few Unicode properties the tokenizers need: validation,
// decoding and encoding of code points, the \p{L} / \p{N} / \s classes of
// the pre-tokenizer regexes, the GPT-2 byte-to-unicode mapping, and an NFC
// quick check.
//
// \p{L} and \p{N} are approximated by range tables written per block, not
// generated from the Unicode Character Database. They cover Basic Latin,
// Latin-1 Supplement, Latin Extended-A/B/Additional, IPA, spacing modifier
// letters, Greek (and Greek Extended), Cyrillic, Armenian, Hebrew, Arabic
// (and its supplements and presentation forms), the Indic scripts from
// Devanagari to Malayalam (letters as xx05-xx39, xx3D, xx58-xx61; digits
// xx66-xx6F), Thai, Lao, Georgian, Hangul (Jamo, compatibility Jamo,
// syllables), Ethiopic, Cherokee, Khmer, letterlike symbols, CJK unified
// ideographs (with extensions A-G and the compatibility blocks),
// Hiragana, Katakana, Bopomofo, fullwidth and halfwidth forms and the
// mathematical alphanumerics; numbers are the decimal digit blocks of those
// scripts plus superscripts, fractions, Roman numerals, circled and
// fullwidth digits. Combining marks are neither letters nor numbers. A
// character outside these tables is classed "other" even where Unicode
// calls it a letter. \s is the exact White_Space property.
//
// Thread safety: pure functions over constant tables.
#ifndef LAYERPROOF_KERNELS_MODEL_INTERNAL_UNICODE_H_
#define LAYERPROOF_KERNELS_MODEL_INTERNAL_UNICODE_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace layerproof::kernels::model::internal {

// Offset of the first byte that does not begin a well-formed UTF-8 sequence
// (overlong forms, surrogates and code points above U+10FFFF are
// ill-formed), or std::string_view::npos when all of `text` is valid.
size_t FindInvalidUtf8(std::string_view text);

// Decodes the code point at `text[pos]`. Precondition: `text` is valid UTF-8
// and pos < text.size(). Sets *len to the sequence length (1..4).
char32_t DecodeUtf8(std::string_view text, size_t pos, size_t* len);

// Appends the UTF-8 encoding of `cp` (a Unicode scalar value).
void AppendUtf8(char32_t cp, std::string* out);

bool IsLetter(char32_t cp);      // \p{L}, approximated as described above.
bool IsNumber(char32_t cp);      // \p{N}, approximated as described above.
bool IsWhitespace(char32_t cp);  // \s: the White_Space property.

// True when `cp` may change under NFC: the composing combining marks, the
// conjoining Hangul vowels and trailing consonants, and the NFC singletons
// (compatibility ideographs, Angstrom and Ohm signs, ...). Text without any
// such character is unchanged by NFC.
bool MayChangeUnderNfc(char32_t cp);

// GPT-2's bytes_to_unicode(): each byte as a printable code point. The
// printable bytes 0x21-0x7E, 0xA1-0xAC and 0xAE-0xFF map to themselves; the
// other 68 map, in byte order, to U+0100 upward.
const std::array<char32_t, 256>& ByteToUnicode();

// The inverse of ByteToUnicode(): the byte for `cp`, or -1 when `cp` is not
// the image of any byte.
int UnicodeToByte(char32_t cp);

}  // namespace layerproof::kernels::model::internal

#endif  // LAYERPROOF_KERNELS_MODEL_INTERNAL_UNICODE_H_
