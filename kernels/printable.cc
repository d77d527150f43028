#include "kernels/printable.h"

#include <cstdint>

namespace layerproof::kernels {
namespace {

// The length of the valid UTF-8 sequence of a printable code point that
// starts at s[i], or 0 (RFC 3629: no overlong forms, no surrogates, at most
// U+10FFFF; C1 controls count as not printable).
size_t PrintableUtf8Length(std::string_view s, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<uint8_t>(s[k]); };
  const uint8_t b0 = byte(i);
  size_t n = 0;
  uint32_t cp = 0;
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    n = 2, cp = b0 & 0x1F;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    n = 3, cp = b0 & 0x0F;
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    n = 4, cp = b0 & 0x07;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    const uint8_t b = byte(i + k);
    if ((b & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (b & 0x3F);
  }
  static constexpr uint32_t kMin[5] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < kMin[n] || cp > 0x10FFFF) return 0;  // overlong, too big
  if (cp >= 0xD800 && cp <= 0xDFFF) return 0;   // surrogate
  if (cp >= 0x80 && cp <= 0x9F) return 0;       // C1 control
  return n;
}

void AppendHex(std::string& out, uint8_t b) {
  static constexpr char kHex[] = "0123456789abcdef";
  out += "\\x";
  out += kHex[b >> 4];
  out += kHex[b & 0xF];
}

}  // namespace

std::string Printable(std::string_view bytes, size_t max_bytes) {
  std::string out;
  const bool truncated = bytes.size() > max_bytes;
  const std::string_view s = truncated ? bytes.substr(0, max_bytes) : bytes;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    const uint8_t b = static_cast<uint8_t>(s[i]);
    if (b >= 0x20 && b < 0x7F) {
      out += static_cast<char>(b);
      ++i;
    } else if (b == '\n') {
      out += "\\n", ++i;
    } else if (b == '\r') {
      out += "\\r", ++i;
    } else if (b == '\t') {
      out += "\\t", ++i;
    } else if (const size_t n = PrintableUtf8Length(s, i); n > 0) {
      out.append(s.substr(i, n));
      i += n;
    } else {
      AppendHex(out, b);
      ++i;
    }
  }
  if (truncated) out += "...";
  return out;
}

Status PrintableStatus(Status s) {
  if (s.ok() || IsPrintable(s.message())) return s;
  return Status(s.code(), Printable(s.message()));
}

bool IsPrintable(std::string_view text) {
  for (size_t i = 0; i < text.size();) {
    const uint8_t b = static_cast<uint8_t>(text[i]);
    if (b >= 0x20 && b < 0x7F) {
      ++i;
    } else if (const size_t n = PrintableUtf8Length(text, i); n > 0) {
      i += n;
    } else {
      return false;
    }
  }
  return true;
}

}  // namespace layerproof::kernels
