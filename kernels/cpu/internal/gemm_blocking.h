// The cache-blocked loop nest of the x86 fast GEMMs, shared by AVX2 and
// AVX-512 (docs/determinism.md §3.1, chunk-tree order).
//
// GemmPanelColumns<Kernels> computes columns [n_begin, n_end) of
// y[m][n] = ChunkTree_k(x[m][k] * W[n][k]) (+ bias[n]) from PanelPacked
// weights (gemm_panels.h). Every output's chunk partial is one fma chain over
// ascending k from +0, because the kernels vectorise over n (each SIMD lane is
// one output) and broadcast x[m][k]; the chunk partials meet in the halving
// tree through the stack of ChunkTreeSchedule; the bias is added once after
// the tree and NaN is canonicalised last. So the result is bit-identical to
// kernels/ref for every input, whatever the blocking.
//
// Two paths:
//  * skinny (m <= kSkinnyBatchRows, decode): the kernels stream whole
//    panels of packed weights once, upcasting in registers, several panels at
//    a time for enough independent fma chains, the rows in groups of
//    Kernels::kSkinnyMaxRows over each group of panels; memory-bound.
//  * blocked (prefill): Goto-style with KC = kChunk. For each block of rows
//    and each chunk, the x block is copied into a buffer with padded rows (a
//    row stride of a multiple of 4 KiB would put every row of a register tile
//    in one L1 set), each panel's chunk is upcast to fp32 once (kChunk x NR, to
//    stay in L1) and reused by every register tile of the block, and each tile
//    leaves its chunk partial on its stack (or, for the last chunk, finishes
//    its outputs). A slot of all tiles of a panel is contiguous, so the stack
//    traffic is sequential. The x rows and the panel chunk needed next are
//    prefetched into L2 a slice per tile.
//
// The Kernels type supplies the ISA micro-kernels:
//   static constexpr int64_t kNR;      // panel width
//   static constexpr int64_t kMR;      // rows of a register tile
//   static constexpr int kSkinnyMaxRows;
//   static int64_t SkinnyPanels(int rows);  // panels per skinny call
//   static void Upcast(DType, const unsigned char* rows, int64_t kc, float*);
//   static void Tile(int rows, const TileArgs&);
//   static void Skinny(DType, int rows, int panels, const SkinnyArgs&);
//
// Unnamed namespace for the reason given in gemm_panels.h. Thread safety:
// reentrant; the scratch buffers are thread_local.
#ifndef LAYERPROOF_KERNELS_CPU_INTERNAL_GEMM_BLOCKING_H_
#define LAYERPROOF_KERNELS_CPU_INTERNAL_GEMM_BLOCKING_H_

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "kernels/backend.h"
#include "kernels/cpu/internal/gemm_panels.h"
#include "kernels/ref/reduction.h"

namespace layerproof::kernels::cpu {
namespace {  // NOLINT(build/namespaces): see gemm_panels.h.

using ref::kChunk;

// Row stride (floats) of the copied x block: one chunk plus a cache line, so
// consecutive rows fall in different L1 sets.
inline constexpr int64_t kXStride = kChunk + 16;
// Register tiles per row block and panels per group of the blocked path:
// they bound the x block (L2) and the partial stacks (a few MiB at most).
inline constexpr int64_t kTilesPerBlock = 16;
inline constexpr int64_t kPanelsPerGroup = 16;
// Up to this many rows (decode batches) take the skinny path, which reads
// the packed weights once from memory; beyond, the blocked path's reuse of
// each upcast chunk across row tiles wins.
inline constexpr int64_t kSkinnyBatchRows = 8;

// One register tile: rows x NR outputs over one chunk.
struct TileArgs {
  const float* x;        // the tile's first row in the x block, at the chunk
  int64_t kc;            // terms in this chunk, in [1, kChunk]
  const float* w;        // the panel's chunk, fp32 [kc][NR], 64-byte aligned
  float* stack;          // slot 0 of the tile's stack (kMR * NR floats a slot)
  int64_t stack_stride;  // floats from one slot of the tile to the next
  int32_t sp;            // slot the chunk partial is pushed to
  int32_t merges;        // tree merges after the push
  bool last;             // the last chunk: finish and store the outputs
  const float* bias;     // bias of the panel's first column, or null
  float* y;              // output of the tile's first row and column
  int64_t ldy;           // row stride of y
  int64_t cols;          // columns to store, in [1, NR]
};

// rows x (panels * NR) outputs over all of k.
struct SkinnyArgs {
  const float* x;  // row 0 of x
  int64_t ldx;     // row stride of x (= k)
  int64_t k;
  const unsigned char* panels;  // the first panel
  int64_t panel_bytes;          // distance between panels
  const ChunkTreeSchedule* sched;
  float* stack;       // sched->depth() * rows * panels * NR floats
  const float* bias;  // bias of the first column, or null
  float* y;           // output of row 0 and the first column
  int64_t ldy;
  int64_t cols;  // columns to store, in [1, panels * NR]
};

// Lines of a strided 2-D region of memory, prefetched into L2 a slice at a
// time so the prefetches spread over the work done before the region is read.
struct PrefetchRegion {
  const char* base = nullptr;
  int64_t rows = 0;
  int64_t row_stride = 0;  // bytes
  int64_t row_lines = 0;   // 64-byte lines per row

  // Prefetches slice i of `slices` equal slices.
  void Slice(int64_t i, int64_t slices) const {
    const int64_t total = rows * row_lines;
    const int64_t per = CeilDivI(total, slices);
    const int64_t end = std::min(total, (i + 1) * per);
    for (int64_t j = i * per; j < end; ++j) {
      __builtin_prefetch(
          base + (j / row_lines) * row_stride + (j % row_lines) * 64, 0, 2);
    }
  }
};

// Panels [p_begin, p_end) for m <= kSkinnyBatchRows rows: per group of
// panels, the rows in groups of at most Kernels::kSkinnyMaxRows. The first
// row group streams the panels from memory; the later ones find them in L2
// (a group of panels is at most a few hundred KiB for k <= 8192 bf16). Each
// output is one skinny-kernel chain whatever its row group.
template <class Kernels>
void SkinnyColumns(const float* x, int64_t m, const PanelPacked& w,
                   const ChunkTreeSchedule& sched, const float* bias, float* y,
                   int64_t n_end, int64_t p_begin, int64_t p_end) {
  constexpr int64_t nr = Kernels::kNR;
  constexpr int64_t max_rows = Kernels::kSkinnyMaxRows;
  const int64_t k = w.k();
  const int64_t n = w.n();
  thread_local AlignedBuffer<float> stack;
  const int group_rows = static_cast<int>(std::min(m, max_rows));
  // Fewer panels per call for more rows (register pressure): a row group of
  // fewer rows may take as many as the largest group allows.
  const int64_t np_max = Kernels::SkinnyPanels(group_rows);
  stack.Reserve(static_cast<size_t>(sched.depth() * group_rows * np_max * nr));
  for (int64_t p = p_begin; p < p_end; p += np_max) {
    const int64_t np = std::min(np_max, p_end - p);
    for (int64_t r0 = 0; r0 < m; r0 += max_rows) {
      SkinnyArgs a;
      a.x = x + r0 * k;
      a.ldx = k;
      a.k = k;
      a.panels = w.panel(p);
      a.panel_bytes = w.panel_bytes();
      a.sched = &sched;
      a.stack = stack.data();
      a.bias = bias == nullptr ? nullptr : bias + p * nr;
      a.y = y + r0 * n + p * nr;
      a.ldy = n;
      a.cols = std::min(n_end, (p + np) * nr) - p * nr;
      Kernels::Skinny(w.dtype(), static_cast<int>(std::min(max_rows, m - r0)),
                      static_cast<int>(np), a);
    }
  }
}

// Panels [p_begin, p_end), at most kPanelsPerGroup of them, for any m.
template <class Kernels>
void BlockedColumns(const float* x, int64_t m, const PanelPacked& w,
                    const ChunkTreeSchedule& sched, const float* bias, float* y,
                    int64_t n_end, int64_t p_begin, int64_t p_end) {
  constexpr int64_t nr = Kernels::kNR;
  constexpr int64_t mr = Kernels::kMR;
  const int64_t k = w.k();
  const int64_t n = w.n();
  const int64_t chunks = sched.chunks();
  const int64_t depth = sched.depth();
  thread_local AlignedBuffer<float> stack;
  thread_local AlignedBuffer<float> wc;
  thread_local AlignedBuffer<float> xb;
  const int64_t np = p_end - p_begin;
  const int64_t row_block = mr * kTilesPerBlock;
  const int64_t es = DTypeSize(w.dtype());
  // Stack layout [panel][slot][tile][kMR * NR]; one chunk needs no stack.
  const int64_t slot_stride = kTilesPerBlock * mr * nr;
  const int64_t panel_stack = chunks > 1 ? depth * slot_stride : 0;
  wc.Reserve(static_cast<size_t>(kChunk * nr));
  xb.Reserve(static_cast<size_t>(row_block * kXStride));
  stack.Reserve(static_cast<size_t>(std::max<int64_t>(1, np * panel_stack)));
  // The x rows and the panel chunk read after step (m0, c, p).
  const auto x_region = [&](int64_t m0, int64_t c) {
    PrefetchRegion r;
    if (m0 >= m) return r;
    r.base = reinterpret_cast<const char*>(x + m0 * k + c * kChunk);
    r.rows = std::min(row_block, m - m0);
    r.row_stride = k * static_cast<int64_t>(sizeof(float));
    r.row_lines = CeilDivI(std::min(kChunk, k - c * kChunk) * 4, 64);
    return r;
  };
  const auto w_region = [&](int64_t p, int64_t c) {
    PrefetchRegion r;
    r.base = reinterpret_cast<const char*>(w.panel(p) + c * kChunk * nr * es);
    r.rows = 1;
    r.row_lines = CeilDivI(std::min(kChunk, k - c * kChunk) * nr * es, 64);
    return r;
  };
  for (int64_t m0 = 0; m0 < m; m0 += row_block) {
    const int64_t block_rows = std::min(row_block, m - m0);
    const int64_t tiles = CeilDivI(block_rows, mr);
    for (int64_t c = 0; c < chunks; ++c) {
      const int64_t k0 = c * kChunk;
      const int64_t kc = std::min(kChunk, k - k0);
      for (int64_t r = 0; r < block_rows; ++r) {
        std::memcpy(xb.data() + r * kXStride, x + (m0 + r) * k + k0,
                    static_cast<size_t>(kc) * sizeof(float));
      }
      const PrefetchRegion next_x =
          c + 1 < chunks ? x_region(m0, c + 1) : x_region(m0 + row_block, 0);
      for (int64_t p = p_begin; p < p_end; ++p) {
        const unsigned char* chunk_rows = w.panel(p) + k0 * nr * es;
        const float* wf;
        if (w.dtype() == DType::kF32) {
          wf = reinterpret_cast<const float*>(chunk_rows);
        } else {
          Kernels::Upcast(w.dtype(), chunk_rows, kc, wc.data());
          wf = wc.data();
        }
        PrefetchRegion next_w;
        if (p + 1 < p_end) {
          next_w = w_region(p + 1, c);
        } else if (c + 1 < chunks) {
          next_w = w_region(p_begin, c + 1);
        } else if (m0 + row_block < m) {
          next_w = w_region(p_begin, 0);
        }
        TileArgs a;
        a.kc = kc;
        a.w = wf;
        a.stack_stride = slot_stride;
        a.sp = sched.sp(c);
        a.merges = sched.merges(c);
        a.last = c + 1 == chunks;
        a.bias = bias == nullptr ? nullptr : bias + p * nr;
        a.ldy = n;
        a.cols = std::min(n_end, (p + 1) * nr) - p * nr;
        for (int64_t t = 0; t < tiles; ++t) {
          next_w.Slice(t, tiles);
          next_x.Slice((p - p_begin) * tiles + t, np * tiles);
          a.x = xb.data() + t * mr * kXStride;
          a.stack = stack.data() + (p - p_begin) * panel_stack + t * mr * nr;
          a.y = y + (m0 + t * mr) * n + p * nr;
          Kernels::Tile(static_cast<int>(std::min(mr, block_rows - t * mr)), a);
        }
      }
    }
  }
}

template <class Kernels>
void GemmPanelColumns(const float* x, int64_t m, const PackedWeights& packed,
                      const float* bias, float* y, int64_t n_begin,
                      int64_t n_end) {
  const auto& w = static_cast<const PanelPacked&>(packed);
  const int64_t p_begin = n_begin / Kernels::kNR;
  const int64_t p_end = CeilDivI(n_end, Kernels::kNR);
  const ChunkTreeSchedule sched(CeilDivI(w.k(), kChunk));
  if (m <= kSkinnyBatchRows) {
    SkinnyColumns<Kernels>(x, m, w, sched, bias, y, n_end, p_begin, p_end);
    return;
  }
  for (int64_t p = p_begin; p < p_end; p += kPanelsPerGroup) {
    BlockedColumns<Kernels>(x, m, w, sched, bias, y, n_end, p,
                            std::min(p_end, p + kPanelsPerGroup));
  }
}

}  // namespace
}  // namespace layerproof::kernels::cpu

#endif  // LAYERPROOF_KERNELS_CPU_INTERNAL_GEMM_BLOCKING_H_
