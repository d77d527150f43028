// Reference quantizers: fp32 rows to llama.cpp's GGUF block formats
// (kernels/quant.h documents the layouts; kernels::quant::DequantizeRow
// decodes them), and to the float weight formats, for writing GGUF files.
//
// Schemes (docs/model.md "GGUF files"):
//   Q8_0  llama.cpp's quantize_row_q8_0_ref: d = amax / 127,
//         q = roundf(x * (1 / d)).
//   Q4_0  llama.cpp's quantize_row_q4_0_ref: m = the element of largest
//         magnitude (signed), d = m / -8, q = min(15, trunc(x / d + 8.5)).
//   Q4_K  per sub-block of 32: min = min(0, min x), scale = (max x - min)
//         / 15; d = max scale / 63 and dmin = max(-min) / 63 in fp16; the
//         6-bit sc_j = nearest(63 scale_j / max scale) and m_j likewise;
//         then q = clamp(nearest((x + dmin m_j) / (d sc_j)), 0, 15) with the
//         fp16 d and dmin. (llama.cpp searches for better scales; this is
//         its simple min/max starting point.)
//   Q6_K  per sub-block of 16: m = the element of largest magnitude
//         (signed), scale = m / -32; M = the scale of largest magnitude,
//         d = M / -128 in fp16, sc_j = min(127, nearest(-128 scale_j / M));
//         q = clamp(nearest(x / (d sc_j)), -32, 31).
// nearest() rounds half to even, computed with floor and compares, so it is
// independent of the rounding mode. Only IEEE +, -, *, / and exact
// operations (floor, trunc, roundf, compares) are used, no libm
// transcendentals: the bytes are the same on every platform and compiler
// honouring the project's FP flags.
//
// Refused (InvalidArgument naming the element or block): a NaN or infinite
// input, and a block whose fp16 scale (d or dmin) would overflow fp16
// (> 65504); a scale that underflows fp16 becomes 0 or subnormal, which is
// lossy but finite. Thread safety: pure functions.
#ifndef LAYERPROOF_KERNELS_MODEL_QUANTIZE_H_
#define LAYERPROOF_KERNELS_MODEL_QUANTIZE_H_

#include <cstdint>

#include "kernels/dtype.h"
#include "kernels/status.h"

namespace layerproof::kernels::model {

// Encodes x[0..cols) as one row of type t into out[0..RowBytes(t, cols)).
// cols must be a positive multiple of BlockElems(t). F32 is copied; F16 and
// BF16 round to nearest even (F16 refuses a value that rounds to infinity).
// On error `out` holds partial bytes.
Status QuantizeRow(DType t, const float* x, int64_t cols, unsigned char* out);

}  // namespace layerproof::kernels::model

#endif  // LAYERPROOF_KERNELS_MODEL_QUANTIZE_H_
