#include "kernels/cpu/cpu_backend.h"

#include <algorithm>
#include <vector>

#include "kernels/cpu/cpu_backends.h"
#include "kernels/cpu/thread_pool.h"
#include "kernels/fp_env.h"
#include "kernels/quant.h"
#include "kernels/ref/ref_ops.h"

namespace layerproof::kernels::cpu {
namespace {

// Elementwise ops are cut into blocks of this many elements.
constexpr int64_t kElementBlock = 16384;

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

class CpuBackend final : public Backend {
 public:
  explicit CpuBackend(const IsaOps& ops)
      : ops_(ops), pool_(std::make_unique<ThreadPool>(DefaultThreadCount())) {}

  BackendKind kind() const override { return ops_.kind; }
  void SetThreads(int threads) override {
    pool_ = std::make_unique<ThreadPool>(std::max(1, threads));
  }

 protected:
  StatusOr<std::unique_ptr<PackedWeights>> PackWeightsImpl(
      const WeightView& w) override {
    if (IsBlockQuantized(w.dtype)) return ops_.quant->pack(kind(), w);
    return ops_.pack(w);
  }

  Status GemmImpl(const float* x, int64_t m, const PackedWeights& w,
                  const float* bias, float* y) override {
    if (IsBlockQuantized(w.dtype())) return QuantGemm(x, m, w, bias, y);
    RunColumns(m, w.n(), ops_.gemm_n_align, [&](int64_t begin, int64_t end) {
      ops_.gemm(x, m, w, bias, y, begin, end);
    });
    return OkStatus();
  }

  // §3.12: the activations are quantized once (rows in parallel), then the
  // columns are cut as for the float GEMM.
  Status QuantGemm(const float* x, int64_t m, const PackedWeights& w,
                   const float* bias, float* y) {
    const int64_t k = w.k();
    quant::QuantizedRows xq;
    xq.m = m;
    xq.k = k;
    xq.q.resize(size_t(m * k));
    xq.units.resize(size_t(m * (k / quant::kUnit)));
    Run(m, [&](int64_t r) {
      ops_.quant->quantize_row(x + r * k, k, xq.q.data() + r * k,
                               xq.units.data() + r * (k / quant::kUnit));
    });
    RunColumns(m, w.n(), ops_.quant->n_align, [&](int64_t begin, int64_t end) {
      ops_.quant->gemm(xq, w, bias, y, begin, end);
    });
    return OkStatus();
  }

  Status RmsNormImpl(const float* x, int64_t rows, int64_t dim,
                     const WeightView& gamma, float eps, float* y) override {
    Run(rows, [&](int64_t r) {
      ops_.rmsnorm(x + r * dim, 1, dim, gamma, eps, y + r * dim);
    });
    return OkStatus();
  }

  Status RopeImpl(float* x, int64_t rows, int64_t n_heads,
                  const int64_t* positions, const RopeTable& table) override {
    const int64_t row = n_heads * table.head_dim;
    Run(rows, [&](int64_t r) {
      ops_.rope(x + r * row, 1, n_heads, positions + r, table);
    });
    return OkStatus();
  }

  Status AttentionImpl(const AttentionArgs& a) override {
    // A task is a query row and a run of whole KV groups, so each K/V row is
    // read once for all the query heads that share it. Rows are cut into as
    // many parts as needed to keep every thread busy on a single decode row.
    // Each (row, head) output is computed inside one task, so the cut never
    // changes a bit.
    const int64_t group = a.n_heads / a.n_kv_heads;
    const int64_t parts =
        std::min<int64_t>(a.n_kv_heads, CeilDiv(pool_->threads(), a.nq));
    const int64_t heads_per_task = CeilDiv(a.n_kv_heads, parts) * group;
    const int64_t per_row = CeilDiv(a.n_heads, heads_per_task);
    pool_->ParallelFor(a.nq * per_row, [&](int64_t t, int) {
      FpEnvGuard guard;
      // Per-thread scores, kept across calls: no allocation per decode step.
      thread_local std::vector<float> s;
      if (s.size() < static_cast<size_t>(a.n_kv)) s.resize(a.n_kv);
      const int64_t row = t / per_row;
      const int64_t h0 = (t % per_row) * heads_per_task;
      const int64_t h1 = std::min(a.n_heads, h0 + heads_per_task);
      ops_.attention(a, row * a.n_heads + h0, row * a.n_heads + h1, s.data());
    });
    return OkStatus();
  }

  Status SwiGluImpl(const float* gate, const float* up, int64_t n,
                    float* y) override {
    RunBlocks(n, [&](int64_t b, int64_t len) {
      ops_.swiglu(gate + b, up + b, len, y + b);
    });
    return OkStatus();
  }

  Status SoftmaxImpl(const float* x, int64_t rows, int64_t n,
                     float* y) override {
    Run(rows, [&](int64_t r) { ops_.softmax(x + r * n, 1, n, y + r * n); });
    return OkStatus();
  }

  Status AddImpl(const float* a, const float* b, int64_t n, float* y) override {
    RunBlocks(
        n, [&](int64_t s, int64_t len) { ops_.add(a + s, b + s, len, y + s); });
    return OkStatus();
  }

  Status EmbeddingImpl(const WeightView& table, const int32_t* ids,
                       int64_t n_ids, float* y) override {
    FpEnvGuard guard;
    if (IsBlockQuantized(table.dtype)) {
      ref::Embedding(table, ids, n_ids, y);  // dequantization: not hot
      return OkStatus();
    }
    ops_.embedding(table, ids, n_ids, y);
    return OkStatus();
  }

  Status ArgmaxImpl(const float* x, int64_t rows, int64_t n,
                    int64_t* out) override {
    Run(rows, [&](int64_t r) { ops_.argmax(x + r * n, 1, n, out + r); });
    return OkStatus();
  }

 private:
  template <typename Fn>
  void Run(int64_t tasks, Fn fn) {
    pool_->ParallelFor(tasks, [&](int64_t t, int) {
      FpEnvGuard guard;
      fn(t);
    });
  }

  // Cuts n output columns into slices starting at multiples of n_align.
  // Decode (a few rows) is memory-bound: one equal slice per thread avoids
  // wake-ups and a ragged last task. Prefill is compute-bound: more tasks
  // than threads even out the load.
  template <typename Fn>
  void RunColumns(int64_t m, int64_t n, int64_t n_align, Fn fn) {
    const int64_t panels = CeilDiv(n, n_align);
    const int64_t per_thread = m <= 8 ? 1 : 8;
    const int64_t tasks =
        std::min<int64_t>(panels, per_thread * pool_->threads());
    const int64_t per_task = CeilDiv(panels, tasks) * n_align;
    Run(CeilDiv(n, per_task),
        [&](int64_t t) { fn(t * per_task, std::min(n, (t + 1) * per_task)); });
  }

  template <typename Fn>
  void RunBlocks(int64_t n, Fn fn) {
    Run(CeilDiv(n, kElementBlock), [&](int64_t t) {
      const int64_t begin = t * kElementBlock;
      fn(begin, std::min(kElementBlock, n - begin));
    });
  }

  const IsaOps& ops_;
  std::unique_ptr<ThreadPool> pool_;
};

}  // namespace

std::unique_ptr<Backend> MakeCpuBackend(const IsaOps& ops) {
  return std::make_unique<CpuBackend>(ops);
}

#if defined(__x86_64__)
std::unique_ptr<Backend> MakeAvx2Backend() { return MakeCpuBackend(Avx2Ops()); }
std::unique_ptr<Backend> MakeAvx512Backend() {
  return MakeCpuBackend(Avx512Ops());
}
#elif defined(__aarch64__)
std::unique_ptr<Backend> MakeNeonBackend() { return MakeCpuBackend(NeonOps()); }
#endif

}  // namespace layerproof::kernels::cpu
