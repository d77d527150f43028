// §3.6 of docs/determinism.md on the GPU, elementwise:
// y = (g / (1 + DetExpF(-g))) * up, each operation correctly rounded; NaN
// canonicalised.
#include <cuda_runtime.h>

#include "kernels/cuda/det_exp.cuh"
#include "kernels/cuda/internal/cuda_status.h"
#include "kernels/cuda/internal/dtype.cuh"
#include "kernels/cuda/internal/grid.h"
#include "kernels/cuda/launch.h"

namespace layerproof::kernels::cuda {
namespace {

constexpr int kThreads = 256;

// gate, up and y may alias (each element is read before it is written, by
// the same thread), so no __restrict__.
__global__ void __launch_bounds__(kThreads)
    SwiGluKernel(const float* gate, const float* up, int64_t n, float* y) {
  for (int64_t i = int64_t{blockIdx.x} * kThreads + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * kThreads) {
    const float g = gate[i];
    const float u = up[i];
    const float silu = __fdiv_rn(g, __fadd_rn(1.0f, DetExpF(-g)));
    y[i] = CanonNan(__fmul_rn(silu, u));
  }
}

}  // namespace

Status LaunchSwiGlu(const float* gate, const float* up, int64_t n, float* y,
                    cudaStream_t stream) {
  SwiGluKernel<<<StrideGrid(n, kThreads), kThreads, 0, stream>>>(gate, up, n,
                                                                 y);
  return LaunchStatus("SwiGlu launch");
}

}  // namespace layerproof::kernels::cuda
