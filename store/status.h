// Status at store/'s boundary: absl::Status and absl::StatusOr (STYLE.md),
// with the conversion from kernels::Status (the codes are numerically the
// same). LP_RETURN_IF_ERROR / LP_ASSIGN_OR_RETURN (kernels/status.h) work
// with both kinds. Thread safety: pure functions.
#ifndef LAYERPROOF_STORE_STATUS_H_
#define LAYERPROOF_STORE_STATUS_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "kernels/status.h"

namespace layerproof::store {

inline absl::Status ToAbslStatus(const kernels::Status& s) {
  if (s.ok()) return absl::OkStatus();
  return absl::Status(static_cast<absl::StatusCode>(s.code()), s.message());
}

}  // namespace layerproof::store

#endif  // LAYERPROOF_STORE_STATUS_H_
