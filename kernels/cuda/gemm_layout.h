// The CUDA backend's packed weight layout for Gemm, and the host-side
// packing into it.
//
// W[n][k] (row-major, stored dtype) is cut into groups of 32 output columns
// and, along k, into 16-byte vectors of kVecElems elements (4 fp32 or 8
// bf16/fp16). The vector of columns g*32 .. g*32+31 at vector index v is
// stored contiguously for the 32 columns:
//
//   byte offset of W[j][i] = ((g * k_vecs + v) * 32 + lane) * 16 + e * size
//   with g = j / 32, lane = j % 32, v = i / kVecElems, e = i % kVecElems.
//
// A warp whose lane owns column g*32+lane therefore reads 512 contiguous
// bytes per vector step while each lane walks its own column in ascending k,
// the order the chunk-tree GEMM (docs/determinism.md §3.1) needs. Columns and
// k beyond the matrix are zero padding that no kernel ever multiplies.
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
  int64_t n_groups = 0;  // ceil(n / 32)
  int64_t k_vecs = 0;    // ceil(k / vec_elems)
  int vec_elems = 0;     // 4 for fp32, 8 for bf16 / fp16
  int64_t bytes = 0;     // n_groups * k_vecs * 512
};

// The layout of an n x k matrix of `dtype`; n, k >= 1.
GemmLayout MakeGemmLayout(int64_t n, int64_t k, DType dtype);

// Writes w (w.rows = n, w.cols = k) into `packed`, which holds
// MakeGemmLayout(w.rows, w.cols, w.dtype).bytes bytes (padding is zeroed).
void PackGemmWeights(const WeightView& w, void* packed);

}  // namespace layerproof::kernels::cuda

#endif  // LAYERPROOF_KERNELS_CUDA_GEMM_LAYOUT_H_
