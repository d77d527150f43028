// Factories of the SIMD backends. Each exists only in builds for its
// architecture (see kernels/cpu/CMakeLists.txt); dispatch.cc calls them after
// checking the CPU supports the ISA. Thread safety: see kernels/backend.h.
#ifndef LAYERPROOF_KERNELS_CPU_CPU_BACKENDS_H_
#define LAYERPROOF_KERNELS_CPU_CPU_BACKENDS_H_

#include <memory>

#include "kernels/backend.h"

namespace layerproof::kernels::cpu {

std::unique_ptr<Backend> MakeAvx2Backend();
std::unique_ptr<Backend> MakeAvx512Backend();
std::unique_ptr<Backend> MakeNeonBackend();

}  // namespace layerproof::kernels::cpu

#endif  // LAYERPROOF_KERNELS_CPU_CPU_BACKENDS_H_
