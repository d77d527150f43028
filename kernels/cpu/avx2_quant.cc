// The AVX2 block-quantized GEMM (docs/determinism.md §3.12): the vocabulary
// of internal/quant_kernels.h on vpmaddubsw / vpmaddwd, arranged so that no
// 16-bit sum can saturate:
//  * byte formats keep their signed weights (byte bias 0) and use the sign
//    trick: maddubs(|w|, sign(q, w)) sums pairs of |w| * |q| <= 128 * 127, so
//    a pair is at most 32512 < 2^15; vpmaddwd widens each pair sum to int32
//    at once;
//  * nibbles are at most 15, so a pair is at most 2 * 15 * 127 = 3810 and
//    the eight groups of a unit add up to at most 30480 < 2^15 in int16
//    before one vpmaddwd.
// So every dot is the exact integer of the spec.
#include "kernels/cpu/internal/isa_prelude.h"
#include "kernels/cpu/internal/quant_packed.h"

// The AVX2 region: only code defined below is compiled for AVX2.
// clang-format off
#include "kernels/cpu/internal/avx2_target_begin.h"
// clang-format on

#include "kernels/cpu/internal/avx2_gemm_isa.h"
#include "kernels/cpu/internal/quant_kernels.h"

namespace layerproof::kernels::cpu {
namespace {

struct Avx2QuantIsa {
  static constexpr int64_t kNR = 8;
  static constexpr int kByteBias = 0;
  using VI = __m256i;
  using VF = __m256;
  struct UnitW {
    VI g[8];
  };

  __attribute__((always_inline)) static void LoadBytes(const unsigned char* p,
                                                       UnitW* w) {
#pragma GCC unroll 8
    for (int g = 0; g < 8; ++g) {
      w->g[g] = _mm256_loadu_si256(reinterpret_cast<const VI*>(p + 32 * g));
    }
  }
  __attribute__((always_inline)) static void LoadNibbles(const unsigned char* p,
                                                         UnitW* w) {
    const VI low = _mm256_set1_epi8(0x0F);
#pragma GCC unroll 4
    for (int g = 0; g < 4; ++g) {
      const VI v = _mm256_loadu_si256(reinterpret_cast<const VI*>(p + 32 * g));
      w->g[g] = _mm256_and_si256(v, low);
      w->g[g + 4] = _mm256_and_si256(_mm256_srli_epi16(v, 4), low);
    }
  }
  static VI Broadcast4(const int8_t* x) {
    int32_t v;
    std::memcpy(&v, x, 4);
    return _mm256_set1_epi32(v);
  }
  // Exact sum of w * q over one group of four k per lane.
  static VI SignedGroup(VI w, const int8_t* x) {
    const VI pairs = _mm256_maddubs_epi16(_mm256_abs_epi8(w),
                                          _mm256_sign_epi8(Broadcast4(x), w));
    return _mm256_madd_epi16(pairs, _mm256_set1_epi16(1));
  }
  static VI DotBytes(const UnitW& w, int g0, const int8_t* x) {
    const VI a = _mm256_add_epi32(SignedGroup(w.g[g0], x + 4 * g0),
                                  SignedGroup(w.g[g0 + 1], x + 4 * g0 + 4));
    const VI b = _mm256_add_epi32(SignedGroup(w.g[g0 + 2], x + 4 * g0 + 8),
                                  SignedGroup(w.g[g0 + 3], x + 4 * g0 + 12));
    return _mm256_add_epi32(a, b);
  }
  static VI DotNibbles(const UnitW& w, const int8_t* x) {
    VI sum = _mm256_maddubs_epi16(w.g[0], Broadcast4(x));
#pragma GCC unroll 8
    for (int g = 1; g < 8; ++g) {
      sum = _mm256_add_epi16(
          sum, _mm256_maddubs_epi16(w.g[g], Broadcast4(x + 4 * g)));
    }
    return _mm256_madd_epi16(sum, _mm256_set1_epi16(1));
  }
  static VF ToF(VI v) { return _mm256_cvtepi32_ps(v); }  // exact: |v| < 2^24
  static VI SubScalar(VI v, int32_t s) {
    return _mm256_sub_epi32(v, _mm256_set1_epi32(s));
  }
  static VI Add(VI a, VI b) { return _mm256_add_epi32(a, b); }

  static VF Zero() { return _mm256_setzero_ps(); }
  static VF Set1(float f) { return _mm256_set1_ps(f); }
  static VF Mul(VF a, VF b) { return _mm256_mul_ps(a, b); }
  static VF AddF(VF a, VF b) { return _mm256_add_ps(a, b); }
  static VF Fma(VF a, VF b, VF c) { return _mm256_fmadd_ps(a, b, c); }
  static VF Fnmadd(VF a, VF b, VF c) { return _mm256_fnmadd_ps(a, b, c); }
  static VF LoadHalfs(const unsigned char* p) {
    return _mm256_cvtph_ps(
        _mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  }
  static VF LoadU8(const unsigned char* p) {
    return _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(
        _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p))));
  }
  static VF LoadS8(const unsigned char* p) {
    return _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(
        _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p))));
  }
  static VF Load(const float* p) { return _mm256_loadu_ps(p); }
  static void Store(float* p, VF v) { _mm256_storeu_ps(p, v); }
  static void Finish(VF v, const float* bias, float* y, int64_t count) {
    Avx2GemmIsa::Finish(v, bias, y, count);
  }
};

// Horizontal reductions of one vector.
float MaxOf(__m256 v) {
  __m128 m = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  m = _mm_max_ps(m, _mm_movehl_ps(m, m));
  m = _mm_max_ss(m, _mm_movehdup_ps(m));
  return _mm_cvtss_f32(m);
}
int32_t SumOf(__m256i v) {
  __m128i s =
      _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  s = _mm_add_epi32(s, _mm_unpackhi_epi64(s, s));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 1));
  return _mm_cvtsi128_si32(s);
}

// quant::QuantizeActUnit on each unit of 32, as four vectors; the argument
// for every step is Avx512QuantizeRow's (avx512_quant.cc). The saturating
// packs only narrow: every value is already clamped to [-127, 127].
void Avx2QuantizeRow(const float* x, int64_t k, int8_t* q,
                     quant::ActUnit* units) {
  const __m256 inf = _mm256_set1_ps(std::numeric_limits<float>::infinity());
  const __m256 sign = _mm256_set1_ps(-0.0f);
  const __m256i lo = _mm256_set1_epi32(-quant::kActMax);
  const __m256i hi = _mm256_set1_epi32(quant::kActMax);
  // packs works within 128-bit lanes: this puts the bytes back in order.
  const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
  for (int64_t u = 0; u < k / quant::kUnit; ++u) {
    const float* xu = x + u * quant::kUnit;
    int8_t* qu = q + u * quant::kUnit;
    quant::ActUnit& a = units[u];
    a = quant::ActUnit();
    __m256 v[4], m = _mm256_setzero_ps();
    int finite = 0xFF;
    for (int j = 0; j < 4; ++j) {
      v[j] = _mm256_loadu_ps(xu + 8 * j);
      const __m256 abs = _mm256_andnot_ps(sign, v[j]);
      finite &= _mm256_movemask_ps(_mm256_cmp_ps(abs, inf, _CMP_LT_OQ));
      m = _mm256_max_ps(m, abs);
    }
    if (finite != 0xFF) {
      a.d = CanonicalNan();
      std::memset(qu, 0, quant::kUnit);
      continue;
    }
    const float d = MaxOf(m) / float(quant::kActMax);
    if (d == 0.0f) {  // a.d = +0: a zero unit, or its scale underflows
      std::memset(qu, 0, quant::kUnit);
      continue;
    }
    a.d = d;
    const __m256 vd = _mm256_set1_ps(d);
    __m256i i[4];
    for (int j = 0; j < 4; ++j) {
      const __m256 r =
          _mm256_round_ps(_mm256_div_ps(v[j], vd),
                          _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
      i[j] = _mm256_min_epi32(hi, _mm256_max_epi32(lo, _mm256_cvtps_epi32(r)));
    }
    const __m256i bytes = _mm256_permutevar8x32_epi32(
        _mm256_packs_epi16(_mm256_packs_epi32(i[0], i[1]),
                           _mm256_packs_epi32(i[2], i[3])),
        order);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(qu), bytes);
    a.half_sum[0] = SumOf(_mm256_add_epi32(i[0], i[1]));
    a.half_sum[1] = SumOf(_mm256_add_epi32(i[2], i[3]));
    a.sum = float(a.half_sum[0] + a.half_sum[1]);
  }
}

std::unique_ptr<PackedWeights> Avx2QuantPack(BackendKind kind,
                                             const WeightView& w) {
  return std::make_unique<QuantPacked>(kind, w, Avx2QuantIsa::kNR,
                                       Avx2QuantIsa::kByteBias);
}

}  // namespace

const QuantGemmOps& Avx2QuantOps() {
  static const QuantGemmOps ops = {Avx2QuantIsa::kNR, Avx2QuantPack,
                                   Avx2QuantizeRow, QuantColumns<Avx2QuantIsa>};
  return ops;
}

}  // namespace layerproof::kernels::cpu

#include "kernels/cpu/internal/isa_target_end.h"
