// Where a forward pass runs: the memory its activations, weights and KV
// caches live in, and the ops on them.
//
// The engine (kernels/model/engine.h) is written once against this
// interface. HostExecutor runs any host-memory Backend (ref, AVX2, AVX-512,
// NEON) with the weights read in place from the mapped files; the CUDA
// executor (kernels/model/cuda_executor.h) keeps weights, activations and KV
// caches in device memory and copies only tapped rows and logits back. Every
// op is the Backend op of the same name, so results are bit-identical for
// every executor (docs/determinism.md §3).
//
// Pointers passed to ops are in the executor's memory unless a parameter
// says host. Ops may run asynchronously; CopyToHost returns once the host
// copy is complete. Thread safety: an executor serves one engine at a time
// (Step, RunBlock and RunHead each hold their own buffers, so they may run
// concurrently when the executor says so, see concurrent_ops()).
#ifndef LAYERPROOF_KERNELS_MODEL_EXECUTOR_H_
#define LAYERPROOF_KERNELS_MODEL_EXECUTOR_H_

#include <cstdint>
#include <memory>

#include "kernels/backend.h"
#include "kernels/model/safetensors.h"
#include "kernels/status.h"

namespace layerproof::kernels::model {

// A float array in an executor's memory. Movable, owning.
class Buffer {
 public:
  Buffer() = default;
  Buffer(float* data, int64_t count, void (*release)(float*))
      : data_(data, release), count_(count) {}
  float* data() const { return data_.get(); }
  int64_t count() const { return count_; }

 private:
  std::unique_ptr<float, void (*)(float*)> data_{nullptr, [](float*) {}};
  int64_t count_ = 0;
};

// A weight matrix prepared for Gemm, or a vector (norm gamma, embedding
// table) placed where the executor reads it. Opaque to the engine.
class Matrix {
 public:
  virtual ~Matrix() = default;
};
class Vector {
 public:
  virtual ~Vector() = default;
};
// A bias widened to fp32 in the executor's memory.
using Bias = Buffer;

class Executor {
 public:
  virtual ~Executor() = default;
  virtual BackendKind kind() const = 0;
  // True when executor memory is host memory (taps then read it in place).
  virtual bool host_memory() const = 0;

  virtual StatusOr<Buffer> Allocate(int64_t floats) = 0;
  // Copies count floats of executor memory at src to host memory at dst and
  // waits for them (and for all work queued before).
  virtual Status CopyToHost(const float* src, int64_t count, float* dst) = 0;
  // Copies host memory into executor memory.
  virtual Status CopyFromHost(const float* src, int64_t count, float* dst) = 0;
  // dst[0..count) = src[0..count), both executor memory.
  virtual Status Copy(const float* src, int64_t count, float* dst) = 0;

  // W[n][k] from a [n][k] tensor; the tensor must outlive the Matrix (a
  // host executor reads the mapped file in place).
  virtual StatusOr<std::unique_ptr<Matrix>> PrepareMatrix(
      const TensorView& w) = 0;
  // A 1-D gamma or a 2-D embedding table, read as stored.
  virtual StatusOr<std::unique_ptr<Vector>> PrepareVector(
      const TensorView& v) = 0;
  // A bias widened exactly to fp32.
  virtual StatusOr<Bias> PrepareBias(const TensorView& b) = 0;

  // The ops of kernels/backend.h.
  virtual Status Gemm(const float* x, int64_t m, const Matrix& w,
                      const float* bias, float* y) = 0;
  virtual Status RmsNorm(const float* x, int64_t rows, int64_t dim,
                         const Vector& gamma, float eps, float* y) = 0;
  // positions: host memory, rows entries.
  virtual Status Rope(float* x, int64_t rows, int64_t n_heads,
                      const int64_t* positions, const RopeTable& table) = 0;
  virtual Status Attention(const AttentionArgs& args) = 0;
  virtual Status SwiGlu(const float* gate, const float* up, int64_t n,
                        float* y) = 0;
  virtual Status Add(const float* a, const float* b, int64_t n, float* y) = 0;
  // ids: host memory.
  virtual Status Embedding(const Vector& table, const int32_t* ids,
                           int64_t n_ids, float* y) = 0;
};

// An executor over a host-memory Backend; `backend` must outlive it.
std::unique_ptr<Executor> MakeHostExecutor(Backend* backend);

// The executor for `backend`: the CUDA executor for a CUDA backend (when
// built with CUDA), the host executor otherwise.
StatusOr<std::unique_ptr<Executor>> MakeExecutor(Backend* backend);

}  // namespace layerproof::kernels::model

#endif  // LAYERPROOF_KERNELS_MODEL_EXECUTOR_H_
