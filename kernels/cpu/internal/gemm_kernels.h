// The micro-kernels of the x86 fused-upcast GEMM/GEMV (docs/determinism.md
// §3.1, chunk-tree order), written once against a GEMM vocabulary
// (Avx512GemmIsa in avx512_gemm_isa.h, Avx2GemmIsa in avx2_gemm_isa.h) and
// instantiated by avx512_gemm.cc and avx2_gemm.cc. PanelKernels<G> is the
// Kernels type of the loop nest in gemm_blocking.h; gemm_panels.h has the
// packed layout.
//
// Reduction order: every lane of a G::V is one output column. Per k the
// kernels broadcast x[m][k] and fma it with that k's kW upcast weights, so
// each output's chunk partial is one fma chain over ascending k from +0,
// exactly as kernels/ref; the partials meet in the halving tree (left from
// the stack, right in registers), the bias is added once after the tree and
// NaN is canonicalised last. So results are bit-identical to kernels/ref.
//
// The vocabulary G supplies:
//   using V; kW (lanes); kNR (= 2 kW, panel width); kMR; kSkinnyMaxRows;
//   constexpr int SkinnyPanels(int rows); kPrefetchBytes;
//   Zero, Broadcast(const float*), Load / Store (aligned), Add, Fma,
//   Prefetch(const unsigned char*), LoadRow<DType>(row, V* lo, V* hi),
//   Finish(V, const float* bias, float* y, int64_t count).
//
// Templated on G and in an unnamed namespace, for the reason given in
// gemm_panels.h. Thread safety: reentrant; scratch is the caller's.
#ifndef LAYERPROOF_KERNELS_CPU_INTERNAL_GEMM_KERNELS_H_
#define LAYERPROOF_KERNELS_CPU_INTERNAL_GEMM_KERNELS_H_

#include <algorithm>
#include <array>
#include <cstdint>
#include <utility>

#include "kernels/backend.h"
#include "kernels/cpu/internal/gemm_blocking.h"
#include "kernels/cpu/internal/gemm_panels.h"

namespace layerproof::kernels::cpu {
namespace {  // NOLINT(build/namespaces): see gemm_panels.h.

// Bytes of one packed row (one k) of a panel.
template <class G, DType DT>
constexpr int64_t PanelRowBytes() {
  return G::kNR * DTypeSize(DT);
}

template <class G, DType DT>
void UpcastPanelRows(const unsigned char* rows, int64_t kc, float* dst) {
  for (int64_t k = 0; k < kc; ++k) {
    typename G::V lo, hi;
    G::template LoadRow<DT>(rows + k * PanelRowBytes<G, DT>(), &lo, &hi);
    G::Store(dst + k * G::kNR, lo);
    G::Store(dst + k * G::kNR + G::kW, hi);
  }
}

// After the chunk's fma chains: the tree merges (left from the stack, right =
// the value in registers), then either push the result or finish the outputs.
// Vector v of a row holds columns kW * v .. kW * v + kW - 1 (the two vectors
// of a panel are its low and high halves, which is the same).
template <class G, int MR, int NV>
inline void CombineAndStore(typename G::V (&acc)[MR][NV], float* stack,
                            int64_t slot, int32_t sp, int32_t merges, bool last,
                            const float* bias, float* y, int64_t ldy,
                            int64_t cols) {
  constexpr int kW = G::kW;
  for (int32_t j = 0; j < merges; ++j) {
    const float* left = stack + (sp - 1 - j) * slot;
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r) {
#pragma GCC unroll 8
      for (int v = 0; v < NV; ++v) {
        acc[r][v] = G::Add(G::Load(left + (r * NV + v) * kW), acc[r][v]);
      }
    }
  }
  if (!last) {
    float* dst = stack + (sp - merges) * slot;
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r) {
#pragma GCC unroll 8
      for (int v = 0; v < NV; ++v) {
        G::Store(dst + (r * NV + v) * kW, acc[r][v]);
      }
    }
    return;
  }
#pragma GCC unroll 16
  for (int r = 0; r < MR; ++r) {
#pragma GCC unroll 8
    for (int v = 0; v < NV; ++v) {
      G::Finish(acc[r][v], bias == nullptr ? nullptr : bias + kW * v,
                y + r * ldy + kW * v, cols - kW * v);
    }
  }
}

// One MR x kNR register tile over one chunk (prefill).
template <class G, int MR>
void PanelTile(const TileArgs& a) {
  typename G::V acc[MR][2];
#pragma GCC unroll 16
  for (int r = 0; r < MR; ++r) {
    acc[r][0] = G::Zero();
    acc[r][1] = G::Zero();
  }
  const float* x = a.x;
  const float* w = a.w;
  for (int64_t k = 0; k < a.kc; ++k) {
    const typename G::V w0 = G::Load(w + k * G::kNR);
    const typename G::V w1 = G::Load(w + k * G::kNR + G::kW);
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r) {
      const typename G::V b = G::Broadcast(x + r * kXStride + k);
      acc[r][0] = G::Fma(b, w0, acc[r][0]);
      acc[r][1] = G::Fma(b, w1, acc[r][1]);
    }
  }
  CombineAndStore<G, MR, 2>(acc, a.stack, a.stack_stride, a.sp, a.merges,
                            a.last, a.bias, a.y, a.ldy, a.cols);
}

// MR rows x NP panels over all of k, streaming packed weights (decode).
template <class G, DType DT, int MR, int NP>
void PanelSkinny(const SkinnyArgs& a) {
  constexpr int64_t row_bytes = PanelRowBytes<G, DT>();
  constexpr int NV = 2 * NP;
  const ChunkTreeSchedule& s = *a.sched;
  for (int64_t c = 0; c < s.chunks(); ++c) {
    const int64_t k0 = c * kChunk;
    const int64_t k1 = std::min(a.k, k0 + kChunk);
    typename G::V acc[MR][NV];
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r) {
#pragma GCC unroll 8
      for (int v = 0; v < NV; ++v) acc[r][v] = G::Zero();
    }
    const unsigned char* wk = a.panels + k0 * row_bytes;
    for (int64_t k = k0; k < k1; ++k, wk += row_bytes) {
      // Prefetch each cache line once: a packed row of half a line (AVX2
      // bf16, fp16) every other k, otherwise every line of the row.
      static_assert(row_bytes == 32 || row_bytes % 64 == 0);
      if (row_bytes >= 64 || (k & 1) == 0) {
#pragma GCC unroll 8
        for (int p = 0; p < NP; ++p) {
          for (int64_t off = 0; off < row_bytes; off += 64) {
            G::Prefetch(wk + p * a.panel_bytes + G::kPrefetchBytes + off);
          }
        }
      }
      typename G::V b[MR];
#pragma GCC unroll 16
      for (int r = 0; r < MR; ++r) b[r] = G::Broadcast(a.x + r * a.ldx + k);
#pragma GCC unroll 8
      for (int p = 0; p < NP; ++p) {
        typename G::V lo, hi;
        G::template LoadRow<DT>(wk + p * a.panel_bytes, &lo, &hi);
#pragma GCC unroll 16
        for (int r = 0; r < MR; ++r) {
          acc[r][2 * p] = G::Fma(b[r], lo, acc[r][2 * p]);
          acc[r][2 * p + 1] = G::Fma(b[r], hi, acc[r][2 * p + 1]);
        }
      }
    }
    CombineAndStore<G, MR, NV>(acc, a.stack, MR * NV * G::kW, s.sp(c),
                               s.merges(c), c + 1 == s.chunks(), a.bias, a.y,
                               a.ldy, a.cols);
  }
}

// PanelSkinny<G, DT, MR, np> for np in [1, NP].
template <class G, DType DT, int MR, int NP = G::SkinnyPanels(MR)>
void SkinnyByPanels(int np, const SkinnyArgs& a) {
  if constexpr (NP > 1) {
    if (np < NP) return SkinnyByPanels<G, DT, MR, NP - 1>(np, a);
  }
  PanelSkinny<G, DT, MR, NP>(a);
}

// SkinnyByPanels<G, DT, rows> for rows in [MR, G::kSkinnyMaxRows].
template <class G, DType DT, int MR = 1>
void SkinnyRows(int rows, int np, const SkinnyArgs& a) {
  if constexpr (MR < G::kSkinnyMaxRows) {
    if (rows == MR) return SkinnyByPanels<G, DT, MR>(np, a);
    return SkinnyRows<G, DT, MR + 1>(rows, np, a);
  } else {
    return SkinnyByPanels<G, DT, MR>(np, a);
  }
}

using TileFn = void (*)(const TileArgs&);
template <class G, size_t... I>
constexpr std::array<TileFn, sizeof...(I)> TileTable(
    std::index_sequence<I...>) {
  return {&PanelTile<G, static_cast<int>(I) + 1>...};
}

// The Kernels type of gemm_blocking.h for vocabulary G.
template <class G>
struct PanelKernels {
  static constexpr int64_t kNR = G::kNR;
  static constexpr int64_t kMR = G::kMR;
  static constexpr int kSkinnyMaxRows = G::kSkinnyMaxRows;
  static int64_t SkinnyPanels(int rows) { return G::SkinnyPanels(rows); }
  static void Upcast(DType dt, const unsigned char* rows, int64_t kc,
                     float* dst) {
    if (dt == DType::kBF16) {
      UpcastPanelRows<G, DType::kBF16>(rows, kc, dst);
    } else {
      UpcastPanelRows<G, DType::kF16>(rows, kc, dst);
    }
  }
  static void Tile(int rows, const TileArgs& a) { kTiles[rows - 1](a); }
  static void Skinny(DType dt, int rows, int np, const SkinnyArgs& a) {
    switch (dt) {
      case DType::kBF16:
        return SkinnyRows<G, DType::kBF16>(rows, np, a);
      case DType::kF16:
        return SkinnyRows<G, DType::kF16>(rows, np, a);
      case DType::kF32:
        return SkinnyRows<G, DType::kF32>(rows, np, a);
      default:  // block formats take the quantized GEMM (quant_kernels.h)
        return;
    }
  }

 private:
  static constexpr std::array<TileFn, kMR> kTiles =
      TileTable<G>(std::make_index_sequence<kMR>());
};

}  // namespace
}  // namespace layerproof::kernels::cpu

#endif  // LAYERPROOF_KERNELS_CPU_INTERNAL_GEMM_KERNELS_H_
