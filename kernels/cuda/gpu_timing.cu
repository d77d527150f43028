#include <cuda_runtime.h>

#include "kernels/cuda/gpu_timing.h"
#ifdef LAYERPROOF_HAVE_CUBLAS
#include <cublas_v2.h>
#endif

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>

#include "kernels/cuda/gemm_layout.h"
#include "kernels/cuda/internal/cuda_status.h"
#include "kernels/cuda/internal/device_memory.h"
#include "kernels/cuda/launch.h"

namespace layerproof::kernels::cuda {
namespace {

// Fills n 32-bit words with small finite floats (a multiplicative hash), or,
// for 16-bit formats, pairs of the top halves of such floats.
__global__ void FillKernel(uint32_t* p, int64_t n, uint32_t salt) {
  for (int64_t i = int64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x) {
    const uint32_t h = (static_cast<uint32_t>(i) ^ salt) * 2654435761u;
    const float f = (static_cast<float>(h >> 8) * 0x1p-24f - 0.5f) * 0.25f;
    p[i] = __float_as_uint(f);
  }
}

// Streams n uint4 and writes a sum only when it is impossible, so the loads
// cannot be dropped.
__global__ void ReadKernel(const uint4* __restrict__ p, int64_t n,
                           uint32_t* sink) {
  uint32_t acc = 0;
  for (int64_t i = int64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x) {
    const uint4 v = __ldcs(p + i);
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == 0x9E3779B9u) *sink = acc;
}

class Timer {
 public:
  Timer() {
    cudaEventCreate(&start_);
    cudaEventCreate(&stop_);
  }
  ~Timer() {
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
  }
  Timer(const Timer&) = delete;
  Timer& operator=(const Timer&) = delete;

  // Mean milliseconds of fn over `reps` runs after `warmup` runs.
  StatusOr<double> Time(const std::function<Status()>& fn, int warmup,
                        int reps) {
    for (int i = 0; i < warmup; ++i) LP_RETURN_IF_ERROR(fn());
    LP_CUDA_RETURN_IF_ERROR(cudaEventRecord(start_), "cudaEventRecord");
    for (int i = 0; i < reps; ++i) LP_RETURN_IF_ERROR(fn());
    LP_CUDA_RETURN_IF_ERROR(cudaEventRecord(stop_), "cudaEventRecord");
    LP_CUDA_RETURN_IF_ERROR(cudaEventSynchronize(stop_), "timed run");
    float ms = 0;
    LP_CUDA_RETURN_IF_ERROR(cudaEventElapsedTime(&ms, start_, stop_),
                            "cudaEventElapsedTime");
    return static_cast<double>(ms) / reps;
  }

 private:
  cudaEvent_t start_ = nullptr;
  cudaEvent_t stop_ = nullptr;
};

StatusOr<DeviceMemory> Filled(size_t bytes, uint32_t salt) {
  LP_ASSIGN_OR_RETURN(DeviceMemory m, AllocateDeviceMemory(bytes, 0));
  FillKernel<<<1024, 256>>>(static_cast<uint32_t*>(m.get()),
                            static_cast<int64_t>(bytes / 4), salt);
  LP_RETURN_IF_ERROR(LaunchStatus("fill"));
  return std::move(m);  // nvcc's front end does not move implicitly here
}

#ifdef LAYERPROOF_HAVE_CUBLAS
struct CublasDestroy {
  void operator()(cublasHandle_t h) const { cublasDestroy(h); }
};
using CublasHandle =
    std::unique_ptr<std::remove_pointer_t<cublasHandle_t>, CublasDestroy>;

// cuBLAS's bf16 GEMM, the peer of our bf16 rows: Y[m][n] = X[m][k] W[n][k]^T
// (column-major: Y^T = W X^T) with bf16 W and X, fp32 Y and fp32
// accumulation. cuBLAS has no bf16 x fp32 GEMM, so its activations are bf16
// where ours are fp32 (half the activation bytes; the weights are the same).
Status CublasBf16Gemm(cublasHandle_t blas, int64_t m, int64_t n, int64_t k,
                      const void* w, const void* x, float* y) {
  const float one = 1.0f, zero = 0.0f;
  const cublasStatus_t st = cublasGemmEx(
      blas, CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(n), static_cast<int>(m),
      static_cast<int>(k), &one, w, CUDA_R_16BF, static_cast<int>(k), x,
      CUDA_R_16BF, static_cast<int>(k), &zero, y, CUDA_R_32F,
      static_cast<int>(n), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
  return st == CUBLAS_STATUS_SUCCESS ? OkStatus()
                                     : Internal("cublasGemmEx bf16 failed");
}
#endif

float* F(const DeviceMemory& m) { return static_cast<float*>(m.get()); }

struct Row {
  std::string op, shape, ours, peer, ratio;
};

void Print(std::FILE* out, const Row& r) {
  std::fprintf(out, "%-20s %-28s %-26s %-34s %s\n", r.op.c_str(),
               r.shape.c_str(), r.ours.c_str(), r.peer.c_str(),
               r.ratio.c_str());
}

std::string Fmt(const char* f, double a, double b = 0) {
  char buf[96];
  std::snprintf(buf, sizeof(buf), f, a, b);
  return buf;
}

// "bf16", "q4_0", ...
std::string LowerName(DType t) {
  std::string s(DTypeName(t));
  for (char& c : s) c = static_cast<char>(std::tolower(c));
  return s;
}

}  // namespace

Status RunGpuTimings(std::FILE* out, bool quick) {
  LP_CUDA_RETURN_IF_ERROR(cudaSetDevice(0), "cudaSetDevice");
  const int reps = quick ? 10 : 50;
  Timer timer;
  cudaStream_t s = nullptr;  // the legacy default stream: events see it all

  // Peer 1: measured bandwidth.
  const size_t bw_bytes = size_t{2} << 30;
  LP_ASSIGN_OR_RETURN(DeviceMemory big, Filled(bw_bytes, 1));
  LP_ASSIGN_OR_RETURN(DeviceMemory sink, AllocateDeviceMemory(4, 0));
  auto read = [&] {
    ReadKernel<<<4096, 512>>>(static_cast<const uint4*>(big.get()),
                              static_cast<int64_t>(bw_bytes / 16),
                              static_cast<uint32_t*>(sink.get()));
    return LaunchStatus("read");
  };
  LP_ASSIGN_OR_RETURN(double read_ms, timer.Time(read, 2, reps / 2 + 1));
  const double read_gbs = bw_bytes / read_ms / 1e6;
  auto copy = [&] {
    return CudaStatus(
        cudaMemcpyAsync(big.get(), static_cast<char*>(big.get()) + bw_bytes / 2,
                        bw_bytes / 2, cudaMemcpyDeviceToDevice, s),
        "memcpy");
  };
  LP_ASSIGN_OR_RETURN(double copy_ms, timer.Time(copy, 2, reps / 2 + 1));
  const double copy_gbs = bw_bytes / copy_ms / 1e6;  // read + write
  big.reset();
  Print(out, {"op", "shape", "layerproof", "peer", "ours/peer"});
  Print(out, {"bandwidth", "read 2 GiB", Fmt("%.0f GB/s", read_gbs),
              Fmt("memcpy D2D: %.0f GB/s", copy_gbs), "-"});

#ifdef LAYERPROOF_HAVE_CUBLAS
  cublasHandle_t handle = nullptr;
  if (cublasCreate(&handle) != CUBLAS_STATUS_SUCCESS) handle = nullptr;
  const CublasHandle owner(handle);
  cublasHandle_t blas = owner.get();
#endif

  // Decode GEMV: weight bytes / time against the read bandwidth. The
  // block-quantized weights are random bytes (any fp16 scales): the kernels
  // have no data-dependent branches, so the bits do not change the time.
  struct GemvShape {
    int64_t n, k;
    DType dtype;
  };
  const GemvShape gemvs[] = {
      {4096, 4096, DType::kBF16},  {14336, 4096, DType::kBF16},
      {4096, 14336, DType::kBF16}, {128256, 4096, DType::kBF16},
      {4096, 4096, DType::kF32},   {4096, 4096, DType::kQ8_0},
      {4096, 4096, DType::kQ4_0},  {14336, 4096, DType::kQ4_0},
      {4096, 14336, DType::kQ4_K}, {4096, 4096, DType::kQ6_K}};
  for (const GemvShape& g : gemvs) {
    const GemmLayout l = MakeGemmLayout(g.n, g.k, g.dtype);
    LP_ASSIGN_OR_RETURN(DeviceMemory w, Filled(l.bytes, 2));
    LP_ASSIGN_OR_RETURN(DeviceMemory x, Filled(g.k * 4, 3));
    LP_ASSIGN_OR_RETURN(DeviceMemory y, AllocateDeviceMemory(g.n * 4, 0));
    const size_t scratch_bytes = GemmScratchBytes(1, l);
    LP_ASSIGN_OR_RETURN(DeviceMemory scratch,
                        AllocateDeviceMemory(scratch_bytes, 0));
    const DeviceGemmWeights dw{w.get(), l};
    auto gemv = [&] {
      return LaunchGemm(F(x), 1, dw, nullptr, F(y), scratch.get(),
                        scratch_bytes, s);
    };
    LP_ASSIGN_OR_RETURN(double ms, timer.Time(gemv, 3, reps));
    const double bytes =
        IsBlockQuantized(g.dtype)
            ? static_cast<double>(l.bytes)
            : static_cast<double>(g.n) * g.k * DTypeSize(g.dtype);
    const double gbs = bytes / ms / 1e6;
    Row row{"gemv " + LowerName(g.dtype),
            "m=1 n=" + std::to_string(g.n) + " k=" + std::to_string(g.k),
            Fmt("%.1f us %.0f GB/s", ms * 1e3, gbs),
            Fmt("read BW %.0f GB/s", read_gbs),
            Fmt("%.0f%% of BW", 100.0 * gbs / read_gbs)};
#ifdef LAYERPROOF_HAVE_CUBLAS
    if (blas != nullptr && g.dtype == DType::kF32) {
      // Row-major W[n][k] is column-major k x n: y = W x is op(A) = A^T.
      LP_ASSIGN_OR_RETURN(DeviceMemory wp, Filled(g.n * g.k * 4, 4));
      const float one = 1.0f, zero = 0.0f;
      auto sgemv = [&] {
        const cublasStatus_t st =
            cublasSgemv(blas, CUBLAS_OP_T, g.k, g.n, &one, F(wp), g.k, F(x), 1,
                        &zero, F(y), 1);
        return st == CUBLAS_STATUS_SUCCESS ? OkStatus()
                                           : Internal("cublasSgemv failed");
      };
      LP_ASSIGN_OR_RETURN(double peer_ms, timer.Time(sgemv, 3, reps));
      row.peer = Fmt("cublasSgemv %.1f us %.0f GB/s", peer_ms * 1e3,
                     bytes / peer_ms / 1e6);
      row.ratio = Fmt("%.2fx time", ms / peer_ms);
    }
    if (blas != nullptr && g.dtype == DType::kBF16) {
      LP_ASSIGN_OR_RETURN(DeviceMemory xh, Filled(g.k * 2, 4));
      auto gemm = [&] {
        return CublasBf16Gemm(blas, 1, g.n, g.k, w.get(), xh.get(), F(y));
      };
      LP_ASSIGN_OR_RETURN(double peer_ms, timer.Time(gemm, 3, reps));
      row.peer = Fmt("cublasGemmEx %.1f us %.0f GB/s", peer_ms * 1e3,
                     bytes / peer_ms / 1e6);
      row.ratio =
          Fmt("%.2fx time, %.0f%% of BW", ms / peer_ms, 100.0 * gbs / read_gbs);
    }
#endif
    Print(out, row);
  }

  // Prefill GEMM.
  for (DType dt : {DType::kF32, DType::kBF16, DType::kQ4_0}) {
    const int64_t m = 512, n = 4096, k = 4096;
    const GemmLayout l = MakeGemmLayout(n, k, dt);
    LP_ASSIGN_OR_RETURN(DeviceMemory w, Filled(l.bytes, 5));
    LP_ASSIGN_OR_RETURN(DeviceMemory x, Filled(m * k * 4, 6));
    LP_ASSIGN_OR_RETURN(DeviceMemory y, AllocateDeviceMemory(m * n * 4, 0));
    const size_t scratch_bytes = GemmScratchBytes(m, l);
    LP_ASSIGN_OR_RETURN(DeviceMemory scratch,
                        AllocateDeviceMemory(scratch_bytes, 0));
    const DeviceGemmWeights dw{w.get(), l};
    auto gemm = [&] {
      return LaunchGemm(F(x), m, dw, nullptr, F(y), scratch.get(),
                        scratch_bytes, s);
    };
    LP_ASSIGN_OR_RETURN(double ms, timer.Time(gemm, 2, quick ? 3 : 10));
    const double flops = 2.0 * m * n * k;
    Row row{"gemm " + LowerName(dt), "m=512 n=4096 k=4096",
            Fmt("%.2f ms %.1f TFLOP/s", ms, flops / ms / 1e9), "-", "-"};
#ifdef LAYERPROOF_HAVE_CUBLAS
    if (blas != nullptr && dt == DType::kF32) {
      // Y[m][n] = X[m][k] W[n][k]^T; column-major: Y^T = W X^T.
      LP_ASSIGN_OR_RETURN(DeviceMemory wp, Filled(n * k * 4, 7));
      const float one = 1.0f, zero = 0.0f;
      auto sgemm = [&] {
        const cublasStatus_t st =
            cublasSgemm(blas, CUBLAS_OP_T, CUBLAS_OP_N, n, m, k, &one, F(wp), k,
                        F(x), k, &zero, F(y), n);
        return st == CUBLAS_STATUS_SUCCESS ? OkStatus()
                                           : Internal("cublasSgemm failed");
      };
      LP_ASSIGN_OR_RETURN(double peer_ms, timer.Time(sgemm, 2, quick ? 3 : 10));
      row.peer = Fmt("cublasSgemm %.2f ms %.1f TFLOP/s", peer_ms,
                     flops / peer_ms / 1e9);
      row.ratio = Fmt("%.2fx time", ms / peer_ms);
    }
    if (blas != nullptr && dt == DType::kBF16) {
      LP_ASSIGN_OR_RETURN(DeviceMemory xh, Filled(m * k * 2, 7));
      auto peer = [&] {
        return CublasBf16Gemm(blas, m, n, k, w.get(), xh.get(), F(y));
      };
      LP_ASSIGN_OR_RETURN(double peer_ms, timer.Time(peer, 2, quick ? 3 : 10));
      row.peer = Fmt("cublasGemmEx %.3f ms %.0f TFLOP/s", peer_ms,
                     flops / peer_ms / 1e9);
      row.ratio = Fmt("%.2fx time", ms / peer_ms);
    }
#endif
    Print(out, row);
  }

  // Attention: decode against long caches, and a prefill.
  struct AttnShape {
    int64_t nq, q_pos0;
  };
  for (const AttnShape& as :
       {AttnShape{1, 4095}, AttnShape{1, 32767}, AttnShape{2048, 0}}) {
    AttentionArgs a;
    a.nq = as.nq;
    a.q_pos0 = as.q_pos0;
    a.n_kv = as.q_pos0 + as.nq;
    a.n_heads = 32;
    a.n_kv_heads = 8;
    a.head_dim = 128;
    const int64_t kv = a.n_kv * a.n_kv_heads * a.head_dim;
    LP_ASSIGN_OR_RETURN(DeviceMemory q, Filled(a.nq * a.n_heads * 128 * 4, 8));
    LP_ASSIGN_OR_RETURN(DeviceMemory k, Filled(kv * 4, 9));
    LP_ASSIGN_OR_RETURN(DeviceMemory v, Filled(kv * 4, 10));
    LP_ASSIGN_OR_RETURN(DeviceMemory o,
                        AllocateDeviceMemory(a.nq * a.n_heads * 128 * 4, 0));
    const size_t per_row = AttentionScratchBytes(a, 1);
    const int64_t rows =
        std::clamp<int64_t>((size_t{256} << 20) / per_row, 1, a.nq);
    const size_t scratch_bytes = AttentionScratchBytes(a, rows);
    LP_ASSIGN_OR_RETURN(DeviceMemory scratch,
                        AllocateDeviceMemory(scratch_bytes, 0));
    a.q = F(q);
    a.k = F(k);
    a.v = F(v);
    a.out = F(o);
    auto attention = [&] {
      return LaunchAttention(a, scratch.get(), scratch_bytes, s);
    };
    LP_ASSIGN_OR_RETURN(
        double ms, timer.Time(attention, 2, a.nq > 1 ? (quick ? 2 : 5) : reps));
    const double kv_gbs = 2.0 * kv * 4 / ms / 1e6;
    Print(out,
          {a.nq == 1 ? "attention decode" : "attention prefill",
           "T=" + std::to_string(a.n_kv) + " h=32 kv=8 d=128",
           a.nq == 1 ? Fmt("%.1f us KV %.0f GB/s", ms * 1e3, kv_gbs)
                     : Fmt("%.2f ms", ms),
           a.nq == 1 ? Fmt("read BW %.0f GB/s", read_gbs) : "-",
           a.nq == 1 ? Fmt("%.0f%% of BW", 100.0 * kv_gbs / read_gbs) : "-"});
  }
#ifndef LAYERPROOF_HAVE_CUBLAS
  std::fprintf(out,
               "(cuBLAS not in this build: peers are the bandwidth "
               "figures only)\n");
#endif
  return CudaStatus(cudaDeviceSynchronize(), "timings");
}

}  // namespace layerproof::kernels::cuda
