// RAII owners of CUDA device memory and memory pools (STYLE.md: no owning raw
// pointers; CUDA handles live in std::unique_ptr with custom deleters).
// Deleters ignore errors: a freed buffer of a failed context is no leak that
// anything could act on. Host code only. Thread safety: as std::unique_ptr.
#ifndef LAYERPROOF_KERNELS_CUDA_INTERNAL_DEVICE_MEMORY_H_
#define LAYERPROOF_KERNELS_CUDA_INTERNAL_DEVICE_MEMORY_H_

#include <cuda_runtime_api.h>

#include <cstddef>
#include <memory>
#include <type_traits>

#include "kernels/cuda/internal/cuda_status.h"
#include "kernels/status.h"

namespace layerproof::kernels::cuda {

// cudaMalloc memory on `device`.
struct DeviceFree {
  int device = 0;
  void operator()(void* p) const {
    int current = 0;
    cudaGetDevice(&current);
    if (current != device) cudaSetDevice(device);
    cudaFree(p);
    if (current != device) cudaSetDevice(current);
  }
};
using DeviceMemory = std::unique_ptr<void, DeviceFree>;

// Long-lived memory (packed weights) on the current device `device`.
inline StatusOr<DeviceMemory> AllocateDeviceMemory(size_t bytes, int device) {
  void* p = nullptr;
  LP_CUDA_RETURN_IF_ERROR(cudaMalloc(&p, bytes == 0 ? 1 : bytes), "cudaMalloc");
  return DeviceMemory(p, DeviceFree{device});
}

// Stream-ordered memory from a pool, returned to the pool on its stream.
struct StreamFree {
  cudaStream_t stream = nullptr;
  void operator()(void* p) const { cudaFreeAsync(p, stream); }
};
using StreamBuffer = std::unique_ptr<void, StreamFree>;

// `bytes` from `pool`, ordered on `stream`; a null buffer for 0 bytes.
inline StatusOr<StreamBuffer> AllocateStreamBuffer(size_t bytes,
                                                   cudaMemPool_t pool,
                                                   cudaStream_t stream) {
  if (bytes == 0) return StreamBuffer(nullptr, StreamFree{stream});
  void* p = nullptr;
  LP_CUDA_RETURN_IF_ERROR(cudaMallocFromPoolAsync(&p, bytes, pool, stream),
                          "cudaMallocFromPoolAsync");
  return StreamBuffer(p, StreamFree{stream});
}

struct MemPoolDestroy {
  void operator()(cudaMemPool_t pool) const { cudaMemPoolDestroy(pool); }
};
using MemPoolHandle =
    std::unique_ptr<std::remove_pointer_t<cudaMemPool_t>, MemPoolDestroy>;

}  // namespace layerproof::kernels::cuda

#endif  // LAYERPROOF_KERNELS_CUDA_INTERNAL_DEVICE_MEMORY_H_
