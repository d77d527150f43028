// §3.9 of docs/determinism.md on the GPU: a gather that widens the stored
// format to fp32 exactly; NaN canonicalised. One thread per output element.
// Block-quantized tables (§3.12 "Dequantization") are dequantized element by
// element as quant::DequantizeElement: d * float(sc * w), or for Q4_K
// fma(d, float(sc * w), -(dmin * float(mn))) (internal/quant.cuh).
#include <cuda_runtime.h>

#include "kernels/cuda/internal/cuda_status.h"
#include "kernels/cuda/internal/dtype.cuh"
#include "kernels/cuda/internal/grid.h"
#include "kernels/cuda/internal/quant.cuh"
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

// A table of rows stored in block format `dtype`, row_bytes apart.
__global__ void __launch_bounds__(kThreads)
    QuantEmbeddingKernel(const unsigned char* __restrict__ table, DType dtype,
                         int64_t dim, int64_t row_bytes,
                         const int32_t* __restrict__ ids, int64_t n_ids,
                         float* __restrict__ y) {
  for (int64_t idx = int64_t{blockIdx.x} * kThreads + threadIdx.x;
       idx < n_ids * dim; idx += int64_t{gridDim.x} * kThreads) {
    const int64_t r = idx / dim;
    const int64_t i = idx % dim;
    const unsigned char* row = table + int64_t{ids[r]} * row_bytes;
    y[idx] = CanonNan(DequantizeElement(dtype, row, i));
  }
}

}  // namespace

Status LaunchEmbedding(const void* table, DType dtype, int64_t dim,
                       const int32_t* ids, int64_t n_ids, float* y,
                       cudaStream_t stream) {
  const unsigned grid = StrideGrid(n_ids * dim, kThreads);
  if (IsBlockQuantized(dtype)) {
    if (dim % BlockElems(dtype) != 0) {
      return InvalidArgument("LaunchEmbedding: dim: got " +
                             std::to_string(dim) + ", want a multiple of " +
                             std::to_string(BlockElems(dtype)));
    }
    QuantEmbeddingKernel<<<grid, kThreads, 0, stream>>>(
        static_cast<const unsigned char*>(table), dtype, dim,
        RowBytes(dtype, dim), ids, n_ids, y);
  } else {
    EmbeddingKernel<<<grid, kThreads, 0, stream>>>(table, dtype, dim, ids,
                                                   n_ids, y);
  }
  return LaunchStatus("Embedding launch");
}

}  // namespace layerproof::kernels::cuda
