// Block-quantized weights and int8 activations: the arithmetic of
// docs/determinism.md §3.12, in scalar form. Every backend reproduces these
// functions exactly; kernels/ref calls them.
//
// Weight formats are llama.cpp's GGUF blocks (ggml-common.h), little-endian,
// stored row by row with no padding:
//   Q8_0  34 bytes / 32:  fp16 d, int8 qs[32];           w_i = qs[i]
//   Q4_0  18 bytes / 32:  fp16 d, u8 qs[16];             w_i = nibble - 8
//         (element i < 16 is the low nibble of qs[i], i >= 16 the high
//         nibble of qs[i - 16])
//   Q4_K 144 bytes / 256: fp16 d, fp16 dmin, u8 scales[12], u8 qs[128];
//         eight sub-blocks of 32 with 6-bit scale sc_j and min m_j
//         (get_scale_min_k4); sub-block j reads the low (j even) or high
//         (j odd) nibbles of qs[32 * (j / 2) .. + 32); w_i = nibble
//   Q6_K 210 bytes / 256: u8 ql[128], u8 qh[64], int8 scales[16], fp16 d;
//         element e = 128 h + 32 q + l has w = (4 bits of ql | 2 bits of qh
//         << 4) - 32 and scale scales[8 h + 2 q + l / 16]
//
// Every format is read as *units* of 32 consecutive elements. A unit has
// integer weights w_i, two integer half scales (sc[0] for elements 0..15,
// sc[1] for 16..31), an integer min multiplier mn and fp32 scales d, dmin
// (both exact widenings of fp16):
//   weight_i = d * sc[i / 16] * w_i - dmin * mn     (exactly, in the reals)
//
// Thread safety: pure functions.
#ifndef LAYERPROOF_KERNELS_QUANT_H_
#define LAYERPROOF_KERNELS_QUANT_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "kernels/dtype.h"

namespace layerproof::kernels::quant {

// Elements per unit: the activation block and the combining granularity.
inline constexpr int64_t kUnit = 32;
// Activations are quantized to [-kActMax, kActMax].
inline constexpr int kActMax = 127;

struct WeightUnit {
  int8_t w[kUnit];         // Q8_0 [-128, 127], Q4_0 [-8, 7], Q4_K [0, 15],
                           // Q6_K [-32, 31]
  int32_t sc[2] = {1, 1};  // Q4_K: sc_j twice; Q6_K: the two int8 scales
  int32_t mn = 0;          // Q4_K: m_j; else 0
  float d = 0.0f;          // widened fp16 d
  float dmin = 0.0f;       // Q4_K: widened fp16 dmin; else 0
};

// The byte offsets, within one stored block of format `t`, of its fp16
// scales (the layouts above): Q4_K's d and dmin at 0 and 2, Q6_K's d at
// 208, the others' d at 0. For tests and cross-checks that plant scales.
std::vector<size_t> HalfScaleOffsets(DType t);

// Decodes unit `u` of a row stored in block format `t` (u < cols / 32).
void DecodeUnit(DType t, const unsigned char* row, int64_t u, WeightUnit* out);

// The fp32 value of element i of a decoded unit: the correctly rounded
// weight_i (§3.12 "Dequantization"): d * float(sc * w), or for Q4_K
// fma(d, float(sc * w), -(dmin * float(mn))). Every inner product is exact.
float DequantizeElement(DType t, const WeightUnit& unit, int i);

// Row `row` of `cols` elements (a multiple of BlockElems(t)) as fp32.
void DequantizeRow(DType t, const unsigned char* row, int64_t cols, float* y);

// One quantized activation unit (§3.12 "Activations").
struct ActUnit {
  float d = 0.0f;                // the unit's scale (NaN when not finite)
  int32_t half_sum[2] = {0, 0};  // sum of q over elements 0..15, 16..31
  // float(half_sum[0] + half_sum[1]), exact (|sum| <= 32 * 127): kept so
  // that a SIMD kernel can broadcast it from memory into Q4_K's min term.
  float sum = 0.0f;
};

// Quantizes x[0..32) to q[0..32) and its scale:
//   a = max |x_i|; if a is NaN or inf: d = NaN, q = 0;
//   d = a / 127; if d == 0: d = +0, q = 0;
//   else q_i = clamp(round_half_even(x_i / d), -127, 127).
ActUnit QuantizeActUnit(const float* x, int8_t* q);

// Quantizes a row x[0..k), k a multiple of 32: q[k] and units[k / 32].
void QuantizeRow(const float* x, int64_t k, int8_t* q, ActUnit* units);

// m rows of k activations, quantized row by row.
struct QuantizedRows {
  int64_t m = 0;
  int64_t k = 0;
  std::vector<int8_t> q;       // [m][k]
  std::vector<ActUnit> units;  // [m][k / 32]
  const int8_t* row_q(int64_t r) const { return q.data() + r * k; }
  const ActUnit* row_units(int64_t r) const {
    return units.data() + r * (k / kUnit);
  }
};
// Resizes *out and quantizes every row (serially; CPU backends cut rows
// into tasks and call QuantizeRow themselves).
void QuantizeRows(const float* x, int64_t m, int64_t k, QuantizedRows* out);

// The unit's product with a quantized activation unit, before the activation
// scale (§3.12 "Units"):
//   I = sc[0] * sum_{i<16} w_i q_i + sc[1] * sum_{i>=16} w_i q_i   (exact)
//   u = d * float(I);  Q4_K: u = fma(-dmin, float(mn * (S0 + S1)), u).
float UnitProduct(DType t, const WeightUnit& w, const int8_t* q,
                  const ActUnit& a);

}  // namespace layerproof::kernels::quant

#endif  // LAYERPROOF_KERNELS_QUANT_H_
