// Avx2GemmIsa: the AVX2 + FMA + F16C vocabulary (8 fp32 lanes, panels of 16
// columns, two ymm of outputs per row) that the ISA-generic GEMM
// micro-kernels of kernels/cpu/internal/gemm_kernels.h are written in
// (docs/determinism.md §3.1, chunk-tree order).
//
// Every member is one IEEE-754 correctly rounded vector operation or a pure
// bit move: bf16 is upcast with one shift and one AND per 16 weights, fp16
// with vcvtph2ps (exact, subnormals included), fp32 is used as stored. So the
// kernels, which keep one output column per lane and one fma chain per output
// over ascending k, stay bit-identical to kernels/ref.
//
// ISA: include only inside the AVX2 region of an ISA .cc (after
// avx2_target_begin.h, see isa_prelude.h). Unnamed namespace for the reason
// given in gemm_panels.h. Thread safety: pure functions.
#ifndef LAYERPROOF_KERNELS_CPU_INTERNAL_AVX2_GEMM_ISA_H_
#define LAYERPROOF_KERNELS_CPU_INTERNAL_AVX2_GEMM_ISA_H_

#if !defined(LAYERPROOF_TARGET_AVX2)
#error "avx2_gemm_isa.h belongs after avx2_target_begin.h in an ISA .cc"
#endif

// <immintrin.h> comes from isa_prelude.h.

#include <cstdint>

#include "kernels/dtype.h"

namespace layerproof::kernels::cpu {
namespace {  // NOLINT(build/namespaces): see gemm_panels.h.

struct Avx2GemmIsa {
  using V = __m256;

  static constexpr int kW = 8;        // fp32 lanes of V
  static constexpr int64_t kNR = 16;  // panel width: two ymm
  static constexpr int64_t kMR = 6;   // register tile rows: 12 accumulators
  // Skinny kernels handle up to this many rows, SkinnyPanels(rows) panels at
  // a time: 8 or 12 accumulators of 16 ymm.
  static constexpr int kSkinnyMaxRows = 2;
  static constexpr int SkinnyPanels(int rows) { return rows == 1 ? 4 : 3; }
  // Software prefetch distance of the skinny kernels, in bytes of one panel.
  static constexpr int64_t kPrefetchBytes = 2048;

  static V Zero() { return _mm256_setzero_ps(); }
  static V Broadcast(const float* p) { return _mm256_broadcast_ss(p); }
  // 32-byte aligned load and store.
  static V Load(const float* p) { return _mm256_load_ps(p); }
  static void Store(float* p, V v) { _mm256_store_ps(p, v); }
  static V Add(V a, V b) { return _mm256_add_ps(a, b); }
  // fma(a, b, c) with one rounding.
  static V Fma(V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); }
  // Prefetch into all cache levels.
  static void Prefetch(const unsigned char* p) {
    _mm_prefetch(reinterpret_cast<const char*>(p), _MM_HINT_T0);
  }

  // Upcasts one packed row (gemm_panels.h): lo = columns [0, 8), hi =
  // columns [8, 16).
  template <DType DT>
  static void LoadRow(const unsigned char* row, V* lo, V* hi) {
    if constexpr (DT == DType::kBF16) {
      const __m256i d =
          _mm256_load_si256(reinterpret_cast<const __m256i*>(row));
      *lo = _mm256_castsi256_ps(_mm256_slli_epi32(d, 16));
      *hi = _mm256_castsi256_ps(_mm256_and_si256(
          d, _mm256_set1_epi32(static_cast<int>(0xFFFF0000u))));
    } else if constexpr (DT == DType::kF16) {
      *lo = _mm256_cvtph_ps(
          _mm_load_si128(reinterpret_cast<const __m128i*>(row)));
      *hi = _mm256_cvtph_ps(
          _mm_load_si128(reinterpret_cast<const __m128i*>(row + 16)));
    } else {
      *lo = _mm256_load_ps(reinterpret_cast<const float*>(row));
      *hi = _mm256_load_ps(reinterpret_cast<const float*>(row + 32));
    }
  }

  // Finishes 8 outputs: + bias (once, after the tree), canonical NaN, store
  // the first `count` lanes (count clamped to [0, 8]).
  static void Finish(V v, const float* bias, float* y, int64_t count) {
    if (count >= 8) {
      if (bias != nullptr) v = _mm256_add_ps(v, _mm256_loadu_ps(bias));
      _mm256_storeu_ps(y, CanonicalizeNan(v));
      return;
    }
    if (count <= 0) return;
    const __m256i mask =
        _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(count)),
                           _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    if (bias != nullptr) v = _mm256_add_ps(v, _mm256_maskload_ps(bias, mask));
    _mm256_maskstore_ps(y, mask, CanonicalizeNan(v));
  }

 private:
  static V CanonicalizeNan(V v) {
    const __m256 nan = _mm256_cmp_ps(v, v, _CMP_UNORD_Q);
    return _mm256_blendv_ps(
        v, _mm256_castsi256_ps(_mm256_set1_epi32(kCanonicalNanBits)), nan);
  }
};

}  // namespace
}  // namespace layerproof::kernels::cpu

#endif  // LAYERPROOF_KERNELS_CPU_INTERNAL_AVX2_GEMM_ISA_H_
