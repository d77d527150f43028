// Printable(bytes): outside input made safe for a terminal, a log line or
// an error message. Files, protos and requests can carry any bytes, and an
// error that quotes them (a tensor name, a JSON parser's "last read", a
// field's value) must never put an attacker's raw bytes, newlines or
// terminal escapes in front of a person or a log parser. This is the one
// place that escaping lives; parsers quote untrusted text with it, and the
// sinks (the CLI's error lines, gRPC status messages) pass whole messages
// through it.
//
// Kept as is: printable ASCII and valid UTF-8 sequences of printable code
// points (so names in any script read normally). Escaped: \n, \r, \t as
// such; every other byte below 0x20, 0x7F, the C1 controls U+0080..U+009F,
// and every byte of an invalid or overlong UTF-8 sequence (or a surrogate,
// or a code point past U+10FFFF) as \xNN. A backslash is kept (paths).
// Output is capped: past `max_bytes` of input it stops and appends "...".
// Printable(Printable(s)) == Printable(s) for inputs under the cap.
// Thread safety: pure function.
#ifndef LAYERPROOF_KERNELS_PRINTABLE_H_
#define LAYERPROOF_KERNELS_PRINTABLE_H_

#include <cstddef>
#include <string>
#include <string_view>

#include "kernels/status.h"

namespace layerproof::kernels {

inline constexpr size_t kPrintableMaxBytes = 4096;

std::string Printable(std::string_view bytes,
                      size_t max_bytes = kPrintableMaxBytes);

// Whether Printable would return `text` unchanged (tests and fuzz targets
// assert it of every error message).
bool IsPrintable(std::string_view text);

// `s` with its message made Printable (OK stays OK). The public entry
// points of the parsers of outside input return their errors through it,
// so that no message quotes an attacker's bytes raw, however deep in the
// parser it was made (tests/fuzz asserts it).
Status PrintableStatus(Status s);
template <typename T>
StatusOr<T> PrintableStatus(StatusOr<T> v) {
  if (v.ok()) return v;
  return PrintableStatus(v.status());
}

}  // namespace layerproof::kernels

#endif  // LAYERPROOF_KERNELS_PRINTABLE_H_
