// The two canonical reduction orders of docs/determinism.md §3, in scalar
// form. Every backend reproduces these exactly; the ref backend calls them.
//
//  * Lane32 (§3.2): 32 strided lanes, lane j accumulates terms j, j+32, ...
//    in ascending order starting from +0, then a butterfly folds the lanes
//    with offsets 16, 8, 4, 2, 1 (lane j += lane j+off for j < off).
//  * ChunkTree (§3.1): the terms are cut into chunks of kChunk; each chunk is
//    accumulated in ascending order from +0; the chunk partials are combined
//    by the halving tree T(n) = T(ceil(n/2)) + T(floor(n/2)).
//
// Thread safety: pure functions.
#ifndef LAYERPROOF_KERNELS_REF_REDUCTION_H_
#define LAYERPROOF_KERNELS_REF_REDUCTION_H_

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace layerproof::kernels::ref {

// Chunk length of the ChunkTree order (spec constant, docs §3.1).
inline constexpr int64_t kChunk = 256;
// Lanes of the Lane32 order (spec constant, docs §3.2).
inline constexpr int kLanes = 32;

// Folds 32 lane partials with the butterfly 16, 8, 4, 2, 1.
inline float Butterfly32(float lanes[kLanes]) {
  for (int off = kLanes / 2; off >= 1; off /= 2) {
    for (int j = 0; j < off; ++j) lanes[j] = lanes[j] + lanes[j + off];
  }
  return lanes[0];
}

// Lane32 sum of term(i) for i in [0, n).
template <typename Term>
float Lane32Sum(int64_t n, Term term) {
  float lanes[kLanes] = {};
  for (int64_t i = 0; i < n; ++i) lanes[i % kLanes] += term(i);
  return Butterfly32(lanes);
}

// Lane32 dot product: lane j accumulates fma(a[i], b(i), lane) for i = j mod
// 32.
template <typename B>
float Lane32Dot(const float* a, int64_t n, B b) {
  float lanes[kLanes] = {};
  for (int64_t i = 0; i < n; ++i) {
    lanes[i % kLanes] = std::fma(a[i], b(i), lanes[i % kLanes]);
  }
  return Butterfly32(lanes);
}

// Combines partials[first, first + count) with the halving tree.
inline float HalvingTree(const float* partials, int64_t count) {
  if (count == 1) return partials[0];
  const int64_t left = (count + 1) / 2;
  return HalvingTree(partials, left) +
         HalvingTree(partials + left, count - left);
}

// ChunkTree dot product of a[0..n) and b(i): each chunk of kChunk terms is an
// fma chain from +0 in ascending i; the chunk partials meet in the halving
// tree. n >= 1.
template <typename A, typename B>
float ChunkTreeDot(int64_t n, A a, B b) {
  const int64_t chunks = (n + kChunk - 1) / kChunk;
  std::vector<float> partials(chunks);
  for (int64_t c = 0; c < chunks; ++c) {
    float acc = 0.0f;
    const int64_t end = std::min(n, (c + 1) * kChunk);
    for (int64_t i = c * kChunk; i < end; ++i) acc = std::fma(a(i), b(i), acc);
    partials[c] = acc;
  }
  return HalvingTree(partials.data(), chunks);
}

}  // namespace layerproof::kernels::ref

#endif  // LAYERPROOF_KERNELS_REF_REDUCTION_H_
