// Launch-geometry helpers shared by the CUDA launch functions. Geometry never
// affects results: every kernel computes whole outputs in the spec's order.
// Thread safety: pure functions.
#ifndef LAYERPROOF_KERNELS_CUDA_INTERNAL_GRID_H_
#define LAYERPROOF_KERNELS_CUDA_INTERNAL_GRID_H_

#include <algorithm>
#include <cstdint>

namespace layerproof::kernels::cuda {

inline constexpr int64_t kMaxGridX = 0x7FFFFFFF;
inline constexpr int64_t kMaxGridYZ = 65535;
// Grid-stride kernels need no more blocks than this to fill any GPU.
inline constexpr int64_t kStrideBlocks = 65536;

inline int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Blocks for a grid-stride loop over `work` items, `per_block` at a time.
inline unsigned StrideGrid(int64_t work, int64_t per_block) {
  return static_cast<unsigned>(
      std::clamp<int64_t>(CeilDiv(work, per_block), 1, kStrideBlocks));
}

}  // namespace layerproof::kernels::cuda

#endif  // LAYERPROOF_KERNELS_CUDA_INTERNAL_GRID_H_
