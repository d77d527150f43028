// The CUDA backend: the kernels of kernels/cuda behind the host-memory
// Backend interface (kernels/backend.h).
//
// Each op copies its inputs to the device, launches the kernels of
// kernels/cuda/launch.h and copies the outputs back before returning, so it
// is a correctness and verification backend first; a GPU-resident engine
// calls launch.h directly. Results are bit-identical to kernels/ref for
// every input (docs/determinism.md §3). Packed weights live in device
// memory until the PackedWeights object is destroyed.
//
// Thread safety: ops may run concurrently from several host threads; each
// runs on its thread's per-thread default stream (cudaStreamPerThread) with
// scratch from the backend's own stream-ordered memory pool. CUDA errors are
// returned as Status (Internal), never abort.
#ifndef LAYERPROOF_KERNELS_CUDA_CUDA_BACKEND_H_
#define LAYERPROOF_KERNELS_CUDA_CUDA_BACKEND_H_

#include <memory>

#include "kernels/backend.h"

namespace layerproof::kernels::cuda {

// A backend on CUDA device 0, or null when no CUDA device is present or the
// device cannot run this build's kernels (e.g. no sm_80+ image or PTX).
std::unique_ptr<Backend> MakeCudaBackend();

}  // namespace layerproof::kernels::cuda

#endif  // LAYERPROOF_KERNELS_CUDA_CUDA_BACKEND_H_
