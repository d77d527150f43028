// §3.1 of docs/determinism.md: the fused-upcast GEMM in chunk-tree order.
#include <vector>

#include "kernels/quant.h"
#include "kernels/ref/reduction.h"
#include "kernels/ref/ref_ops.h"

namespace layerproof::kernels::ref {
namespace {

// Units per chunk: the chunk of §3.1 is 256 elements whatever the format.
constexpr int64_t kUnitsPerChunk = kChunk / quant::kUnit;

}  // namespace

float QuantRowDot(DType t, const unsigned char* w_row, const int8_t* q,
                  const quant::ActUnit* units, int64_t k) {
  const int64_t n_units = k / quant::kUnit;
  const int64_t chunks = (n_units + kUnitsPerChunk - 1) / kUnitsPerChunk;
  std::vector<float> partials(static_cast<size_t>(chunks));
  quant::WeightUnit unit;
  for (int64_t c = 0; c < chunks; ++c) {
    float acc = 0.0f;
    const int64_t end = std::min(n_units, (c + 1) * kUnitsPerChunk);
    for (int64_t b = c * kUnitsPerChunk; b < end; ++b) {
      quant::DecodeUnit(t, w_row, b, &unit);
      const float u =
          quant::UnitProduct(t, unit, q + b * quant::kUnit, units[b]);
      acc = std::fma(u, units[b].d, acc);
    }
    partials[size_t(c)] = acc;
  }
  return HalvingTree(partials.data(), chunks);
}

void QuantGemmColumns(const quant::QuantizedRows& x, const WeightView& w,
                      const float* bias, float* y, int64_t n_begin,
                      int64_t n_end) {
  const auto* bytes = static_cast<const unsigned char*>(w.data);
  const int64_t row_bytes = RowBytes(w.dtype, w.cols);
  for (int64_t r = 0; r < x.m; ++r) {
    for (int64_t j = n_begin; j < n_end; ++j) {
      float acc = QuantRowDot(w.dtype, bytes + j * row_bytes, x.row_q(r),
                              x.row_units(r), x.k);
      if (bias != nullptr) acc = acc + bias[j];
      y[r * w.rows + j] = CanonicalizeNan(acc);
    }
  }
}

void Gemm(const float* x, int64_t m, const WeightView& w, const float* bias,
          float* y) {
  GemmColumns(x, m, w, bias, y, 0, w.rows);
}

void GemmColumns(const float* x, int64_t m, const WeightView& w,
                 const float* bias, float* y, int64_t n_begin, int64_t n_end) {
  if (IsBlockQuantized(w.dtype)) {
    quant::QuantizedRows xq;
    quant::QuantizeRows(x, m, w.cols, &xq);
    QuantGemmColumns(xq, w, bias, y, n_begin, n_end);
    return;
  }
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
