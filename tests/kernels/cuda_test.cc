// The CUDA backend against kernels/ref, bit for bit: random shapes of every
// op (kernels/cuda/cross_check.h), both GEMM kernels forced through the
// launch API, chunk-tree corner cases, decode-vs-prefill attention rows,
// concurrency and error statuses. Skips when no usable CUDA device exists.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "kernels/cuda/cross_check.h"
#include "kernels/cuda/cuda_backend.h"
#include "kernels/cuda/gemm_layout.h"
#include "kernels/cuda/internal/device_memory.h"
#include "kernels/cuda/launch.h"
#include "kernels/golden.h"
#include "kernels/ref/ref_backend.h"
#include "kernels/ref/ref_ops.h"

namespace layerproof::kernels {
namespace {

using cuda::DeviceGemmWeights;
using cuda::DeviceMemory;
using cuda::GemmPath;

class CudaTest : public ::testing::Test {
 protected:
  void SetUp() override {
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
      cudaGetLastError();
      GTEST_SKIP() << "no CUDA device";
    }
    cuda_ = cuda::MakeCudaBackend();
    if (cuda_ == nullptr) {
      GTEST_SKIP() << "CUDA device 0 cannot run this build's kernels "
                      "(sm_80/89/90 images)";
    }
    ref_ = MakeRefBackend();
  }

  void ExpectOk(const CrossCheckResult& r) {
    EXPECT_TRUE(r.status.ok()) << r.name << ": " << r.status.ToString();
    EXPECT_EQ(r.mismatches, 0)
        << r.name << ": " << r.mismatches << " of " << r.elements
        << " outputs differ; first " << r.first_mismatch;
  }

  std::unique_ptr<Backend> cuda_;
  std::unique_ptr<Backend> ref_;
};

template <typename T>
DeviceMemory ToDevice(const T* host, size_t count) {
  auto m = cuda::AllocateDeviceMemory(count * sizeof(T), 0);
  EXPECT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(
      cudaMemcpy(m->get(), host, count * sizeof(T), cudaMemcpyHostToDevice),
      cudaSuccess);
  return std::move(m).value();
}

// Runs LaunchGemm with a forced path and returns y.
std::vector<float> GemmOnPath(const std::vector<float>& x, int64_t m,
                              const StoredMatrix& w,
                              const std::vector<float>& bias, GemmPath path) {
  const cuda::GemmLayout l = cuda::MakeGemmLayout(w.rows, w.cols, w.dtype);
  std::vector<unsigned char> packed(l.bytes);
  cuda::PackGemmWeights(w.view(), packed.data());
  DeviceMemory dw = ToDevice(packed.data(), packed.size());
  DeviceMemory dx = ToDevice(x.data(), x.size());
  DeviceMemory db = bias.empty() ? DeviceMemory(nullptr, cuda::DeviceFree{})
                                 : ToDevice(bias.data(), bias.size());
  std::vector<float> y(m * w.rows, 1234.5f);
  DeviceMemory dy = ToDevice(y.data(), y.size());
  const size_t scratch_bytes = cuda::GemmScratchBytes(m, l, path);
  auto scratch = cuda::AllocateDeviceMemory(scratch_bytes, 0);
  EXPECT_TRUE(scratch.ok());
  const Status s = cuda::LaunchGemm(
      static_cast<const float*>(dx.get()), m, DeviceGemmWeights{dw.get(), l},
      static_cast<const float*>(db.get()), static_cast<float*>(dy.get()),
      scratch->get(), scratch_bytes, nullptr, path);
  EXPECT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(
      cudaMemcpy(y.data(), dy.get(), y.size() * 4, cudaMemcpyDeviceToHost),
      cudaSuccess);
  return y;
}

std::vector<float> RefGemm(const std::vector<float>& x, int64_t m,
                           const StoredMatrix& w,
                           const std::vector<float>& bias) {
  std::vector<float> y(m * w.rows);
  ref::Gemm(x.data(), m, w.view(), bias.empty() ? nullptr : bias.data(),
            y.data());
  return y;
}

void ExpectBitsEqual(const std::vector<float>& got,
                     const std::vector<float>& want, const std::string& what) {
  CrossCheckResult r;
  CompareBits(got, want, r);
  EXPECT_EQ(r.mismatches, 0) << what << ": first " << r.first_mismatch;
}

TEST_F(CudaTest, RandomShapesMatchRef) {
  for (uint64_t seed : {1, 2, 3}) {
    CrossCheckOptions o;
    o.seed = seed;
    o.cases_per_op = 5;
    o.large = seed == 1;
    for (const CrossCheckResult& r : RunCrossChecks(*cuda_, *ref_, o)) {
      ExpectOk(r);
    }
  }
}

TEST_F(CudaTest, GoldenHashesMatchRef) {
  const std::vector<GoldenResult> got = RunGoldenCases(*cuda_);
  const std::vector<GoldenResult> want = RunGoldenCases(*ref_);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_TRUE(got[i].status.ok())
        << got[i].name << ": " << got[i].status.ToString();
    EXPECT_EQ(got[i].sha256_hex, want[i].sha256_hex) << got[i].name;
  }
}

// Both kernels on the same shapes: tails in m, n and k, one chunk and many.
TEST_F(CudaTest, SplitKAndTiledPathsAreBitIdentical) {
  struct Shape {
    int64_t m, k, n;
    DType dtype;
  };
  const Shape shapes[] = {
      {1, 1, 1, DType::kF32},      {3, 255, 33, DType::kBF16},
      {8, 257, 64, DType::kF16},   {9, 1000, 65, DType::kF32},
      {65, 513, 31, DType::kBF16}, {70, 4099, 100, DType::kF16},
      {2, 8197, 257, DType::kBF16}};
  uint32_t seed = 100;
  for (const Shape& s : shapes) {
    const std::vector<float> x = GoldenFloats(seed, s.m * s.k, 2.0f, true);
    const StoredMatrix w = StoreMatrix(
        GoldenFloats(seed + 1, s.n * s.k, 0.05f, true), s.n, s.k, s.dtype);
    const std::vector<float> bias = GoldenFloats(seed + 2, s.n, 0.5f, false);
    seed += 3;
    const std::vector<float> want = RefGemm(x, s.m, w, bias);
    const std::string what = "m=" + std::to_string(s.m) +
                             " k=" + std::to_string(s.k) +
                             " n=" + std::to_string(s.n);
    ExpectBitsEqual(GemmOnPath(x, s.m, w, bias, GemmPath::kSplitK), want,
                    "split-K " + what);
    ExpectBitsEqual(GemmOnPath(x, s.m, w, bias, GemmPath::kTiled), want,
                    "tiled " + what);
  }
}

// Every product underflows to -0: each chunk's chain stays -0 only if it
// starts from +0 and never touches the zero padding (fma(0, 0, -0) = +0).
TEST_F(CudaTest, NegativeZeroChunksSurvivePadding) {
  const int64_t m = 9, k = 300, n = 33;
  const std::vector<float> x(m * k, -1e-30f);
  const StoredMatrix w =
      StoreMatrix(std::vector<float>(n * k, 1e-30f), n, k, DType::kF32);
  const std::vector<float> want = RefGemm(x, m, w, {});
  ASSERT_TRUE(std::signbit(want[0]));
  ASSERT_EQ(want[0], 0.0f);
  ExpectBitsEqual(GemmOnPath(x, m, w, {}, GemmPath::kSplitK), want, "split-K");
  ExpectBitsEqual(GemmOnPath(x, m, w, {}, GemmPath::kTiled), want, "tiled");
}

// More chunks than the tiled kernel's stack allows: it must hand over to
// split-K and still match.
TEST_F(CudaTest, GemmBeyondTiledChunkLimit) {
  const int64_t m = 9, k = 256 * 4096 + 3, n = 2;
  const std::vector<float> x = GoldenFloats(7, m * k, 1.0f, false);
  const StoredMatrix w =
      StoreMatrix(GoldenFloats(8, n * k, 1.0f, false), n, k, DType::kBF16);
  const std::vector<float> want = RefGemm(x, m, w, {});
  ExpectBitsEqual(GemmOnPath(x, m, w, {}, GemmPath::kTiled), want, "tiled");
}

// Row t of a prefill equals the decode of position t against the same cache.
TEST_F(CudaTest, AttentionDecodeEqualsPrefillRow) {
  const int64_t t_len = 300, heads = 4, kv_heads = 2, hd = 64;
  const std::vector<float> q = GoldenFloats(1, t_len * heads * hd, 1.0f, false);
  const std::vector<float> k =
      GoldenFloats(2, t_len * kv_heads * hd, 1.0f, true);
  const std::vector<float> v =
      GoldenFloats(3, t_len * kv_heads * hd, 1.0f, false);
  std::vector<float> prefill(t_len * heads * hd);
  AttentionArgs a{q.data(), k.data(), v.data(), prefill.data(), t_len,
                  0,        t_len,    heads,    kv_heads,       hd};
  ASSERT_TRUE(cuda_->Attention(a).ok());
  for (int64_t t : {0, 1, 255, 256, 299}) {
    std::vector<float> row(heads * hd);
    AttentionArgs d{q.data() + t * heads * hd,
                    k.data(),
                    v.data(),
                    row.data(),
                    1,
                    t,
                    t + 1,
                    heads,
                    kv_heads,
                    hd};
    ASSERT_TRUE(cuda_->Attention(d).ok());
    ExpectBitsEqual(row,
                    std::vector<float>(prefill.begin() + t * heads * hd,
                                       prefill.begin() + (t + 1) * heads * hd),
                    "decode row " + std::to_string(t));
  }
}

// The attention launch splits query rows into passes by the scratch it gets;
// the result must not depend on the pass size.
TEST_F(CudaTest, AttentionPassesDoNotChangeBits) {
  const int64_t nq = 40, q_pos0 = 500, heads = 2, kv_heads = 1, hd = 32;
  const int64_t n_kv = q_pos0 + nq;
  const std::vector<float> q = GoldenFloats(4, nq * heads * hd, 1.0f, false);
  const std::vector<float> k =
      GoldenFloats(5, n_kv * kv_heads * hd, 1.0f, true);
  const std::vector<float> v =
      GoldenFloats(6, n_kv * kv_heads * hd, 1.0f, true);
  std::vector<float> want(nq * heads * hd);
  AttentionArgs a{q.data(), k.data(), v.data(), want.data(), nq,
                  q_pos0,   n_kv,     heads,    kv_heads,    hd};
  ref::Attention(a);
  DeviceMemory dq = ToDevice(q.data(), q.size());
  DeviceMemory dk = ToDevice(k.data(), k.size());
  DeviceMemory dv = ToDevice(v.data(), v.size());
  DeviceMemory dout = ToDevice(want.data(), want.size());
  AttentionArgs d = a;
  d.q = static_cast<const float*>(dq.get());
  d.k = static_cast<const float*>(dk.get());
  d.v = static_cast<const float*>(dv.get());
  d.out = static_cast<float*>(dout.get());
  for (int64_t rows : {1, 3, 40}) {
    const size_t bytes = cuda::AttentionScratchBytes(d, rows);
    auto scratch = cuda::AllocateDeviceMemory(bytes, 0);
    ASSERT_TRUE(scratch.ok());
    ASSERT_EQ(cudaMemset(dout.get(), 0xFF, want.size() * 4), cudaSuccess);
    ASSERT_TRUE(cuda::LaunchAttention(d, scratch->get(), bytes, nullptr).ok());
    std::vector<float> got(want.size());
    ASSERT_EQ(cudaMemcpy(got.data(), dout.get(), got.size() * 4,
                         cudaMemcpyDeviceToHost),
              cudaSuccess);
    ExpectBitsEqual(got, want, "rows per pass " + std::to_string(rows));
  }
}

TEST_F(CudaTest, SoftmaxAndRmsNormSpecialRows) {
  const float inf = INFINITY, nan = NAN;
  // +inf (inf - inf = NaN), NaN, all -inf, ±0 only, subnormals, huge values.
  const std::vector<std::vector<float>> rows = {
      {1.0f, inf, 2.0f},         {nan, 1.0f, 2.0f},
      {-inf, -inf, -inf},        {0.0f, -0.0f, -0.0f},
      {1e-45f, -1e-45f, 3e-39f}, {3.4e38f, 3.4e38f, -3.4e38f}};
  for (const std::vector<float>& x : rows) {
    std::vector<float> got(3), want(3);
    ASSERT_TRUE(cuda_->Softmax(x.data(), 1, 3, got.data()).ok());
    ASSERT_TRUE(ref_->Softmax(x.data(), 1, 3, want.data()).ok());
    ExpectBitsEqual(got, want, "softmax");
    const StoredMatrix g = StoreMatrix({1.0f, -2.0f, 0.5f}, 1, 3, DType::kBF16);
    ASSERT_TRUE(
        cuda_->RmsNorm(x.data(), 1, 3, g.view(), 0.0f, got.data()).ok());
    ASSERT_TRUE(
        ref_->RmsNorm(x.data(), 1, 3, g.view(), 0.0f, want.data()).ok());
    ExpectBitsEqual(got, want, "rmsnorm");
  }
}

TEST_F(CudaTest, ConcurrentOpsFromThreadsMatch) {
  const int64_t m = 3, k = 1000, n = 77;
  const std::vector<float> x = GoldenFloats(9, m * k, 1.0f, true);
  const StoredMatrix w =
      StoreMatrix(GoldenFloats(10, n * k, 1.0f, true), n, k, DType::kBF16);
  auto packed = cuda_->PackWeights(w.view());
  ASSERT_TRUE(packed.ok());
  const std::vector<float> want = RefGemm(x, m, w, {});
  std::vector<std::vector<float>> got(4, std::vector<float>(m * n));
  std::vector<Status> status(4);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int rep = 0; rep < 20 && status[t].ok(); ++rep) {
        status[t] = cuda_->Gemm(x.data(), m, **packed, nullptr, got[t].data());
      }
    });
  }
  for (std::thread& th : threads) th.join();
  for (int t = 0; t < 4; ++t) {
    EXPECT_TRUE(status[t].ok()) << status[t].ToString();
    ExpectBitsEqual(got[t], want, "thread " + std::to_string(t));
  }
}

TEST_F(CudaTest, ErrorsAreStatuses) {
  const StoredMatrix w =
      StoreMatrix(std::vector<float>(8, 1.0f), 2, 4, DType::kF32);
  auto ref_packed = ref_->PackWeights(w.view());
  ASSERT_TRUE(ref_packed.ok());
  std::vector<float> x(4, 1.0f), y(2);
  EXPECT_EQ(cuda_->Gemm(x.data(), 1, **ref_packed, nullptr, y.data()).code(),
            StatusCode::kInvalidArgument);

  const cuda::GemmLayout l = cuda::MakeGemmLayout(2, 600, DType::kF32);
  ASSERT_GT(cuda::GemmScratchBytes(1, l), 0u);
  const Status s = cuda::LaunchGemm(nullptr, 1, {nullptr, l}, nullptr, nullptr,
                                    nullptr, 0, nullptr);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();

  AttentionArgs a;
  a.nq = 1;
  a.n_kv = 10;
  a.q_pos0 = 9;
  a.n_heads = a.n_kv_heads = 1;
  a.head_dim = 8;
  EXPECT_EQ(cuda::LaunchAttention(a, nullptr, 0, nullptr).code(),
            StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace layerproof::kernels
