// §3.8 of docs/determinism.md on the GPU: y = a + b, one rounded add per
// element; NaN canonicalised.
#include <cuda_runtime.h>

#include "kernels/cuda/internal/cuda_status.h"
#include "kernels/cuda/internal/dtype.cuh"
#include "kernels/cuda/internal/grid.h"
#include "kernels/cuda/launch.h"

namespace layerproof::kernels::cuda {
namespace {

constexpr int kThreads = 256;

// a, b and y may alias, so no __restrict__.
__global__ void __launch_bounds__(kThreads)
    AddKernel(const float* a, const float* b, int64_t n, float* y) {
  for (int64_t i = int64_t{blockIdx.x} * kThreads + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * kThreads) {
    y[i] = CanonNan(__fadd_rn(a[i], b[i]));
  }
}

}  // namespace

Status LaunchAdd(const float* a, const float* b, int64_t n, float* y,
                 cudaStream_t stream) {
  AddKernel<<<StrideGrid(n, kThreads), kThreads, 0, stream>>>(a, b, n, y);
  return LaunchStatus("Add launch");
}

Status ProbeCurrentDevice() {
  int device = 0;
  LP_CUDA_RETURN_IF_ERROR(cudaGetDevice(&device), "cudaGetDevice");
  cudaFuncAttributes attr;
  const cudaError_t err = cudaFuncGetAttributes(&attr, AddKernel);
  if (err != cudaSuccess) {
    cudaGetLastError();  // clear it: the backend is simply unavailable
    return Unavailable(
        "cuda: device " + std::to_string(device) +
        " cannot run this build's kernels: " + cudaGetErrorString(err));
  }
  return OkStatus();
}

}  // namespace layerproof::kernels::cuda
