// Status at store/'s boundary: absl::Status and absl::StatusOr (STYLE.md),
// with the conversion from kernels::Status (the codes are numerically the
// same). LP_RETURN_IF_ERROR / LP_ASSIGN_OR_RETURN (kernels/status.h) work
// with both kinds. Thread safety: pure functions.
#ifndef LAYERPROOF_STORE_STATUS_H_
#define LAYERPROOF_STORE_STATUS_H_

#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "kernels/printable.h"
#include "kernels/status.h"

namespace layerproof::store {

inline absl::Status ToAbslStatus(const kernels::Status& s) {
  if (s.ok()) return absl::OkStatus();
  return absl::Status(static_cast<absl::StatusCode>(s.code()), s.message());
}

// `s` with its message made printable (kernels/printable.h; OK stays OK).
// The public entry points of the parsers of outside input return their
// errors through it, so that no message quotes an attacker's bytes raw,
// however deep in the parser it was made (tests/fuzz asserts it).
inline absl::Status PrintableStatus(const absl::Status& s) {
  const std::string_view message(s.message().data(), s.message().size());
  if (s.ok() || kernels::IsPrintable(message)) return s;
  return absl::Status(s.code(), kernels::Printable(message));
}
template <typename T>
absl::StatusOr<T> PrintableStatus(absl::StatusOr<T> v) {
  if (v.ok()) return v;
  return PrintableStatus(v.status());
}

}  // namespace layerproof::store

#endif  // LAYERPROOF_STORE_STATUS_H_
