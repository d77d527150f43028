// DetExpF: detmath::ExpF (kernels/ref/det_math.h) on the GPU, bit-identical
// to the scalar function for every float input, NaN included (every NaN
// becomes the canonical 0x7FC00000).
//
// It repeats ExpF's sequence of correctly rounded operations one for one
// (docs/det_math.md, "ExpF"), spelled with the explicitly rounded intrinsics
// __fmaf_rn / __fadd_rn / __fsub_rn / __fmul_rn so that neither --fmad nor
// -use_fast_math can contract or approximate them; no CUDA math-library
// function is called. It relies on -ftz=false (the project's device flags,
// docs/determinism.md §1): with flush-to-zero the subnormal results, and the
// exact scaling that produces them, would differ from the host.
// Thread safety: pure device function.
#ifndef LAYERPROOF_KERNELS_CUDA_DET_EXP_CUH_
#define LAYERPROOF_KERNELS_CUDA_DET_EXP_CUH_

namespace layerproof::kernels::cuda {

__device__ __forceinline__ float DetExpF(float x) {
  // Constants: the same values as kernels/ref/det_math.cc.
  constexpr float kMinArg = -104.0f;
  constexpr float kMaxArg = 89.0f;
  constexpr float kMagic = 12582912.0f;         // 1.5 * 2^23
  constexpr unsigned kMagicBits = 0x4B400000u;  // bits of kMagic
  constexpr float kLog2e = 0x1.715476p+0f;
  constexpr float kLn2Hi = 0x1.62e430p-1f;
  constexpr float kLn2Lo = -0x1.05c610p-29f;

  // Comparisons keep a NaN unchanged, as in the scalar code.
  float xc = x < kMinArg ? kMinArg : x;
  xc = xc > kMaxArg ? kMaxArg : xc;
  const float t = __fmaf_rn(xc, kLog2e, kMagic);
  const float kf = __fsub_rn(t, kMagic);
  // Unsigned subtraction: a NaN lane yields garbage but no overflow.
  const int k = static_cast<int>(__float_as_uint(t) - kMagicBits);
  float r = __fmaf_rn(-kf, kLn2Hi, xc);
  r = __fmaf_rn(-kf, kLn2Lo, r);
  float u = 0x1.6a2318p-10f;
  u = __fmaf_rn(u, r, 0x1.123a8ep-7f);
  u = __fmaf_rn(u, r, 0x1.5558f6p-5f);
  u = __fmaf_rn(u, r, 0x1.555490p-3f);
  u = __fmaf_rn(u, r, 0x1.fffffcp-2f);
  u = __fmaf_rn(u, r, 1.0f);
  const float p = __fmaf_rn(u, r, 1.0f);
  // 2^k1 * 2^k2, k1 = k >> 1 (arithmetic shift of a signed int), k2 = k - k1;
  // the first multiply is exact, the second rounds once.
  const int k1 = k >> 1;
  const int k2 = k - k1;
  const float s1 = __uint_as_float(static_cast<unsigned>(k1 + 127) << 23);
  const float s2 = __uint_as_float(static_cast<unsigned>(k2 + 127) << 23);
  const float y = __fmul_rn(__fmul_rn(p, s1), s2);
  return x != x ? __uint_as_float(0x7FC00000u) : y;
}

}  // namespace layerproof::kernels::cuda

#endif  // LAYERPROOF_KERNELS_CUDA_DET_EXP_CUH_
