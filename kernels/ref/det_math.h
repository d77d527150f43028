// Deterministic elementary functions (docs/determinism.md §2).
//
// Built only from IEEE-754 correctly rounded operations (+ - * / fma, the fma
// always explicit), comparisons, integer arithmetic and bit reinterpretation,
// so every platform and compiler gets the same bits. No libm, no CUDA
// intrinsics. ExpF is on the hot path (softmax, attention, SwiGLU) and is
// written branch-free so that the SIMD and CUDA ports in kernels/cpu and
// kernels/cuda can repeat its exact sequence of operations; the double
// functions build RoPE tables. Subnormal inputs and results are handled
// exactly per the algorithm; nothing assumes or tolerates FTZ/DAZ.
//
// Error bounds versus a higher-precision reference are stated next to each
// function (ulps of the result's format; "measured" is the largest error the
// tests found) and enforced by tests/kernels/det_math_test.cc; the algorithms
// are in docs/det_math.md. Every NaN result is the canonical quiet NaN
// (0x7FC00000, resp. 0x7FF8000000000000).
// Thread safety: pure functions.
#ifndef LAYERPROOF_KERNELS_REF_DET_MATH_H_
#define LAYERPROOF_KERNELS_REF_DET_MATH_H_

namespace layerproof::kernels::detmath {

// e^x in fp32. NaN -> canonical NaN 0x7FC00000, +inf -> +inf, -inf -> +0,
// x >= 88.7228394 (0x42B17218) -> +inf, x <= -103.972084 (0xC2CFF1B5) -> +0;
// results in the subnormal range are correctly scaled (no flush).
// Error < 1 ulp (0.909 ulp measured over all 2^32 inputs; 2.1% of the
// results that are not trivially 1, 0 or inf are not correctly rounded).
float ExpF(float x);

// Double-precision versions, for table construction. Each is < 1 ulp
// (measured: Exp 0.59, 0.76 for subnormal results; Log 0.501; Pow 0.73;
// Sin/Cos 0.74). NaN inputs give the canonical NaN.
double Exp(double x);            // overflow -> +inf, underflow -> +0
double Log(double x);            // x < 0 or NaN -> NaN, x == +-0 -> -inf
double Pow(double x, double y);  // for x > 0 only; otherwise NaN
double Sin(double x);            // |x| < 2^50, else NaN; tested |x| <= 2^20
double Cos(double x);            // |x| < 2^50, else NaN; tested |x| <= 2^20

}  // namespace layerproof::kernels::detmath

#endif  // LAYERPROOF_KERNELS_REF_DET_MATH_H_
