// The kernel backend interface: every op of a transformer forward pass.
//
// One Backend per implementation: kernels/ref (the scalar oracle, the spec in
// code), kernels/cpu (AVX2, AVX-512, NEON) and kernels/cuda. Contract: every
// backend's output is bit-identical to the ref backend's for every input,
// including odd shapes, ±0, subnormals, ±inf and NaN; the reduction order of
// each op is the one docs/determinism.md names and depends on the problem's
// shape alone — never on threads, tiles, batch, ISA or GPU.
//
// Buffers are host memory, row-major, and need only their element type's
// natural alignment (4 bytes for float; weight views need none). Input and
// output buffers must not overlap unless an op says otherwise. Every op checks
// its arguments and returns InvalidArgument naming the bad one; no argument
// ever reaches an assert.
//
// Thread safety: a Backend may be shared; ops may run concurrently from
// several threads. SetThreads() must not race with running ops.
#ifndef LAYERPROOF_KERNELS_BACKEND_H_
#define LAYERPROOF_KERNELS_BACKEND_H_

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "kernels/dtype.h"
#include "kernels/status.h"

namespace layerproof::kernels {

enum class BackendKind : uint8_t { kRef, kAvx2, kAvx512, kNeon, kCuda };
std::string_view BackendName(BackendKind kind);

// A row-major [rows][cols] matrix (or a vector when rows == 1) of weights in
// their stored format. Not owning.
struct WeightView {
  const void* data = nullptr;
  DType dtype = DType::kF32;
  int64_t rows = 0;
  int64_t cols = 0;
};

// A weight matrix W[n][k] rearranged into a backend's preferred layout, made
// once (at model load) by Backend::PackWeights and used by that backend only.
// Packing only moves bits: it never rounds or reorders arithmetic.
class PackedWeights {
 public:
  virtual ~PackedWeights() = default;
  PackedWeights(const PackedWeights&) = delete;
  PackedWeights& operator=(const PackedWeights&) = delete;

  BackendKind backend() const { return backend_; }
  int64_t n() const { return n_; }
  int64_t k() const { return k_; }
  DType dtype() const { return dtype_; }

 protected:
  PackedWeights(BackendKind backend, int64_t n, int64_t k, DType dtype)
      : backend_(backend), n_(n), k_(k), dtype_(dtype) {}

 private:
  BackendKind backend_;
  int64_t n_, k_;
  DType dtype_;
};

// RoPE cos/sin tables, built once by BuildRopeTable (kernels/ref/rope_table.h)
// from the project's deterministic math. cos[p * half + i], sin[...] for
// position p < max_positions and pair index i < half = head_dim / 2.
struct RopeTable {
  int64_t head_dim = 0;
  int64_t max_positions = 0;
  std::vector<float> cos;
  std::vector<float> sin;
};

// Causal grouped-query attention for query rows at absolute positions
// q_pos0 .. q_pos0 + nq - 1 against a KV cache holding positions 0 .. n_kv-1.
// Row i attends to keys 0 .. q_pos0 + i. Prefill: q_pos0 = 0, nq = n_kv = T.
// Decode of position t: q_pos0 = t, nq = 1, n_kv = t + 1.
struct AttentionArgs {
  const float* q = nullptr;  // [nq][n_heads][head_dim]
  const float* k = nullptr;  // [n_kv][n_kv_heads][head_dim]
  const float* v = nullptr;  // [n_kv][n_kv_heads][head_dim]
  float* out = nullptr;      // [nq][n_heads][head_dim]
  int64_t nq = 0;
  int64_t q_pos0 = 0;
  int64_t n_kv = 0;
  int64_t n_heads = 0;
  int64_t n_kv_heads = 0;
  int64_t head_dim = 0;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual BackendKind kind() const = 0;
  std::string_view name() const { return BackendName(kind()); }

  // Threads the CPU backends may use (>= 1); results never depend on it.
  virtual void SetThreads(int threads) { (void)threads; }

  // The public ops validate their arguments (kernels/op_checks.h, the same
  // checks for every backend and executor) and then call the backend's *Impl.

  // Packs W[n][k] (w.rows = n, w.cols = k) for Gemm on this backend.
  StatusOr<std::unique_ptr<PackedWeights>> PackWeights(const WeightView& w);

  // y[m][n] = sum_k x[m][k] * W[n][k] (+ bias[n]): the chunk-tree order of
  // docs/determinism.md §3.1. bias may be null. m >= 1. w must come from this
  // backend's PackWeights.
  Status Gemm(const float* x, int64_t m, const PackedWeights& w,
              const float* bias, float* y);

  // y[r][i] = (x[r][i] * inv_rms[r]) * gamma[i]  (§3.3). gamma: 1 x dim.
  Status RmsNorm(const float* x, int64_t rows, int64_t dim,
                 const WeightView& gamma, float eps, float* y);

  // Rotates x[rows][n_heads][table.head_dim] in place, row r at positions[r]
  // (HF rotate_half pairing, §3.4).
  Status Rope(float* x, int64_t rows, int64_t n_heads, const int64_t* positions,
              const RopeTable& table);

  // §3.5.
  Status Attention(const AttentionArgs& args);

  // y[i] = silu(gate[i]) * up[i], silu(g) = g / (1 + exp(-g))  (§3.6).
  // y may equal gate or up.
  Status SwiGlu(const float* gate, const float* up, int64_t n, float* y);

  // Row-wise softmax of x[rows][n] (§3.7). y may equal x.
  Status Softmax(const float* x, int64_t rows, int64_t n, float* y);

  // y[i] = a[i] + b[i] (§3.8). y may equal a or b.
  Status Add(const float* a, const float* b, int64_t n, float* y);

  // y[r][:] = table[ids[r]][:] widened to fp32 (§3.9).
  Status Embedding(const WeightView& table, const int32_t* ids, int64_t n_ids,
                   float* y);

  // Index of the largest of x[r][0..n) per row, lowest index on ties
  // (§3.10).
  Status Argmax(const float* x, int64_t rows, int64_t n, int64_t* out);

 protected:
  // Called with validated arguments only.
  virtual StatusOr<std::unique_ptr<PackedWeights>> PackWeightsImpl(
      const WeightView& w) = 0;
  virtual Status GemmImpl(const float* x, int64_t m, const PackedWeights& w,
                          const float* bias, float* y) = 0;
  virtual Status RmsNormImpl(const float* x, int64_t rows, int64_t dim,
                             const WeightView& gamma, float eps, float* y) = 0;
  virtual Status RopeImpl(float* x, int64_t rows, int64_t n_heads,
                          const int64_t* positions, const RopeTable& table) = 0;
  virtual Status AttentionImpl(const AttentionArgs& args) = 0;
  virtual Status SwiGluImpl(const float* gate, const float* up, int64_t n,
                            float* y) = 0;
  virtual Status SoftmaxImpl(const float* x, int64_t rows, int64_t n,
                             float* y) = 0;
  virtual Status AddImpl(const float* a, const float* b, int64_t n,
                         float* y) = 0;
  virtual Status EmbeddingImpl(const WeightView& table, const int32_t* ids,
                               int64_t n_ids, float* y) = 0;
  virtual Status ArgmaxImpl(const float* x, int64_t rows, int64_t n,
                            int64_t* out) = 0;
};

}  // namespace layerproof::kernels

#endif  // LAYERPROOF_KERNELS_BACKEND_H_
