// ExpF4: four lanes of detmath::ExpF (kernels/ref/det_math.h) with AArch64
// Advanced SIMD, bit-identical to the scalar function for every float input,
// NaN included (every NaN lane becomes the canonical 0x7FC00000).
//
// It repeats ExpF's sequence of correctly rounded operations one for one
// (docs/det_math.md, "ExpF"): clamp, k by the 1.5 * 2^23 rounding trick,
// two-step Cody-Waite reduction, degree-6 Horner polynomial in fused
// multiply-add, scale by 2^k in two multiplies, NaN select. vmaxq/vminq
// propagate NaN; those lanes are overwritten by the final select anyway.
//
// Requires AArch64 with IEEE denormal handling, i.e. FPCR.FZ = 0 (the Linux
// default); with flush-to-zero the subnormal results would differ. No flags
// needed: Advanced SIMD is part of the AArch64 baseline.
// Thread safety: pure function.
#ifndef LAYERPROOF_KERNELS_CPU_INTERNAL_EXP_NEON_H_
#define LAYERPROOF_KERNELS_CPU_INTERNAL_EXP_NEON_H_

#if !defined(__aarch64__)
#error "exp_neon.h is for AArch64 builds only"
#endif

#include <arm_neon.h>

namespace layerproof::kernels::cpu {

inline float32x4_t ExpF4(float32x4_t x) {
  // Constants: the same values as kernels/ref/det_math.cc.
  const float32x4_t min_arg = vdupq_n_f32(-104.0f);
  const float32x4_t max_arg = vdupq_n_f32(89.0f);
  const float32x4_t magic = vdupq_n_f32(12582912.0f);  // 1.5 * 2^23
  const float32x4_t log2e = vdupq_n_f32(0x1.715476p+0f);
  const float32x4_t ln2_hi = vdupq_n_f32(0x1.62e430p-1f);
  const float32x4_t ln2_lo = vdupq_n_f32(-0x1.05c610p-29f);
  const float32x4_t one = vdupq_n_f32(1.0f);

  const float32x4_t xc = vminq_f32(vmaxq_f32(x, min_arg), max_arg);
  // vfmaq_f32(a, b, c) = a + b * c with one rounding.
  const float32x4_t t = vfmaq_f32(magic, xc, log2e);
  const float32x4_t kf = vsubq_f32(t, magic);
  const int32x4_t k =
      vsubq_s32(vreinterpretq_s32_f32(t), vreinterpretq_s32_f32(magic));
  // vfmsq_f32(a, b, c) = a - b * c with one rounding == fma(-b, c, a).
  float32x4_t r = vfmsq_f32(xc, kf, ln2_hi);
  r = vfmsq_f32(r, kf, ln2_lo);
  float32x4_t u = vdupq_n_f32(0x1.6a2318p-10f);
  u = vfmaq_f32(vdupq_n_f32(0x1.123a8ep-7f), u, r);
  u = vfmaq_f32(vdupq_n_f32(0x1.5558f6p-5f), u, r);
  u = vfmaq_f32(vdupq_n_f32(0x1.555490p-3f), u, r);
  u = vfmaq_f32(vdupq_n_f32(0x1.fffffcp-2f), u, r);
  u = vfmaq_f32(one, u, r);
  const float32x4_t p = vfmaq_f32(one, u, r);
  // 2^k1 * 2^k2, k1 = k >> 1 (arithmetic), k2 = k - k1.
  const int32x4_t k1 = vshrq_n_s32(k, 1);
  const int32x4_t k2 = vsubq_s32(k, k1);
  const int32x4_t bias = vdupq_n_s32(127);
  const float32x4_t s1 =
      vreinterpretq_f32_s32(vshlq_n_s32(vaddq_s32(k1, bias), 23));
  const float32x4_t s2 =
      vreinterpretq_f32_s32(vshlq_n_s32(vaddq_s32(k2, bias), 23));
  const float32x4_t y = vmulq_f32(vmulq_f32(p, s1), s2);
  const uint32x4_t is_num = vceqq_f32(x, x);
  return vbslq_f32(is_num, y, vreinterpretq_f32_u32(vdupq_n_u32(0x7FC00000u)));
}

}  // namespace layerproof::kernels::cpu

#endif  // LAYERPROOF_KERNELS_CPU_INTERNAL_EXP_NEON_H_
