// The CUDA backend's packed weight layout for Gemm, and the host-side
// packing into it.
//
// Float formats (fp32, bf16, fp16). W[n][k] (row-major, stored dtype) is cut
// into groups of 32 output columns and, along k, into 16-byte vectors of
// kVecElems elements (4 fp32 or 8 bf16/fp16). The vector of columns
// g*32 .. g*32+31 at vector index v is stored contiguously for the 32
// columns:
//
//   byte offset of W[j][i] = ((g * k_vecs + v) * 32 + lane) * 16 + e * size
//   with g = j / 32, lane = j % 32, v = i / kVecElems, e = i % kVecElems.
//
// A warp whose lane owns column g*32+lane therefore reads 512 contiguous
// bytes per vector step while each lane walks its own column in ascending k,
// the order the chunk-tree GEMM (docs/determinism.md §3.1) needs. Columns and
// k beyond the matrix are zero padding that no kernel ever multiplies.
//
// Block-quantized formats (Q8_0, Q4_0, Q4_K, Q6_K, kernels/quant.h). The
// GGUF rows are kept exactly as stored, row after row (n * RowBytes(dtype,
// k) bytes): the quantized GEMM (quant_gemm.cu) reads each 32-element unit
// straight from its block with 2- or 4-byte loads. The device copy must be
// 16-byte aligned (cudaMalloc memory is); k is a multiple of the block.
//
// Packing only moves bits. Thread safety: pure functions.
#ifndef LAYERPROOF_KERNELS_CUDA_GEMM_LAYOUT_H_
#define LAYERPROOF_KERNELS_CUDA_GEMM_LAYOUT_H_

#include <cstdint>

#include "kernels/backend.h"
#include "kernels/dtype.h"

namespace layerproof::kernels::cuda {

inline constexpr int kGemmGroupCols = 32;
inline constexpr int kGemmVecBytes = 16;

struct GemmLayout {
  int64_t n = 0;  // output columns (W rows)
  int64_t k = 0;  // reduction length (W cols)
  DType dtype = DType::kF32;
  // Float formats only (0 for block-quantized ones):
  int64_t n_groups = 0;  // ceil(n / 32)
  int64_t k_vecs = 0;    // ceil(k / vec_elems)
  int vec_elems = 0;     // 4 for fp32, 8 for bf16 / fp16
  // Block-quantized formats only (0 for float ones): RowBytes(dtype, k).
  int64_t row_bytes = 0;
  // Float formats: n_groups * k_vecs * 512; block-quantized: n * row_bytes.
  int64_t bytes = 0;
};

// The layout of an n x k matrix of `dtype`; n, k >= 1, and k a multiple of
// BlockElems(dtype) (kernels/op_checks.h checks both).
GemmLayout MakeGemmLayout(int64_t n, int64_t k, DType dtype);

// Writes w (w.rows = n, w.cols = k) into `packed`, which holds
// MakeGemmLayout(w.rows, w.cols, w.dtype).bytes bytes (padding is zeroed).
void PackGemmWeights(const WeightView& w, void* packed);

}  // namespace layerproof::kernels::cuda

#endif  // LAYERPROOF_KERNELS_CUDA_GEMM_LAYOUT_H_
