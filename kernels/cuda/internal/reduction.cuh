// Device forms of the two reduction orders of kernels/ref/reduction.h
// (docs/determinism.md §3.1 ChunkTree, §3.2 Lane32). Every add is __fadd_rn
// and every multiply-add __fmaf_rn, so no compiler flag can contract or
// reassociate them. Thread safety: pure device functions.
#ifndef LAYERPROOF_KERNELS_CUDA_INTERNAL_REDUCTION_CUH_
#define LAYERPROOF_KERNELS_CUDA_INTERNAL_REDUCTION_CUH_

#include <cstdint>

namespace layerproof::kernels::cuda {

// ChunkTree chunk length and Lane32 lane count: the spec constants of
// kernels/ref/reduction.h (static_asserts in the .cu files that use them).
inline constexpr int kChunk = 256;
inline constexpr int kLanes = 32;
inline constexpr unsigned kFullMask = 0xFFFFFFFFu;

// Chunks of a ChunkTree reduction over n >= 1 terms.
__host__ __device__ inline int64_t ChunkCount(int64_t n) {
  return (n + kChunk - 1) / kChunk;
}

// The Lane32 butterfly on a full, converged warp: `v` is lane j's partial
// (lane j accumulated terms j, j+32, ... in ascending order). Offsets 16, 8,
// 4, 2, 1, lane j += lane j+off; lane 0 returns the fold (other lanes return
// values of no meaning).
__device__ __forceinline__ float WarpButterfly32(float v) {
#pragma unroll
  for (int level = 4; level >= 0; --level) {
    v = __fadd_rn(v, __shfl_down_sync(kFullMask, v, 1 << level));
  }
  return v;
}

template <int kOff>
__device__ __forceinline__ void ButterflyLevel(float* lanes) {
#pragma unroll
  for (int j = 0; j < kOff; ++j)
    lanes[j] = __fadd_rn(lanes[j], lanes[j + kOff]);
}

// The same butterfly over 32 partials held by one thread. One level per
// constant offset, so that every index is a compile-time constant and
// `lanes` stays in registers.
__device__ __forceinline__ float Butterfly32(float* lanes) {
  ButterflyLevel<16>(lanes);
  ButterflyLevel<8>(lanes);
  ButterflyLevel<4>(lanes);
  ButterflyLevel<2>(lanes);
  ButterflyLevel<1>(lanes);
  return lanes[0];
}

// The halving tree T(n) = T(ceil(n/2)) + T(floor(n/2)) evaluated in post
// order as a stack machine: push each leaf (chunk partial) in ascending
// order, then pop-and-add this many times. The count depends only on the
// leaf index and the leaf count, so it is uniform across a warp. The stack
// never holds more than ceil(log2(count)) + 1 values.
__host__ __device__ inline int TreeMergesAfterLeaf(int64_t leaf,
                                                   int64_t count) {
  int merges = 0;
  int64_t lo = 0;
  while (count > 1) {
    if (leaf == lo + count - 1) ++merges;  // this subtree ends at `leaf`
    const int64_t left = (count + 1) / 2;
    if (leaf < lo + left) {
      count = left;
    } else {
      lo += left;
      count -= left;
    }
  }
  return merges;
}

// Stack bound for up to 2^31 leaves.
inline constexpr int kTreeStackMax = 33;

// HalvingTree of p[0], p[stride], ..., p[(count - 1) * stride]; count >= 1.
__device__ inline float HalvingTreeStrided(const float* p, int64_t stride,
                                           int64_t count) {
  float stack[kTreeStackMax];
  int sp = 0;
  for (int64_t leaf = 0; leaf < count; ++leaf) {
    stack[sp++] = p[leaf * stride];
    for (int m = TreeMergesAfterLeaf(leaf, count); m > 0; --m) {
      --sp;
      stack[sp - 1] = __fadd_rn(stack[sp - 1], stack[sp]);
    }
  }
  return stack[0];
}

}  // namespace layerproof::kernels::cuda

#endif  // LAYERPROOF_KERNELS_CUDA_INTERNAL_REDUCTION_CUH_
