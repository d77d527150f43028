// ExpF16: sixteen lanes of detmath::ExpF (kernels/ref/det_math.h) with
// AVX-512F, bit-identical to the scalar function for every float input,
// NaN included (every NaN lane becomes the canonical 0x7FC00000).
//
// It repeats ExpF's sequence of correctly rounded operations one for one
// (docs/det_math.md, "ExpF"): clamp, k by the 1.5 * 2^23 rounding trick,
// two-step Cody-Waite reduction, degree-6 Horner polynomial in fma, scale by
// 2^k in two multiplies, NaN select. Only the clamp differs for NaN lanes
// (max/min return the bound, the scalar comparison keeps the NaN), which does
// not matter because those lanes are overwritten by the final select.
//
// ISA: the function carries __attribute__((target("avx512f"))), so this
// header may be included by any x86-64 translation unit; callers must
// either be compiled for AVX-512 (as the AVX-512 kernels are, under
// #pragma GCC target) or carry the same target attribute, and must only run
// after a CPUID check. Thread safety: pure function.
#ifndef LAYERPROOF_KERNELS_CPU_INTERNAL_EXP_AVX512_H_
#define LAYERPROOF_KERNELS_CPU_INTERNAL_EXP_AVX512_H_

#if !defined(__x86_64__) && !defined(__i386__)
#error "exp_avx512.h is for x86 builds only"
#endif

#include <immintrin.h>

namespace layerproof::kernels::cpu {

// static: each including translation unit keeps its own copy (docs/kernels.md).
__attribute__((target("avx512f"))) static inline __m512 ExpF16(__m512 x) {
  // Constants: the same values as kernels/ref/det_math.cc.
  const __m512 min_arg = _mm512_set1_ps(-104.0f);
  const __m512 max_arg = _mm512_set1_ps(89.0f);
  const __m512 magic = _mm512_set1_ps(12582912.0f);  // 1.5 * 2^23
  const __m512 log2e = _mm512_set1_ps(0x1.715476p+0f);
  const __m512 ln2_hi = _mm512_set1_ps(0x1.62e430p-1f);
  const __m512 ln2_lo = _mm512_set1_ps(-0x1.05c610p-29f);
  const __m512 one = _mm512_set1_ps(1.0f);

  // The zero-masking forms with an all-ones mask are the plain instructions;
  // they avoid GCC 12's false -Wmaybe-uninitialized on the unmasked
  // intrinsics' _mm512_undefined_* (GCC bug 105593).
  const __mmask16 all = 0xFFFF;
  const __m512 xc =
      _mm512_maskz_min_ps(all, _mm512_maskz_max_ps(all, x, min_arg), max_arg);
  const __m512 t = _mm512_fmadd_ps(xc, log2e, magic);
  const __m512 kf = _mm512_sub_ps(t, magic);
  const __m512i k =
      _mm512_sub_epi32(_mm512_castps_si512(t), _mm512_castps_si512(magic));
  // fnmadd(a, b, c) = -(a * b) + c with one rounding == fma(-a, b, c).
  __m512 r = _mm512_fnmadd_ps(kf, ln2_hi, xc);
  r = _mm512_fnmadd_ps(kf, ln2_lo, r);
  __m512 u = _mm512_set1_ps(0x1.6a2318p-10f);
  u = _mm512_fmadd_ps(u, r, _mm512_set1_ps(0x1.123a8ep-7f));
  u = _mm512_fmadd_ps(u, r, _mm512_set1_ps(0x1.5558f6p-5f));
  u = _mm512_fmadd_ps(u, r, _mm512_set1_ps(0x1.555490p-3f));
  u = _mm512_fmadd_ps(u, r, _mm512_set1_ps(0x1.fffffcp-2f));
  u = _mm512_fmadd_ps(u, r, one);
  const __m512 p = _mm512_fmadd_ps(u, r, one);
  // 2^k1 * 2^k2, k1 = k >> 1 (arithmetic), k2 = k - k1.
  const __m512i k1 = _mm512_maskz_srai_epi32(all, k, 1);
  const __m512i k2 = _mm512_sub_epi32(k, k1);
  const __m512i bias = _mm512_set1_epi32(127);
  const __m512 s1 = _mm512_castsi512_ps(
      _mm512_maskz_slli_epi32(all, _mm512_add_epi32(k1, bias), 23));
  const __m512 s2 = _mm512_castsi512_ps(
      _mm512_maskz_slli_epi32(all, _mm512_add_epi32(k2, bias), 23));
  const __m512 y = _mm512_mul_ps(_mm512_mul_ps(p, s1), s2);
  const __mmask16 is_nan = _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q);
  return _mm512_mask_blend_ps(
      is_nan, y, _mm512_castsi512_ps(_mm512_set1_epi32(0x7FC00000)));
}

}  // namespace layerproof::kernels::cpu

#endif  // LAYERPROOF_KERNELS_CPU_INTERNAL_EXP_AVX512_H_
