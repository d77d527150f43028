// Device twins of kernels/quant.{h,cc} (docs/determinism.md §3.12): the
// GGUF block fields of one 32-element unit, read straight from the stored
// blocks, and the dequantization of one element. Each function repeats the
// scalar spec's integer decoding exactly; the only float operations are the
// ones kernels/quant.cc names, written as __fmul_rn / __fmaf_rn so that no
// compiler flag can contract or reorder them.
//
// Alignment: Q8_0, Q4_0 and Q6_K blocks (34, 18 and 210 bytes) are only
// 2-byte aligned in a row, so their fields are read as 16-bit halves; the
// byte-wise functions (DequantizeElement) need no alignment at all.
// Thread safety: pure device functions.
#ifndef LAYERPROOF_KERNELS_CUDA_INTERNAL_QUANT_CUH_
#define LAYERPROOF_KERNELS_CUDA_INTERNAL_QUANT_CUH_

#include <cstdint>

#include "kernels/cuda/internal/dtype.cuh"
#include "kernels/dtype.h"

namespace layerproof::kernels::cuda {

// Elements per unit (quant::kUnit) and units per chunk of the chunk tree.
inline constexpr int kQuantUnit = 32;
inline constexpr int kQuantUnitsPerChunk = 256 / kQuantUnit;

// The fp16 at p (any alignment), widened exactly.
__device__ __forceinline__ float LoadF16Bytes(const unsigned char* p) {
  return F16BitsToFloat(static_cast<uint16_t>(p[0] | (p[1] << 8)));
}

// The four bytes at p (2-byte aligned) as one little-endian word.
__device__ __forceinline__ uint32_t LoadWordHalves(const unsigned char* p) {
  const auto* h = reinterpret_cast<const uint16_t*>(p);
  return uint32_t{h[0]} | (uint32_t{h[1]} << 16);
}

// llama.cpp's get_scale_min_k4 (kernels/quant.cc Q4KScaleMin): the 6-bit
// scale and min of Q4_K sub-block j from the 12 scale bytes.
__device__ __forceinline__ void Q4KScaleMin(const unsigned char* scales, int j,
                                            int* sc, int* mn) {
  if (j < 4) {
    *sc = scales[j] & 63;
    *mn = scales[j + 4] & 63;
  } else {
    *sc = (scales[j + 4] & 0xF) | ((scales[j - 4] >> 6) << 4);
    *mn = (scales[j + 4] >> 4) | ((scales[j] >> 6) << 4);
  }
}

// Element i (< cols) of a row stored in block format `t`, dequantized as
// quant::DequantizeElement: d * float(sc * w), or for Q4_K
// fma(d, float(sc * w), -(dmin * float(mn))). Every inner product is exact.
// Not canonicalised.
__device__ inline float DequantizeElement(DType t, const unsigned char* row,
                                          int64_t i) {
  const int64_t u = i / kQuantUnit;
  const int e = static_cast<int>(i % kQuantUnit);
  switch (t) {
    case DType::kQ8_0: {
      const unsigned char* b = row + u * 34;
      const int w = static_cast<int8_t>(b[2 + e]);
      return __fmul_rn(LoadF16Bytes(b), __int2float_rn(w));
    }
    case DType::kQ4_0: {
      const unsigned char* b = row + u * 18;
      const int byte = b[2 + (e % 16)];
      const int w = (e < 16 ? (byte & 0xF) : (byte >> 4)) - 8;
      return __fmul_rn(LoadF16Bytes(b), __int2float_rn(w));
    }
    case DType::kQ4_K: {
      const unsigned char* b = row + (u / 8) * 144;
      const int j = static_cast<int>(u % 8);
      int sc, mn;
      Q4KScaleMin(b + 4, j, &sc, &mn);
      const int w = (b[16 + 32 * (j / 2) + e] >> (4 * (j % 2))) & 0xF;
      const float neg_min = -__fmul_rn(LoadF16Bytes(b + 2), __int2float_rn(mn));
      return __fmaf_rn(LoadF16Bytes(b), __int2float_rn(sc * w), neg_min);
    }
    case DType::kQ6_K: {
      const unsigned char* b = row + (u / 8) * 210;
      const int h = static_cast<int>(u % 8) / 4;
      const int q = static_cast<int>(u % 4);
      const int low = (b[64 * h + 32 * (q & 1) + e] >> (q < 2 ? 0 : 4)) & 0xF;
      const int high = (b[128 + 32 * h + e] >> (2 * q)) & 3;
      const int w = (low | (high << 4)) - 32;
      const int sc = static_cast<int8_t>(b[192 + 8 * h + 2 * q + e / 16]);
      return __fmul_rn(LoadF16Bytes(b + 208), __int2float_rn(sc * w));
    }
    default:
      return 0.0f;
  }
}

}  // namespace layerproof::kernels::cuda

#endif  // LAYERPROOF_KERNELS_CUDA_INTERNAL_QUANT_CUH_
