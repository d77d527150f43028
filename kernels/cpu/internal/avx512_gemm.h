// The avx512 fused-upcast GEMM/GEMV and its weight packing
// (docs/determinism.md §3.1), used by the avx512 IsaOps table.
#ifndef LAYERPROOF_KERNELS_CPU_INTERNAL_AVX512_GEMM_H_
#define LAYERPROOF_KERNELS_CPU_INTERNAL_AVX512_GEMM_H_

#include <cstdint>
#include <memory>

#include "kernels/backend.h"

namespace layerproof::kernels::cpu {

// Column slices passed to Avx512Gemm start at multiples of this.
extern const int64_t kAvx512GemmNAlign;
std::unique_ptr<PackedWeights> Avx512Pack(const WeightView& w);
void Avx512Gemm(const float* x, int64_t m, const PackedWeights& w,
              const float* bias, float* y, int64_t n_begin, int64_t n_end);

}  // namespace layerproof::kernels::cpu

#endif
