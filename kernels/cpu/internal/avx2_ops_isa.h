// Avx2OpsIsa: the AVX2 + FMA + F16C vocabulary (8 fp32 lanes) that the
// ISA-generic op kernels of kernels/cpu/internal/simd_ops.h and
// simd_ops_attention.h are written in.
//
// Every member is one IEEE-754 correctly rounded vector operation (or a pure
// bit move), so a kernel written in this vocabulary in the ref's order is
// bit-identical to kernels/ref. Fold() is the in-register tail of the Lane32
// butterfly of docs/determinism.md §3.2 (offsets 4, 2, 1); the offsets 16 and
// 8 are vector adds of the four Lane32 accumulators.
//
// ISA: include only inside the AVX2 region of an ISA .cc (after
// avx2_target_begin.h, see isa_prelude.h); the inline members are not
// templates, so another ISA's TU must never see them (one definition rule).
// Thread safety: pure functions.
#ifndef LAYERPROOF_KERNELS_CPU_INTERNAL_AVX2_OPS_ISA_H_
#define LAYERPROOF_KERNELS_CPU_INTERNAL_AVX2_OPS_ISA_H_

#if !defined(LAYERPROOF_TARGET_AVX2)
#error "avx2_ops_isa.h belongs after avx2_target_begin.h in an ISA .cc"
#endif

// <immintrin.h> comes from isa_prelude.h.

#include <cstdint>
#include <cstring>

#include "kernels/cpu/internal/exp_avx2.h"

namespace layerproof::kernels::cpu {

struct Avx2OpsIsa {
  using V = __m256;
  // Lane mask: all-ones lanes are selected.
  using Mask = __m256;

  static constexpr int kW = 8;
  // Vector accumulators the kernels may keep live (of 16 registers).
  static constexpr int kMaxAcc = 8;
  // Query heads that share one pass over a KV head's keys and values.
  static constexpr int kMaxHeadGroup = 2;

  // The first n lanes, 0 <= n <= kW.
  static Mask FirstN(int64_t n) {
    static constexpr int32_t kOnes[16] = {-1, -1, -1, -1, -1, -1, -1, -1,
                                          0,  0,  0,  0,  0,  0,  0,  0};
    return _mm256_castsi256_ps(
        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(kOnes + kW - n)));
  }
  static V Zero() { return _mm256_setzero_ps(); }
  static V Set1(float f) { return _mm256_set1_ps(f); }
  static V Load(const float* p) { return _mm256_loadu_ps(p); }
  // Masked-off lanes read as +0 and are never touched in memory.
  static V LoadN(const float* p, Mask m) {
    return _mm256_maskload_ps(p, _mm256_castps_si256(m));
  }
  // Masked-off lanes read as `fill`.
  static V LoadNOr(const float* p, Mask m, V fill) {
    return _mm256_blendv_ps(fill, LoadN(p, m), m);
  }
  static void Store(float* p, V v) { _mm256_storeu_ps(p, v); }
  static void StoreN(float* p, Mask m, V v) {
    _mm256_maskstore_ps(p, _mm256_castps_si256(m), v);
  }

  // Widens kW (or the first n < kW, rest +0) bf16 / fp16 values exactly.
  // vcvtph2ps quietens a signalling NaN, which no caller can observe: every
  // widened NaN reaches an output through CanonNan.
  static V LoadBf16(const uint16_t* p) {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
  }
  static V LoadBf16N(const uint16_t* p, int64_t n) {
    uint16_t buf[kW] = {};
    std::memcpy(buf, p, static_cast<size_t>(n) * 2);
    return LoadBf16(buf);
  }
  static V LoadF16(const uint16_t* p) {
    return _mm256_cvtph_ps(
        _mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  }
  static V LoadF16N(const uint16_t* p, int64_t n) {
    uint16_t buf[kW] = {};
    std::memcpy(buf, p, static_cast<size_t>(n) * 2);
    return LoadF16(buf);
  }

  static V Add(V a, V b) { return _mm256_add_ps(a, b); }
  static V Sub(V a, V b) { return _mm256_sub_ps(a, b); }
  static V Mul(V a, V b) { return _mm256_mul_ps(a, b); }
  static V Div(V a, V b) { return _mm256_div_ps(a, b); }
  // fma(a, b, c) with one rounding.
  static V Fma(V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); }
  // Lanes in m: fma(a, b, c); others: c unchanged.
  static V FmaN(V a, V b, V c, Mask m) {
    return _mm256_blendv_ps(c, _mm256_fmadd_ps(a, b, c), m);
  }
  // Lanes in m: a + b; others: a unchanged.
  static V AddN(V a, V b, Mask m) {
    return _mm256_blendv_ps(a, _mm256_add_ps(a, b), m);
  }
  // Exact negation (sign flip), as the scalar unary minus.
  static V Neg(V a) { return _mm256_xor_ps(a, _mm256_set1_ps(-0.0f)); }
  // max for non-NaN inputs (either zero for ±0); callers track NaN apart.
  static V Max(V a, V b) { return _mm256_max_ps(a, b); }
  static V Exp(V x) { return ExpF8(x); }

  // NaN lanes become the canonical NaN (kernels/dtype.h).
  static V CanonNan(V v) {
    return _mm256_blendv_ps(v,
                            _mm256_castsi256_ps(_mm256_set1_epi32(0x7FC00000)),
                            _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
  }
  // Lanes that are NaN, as a bit set in lane order.
  static uint32_t NanBits(V v) {
    return static_cast<uint32_t>(
        _mm256_movemask_ps(_mm256_cmp_ps(v, v, _CMP_UNORD_Q)));
  }
  // Lanes equal (==, so -0 == +0) to b, as a bit set in lane order.
  static uint32_t EqBits(V a, V b) {
    return static_cast<uint32_t>(
        _mm256_movemask_ps(_mm256_cmp_ps(a, b, _CMP_EQ_OQ)));
  }

  // Lane32 butterfly inside one vector: offsets 4, 2, 1
  // (lane j += lane j + off), returns lane 0.
  static float Fold(V v) {
    __m128 q =
        _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    q = _mm_add_ps(q, _mm_movehl_ps(q, q));
    q = _mm_add_ss(q, _mm_movehdup_ps(q));
    return _mm_cvtss_f32(q);
  }
  // The largest lane; any of ±0 for a zero maximum. No NaN lanes.
  static float ReduceMax(V v) {
    __m128 q =
        _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    q = _mm_max_ps(q, _mm_movehl_ps(q, q));
    q = _mm_max_ss(q, _mm_movehdup_ps(q));
    return _mm_cvtss_f32(q);
  }

  // Prefetch into all cache levels.
  static void Prefetch(const void* p) {
    _mm_prefetch(static_cast<const char*>(p), _MM_HINT_T0);
  }
};

}  // namespace layerproof::kernels::cpu

#endif  // LAYERPROOF_KERNELS_CPU_INTERNAL_AVX2_OPS_ISA_H_
