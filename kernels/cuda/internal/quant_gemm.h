// The block-quantized GEMM of kernels/cuda/quant_gemm.cu, for LaunchGemm
// (gemm.cu), which forwards every block-quantized weight matrix here. Same
// contract as launch.h: bit-identical to kernels/ref (docs/determinism.md
// §3.12), device pointers, no synchronisation. Host code only.
// Thread safety: free functions.
#ifndef LAYERPROOF_KERNELS_CUDA_INTERNAL_QUANT_GEMM_H_
#define LAYERPROOF_KERNELS_CUDA_INTERNAL_QUANT_GEMM_H_

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "kernels/cuda/launch.h"
#include "kernels/status.h"

namespace layerproof::kernels::cuda {

// Scratch for m quantized activation rows of k (a multiple of 32): the int8
// values, then the fp32 unit scales, then the int32 half sums, each part
// 16-byte aligned.
size_t QuantGemmScratchBytes(int64_t m, int64_t k);

// y[m][n] = x[m][k] . W[n][k]^T (+ bias[n]) for W in a block format
// (w.layout.dtype block-quantized, w.data 16-byte aligned). `scratch` is
// 16-byte aligned and holds QuantGemmScratchBytes(m, k) bytes.
Status LaunchQuantGemm(const float* x, int64_t m, const DeviceGemmWeights& w,
                       const float* bias, float* y, void* scratch,
                       size_t scratch_bytes, cudaStream_t stream);

}  // namespace layerproof::kernels::cuda

#endif  // LAYERPROOF_KERNELS_CUDA_INTERNAL_QUANT_GEMM_H_
