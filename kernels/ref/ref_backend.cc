#include "kernels/ref/ref_backend.h"

#include <cstring>
#include <vector>

#include "kernels/ref/ref_ops.h"

namespace layerproof::kernels {
namespace {

// The ref "layout" is the stored one: W[n][k] row-major, copied so the
// caller's buffer may be released after packing.
class RefPackedWeights final : public PackedWeights {
 public:
  explicit RefPackedWeights(const WeightView& w)
      : PackedWeights(BackendKind::kRef, w.rows, w.cols, w.dtype),
        bytes_(static_cast<size_t>(w.rows * RowBytes(w.dtype, w.cols))) {
    std::memcpy(bytes_.data(), w.data, bytes_.size());
  }
  WeightView view() const { return {bytes_.data(), dtype(), n(), k()}; }

 private:
  std::vector<unsigned char> bytes_;
};

class RefBackend final : public Backend {
 public:
  BackendKind kind() const override { return BackendKind::kRef; }

 protected:
  StatusOr<std::unique_ptr<PackedWeights>> PackWeightsImpl(
      const WeightView& w) override {
    return std::unique_ptr<PackedWeights>(new RefPackedWeights(w));
  }
  Status GemmImpl(const float* x, int64_t m, const PackedWeights& w,
                  const float* bias, float* y) override {
    ref::Gemm(x, m, static_cast<const RefPackedWeights&>(w).view(), bias, y);
    return OkStatus();
  }
  Status RmsNormImpl(const float* x, int64_t rows, int64_t dim,
                     const WeightView& gamma, float eps, float* y) override {
    ref::RmsNorm(x, rows, dim, gamma, eps, y);
    return OkStatus();
  }
  Status RopeImpl(float* x, int64_t rows, int64_t n_heads,
                  const int64_t* positions, const RopeTable& table) override {
    ref::Rope(x, rows, n_heads, positions, table);
    return OkStatus();
  }
  Status AttentionImpl(const AttentionArgs& args) override {
    ref::Attention(args);
    return OkStatus();
  }
  Status SwiGluImpl(const float* gate, const float* up, int64_t n,
                    float* y) override {
    ref::SwiGlu(gate, up, n, y);
    return OkStatus();
  }
  Status SoftmaxImpl(const float* x, int64_t rows, int64_t n,
                     float* y) override {
    for (int64_t r = 0; r < rows; ++r) ref::SoftmaxRow(x + r * n, n, y + r * n);
    return OkStatus();
  }
  Status AddImpl(const float* a, const float* b, int64_t n, float* y) override {
    ref::Add(a, b, n, y);
    return OkStatus();
  }
  Status EmbeddingImpl(const WeightView& table, const int32_t* ids,
                       int64_t n_ids, float* y) override {
    ref::Embedding(table, ids, n_ids, y);
    return OkStatus();
  }
  Status ArgmaxImpl(const float* x, int64_t rows, int64_t n,
                    int64_t* out) override {
    for (int64_t r = 0; r < rows; ++r) out[r] = ref::ArgmaxRow(x + r * n, n);
    return OkStatus();
  }
};

}  // namespace

std::unique_ptr<Backend> MakeRefBackend() {
  return std::make_unique<RefBackend>();
}

}  // namespace layerproof::kernels
