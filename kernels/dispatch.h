// Runtime choice of kernel backend.
//
// LAYERPROOF_BACKEND=ref|avx2|avx512|neon|cuda|auto forces a backend for
// DefaultBackend(); auto (the default) takes the fastest one this build has
// and this machine runs. Every backend gives the same bits, so the choice is
// about speed only. Implemented in kernels/cpu/dispatch.cc.
// Thread safety: all functions are safe to call concurrently; backends are
// created once and live for the process.
#ifndef LAYERPROOF_KERNELS_DISPATCH_H_
#define LAYERPROOF_KERNELS_DISPATCH_H_

#include <string_view>
#include <vector>

#include "kernels/backend.h"

namespace layerproof::kernels {

StatusOr<BackendKind> ParseBackendKind(std::string_view name);

// Backends compiled into this build that this machine can run, ref first,
// fastest last.
std::vector<BackendKind> AvailableBackends();

// The shared instance of `kind`; Unavailable if not built or not runnable
// here (e.g. no CPU support, no CUDA device).
StatusOr<Backend*> GetBackend(BackendKind kind);

// The backend LAYERPROOF_BACKEND names, or the fastest available for "auto"
// or when unset. InvalidArgument for an unknown name, Unavailable when the
// named backend cannot run here.
StatusOr<Backend*> DefaultBackend();

}  // namespace layerproof::kernels

#endif  // LAYERPROOF_KERNELS_DISPATCH_H_
