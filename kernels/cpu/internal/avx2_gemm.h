// The avx2 fused-upcast GEMM/GEMV and its weight packing, used by the avx2
// IsaOps table (docs/determinism.md §3.1, chunk-tree order).
//
// Avx2Pack lays W[n][k] out in k-major column panels of 16 (two ymm of
// outputs; layout in gemm_panels.h); Avx2Gemm computes whole outputs of a
// column slice from them, bit-identical to kernels/ref for every input: each
// output's chunk partial is one fma chain over ascending k, the partials meet
// in the halving tree, the bias is added once and NaN is canonicalised.
// Thread safety: packed weights are immutable and may be shared; Avx2Gemm
// calls may run concurrently on disjoint outputs (scratch is thread_local).
// Preconditions (CpuBackend guarantees them): arguments validated, w made by
// Avx2Pack, n_begin a multiple of kAvx2GemmNAlign, MXCSR as FpEnvGuard sets
// it.
#ifndef LAYERPROOF_KERNELS_CPU_INTERNAL_AVX2_GEMM_H_
#define LAYERPROOF_KERNELS_CPU_INTERNAL_AVX2_GEMM_H_

#include <cstdint>
#include <memory>

#include "kernels/backend.h"

namespace layerproof::kernels::cpu {

// Column slices passed to Avx2Gemm start at multiples of this.
extern const int64_t kAvx2GemmNAlign;
std::unique_ptr<PackedWeights> Avx2Pack(const WeightView& w);
// Columns [n_begin, n_end) of y[m][w.n()] for all m rows; y has row stride
// w.n().
void Avx2Gemm(const float* x, int64_t m, const PackedWeights& w,
              const float* bias, float* y, int64_t n_begin, int64_t n_end);

}  // namespace layerproof::kernels::cpu

#endif  // LAYERPROOF_KERNELS_CPU_INTERNAL_AVX2_GEMM_H_
