// §3.1 of docs/determinism.md on the GPU: y[m][n] = ChunkTree_k(x[m][k] *
// W[n][k]) (+ bias[n]), weights in the packed layout of gemm_layout.h and
// widened to fp32 in registers (the fused upcast).
//
// The order, for every output: k is cut into chunks of 256; each chunk is one
// __fmaf_rn chain from +0 in ascending k (x * w, the exact product, so operand
// order is immaterial); the chunk partials meet in the halving tree
// T(n) = T(ceil(n/2)) + T(floor(n/2)); then + bias once; NaN canonicalised.
// Padding (columns >= n, k >= K) is never multiplied: even fma(0, 0, -0)
// would turn a -0 partial into +0.
//
// Two kernels, one order:
//  * Split-K GEMV (decode, m <= 8; also any m past the tiled kernel's chunk
//    limit). One warp per (32-column group, chunk): lane j owns column
//    g*32+j and walks the chunk in 16-byte vectors, so the warp streams 512
//    contiguous bytes per step; eight vectors are in flight per thread. The
//    warp's x chunk (MR rows) sits in shared memory and is read by
//    broadcast. With one chunk the warp finishes the output; otherwise the
//    chunk partials go to scratch [m][chunks][n_groups*32] and a second
//    kernel combines each output's partials with the halving tree.
//  * Register-tiled GEMM (prefill). 64 x 64 output tile per block, 4 x 4
//    outputs per thread, 32-deep k slabs staged in shared memory. A thread's
//    16 accumulators each run the sequential chain within a chunk; at the
//    end of every chunk they are pushed on a per-thread stack and folded by
//    the halving tree's post-order merges (TreeMergesAfterLeaf), so the tree
//    streams with at most log2(chunks) + 1 live partials per output.
//
// Block-quantized weights (§3.12) go to quant_gemm.cu, whatever the path.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "kernels/cuda/internal/cuda_status.h"
#include "kernels/cuda/internal/dtype.cuh"
#include "kernels/cuda/internal/grid.h"
#include "kernels/cuda/internal/quant_gemm.h"
#include "kernels/cuda/internal/reduction.cuh"
#include "kernels/cuda/launch.h"
#include "kernels/ref/reduction.h"

namespace layerproof::kernels::cuda {

static_assert(kChunk == ref::kChunk, "chunk length is a spec constant");

namespace {

// ------------------------------------------------------------ split-K ----

constexpr int kGemvWarps = 4;
// Vectors loaded ahead of their fma steps, per thread.
constexpr int kGemvLoadsInFlight = 8;
// Rows per pass of the split-K kernel.
constexpr int kGemvMaxRows = 8;

template <DType T, int MR>
__device__ __forceinline__ void GemvVectorStep(const float (*xs)[kChunk],
                                               int base, uint4 q, int count,
                                               float* acc) {
  constexpr int V = kVecElems<T>;
  float wv[V];
  WidenVec<T>(q, wv);
#pragma unroll
  for (int e = 0; e < V; ++e) {
    if (e < count) {
#pragma unroll
      for (int r = 0; r < MR; ++r) {
        acc[r] = __fmaf_rn(xs[r][base + e], wv[e], acc[r]);
      }
    }
  }
}

template <DType T, int MR>
__global__ void __launch_bounds__(kGemvWarps * 32)
    GemvSplitKKernel(const float* __restrict__ x, int64_t m, int64_t k,
                     const uint4* __restrict__ w, int64_t n, int64_t n_groups,
                     int64_t k_vecs, int64_t chunks,
                     const float* __restrict__ bias, float* __restrict__ y,
                     float* __restrict__ partial) {
  constexpr int V = kVecElems<T>;
  __shared__ __align__(16) float xs_all[kGemvWarps][MR][kChunk];
  const int warp = threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  const int64_t task = int64_t{blockIdx.x} * kGemvWarps + warp;
  if (task >= n_groups * chunks) return;  // whole warps only
  const int64_t g = task % n_groups;
  const int64_t c = task / n_groups;
  const int64_t k0 = c * kChunk;
  const int len = static_cast<int>(min(int64_t{kChunk}, k - k0));
  const int full = len / V;
  const int tail = len - full * V;
  const int64_t j = g * 32 + lane;
  const int64_t n_pad = n_groups * 32;
  const uint4* wp = w + (g * k_vecs + k0 / V) * 32 + lane;
  float(*xs)[kChunk] = xs_all[warp];

  for (int64_t r0 = int64_t{blockIdx.y} * MR; r0 < m;
       r0 += int64_t{gridDim.y} * MR) {
    __syncwarp();  // the previous pass is done reading xs
#pragma unroll
    for (int r = 0; r < MR; ++r) {
      const float* xr = x + (r0 + r) * k + k0;
      for (int i = lane; i < len; i += 32) {
        xs[r][i] = r0 + r < m ? xr[i] : 0.0f;
      }
    }
    __syncwarp();

    float acc[MR];
#pragma unroll
    for (int r = 0; r < MR; ++r) acc[r] = 0.0f;
    int v = 0;
    for (; v + kGemvLoadsInFlight <= full; v += kGemvLoadsInFlight) {
      uint4 q[kGemvLoadsInFlight];
#pragma unroll
      for (int u = 0; u < kGemvLoadsInFlight; ++u)
        q[u] = __ldg(wp + (v + u) * 32);
#pragma unroll
      for (int u = 0; u < kGemvLoadsInFlight; ++u) {
        GemvVectorStep<T, MR>(xs, (v + u) * V, q[u], V, acc);
      }
    }
    for (; v < full; ++v)
      GemvVectorStep<T, MR>(xs, v * V, __ldg(wp + v * 32), V, acc);
    if (tail > 0)
      GemvVectorStep<T, MR>(xs, full * V, __ldg(wp + full * 32), tail, acc);

#pragma unroll
    for (int r = 0; r < MR; ++r) {
      if (r0 + r >= m) break;
      if (chunks == 1) {
        if (j < n) {
          float s = acc[r];
          if (bias != nullptr) s = __fadd_rn(s, bias[j]);
          y[(r0 + r) * n + j] = CanonNan(s);
        }
      } else {
        partial[((r0 + r) * chunks + c) * n_pad + j] = acc[r];
      }
    }
  }
}

__global__ void GemmTreeCombineKernel(const float* __restrict__ partial,
                                      int64_t m, int64_t n, int64_t n_pad,
                                      int64_t chunks,
                                      const float* __restrict__ bias,
                                      float* __restrict__ y) {
  for (int64_t idx = int64_t{blockIdx.x} * blockDim.x + threadIdx.x;
       idx < m * n; idx += int64_t{gridDim.x} * blockDim.x) {
    const int64_t r = idx / n;
    const int64_t j = idx % n;
    float s =
        HalvingTreeStrided(partial + r * chunks * n_pad + j, n_pad, chunks);
    if (bias != nullptr) s = __fadd_rn(s, bias[j]);
    y[idx] = CanonNan(s);
  }
}

// -------------------------------------------------------------- tiled ----

constexpr int kTileM = 64;
constexpr int kTileN = 64;
constexpr int kTileK = 32;
constexpr int kTiledThreads = 256;
constexpr int kThreadM = 4;
constexpr int kThreadN = 4;
// The tiled kernel keeps its tree stack per thread; chunk counts beyond this
// (k > 1M) take the split-K path.
constexpr int64_t kTiledMaxChunks = int64_t{1} << 12;
constexpr int kTiledStack = 13;  // log2(kTiledMaxChunks) + 1
static_assert(kChunk % kTileK == 0, "slabs never straddle a chunk");
static_assert(kTileN == 2 * kGemmGroupCols, "a tile spans two column groups");

template <DType T>
__global__ void __launch_bounds__(kTiledThreads)
    GemmTiledKernel(const float* __restrict__ x, int64_t m, int64_t k,
                    const uint4* __restrict__ w, int64_t n, int64_t n_groups,
                    int64_t k_vecs, int64_t chunks,
                    const float* __restrict__ bias, float* __restrict__ y) {
  constexpr int V = kVecElems<T>;
  constexpr int kSlabVecs = kTileK / V;
  __shared__ __align__(16) float xs[kTileK][kTileM + 4];
  __shared__ __align__(16) float ws[kTileK][kTileN + 4];
  const int tid = threadIdx.x;
  const int tx = tid % 16;  // columns tx + 16 * j
  const int ty = tid / 16;  // rows ty * 4 + i
  const int64_t n0 = int64_t{blockIdx.x} * kTileN;
  const int64_t g0 = n0 / kGemmGroupCols;

  for (int64_t m0 = int64_t{blockIdx.y} * kTileM; m0 < m;
       m0 += int64_t{gridDim.y} * kTileM) {
    float stack[kTiledStack][kThreadM * kThreadN];
    int sp = 0;
    for (int64_t c = 0; c < chunks; ++c) {
      float acc[kThreadM][kThreadN];
#pragma unroll
      for (int i = 0; i < kThreadM; ++i) {
#pragma unroll
        for (int j = 0; j < kThreadN; ++j) acc[i][j] = 0.0f;
      }
      const int64_t kc0 = c * kChunk;
      const int64_t kc1 = min(k, kc0 + kChunk);
      for (int64_t k0 = kc0; k0 < kc1; k0 += kTileK) {
        const int depth = static_cast<int>(min(int64_t{kTileK}, kc1 - k0));
        __syncthreads();  // the previous slab is consumed
        for (int idx = tid; idx < kTileM * kTileK; idx += kTiledThreads) {
          const int row = idx / kTileK;
          const int kk = idx % kTileK;
          const int64_t gr = m0 + row;
          xs[kk][row] = gr < m && kk < depth ? x[gr * k + k0 + kk] : 0.0f;
        }
        for (int idx = tid; idx < 2 * kSlabVecs * 32; idx += kTiledThreads) {
          const int lane = idx % 32;
          const int vv = (idx / 32) % kSlabVecs;
          const int gg = idx / (32 * kSlabVecs);
          const int64_t g = g0 + gg;
          const int64_t vg = k0 / V + vv;
          float wv[V];
          if (g < n_groups && vg < k_vecs) {
            WidenVec<T>(__ldg(w + (g * k_vecs + vg) * 32 + lane), wv);
          } else {
#pragma unroll
            for (int e = 0; e < V; ++e) wv[e] = 0.0f;
          }
#pragma unroll
          for (int e = 0; e < V; ++e) ws[vv * V + e][gg * 32 + lane] = wv[e];
        }
        __syncthreads();
        auto step = [&](int kk) {
          const float4 a4 = *reinterpret_cast<const float4*>(&xs[kk][ty * 4]);
          const float a[kThreadM] = {a4.x, a4.y, a4.z, a4.w};
          float b[kThreadN];
#pragma unroll
          for (int j = 0; j < kThreadN; ++j) b[j] = ws[kk][tx + 16 * j];
#pragma unroll
          for (int i = 0; i < kThreadM; ++i) {
#pragma unroll
            for (int j = 0; j < kThreadN; ++j) {
              acc[i][j] = __fmaf_rn(a[i], b[j], acc[i][j]);
            }
          }
        };
        if (depth == kTileK) {
#pragma unroll
          for (int kk = 0; kk < kTileK; ++kk) step(kk);
        } else {
          for (int kk = 0; kk < depth; ++kk) step(kk);  // the last, short slab
        }
      }
      // Chunk c is a leaf of the halving tree: push, then fold the subtrees
      // it completes.
#pragma unroll
      for (int i = 0; i < kThreadM; ++i) {
#pragma unroll
        for (int j = 0; j < kThreadN; ++j)
          stack[sp][i * kThreadN + j] = acc[i][j];
      }
      ++sp;
      for (int merges = TreeMergesAfterLeaf(c, chunks); merges > 0; --merges) {
        --sp;
#pragma unroll
        for (int q = 0; q < kThreadM * kThreadN; ++q) {
          stack[sp - 1][q] = __fadd_rn(stack[sp - 1][q], stack[sp][q]);
        }
      }
    }
#pragma unroll
    for (int i = 0; i < kThreadM; ++i) {
      const int64_t row = m0 + ty * 4 + i;
      if (row >= m) break;
#pragma unroll
      for (int j = 0; j < kThreadN; ++j) {
        const int64_t col = n0 + tx + 16 * j;
        if (col < n) {
          float s = stack[0][i * kThreadN + j];
          if (bias != nullptr) s = __fadd_rn(s, bias[col]);
          y[row * n + col] = CanonNan(s);
        }
      }
    }
  }
}

// ------------------------------------------------------------ dispatch ----

int64_t Chunks(const GemmLayout& l) { return CeilDiv(l.k, kChunk); }

GemmPath Resolve(int64_t m, const GemmLayout& l, GemmPath path) {
  if (path == GemmPath::kTiled && Chunks(l) > kTiledMaxChunks) {
    return GemmPath::kSplitK;  // the tiled kernel's stack bound
  }
  if (path != GemmPath::kAuto) return path;
  return m <= kGemvMaxRows || Chunks(l) > kTiledMaxChunks ? GemmPath::kSplitK
                                                          : GemmPath::kTiled;
}

template <DType T, int MR>
void LaunchSplitK(const float* x, int64_t m, const DeviceGemmWeights& w,
                  const float* bias, float* y, float* partial,
                  cudaStream_t stream) {
  const GemmLayout& l = w.layout;
  const int64_t chunks = Chunks(l);
  const dim3 grid(
      static_cast<unsigned>(CeilDiv(l.n_groups * chunks, kGemvWarps)),
      static_cast<unsigned>(std::min(CeilDiv(m, MR), kMaxGridYZ)));
  GemvSplitKKernel<T, MR><<<grid, kGemvWarps * 32, 0, stream>>>(
      x, m, l.k, static_cast<const uint4*>(w.data), l.n, l.n_groups, l.k_vecs,
      chunks, bias, y, partial);
  if (chunks > 1) {
    GemmTreeCombineKernel<<<StrideGrid(m * l.n, 256), 256, 0, stream>>>(
        partial, m, l.n, l.n_groups * 32, chunks, bias, y);
  }
}

template <DType T>
Status LaunchTyped(const float* x, int64_t m, const DeviceGemmWeights& w,
                   const float* bias, float* y, float* partial, GemmPath path,
                   cudaStream_t stream) {
  const GemmLayout& l = w.layout;
  if (path == GemmPath::kTiled) {
    const dim3 grid(
        static_cast<unsigned>(CeilDiv(l.n, kTileN)),
        static_cast<unsigned>(std::min(CeilDiv(m, kTileM), kMaxGridYZ)));
    GemmTiledKernel<T><<<grid, kTiledThreads, 0, stream>>>(
        x, m, l.k, static_cast<const uint4*>(w.data), l.n, l.n_groups, l.k_vecs,
        Chunks(l), bias, y);
  } else if (m == 1) {
    LaunchSplitK<T, 1>(x, m, w, bias, y, partial, stream);
  } else if (m == 2) {
    LaunchSplitK<T, 2>(x, m, w, bias, y, partial, stream);
  } else if (m <= 4) {
    LaunchSplitK<T, 4>(x, m, w, bias, y, partial, stream);
  } else {
    LaunchSplitK<T, 8>(x, m, w, bias, y, partial, stream);
  }
  return LaunchStatus("Gemm launch");
}

}  // namespace

size_t GemmScratchBytes(int64_t m, const GemmLayout& layout, GemmPath path) {
  if (IsBlockQuantized(layout.dtype)) {
    return QuantGemmScratchBytes(m, layout.k);
  }
  if (Resolve(m, layout, path) != GemmPath::kSplitK || Chunks(layout) == 1) {
    return 0;
  }
  return static_cast<size_t>(m) * static_cast<size_t>(Chunks(layout)) *
         static_cast<size_t>(layout.n_groups * 32) * sizeof(float);
}

Status LaunchGemm(const float* x, int64_t m, const DeviceGemmWeights& w,
                  const float* bias, float* y, void* scratch,
                  size_t scratch_bytes, cudaStream_t stream, GemmPath path) {
  const size_t need = GemmScratchBytes(m, w.layout, path);
  if (scratch_bytes < need || (need > 0 && scratch == nullptr)) {
    return InvalidArgument("LaunchGemm: scratch: got " +
                           std::to_string(scratch_bytes) +
                           " bytes, want >= " + std::to_string(need));
  }
  if (IsBlockQuantized(w.layout.dtype)) {
    return LaunchQuantGemm(x, m, w, bias, y, scratch, scratch_bytes, stream);
  }
  path = Resolve(m, w.layout, path);
  auto* partial = static_cast<float*>(scratch);
  switch (w.layout.dtype) {
    case DType::kF32:
      return LaunchTyped<DType::kF32>(x, m, w, bias, y, partial, path, stream);
    case DType::kBF16:
      return LaunchTyped<DType::kBF16>(x, m, w, bias, y, partial, path, stream);
    case DType::kF16:
      return LaunchTyped<DType::kF16>(x, m, w, bias, y, partial, path, stream);
    default:
      break;
  }
  return InvalidArgument("LaunchGemm: w.layout.dtype: unknown");
}

}  // namespace layerproof::kernels::cuda
