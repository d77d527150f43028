// The AVX2 fused-upcast GEMM/GEMV (docs/determinism.md §3.1, chunk-tree
// order). Panels of 16 columns (two ymm of outputs per row); see
// gemm_panels.h for the packed layout and gemm_blocking.h for the loop nest.
//
// Every ymm lane is one output column: per k the kernels broadcast x[m][k]
// and fma it with that k's 8 upcast weights, so each output's chunk partial is
// one fma chain over ascending k from +0, exactly as kernels/ref. bf16 is
// upcast with one shift and one AND per 16 weights, fp16 with vcvtph2ps (exact,
// subnormals included), fp32 is used as stored.
#include "kernels/cpu/internal/avx2_gemm.h"

#include <immintrin.h>

#include <algorithm>
#include <array>
#include <utility>

#include "kernels/cpu/internal/gemm_blocking.h"
#include "kernels/cpu/internal/gemm_panels.h"

namespace layerproof::kernels::cpu {
namespace {

constexpr int64_t kNR = 16;  // panel width: two ymm
constexpr int64_t kMR = 6;   // register tile rows: 12 accumulators
// Skinny kernels handle up to this many rows (see SkinnyPanelsFor).
constexpr int kSkinnyMaxRows = 2;
// Software prefetch distance of the skinny kernels, in bytes of one panel.
constexpr int64_t kPrefetchBytes = 2048;

inline __m256 CanonicalizeNan8(__m256 v) {
  const __m256 nan = _mm256_cmp_ps(v, v, _CMP_UNORD_Q);
  return _mm256_blendv_ps(
      v, _mm256_castsi256_ps(_mm256_set1_epi32(kCanonicalNanBits)), nan);
}

// Finishes 8 outputs: + bias (once, after the tree), canonical NaN, store the
// first `count` lanes (count clamped to [0, 8]).
inline void Finish(__m256 v, const float* bias, float* y, int64_t count) {
  if (count >= 8) {
    if (bias != nullptr) v = _mm256_add_ps(v, _mm256_loadu_ps(bias));
    _mm256_storeu_ps(y, CanonicalizeNan8(v));
    return;
  }
  if (count <= 0) return;
  const __m256i mask =
      _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(count)),
                         _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  if (bias != nullptr) v = _mm256_add_ps(v, _mm256_maskload_ps(bias, mask));
  _mm256_maskstore_ps(y, mask, CanonicalizeNan8(v));
}

// Bytes of one packed row (one k) of a panel.
template <DType DT>
constexpr int64_t RowBytes() {
  return kNR * DTypeSize(DT);
}

// Upcasts one packed row: lo = columns [0, 8), hi = columns [8, 16).
template <DType DT>
inline void LoadRow(const unsigned char* row, __m256* lo, __m256* hi) {
  if constexpr (DT == DType::kBF16) {
    const __m256i d = _mm256_load_si256(reinterpret_cast<const __m256i*>(row));
    *lo = _mm256_castsi256_ps(_mm256_slli_epi32(d, 16));
    *hi = _mm256_castsi256_ps(
        _mm256_and_si256(d, _mm256_set1_epi32(static_cast<int>(0xFFFF0000u))));
  } else if constexpr (DT == DType::kF16) {
    *lo =
        _mm256_cvtph_ps(_mm_load_si128(reinterpret_cast<const __m128i*>(row)));
    *hi = _mm256_cvtph_ps(
        _mm_load_si128(reinterpret_cast<const __m128i*>(row + 16)));
  } else {
    *lo = _mm256_load_ps(reinterpret_cast<const float*>(row));
    *hi = _mm256_load_ps(reinterpret_cast<const float*>(row + 32));
  }
}

template <DType DT>
void UpcastRows(const unsigned char* rows, int64_t kc, float* dst) {
  for (int64_t k = 0; k < kc; ++k) {
    __m256 lo, hi;
    LoadRow<DT>(rows + k * RowBytes<DT>(), &lo, &hi);
    _mm256_store_ps(dst + k * kNR, lo);
    _mm256_store_ps(dst + k * kNR + 8, hi);
  }
}

// After the chunk's fma chains: the tree merges (left from the stack, right =
// the value in registers), then either push the result or finish the outputs.
// Vector v of a row holds columns 8 * v .. 8 * v + 7.
template <int MR, int V>
inline void CombineAndStore(__m256 (&acc)[MR][V], float* stack, int64_t slot,
                            int32_t sp, int32_t merges, bool last,
                            const float* bias, float* y, int64_t ldy,
                            int64_t cols) {
  for (int32_t j = 0; j < merges; ++j) {
    const float* left = stack + (sp - 1 - j) * slot;
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r) {
#pragma GCC unroll 8
      for (int v = 0; v < V; ++v) {
        acc[r][v] =
            _mm256_add_ps(_mm256_load_ps(left + (r * V + v) * 8), acc[r][v]);
      }
    }
  }
  if (!last) {
    float* dst = stack + (sp - merges) * slot;
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r) {
#pragma GCC unroll 8
      for (int v = 0; v < V; ++v) {
        _mm256_store_ps(dst + (r * V + v) * 8, acc[r][v]);
      }
    }
    return;
  }
#pragma GCC unroll 16
  for (int r = 0; r < MR; ++r) {
#pragma GCC unroll 8
    for (int v = 0; v < V; ++v) {
      Finish(acc[r][v], bias == nullptr ? nullptr : bias + 8 * v,
             y + r * ldy + 8 * v, cols - 8 * v);
    }
  }
}

// One MR x 16 register tile over one chunk (prefill).
template <int MR>
void Tile(const TileArgs& a) {
  __m256 acc[MR][2];
#pragma GCC unroll 16
  for (int r = 0; r < MR; ++r) {
    acc[r][0] = _mm256_setzero_ps();
    acc[r][1] = _mm256_setzero_ps();
  }
  const float* x = a.x;
  const float* w = a.w;
  for (int64_t k = 0; k < a.kc; ++k) {
    const __m256 w0 = _mm256_load_ps(w + k * kNR);
    const __m256 w1 = _mm256_load_ps(w + k * kNR + 8);
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r) {
      const __m256 b = _mm256_broadcast_ss(x + r * kXStride + k);
      acc[r][0] = _mm256_fmadd_ps(b, w0, acc[r][0]);
      acc[r][1] = _mm256_fmadd_ps(b, w1, acc[r][1]);
    }
  }
  CombineAndStore<MR, 2>(acc, a.stack, a.stack_stride, a.sp, a.merges, a.last,
                         a.bias, a.y, a.ldy, a.cols);
}

// MR rows x NP panels over all of k, streaming packed weights (decode).
template <DType DT, int MR, int NP>
void Skinny(const SkinnyArgs& a) {
  constexpr int64_t row_bytes = RowBytes<DT>();
  constexpr int V = 2 * NP;
  const ChunkTreeSchedule& s = *a.sched;
  for (int64_t c = 0; c < s.chunks(); ++c) {
    const int64_t k0 = c * kChunk;
    const int64_t k1 = std::min(a.k, k0 + kChunk);
    __m256 acc[MR][V];
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r) {
#pragma GCC unroll 8
      for (int v = 0; v < V; ++v) acc[r][v] = _mm256_setzero_ps();
    }
    const unsigned char* wk = a.panels + k0 * row_bytes;
    for (int64_t k = k0; k < k1; ++k, wk += row_bytes) {
      // A packed row is half a cache line (bf16, fp16) or one line (fp32):
      // prefetch each line once.
      if (row_bytes >= 64 || (k & 1) == 0) {
#pragma GCC unroll 8
        for (int p = 0; p < NP; ++p) {
          _mm_prefetch(reinterpret_cast<const char*>(wk + p * a.panel_bytes +
                                                     kPrefetchBytes),
                       _MM_HINT_T0);
        }
      }
      __m256 b[MR];
#pragma GCC unroll 16
      for (int r = 0; r < MR; ++r)
        b[r] = _mm256_broadcast_ss(a.x + r * a.ldx + k);
#pragma GCC unroll 8
      for (int p = 0; p < NP; ++p) {
        __m256 lo, hi;
        LoadRow<DT>(wk + p * a.panel_bytes, &lo, &hi);
#pragma GCC unroll 16
        for (int r = 0; r < MR; ++r) {
          acc[r][2 * p] = _mm256_fmadd_ps(b[r], lo, acc[r][2 * p]);
          acc[r][2 * p + 1] = _mm256_fmadd_ps(b[r], hi, acc[r][2 * p + 1]);
        }
      }
    }
    CombineAndStore<MR, V>(acc, a.stack, MR * V * 8, s.sp(c), s.merges(c),
                           c + 1 == s.chunks(), a.bias, a.y, a.ldy, a.cols);
  }
}

// Panels per skinny call for `rows` rows: 8 or 12 accumulators of 16 ymm.
constexpr int SkinnyPanelsFor(int rows) { return rows == 1 ? 4 : 3; }

// Skinny<DT, MR, np> for np in [1, NP].
template <DType DT, int MR, int NP = SkinnyPanelsFor(MR)>
void SkinnyByPanels(int np, const SkinnyArgs& a) {
  if constexpr (NP > 1) {
    if (np < NP) return SkinnyByPanels<DT, MR, NP - 1>(np, a);
  }
  Skinny<DT, MR, NP>(a);
}

template <DType DT>
void SkinnyRows(int rows, int np, const SkinnyArgs& a) {
  static_assert(kSkinnyMaxRows == 2);
  if (rows == 1) return SkinnyByPanels<DT, 1>(np, a);
  return SkinnyByPanels<DT, 2>(np, a);
}

using TileFn = void (*)(const TileArgs&);
template <size_t... I>
constexpr std::array<TileFn, sizeof...(I)> TileTable(
    std::index_sequence<I...>) {
  return {&Tile<static_cast<int>(I) + 1>...};
}
constexpr std::array<TileFn, kMR> kTiles =
    TileTable(std::make_index_sequence<kMR>());

struct Avx2Kernels {
  static constexpr int64_t kNR = ::layerproof::kernels::cpu::kNR;
  static constexpr int64_t kMR = ::layerproof::kernels::cpu::kMR;
  static constexpr int kSkinnyMaxRows =
      ::layerproof::kernels::cpu::kSkinnyMaxRows;
  static int64_t SkinnyPanels(int rows) { return SkinnyPanelsFor(rows); }
  static void Upcast(DType dt, const unsigned char* rows, int64_t kc,
                     float* dst) {
    if (dt == DType::kBF16) {
      UpcastRows<DType::kBF16>(rows, kc, dst);
    } else {
      UpcastRows<DType::kF16>(rows, kc, dst);
    }
  }
  static void Tile(int rows, const TileArgs& a) { kTiles[rows - 1](a); }
  static void Skinny(DType dt, int rows, int np, const SkinnyArgs& a) {
    switch (dt) {
      case DType::kBF16:
        return SkinnyRows<DType::kBF16>(rows, np, a);
      case DType::kF16:
        return SkinnyRows<DType::kF16>(rows, np, a);
      case DType::kF32:
        return SkinnyRows<DType::kF32>(rows, np, a);
    }
  }
};

}  // namespace

const int64_t kAvx2GemmNAlign = kNR;

std::unique_ptr<PackedWeights> Avx2Pack(const WeightView& w) {
  return std::make_unique<PanelPacked>(BackendKind::kAvx2, w, kNR);
}

void Avx2Gemm(const float* x, int64_t m, const PackedWeights& w,
              const float* bias, float* y, int64_t n_begin, int64_t n_end) {
  GemmPanelColumns<Avx2Kernels>(x, m, w, bias, y, n_begin, n_end);
}

}  // namespace layerproof::kernels::cpu
