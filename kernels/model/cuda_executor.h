// The CUDA executor: a forward pass with its weights, activations and KV
// caches in device memory, on the kernels of kernels/cuda/launch.h.
//
// Weight matrices are packed once on the host (kernels/cuda/gemm_layout.h)
// and uploaded; norm gammas and the embedding table are uploaded as stored,
// biases widened to fp32, and the RoPE table once per table. Every op is the
// launch function of the Backend op of the same name, so results are
// bit-identical to kernels/ref (docs/determinism.md §3). Only the rows a
// caller asks for come back: CopyToHost copies through a pinned staging
// buffer and returns once they are in host memory.
//
// All work runs on one non-blocking stream that the executor owns, so its
// ops are ordered and its scratch memory may be reused from op to op. Thread
// safety: every op may be called from any thread; a mutex around each op
// serialises them (the engine's Step and its const RunBlock / RunHead may run
// concurrently on one executor), and each thread's ops run in the order it
// made them. Buffers may be released on any thread at any time: releasing
// one waits for the device's queued work first. CUDA errors come back as
// Status (Internal, naming the call), never abort; a kernel's execution
// error surfaces at the next CopyToHost.
#ifndef LAYERPROOF_KERNELS_MODEL_CUDA_EXECUTOR_H_
#define LAYERPROOF_KERNELS_MODEL_CUDA_EXECUTOR_H_

#include <memory>

#include "kernels/model/executor.h"
#include "kernels/status.h"

namespace layerproof::kernels::model {

// An executor on CUDA device 0; Unavailable when there is no CUDA device or
// it cannot run this build's kernels.
StatusOr<std::unique_ptr<Executor>> MakeCudaExecutor();

}  // namespace layerproof::kernels::model

#endif  // LAYERPROOF_KERNELS_MODEL_CUDA_EXECUTOR_H_
