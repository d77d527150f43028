// CUDA runtime errors as kernels::Status (STYLE.md: a CUDA error becomes a
// Status, it never aborts). Host code only. Thread safety: pure functions.
#ifndef LAYERPROOF_KERNELS_CUDA_INTERNAL_CUDA_STATUS_H_
#define LAYERPROOF_KERNELS_CUDA_INTERNAL_CUDA_STATUS_H_

#include <cuda_runtime_api.h>

#include <string>
#include <string_view>

#include "kernels/status.h"

namespace layerproof::kernels::cuda {

// OK for cudaSuccess; otherwise Internal naming `what` and the CUDA error.
inline Status CudaStatus(cudaError_t err, std::string_view what) {
  if (err == cudaSuccess) return OkStatus();
  return Internal("cuda: " + std::string(what) + ": " + cudaGetErrorName(err) +
                  ": " + cudaGetErrorString(err));
}

// The status of the kernel launches just made on this thread (launch
// configuration errors; execution errors surface at the next synchronising
// call).
inline Status LaunchStatus(std::string_view what) {
  return CudaStatus(cudaGetLastError(), what);
}

}  // namespace layerproof::kernels::cuda

#define LP_CUDA_RETURN_IF_ERROR(expr, what) \
  LP_RETURN_IF_ERROR(::layerproof::kernels::cuda::CudaStatus((expr), (what)))

#endif  // LAYERPROOF_KERNELS_CUDA_INTERNAL_CUDA_STATUS_H_
