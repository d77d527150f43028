// §3.3, §3.4 and §3.6–§3.10 of docs/determinism.md: norms, RoPE,
// activations, softmax, residual add, embedding gather and argmax.
#include <cmath>

#include "kernels/quant.h"
#include "kernels/ref/det_math.h"
#include "kernels/ref/reduction.h"
#include "kernels/ref/ref_ops.h"

namespace layerproof::kernels::ref {

void RmsNorm(const float* x, int64_t rows, int64_t dim, const WeightView& gamma,
             float eps, float* y) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * dim;
    const float sum_sq = Lane32Dot(xr, dim, [&](int64_t i) { return xr[i]; });
    const float mean = sum_sq / static_cast<float>(dim);
    const float inv_rms = 1.0f / std::sqrt(mean + eps);
    for (int64_t i = 0; i < dim; ++i) {
      const float g = LoadAsFloat(gamma.data, gamma.dtype, i);
      y[r * dim + i] = CanonicalizeNan((xr[i] * inv_rms) * g);
    }
  }
}

void Rope(float* x, int64_t rows, int64_t n_heads, const int64_t* positions,
          const RopeTable& table) {
  const int64_t d = table.head_dim;
  const int64_t half = d / 2;
  for (int64_t r = 0; r < rows; ++r) {
    const float* c = table.cos.data() + positions[r] * half;
    const float* s = table.sin.data() + positions[r] * half;
    for (int64_t h = 0; h < n_heads; ++h) {
      float* v = x + (r * n_heads + h) * d;
      for (int64_t i = 0; i < half; ++i) {
        const float x1 = v[i];
        const float x2 = v[i + half];
        // Each product is rounded, then the sum: no fma (§3.4).
        v[i] = CanonicalizeNan(x1 * c[i] - x2 * s[i]);
        v[i + half] = CanonicalizeNan(x2 * c[i] + x1 * s[i]);
      }
    }
  }
}

void SwiGlu(const float* gate, const float* up, int64_t n, float* y) {
  for (int64_t i = 0; i < n; ++i) {
    const float g = gate[i];
    const float silu = g / (1.0f + detmath::ExpF(-g));
    y[i] = CanonicalizeNan(silu * up[i]);
  }
}

float RowMax(const float* x, int64_t n) {
  float m = -INFINITY;
  for (int64_t i = 0; i < n; ++i) {
    if (std::isnan(x[i])) return CanonicalNan();
    if (x[i] > m) m = x[i];
  }
  return m == 0.0f ? 0.0f : m;  // -0 and +0 are equal; +0 is canonical.
}

void SoftmaxRow(const float* x, int64_t n, float* y) {
  const float m = RowMax(x, n);
  for (int64_t i = 0; i < n; ++i) y[i] = detmath::ExpF(x[i] - m);
  const float sum = Lane32Sum(n, [&](int64_t i) { return y[i]; });
  for (int64_t i = 0; i < n; ++i) y[i] = CanonicalizeNan(y[i] / sum);
}

void Add(const float* a, const float* b, int64_t n, float* y) {
  for (int64_t i = 0; i < n; ++i) y[i] = CanonicalizeNan(a[i] + b[i]);
}

void Embedding(const WeightView& table, const int32_t* ids, int64_t n_ids,
               float* y) {
  const int64_t dim = table.cols;
  const auto* bytes = static_cast<const unsigned char*>(table.data);
  const int64_t row_bytes = RowBytes(table.dtype, dim);
  for (int64_t r = 0; r < n_ids; ++r) {
    const unsigned char* row = bytes + ids[r] * row_bytes;
    if (IsBlockQuantized(table.dtype)) {
      float* out = y + r * dim;
      quant::DequantizeRow(table.dtype, row, dim, out);
      for (int64_t i = 0; i < dim; ++i) out[i] = CanonicalizeNan(out[i]);
      continue;
    }
    for (int64_t i = 0; i < dim; ++i) {
      y[r * dim + i] = CanonicalizeNan(LoadAsFloat(row, table.dtype, i));
    }
  }
}

int64_t ArgmaxRow(const float* x, int64_t n) {
  int64_t best = 0;
  for (int64_t i = 1; i < n; ++i) {
    if (std::isnan(x[best])) break;  // The first NaN ranks above all.
    if (std::isnan(x[i]) || x[i] > x[best]) best = i;
  }
  return best;
}

}  // namespace layerproof::kernels::ref
