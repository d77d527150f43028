#include "kernels/quant.h"

#include <cmath>
#include <cstring>

namespace layerproof::kernels::quant {
namespace {

float LoadF16(const unsigned char* p) {
  uint16_t h;
  std::memcpy(&h, p, 2);
  return F16ToFloat(h);
}

// llama.cpp's get_scale_min_k4: the 6-bit scale and min of Q4_K sub-block j.
void Q4KScaleMin(const unsigned char* scales, int j, int32_t* sc, int32_t* mn) {
  if (j < 4) {
    *sc = scales[j] & 63;
    *mn = scales[j + 4] & 63;
  } else {
    *sc = (scales[j + 4] & 0xF) | ((scales[j - 4] >> 6) << 4);
    *mn = (scales[j + 4] >> 4) | ((scales[j] >> 6) << 4);
  }
}

}  // namespace

std::vector<size_t> HalfScaleOffsets(DType t) {
  switch (t) {
    case DType::kQ4_K:
      return {0, 2};
    case DType::kQ6_K:
      return {208};
    default:
      return {0};
  }
}

void DecodeUnit(DType t, const unsigned char* row, int64_t u, WeightUnit* out) {
  *out = WeightUnit{};
  switch (t) {
    case DType::kQ8_0: {
      const unsigned char* b = row + u * BlockBytes(t);
      out->d = LoadF16(b);
      for (int i = 0; i < kUnit; ++i) out->w[i] = int8_t(b[2 + i]);
      return;
    }
    case DType::kQ4_0: {
      const unsigned char* b = row + u * BlockBytes(t);
      out->d = LoadF16(b);
      for (int i = 0; i < 16; ++i) {
        out->w[i] = int8_t((b[2 + i] & 0xF) - 8);
        out->w[i + 16] = int8_t((b[2 + i] >> 4) - 8);
      }
      return;
    }
    case DType::kQ4_K: {
      const unsigned char* b = row + (u / 8) * BlockBytes(t);
      const int j = int(u % 8);
      out->d = LoadF16(b);
      out->dmin = LoadF16(b + 2);
      int32_t sc, mn;
      Q4KScaleMin(b + 4, j, &sc, &mn);
      out->sc[0] = out->sc[1] = sc;
      out->mn = mn;
      const unsigned char* qs = b + 16 + 32 * (j / 2);
      const int shift = (j % 2) * 4;
      for (int i = 0; i < kUnit; ++i)
        out->w[i] = int8_t((qs[i] >> shift) & 0xF);
      return;
    }
    case DType::kQ6_K: {
      const unsigned char* b = row + (u / 8) * BlockBytes(t);
      const int h = int(u % 8) / 4;  // which 128-element half
      const int q = int(u % 4);      // which 32 within the half
      const unsigned char* ql = b + 64 * h + 32 * (q & 1);
      const unsigned char* qh = b + 128 + 32 * h;
      const auto* scales = reinterpret_cast<const int8_t*>(b + 192);
      out->d = LoadF16(b + 208);
      out->sc[0] = scales[8 * h + 2 * q];
      out->sc[1] = scales[8 * h + 2 * q + 1];
      const int lo_shift = q < 2 ? 0 : 4;
      for (int l = 0; l < kUnit; ++l) {
        const int low = (ql[l] >> lo_shift) & 0xF;
        const int high = (qh[l] >> (2 * q)) & 3;
        out->w[l] = int8_t((low | (high << 4)) - 32);
      }
      return;
    }
    default:
      return;
  }
}

float DequantizeElement(DType t, const WeightUnit& unit, int i) {
  const float sw = float(unit.sc[i / 16] * int32_t{unit.w[i]});  // exact
  if (t == DType::kQ4_K) {
    return std::fma(unit.d, sw, -(unit.dmin * float(unit.mn)));
  }
  return unit.d * sw;
}

void DequantizeRow(DType t, const unsigned char* row, int64_t cols, float* y) {
  WeightUnit unit;
  for (int64_t u = 0; u < cols / kUnit; ++u) {
    DecodeUnit(t, row, u, &unit);
    for (int i = 0; i < kUnit; ++i) {
      y[u * kUnit + i] = DequantizeElement(t, unit, i);
    }
  }
}

ActUnit QuantizeActUnit(const float* x, int8_t* q) {
  ActUnit a;
  float amax = 0.0f;
  bool finite = true;
  for (int i = 0; i < kUnit; ++i) {
    if (!std::isfinite(x[i])) finite = false;
    amax = std::fmax(amax, std::fabs(x[i]));
  }
  std::memset(q, 0, kUnit);
  if (!finite) {
    a.d = CanonicalNan();
    return a;
  }
  const float d = amax / float(kActMax);
  if (d == 0.0f) {
    a.d = 0.0f;  // a zero unit, or one so small its scale underflows
    return a;
  }
  a.d = d;
  for (int i = 0; i < kUnit; ++i) {
    // The contract's FP environment (FpEnvGuard) rounds to nearest even.
    float r = std::nearbyint(x[i] / d);
    r = std::fmin(std::fmax(r, -float(kActMax)), float(kActMax));
    q[i] = int8_t(r);
    a.half_sum[i / 16] += q[i];
  }
  a.sum = float(a.half_sum[0] + a.half_sum[1]);
  return a;
}

void QuantizeRow(const float* x, int64_t k, int8_t* q, ActUnit* units) {
  for (int64_t u = 0; u < k / kUnit; ++u) {
    units[u] = QuantizeActUnit(x + u * kUnit, q + u * kUnit);
  }
}

void QuantizeRows(const float* x, int64_t m, int64_t k, QuantizedRows* out) {
  out->m = m;
  out->k = k;
  out->q.resize(size_t(m * k));
  out->units.resize(size_t(m * (k / kUnit)));
  for (int64_t r = 0; r < m; ++r) {
    QuantizeRow(x + r * k, k, out->q.data() + r * k,
                out->units.data() + r * (k / kUnit));
  }
}

float UnitProduct(DType t, const WeightUnit& w, const int8_t* q,
                  const ActUnit& a) {
  int32_t half[2] = {0, 0};
  for (int i = 0; i < kUnit; ++i) half[i / 16] += int32_t{w.w[i]} * q[i];
  const int32_t dot = w.sc[0] * half[0] + w.sc[1] * half[1];  // |dot| < 2^24
  float u = w.d * float(dot);
  if (t == DType::kQ4_K) {
    const int32_t m = w.mn * (a.half_sum[0] + a.half_sum[1]);
    u = std::fma(-w.dmin, float(m), u);
  }
  return u;
}

}  // namespace layerproof::kernels::quant
