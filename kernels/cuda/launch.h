// Device-pointer entry points of the CUDA kernels: one launch function per
// op, for a GPU-resident engine and for the host-memory Backend adapter
// (kernels/cuda/cuda_backend.h).
//
// Contract: results are bit-identical to kernels/ref for every input (odd
// shapes, ±0, subnormals, ±inf, NaN canonicalised), using only correctly
// rounded fp32 operations in exactly ref's order (docs/determinism.md §3);
// the order depends on the problem's shape alone, never on the GPU, the
// launch configuration or the path a launch function picks.
//
// Every pointer is device memory (except where a parameter says host). The
// arguments must already satisfy the checks of kernels/backend.cc (shapes
// >= 1, ids and positions in range, n_heads % n_kv_heads == 0, ...); these
// functions only add the checks they alone can make (scratch sizes) and
// report them as InvalidArgument. They enqueue work on `stream` and return
// without synchronising: launch errors come back as Internal, execution
// errors at the caller's next synchronising call. Scratch buffers are the
// caller's and must not be used by other work until the stream passes them.
// Thread safety: free functions; concurrent calls on different streams and
// buffers are safe.
#ifndef LAYERPROOF_KERNELS_CUDA_LAUNCH_H_
#define LAYERPROOF_KERNELS_CUDA_LAUNCH_H_

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "kernels/backend.h"
#include "kernels/cuda/gemm_layout.h"
#include "kernels/dtype.h"
#include "kernels/status.h"

namespace layerproof::kernels::cuda {

// A weight matrix in the packed layout of gemm_layout.h, in device memory.
struct DeviceGemmWeights {
  const void* data = nullptr;  // layout.bytes bytes
  GemmLayout layout;
};

// Which GEMM kernel runs for float weights. kAuto: the split-K GEMV for
// m <= 8 (decode), the register-tiled kernel otherwise. Forcing one is for
// tests and benchmarks; every path gives the same bits. Block-quantized
// weights have one kernel (quant_gemm.cu) and ignore the path.
enum class GemmPath { kAuto, kSplitK, kTiled };

// Scratch bytes LaunchGemm needs for this shape and path (0 if none). For
// block-quantized weights it is the quantized activations (about m * k * 1.4
// bytes), never 0.
size_t GemmScratchBytes(int64_t m, const GemmLayout& layout,
                        GemmPath path = GemmPath::kAuto);

// y[m][n] = ChunkTree_k(x[m][k] * W[n][k]) (+ bias[n]), §3.1, or for
// block-quantized weights the integer-unit GEMM of §3.12 (x is quantized
// per 32-element unit into scratch first). bias may be null. scratch holds
// at least GemmScratchBytes(m, w.layout, path) bytes; for block-quantized
// weights, scratch and w.data must be 16-byte aligned (cudaMalloc and pool
// memory are).
Status LaunchGemm(const float* x, int64_t m, const DeviceGemmWeights& w,
                  const float* bias, float* y, void* scratch,
                  size_t scratch_bytes, cudaStream_t stream,
                  GemmPath path = GemmPath::kAuto);

// §3.3: y[r][i] = (x[r][i] * inv_rms[r]) * gamma[i]; gamma: dim elements of
// gamma_dtype.
Status LaunchRmsNorm(const float* x, int64_t rows, int64_t dim,
                     const void* gamma, DType gamma_dtype, float eps, float* y,
                     cudaStream_t stream);

// §3.4: rotates x[rows][n_heads][head_dim] in place; row r uses
// cos/sin[positions[r] * head_dim / 2 + i] (the RopeTable arrays).
Status LaunchRope(float* x, int64_t rows, int64_t n_heads, int64_t head_dim,
                  const int64_t* positions, const float* cos_table,
                  const float* sin_table, cudaStream_t stream);

// Scratch bytes LaunchAttention needs to process `rows_per_pass` query rows
// at a time (the device pointers of `shape` are not read).
size_t AttentionScratchBytes(const AttentionArgs& shape, int64_t rows_per_pass);

// §3.5: causal grouped-query attention; the pointers in `a` are device
// pointers. Query rows are processed in passes of as many rows as
// scratch_bytes allows (at least one row must fit).
Status LaunchAttention(const AttentionArgs& a, void* scratch,
                       size_t scratch_bytes, cudaStream_t stream);

// §3.6. y may equal gate or up.
Status LaunchSwiGlu(const float* gate, const float* up, int64_t n, float* y,
                    cudaStream_t stream);

// §3.7, row-wise. y may equal x.
Status LaunchSoftmax(const float* x, int64_t rows, int64_t n, float* y,
                     cudaStream_t stream);

// §3.8. y may equal a or b.
Status LaunchAdd(const float* a, const float* b, int64_t n, float* y,
                 cudaStream_t stream);

// §3.9: y[r][:] = table[ids[r]][:] widened; table: [rows][dim] of dtype
// (for a block-quantized dtype, rows of RowBytes(dtype, dim) bytes as stored,
// dequantized per §3.12; dim a multiple of the block).
Status LaunchEmbedding(const void* table, DType dtype, int64_t dim,
                       const int32_t* ids, int64_t n_ids, float* y,
                       cudaStream_t stream);

// §3.10: out[r] = index of the largest x[r][i]; NaN ranks first, ties go to
// the lowest index.
Status LaunchArgmax(const float* x, int64_t rows, int64_t n, int64_t* out,
                    cudaStream_t stream);

// OK when the current device can run this build's kernels (compute
// capability and an embedded image or PTX for it); Unavailable otherwise.
Status ProbeCurrentDevice();

}  // namespace layerproof::kernels::cuda

#endif  // LAYERPROOF_KERNELS_CUDA_LAUNCH_H_
