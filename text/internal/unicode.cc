#include "text/internal/unicode.h"

#include <utf8proc.h>

#include <cstdlib>
#include <memory>

namespace layerproof::text::internal {
namespace {

// The length utf8proc_iterate() consumed at `pos`, or a negative error.
utf8proc_ssize_t Iterate(std::string_view text, size_t pos,
                         utf8proc_int32_t* cp) {
  return utf8proc_iterate(
      reinterpret_cast<const utf8proc_uint8_t*>(text.data() + pos),
      static_cast<utf8proc_ssize_t>(text.size() - pos), cp);
}

}  // namespace

size_t FindInvalidUtf8(std::string_view text) {
  for (size_t pos = 0; pos < text.size();) {
    if (static_cast<uint8_t>(text[pos]) < 0x80) {
      ++pos;
      continue;
    }
    utf8proc_int32_t cp;
    const utf8proc_ssize_t n = Iterate(text, pos, &cp);
    if (n <= 0) return pos;
    pos += static_cast<size_t>(n);
  }
  return std::string_view::npos;
}

char32_t DecodeUtf8(std::string_view text, size_t pos, size_t* len) {
  const auto b = static_cast<uint8_t>(text[pos]);
  if (b < 0x80) {
    *len = 1;
    return b;
  }
  utf8proc_int32_t cp = 0xFFFD;
  const utf8proc_ssize_t n = Iterate(text, pos, &cp);
  *len = n > 0 ? static_cast<size_t>(n) : 1;
  return static_cast<char32_t>(cp);
}

void AppendUtf8(char32_t cp, std::string* out) {
  utf8proc_uint8_t buf[4];
  const utf8proc_ssize_t n =
      utf8proc_encode_char(static_cast<utf8proc_int32_t>(cp), buf);
  out->append(reinterpret_cast<const char*>(buf), static_cast<size_t>(n));
}

size_t CountCodePoints(std::string_view text) {
  size_t n = 0;
  for (char c : text) n += (static_cast<uint8_t>(c) & 0xC0) != 0x80;
  return n;
}

StatusOr<std::string> Normalize(std::string_view text, NormalForm form) {
  // Only text outside ASCII can change (every ASCII character is its own
  // NFC, NFD, NFKC and NFKD form).
  bool ascii = true;
  for (char c : text) ascii &= static_cast<uint8_t>(c) < 0x80;
  if (ascii) return std::string(text);
  int options = UTF8PROC_STABLE;
  switch (form) {
    case NormalForm::kNfc: options |= UTF8PROC_COMPOSE; break;
    case NormalForm::kNfd: options |= UTF8PROC_DECOMPOSE; break;
    case NormalForm::kNfkc: options |= UTF8PROC_COMPOSE | UTF8PROC_COMPAT; break;
    case NormalForm::kNfkd:
      options |= UTF8PROC_DECOMPOSE | UTF8PROC_COMPAT;
      break;
  }
  utf8proc_uint8_t* out = nullptr;
  const utf8proc_ssize_t n = utf8proc_map(
      reinterpret_cast<const utf8proc_uint8_t*>(text.data()),
      static_cast<utf8proc_ssize_t>(text.size()), &out,
      static_cast<utf8proc_option_t>(options));
  std::unique_ptr<utf8proc_uint8_t, decltype(&std::free)> owned(out,
                                                                &std::free);
  if (n < 0) {
    return kernels::InvalidArgument(std::string("normalization failed: ") +
                                    utf8proc_errmsg(n));
  }
  return std::string(reinterpret_cast<const char*>(out),
                     static_cast<size_t>(n));
}

std::string_view NormalizationUnicodeVersion() {
  return utf8proc_unicode_version();
}

const std::array<char32_t, 256>& ByteToUnicode() {
  static const std::array<char32_t, 256> table = [] {
    std::array<char32_t, 256> t{};
    char32_t next = 0x100;
    for (int b = 0; b < 256; ++b) {
      const bool printable = (b >= 0x21 && b <= 0x7E) ||
                             (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE);
      t[b] = printable ? static_cast<char32_t>(b) : next++;
    }
    return t;
  }();
  return table;
}

int UnicodeToByte(char32_t cp) {
  static const std::array<int16_t, 0x144> inverse = [] {
    std::array<int16_t, 0x144> t;
    t.fill(-1);
    for (int b = 0; b < 256; ++b) t[ByteToUnicode()[b]] = static_cast<int16_t>(b);
    return t;
  }();
  return cp < inverse.size() ? inverse[cp] : -1;
}

std::string Utf8Lossy(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  for (size_t pos = 0; pos < bytes.size();) {
    const auto b = static_cast<uint8_t>(bytes[pos]);
    if (b < 0x80) {
      out.push_back(static_cast<char>(b));
      ++pos;
      continue;
    }
    utf8proc_int32_t cp;
    const utf8proc_ssize_t n = Iterate(bytes, pos, &cp);
    if (n > 0) {
      out.append(bytes.substr(pos, static_cast<size_t>(n)));
      pos += static_cast<size_t>(n);
      continue;
    }
    // The maximal subpart: the lead byte and the continuation bytes that
    // could still begin a well-formed sequence with it (Unicode Table 3-7).
    size_t len = 1;
    uint8_t lo = 0x80, hi = 0xBF;
    int need = 0;
    if (b >= 0xC2 && b <= 0xDF) {
      need = 1;
    } else if (b >= 0xE0 && b <= 0xEF) {
      need = 2;
      if (b == 0xE0) lo = 0xA0;
      if (b == 0xED) hi = 0x9F;
    } else if (b >= 0xF0 && b <= 0xF4) {
      need = 3;
      if (b == 0xF0) lo = 0x90;
      if (b == 0xF4) hi = 0x8F;
    }
    for (int k = 0; k < need && pos + len < bytes.size(); ++k) {
      const auto c = static_cast<uint8_t>(bytes[pos + len]);
      if (c < lo || c > hi) break;
      ++len;
      lo = 0x80;
      hi = 0xBF;
    }
    out.append("\xEF\xBF\xBD");
    pos += len;
  }
  return out;
}

}  // namespace layerproof::text::internal
