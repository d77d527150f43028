// GPU timings for layerproof_gpu_check: the decode GEMV (float and
// block-quantized weights), prefill GEMM and attention kernels of
// kernels/cuda/launch.h, each next to a peer measured in
// the same run: cuBLAS (sgemv / sgemm, fp32) when the build has it, and
// always the device's measured memory bandwidth (a streaming read kernel and
// cudaMemcpy device-to-device). cudaEvent timing, warm-up first, mean over
// repeats. Thread safety: single-threaded use only.
#ifndef LAYERPROOF_KERNELS_CUDA_GPU_TIMING_H_
#define LAYERPROOF_KERNELS_CUDA_GPU_TIMING_H_

#include <cstdio>

#include "kernels/status.h"

namespace layerproof::kernels::cuda {

// Prints the timing table to `out` (device 0). `quick` uses fewer repeats.
Status RunGpuTimings(std::FILE* out, bool quick);

}  // namespace layerproof::kernels::cuda

#endif  // LAYERPROOF_KERNELS_CUDA_GPU_TIMING_H_
