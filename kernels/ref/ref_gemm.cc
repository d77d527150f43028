// §3.1 of docs/determinism.md: the fused-upcast GEMM in chunk-tree order.
#include "kernels/ref/reduction.h"
#include "kernels/ref/ref_ops.h"

namespace layerproof::kernels::ref {

void Gemm(const float* x, int64_t m, const WeightView& w, const float* bias,
          float* y) {
  GemmColumns(x, m, w, bias, y, 0, w.rows);
}

void GemmColumns(const float* x, int64_t m, const WeightView& w,
                 const float* bias, float* y, int64_t n_begin, int64_t n_end) {
  const int64_t n = w.rows;
  const int64_t k = w.cols;
  const auto* bytes = static_cast<const unsigned char*>(w.data);
  const int64_t row_bytes = k * DTypeSize(w.dtype);
  for (int64_t r = 0; r < m; ++r) {
    const float* xr = x + r * k;
    for (int64_t j = n_begin; j < n_end; ++j) {
      const void* wj = bytes + j * row_bytes;
      float acc = ChunkTreeDot(
          k, [&](int64_t i) { return xr[i]; },
          [&](int64_t i) { return LoadAsFloat(wj, w.dtype, i); });
      if (bias != nullptr) acc = acc + bias[j];
      y[r * n + j] = CanonicalizeNan(acc);
    }
  }
}

}  // namespace layerproof::kernels::ref
