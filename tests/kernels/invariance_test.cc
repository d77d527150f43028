// Invariance: the bits of an output never depend on how it was computed —
// batch row vs alone, prefill vs decode, thread count, buffer alignment
// (docs/determinism.md §5). Runs on every backend, ref included.
#include <gtest/gtest.h>

#if defined(__x86_64__)
#include <xmmintrin.h>
#endif

#include <random>
#include <thread>
#include <vector>

#include "kernels/cpu/thread_pool.h"
#include "tests/kernels/test_util.h"

namespace layerproof::kernels {
namespace {

using testing::BitsEqual;
using testing::MakeTestWeights;
using testing::RandomFloats;

class InvarianceTest : public ::testing::TestWithParam<BackendKind> {
 protected:
  void TearDown() override { B()->SetThreads(cpu::DefaultThreadCount()); }
  Backend* B() { return *GetBackend(GetParam()); }
  std::mt19937_64 rng_{42 + static_cast<uint64_t>(GetParam())};
};

TEST_P(InvarianceTest, GemmRowEqualsGemvOfThatRow) {
  for (DType dt : {DType::kBF16, DType::kF16, DType::kF32}) {
    const int64_t m = 13, k = 1000, n = 45;
    const auto x = RandomFloats(rng_, m * k, 2.0f, 0.01);
    const auto w = MakeTestWeights(RandomFloats(rng_, n * k, 0.1f), n, k, dt);
    const auto bias = RandomFloats(rng_, n, 1.0f);
    auto pw = B()->PackWeights(w.view);
    ASSERT_TRUE(pw.ok());
    std::vector<float> batch(m * n);
    ASSERT_TRUE(B()->Gemm(x.data(), m, **pw, bias.data(), batch.data()).ok());
    for (int64_t r = 0; r < m; ++r) {
      std::vector<float> one(n);
      ASSERT_TRUE(
          B()->Gemm(x.data() + r * k, 1, **pw, bias.data(), one.data()).ok());
      ASSERT_TRUE(BitsEqual(batch.data() + r * n, one.data(), n))
          << "row " << r;
    }
  }
}

TEST_P(InvarianceTest, AttentionPrefillRowEqualsDecodeAfterManySteps) {
  const int64_t T = 600, heads = 8, kv_heads = 2, hd = 64;
  const auto q = RandomFloats(rng_, T * heads * hd, 2.0f);
  const auto k = RandomFloats(rng_, T * kv_heads * hd, 2.0f);
  const auto v = RandomFloats(rng_, T * kv_heads * hd, 2.0f);
  std::vector<float> prefill(T * heads * hd);
  AttentionArgs a{q.data(), k.data(), v.data(), prefill.data(), T,
                  0,        T,        heads,    kv_heads,       hd};
  ASSERT_TRUE(B()->Attention(a).ok());
  // Decode every position against a cache holding exactly 0..t.
  const int64_t row = heads * hd;
  for (int64_t t = 0; t < T; t += (t < 300 ? 1 : 37)) {
    std::vector<float> out(row);
    AttentionArgs d{
        q.data() + t * row, k.data(), v.data(), out.data(), 1, t, t + 1, heads,
        kv_heads,           hd};
    ASSERT_TRUE(B()->Attention(d).ok());
    ASSERT_TRUE(BitsEqual(prefill.data() + t * row, out.data(), row))
        << "position " << t;
  }
  // Chunked prefill of rows 250..399 against a cache of 0..399.
  std::vector<float> chunk(150 * row);
  AttentionArgs c{q.data() + 250 * row,
                  k.data(),
                  v.data(),
                  chunk.data(),
                  150,
                  250,
                  400,
                  heads,
                  kv_heads,
                  hd};
  ASSERT_TRUE(B()->Attention(c).ok());
  EXPECT_TRUE(BitsEqual(prefill.data() + 250 * row, chunk.data(), 150 * row));
}

TEST_P(InvarianceTest, ThreadCountDoesNotChangeBits) {
  const int64_t m = 9, k = 2049, n = 300;
  const auto x = RandomFloats(rng_, m * k, 2.0f, 0.01);
  const auto w =
      MakeTestWeights(RandomFloats(rng_, n * k, 0.1f), n, k, DType::kBF16);
  const int64_t T = 333, heads = 4, kv_heads = 2, hd = 64;
  const auto q = RandomFloats(rng_, T * heads * hd, 2.0f);
  const auto kc = RandomFloats(rng_, T * kv_heads * hd, 2.0f);
  const auto vc = RandomFloats(rng_, T * kv_heads * hd, 2.0f);
  const auto big = RandomFloats(rng_, 100000, 5.0f, 0.01);
  const auto g =
      MakeTestWeights(RandomFloats(rng_, 1000, 1.0f), 1, 1000, DType::kBF16);

  auto run = [&](int threads) {
    B()->SetThreads(threads);
    std::vector<float> out;
    auto pw = B()->PackWeights(w.view);
    std::vector<float> y(m * n);
    EXPECT_TRUE(B()->Gemm(x.data(), m, **pw, nullptr, y.data()).ok());
    out.insert(out.end(), y.begin(), y.end());
    std::vector<float> att(T * heads * hd);
    AttentionArgs a{q.data(), kc.data(), vc.data(), att.data(), T,
                    0,        T,         heads,     kv_heads,   hd};
    EXPECT_TRUE(B()->Attention(a).ok());
    out.insert(out.end(), att.begin(), att.end());
    std::vector<float> e(big.size());
    EXPECT_TRUE(B()->SwiGlu(big.data(), big.data(), big.size(), e.data()).ok());
    out.insert(out.end(), e.begin(), e.end());
    EXPECT_TRUE(B()->Softmax(big.data(), 100, 1000, e.data()).ok());
    out.insert(out.end(), e.begin(), e.end());
    EXPECT_TRUE(
        B()->RmsNorm(big.data(), 100, 1000, g.view, 1e-5f, e.data()).ok());
    out.insert(out.end(), e.begin(), e.end());
    return out;
  };
  const std::vector<float> one = run(1);
  EXPECT_TRUE(BitsEqual(one, run(2))) << "2 threads";
  EXPECT_TRUE(BitsEqual(one, run(7))) << "7 threads";
}

TEST_P(InvarianceTest, UnalignedBuffersGiveTheSameBits) {
  const int64_t m = 3, k = 777, n = 70;
  const auto x = RandomFloats(rng_, m * k, 2.0f, 0.01);
  const auto w =
      MakeTestWeights(RandomFloats(rng_, n * k, 0.1f), n, k, DType::kBF16);
  // Aligned run.
  auto pw = B()->PackWeights(w.view);
  std::vector<float> want(m * n);
  ASSERT_TRUE(B()->Gemm(x.data(), m, **pw, nullptr, want.data()).ok());
  // Same data at float-aligned but not vector-aligned addresses, and the
  // weights at an odd byte address (WeightView needs no alignment).
  std::vector<float> xs(m * k + 1), ys(m * n + 3);
  std::copy(x.begin(), x.end(), xs.begin() + 1);
  std::vector<unsigned char> wb(w.bytes.size() + 1);
  std::copy(w.bytes.begin(), w.bytes.end(), wb.begin() + 1);
  WeightView odd = w.view;
  odd.data = wb.data() + 1;
  auto pw2 = B()->PackWeights(odd);
  ASSERT_TRUE(pw2.ok());
  ASSERT_TRUE(B()->Gemm(xs.data() + 1, m, **pw2, nullptr, ys.data() + 3).ok());
  EXPECT_TRUE(BitsEqual(want.data(), ys.data() + 3, m * n));

  const auto a = RandomFloats(rng_, 5001, 9.0f, 0.01);
  std::vector<float> sw(a.size()), as(a.size() + 1), outs(a.size() + 1);
  ASSERT_TRUE(B()->SwiGlu(a.data(), a.data(), a.size(), sw.data()).ok());
  std::copy(a.begin(), a.end(), as.begin() + 1);
  ASSERT_TRUE(
      B()->SwiGlu(as.data() + 1, as.data() + 1, a.size(), outs.data() + 1)
          .ok());
  EXPECT_TRUE(BitsEqual(sw.data(), outs.data() + 1, a.size()));
  ASSERT_TRUE(B()->Softmax(a.data(), 1, a.size(), sw.data()).ok());
  ASSERT_TRUE(B()->Softmax(as.data() + 1, 1, a.size(), outs.data() + 1).ok());
  EXPECT_TRUE(BitsEqual(sw.data(), outs.data() + 1, a.size()));
}

// Sets flush-to-zero and denormals-are-zero for the calling thread, as a
// library built with -ffast-math does for a whole process.
class CallerFlushToZero {
 public:
  CallerFlushToZero() {
#if defined(__x86_64__)
    saved_ = _mm_getcsr();
    _mm_setcsr(saved_ | 0x8040u);
#elif defined(__aarch64__)
    __asm__ volatile("mrs %0, fpcr" : "=r"(saved_));
    const uint64_t ftz = saved_ | (uint64_t{1} << 24);
    __asm__ volatile("msr fpcr, %0" : : "r"(ftz));
#endif
  }
  ~CallerFlushToZero() {
#if defined(__x86_64__)
    _mm_setcsr(static_cast<uint32_t>(saved_));
#elif defined(__aarch64__)
    __asm__ volatile("msr fpcr, %0" : : "r"(saved_));
#endif
  }

 private:
  uint64_t saved_ = 0;
};

TEST_P(InvarianceTest, CallerFlushToZeroDoesNotChangeBits) {
  // Inputs whose results are subnormal: FTZ/DAZ would flush them.
  const int64_t n = 333, k = 300;
  auto a = RandomFloats(rng_, n, 1e-38f, 0.05);
  auto x = RandomFloats(rng_, 2 * k, 1e-20f, 0.05);
  const auto w =
      MakeTestWeights(RandomFloats(rng_, n * k, 1e-19f), n, k, DType::kF32);
  auto pw = B()->PackWeights(w.view);
  ASSERT_TRUE(pw.ok());
  auto run = [&] {
    std::vector<float> out(n), y(2 * n), sm(n);
    EXPECT_TRUE(B()->Add(a.data(), a.data(), n, out.data()).ok());
    EXPECT_TRUE(B()->Gemm(x.data(), 2, **pw, nullptr, y.data()).ok());
    std::vector<float> logits = RandomFloats(rng_, n, 100.0f);
    EXPECT_TRUE(B()->Softmax(logits.data(), 1, n, sm.data()).ok());
    out.insert(out.end(), y.begin(), y.end());
    out.insert(out.end(), sm.begin(), sm.end());
    return out;
  };
  const uint64_t seed = rng_();
  rng_.seed(seed);
  const std::vector<float> want = run();
  int subnormal = 0;
  for (float v : want) subnormal += std::fpclassify(v) == FP_SUBNORMAL;
  ASSERT_GT(subnormal, 10) << "the inputs must produce subnormal results";
  rng_.seed(seed);
  std::vector<float> got;
  {
    CallerFlushToZero ftz;
    got = run();
  }
  EXPECT_TRUE(BitsEqual(want, got));
}

TEST_P(InvarianceTest, DecodeAttentionThreadCountDoesNotChangeBits) {
  // One query row: the CPU backend splits the row's KV groups over threads.
  const int64_t n_kv = 700, heads = 32, kv_heads = 8, hd = 64;
  const auto q = RandomFloats(rng_, heads * hd, 2.0f);
  const auto k = RandomFloats(rng_, n_kv * kv_heads * hd, 2.0f);
  const auto v = RandomFloats(rng_, n_kv * kv_heads * hd, 2.0f);
  auto run = [&](int threads) {
    B()->SetThreads(threads);
    std::vector<float> out(heads * hd);
    AttentionArgs a{q.data(), k.data(), v.data(), out.data(), 1,
                    n_kv - 1, n_kv,     heads,    kv_heads,   hd};
    EXPECT_TRUE(B()->Attention(a).ok());
    return out;
  };
  const std::vector<float> one = run(1);
  EXPECT_TRUE(BitsEqual(one, run(2))) << "2 threads";
  EXPECT_TRUE(BitsEqual(one, run(7))) << "7 threads";
}

TEST_P(InvarianceTest, ConcurrentCallersGetTheSameBits) {
  // backend.h allows concurrent ops on one Backend.
  const int64_t m = 3, k = 900, n = 100, T = 300, heads = 4, kv = 2, hd = 32;
  const auto x = RandomFloats(rng_, m * k, 2.0f);
  const auto w =
      MakeTestWeights(RandomFloats(rng_, n * k, 0.1f), n, k, DType::kBF16);
  const auto q = RandomFloats(rng_, heads * hd, 2.0f);
  const auto kc = RandomFloats(rng_, T * kv * hd, 2.0f);
  const auto vc = RandomFloats(rng_, T * kv * hd, 2.0f);
  auto pw = B()->PackWeights(w.view);
  ASSERT_TRUE(pw.ok());
  auto run = [&] {
    std::vector<float> y(m * n), att(heads * hd);
    EXPECT_TRUE(B()->Gemm(x.data(), m, **pw, nullptr, y.data()).ok());
    AttentionArgs a{q.data(), kc.data(), vc.data(), att.data(), 1,
                    T - 1,    T,         heads,     kv,         hd};
    EXPECT_TRUE(B()->Attention(a).ok());
    y.insert(y.end(), att.begin(), att.end());
    return y;
  };
  const std::vector<float> want = run();
  std::vector<std::vector<float>> got(4);
  std::vector<std::thread> callers;
  for (int c = 0; c < 4; ++c) {
    callers.emplace_back([&, c] {
      for (int rep = 0; rep < 5; ++rep) got[c] = run();
    });
  }
  for (std::thread& t : callers) t.join();
  for (int c = 0; c < 4; ++c) EXPECT_TRUE(BitsEqual(want, got[c])) << c;
}

INSTANTIATE_TEST_SUITE_P(AllBackends, InvarianceTest,
                         ::testing::ValuesIn(AvailableBackends()),
                         testing::KindName);

}  // namespace
}  // namespace layerproof::kernels
