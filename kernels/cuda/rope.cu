// §3.4 of docs/determinism.md on the GPU: one thread per rotated pair.
//
// HF rotate_half pairing (i, i + half): x1' = x1 c - x2 s, x2' = x2 c + x1 s,
// each product rounded, then the sum (no fma); NaN canonicalised.
#include <cuda_runtime.h>

#include "kernels/cuda/internal/cuda_status.h"
#include "kernels/cuda/internal/dtype.cuh"
#include "kernels/cuda/internal/grid.h"
#include "kernels/cuda/launch.h"

namespace layerproof::kernels::cuda {
namespace {

constexpr int kThreads = 256;

__global__ void __launch_bounds__(kThreads)
    RopeKernel(float* __restrict__ x, int64_t rows, int64_t n_heads,
               int64_t head_dim, const int64_t* __restrict__ positions,
               const float* __restrict__ cos_table,
               const float* __restrict__ sin_table) {
  const int64_t half = head_dim / 2;
  const int64_t total = rows * n_heads * half;
  for (int64_t idx = int64_t{blockIdx.x} * kThreads + threadIdx.x; idx < total;
       idx += int64_t{gridDim.x} * kThreads) {
    const int64_t i = idx % half;
    const int64_t rh = idx / half;  // row * n_heads + head
    const int64_t r = rh / n_heads;
    const float c = cos_table[positions[r] * half + i];
    const float s = sin_table[positions[r] * half + i];
    float* v = x + rh * head_dim;
    const float x1 = v[i];
    const float x2 = v[i + half];
    v[i] = CanonNan(__fsub_rn(__fmul_rn(x1, c), __fmul_rn(x2, s)));
    v[i + half] = CanonNan(__fadd_rn(__fmul_rn(x2, c), __fmul_rn(x1, s)));
  }
}

}  // namespace

Status LaunchRope(float* x, int64_t rows, int64_t n_heads, int64_t head_dim,
                  const int64_t* positions, const float* cos_table,
                  const float* sin_table, cudaStream_t stream) {
  RopeKernel<<<StrideGrid(rows * n_heads * (head_dim / 2), kThreads), kThreads,
               0, stream>>>(x, rows, n_heads, head_dim, positions, cos_table,
                            sin_table);
  return LaunchStatus("Rope launch");
}

}  // namespace layerproof::kernels::cuda
