// Avx512GemmIsa: the AVX-512 vocabulary (16 fp32 lanes, panels of 32 columns,
// two zmm of outputs per row) that the ISA-generic GEMM micro-kernels of
// kernels/cpu/internal/gemm_kernels.h are written in
// (docs/determinism.md §3.1, chunk-tree order).
//
// Every member is one IEEE-754 correctly rounded vector operation or a pure
// bit move: bf16 is upcast with one shift and one AND per 32 weights, fp16
// with vcvtph2ps (exact, subnormals included), fp32 is used as stored. So the
// kernels, which keep one output column per lane and one fma chain per output
// over ascending k, stay bit-identical to kernels/ref.
//
// ISA: include only inside the AVX-512 region of an ISA .cc (after
// avx512_target_begin.h, see isa_prelude.h). Unnamed namespace for the
// reason given in gemm_panels.h. Thread safety: pure functions.
#ifndef LAYERPROOF_KERNELS_CPU_INTERNAL_AVX512_GEMM_ISA_H_
#define LAYERPROOF_KERNELS_CPU_INTERNAL_AVX512_GEMM_ISA_H_

#if !defined(LAYERPROOF_TARGET_AVX512)
#error "avx512_gemm_isa.h belongs after avx512_target_begin.h in an ISA .cc"
#endif

// <immintrin.h> comes from isa_prelude.h, with GCC 12's false warnings
// silenced there.

#include <cstdint>

#include "kernels/dtype.h"

namespace layerproof::kernels::cpu {
namespace {  // NOLINT(build/namespaces): see gemm_panels.h.

struct Avx512GemmIsa {
  using V = __m512;

  static constexpr int kW = 16;       // fp32 lanes of V
  static constexpr int64_t kNR = 32;  // panel width: two zmm
  static constexpr int64_t kMR = 14;  // register tile rows: 28 accumulators
  // Skinny kernels handle up to this many rows (a decode batch of 8 in one
  // pass over the weights), SkinnyPanels(rows) panels at a time: 8 .. 24
  // independent fma chains, at most 24 accumulators of the 32 zmm.
  static constexpr int kSkinnyMaxRows = 8;
  static constexpr int SkinnyPanels(int rows) {
    return rows <= 3 ? 4 : rows == 4 ? 3 : rows <= 6 ? 2 : 1;
  }
  // Software prefetch distance of the skinny kernels, in bytes of one panel.
  static constexpr int64_t kPrefetchBytes = 2048;

  static V Zero() { return _mm512_setzero_ps(); }
  static V Broadcast(const float* p) { return _mm512_set1_ps(*p); }
  // 64-byte aligned load and store.
  static V Load(const float* p) { return _mm512_load_ps(p); }
  static void Store(float* p, V v) { _mm512_store_ps(p, v); }
  static V Add(V a, V b) { return _mm512_add_ps(a, b); }
  // fma(a, b, c) with one rounding.
  static V Fma(V a, V b, V c) { return _mm512_fmadd_ps(a, b, c); }
  // Prefetch into all cache levels.
  static void Prefetch(const unsigned char* p) {
    _mm_prefetch(reinterpret_cast<const char*>(p), _MM_HINT_T0);
  }

  // Upcasts one packed row (gemm_panels.h): lo = columns [0, 16), hi =
  // columns [16, 32).
  template <DType DT>
  static void LoadRow(const unsigned char* row, V* lo, V* hi) {
    if constexpr (DT == DType::kBF16) {
      const __m512i d = _mm512_load_si512(row);
      *lo = _mm512_castsi512_ps(_mm512_slli_epi32(d, 16));
      *hi = _mm512_castsi512_ps(_mm512_and_si512(
          d, _mm512_set1_epi32(static_cast<int>(0xFFFF0000u))));
    } else if constexpr (DT == DType::kF16) {
      *lo = _mm512_cvtph_ps(
          _mm256_load_si256(reinterpret_cast<const __m256i*>(row)));
      *hi = _mm512_cvtph_ps(
          _mm256_load_si256(reinterpret_cast<const __m256i*>(row + 32)));
    } else {
      *lo = _mm512_load_ps(row);
      *hi = _mm512_load_ps(row + 64);
    }
  }

  // Finishes 16 outputs: + bias (once, after the tree), canonical NaN, store
  // the first `count` lanes (count clamped to [0, 16]).
  static void Finish(V v, const float* bias, float* y, int64_t count) {
    const __mmask16 mask = FirstLanes(count);
    if (bias != nullptr) {
      v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(mask, bias));
    }
    _mm512_mask_storeu_ps(y, mask, CanonicalizeNan(v));
  }

 private:
  static V CanonicalizeNan(V v) {
    const __mmask16 nan = _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
    return _mm512_mask_mov_ps(
        v, nan, _mm512_castsi512_ps(_mm512_set1_epi32(kCanonicalNanBits)));
  }
  // The mask of the first `count` lanes, count clamped to [0, 16].
  static __mmask16 FirstLanes(int64_t count) {
    if (count >= 16) return 0xFFFF;
    if (count <= 0) return 0;
    return static_cast<__mmask16>((1u << count) - 1);
  }
};

}  // namespace
}  // namespace layerproof::kernels::cpu

#endif  // LAYERPROOF_KERNELS_CPU_INTERNAL_AVX512_GEMM_ISA_H_
