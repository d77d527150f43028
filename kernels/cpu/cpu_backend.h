// The CPU backend: one class for every ISA, parameterised by its IsaOps
// table. It owns the thread pool and cuts each op into tasks by shape alone;
// the ISA kernels compute whole outputs per task, so results are independent
// of the thread count (docs/determinism.md §5). Thread safety: see
// kernels/backend.h.
#ifndef LAYERPROOF_KERNELS_CPU_CPU_BACKEND_H_
#define LAYERPROOF_KERNELS_CPU_CPU_BACKEND_H_

#include <memory>

#include "kernels/backend.h"
#include "kernels/cpu/internal/isa_ops.h"

namespace layerproof::kernels::cpu {

std::unique_ptr<Backend> MakeCpuBackend(const IsaOps& ops);

}  // namespace layerproof::kernels::cpu

#endif  // LAYERPROOF_KERNELS_CPU_CPU_BACKEND_H_
