// §3.9 of docs/determinism.md on the GPU: a gather that widens the stored
// format to fp32 exactly; NaN canonicalised. One thread per output element.
#include <cuda_runtime.h>

#include "kernels/cuda/internal/cuda_status.h"
#include "kernels/cuda/internal/dtype.cuh"
#include "kernels/cuda/internal/grid.h"
#include "kernels/cuda/launch.h"

namespace layerproof::kernels::cuda {
namespace {

constexpr int kThreads = 256;

__global__ void __launch_bounds__(kThreads)
    EmbeddingKernel(const void* __restrict__ table, DType dtype, int64_t dim,
                    const int32_t* __restrict__ ids, int64_t n_ids,
                    float* __restrict__ y) {
  for (int64_t idx = int64_t{blockIdx.x} * kThreads + threadIdx.x;
       idx < n_ids * dim; idx += int64_t{gridDim.x} * kThreads) {
    const int64_t r = idx / dim;
    const int64_t i = idx % dim;
    y[idx] = CanonNan(LoadWidened(table, dtype, int64_t{ids[r]} * dim + i));
  }
}

}  // namespace

Status LaunchEmbedding(const void* table, DType dtype, int64_t dim,
                       const int32_t* ids, int64_t n_ids, float* y,
                       cudaStream_t stream) {
  EmbeddingKernel<<<StrideGrid(n_ids * dim, kThreads), kThreads, 0, stream>>>(
      table, dtype, dim, ids, n_ids, y);
  return LaunchStatus("Embedding launch");
}

}  // namespace layerproof::kernels::cuda
