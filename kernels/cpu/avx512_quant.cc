// The AVX-512 VNNI block-quantized GEMM (docs/determinism.md §3.12): the
// vocabulary of internal/quant_kernels.h on vpdpbusd. Byte formats are packed
// with a bias of 128 (u8 = w + 128), so vpdpbusd's u8 x s8 products are the
// stored weights' plus 128 * q, removed with the unit's activation sums.
// Nibbles are u8 already. vpdpbusd adds four exact products to an int32
// lane without saturation, so every dot is the exact integer of the spec.
// On AVX-512 CPUs without VNNI (Skylake-SP), the AVX2 kernels run instead.
#include "kernels/cpu/internal/isa_prelude.h"
#include "kernels/cpu/internal/quant_packed.h"

// The AVX-512 region: only code defined below is compiled for AVX-512.
// VNNI too (vpdpbusd); dispatch checks for it.
#define LAYERPROOF_AVX512_EXTRA_FEATURES ",avx512vnni"
// clang-format off
#include "kernels/cpu/internal/avx512_target_begin.h"
// clang-format on
#if !defined(__clang__)
#pragma GCC target("avx512vnni")
#endif

#include "kernels/cpu/internal/avx512_gemm_isa.h"
#include "kernels/cpu/internal/quant_kernels.h"

namespace layerproof::kernels::cpu {
namespace {

struct Avx512QuantIsa {
  static constexpr int64_t kNR = 16;
  static constexpr int kByteBias = 128;
  using VI = __m512i;
  using VF = __m512;
  struct UnitW {
    VI g[8];
  };

  __attribute__((always_inline)) static void LoadBytes(const unsigned char* p,
                                                       UnitW* w) {
#pragma GCC unroll 8
    for (int g = 0; g < 8; ++g) w->g[g] = _mm512_loadu_si512(p + 64 * g);
  }
  // The high nibbles stay in place (16 n, at most 240): vpdpbusd's
  // products and sums do not saturate, so their dot is exactly 16 times
  // the nibbles' dot, which DotNibbles shifts back. That saves a shift per
  // vector over moving them down.
  __attribute__((always_inline)) static void LoadNibbles(const unsigned char* p,
                                                         UnitW* w) {
    const VI low = _mm512_set1_epi8(0x0F);
    const VI high = _mm512_set1_epi8(char(0xF0));
#pragma GCC unroll 4
    for (int g = 0; g < 4; ++g) {
      const VI v = _mm512_loadu_si512(p + 64 * g);
      w->g[g] = _mm512_and_si512(v, low);
      w->g[g + 4] = _mm512_and_si512(v, high);
    }
  }
  // Four activation bytes in every lane.
  static VI Broadcast4(const int8_t* x) {
    int32_t v;
    std::memcpy(&v, x, 4);
    return _mm512_set1_epi32(v);
  }
  static VI DotBytes(const UnitW& w, int g0, const int8_t* x) {
    VI a = _mm512_dpbusd_epi32(_mm512_setzero_si512(), w.g[g0],
                               Broadcast4(x + 4 * g0));
    VI b = _mm512_dpbusd_epi32(_mm512_setzero_si512(), w.g[g0 + 1],
                               Broadcast4(x + 4 * g0 + 4));
    a = _mm512_dpbusd_epi32(a, w.g[g0 + 2], Broadcast4(x + 4 * g0 + 8));
    b = _mm512_dpbusd_epi32(b, w.g[g0 + 3], Broadcast4(x + 4 * g0 + 12));
    return _mm512_add_epi32(a, b);
  }
  // |16 x the high nibbles' dot| <= 16 * 15 * 127 * 16 < 2^19: exact, and
  // a multiple of 16, so the arithmetic shift divides it exactly.
  static VI DotNibbles(const UnitW& w, const int8_t* x) {
    return _mm512_add_epi32(DotBytes(w, 0, x),
                            _mm512_srai_epi32(DotBytes(w, 4, x), 4));
  }
  static VF ToF(VI v) { return _mm512_cvtepi32_ps(v); }  // exact: |v| < 2^24
  static VI SubScalar(VI v, int32_t s) {
    return _mm512_sub_epi32(v, _mm512_set1_epi32(s));
  }
  static VI Add(VI a, VI b) { return _mm512_add_epi32(a, b); }

  static VF Zero() { return _mm512_setzero_ps(); }
  static VF Set1(float f) { return _mm512_set1_ps(f); }
  static VF Mul(VF a, VF b) { return _mm512_mul_ps(a, b); }
  static VF AddF(VF a, VF b) { return _mm512_add_ps(a, b); }
  static VF Fma(VF a, VF b, VF c) { return _mm512_fmadd_ps(a, b, c); }
  static VF Fnmadd(VF a, VF b, VF c) { return _mm512_fnmadd_ps(a, b, c); }
  static VF LoadHalfs(const unsigned char* p) {
    return _mm512_cvtph_ps(
        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
  }
  static VF LoadU8(const unsigned char* p) {
    return _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(
        _mm_loadu_si128(reinterpret_cast<const __m128i*>(p))));
  }
  static VF LoadS8(const unsigned char* p) {
    return _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(
        _mm_loadu_si128(reinterpret_cast<const __m128i*>(p))));
  }
  static VF Load(const float* p) { return _mm512_loadu_ps(p); }
  static void Store(float* p, VF v) { _mm512_storeu_ps(p, v); }
  static void Finish(VF v, const float* bias, float* y, int64_t count) {
    Avx512GemmIsa::Finish(v, bias, y, count);
  }
};

// quant::QuantizeActUnit on each unit of 32, as two vectors. Every step is
// the spec's: |x| is a sign-bit clear, "finite" is |x| < inf (false for NaN),
// the maximum of finite magnitudes is exact, d = amax / 127 is the same
// correctly rounded scalar division, x / d is a correctly rounded vector
// division, rounded to the nearest integer, ties to even, as nearbyint does
// in the contract's FP environment; then exact integer clamping and sums.
void Avx512QuantizeRow(const float* x, int64_t k, int8_t* q,
                       quant::ActUnit* units) {
  const __m512 inf = _mm512_set1_ps(std::numeric_limits<float>::infinity());
  const __m512i lo = _mm512_set1_epi32(-quant::kActMax);
  const __m512i hi = _mm512_set1_epi32(quant::kActMax);
  for (int64_t u = 0; u < k / quant::kUnit; ++u) {
    const float* xu = x + u * quant::kUnit;
    int8_t* qu = q + u * quant::kUnit;
    quant::ActUnit& a = units[u];
    a = quant::ActUnit();
    const __m512 v0 = _mm512_loadu_ps(xu);
    const __m512 v1 = _mm512_loadu_ps(xu + 16);
    const __m512 a0 = _mm512_abs_ps(v0);
    const __m512 a1 = _mm512_abs_ps(v1);
    const __mmask16 finite = _mm512_cmp_ps_mask(a0, inf, _CMP_LT_OQ) &
                             _mm512_cmp_ps_mask(a1, inf, _CMP_LT_OQ);
    if (finite != 0xFFFF) {
      a.d = CanonicalNan();
      std::memset(qu, 0, quant::kUnit);
      continue;
    }
    const float d =
        _mm512_reduce_max_ps(_mm512_max_ps(a0, a1)) / float(quant::kActMax);
    if (d == 0.0f) {  // a.d = +0: a zero unit, or its scale underflows
      std::memset(qu, 0, quant::kUnit);
      continue;
    }
    a.d = d;
    const __m512 vd = _mm512_set1_ps(d);
    constexpr int kRne = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;
    const __m512i i0 = _mm512_min_epi32(
        hi, _mm512_max_epi32(
                lo, _mm512_cvt_roundps_epi32(_mm512_div_ps(v0, vd), kRne)));
    const __m512i i1 = _mm512_min_epi32(
        hi, _mm512_max_epi32(
                lo, _mm512_cvt_roundps_epi32(_mm512_div_ps(v1, vd), kRne)));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(qu), _mm512_cvtepi32_epi8(i0));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(qu + 16),
                     _mm512_cvtepi32_epi8(i1));
    a.half_sum[0] = _mm512_reduce_add_epi32(i0);
    a.half_sum[1] = _mm512_reduce_add_epi32(i1);
    a.sum = float(a.half_sum[0] + a.half_sum[1]);
  }
}

std::unique_ptr<PackedWeights> Avx512QuantPack(BackendKind kind,
                                               const WeightView& w) {
  return std::make_unique<QuantPacked>(kind, w, Avx512QuantIsa::kNR,
                                       Avx512QuantIsa::kByteBias);
}

}  // namespace

const QuantGemmOps& Avx512QuantOps() {
  static const QuantGemmOps vnni = {Avx512QuantIsa::kNR, Avx512QuantPack,
                                    Avx512QuantizeRow,
                                    QuantColumns<Avx512QuantIsa>};
  return __builtin_cpu_supports("avx512vnni") ? vnni : Avx2QuantOps();
}

}  // namespace layerproof::kernels::cpu

#include "kernels/cpu/internal/isa_target_end.h"
