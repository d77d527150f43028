// §3.3 of docs/determinism.md on the GPU: one warp per row.
//
// sum_sq is the Lane32 dot of the row with itself (lane j: __fmaf_rn over
// i = j mod 32 ascending from +0, then the warp butterfly 16, 8, 4, 2, 1);
// inv_rms = 1 / sqrt(sum_sq / dim + eps) with IEEE division and sqrt;
// y = (x * inv_rms) * gamma, two rounded multiplies; NaN canonicalised.
#include <cuda_runtime.h>

#include "kernels/cuda/internal/cuda_status.h"
#include "kernels/cuda/internal/dtype.cuh"
#include "kernels/cuda/internal/grid.h"
#include "kernels/cuda/internal/reduction.cuh"
#include "kernels/cuda/launch.h"

namespace layerproof::kernels::cuda {
namespace {

constexpr int kWarpsPerBlock = 8;

__global__ void __launch_bounds__(kWarpsPerBlock * 32)
    RmsNormKernel(const float* __restrict__ x, int64_t rows, int64_t dim,
                  const void* __restrict__ gamma, DType gamma_dtype, float eps,
                  float* __restrict__ y) {
  const int lane = threadIdx.x % 32;
  for (int64_t r = int64_t{blockIdx.x} * kWarpsPerBlock + threadIdx.x / 32;
       r < rows; r += int64_t{gridDim.x} * kWarpsPerBlock) {
    const float* xr = x + r * dim;
    float s = 0.0f;
    for (int64_t i = lane; i < dim; i += kLanes) s = __fmaf_rn(xr[i], xr[i], s);
    const float sum_sq = __shfl_sync(kFullMask, WarpButterfly32(s), 0);
    const float mean = __fdiv_rn(sum_sq, __ll2float_rn(dim));
    const float inv_rms = __fdiv_rn(1.0f, __fsqrt_rn(__fadd_rn(mean, eps)));
    float* yr = y + r * dim;
    for (int64_t i = lane; i < dim; i += kLanes) {
      const float g = LoadWidened(gamma, gamma_dtype, i);
      yr[i] = CanonNan(__fmul_rn(__fmul_rn(xr[i], inv_rms), g));
    }
  }
}

}  // namespace

Status LaunchRmsNorm(const float* x, int64_t rows, int64_t dim,
                     const void* gamma, DType gamma_dtype, float eps, float* y,
                     cudaStream_t stream) {
  RmsNormKernel<<<StrideGrid(rows, kWarpsPerBlock), kWarpsPerBlock * 32, 0,
                  stream>>>(x, rows, dim, gamma, gamma_dtype, eps, y);
  return LaunchStatus("RmsNorm launch");
}

}  // namespace layerproof::kernels::cuda
