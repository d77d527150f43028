// The NEON backend against kernels/ref, bit for bit, aimed at what is
// specific to kernels/cpu/neon_*.cc: every row-tile remainder (m mod 4) and
// panel pairing of the GEMM micro-kernel, partial last panels, k around the
// 4-step and 256-chunk boundaries, every bf16 and fp16 bit pattern through
// the in-register widening, thread counts 1, 2 and 7 (column slices starting
// mid-matrix), and a caller thread that has set flush-to-zero.
// tests/kernels/cross_backend_test.cc covers the NEON backend too, with the
// other backends; on builds for other architectures this file is one
// skipped test.
#include <gtest/gtest.h>

#if defined(__aarch64__)

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "kernels/cpu/cpu_backends.h"
#include "kernels/ref/rope_table.h"
#include "tests/kernels/test_util.h"

namespace layerproof::kernels {
namespace {

using testing::BitsEqual;
using testing::MakeTestWeights;
using testing::RandomFloats;
using testing::Ref;

constexpr DType kDTypes[] = {DType::kBF16, DType::kF16, DType::kF32};

// Each test owns a NEON backend with the thread count of its parameter.
class NeonTest : public ::testing::TestWithParam<int> {
 protected:
  NeonTest() : neon_(cpu::MakeNeonBackend()) { neon_->SetThreads(GetParam()); }

  // Random m x k x n Gemm on ref and NEON; records a failure on mismatch.
  void CheckGemm(int64_t m, int64_t k, int64_t n, DType dtype, bool bias,
                 double special_rate) {
    SCOPED_TRACE("m=" + std::to_string(m) + " k=" + std::to_string(k) + " n=" +
                 std::to_string(n) + " dtype=" + std::string(DTypeName(dtype)) +
                 " bias=" + std::to_string(bias) +
                 " specials=" + std::to_string(special_rate));
    const auto x = RandomFloats(rng_, m * k, 2.0f, special_rate);
    const auto w = MakeTestWeights(
        RandomFloats(rng_, n * k, 0.5f, special_rate), n, k, dtype);
    const auto b = RandomFloats(rng_, n, 1.0f, special_rate);
    CompareGemm(x, m, w.view, bias ? b.data() : nullptr);
  }

  void CompareGemm(const std::vector<float>& x, int64_t m, const WeightView& w,
                   const float* bias) {
    EXPECT_TRUE(testing::GemmMatchesRef(*neon_, x, m, w, bias));
  }

  std::unique_ptr<Backend> neon_;
  std::mt19937_64 rng_{static_cast<uint64_t>(GetParam()) * 104729 + 3};
};

TEST_P(NeonTest, GemmEveryTileRemainderAndPanelTail) {
  // n: one partial panel, exact panels, a lone last panel of a pair, pairs.
  const int64_t ns[] = {1, 5, 15, 16, 17, 31, 32, 33, 48, 49, 80, 133};
  // k: below, at and past the 4-step and the 256-chunk boundaries.
  const int64_t ks[] = {1, 3, 4, 5, 7, 255, 256, 257, 260, 513};
  for (int64_t m = 1; m <= 9; ++m) {
    for (int64_t n : ns) {
      CheckGemm(m, ks[rng_() % std::size(ks)], n, kDTypes[rng_() % 3],
                rng_() % 2, 0);
      if (HasFailure()) return;
    }
  }
}

TEST_P(NeonTest, GemmRandomShapes) {
  for (int trial = 0; trial < 120; ++trial) {
    const int64_t m = 1 + rng_() % (trial % 8 == 0 ? 20 : 6);
    const int64_t k = 1 + rng_() % (trial % 6 == 0 ? 1500 : 300);
    const int64_t n = 1 + rng_() % (trial % 5 == 0 ? 400 : 70);
    CheckGemm(m, k, n, kDTypes[trial % 3], trial % 2, 0);
    if (HasFailure()) return;
  }
}

TEST_P(NeonTest, GemmSpecialValues) {
  for (int trial = 0; trial < 60; ++trial) {
    CheckGemm(1 + rng_() % 6, 1 + rng_() % 600, 1 + rng_() % 70,
              kDTypes[trial % 3], trial % 2, trial % 3 == 0 ? 0.5 : 0.05);
    if (HasFailure()) return;
  }
}

TEST_P(NeonTest, GemmManyChunksInTheHalvingTree) {
  // 11 and 23 chunks: trees that are not balanced binary trees.
  CheckGemm(1, 11 * 256 - 7, 40, DType::kBF16, true, 0);
  CheckGemm(3, 23 * 256, 17, DType::kF16, false, 0.01);
  CheckGemm(5, 5 * 256 + 1, 33, DType::kF32, true, 0);
}

// y = 1 * W[j][0] and -3 * W[j][0] for every 16-bit pattern W[j][0]: the
// widening must be exact for subnormals, ±0, ±inf and NaN alike.
TEST_P(NeonTest, GemmWidensEveryBf16AndF16Pattern) {
  constexpr int64_t kPatterns = 1 << 16;
  std::vector<uint16_t> bits(kPatterns);
  for (int64_t i = 0; i < kPatterns; ++i) bits[i] = static_cast<uint16_t>(i);
  const std::vector<float> x = {1.0f, -3.0f};
  for (DType dt : {DType::kBF16, DType::kF16}) {
    SCOPED_TRACE(std::string(DTypeName(dt)));
    CompareGemm(x, 2, WeightView{bits.data(), dt, kPatterns, 1}, nullptr);
  }
}

// A host library built with -ffast-math may leave FZ set on the calling
// thread; the backend's FpEnvGuard must keep subnormal results.
TEST_P(NeonTest, GemmIgnoresCallerFlushToZero) {
  const int64_t m = 3, k = 70, n = 37;
  std::vector<float> x(m * k), wf(n * k);
  std::uniform_real_distribution<float> u(0.5f, 1.0f);
  for (auto& v : x) v = u(rng_) * 1e-20f;
  for (auto& v : wf) v = (rng_() % 2 ? 1 : -1) * u(rng_) * 1e-20f;
  const auto w = MakeTestWeights(wf, n, k, DType::kF32);
  auto ref_w = Ref()->PackWeights(w.view);
  auto neon_w = neon_->PackWeights(w.view);
  ASSERT_TRUE(ref_w.ok() && neon_w.ok());
  std::vector<float> want(m * n), got(m * n);
  ASSERT_TRUE(Ref()->Gemm(x.data(), m, **ref_w, nullptr, want.data()).ok());
  int subnormal = 0;
  for (float v : want) subnormal += std::fpclassify(v) == FP_SUBNORMAL;
  ASSERT_GT(subnormal, 0) << "the inputs should give subnormal outputs";

  uint64_t fpcr;
  __asm__ volatile("mrs %0, fpcr" : "=r"(fpcr));
  __asm__ volatile("msr fpcr, %0" : : "r"(fpcr | (uint64_t{1} << 24)));
  const Status s = neon_->Gemm(x.data(), m, **neon_w, nullptr, got.data());
  __asm__ volatile("msr fpcr, %0" : : "r"(fpcr));
  ASSERT_TRUE(s.ok());
  EXPECT_TRUE(BitsEqual(want, got));
}

TEST_P(NeonTest, RmsNormEveryGammaDType) {
  for (int trial = 0; trial < 60; ++trial) {
    const int64_t rows = 1 + rng_() % 9, dim = 1 + rng_() % 700;
    const auto x = RandomFloats(rng_, rows * dim, 4.0f, trial % 3 ? 0 : 0.05);
    const auto g = MakeTestWeights(RandomFloats(rng_, dim, 2.0f, 0.02), 1, dim,
                                   kDTypes[trial % 3]);
    std::vector<float> want(x.size()), got(x.size());
    ASSERT_TRUE(
        Ref()->RmsNorm(x.data(), rows, dim, g.view, 1e-5f, want.data()).ok());
    ASSERT_TRUE(
        neon_->RmsNorm(x.data(), rows, dim, g.view, 1e-5f, got.data()).ok());
    ASSERT_TRUE(BitsEqual(want, got)) << "rows=" << rows << " dim=" << dim;
  }
}

TEST_P(NeonTest, RopeOddHalfWidths) {
  for (int64_t hd : {2, 6, 10, 64, 96}) {
    auto table = BuildRopeTable(hd, 10000.0, 512);
    ASSERT_TRUE(table.ok());
    const int64_t rows = 1 + rng_() % 6, heads = 1 + rng_() % 5;
    std::vector<int64_t> pos(rows);
    for (auto& p : pos) p = rng_() % 512;
    auto want = RandomFloats(rng_, rows * heads * hd, 3.0f, 0.05);
    auto got = want;
    ASSERT_TRUE(Ref()->Rope(want.data(), rows, heads, pos.data(), *table).ok());
    ASSERT_TRUE(neon_->Rope(got.data(), rows, heads, pos.data(), *table).ok());
    ASSERT_TRUE(BitsEqual(want, got)) << "head_dim=" << hd;
  }
}

TEST_P(NeonTest, ElementwiseInPlaceAndTails) {
  for (int trial = 0; trial < 60; ++trial) {
    const int64_t n = 1 + rng_() % (trial % 10 == 0 ? 40000 : 100);
    const double sp = trial % 2 ? 0.1 : 0;
    const auto a = RandomFloats(rng_, n, trial % 3 == 0 ? 120.0f : 8.0f, sp);
    const auto b = RandomFloats(rng_, n, 8.0f, sp);
    std::vector<float> want(n), got = a;  // got: in place, y == gate / x / a
    ASSERT_TRUE(Ref()->SwiGlu(a.data(), b.data(), n, want.data()).ok());
    ASSERT_TRUE(neon_->SwiGlu(got.data(), b.data(), n, got.data()).ok());
    ASSERT_TRUE(BitsEqual(want, got)) << "SwiGlu n=" << n;
    got = a;
    ASSERT_TRUE(Ref()->Add(a.data(), b.data(), n, want.data()).ok());
    ASSERT_TRUE(neon_->Add(got.data(), b.data(), n, got.data()).ok());
    ASSERT_TRUE(BitsEqual(want, got)) << "Add n=" << n;
    got = a;
    ASSERT_TRUE(Ref()->Softmax(a.data(), 1, n, want.data()).ok());
    ASSERT_TRUE(neon_->Softmax(got.data(), 1, n, got.data()).ok());
    ASSERT_TRUE(BitsEqual(want, got)) << "Softmax n=" << n;
  }
}

TEST_P(NeonTest, SoftmaxAllMaskedZerosAndNan) {
  const std::vector<std::vector<float>> rows = {
      {-INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY},
      {-0.0f, -0.0f, 0.0f, -0.0f, -0.0f, -0.0f},
      {1.0f, 2.0f, 3.0f, 4.0f, NAN, 5.0f, 6.0f},
      {1.0f, 2.0f, 3.0f, 4.0f, 5.0f, 6.0f, 7.0f, 8.0f, -NAN},
      {INFINITY, 1.0f, 2.0f, 3.0f, 4.0f},
      {-1e-45f, -2e-45f, -3e-45f, -4e-45f, 1e-45f}};
  for (const auto& x : rows) {
    const int64_t n = x.size();
    std::vector<float> want(n), got(n);
    ASSERT_TRUE(Ref()->Softmax(x.data(), 1, n, want.data()).ok());
    ASSERT_TRUE(neon_->Softmax(x.data(), 1, n, got.data()).ok());
    EXPECT_TRUE(BitsEqual(want, got)) << "n=" << n;
  }
}

TEST_P(NeonTest, AttentionHeadDimTailsAndLongContext) {
  for (int trial = 0; trial < 24; ++trial) {
    const int64_t kv_heads = 1 + rng_() % 2;
    const int64_t heads = kv_heads * (1 << (rng_() % 3));
    const int64_t hd = std::vector<int64_t>{3, 20, 33, 64, 100}[trial % 5];
    const bool decode = trial % 2;
    const int64_t n_kv = 1 + rng_() % (trial % 6 == 0 ? 600 : 80);
    const int64_t nq = decode ? 1 : 1 + rng_() % std::min<int64_t>(n_kv, 8);
    const double sp = trial % 4 == 0 ? 0.02 : 0;
    const auto q = RandomFloats(rng_, nq * heads * hd, 2.0f, sp);
    const auto k = RandomFloats(rng_, n_kv * kv_heads * hd, 2.0f, sp);
    const auto v = RandomFloats(rng_, n_kv * kv_heads * hd, 2.0f, sp);
    std::vector<float> want(nq * heads * hd), got(want.size());
    AttentionArgs a{q.data(),  k.data(), v.data(), want.data(), nq,
                    n_kv - nq, n_kv,     heads,    kv_heads,    hd};
    ASSERT_TRUE(Ref()->Attention(a).ok());
    a.out = got.data();
    ASSERT_TRUE(neon_->Attention(a).ok());
    ASSERT_TRUE(BitsEqual(want, got))
        << "nq=" << nq << " n_kv=" << n_kv << " heads=" << heads
        << " kv_heads=" << kv_heads << " head_dim=" << hd;
  }
}

INSTANTIATE_TEST_SUITE_P(Threads, NeonTest, ::testing::Values(1, 2, 7),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return "t" + std::to_string(info.param);
                         });

}  // namespace
}  // namespace layerproof::kernels

#else  // !defined(__aarch64__)

TEST(NeonTest, OnlyOnAarch64) {
  GTEST_SKIP() << "the NEON backend is built for aarch64 only; run "
                  "scripts/test-aarch64.sh";
}

#endif  // defined(__aarch64__)
