#include "kernels/model/quantize.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>

namespace layerproof::kernels::model {
namespace {

// Round half to even, whatever the rounding mode: trunc is exact and so is
// v - trunc(v) (Sterbenz), so every step is exact.
float Nearest(float v) {
  const float r = std::trunc(v);
  const float frac = v - r;
  const float away = r + (v < 0 ? -1.0f : 1.0f);
  if (std::fabs(frac) > 0.5f) return away;
  if (std::fabs(frac) < 0.5f) return r;
  return std::fmod(r, 2.0f) == 0.0f ? r : away;  // a tie: the even one
}

// max / min by comparison: std::fmax and std::fmin may return either zero
// for (+0, -0), and a signed zero here would reach a stored fp16 scale, so
// they are not used. Ties keep the first argument.
float Max(float a, float b) { return b > a ? b : a; }
float Min(float a, float b) { return b < a ? b : a; }

// Clamps first, so the conversion to int is always defined.
int NearestClamped(float v, int lo, int hi) {
  if (!(v >= float(lo))) return lo;  // NaN cannot occur; maps to lo anyway
  if (v > float(hi)) return hi;
  return int(Nearest(v));
}

std::string Num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.9g", v);
  return buf;
}

// The fp16 bits of a block scale; refuses one that overflows fp16.
Status StoreScale(float s, const char* field, int64_t block, int64_t elems,
                  unsigned char* out) {
  const uint16_t h = FloatToF16(s);
  if ((h & 0x7C00u) == 0x7C00u) {
    return InvalidArgument(
        "block " + std::to_string(block) + " (elements " +
        std::to_string(block * elems) + ".." +
        std::to_string(block * elems + elems - 1) + "): scale " + field +
        " = " + Num(s) +
        " overflows fp16 (max 65504): the weights are too large for this "
        "format");
  }
  std::memcpy(out, &h, 2);  // little-endian hosts only (x86-64, aarch64)
  return OkStatus();
}

float LoadScale(const unsigned char* p) {
  uint16_t h;
  std::memcpy(&h, p, 2);
  return F16ToFloat(h);
}

// llama.cpp's quantize_row_q8_0_ref.
Status QuantizeQ8_0(const float* x, int64_t b, unsigned char* y) {
  float amax = 0.0f;
  for (int j = 0; j < 32; ++j) amax = Max(amax, std::fabs(x[j]));
  const float d = amax / 127.0f;
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  LP_RETURN_IF_ERROR(StoreScale(d, "d", b, 32, y));
  const bool usable = std::isfinite(id);  // false when d is a tiny subnormal
  for (int j = 0; j < 32; ++j) {
    float q = usable ? std::roundf(x[j] * id) : 0.0f;
    q = Min(Max(q, -127.0f), 127.0f);
    y[2 + j] = uint8_t(int8_t(q));
  }
  return OkStatus();
}

// llama.cpp's quantize_row_q4_0_ref.
Status QuantizeQ4_0(const float* x, int64_t b, unsigned char* y) {
  float amax = 0.0f, max = 0.0f;
  for (int j = 0; j < 32; ++j) {
    if (amax < std::fabs(x[j])) {
      amax = std::fabs(x[j]);
      max = x[j];
    }
  }
  const float d = max / -8.0f;
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  LP_RETURN_IF_ERROR(StoreScale(d, "d", b, 32, y));
  const bool usable = std::isfinite(id);
  for (int j = 0; j < 16; ++j) {
    int q[2];
    for (int h = 0; h < 2; ++h) {
      const float v = usable ? x[j + 16 * h] * id + 8.5f : 8.0f;
      q[h] = int(std::trunc(Min(Max(v, 0.0f), 15.0f)));
    }
    y[2 + j] = uint8_t(q[0] | (q[1] << 4));
  }
  return OkStatus();
}

// Min/max Q4_K (quantize.h). Block layout: d, dmin, scales[12], qs[128].
Status QuantizeQ4_K(const float* x, int64_t b, unsigned char* y) {
  float scales[8], mins[8], max_scale = 0.0f, max_min = 0.0f;
  for (int j = 0; j < 8; ++j) {
    float lo = x[32 * j], hi = x[32 * j];
    for (int l = 1; l < 32; ++l) {
      lo = Min(lo, x[32 * j + l]);
      hi = Max(hi, x[32 * j + l]);
    }
    if (!(lo < 0.0f)) lo = 0.0f;  // also turns -0 into +0
    scales[j] = (hi - lo) / 15.0f;
    mins[j] = 0.0f - lo;
    max_scale = Max(max_scale, scales[j]);
    max_min = Max(max_min, mins[j]);
  }
  LP_RETURN_IF_ERROR(StoreScale(max_scale / 63.0f, "d", b, 256, y));
  LP_RETURN_IF_ERROR(StoreScale(max_min / 63.0f, "dmin", b, 256, y + 2));
  const float inv_scale = max_scale > 0.0f ? 63.0f / max_scale : 0.0f;
  const float inv_min = max_min > 0.0f ? 63.0f / max_min : 0.0f;
  int ls[8], lm[8];
  for (int j = 0; j < 8; ++j) {
    ls[j] = NearestClamped(inv_scale * scales[j], 0, 63);
    lm[j] = NearestClamped(inv_min * mins[j], 0, 63);
  }
  // The inverse of get_scale_min_k4 (kernels/quant.cc).
  unsigned char* sc = y + 4;
  std::memset(sc, 0, 12);
  for (int j = 0; j < 8; ++j) {
    if (j < 4) {
      sc[j] |= uint8_t(ls[j]);
      sc[j + 4] |= uint8_t(lm[j]);
    } else {
      sc[j + 4] = uint8_t((ls[j] & 0xF) | ((lm[j] & 0xF) << 4));
      sc[j - 4] |= uint8_t((ls[j] >> 4) << 6);
      sc[j] |= uint8_t((lm[j] >> 4) << 6);
    }
  }
  const float d = LoadScale(y), dmin = LoadScale(y + 2);
  unsigned char* qs = y + 16;
  std::memset(qs, 0, 128);
  for (int j = 0; j < 8; ++j) {
    const float dj = d * float(ls[j]);
    const float mj = dmin * float(lm[j]);
    for (int l = 0; l < 32; ++l) {
      const int q =
          dj != 0.0f ? NearestClamped((x[32 * j + l] + mj) / dj, 0, 15) : 0;
      qs[32 * (j / 2) + l] |= uint8_t(q << (4 * (j % 2)));
    }
  }
  return OkStatus();
}

// Signed-max Q6_K (quantize.h). Block layout: ql[128], qh[64],
// scales[16] (int8), d.
Status QuantizeQ6_K(const float* x, int64_t b, unsigned char* y) {
  float scales[16], max_scale = 0.0f, max_abs = 0.0f;
  for (int s = 0; s < 16; ++s) {
    float amax = 0.0f, max = 0.0f;
    for (int l = 0; l < 16; ++l) {
      if (amax < std::fabs(x[16 * s + l])) {
        amax = std::fabs(x[16 * s + l]);
        max = x[16 * s + l];
      }
    }
    scales[s] = max / -32.0f;
    if (max_abs < std::fabs(scales[s])) {
      max_abs = std::fabs(scales[s]);
      max_scale = scales[s];
    }
  }
  std::memset(y, 0, 210);
  // As llama.cpp: a block this small is stored as zeros (it would round to
  // zero in fp16 anyway).
  if (max_abs < 1e-15f) return OkStatus();
  const float iscale = -128.0f / max_scale;
  LP_RETURN_IF_ERROR(StoreScale(1.0f / iscale, "d", b, 256, y + 208));
  auto* sc = reinterpret_cast<int8_t*>(y + 192);
  for (int s = 0; s < 16; ++s) {
    sc[s] = int8_t(NearestClamped(iscale * scales[s], -128, 127));
  }
  const float d = LoadScale(y + 208);
  unsigned char* ql = y;
  unsigned char* qh = y + 128;
  for (int e = 0; e < 256; ++e) {
    const float de = d * float(sc[e / 16]);
    const int q = de != 0.0f ? NearestClamped(x[e] / de, -32, 31) : 0;
    const int v = q + 32;  // 6 bits
    const int h = e / 128, part = (e % 128) / 32, l = e % 32;
    ql[64 * h + 32 * (part & 1) + l] |=
        uint8_t((v & 0xF) << (part < 2 ? 0 : 4));
    qh[32 * h + l] |= uint8_t((v >> 4) << (2 * part));
  }
  return OkStatus();
}

}  // namespace

Status QuantizeRow(DType t, const float* x, int64_t cols, unsigned char* out) {
  const int64_t block = BlockElems(t);
  if (!IsKnownDType(t) || cols <= 0 || cols % block != 0) {
    return InvalidArgument("QuantizeRow: " + std::to_string(cols) +
                           " columns, want a positive multiple of " +
                           std::to_string(block) + " for " +
                           std::string(DTypeName(t)));
  }
  for (int64_t i = 0; i < cols; ++i) {
    if (!std::isfinite(x[i])) {
      return InvalidArgument("element " + std::to_string(i) + ": got " +
                             Num(x[i]) + ", want a finite weight");
    }
  }
  switch (t) {
    case DType::kF32:
      std::memcpy(out, x, size_t(cols) * 4);
      return OkStatus();
    case DType::kF16:
    case DType::kBF16:
      for (int64_t i = 0; i < cols; ++i) {
        const uint16_t h =
            t == DType::kF16 ? FloatToF16(x[i]) : FloatToBf16(x[i]);
        const bool inf = t == DType::kF16 ? (h & 0x7C00u) == 0x7C00u
                                          : (h & 0x7F80u) == 0x7F80u;
        if (inf) {
          return InvalidArgument("element " + std::to_string(i) + ": " +
                                 Num(x[i]) + " overflows " +
                                 std::string(DTypeName(t)));
        }
        std::memcpy(out + 2 * i, &h, 2);
      }
      return OkStatus();
    default:
      break;
  }
  const int64_t bytes = BlockBytes(t);
  for (int64_t b = 0; b < cols / block; ++b) {
    const float* xb = x + b * block;
    unsigned char* yb = out + b * bytes;
    switch (t) {
      case DType::kQ8_0:
        LP_RETURN_IF_ERROR(QuantizeQ8_0(xb, b, yb));
        break;
      case DType::kQ4_0:
        LP_RETURN_IF_ERROR(QuantizeQ4_0(xb, b, yb));
        break;
      case DType::kQ4_K:
        LP_RETURN_IF_ERROR(QuantizeQ4_K(xb, b, yb));
        break;
      case DType::kQ6_K:
        LP_RETURN_IF_ERROR(QuantizeQ6_K(xb, b, yb));
        break;
      default:
        break;
    }
  }
  return OkStatus();
}

}  // namespace layerproof::kernels::model
