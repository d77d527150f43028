// Device twins of kernels/dtype.h: the canonical NaN and the exact widening of
// stored weight formats to fp32. Every widening is exact (bf16 is a shift,
// fp16 -> fp32 is an exact hardware conversion for every input; a NaN stays
// a NaN, and every NaN an op writes is canonicalised). Also the 16-byte
// vector widenings used by the packed GEMM layout (kernels/cuda/gemm_layout.h).
// Thread safety: pure device functions.
#ifndef LAYERPROOF_KERNELS_CUDA_INTERNAL_DTYPE_CUH_
#define LAYERPROOF_KERNELS_CUDA_INTERNAL_DTYPE_CUH_

#include <cuda_fp16.h>

#include <cstdint>

#include "kernels/dtype.h"

namespace layerproof::kernels::cuda {

// Returns x, or the canonical NaN 0x7FC00000 when x is any NaN.
__device__ __forceinline__ float CanonNan(float x) {
  return x != x ? __uint_as_float(kCanonicalNanBits) : x;
}

__device__ __forceinline__ float Bf16BitsToFloat(uint32_t h) {
  return __uint_as_float(h << 16);
}

__device__ __forceinline__ float F16BitsToFloat(uint16_t h) {
  return __half2float(__ushort_as_half(h));
}

// Element i of a row stored as `dtype`, widened to fp32.
__device__ __forceinline__ float LoadWidened(const void* data, DType dtype,
                                             int64_t i) {
  if (dtype == DType::kF32) return static_cast<const float*>(data)[i];
  const uint16_t h = static_cast<const uint16_t*>(data)[i];
  return dtype == DType::kBF16 ? Bf16BitsToFloat(h) : F16BitsToFloat(h);
}

// Elements per 16-byte vector of the packed GEMM layout.
template <DType T>
inline constexpr int kVecElems = T == DType::kF32 ? 4 : 8;

// Widens one 16-byte vector of T (little-endian element order) to fp32.
template <DType T>
__device__ __forceinline__ void WidenVec(uint4 q, float* out) {
  const uint32_t w[4] = {q.x, q.y, q.z, q.w};
  if constexpr (T == DType::kF32) {
#pragma unroll
    for (int i = 0; i < 4; ++i) out[i] = __uint_as_float(w[i]);
  } else if constexpr (T == DType::kBF16) {
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      out[2 * i] = __uint_as_float(w[i] << 16);
      out[2 * i + 1] = __uint_as_float(w[i] & 0xFFFF0000u);
    }
  } else {
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      out[2 * i] = F16BitsToFloat(static_cast<uint16_t>(w[i] & 0xFFFFu));
      out[2 * i + 1] = F16BitsToFloat(static_cast<uint16_t>(w[i] >> 16));
    }
  }
}

}  // namespace layerproof::kernels::cuda

#endif  // LAYERPROOF_KERNELS_CUDA_INTERNAL_DTYPE_CUH_
