#include "kernels/cuda/gemm_layout.h"

#include <cstring>

namespace layerproof::kernels::cuda {

GemmLayout MakeGemmLayout(int64_t n, int64_t k, DType dtype) {
  GemmLayout l;
  l.n = n;
  l.k = k;
  l.dtype = dtype;
  if (IsBlockQuantized(dtype)) {
    l.row_bytes = RowBytes(dtype, k);
    l.bytes = n * l.row_bytes;
    return l;
  }
  l.vec_elems = kGemmVecBytes / DTypeSize(dtype);
  l.n_groups = (n + kGemmGroupCols - 1) / kGemmGroupCols;
  l.k_vecs = (k + l.vec_elems - 1) / l.vec_elems;
  l.bytes = l.n_groups * l.k_vecs * kGemmGroupCols * kGemmVecBytes;
  return l;
}

void PackGemmWeights(const WeightView& w, void* packed) {
  const GemmLayout l = MakeGemmLayout(w.rows, w.cols, w.dtype);
  auto* out = static_cast<unsigned char*>(packed);
  const auto* in = static_cast<const unsigned char*>(w.data);
  if (IsBlockQuantized(w.dtype)) {
    std::memcpy(out, in, static_cast<size_t>(l.bytes));  // rows as stored
    return;
  }
  const int size = DTypeSize(w.dtype);
  std::memset(out, 0, static_cast<size_t>(l.bytes));
  const int64_t row_bytes = l.k * size;
  for (int64_t j = 0; j < l.n; ++j) {
    const int64_t g = j / kGemmGroupCols;
    const int64_t lane = j % kGemmGroupCols;
    const unsigned char* src = in + j * row_bytes;
    for (int64_t v = 0; v < l.k_vecs; ++v) {
      const int64_t first = v * l.vec_elems;
      const int64_t count =
          l.k - first < l.vec_elems ? l.k - first : l.vec_elems;
      unsigned char* dst =
          out + ((g * l.k_vecs + v) * kGemmGroupCols + lane) * kGemmVecBytes;
      std::memcpy(dst, src + first * size, static_cast<size_t>(count * size));
    }
  }
}

}  // namespace layerproof::kernels::cuda
