// §3.5 of docs/determinism.md on the GPU: causal grouped-query attention,
// bit-identical to ref::AttentionRowHead for every (row, head).
//
// For query row i (absolute position q_pos0 + i, keys 0 .. q_pos0 + i) of
// head h, KV head g = h / (n_heads / n_kv_heads):
//  1. Scores, one thread per key t: the Lane32 dot of q and k_t over head_dim
//     (32 register lanes, lane j: __fmaf_rn over e = j mod 32 ascending from
//     +0, then the butterfly 16..1), times scale = 1 / sqrt(head_dim).
//  2. Softmax over the row's keys, one warp per (row, head): WarpSoftmaxRow
//     (exact max, DetExpF, Lane32 sum, divide), in place.
//  3. out[e] = ChunkTree over keys of p_t * v_t[e]: one block per (row, head,
//     256-key chunk), one thread per e running the chunk's __fmaf_rn chain in
//     ascending t from +0 (flash-decoding style split over chunks).
//  4. Rows with more than one chunk: one thread per (row, head, e) folds the
//     chunk partials with the halving tree. NaN canonicalised.
// Query rows go in passes sized by the caller's scratch: per row, the scores
// (n_heads * n_kv floats) and the chunk partials.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <string>

#include "kernels/cuda/internal/cuda_status.h"
#include "kernels/cuda/internal/dtype.cuh"
#include "kernels/cuda/internal/grid.h"
#include "kernels/cuda/internal/reduction.cuh"
#include "kernels/cuda/internal/softmax_row.cuh"
#include "kernels/cuda/launch.h"
#include "kernels/ref/reduction.h"

namespace layerproof::kernels::cuda {

static_assert(kChunk == ref::kChunk && kLanes == ref::kLanes, "spec constants");

namespace {

constexpr int kScoreThreads = 128;
constexpr int kSoftmaxWarps = 8;
constexpr int kPvMaxThreads = 256;
constexpr int kCombineThreads = 256;

// The rows of one pass: query rows row0 .. row0 + rows - 1; rh = local row *
// n_heads + head indexes the pass's (row, head) pairs.
struct Pass {
  int64_t row0;
  int64_t rows;
  int64_t max_chunks;  // chunks of the longest row in the whole call
};

__device__ __forceinline__ int64_t Keys(const AttentionArgs& a, int64_t row) {
  return a.q_pos0 + row + 1;
}

__global__ void __launch_bounds__(kScoreThreads)
    AttnScoresKernel(AttentionArgs a, Pass p, float* __restrict__ scores) {
  const int64_t d = a.head_dim;
  const int64_t kv_row = a.n_kv_heads * d;
  const int64_t group = a.n_heads / a.n_kv_heads;
  // The score scale, rounded once: 1 / sqrt(head_dim), both IEEE.
  const float scale = __fdiv_rn(1.0f, __fsqrt_rn(__ll2float_rn(d)));
  const int64_t t = int64_t{blockIdx.x} * kScoreThreads + threadIdx.x;
  // Every q and k row starts 16-byte aligned when head_dim % 4 == 0 and the
  // base pointers are aligned.
  const bool vec4 = d % 4 == 0 && (reinterpret_cast<uintptr_t>(a.q) |
                                   reinterpret_cast<uintptr_t>(a.k)) %
                                          16 ==
                                      0;
  for (int64_t rh = blockIdx.y; rh < p.rows * a.n_heads; rh += gridDim.y) {
    const int64_t row = p.row0 + rh / a.n_heads;
    const int64_t h = rh % a.n_heads;
    if (t >= Keys(a, row)) continue;
    const float* q = a.q + (row * a.n_heads + h) * d;
    const float* k = a.k + t * kv_row + (h / group) * d;
    float lanes[kLanes];
#pragma unroll
    for (int j = 0; j < kLanes; ++j) lanes[j] = 0.0f;
    const int64_t full = d - d % kLanes;
    if (vec4) {  // same terms, same lanes, 16-byte loads
      for (int64_t e0 = 0; e0 < full; e0 += kLanes) {
#pragma unroll
        for (int j = 0; j < kLanes; j += 4) {
          const float4 qv = *reinterpret_cast<const float4*>(q + e0 + j);
          const float4 kv = *reinterpret_cast<const float4*>(k + e0 + j);
          lanes[j] = __fmaf_rn(qv.x, kv.x, lanes[j]);
          lanes[j + 1] = __fmaf_rn(qv.y, kv.y, lanes[j + 1]);
          lanes[j + 2] = __fmaf_rn(qv.z, kv.z, lanes[j + 2]);
          lanes[j + 3] = __fmaf_rn(qv.w, kv.w, lanes[j + 3]);
        }
      }
    } else {
      for (int64_t e0 = 0; e0 < full; e0 += kLanes) {
#pragma unroll
        for (int j = 0; j < kLanes; ++j) {
          lanes[j] = __fmaf_rn(q[e0 + j], k[e0 + j], lanes[j]);
        }
      }
    }
    const int rem = static_cast<int>(d - full);
#pragma unroll
    for (int j = 0; j < kLanes; ++j) {
      if (j < rem) lanes[j] = __fmaf_rn(q[full + j], k[full + j], lanes[j]);
    }
    scores[rh * a.n_kv + t] = __fmul_rn(Butterfly32(lanes), scale);
  }
}

__global__ void __launch_bounds__(kSoftmaxWarps * 32)
    AttnSoftmaxKernel(AttentionArgs a, Pass p, float* scores) {
  for (int64_t rh = int64_t{blockIdx.x} * kSoftmaxWarps + threadIdx.x / 32;
       rh < p.rows * a.n_heads; rh += int64_t{gridDim.x} * kSoftmaxWarps) {
    float* s = scores + rh * a.n_kv;
    WarpSoftmaxRow(s, Keys(a, p.row0 + rh / a.n_heads), s, threadIdx.x % 32);
  }
}

__global__ void __launch_bounds__(kPvMaxThreads)
    AttnPvKernel(AttentionArgs a, Pass p, const float* __restrict__ scores,
                 float* __restrict__ partial) {
  __shared__ float ps[kChunk];
  const int64_t d = a.head_dim;
  const int64_t kv_row = a.n_kv_heads * d;
  const int64_t group = a.n_heads / a.n_kv_heads;
  const int64_t c = blockIdx.x;
  for (int64_t rh = blockIdx.y; rh < p.rows * a.n_heads; rh += gridDim.y) {
    const int64_t row = p.row0 + rh / a.n_heads;
    const int64_t h = rh % a.n_heads;
    const int64_t keys = Keys(a, row);
    const int64_t chunks = ChunkCount(keys);
    if (c >= chunks) continue;  // uniform over the block
    const int64_t t0 = c * kChunk;
    const int len = static_cast<int>(min(int64_t{kChunk}, keys - t0));
    __syncthreads();  // the previous pair is done with ps
    for (int tt = threadIdx.x; tt < len; tt += blockDim.x) {
      ps[tt] = scores[rh * a.n_kv + t0 + tt];
    }
    __syncthreads();
    for (int64_t e = threadIdx.x; e < d; e += blockDim.x) {
      const float* v = a.v + t0 * kv_row + (h / group) * d + e;
      float acc = 0.0f;
#pragma unroll 8
      for (int tt = 0; tt < len; ++tt) {
        acc = __fmaf_rn(ps[tt], v[tt * kv_row], acc);
      }
      if (chunks == 1) {
        a.out[(row * a.n_heads + h) * d + e] = CanonNan(acc);
      } else {
        partial[(rh * p.max_chunks + c) * d + e] = acc;
      }
    }
  }
}

__global__ void __launch_bounds__(kCombineThreads)
    AttnCombineKernel(AttentionArgs a, Pass p,
                      const float* __restrict__ partial) {
  const int64_t d = a.head_dim;
  for (int64_t idx = int64_t{blockIdx.x} * kCombineThreads + threadIdx.x;
       idx < p.rows * a.n_heads * d;
       idx += int64_t{gridDim.x} * kCombineThreads) {
    const int64_t rh = idx / d;
    const int64_t e = idx % d;
    const int64_t row = p.row0 + rh / a.n_heads;
    const int64_t chunks = ChunkCount(Keys(a, row));
    if (chunks == 1) continue;  // written by AttnPvKernel
    const float s =
        HalvingTreeStrided(partial + rh * p.max_chunks * d + e, d, chunks);
    a.out[(row * a.n_heads + rh % a.n_heads) * d + e] = CanonNan(s);
  }
}

// a * b, or INT64_MAX when it overflows.
int64_t SatMul(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_mul_overflow(a, b, &r) ? INT64_MAX : r;
}
int64_t SatAdd(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_add_overflow(a, b, &r) ? INT64_MAX : r;
}

int64_t MaxChunks(const AttentionArgs& a) {
  return CeilDiv(a.q_pos0 + a.nq, kChunk);
}

// Scratch floats per query row: its scores, and its chunk partials when any
// row of the call has more than one chunk.
int64_t FloatsPerRow(const AttentionArgs& a) {
  const int64_t chunks = MaxChunks(a);
  const int64_t partials = chunks > 1 ? SatMul(chunks, a.head_dim) : 0;
  return SatMul(a.n_heads, SatAdd(a.n_kv, partials));
}

}  // namespace

size_t AttentionScratchBytes(const AttentionArgs& shape,
                             int64_t rows_per_pass) {
  const int64_t bytes =
      SatMul(SatMul(FloatsPerRow(shape), rows_per_pass), sizeof(float));
  return static_cast<size_t>(bytes);
}

Status LaunchAttention(const AttentionArgs& a, void* scratch,
                       size_t scratch_bytes, cudaStream_t stream) {
  const size_t per_row = AttentionScratchBytes(a, 1);
  const int64_t rows_per_pass =
      std::min<int64_t>(a.nq, static_cast<int64_t>(scratch_bytes / per_row));
  if (rows_per_pass < 1 || scratch == nullptr) {
    return InvalidArgument("LaunchAttention: scratch: got " +
                           std::to_string(scratch_bytes) +
                           " bytes, want >= " + std::to_string(per_row));
  }
  const int64_t max_chunks = MaxChunks(a);
  auto* scores = static_cast<float*>(scratch);
  float* partial = scores + rows_per_pass * a.n_heads * a.n_kv;
  const int pv_threads = static_cast<int>(
      std::min<int64_t>(kPvMaxThreads, CeilDiv(a.head_dim, 32) * 32));
  for (int64_t row0 = 0; row0 < a.nq; row0 += rows_per_pass) {
    const Pass p{row0, std::min(rows_per_pass, a.nq - row0), max_chunks};
    const int64_t pairs = p.rows * a.n_heads;
    const int64_t keys = a.q_pos0 + row0 + p.rows;  // the pass's longest row
    const unsigned pair_grid =
        static_cast<unsigned>(std::min(pairs, kMaxGridYZ));
    AttnScoresKernel<<<dim3(static_cast<unsigned>(CeilDiv(keys, kScoreThreads)),
                            pair_grid),
                       kScoreThreads, 0, stream>>>(a, p, scores);
    AttnSoftmaxKernel<<<StrideGrid(pairs, kSoftmaxWarps), kSoftmaxWarps * 32, 0,
                        stream>>>(a, p, scores);
    AttnPvKernel<<<dim3(static_cast<unsigned>(CeilDiv(keys, kChunk)),
                        pair_grid),
                   pv_threads, 0, stream>>>(a, p, scores, partial);
    if (CeilDiv(keys, kChunk) > 1) {
      AttnCombineKernel<<<StrideGrid(pairs * a.head_dim, kCombineThreads),
                          kCombineThreads, 0, stream>>>(a, p, partial);
    }
    LP_RETURN_IF_ERROR(LaunchStatus("Attention launch"));
  }
  return OkStatus();
}

}  // namespace layerproof::kernels::cuda
