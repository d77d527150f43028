// The CUDA executor (cuda_executor.h): device buffers, the one-time uploads
// of prepared weights, and each op as a launch on the executor's stream.
//
// Arguments are checked by kernels/op_checks.h, as a Backend's are (the
// launch functions assume checked arguments); ids and positions are host
// arrays, so their ranges are checked before they are uploaded.
#include "kernels/model/cuda_executor.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "kernels/backend.h"
#include "kernels/cuda/gemm_layout.h"
#include "kernels/cuda/internal/cuda_status.h"
#include "kernels/cuda/launch.h"
#include "kernels/dtype.h"
#include "kernels/op_checks.h"

namespace layerproof::kernels::model {
namespace {

// The device every CUDA executor runs on (MakeCudaBackend's too).
constexpr int kDevice = 0;
// Pinned host memory that uploads of host arrays and CopyToHost go through;
// larger copies go in pieces of this size.
constexpr size_t kStagingBytes = size_t{8} << 20;
// Attention scratch per call: query rows are processed in passes that fit.
constexpr size_t kAttentionScratchBudget = size_t{256} << 20;

size_t Bytes(int64_t count, size_t elem) {
  return static_cast<size_t>(count) * elem;
}

// A runtime call's result as Status (Internal naming `what`). A failure also
// clears the thread's last-error slot, so a non-sticky error (out of memory)
// is not reported again by the next launch's check; sticky errors keep
// failing every later call anyway.
Status Cuda(cudaError_t err, std::string_view what) {
  if (err == cudaSuccess) return OkStatus();
  cudaGetLastError();
  return cuda::CudaStatus(err, what);
}

// Returns the Status of a failed runtime call; `what` is built only then.
#define LP_CUDA_CALL(expr, what)                                        \
  do {                                                                  \
    const cudaError_t lp_cuda_err_ = (expr);                            \
    if (lp_cuda_err_ != cudaSuccess) return Cuda(lp_cuda_err_, (what)); \
  } while (0)

// Frees device memory once all work queued on the device is done: the
// engine releases buffers without knowing which queued kernels still read
// them (cudaFree synchronises in practice; this makes it a guarantee).
// Errors are ignored, as in any destructor.
void FreeAfterDeviceWork(void* p) {
  if (p == nullptr) return;
  int current = kDevice;
  if (cudaGetDevice(&current) != cudaSuccess) current = kDevice;
  if (current != kDevice) cudaSetDevice(kDevice);
  cudaDeviceSynchronize();
  cudaFree(p);
  if (current != kDevice) cudaSetDevice(current);
  cudaGetLastError();
}

// Buffer's release function: stateless, so a Buffer may outlive its
// executor.
void ReleaseDeviceFloats(float* p) { FreeAfterDeviceWork(p); }

struct DeviceFreeAfterWork {
  void operator()(void* p) const { FreeAfterDeviceWork(p); }
};
using DeviceMemory = std::unique_ptr<void, DeviceFreeAfterWork>;

// `bytes` of memory on the current device; never null (at least 4 bytes).
StatusOr<DeviceMemory> AllocateDevice(size_t bytes, const std::string& what) {
  void* p = nullptr;
  LP_CUDA_CALL(
      cudaMalloc(&p, std::max<size_t>(bytes, 4)),
      "cudaMalloc (" + what + ", " + std::to_string(bytes) + " bytes)");
  return DeviceMemory(p);
}

struct StreamDestroy {
  void operator()(cudaStream_t s) const { cudaStreamDestroy(s); }
};
using StreamHandle =
    std::unique_ptr<std::remove_pointer_t<cudaStream_t>, StreamDestroy>;

struct EventDestroy {
  void operator()(cudaEvent_t e) const { cudaEventDestroy(e); }
};
using EventHandle =
    std::unique_ptr<std::remove_pointer_t<cudaEvent_t>, EventDestroy>;

struct PinnedFree {
  void operator()(void* p) const { cudaFreeHost(p); }
};
using PinnedMemory = std::unique_ptr<void, PinnedFree>;

// Device memory that grows to the largest size asked of it. Growing frees
// the old memory after the device's queued work, so work already enqueued
// with it is unaffected.
class DeviceScratch {
 public:
  // At least `bytes` of device memory (null while nothing was ever needed).
  StatusOr<void*> Get(size_t bytes, const char* what) {
    if (bytes > bytes_) {
      memory_.reset();
      bytes_ = 0;
      LP_ASSIGN_OR_RETURN(memory_, AllocateDevice(bytes, what));
      bytes_ = bytes;
    }
    return memory_.get();
  }
  void* data() const { return memory_.get(); }

 private:
  DeviceMemory memory_;
  size_t bytes_ = 0;
};

// Executor arguments beyond the ops' (kernels/op_checks.h), worded alike.
Status CheckCount(std::string_view op, int64_t count) {
  if (count < 0 || count > kMaxElements) {
    return BadArgument(
        op, "count",
        "got " + std::to_string(count) +
            ", want 0 <= count <= " + std::to_string(kMaxElements));
  }
  return OkStatus();
}

// The [rows][cols] view of a 1-D or 2-D weight tensor (rows = 1 for 1-D),
// checked as a Backend checks weights (CheckWeights).
StatusOr<WeightView> CheckedView(std::string_view op, const TensorView& t) {
  if (t.shape.empty() || t.shape.size() > 2) {
    return BadArgument(
        op, t.name,
        "got " + std::to_string(t.shape.size()) + " dimensions, want 1 or 2");
  }
  WeightView w;
  w.data = t.data;
  w.dtype = t.dtype;
  w.rows = t.shape.size() == 2 ? t.shape[0] : 1;
  w.cols = t.shape.back();
  LP_RETURN_IF_ERROR(CheckWeights(op, t.name, w));
  // Whole rows: a block-quantized row is its blocks (CheckWeights has
  // refused a row that is not whole blocks).
  const uint64_t want = uint64_t(w.rows) * uint64_t(RowBytes(w.dtype, w.cols));
  if (t.bytes != 0 && t.bytes != want) {
    return BadArgument(op, t.name,
                       std::to_string(t.bytes) + " bytes, want " +
                           std::to_string(want) + " for its shape and dtype");
  }
  return w;
}

class DeviceMatrix final : public Matrix {
 public:
  DeviceMatrix(const cuda::GemmLayout& layout, DeviceMemory memory)
      : layout_(layout), memory_(std::move(memory)) {}
  cuda::DeviceGemmWeights weights() const { return {memory_.get(), layout_}; }

 private:
  cuda::GemmLayout layout_;
  DeviceMemory memory_;
};

// A gamma (rows == 1) or an embedding table, in its stored dtype.
class DeviceVector final : public Vector {
 public:
  // `view` was checked (CheckedView); its data is replaced by `memory`.
  DeviceVector(const WeightView& view, DeviceMemory memory)
      : memory_(std::move(memory)),
        view_{memory_.get(), view.dtype, view.rows, view.cols} {}
  // The vector as weights in device memory.
  const WeightView& view() const { return view_; }

 private:
  DeviceMemory memory_;
  WeightView view_;
};

// `b` as the executor's own type, or InvalidArgument when another executor
// prepared it.
template <typename T, typename Base>
StatusOr<const T*> As(const Base& b, std::string_view op,
                      std::string_view arg) {
  const T* t = dynamic_cast<const T*>(&b);
  if (t == nullptr) {
    return BadArgument(op, arg, "was not prepared by a CUDA executor");
  }
  return t;
}

// A RoPE table in device memory and what identifies the host table it came
// from. A table is a pure function of (head_dim, theta, max_positions,
// scaling). Its address and size identify it while its engine lives; three
// probe rows (row 1, whose sin entries are the inverse frequencies to within
// rounding, the middle row and the last) also tell apart a new table that
// reuses a freed one's address, at a cost independent of the table's size.
struct DeviceRopeTable {
  const float* cos_host = nullptr;
  const float* sin_host = nullptr;
  int64_t head_dim = 0;
  int64_t max_positions = 0;
  std::vector<float> probe;
  DeviceMemory cos, sin;
};

// The probe rows of a well-formed table (cos then sin of each).
std::vector<float> RopeProbe(const RopeTable& t) {
  const int64_t half = t.head_dim / 2;
  const int64_t last = t.max_positions - 1;
  std::vector<float> probe;
  for (int64_t p : {std::min<int64_t>(1, last), last / 2, last}) {
    probe.insert(probe.end(), t.cos.begin() + p * half,
                 t.cos.begin() + (p + 1) * half);
    probe.insert(probe.end(), t.sin.begin() + p * half,
                 t.sin.begin() + (p + 1) * half);
  }
  return probe;
}

bool SameBits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() &&
         std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

class CudaExecutor final : public Executor {
 public:
  CudaExecutor(StreamHandle stream, EventHandle staging_free,
               PinnedMemory staging)
      : stream_(std::move(stream)),
        staging_free_(std::move(staging_free)),
        staging_(std::move(staging)) {}
  ~CudaExecutor() override {
    // Queued copies may still read the staging buffer, kernels the scratch.
    cudaStreamSynchronize(stream_.get());
    cudaGetLastError();
  }
  CudaExecutor(const CudaExecutor&) = delete;
  CudaExecutor& operator=(const CudaExecutor&) = delete;

  BackendKind kind() const override { return BackendKind::kCuda; }
  bool host_memory() const override { return false; }

  StatusOr<Buffer> Allocate(int64_t floats) override {
    LP_RETURN_IF_ERROR(CheckCount("Allocate", floats));
    LP_RETURN_IF_ERROR(Enter());
    void* p = nullptr;
    LP_CUDA_CALL(cudaMalloc(&p, std::max<size_t>(Bytes(floats, 4), 4)),
                 "cudaMalloc (Allocate " + std::to_string(floats) + " floats)");
    return Buffer(static_cast<float*>(p), floats, &ReleaseDeviceFloats);
  }

  Status CopyToHost(const float* src, int64_t count, float* dst) override {
    constexpr std::string_view op = "CopyToHost";
    LP_RETURN_IF_ERROR(CheckCount(op, count));
    if (count > 0) {
      LP_RETURN_IF_ERROR(CheckPtr(op, "src", src));
      LP_RETURN_IF_ERROR(CheckPtr(op, "dst", dst));
    }
    std::lock_guard<std::mutex> lock(mu_);
    LP_RETURN_IF_ERROR(Enter());
    return DownloadLocked(src, Bytes(count, 4), dst);
  }

  Status CopyFromHost(const float* src, int64_t count, float* dst) override {
    constexpr std::string_view op = "CopyFromHost";
    LP_RETURN_IF_ERROR(CheckCount(op, count));
    if (count == 0) return OkStatus();
    LP_RETURN_IF_ERROR(CheckPtr(op, "src", src));
    LP_RETURN_IF_ERROR(CheckPtr(op, "dst", dst));
    std::lock_guard<std::mutex> lock(mu_);
    LP_RETURN_IF_ERROR(Enter());
    return UploadLocked(src, Bytes(count, 4), dst, "CopyFromHost");
  }

  Status Copy(const float* src, int64_t count, float* dst) override {
    constexpr std::string_view op = "Copy";
    LP_RETURN_IF_ERROR(CheckCount(op, count));
    if (count == 0 || src == dst) return OkStatus();
    LP_RETURN_IF_ERROR(CheckPtr(op, "src", src));
    LP_RETURN_IF_ERROR(CheckPtr(op, "dst", dst));
    std::lock_guard<std::mutex> lock(mu_);
    LP_RETURN_IF_ERROR(Enter());
    LP_CUDA_CALL(cudaMemcpyAsync(dst, src, Bytes(count, 4),
                                 cudaMemcpyDeviceToDevice, stream_.get()),
                 "cudaMemcpyAsync (Copy)");
    return OkStatus();
  }

  StatusOr<std::unique_ptr<Matrix>> PrepareMatrix(
      const TensorView& w) override {
    if (w.shape.size() != 2) {
      return InvalidArgument("PrepareMatrix: " + w.name + " is not 2-D");
    }
    LP_ASSIGN_OR_RETURN(const WeightView view, CheckedView("PrepareMatrix", w));
    const cuda::GemmLayout layout =
        cuda::MakeGemmLayout(view.rows, view.cols, view.dtype);
    std::vector<unsigned char> packed(static_cast<size_t>(layout.bytes));
    cuda::PackGemmWeights(view, packed.data());
    std::lock_guard<std::mutex> lock(mu_);
    LP_RETURN_IF_ERROR(Enter());
    LP_ASSIGN_OR_RETURN(DeviceMemory memory,
                        AllocateDevice(packed.size(), "matrix " + w.name));
    LP_RETURN_IF_ERROR(UploadAndWaitLocked(packed.data(), packed.size(),
                                           memory.get(), "matrix " + w.name));
    return std::unique_ptr<Matrix>(
        std::make_unique<DeviceMatrix>(layout, std::move(memory)));
  }

  StatusOr<std::unique_ptr<Vector>> PrepareVector(
      const TensorView& v) override {
    LP_ASSIGN_OR_RETURN(const WeightView view, CheckedView("PrepareVector", v));
    const size_t bytes =
        Bytes(view.rows, size_t(RowBytes(view.dtype, view.cols)));
    std::lock_guard<std::mutex> lock(mu_);
    LP_RETURN_IF_ERROR(Enter());
    LP_ASSIGN_OR_RETURN(DeviceMemory memory,
                        AllocateDevice(bytes, "vector " + v.name));
    LP_RETURN_IF_ERROR(UploadAndWaitLocked(view.data, bytes, memory.get(),
                                           "vector " + v.name));
    return std::unique_ptr<Vector>(
        std::make_unique<DeviceVector>(view, std::move(memory)));
  }

  StatusOr<Bias> PrepareBias(const TensorView& b) override {
    LP_ASSIGN_OR_RETURN(const WeightView view, CheckedView("PrepareBias", b));
    if (view.rows != 1) {
      return BadArgument("PrepareBias", b.name,
                         "has " + std::to_string(view.rows) + " rows, want 1");
    }
    std::vector<float> widened(static_cast<size_t>(view.cols));
    for (int64_t i = 0; i < view.cols; ++i) {
      widened[i] = LoadAsFloat(view.data, view.dtype, i);
    }
    LP_ASSIGN_OR_RETURN(Buffer out, Allocate(view.cols));
    std::lock_guard<std::mutex> lock(mu_);
    LP_RETURN_IF_ERROR(Enter());
    LP_RETURN_IF_ERROR(UploadAndWaitLocked(widened.data(), Bytes(view.cols, 4),
                                           out.data(), "bias " + b.name));
    return out;
  }

  Status Gemm(const float* x, int64_t m, const Matrix& w, const float* bias,
              float* y) override {
    LP_RETURN_IF_ERROR(CheckGemmArgs(x, m, bias, y));
    LP_ASSIGN_OR_RETURN(const DeviceMatrix* dm,
                        As<DeviceMatrix>(w, "Gemm", "w"));
    const cuda::DeviceGemmWeights weights = dm->weights();
    const size_t scratch_bytes = cuda::GemmScratchBytes(m, weights.layout);
    std::lock_guard<std::mutex> lock(mu_);
    LP_RETURN_IF_ERROR(Enter());
    LP_ASSIGN_OR_RETURN(void* scratch,
                        scratch_.Get(scratch_bytes, "op scratch"));
    return cuda::LaunchGemm(x, m, weights, bias, y, scratch, scratch_bytes,
                            stream_.get());
  }

  Status RmsNorm(const float* x, int64_t rows, int64_t dim, const Vector& gamma,
                 float eps, float* y) override {
    LP_ASSIGN_OR_RETURN(const DeviceVector* g,
                        As<DeviceVector>(gamma, "RmsNorm", "gamma"));
    LP_RETURN_IF_ERROR(CheckRmsNormArgs(x, rows, dim, g->view(), eps, y));
    std::lock_guard<std::mutex> lock(mu_);
    LP_RETURN_IF_ERROR(Enter());
    return cuda::LaunchRmsNorm(x, rows, dim, g->view().data, g->view().dtype,
                               eps, y, stream_.get());
  }

  Status Rope(float* x, int64_t rows, int64_t n_heads, const int64_t* positions,
              const RopeTable& table) override {
    LP_RETURN_IF_ERROR(CheckRopeArgs(x, rows, n_heads, positions, table));
    std::lock_guard<std::mutex> lock(mu_);
    LP_RETURN_IF_ERROR(Enter());
    LP_RETURN_IF_ERROR(EnsureRopeTableLocked(table));
    LP_ASSIGN_OR_RETURN(const int64_t* device_positions,
                        PositionsLocked(positions, rows));
    return cuda::LaunchRope(x, rows, n_heads, table.head_dim, device_positions,
                            static_cast<const float*>(rope_.cos.get()),
                            static_cast<const float*>(rope_.sin.get()),
                            stream_.get());
  }

  Status Attention(const AttentionArgs& a) override {
    LP_RETURN_IF_ERROR(CheckAttentionArgs(a));
    // Query rows go in passes that fit the budget; the pass size never
    // changes a bit (launch.h).
    const size_t per_row = cuda::AttentionScratchBytes(a, 1);
    const int64_t rows =
        per_row == 0
            ? a.nq
            : std::clamp<int64_t>(
                  static_cast<int64_t>(kAttentionScratchBudget / per_row), 1,
                  a.nq);
    const size_t scratch_bytes = cuda::AttentionScratchBytes(a, rows);
    std::lock_guard<std::mutex> lock(mu_);
    LP_RETURN_IF_ERROR(Enter());
    LP_ASSIGN_OR_RETURN(void* scratch,
                        scratch_.Get(scratch_bytes, "op scratch"));
    return cuda::LaunchAttention(a, scratch, scratch_bytes, stream_.get());
  }

  Status SwiGlu(const float* gate, const float* up, int64_t n,
                float* y) override {
    LP_RETURN_IF_ERROR(CheckSwiGluArgs(gate, up, n, y));
    std::lock_guard<std::mutex> lock(mu_);
    LP_RETURN_IF_ERROR(Enter());
    return cuda::LaunchSwiGlu(gate, up, n, y, stream_.get());
  }

  Status Add(const float* a, const float* b, int64_t n, float* y) override {
    LP_RETURN_IF_ERROR(CheckAddArgs(a, b, n, y));
    std::lock_guard<std::mutex> lock(mu_);
    LP_RETURN_IF_ERROR(Enter());
    return cuda::LaunchAdd(a, b, n, y, stream_.get());
  }

  Status Embedding(const Vector& table, const int32_t* ids, int64_t n_ids,
                   float* y) override {
    LP_ASSIGN_OR_RETURN(const DeviceVector* t,
                        As<DeviceVector>(table, "Embedding", "table"));
    LP_RETURN_IF_ERROR(CheckEmbeddingArgs(t->view(), ids, n_ids, y));
    const size_t bytes = Bytes(n_ids, sizeof(int32_t));
    std::lock_guard<std::mutex> lock(mu_);
    LP_RETURN_IF_ERROR(Enter());
    LP_ASSIGN_OR_RETURN(void* device_ids, ids_.Get(bytes, "embedding ids"));
    LP_RETURN_IF_ERROR(UploadLocked(ids, bytes, device_ids, "Embedding ids"));
    return cuda::LaunchEmbedding(
        t->view().data, t->view().dtype, t->view().cols,
        static_cast<const int32_t*>(device_ids), n_ids, y, stream_.get());
  }

 private:
  // Makes the executor's device current on the calling thread. Also drops a
  // non-sticky error a release function left in this thread's last-error
  // slot, which the next launch's check would otherwise report.
  static Status Enter() {
    cudaGetLastError();
    return Cuda(cudaSetDevice(kDevice), "cudaSetDevice");
  }

  // Queues a copy of `bytes` of host memory to device memory `dst` through
  // the pinned staging buffer; `src` may be reused on return. A piece waits
  // only for the previous copy out of the staging buffer.
  Status UploadLocked(const void* src, size_t bytes, void* dst,
                      std::string_view what) {
    const auto* from = static_cast<const unsigned char*>(src);
    auto* to = static_cast<unsigned char*>(dst);
    for (size_t off = 0; off < bytes; off += kStagingBytes) {
      const size_t n = std::min(kStagingBytes, bytes - off);
      LP_CUDA_CALL(cudaEventSynchronize(staging_free_.get()),
                   "cudaEventSynchronize (staging, " + std::string(what) + ")");
      std::memcpy(staging_.get(), from + off, n);
      LP_CUDA_CALL(cudaMemcpyAsync(to + off, staging_.get(), n,
                                   cudaMemcpyHostToDevice, stream_.get()),
                   "cudaMemcpyAsync (" + std::string(what) + ")");
      LP_CUDA_CALL(cudaEventRecord(staging_free_.get(), stream_.get()),
                   "cudaEventRecord (staging, " + std::string(what) + ")");
    }
    return OkStatus();
  }

  // Copies `bytes` of device memory at `src` to host memory `dst` through
  // the pinned staging buffer, after all queued work. Each piece is an
  // asynchronous copy followed by a stream synchronisation, so execution
  // errors of earlier kernels surface here. Overlapping the copy with later
  // work (double-buffered staging, events per tap) is future work.
  Status DownloadLocked(const void* src, size_t bytes, void* dst) {
    const auto* from = static_cast<const unsigned char*>(src);
    auto* to = static_cast<unsigned char*>(dst);
    size_t off = 0;
    do {
      // Stream order puts this copy after any pending upload out of the
      // staging buffer.
      const size_t n = std::min(kStagingBytes, bytes - off);
      if (n > 0) {
        LP_CUDA_CALL(cudaMemcpyAsync(staging_.get(), from + off, n,
                                     cudaMemcpyDeviceToHost, stream_.get()),
                     "cudaMemcpyAsync (CopyToHost)");
      }
      LP_CUDA_CALL(cudaStreamSynchronize(stream_.get()),
                   "cudaStreamSynchronize (CopyToHost; reports the errors of "
                   "the kernels queued before)");
      if (n > 0) std::memcpy(to + off, staging_.get(), n);
      off += n;
    } while (off < bytes);
    return OkStatus();
  }

  // A one-time upload (weights, the RoPE table): copies straight from
  // pageable memory, in stream order, and waits for it.
  Status UploadAndWaitLocked(const void* src, size_t bytes, void* dst,
                             const std::string& what) {
    LP_CUDA_CALL(
        cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, stream_.get()),
        "cudaMemcpyAsync (upload " + what + ")");
    LP_CUDA_CALL(cudaStreamSynchronize(stream_.get()),
                 "cudaStreamSynchronize (upload " + what + ")");
    return OkStatus();
  }

  // Makes rope_ hold `table` (well-formed) in device memory. The engine
  // keeps one table for its life, so this uploads once per engine.
  Status EnsureRopeTableLocked(const RopeTable& table) {
    std::vector<float> probe = RopeProbe(table);
    if (rope_.cos != nullptr && rope_.cos_host == table.cos.data() &&
        rope_.sin_host == table.sin.data() &&
        rope_.head_dim == table.head_dim &&
        rope_.max_positions == table.max_positions &&
        SameBits(rope_.probe, probe)) {
      return OkStatus();
    }
    rope_ = DeviceRopeTable{};  // the old table is freed after queued work
    const size_t bytes = Bytes(static_cast<int64_t>(table.cos.size()), 4);
    DeviceRopeTable t;
    LP_ASSIGN_OR_RETURN(t.cos, AllocateDevice(bytes, "RoPE cos table"));
    LP_ASSIGN_OR_RETURN(t.sin, AllocateDevice(bytes, "RoPE sin table"));
    LP_RETURN_IF_ERROR(UploadAndWaitLocked(table.cos.data(), bytes, t.cos.get(),
                                           "RoPE cos table"));
    LP_RETURN_IF_ERROR(UploadAndWaitLocked(table.sin.data(), bytes, t.sin.get(),
                                           "RoPE sin table"));
    t.cos_host = table.cos.data();
    t.sin_host = table.sin.data();
    t.head_dim = table.head_dim;
    t.max_positions = table.max_positions;
    t.probe = std::move(probe);
    rope_ = std::move(t);
    return OkStatus();
  }

  // positions[0..rows) in device memory. Both RoPE calls of every layer of
  // a step pass the same positions, so they are uploaded only when they
  // differ from the last ones; stream order keeps an overwrite behind the
  // kernels that read the previous ones.
  StatusOr<const int64_t*> PositionsLocked(const int64_t* positions,
                                           int64_t rows) {
    const size_t bytes = Bytes(rows, sizeof(int64_t));
    if (positions_host_.size() == static_cast<size_t>(rows) &&
        std::memcmp(positions_host_.data(), positions, bytes) == 0) {
      return static_cast<const int64_t*>(positions_device_.data());
    }
    positions_host_.clear();  // stale until the new upload is queued
    LP_ASSIGN_OR_RETURN(void* device,
                        positions_device_.Get(bytes, "RoPE positions"));
    LP_RETURN_IF_ERROR(
        UploadLocked(positions, bytes, device, "RoPE positions"));
    positions_host_.assign(positions, positions + rows);
    return static_cast<const int64_t*>(device);
  }

  // Declared first, destroyed last: everything below is used on it.
  const StreamHandle stream_;
  // Recorded after each copy out of staging_; staging_ may be overwritten
  // once it has passed.
  const EventHandle staging_free_;
  const PinnedMemory staging_;  // kStagingBytes of pinned host memory

  // Guards everything below, and orders the work the ops queue on stream_.
  // (std::mutex: kernels/ links no Abseil.)
  std::mutex mu_;
  DeviceScratch scratch_;                // Gemm and Attention scratch
  DeviceScratch ids_;                    // Embedding ids
  DeviceScratch positions_device_;       // RoPE positions
  std::vector<int64_t> positions_host_;  // what positions_device_ holds
  DeviceRopeTable rope_;
};

}  // namespace

StatusOr<std::unique_ptr<Executor>> MakeCudaExecutor() {
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess || count < 1) {
    cudaGetLastError();  // no driver or no device: not an error here
    return Unavailable(
        std::string("cuda executor: no CUDA device (") +
        (err != cudaSuccess ? cudaGetErrorString(err) : "0 devices") + ")");
  }
  if (const cudaError_t set = cudaSetDevice(kDevice); set != cudaSuccess) {
    cudaGetLastError();
    return Unavailable(std::string("cuda executor: cannot use device 0: ") +
                       cudaGetErrorString(set));
  }
  if (Status probe = cuda::ProbeCurrentDevice(); !probe.ok()) {
    return Unavailable("cuda executor: " + probe.message());
  }
  cudaStream_t stream = nullptr;
  LP_CUDA_CALL(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking),
               "cudaStreamCreateWithFlags");
  StreamHandle stream_handle(stream);
  cudaEvent_t event = nullptr;
  LP_CUDA_CALL(cudaEventCreateWithFlags(&event, cudaEventDisableTiming),
               "cudaEventCreateWithFlags");
  EventHandle event_handle(event);
  void* staging = nullptr;
  LP_CUDA_CALL(cudaMallocHost(&staging, kStagingBytes),
               "cudaMallocHost (staging)");
  PinnedMemory staging_handle(staging);
  return std::unique_ptr<Executor>(std::make_unique<CudaExecutor>(
      std::move(stream_handle), std::move(event_handle),
      std::move(staging_handle)));
}

}  // namespace layerproof::kernels::model
