// §3.10 of docs/determinism.md on the GPU: one block per row.
//
// Argmax is exact, so any reduction order gives ref's answer as long as the
// rule holds: the first NaN if there is one, else the lowest index whose
// value equals the maximum (-0 == +0). Each thread keeps the first NaN index
// and the lowest index of its largest value over a strided slice; the block
// folds those pairs in shared memory with the same rule.
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/cuda/internal/cuda_status.h"
#include "kernels/cuda/internal/grid.h"
#include "kernels/cuda/launch.h"

namespace layerproof::kernels::cuda {
namespace {

constexpr int kThreads = 256;
constexpr int64_t kNone = INT64_MAX;

__global__ void __launch_bounds__(kThreads)
    ArgmaxKernel(const float* __restrict__ x, int64_t rows, int64_t n,
                 int64_t* __restrict__ out) {
  __shared__ float best_v[kThreads];
  __shared__ int64_t best_i[kThreads];
  __shared__ int64_t nan_i[kThreads];
  const int t = threadIdx.x;
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const float* xr = x + r * n;
    float bv = -INFINITY;
    int64_t bi = kNone;
    int64_t ni = kNone;
    for (int64_t i = t; i < n; i += kThreads) {
      const float v = xr[i];
      if (v != v) {
        if (ni == kNone) ni = i;
      } else if (bi == kNone || v > bv) {
        bv = v;
        bi = i;
      }
    }
    __syncthreads();  // the previous row's fold is finished
    best_v[t] = bv;
    best_i[t] = bi;
    nan_i[t] = ni;
    __syncthreads();
    for (int half = kThreads / 2; half >= 1; half /= 2) {
      if (t < half) {
        const float ov = best_v[t + half];
        const int64_t oi = best_i[t + half];
        if (oi != kNone && (best_i[t] == kNone || ov > best_v[t] ||
                            (ov == best_v[t] && oi < best_i[t]))) {
          best_v[t] = ov;
          best_i[t] = oi;
        }
        nan_i[t] = min(nan_i[t], nan_i[t + half]);
      }
      __syncthreads();
    }
    if (t == 0) out[r] = nan_i[0] != kNone ? nan_i[0] : best_i[0];
  }
}

}  // namespace

Status LaunchArgmax(const float* x, int64_t rows, int64_t n, int64_t* out,
                    cudaStream_t stream) {
  ArgmaxKernel<<<StrideGrid(rows, 1), kThreads, 0, stream>>>(x, rows, n, out);
  return LaunchStatus("Argmax launch");
}

}  // namespace layerproof::kernels::cuda
