// The AVX-512 fused-upcast GEMM/GEMV (docs/determinism.md §3.1, chunk-tree
// order). Panels of 32 columns (two zmm of outputs per row); see
// gemm_panels.h for the packed layout and gemm_blocking.h for the loop nest.
//
// Every zmm lane is one output column: per k the kernels broadcast x[m][k]
// and fma it with that k's 16 upcast weights, so each output's chunk partial
// is one fma chain over ascending k from +0, exactly as kernels/ref. bf16 is
// upcast with one shift and one AND per 32 weights, fp16 with vcvtph2ps (exact,
// subnormals included), fp32 is used as stored.
#include "kernels/cpu/internal/avx512_gemm.h"

// GCC 12's AVX-512 intrinsics trip -Wmaybe-uninitialized on their own
// _mm512_undefined_* (GCC PR 105593, fixed in 12.3).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop

#include <algorithm>
#include <array>
#include <utility>

#include "kernels/cpu/internal/gemm_blocking.h"
#include "kernels/cpu/internal/gemm_panels.h"

namespace layerproof::kernels::cpu {
namespace {

constexpr int64_t kNR = 32;  // panel width: two zmm
constexpr int64_t kMR = 14;  // register tile rows: 28 accumulators
// Skinny kernels handle up to this many rows, kSkinnyPanels panels at a time
// (8 .. 24 independent fma chains).
constexpr int kSkinnyMaxRows = 3;
constexpr int kSkinnyPanels = 4;
// Software prefetch distance of the skinny kernels, in bytes of one panel.
constexpr int64_t kPrefetchBytes = 2048;

inline __m512 CanonicalizeNan16(__m512 v) {
  const __mmask16 nan = _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
  return _mm512_mask_mov_ps(
      v, nan, _mm512_castsi512_ps(_mm512_set1_epi32(kCanonicalNanBits)));
}

// The mask of the first `count` lanes, count clamped to [0, 16].
inline __mmask16 FirstLanes(int64_t count) {
  if (count >= 16) return 0xFFFF;
  if (count <= 0) return 0;
  return static_cast<__mmask16>((1u << count) - 1);
}

// Finishes 16 outputs: + bias (once, after the tree), canonical NaN, store
// the lanes in `mask`.
inline void Finish(__m512 v, const float* bias, float* y, __mmask16 mask) {
  if (bias != nullptr) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(mask, bias));
  _mm512_mask_storeu_ps(y, mask, CanonicalizeNan16(v));
}

// Bytes of one packed row (one k) of a panel.
template <DType DT>
constexpr int64_t RowBytes() {
  return kNR * DTypeSize(DT);
}

// Upcasts one packed row: lo = columns [0, 16), hi = columns [16, 32).
template <DType DT>
inline void LoadRow(const unsigned char* row, __m512* lo, __m512* hi) {
  if constexpr (DT == DType::kBF16) {
    const __m512i d = _mm512_load_si512(row);
    *lo = _mm512_castsi512_ps(_mm512_slli_epi32(d, 16));
    *hi = _mm512_castsi512_ps(
        _mm512_and_si512(d, _mm512_set1_epi32(static_cast<int>(0xFFFF0000u))));
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

template <DType DT>
void UpcastRows(const unsigned char* rows, int64_t kc, float* dst) {
  for (int64_t k = 0; k < kc; ++k) {
    __m512 lo, hi;
    LoadRow<DT>(rows + k * RowBytes<DT>(), &lo, &hi);
    _mm512_store_ps(dst + k * kNR, lo);
    _mm512_store_ps(dst + k * kNR + 16, hi);
  }
}

// After the chunk's fma chains: the tree merges (left from the stack, right =
// the value in registers), then either push the result or finish the outputs.
template <int MR, int V>
inline void CombineAndStore(__m512 (&acc)[MR][V], float* stack, int64_t slot,
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
            _mm512_add_ps(_mm512_load_ps(left + (r * V + v) * 16), acc[r][v]);
      }
    }
  }
  if (!last) {
    float* dst = stack + (sp - merges) * slot;
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r) {
#pragma GCC unroll 8
      for (int v = 0; v < V; ++v) {
        _mm512_store_ps(dst + (r * V + v) * 16, acc[r][v]);
      }
    }
    return;
  }
  // Vector v of a row holds columns 16 * v .. 16 * v + 15, except that the
  // two vectors of a panel are its low and high halves, which is the same.
#pragma GCC unroll 16
  for (int r = 0; r < MR; ++r) {
#pragma GCC unroll 8
    for (int v = 0; v < V; ++v) {
      Finish(acc[r][v], bias == nullptr ? nullptr : bias + 16 * v,
             y + r * ldy + 16 * v, FirstLanes(cols - 16 * v));
    }
  }
}

// One MR x 32 register tile over one chunk (prefill).
template <int MR>
void Tile(const TileArgs& a) {
  __m512 acc[MR][2];
#pragma GCC unroll 16
  for (int r = 0; r < MR; ++r) {
    acc[r][0] = _mm512_setzero_ps();
    acc[r][1] = _mm512_setzero_ps();
  }
  const float* x = a.x;
  const float* w = a.w;
  for (int64_t k = 0; k < a.kc; ++k) {
    const __m512 w0 = _mm512_load_ps(w + k * kNR);
    const __m512 w1 = _mm512_load_ps(w + k * kNR + 16);
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r) {
      const __m512 b = _mm512_set1_ps(x[r * kXStride + k]);
      acc[r][0] = _mm512_fmadd_ps(b, w0, acc[r][0]);
      acc[r][1] = _mm512_fmadd_ps(b, w1, acc[r][1]);
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
    __m512 acc[MR][V];
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r) {
#pragma GCC unroll 8
      for (int v = 0; v < V; ++v) acc[r][v] = _mm512_setzero_ps();
    }
    const unsigned char* wk = a.panels + k0 * row_bytes;
    for (int64_t k = k0; k < k1; ++k, wk += row_bytes) {
#pragma GCC unroll 8
      for (int p = 0; p < NP; ++p) {
        for (int64_t off = 0; off < row_bytes; off += 64) {
          _mm_prefetch(reinterpret_cast<const char*>(wk + p * a.panel_bytes +
                                                     kPrefetchBytes + off),
                       _MM_HINT_T0);
        }
      }
      __m512 b[MR];
#pragma GCC unroll 16
      for (int r = 0; r < MR; ++r) b[r] = _mm512_set1_ps(a.x[r * a.ldx + k]);
#pragma GCC unroll 8
      for (int p = 0; p < NP; ++p) {
        __m512 lo, hi;
        LoadRow<DT>(wk + p * a.panel_bytes, &lo, &hi);
#pragma GCC unroll 16
        for (int r = 0; r < MR; ++r) {
          acc[r][2 * p] = _mm512_fmadd_ps(b[r], lo, acc[r][2 * p]);
          acc[r][2 * p + 1] = _mm512_fmadd_ps(b[r], hi, acc[r][2 * p + 1]);
        }
      }
    }
    CombineAndStore<MR, V>(acc, a.stack, MR * V * 16, s.sp(c), s.merges(c),
                           c + 1 == s.chunks(), a.bias, a.y, a.ldy, a.cols);
  }
}

// Skinny<DT, MR, np> for np in [1, NP].
template <DType DT, int MR, int NP = kSkinnyPanels>
void SkinnyByPanels(int np, const SkinnyArgs& a) {
  if constexpr (NP > 1) {
    if (np < NP) return SkinnyByPanels<DT, MR, NP - 1>(np, a);
  }
  Skinny<DT, MR, NP>(a);
}

template <DType DT>
void SkinnyRows(int rows, int np, const SkinnyArgs& a) {
  static_assert(kSkinnyMaxRows == 3);
  switch (rows) {
    case 1:
      return SkinnyByPanels<DT, 1>(np, a);
    case 2:
      return SkinnyByPanels<DT, 2>(np, a);
    default:
      return SkinnyByPanels<DT, 3>(np, a);
  }
}

using TileFn = void (*)(const TileArgs&);
template <size_t... I>
constexpr std::array<TileFn, sizeof...(I)> TileTable(
    std::index_sequence<I...>) {
  return {&Tile<static_cast<int>(I) + 1>...};
}
constexpr std::array<TileFn, kMR> kTiles =
    TileTable(std::make_index_sequence<kMR>());

struct Avx512Kernels {
  static constexpr int64_t kNR = ::layerproof::kernels::cpu::kNR;
  static constexpr int64_t kMR = ::layerproof::kernels::cpu::kMR;
  static constexpr int kSkinnyMaxRows =
      ::layerproof::kernels::cpu::kSkinnyMaxRows;
  static int64_t SkinnyPanels(int /*rows*/) { return kSkinnyPanels; }
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

const int64_t kAvx512GemmNAlign = kNR;

std::unique_ptr<PackedWeights> Avx512Pack(const WeightView& w) {
  return std::make_unique<PanelPacked>(BackendKind::kAvx512, w, kNR);
}

void Avx512Gemm(const float* x, int64_t m, const PackedWeights& w,
                const float* bias, float* y, int64_t n_begin, int64_t n_end) {
  GemmPanelColumns<Avx512Kernels>(x, m, w, bias, y, n_begin, n_end);
}

}  // namespace layerproof::kernels::cpu
