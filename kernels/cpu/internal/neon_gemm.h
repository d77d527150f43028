// The NEON fused-upcast GEMM/GEMV and its weight packing
// (docs/determinism.md §3.1), used by the NEON IsaOps table
// (kernels/cpu/neon_ops.cc). Built for aarch64 only.
//
// NeonPack rearranges W[n][k] into panels of kNeonGemmNR columns,
// [ceil(n / NR)][k][NR], in the stored dtype (bf16, fp16 or fp32; the last
// panel is zero-padded). NeonGemm widens the weights in registers (bf16 by a
// 16-bit shift, fp16 by FCVTL, both exact), broadcasts x[m][k] and runs one
// fma chain per output and chunk, so every output is the ChunkTree dot
// product of kernels/ref/ref_gemm.cc bit for bit: chunks of 256 k from +0 in
// ascending k, the chunk partials combined by the halving tree, bias added
// once, NaN canonicalised. Vectorisation is over n only; no output ever
// splits its k sum.
//
// Thread safety: NeonPack is pure; NeonGemm writes only columns
// [n_begin, n_end) of y, so disjoint slices may run concurrently on one
// packed matrix.
#ifndef LAYERPROOF_KERNELS_CPU_INTERNAL_NEON_GEMM_H_
#define LAYERPROOF_KERNELS_CPU_INTERNAL_NEON_GEMM_H_

#include <cstdint>
#include <memory>

#include "kernels/backend.h"

namespace layerproof::kernels::cpu {

// Columns per packed panel.
inline constexpr int64_t kNeonGemmNR = 16;
// Column slices passed to NeonGemm start at multiples of this (= kNeonGemmNR).
extern const int64_t kNeonGemmNAlign;

// Packs W (w.rows = n, w.cols = k) into NR-column panels. w is validated.
std::unique_ptr<PackedWeights> NeonPack(const WeightView& w);

// y[r][j] for r < m, j in [n_begin, n_end); n_begin is a multiple of
// kNeonGemmNAlign; w comes from NeonPack; y has row stride w.n(); bias may
// be null.
void NeonGemm(const float* x, int64_t m, const PackedWeights& w,
              const float* bias, float* y, int64_t n_begin, int64_t n_end);

}  // namespace layerproof::kernels::cpu

#endif  // LAYERPROOF_KERNELS_CPU_INTERNAL_NEON_GEMM_H_
