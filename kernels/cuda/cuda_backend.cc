#include "kernels/cuda/cuda_backend.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <utility>
#include <vector>

#include "kernels/cuda/gemm_layout.h"
#include "kernels/cuda/internal/cuda_status.h"
#include "kernels/cuda/internal/device_memory.h"
#include "kernels/cuda/launch.h"

namespace layerproof::kernels::cuda {
namespace {

// Memory the pool keeps for reuse across ops instead of returning it to the
// driver at every synchronisation.
constexpr uint64_t kPoolKeepBytes = uint64_t{1} << 30;
// Attention scratch per call: query rows are processed in passes that fit.
constexpr size_t kAttentionScratchBudget = size_t{256} << 20;

size_t Bytes(int64_t count, size_t elem) {
  return static_cast<size_t>(count) * elem;
}

class CudaPackedWeights final : public PackedWeights {
 public:
  CudaPackedWeights(const GemmLayout& layout, DeviceMemory memory)
      : PackedWeights(BackendKind::kCuda, layout.n, layout.k, layout.dtype),
        layout_(layout),
        memory_(std::move(memory)) {}

  DeviceGemmWeights device() const { return {memory_.get(), layout_}; }

 private:
  GemmLayout layout_;
  DeviceMemory memory_;
};

class CudaBackend final : public Backend {
 public:
  CudaBackend(int device, MemPoolHandle pool)
      : device_(device), pool_(std::move(pool)) {}

  BackendKind kind() const override { return BackendKind::kCuda; }

 protected:
  StatusOr<std::unique_ptr<PackedWeights>> PackWeightsImpl(
      const WeightView& w) override {
    LP_RETURN_IF_ERROR(Enter());
    const GemmLayout layout = MakeGemmLayout(w.rows, w.cols, w.dtype);
    const size_t bytes = static_cast<size_t>(layout.bytes);
    // Block-quantized rows travel as stored (gemm_layout.h); float weights
    // are packed into column groups first.
    std::vector<unsigned char> packed;
    const void* src = w.data;
    if (!IsBlockQuantized(w.dtype)) {
      packed.resize(bytes);
      PackGemmWeights(w, packed.data());
      src = packed.data();
    }
    LP_ASSIGN_OR_RETURN(DeviceMemory memory,
                        AllocateDeviceMemory(bytes, device_));
    LP_CUDA_RETURN_IF_ERROR(
        cudaMemcpy(memory.get(), src, bytes, cudaMemcpyHostToDevice),
        "PackWeights upload");
    return std::unique_ptr<PackedWeights>(
        new CudaPackedWeights(layout, std::move(memory)));
  }

  Status GemmImpl(const float* x, int64_t m, const PackedWeights& w,
                  const float* bias, float* y) override {
    LP_RETURN_IF_ERROR(Enter());
    const DeviceGemmWeights dw =
        static_cast<const CudaPackedWeights&>(w).device();
    LP_ASSIGN_OR_RETURN(StreamBuffer dx, Upload(x, Bytes(m * w.k(), 4)));
    StreamBuffer dbias(nullptr, StreamFree{kStream});
    if (bias != nullptr) {
      LP_ASSIGN_OR_RETURN(dbias, Upload(bias, Bytes(w.n(), 4)));
    }
    LP_ASSIGN_OR_RETURN(StreamBuffer dy, Allocate(Bytes(m * w.n(), 4)));
    const size_t scratch_bytes = GemmScratchBytes(m, dw.layout);
    LP_ASSIGN_OR_RETURN(StreamBuffer scratch, Allocate(scratch_bytes));
    LP_RETURN_IF_ERROR(LaunchGemm(F(dx), m, dw, F(dbias), F(dy), scratch.get(),
                                  scratch_bytes, kStream));
    return Download(y, dy, Bytes(m * w.n(), 4));
  }

  Status RmsNormImpl(const float* x, int64_t rows, int64_t dim,
                     const WeightView& gamma, float eps, float* y) override {
    LP_RETURN_IF_ERROR(Enter());
    const size_t bytes = Bytes(rows * dim, 4);
    LP_ASSIGN_OR_RETURN(StreamBuffer dx, Upload(x, bytes));
    LP_ASSIGN_OR_RETURN(StreamBuffer dg,
                        Upload(gamma.data, Bytes(dim, DTypeSize(gamma.dtype))));
    LP_ASSIGN_OR_RETURN(StreamBuffer dy, Allocate(bytes));
    LP_RETURN_IF_ERROR(LaunchRmsNorm(F(dx), rows, dim, dg.get(), gamma.dtype,
                                     eps, F(dy), kStream));
    return Download(y, dy, bytes);
  }

  Status RopeImpl(float* x, int64_t rows, int64_t n_heads,
                  const int64_t* positions, const RopeTable& table) override {
    LP_RETURN_IF_ERROR(Enter());
    // Only the rows' table entries travel: row r reads entry r.
    const int64_t half = table.head_dim / 2;
    std::vector<float> cos_rows(static_cast<size_t>(rows * half));
    std::vector<float> sin_rows(cos_rows.size());
    for (int64_t r = 0; r < rows; ++r) {
      std::copy_n(table.cos.data() + positions[r] * half, half,
                  cos_rows.data() + r * half);
      std::copy_n(table.sin.data() + positions[r] * half, half,
                  sin_rows.data() + r * half);
    }
    std::vector<int64_t> iota(static_cast<size_t>(rows));
    std::iota(iota.begin(), iota.end(), int64_t{0});
    const size_t bytes = Bytes(rows * n_heads * table.head_dim, 4);
    LP_ASSIGN_OR_RETURN(StreamBuffer dx, Upload(x, bytes));
    LP_ASSIGN_OR_RETURN(StreamBuffer dc,
                        Upload(cos_rows.data(), Bytes(rows * half, 4)));
    LP_ASSIGN_OR_RETURN(StreamBuffer ds,
                        Upload(sin_rows.data(), Bytes(rows * half, 4)));
    LP_ASSIGN_OR_RETURN(StreamBuffer dp, Upload(iota.data(), Bytes(rows, 8)));
    LP_RETURN_IF_ERROR(LaunchRope(F(dx), rows, n_heads, table.head_dim,
                                  static_cast<const int64_t*>(dp.get()), F(dc),
                                  F(ds), kStream));
    return Download(x, dx, bytes);
  }

  Status AttentionImpl(const AttentionArgs& a) override {
    LP_RETURN_IF_ERROR(Enter());
    const size_t q_bytes = Bytes(a.nq * a.n_heads * a.head_dim, 4);
    const size_t kv_bytes = Bytes(a.n_kv * a.n_kv_heads * a.head_dim, 4);
    LP_ASSIGN_OR_RETURN(StreamBuffer dq, Upload(a.q, q_bytes));
    LP_ASSIGN_OR_RETURN(StreamBuffer dk, Upload(a.k, kv_bytes));
    LP_ASSIGN_OR_RETURN(StreamBuffer dv, Upload(a.v, kv_bytes));
    LP_ASSIGN_OR_RETURN(StreamBuffer dout, Allocate(q_bytes));
    const size_t per_row = AttentionScratchBytes(a, 1);
    const int64_t rows = std::clamp<int64_t>(
        static_cast<int64_t>(kAttentionScratchBudget / per_row), 1, a.nq);
    const size_t scratch_bytes = AttentionScratchBytes(a, rows);
    LP_ASSIGN_OR_RETURN(StreamBuffer scratch, Allocate(scratch_bytes));
    AttentionArgs d = a;
    d.q = F(dq);
    d.k = F(dk);
    d.v = F(dv);
    d.out = F(dout);
    LP_RETURN_IF_ERROR(
        LaunchAttention(d, scratch.get(), scratch_bytes, kStream));
    return Download(a.out, dout, q_bytes);
  }

  Status SwiGluImpl(const float* gate, const float* up, int64_t n,
                    float* y) override {
    LP_RETURN_IF_ERROR(Enter());
    const size_t bytes = Bytes(n, 4);
    LP_ASSIGN_OR_RETURN(StreamBuffer dg, Upload(gate, bytes));
    LP_ASSIGN_OR_RETURN(StreamBuffer du, Upload(up, bytes));
    LP_RETURN_IF_ERROR(LaunchSwiGlu(F(dg), F(du), n, F(dg), kStream));
    return Download(y, dg, bytes);
  }

  Status SoftmaxImpl(const float* x, int64_t rows, int64_t n,
                     float* y) override {
    LP_RETURN_IF_ERROR(Enter());
    const size_t bytes = Bytes(rows * n, 4);
    LP_ASSIGN_OR_RETURN(StreamBuffer dx, Upload(x, bytes));
    LP_RETURN_IF_ERROR(LaunchSoftmax(F(dx), rows, n, F(dx), kStream));
    return Download(y, dx, bytes);
  }

  Status AddImpl(const float* a, const float* b, int64_t n, float* y) override {
    LP_RETURN_IF_ERROR(Enter());
    const size_t bytes = Bytes(n, 4);
    LP_ASSIGN_OR_RETURN(StreamBuffer da, Upload(a, bytes));
    LP_ASSIGN_OR_RETURN(StreamBuffer db, Upload(b, bytes));
    LP_RETURN_IF_ERROR(LaunchAdd(F(da), F(db), n, F(da), kStream));
    return Download(y, da, bytes);
  }

  Status EmbeddingImpl(const WeightView& table, const int32_t* ids,
                       int64_t n_ids, float* y) override {
    LP_RETURN_IF_ERROR(Enter());
    // Only the looked-up rows travel: output row r reads gathered row r.
    const size_t row_bytes =
        static_cast<size_t>(RowBytes(table.dtype, table.cols));
    std::vector<unsigned char> rows(Bytes(n_ids, row_bytes));
    const auto* src = static_cast<const unsigned char*>(table.data);
    for (int64_t r = 0; r < n_ids; ++r) {
      std::memcpy(rows.data() + r * row_bytes, src + ids[r] * row_bytes,
                  row_bytes);
    }
    std::vector<int32_t> iota(static_cast<size_t>(n_ids));
    std::iota(iota.begin(), iota.end(), 0);
    LP_ASSIGN_OR_RETURN(StreamBuffer dt, Upload(rows.data(), rows.size()));
    LP_ASSIGN_OR_RETURN(StreamBuffer di, Upload(iota.data(), Bytes(n_ids, 4)));
    const size_t out_bytes = Bytes(n_ids * table.cols, 4);
    LP_ASSIGN_OR_RETURN(StreamBuffer dy, Allocate(out_bytes));
    LP_RETURN_IF_ERROR(LaunchEmbedding(dt.get(), table.dtype, table.cols,
                                       static_cast<const int32_t*>(di.get()),
                                       n_ids, F(dy), kStream));
    return Download(y, dy, out_bytes);
  }

  Status ArgmaxImpl(const float* x, int64_t rows, int64_t n,
                    int64_t* out) override {
    LP_RETURN_IF_ERROR(Enter());
    LP_ASSIGN_OR_RETURN(StreamBuffer dx, Upload(x, Bytes(rows * n, 4)));
    LP_ASSIGN_OR_RETURN(StreamBuffer dout, Allocate(Bytes(rows, 8)));
    LP_RETURN_IF_ERROR(LaunchArgmax(
        F(dx), rows, n, static_cast<int64_t*>(dout.get()), kStream));
    return Download(out, dout, Bytes(rows, 8));
  }

 private:
  // Every op runs on the calling thread's default stream, so concurrent ops
  // from different threads neither serialise nor share buffers.
  static inline const cudaStream_t kStream = cudaStreamPerThread;

  static float* F(const StreamBuffer& b) {
    return static_cast<float*>(b.get());
  }

  // Makes this backend's device current on the calling thread.
  Status Enter() const {
    return CudaStatus(cudaSetDevice(device_), "cudaSetDevice");
  }

  StatusOr<StreamBuffer> Allocate(size_t bytes) const {
    return AllocateStreamBuffer(bytes, pool_.get(), kStream);
  }

  StatusOr<StreamBuffer> Upload(const void* host, size_t bytes) const {
    LP_ASSIGN_OR_RETURN(StreamBuffer b, Allocate(bytes));
    if (bytes > 0) {
      LP_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(b.get(), host, bytes,
                                              cudaMemcpyHostToDevice, kStream),
                              "upload");
    }
    return b;
  }

  // Copies the result back and waits for the op: execution errors of every
  // kernel launched before surface here.
  Status Download(void* host, const StreamBuffer& b, size_t bytes) const {
    LP_CUDA_RETURN_IF_ERROR(
        cudaMemcpyAsync(host, b.get(), bytes, cudaMemcpyDeviceToHost, kStream),
        "download");
    return CudaStatus(cudaStreamSynchronize(kStream), "op execution");
  }

  const int device_;
  const MemPoolHandle pool_;
};

StatusOr<MemPoolHandle> CreatePool(int device) {
  int supported = 0;
  LP_CUDA_RETURN_IF_ERROR(
      cudaDeviceGetAttribute(&supported, cudaDevAttrMemoryPoolsSupported,
                             device),
      "cudaDeviceGetAttribute");
  if (!supported) {
    return Unavailable("cuda: device " + std::to_string(device) +
                       " has no stream-ordered memory pools");
  }
  cudaMemPoolProps props = {};
  props.allocType = cudaMemAllocationTypePinned;
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id = device;
  cudaMemPool_t pool = nullptr;
  LP_CUDA_RETURN_IF_ERROR(cudaMemPoolCreate(&pool, &props),
                          "cudaMemPoolCreate");
  MemPoolHandle handle(pool);
  uint64_t keep = kPoolKeepBytes;
  LP_CUDA_RETURN_IF_ERROR(
      cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep),
      "cudaMemPoolSetAttribute");
  return handle;
}

}  // namespace

std::unique_ptr<Backend> MakeCudaBackend() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count < 1) {
    cudaGetLastError();  // no driver or no device: not an error here
    return nullptr;
  }
  constexpr int kDevice = 0;
  if (cudaSetDevice(kDevice) != cudaSuccess || !ProbeCurrentDevice().ok()) {
    cudaGetLastError();
    return nullptr;
  }
  StatusOr<MemPoolHandle> pool = CreatePool(kDevice);
  if (!pool.ok()) {
    cudaGetLastError();
    return nullptr;
  }
  return std::make_unique<CudaBackend>(kDevice, std::move(pool).value());
}

}  // namespace layerproof::kernels::cuda
