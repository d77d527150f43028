// Deterministic elementary functions (docs/determinism.md §2).
//
// Built only from IEEE-754 correctly rounded operations (+ - * / sqrt fma),
// integer arithmetic and bit reinterpretation, so every platform gets the same
// bits. No libm, no CUDA intrinsics. ExpF is on the hot path (softmax,
// attention, SwiGLU) and is written branch-free so that the SIMD and CUDA
// ports in kernels/cpu and kernels/cuda can repeat its exact sequence of
// operations; the double functions build RoPE tables.
//
// Error bounds versus a higher-precision reference are stated next to each
// function and checked by tests/kernels/det_math_test.cc.
// Thread safety: pure functions.
#ifndef LAYERPROOF_KERNELS_REF_DET_MATH_H_
#define LAYERPROOF_KERNELS_REF_DET_MATH_H_

namespace layerproof::kernels::detmath {

// e^x in fp32. NaN -> canonical NaN, +inf -> +inf, -inf -> +0, overflow ->
// +inf, results in the subnormal range are correctly scaled (no flush).
float ExpF(float x);

// Double-precision versions, for table construction.
double Exp(double x);
double Log(double x);             // x <= 0 or NaN -> NaN (x == 0 -> -inf)
double Pow(double x, double y);   // for x > 0 only; otherwise NaN
double Sin(double x);             // accurate for |x| <= 2^20
double Cos(double x);

}  // namespace layerproof::kernels::detmath

#endif  // LAYERPROOF_KERNELS_REF_DET_MATH_H_
