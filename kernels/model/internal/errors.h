// Status constructors for the codes kernels/status.h has no helper for, and
// the "<where>: got <x>, want <y>" message shape every loader error uses.
// Thread safety: pure functions.
#ifndef LAYERPROOF_KERNELS_MODEL_INTERNAL_ERRORS_H_
#define LAYERPROOF_KERNELS_MODEL_INTERNAL_ERRORS_H_

#include <string>
#include <string_view>
#include <utility>

#include "kernels/status.h"

namespace layerproof::kernels::model::internal {

inline Status NotFoundError(std::string m) {
  return Status(StatusCode::kNotFound, std::move(m));
}
inline Status FailedPreconditionError(std::string m) {
  return Status(StatusCode::kFailedPrecondition, std::move(m));
}
inline Status UnimplementedError(std::string m) {
  return Status(StatusCode::kUnimplemented, std::move(m));
}

// "<where>: got <got>, want <want>", e.g. "config.json: hidden_size: got -1,
// want an integer in [1, 65536]".
inline std::string GotWant(std::string_view where, std::string_view got,
                           std::string_view want) {
  std::string m(where);
  m += ": got ";
  m += got;
  m += ", want ";
  m += want;
  return m;
}

}  // namespace layerproof::kernels::model::internal

#endif  // LAYERPROOF_KERNELS_MODEL_INTERNAL_ERRORS_H_
