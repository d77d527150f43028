// §3.7 of docs/determinism.md on the GPU: one warp per row, running
// WarpSoftmaxRow (internal/softmax_row.cuh): exact maximum, DetExpF, Lane32
// sum, divide.
#include <cuda_runtime.h>

#include "kernels/cuda/internal/cuda_status.h"
#include "kernels/cuda/internal/grid.h"
#include "kernels/cuda/internal/softmax_row.cuh"
#include "kernels/cuda/launch.h"

namespace layerproof::kernels::cuda {
namespace {

constexpr int kWarpsPerBlock = 8;

// x and y may alias (see WarpSoftmaxRow).
__global__ void __launch_bounds__(kWarpsPerBlock * 32)
    SoftmaxKernel(const float* x, int64_t rows, int64_t n, float* y) {
  for (int64_t r = int64_t{blockIdx.x} * kWarpsPerBlock + threadIdx.x / 32;
       r < rows; r += int64_t{gridDim.x} * kWarpsPerBlock) {
    WarpSoftmaxRow(x + r * n, n, y + r * n, threadIdx.x % 32);
  }
}

}  // namespace

Status LaunchSoftmax(const float* x, int64_t rows, int64_t n, float* y,
                     cudaStream_t stream) {
  SoftmaxKernel<<<StrideGrid(rows, kWarpsPerBlock), kWarpsPerBlock * 32, 0,
                  stream>>>(x, rows, n, y);
  return LaunchStatus("Softmax launch");
}

}  // namespace layerproof::kernels::cuda
