// Avx512OpsIsa: the AVX-512 vocabulary (16 fp32 lanes) that the ISA-generic
// op kernels of kernels/cpu/internal/simd_ops.h and simd_ops_attention.h are
// written in.
//
// Every member is one IEEE-754 correctly rounded vector operation (or a pure
// bit move), so a kernel written in this vocabulary in the ref's order is
// bit-identical to kernels/ref. Fold() is the in-register tail of the Lane32
// butterfly of docs/determinism.md §3.2 (offsets 8, 4, 2, 1).
//
// ISA: include only inside the AVX-512 region of an ISA .cc (after
// avx512_target_begin.h, see isa_prelude.h); the inline members are not
// templates, so another ISA's TU must never see them (one definition rule).
// Thread safety: pure functions.
#ifndef LAYERPROOF_KERNELS_CPU_INTERNAL_AVX512_OPS_ISA_H_
#define LAYERPROOF_KERNELS_CPU_INTERNAL_AVX512_OPS_ISA_H_

#if !defined(LAYERPROOF_TARGET_AVX512)
#error "avx512_ops_isa.h belongs after avx512_target_begin.h in an ISA .cc"
#endif

// <immintrin.h> comes from isa_prelude.h, with GCC 12's false warnings
// silenced there.

#include <cstdint>

#include "kernels/cpu/internal/exp_avx512.h"

namespace layerproof::kernels::cpu {

struct Avx512OpsIsa {
  using V = __m512;
  // Lane mask: bit i selects lane i.
  using Mask = __mmask16;

  static constexpr int kW = 16;
  // Vector accumulators the kernels may keep live (of 32 registers).
  static constexpr int kMaxAcc = 16;
  // Query heads that share one pass over a KV head's keys and values.
  static constexpr int kMaxHeadGroup = 4;

  // The first n lanes, 0 <= n <= kW.
  static Mask FirstN(int64_t n) { return static_cast<Mask>((1u << n) - 1u); }
  static V Zero() { return _mm512_setzero_ps(); }
  static V Set1(float f) { return _mm512_set1_ps(f); }
  static V Load(const float* p) { return _mm512_loadu_ps(p); }
  // Masked-off lanes read as +0 and are never touched in memory.
  static V LoadN(const float* p, Mask m) { return _mm512_maskz_loadu_ps(m, p); }
  // Masked-off lanes read as `fill`.
  static V LoadNOr(const float* p, Mask m, V fill) {
    return _mm512_mask_loadu_ps(fill, m, p);
  }
  static void Store(float* p, V v) { _mm512_storeu_ps(p, v); }
  static void StoreN(float* p, Mask m, V v) { _mm512_mask_storeu_ps(p, m, v); }

  // Widens kW (or the first n < kW, rest +0) bf16 / fp16 values exactly.
  // vcvtph2ps quietens a signalling NaN, which no caller can observe: every
  // widened NaN reaches an output through CanonNan.
  static V LoadBf16(const uint16_t* p) {
    const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
  }
  static V LoadBf16N(const uint16_t* p, int64_t n) {
    const __m256i h = _mm256_maskz_loadu_epi16(FirstN(n), p);
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
  }
  static V LoadF16(const uint16_t* p) {
    return _mm512_cvtph_ps(
        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
  }
  static V LoadF16N(const uint16_t* p, int64_t n) {
    return _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(FirstN(n), p));
  }

  static V Add(V a, V b) { return _mm512_add_ps(a, b); }
  static V Sub(V a, V b) { return _mm512_sub_ps(a, b); }
  static V Mul(V a, V b) { return _mm512_mul_ps(a, b); }
  static V Div(V a, V b) { return _mm512_div_ps(a, b); }
  // fma(a, b, c) with one rounding.
  static V Fma(V a, V b, V c) { return _mm512_fmadd_ps(a, b, c); }
  // Lanes in m: fma(a, b, c); others: c unchanged.
  static V FmaN(V a, V b, V c, Mask m) {
    return _mm512_mask3_fmadd_ps(a, b, c, m);
  }
  // Lanes in m: a + b; others: a unchanged.
  static V AddN(V a, V b, Mask m) { return _mm512_mask_add_ps(a, m, a, b); }
  // Exact negation (sign flip), as the scalar unary minus.
  static V Neg(V a) {
    return _mm512_castsi512_ps(
        _mm512_xor_si512(_mm512_castps_si512(a), _mm512_set1_epi32(INT32_MIN)));
  }
  // max for non-NaN inputs (either zero for ±0); callers track NaN apart.
  static V Max(V a, V b) { return _mm512_max_ps(a, b); }
  static V Exp(V x) { return ExpF16(x); }

  // NaN lanes become the canonical NaN (kernels/dtype.h).
  static V CanonNan(V v) {
    const Mask nan = _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
    return _mm512_mask_mov_ps(
        v, nan, _mm512_castsi512_ps(_mm512_set1_epi32(0x7FC00000)));
  }
  // Lanes that are NaN, as a bit set in lane order.
  static uint32_t NanBits(V v) {
    return _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
  }
  // Lanes equal (==, so -0 == +0) to b, as a bit set in lane order.
  static uint32_t EqBits(V a, V b) {
    return _mm512_cmp_ps_mask(a, b, _CMP_EQ_OQ);
  }

  // Lane32 butterfly inside one vector: offsets 8, 4, 2, 1
  // (lane j += lane j + off), returns lane 0.
  static float Fold(V v) {
    __m256 h =
        _mm256_add_ps(_mm512_castps512_ps256(v), _mm512_extractf32x8_ps(v, 1));
    __m128 q =
        _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
    q = _mm_add_ps(q, _mm_movehl_ps(q, q));
    q = _mm_add_ss(q, _mm_movehdup_ps(q));
    return _mm_cvtss_f32(q);
  }
  // The largest lane; any of ±0 for a zero maximum. No NaN lanes.
  static float ReduceMax(V v) { return _mm512_reduce_max_ps(v); }

  // Prefetch into all cache levels.
  static void Prefetch(const void* p) {
    _mm_prefetch(static_cast<const char*>(p), _MM_HINT_T0);
  }
};

}  // namespace layerproof::kernels::cpu

#endif  // LAYERPROOF_KERNELS_CPU_INTERNAL_AVX512_OPS_ISA_H_
