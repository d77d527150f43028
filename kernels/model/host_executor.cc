// The executor over a host-memory Backend: buffers are aligned host arrays,
// matrices are the backend's PackedWeights, vectors are views of the mapped
// tensors.
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <vector>

#include "kernels/model/executor.h"

namespace layerproof::kernels::model {
namespace {

WeightView ViewOf(const TensorView& t) {
  WeightView w;
  w.data = t.data;
  w.dtype = t.dtype;
  w.rows = t.shape.size() == 2 ? t.shape[0] : 1;
  w.cols = t.shape.empty() ? 0 : t.shape.back();
  return w;
}

class HostMatrix final : public Matrix {
 public:
  explicit HostMatrix(std::unique_ptr<PackedWeights> packed)
      : packed_(std::move(packed)) {}
  const PackedWeights& packed() const { return *packed_; }

 private:
  std::unique_ptr<PackedWeights> packed_;
};

class HostVector final : public Vector {
 public:
  explicit HostVector(const WeightView& view) : view_(view) {}
  const WeightView& view() const { return view_; }

 private:
  WeightView view_;
};

void ReleaseHost(float* p) { std::free(p); }

class HostExecutor final : public Executor {
 public:
  explicit HostExecutor(Backend* backend) : backend_(backend) {}
  BackendKind kind() const override { return backend_->kind(); }
  bool host_memory() const override { return true; }

  StatusOr<Buffer> Allocate(int64_t floats) override {
    if (floats < 0) return InvalidArgument("Allocate: negative size");
    // 64-byte alignment: whole cache lines for the SIMD kernels.
    const size_t bytes = (static_cast<size_t>(floats) * 4 + 63) / 64 * 64;
    void* p = std::aligned_alloc(64, bytes == 0 ? 64 : bytes);
    if (p == nullptr) {
      return Status(
          StatusCode::kInternal,
          "Allocate: out of memory for " + std::to_string(floats) + " floats");
    }
    return Buffer(static_cast<float*>(p), floats, &ReleaseHost);
  }
  Status CopyToHost(const float* src, int64_t count, float* dst) override {
    if (count > 0 && src != dst) std::memcpy(dst, src, count * sizeof(float));
    return OkStatus();
  }
  Status CopyFromHost(const float* src, int64_t count, float* dst) override {
    return CopyToHost(src, count, dst);
  }
  Status Copy(const float* src, int64_t count, float* dst) override {
    return CopyToHost(src, count, dst);
  }

  StatusOr<std::unique_ptr<Matrix>> PrepareMatrix(
      const TensorView& w) override {
    if (w.shape.size() != 2) {
      return InvalidArgument("PrepareMatrix: " + w.name + " is not 2-D");
    }
    auto packed = backend_->PackWeights(ViewOf(w));
    if (!packed.ok()) return packed.status();
    return std::unique_ptr<Matrix>(
        std::make_unique<HostMatrix>(std::move(*packed)));
  }
  StatusOr<std::unique_ptr<Vector>> PrepareVector(
      const TensorView& v) override {
    return std::unique_ptr<Vector>(std::make_unique<HostVector>(ViewOf(v)));
  }
  StatusOr<Bias> PrepareBias(const TensorView& b) override {
    const WeightView view = ViewOf(b);
    LP_ASSIGN_OR_RETURN(Buffer out, Allocate(view.cols));
    for (int64_t i = 0; i < view.cols; ++i) {
      out.data()[i] = LoadAsFloat(view.data, view.dtype, i);
    }
    return out;
  }

  Status Gemm(const float* x, int64_t m, const Matrix& w, const float* bias,
              float* y) override {
    return backend_->Gemm(x, m, static_cast<const HostMatrix&>(w).packed(),
                          bias, y);
  }
  Status RmsNorm(const float* x, int64_t rows, int64_t dim, const Vector& gamma,
                 float eps, float* y) override {
    return backend_->RmsNorm(
        x, rows, dim, static_cast<const HostVector&>(gamma).view(), eps, y);
  }
  Status Rope(float* x, int64_t rows, int64_t n_heads, const int64_t* positions,
              const RopeTable& table) override {
    return backend_->Rope(x, rows, n_heads, positions, table);
  }
  Status Attention(const AttentionArgs& args) override {
    return backend_->Attention(args);
  }
  Status SwiGlu(const float* gate, const float* up, int64_t n,
                float* y) override {
    return backend_->SwiGlu(gate, up, n, y);
  }
  Status Add(const float* a, const float* b, int64_t n, float* y) override {
    return backend_->Add(a, b, n, y);
  }
  Status Embedding(const Vector& table, const int32_t* ids, int64_t n_ids,
                   float* y) override {
    return backend_->Embedding(static_cast<const HostVector&>(table).view(),
                               ids, n_ids, y);
  }

 private:
  Backend* backend_;
};

}  // namespace

std::unique_ptr<Executor> MakeHostExecutor(Backend* backend) {
  return std::make_unique<HostExecutor>(backend);
}

}  // namespace layerproof::kernels::model
