// The scalar reference backend: kernels/ref as a Backend. It is the oracle
// every other backend is tested against; see kernels/ref/ref_ops.h.
// Thread safety: stateless, safe to share.
#ifndef LAYERPROOF_KERNELS_REF_REF_BACKEND_H_
#define LAYERPROOF_KERNELS_REF_REF_BACKEND_H_

#include <memory>

#include "kernels/backend.h"

namespace layerproof::kernels {

std::unique_ptr<Backend> MakeRefBackend();

}  // namespace layerproof::kernels

#endif  // LAYERPROOF_KERNELS_REF_REF_BACKEND_H_
