// Focused tests of the x86 fast GEMMs (kernels/cpu/avx2_gemm.cc,
// avx512_gemm.cc) against kernels/ref, bit for bit: the panel tails, the
// skinny (decode) and blocked (prefill) paths and their boundaries, several
// row blocks, the chunk-tree combine for every chunk count up to 20, special
// values, large K and thread counts. Backends this CPU lacks are skipped.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernels/cpu/thread_pool.h"
#include "tests/kernels/test_util.h"

namespace layerproof::kernels {
namespace {

using testing::BitsEqual;
using testing::MakeTestWeights;
using testing::RandomFloats;
using testing::Ref;
using testing::TestWeights;

constexpr DType kDTypes[] = {DType::kBF16, DType::kF16, DType::kF32};
constexpr float kGuard = 12345.0f;  // y past the outputs must keep this

struct Case {
  int64_t m, k, n;
  DType dtype;
  bool bias;
  double special_rate = 0;
};

std::string Describe(const Case& c) {
  return "m=" + std::to_string(c.m) + " k=" + std::to_string(c.k) +
         " n=" + std::to_string(c.n) + " " + std::string(DTypeName(c.dtype)) +
         (c.bias ? " bias" : "") + (c.special_rate > 0 ? " specials" : "");
}

class GemmFastTest : public ::testing::TestWithParam<BackendKind> {
 protected:
  void SetUp() override {
    auto b = GetBackend(GetParam());
    if (!b.ok()) GTEST_SKIP() << b.status().ToString();
    fast_ = *b;
  }
  void TearDown() override {
    if (fast_ != nullptr) fast_->SetThreads(cpu::DefaultThreadCount());
  }

  // Panel width of the backend under test (kernels/cpu/*_gemm.cc).
  int64_t Nr() const { return GetParam() == BackendKind::kAvx512 ? 32 : 16; }

  // Runs one Gemm on ref and on the fast backend and compares all outputs and
  // a guard region after them. The weights start one byte into their buffer:
  // PackWeights must accept unaligned views.
  void Check(const Case& c, const std::vector<float>& x,
             const std::vector<float>& w, const std::vector<float>& b) {
    SCOPED_TRACE(Describe(c));
    const TestWeights tw = MakeTestWeights(w, c.n, c.k, c.dtype);
    std::vector<unsigned char> shifted(tw.bytes.size() + 1);
    std::memcpy(shifted.data() + 1, tw.bytes.data(), tw.bytes.size());
    const WeightView view{shifted.data() + 1, c.dtype, c.n, c.k};
    auto ref_w = Ref()->PackWeights(tw.view);
    auto fast_w = fast_->PackWeights(view);
    ASSERT_TRUE(ref_w.ok() && fast_w.ok());
    const float* bias = c.bias ? b.data() : nullptr;
    std::vector<float> want(c.m * c.n);
    std::vector<float> got(c.m * c.n + 64, kGuard);
    ASSERT_TRUE(Ref()->Gemm(x.data(), c.m, **ref_w, bias, want.data()).ok());
    ASSERT_TRUE(fast_->Gemm(x.data(), c.m, **fast_w, bias, got.data()).ok());
    EXPECT_TRUE(BitsEqual(want.data(), got.data(), c.m * c.n));
    for (size_t i = want.size(); i < got.size(); ++i) {
      ASSERT_EQ(FloatBits(got[i]), FloatBits(kGuard))
          << "wrote past y at " << i;
    }
  }

  void CheckRandom(const Case& c) {
    const auto x = RandomFloats(rng_, c.m * c.k, 2.0f, c.special_rate);
    const auto w = RandomFloats(rng_, c.n * c.k, 0.5f, c.special_rate);
    const auto b = RandomFloats(rng_, c.n, 1.0f, c.special_rate);
    Check(c, x, w, b);
  }

  Backend* fast_ = nullptr;
  std::mt19937_64 rng_{static_cast<uint64_t>(GetParam()) * 104729 + 11};
};

// Every k of the brief against every panel-tail n, each dtype, with and
// without bias; m cycles through the skinny/blocked and tile boundaries.
TEST_P(GemmFastTest, RandomShapesMatchRef) {
  const int64_t ks[] = {1,   2,   15,  16,  17,   255,     256,
                        257, 511, 512, 513, 1000, 4096 + 7};
  const int64_t nr = Nr();
  const int64_t ns[] = {1, nr - 1, nr, nr + 1, 3 * nr + 5};
  const int64_t ms[] = {1, 2, 3, 4, 5, 6, 7, 13, 14, 15, 17, 20};
  int i = 0;
  for (int64_t k : ks) {
    for (int64_t n : ns) {
      for (DType dt : kDTypes) {
        for (bool bias : {false, true}) {
          const int64_t m = k > 1000 ? ms[i % 4] : ms[i % std::size(ms)];
          ++i;
          CheckRandom({m, k, n, dt, bias});
          if (HasFailure()) return;
        }
      }
    }
  }
}

// Every row count 1..20 hits a different skinny kernel or register tile.
TEST_P(GemmFastTest, EveryRowCountMatchesRef) {
  for (int64_t m = 1; m <= 20; ++m) {
    for (DType dt : kDTypes) {
      CheckRandom({m, 300, 2 * Nr() + 3, dt, m % 2 == 0});
      if (HasFailure()) return;
    }
  }
}

// ±0, subnormals, ±inf, NaN and ±3.4e38 scattered through x, W and bias.
TEST_P(GemmFastTest, SpecialValuesMatchRef) {
  const int64_t shapes[][3] = {{1, 257, 70},
                               {2, 600, 33},
                               {3, 17, 5},
                               {9, 513, 40},
                               {20, 1000, 3 * Nr() + 5}};
  for (const auto& s : shapes) {
    for (DType dt : kDTypes) {
      for (double rate : {0.02, 0.3}) {
        CheckRandom({s[0], s[1], s[2], dt, true, rate});
        if (HasFailure()) return;
      }
    }
  }
}

// Dense patterns of one special value: 0 * inf and inf - inf give NaN, a sum
// of ±3.4e38 overflows, and subnormal products must not be flushed.
TEST_P(GemmFastTest, SpecialValuePatternsMatchRef) {
  const int64_t m = 4, k = 300, n = Nr() + 7;
  for (float v : testing::SpecialValues()) {
    for (DType dt : kDTypes) {
      std::vector<float> x(m * k), w(n * k), b(n);
      for (size_t i = 0; i < x.size(); ++i) x[i] = i % 3 == 0 ? v : 1e-20f;
      for (size_t i = 0; i < w.size(); ++i) w[i] = i % 5 == 1 ? v : -1e-25f;
      for (size_t i = 0; i < b.size(); ++i) b[i] = i % 2 ? v : 1.0f;
      Check({m, k, n, dt, true}, x, w, b);
      Check({1, k, n, dt, true}, x, w, b);
      if (HasFailure()) return;
    }
  }
}

// Chunk partials of wildly different magnitudes make any other combine order
// (a left-to-right chain, a power-of-two split) round differently.
TEST_P(GemmFastTest, ChunkTreeOrderForEveryChunkCount) {
  std::uniform_int_distribution<int> exponent(-30, 30);
  std::uniform_real_distribution<float> mantissa(-2.0f, 2.0f);
  for (int64_t chunks = 1; chunks <= 20; ++chunks) {
    const int64_t k = 256 * chunks - (chunks % 3) * 37;  // short last chunks
    for (int64_t m : {1, 6}) {
      const int64_t n = Nr() + 3;
      std::vector<float> x(m * k, 1.0f), w(n * k, 0.0f), b(n, 0.0f);
      for (int64_t j = 0; j < n; ++j) {
        for (int64_t c = 0; c * 256 < k; ++c) {
          w[j * k + c * 256] = std::ldexp(mantissa(rng_), exponent(rng_));
        }
      }
      Check({m, k, n, DType::kF32, false}, x, w, b);
      if (HasFailure()) return;
    }
  }
}

// More rows than one row block of the blocked path (16 register tiles).
TEST_P(GemmFastTest, SeveralRowBlocksMatchRef) {
  CheckRandom({250, 600, 2 * Nr() + 9, DType::kBF16, true});
  CheckRandom({231, 300, Nr() - 3, DType::kF16, false});
}

TEST_P(GemmFastTest, LargeKMatchesRef) {
  CheckRandom({1, 14336, 3 * Nr() + 5, DType::kBF16, true});
  CheckRandom({15, 14336, Nr() + 1, DType::kBF16, true});
  CheckRandom({2, 14336, 17, DType::kF16, false});
}

// Column tasks of the thread pool must not change a bit, for the skinny and
// the blocked path, with more panels than tasks.
TEST_P(GemmFastTest, ThreadCountsMatchRef) {
  const int64_t k = 700, n = 37 * Nr() + 3;
  for (int threads : {1, 2, 7}) {
    fast_->SetThreads(threads);
    for (int64_t m : {1, 3, 16}) {
      CheckRandom({m, k, n, DType::kBF16, true});
      if (HasFailure()) return;
    }
  }
}

// One thread cuts n into 8 column tasks; 137 panels make tasks of 18 panels,
// more than one panel group of the blocked path.
TEST_P(GemmFastTest, TasksWiderThanOnePanelGroupMatchRef) {
  fast_->SetThreads(1);
  CheckRandom({5, 300, 137 * Nr() + 7, DType::kBF16, true});
  CheckRandom({1, 300, 137 * Nr() + 7, DType::kF16, false});
}

INSTANTIATE_TEST_SUITE_P(X86, GemmFastTest,
                         ::testing::Values(BackendKind::kAvx2,
                                           BackendKind::kAvx512),
                         testing::KindName);

}  // namespace
}  // namespace layerproof::kernels
