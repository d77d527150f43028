// ExpF8: eight lanes of detmath::ExpF (kernels/ref/det_math.h) with AVX2 and
// FMA, bit-identical to the scalar function for every float input, NaN
// included (every NaN lane becomes the canonical 0x7FC00000).
//
// It repeats ExpF's sequence of correctly rounded operations one for one
// (docs/det_math.md, "ExpF"): clamp, k by the 1.5 * 2^23 rounding trick,
// two-step Cody-Waite reduction, degree-6 Horner polynomial in fma, scale by
// 2^k in two multiplies, NaN select. Only the clamp differs for NaN lanes
// (max/min return the bound, the scalar comparison keeps the NaN), which does
// not matter because those lanes are overwritten by the final select.
//
// ISA: the function carries __attribute__((target("avx2,fma"))), so this
// header may be included by any x86-64 translation unit; callers must
// either be compiled with AVX2+FMA (as the AVX2 kernels are, under #pragma GCC
// target) or carry the same target attribute, and must only run after a CPUID
// check. Thread safety: pure function.
#ifndef LAYERPROOF_KERNELS_CPU_INTERNAL_EXP_AVX2_H_
#define LAYERPROOF_KERNELS_CPU_INTERNAL_EXP_AVX2_H_

#if !defined(__x86_64__) && !defined(__i386__)
#error "exp_avx2.h is for x86 builds only"
#endif

#include <immintrin.h>

namespace layerproof::kernels::cpu {

// static: each including translation unit keeps its own copy, compiled with
// that unit's flags, so no AVX-512 build of it can be shared (docs/kernels.md).
__attribute__((target("avx2,fma"))) static inline __m256 ExpF8(__m256 x) {
  // Constants: the same values as kernels/ref/det_math.cc.
  const __m256 min_arg = _mm256_set1_ps(-104.0f);
  const __m256 max_arg = _mm256_set1_ps(89.0f);
  const __m256 magic = _mm256_set1_ps(12582912.0f);  // 1.5 * 2^23
  const __m256 log2e = _mm256_set1_ps(0x1.715476p+0f);
  const __m256 ln2_hi = _mm256_set1_ps(0x1.62e430p-1f);
  const __m256 ln2_lo = _mm256_set1_ps(-0x1.05c610p-29f);
  const __m256 one = _mm256_set1_ps(1.0f);

  const __m256 xc = _mm256_min_ps(_mm256_max_ps(x, min_arg), max_arg);
  const __m256 t = _mm256_fmadd_ps(xc, log2e, magic);
  const __m256 kf = _mm256_sub_ps(t, magic);
  const __m256i k =
      _mm256_sub_epi32(_mm256_castps_si256(t), _mm256_castps_si256(magic));
  // fnmadd(a, b, c) = -(a * b) + c with one rounding == fma(-a, b, c).
  __m256 r = _mm256_fnmadd_ps(kf, ln2_hi, xc);
  r = _mm256_fnmadd_ps(kf, ln2_lo, r);
  __m256 u = _mm256_set1_ps(0x1.6a2318p-10f);
  u = _mm256_fmadd_ps(u, r, _mm256_set1_ps(0x1.123a8ep-7f));
  u = _mm256_fmadd_ps(u, r, _mm256_set1_ps(0x1.5558f6p-5f));
  u = _mm256_fmadd_ps(u, r, _mm256_set1_ps(0x1.555490p-3f));
  u = _mm256_fmadd_ps(u, r, _mm256_set1_ps(0x1.fffffcp-2f));
  u = _mm256_fmadd_ps(u, r, one);
  const __m256 p = _mm256_fmadd_ps(u, r, one);
  // 2^k1 * 2^k2, k1 = k >> 1 (arithmetic), k2 = k - k1.
  const __m256i k1 = _mm256_srai_epi32(k, 1);
  const __m256i k2 = _mm256_sub_epi32(k, k1);
  const __m256i bias = _mm256_set1_epi32(127);
  const __m256 s1 =
      _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(k1, bias), 23));
  const __m256 s2 =
      _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(k2, bias), 23));
  const __m256 y = _mm256_mul_ps(_mm256_mul_ps(p, s1), s2);
  const __m256 is_nan = _mm256_cmp_ps(x, x, _CMP_UNORD_Q);
  return _mm256_blendv_ps(y, _mm256_castsi256_ps(_mm256_set1_epi32(0x7FC00000)),
                          is_nan);
}

}  // namespace layerproof::kernels::cpu

#endif  // LAYERPROOF_KERNELS_CPU_INTERNAL_EXP_AVX2_H_
