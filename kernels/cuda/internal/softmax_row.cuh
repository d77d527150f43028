// One softmax row on one warp, exactly ref::SoftmaxRow (docs/determinism.md
// §3.7): the exact row maximum (NaN if any element is NaN, +0 for a zero
// maximum), e_i = DetExpF(x_i - max), the Lane32 sum of the e_i, then
// y_i = e_i / sum with NaN canonicalised. Shared by the Softmax op and the
// attention kernels. Thread safety: pure device function.
#ifndef LAYERPROOF_KERNELS_CUDA_INTERNAL_SOFTMAX_ROW_CUH_
#define LAYERPROOF_KERNELS_CUDA_INTERNAL_SOFTMAX_ROW_CUH_

#include <cstdint>

#include "kernels/cuda/det_exp.cuh"
#include "kernels/cuda/internal/dtype.cuh"
#include "kernels/cuda/internal/reduction.cuh"

namespace layerproof::kernels::cuda {

// Called by all 32 lanes of a converged warp; n >= 1. y may equal x: lane j
// reads and writes only elements i = j mod 32, after every lane has read the
// whole row for the maximum.
__device__ inline void WarpSoftmaxRow(const float* x, int64_t n, float* y,
                                      int lane) {
  // The maximum has no order: any reduction of exact comparisons gives it.
  float m = -INFINITY;
  bool nan = false;
  for (int64_t i = lane; i < n; i += kLanes) {
    const float v = x[i];
    nan |= v != v;
    if (v > m) m = v;
  }
  nan = __any_sync(kFullMask, nan);
#pragma unroll
  for (int off = kLanes / 2; off >= 1; off /= 2) {
    const float o = __shfl_xor_sync(kFullMask, m, off);
    if (o > m) m = o;
  }
  if (nan) {
    m = __uint_as_float(kCanonicalNanBits);
  } else if (m == 0.0f) {
    m = 0.0f;  // -0 and +0 are equal; +0 is canonical
  }
  // Lane32: lane j sums e_i for i = j mod 32 in ascending i from +0.
  float s = 0.0f;
  for (int64_t i = lane; i < n; i += kLanes) {
    const float e = DetExpF(__fsub_rn(x[i], m));
    y[i] = e;
    s = __fadd_rn(s, e);
  }
  s = __shfl_sync(kFullMask, WarpButterfly32(s), 0);
  for (int64_t i = lane; i < n; i += kLanes)
    y[i] = CanonNan(__fdiv_rn(y[i], s));
}

}  // namespace layerproof::kernels::cuda

#endif  // LAYERPROOF_KERNELS_CUDA_INTERNAL_SOFTMAX_ROW_CUH_
