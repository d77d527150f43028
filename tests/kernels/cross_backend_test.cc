// The one cross-backend suite (STYLE.md): every fast backend this machine
// has must equal kernels/ref bit for bit, over thousands of random shapes and
// over special values (±0, subnormals, ±inf, NaN, near-overflow).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "kernels/ref/rope_table.h"
#include "kernels/ref/sampling.h"
#include "tests/kernels/test_util.h"

namespace layerproof::kernels {
namespace {

using testing::BitsEqual;
using testing::MakeTestWeights;
using testing::RandomFloats;
using testing::Ref;

class CrossBackendTest : public ::testing::TestWithParam<BackendKind> {
 protected:
  Backend* Fast() { return *GetBackend(GetParam()); }
  std::mt19937_64 rng_{static_cast<uint64_t>(GetParam()) * 7919 + 1};

  // Random Gemm of the given shape on both backends; a failure on mismatch.
  void CheckGemm(int64_t m, int64_t k, int64_t n, DType dtype, bool bias,
                 double special_rate) {
    SCOPED_TRACE("m=" + std::to_string(m) + " k=" + std::to_string(k) + " n=" +
                 std::to_string(n) + " dtype=" + std::string(DTypeName(dtype)) +
                 " bias=" + std::to_string(bias) +
                 " specials=" + std::to_string(special_rate));
    const auto x = RandomFloats(rng_, m * k, 2.0f, special_rate);
    const auto w = MakeTestWeights(
        RandomFloats(rng_, n * k, 0.1f, special_rate), n, k, dtype);
    const auto b = RandomFloats(rng_, n, 1.0f, special_rate);
    EXPECT_TRUE(testing::GemmMatchesRef(*Fast(), x, m, w.view,
                                        bias ? b.data() : nullptr));
  }
};

DType RandomDType(std::mt19937_64& rng) {
  static const DType kTypes[] = {DType::kBF16, DType::kF16, DType::kF32};
  return kTypes[rng() % 3];
}

TEST_P(CrossBackendTest, GemmEdgeShapes) {
  const int64_t ks[] = {1,   2,   3,   15,  16,  17,  31,  32,   33,   255, 256,
                        257, 511, 512, 513, 767, 768, 769, 1000, 1024, 1025};
  for (int64_t k : ks) {
    for (DType dt : {DType::kBF16, DType::kF16, DType::kF32}) {
      CheckGemm(1 + rng_() % 4, k, 1 + rng_() % 70, dt, rng_() % 2, 0);
    }
  }
}

TEST_P(CrossBackendTest, GemmThousandsOfRandomShapes) {
  for (int trial = 0; trial < 1500; ++trial) {
    const int64_t m = 1 + rng_() % (trial % 10 == 0 ? 33 : 5);
    const int64_t k = 1 + rng_() % (trial % 7 == 0 ? 3000 : 400);
    const int64_t n = 1 + rng_() % 80;
    CheckGemm(m, k, n, RandomDType(rng_), rng_() % 2, 0);
    if (HasFatalFailure() || HasFailure()) return;
  }
}

TEST_P(CrossBackendTest, GemmLargeK) {
  CheckGemm(2, 14336 + 3, 37, DType::kBF16, true, 0);
  CheckGemm(1, 4096, 130, DType::kF16, false, 0);
}

TEST_P(CrossBackendTest, GemmSpecialValues) {
  for (int trial = 0; trial < 200; ++trial) {
    CheckGemm(1 + rng_() % 6, 1 + rng_() % 700, 1 + rng_() % 50,
              RandomDType(rng_), rng_() % 2, trial % 2 ? 0.05 : 0.3);
    if (HasFailure()) return;
  }
}

TEST_P(CrossBackendTest, GemmNearOverflow) {
  // Partial sums that overflow to inf in one association and not another.
  for (int trial = 0; trial < 50; ++trial) {
    const int64_t m = 1 + rng_() % 3, k = 1 + rng_() % 1200,
                  n = 1 + rng_() % 40;
    const auto x = RandomFloats(rng_, m * k, 1e19f);
    const auto w =
        MakeTestWeights(RandomFloats(rng_, n * k, 1e19f), n, k, DType::kF32);
    ASSERT_TRUE(testing::GemmMatchesRef(*Fast(), x, m, w.view, nullptr))
        << "m=" << m << " k=" << k << " n=" << n;
  }
}

TEST_P(CrossBackendTest, RmsNorm) {
  for (int trial = 0; trial < 300; ++trial) {
    const int64_t rows = 1 + rng_() % 4, dim = 1 + rng_() % 1600;
    const auto x = RandomFloats(rng_, rows * dim, 4.0f, trial % 3 ? 0 : 0.05);
    const auto g = MakeTestWeights(RandomFloats(rng_, dim, 2.0f), 1, dim,
                                   rng_() % 2 ? DType::kBF16 : DType::kF32);
    std::vector<float> want(x.size()), got(x.size());
    ASSERT_TRUE(
        Ref()->RmsNorm(x.data(), rows, dim, g.view, 1e-6f, want.data()).ok());
    ASSERT_TRUE(
        Fast()->RmsNorm(x.data(), rows, dim, g.view, 1e-6f, got.data()).ok());
    ASSERT_TRUE(BitsEqual(want, got)) << "rows=" << rows << " dim=" << dim;
  }
}

TEST_P(CrossBackendTest, Rope) {
  RopeScaling llama3;
  llama3.type = RopeScaling::Type::kLlama3;
  llama3.factor = 8;
  for (int64_t hd : {2, 8, 64, 80, 128}) {
    auto table = BuildRopeTable(hd, hd == 128 ? 500000.0 : 10000.0, 3000,
                                hd == 128 ? llama3 : RopeScaling{});
    ASSERT_TRUE(table.ok());
    for (int trial = 0; trial < 20; ++trial) {
      const int64_t rows = 1 + rng_() % 5, heads = 1 + rng_() % 6;
      std::vector<int64_t> pos(rows);
      for (auto& p : pos) p = rng_() % 3000;
      auto want =
          RandomFloats(rng_, rows * heads * hd, 3.0f, trial % 2 ? 0.05 : 0);
      auto got = want;
      ASSERT_TRUE(
          Ref()->Rope(want.data(), rows, heads, pos.data(), *table).ok());
      ASSERT_TRUE(
          Fast()->Rope(got.data(), rows, heads, pos.data(), *table).ok());
      ASSERT_TRUE(BitsEqual(want, got)) << "head_dim=" << hd;
    }
  }
}

TEST_P(CrossBackendTest, Attention) {
  for (int trial = 0; trial < 120; ++trial) {
    const int64_t group = 1 << (rng_() % 3);
    const int64_t kv_heads = 1 + rng_() % 3;
    const int64_t heads = kv_heads * group;
    const int64_t hd = std::vector<int64_t>{2, 8, 33, 64, 80, 128}[rng_() % 6];
    const bool decode = trial % 2;
    const int64_t n_kv = 1 + rng_() % (trial % 5 == 0 ? 700 : 120);
    const int64_t nq = decode ? 1 : 1 + rng_() % n_kv;
    const int64_t q_pos0 = n_kv - nq;
    const double sp = trial % 4 == 0 ? 0.02 : 0;
    const auto q = RandomFloats(rng_, nq * heads * hd, 2.0f, sp);
    const auto k = RandomFloats(rng_, n_kv * kv_heads * hd, 2.0f, sp);
    const auto v = RandomFloats(rng_, n_kv * kv_heads * hd, 2.0f, sp);
    std::vector<float> want(nq * heads * hd), got(want.size());
    AttentionArgs a{q.data(), k.data(), v.data(), want.data(), nq,
                    q_pos0,   n_kv,     heads,    kv_heads,    hd};
    ASSERT_TRUE(Ref()->Attention(a).ok());
    a.out = got.data();
    ASSERT_TRUE(Fast()->Attention(a).ok());
    ASSERT_TRUE(BitsEqual(want, got))
        << "nq=" << nq << " q_pos0=" << q_pos0 << " heads=" << heads
        << " kv_heads=" << kv_heads << " head_dim=" << hd;
  }
}

TEST_P(CrossBackendTest, Elementwise) {
  for (int trial = 0; trial < 300; ++trial) {
    const int64_t n = 1 + rng_() % (trial % 10 == 0 ? 40000 : 700);
    const double sp = trial % 2 ? 0.1 : 0;
    const auto a = RandomFloats(rng_, n, trial % 3 == 0 ? 100.0f : 8.0f, sp);
    const auto b = RandomFloats(rng_, n, 8.0f, sp);
    std::vector<float> want(n), got(n);
    ASSERT_TRUE(Ref()->SwiGlu(a.data(), b.data(), n, want.data()).ok());
    ASSERT_TRUE(Fast()->SwiGlu(a.data(), b.data(), n, got.data()).ok());
    ASSERT_TRUE(BitsEqual(want, got)) << "SwiGlu n=" << n;
    ASSERT_TRUE(Ref()->Add(a.data(), b.data(), n, want.data()).ok());
    ASSERT_TRUE(Fast()->Add(a.data(), b.data(), n, got.data()).ok());
    ASSERT_TRUE(BitsEqual(want, got)) << "Add n=" << n;
    ASSERT_TRUE(Ref()->Softmax(a.data(), 1, n, want.data()).ok());
    ASSERT_TRUE(Fast()->Softmax(a.data(), 1, n, got.data()).ok());
    ASSERT_TRUE(BitsEqual(want, got)) << "Softmax n=" << n;
  }
}

TEST_P(CrossBackendTest, SoftmaxRowsWithMaskedEntries) {
  for (int trial = 0; trial < 100; ++trial) {
    const int64_t rows = 1 + rng_() % 5, n = 1 + rng_() % 300;
    auto x = RandomFloats(rng_, rows * n, 30.0f);
    for (auto& v : x) {
      if (rng_() % 4 == 0) v = -INFINITY;
    }
    std::vector<float> want(x.size()), got(x.size());
    ASSERT_TRUE(Ref()->Softmax(x.data(), rows, n, want.data()).ok());
    ASSERT_TRUE(Fast()->Softmax(x.data(), rows, n, got.data()).ok());
    ASSERT_TRUE(BitsEqual(want, got));
  }
}

// The sampler may take its softmax from any backend (the engine uses the
// fastest CPU one): the drawn token must be ref's for every parameter set.
TEST_P(CrossBackendTest, SamplerWithBackendSoftmaxDrawsRefsToken) {
  std::mt19937 rng(99);
  std::normal_distribution<float> logit(0.0f, 3.0f);
  const SamplingParams params[] = {{0.7f, 0, 1.0f, 1},
                                   {1.0f, 40, 0.95f, 2},
                                   {1.3f, 1, 1.0f, 3},
                                   {0.2f, 0, 0.5f, 4},
                                   {2.0f, 1000, 0.9f, 5}};
  for (int64_t vocab :
       {int64_t{1}, int64_t{37}, int64_t{1000}, int64_t{8192}}) {
    std::vector<float> logits(vocab);
    for (float& x : logits) x = logit(rng);
    if (vocab > 10) logits[3] = logits[7];  // a tie
    for (const SamplingParams& p : params) {
      for (uint64_t position : {uint64_t{0}, uint64_t{17}, uint64_t{1} << 33}) {
        auto want = SampleToken(logits.data(), vocab, p, position);
        auto got = SampleToken(logits.data(), vocab, p, position, Fast());
        ASSERT_TRUE(want.ok() && got.ok());
        EXPECT_EQ(*got, *want) << "vocab " << vocab << " T " << p.temperature;
      }
    }
  }
  // Rows whose tempered softmax is undefined (§3.11) give ref's token too.
  for (const float special : {NAN, INFINITY, -INFINITY}) {
    std::vector<float> logits(1000);
    for (float& x : logits) x = logit(rng);
    if (special == -INFINITY) {
      std::fill(logits.begin(), logits.end(), -INFINITY);
    } else {
      logits[417] = special;
    }
    for (const SamplingParams& p : params) {
      auto want = SampleToken(logits.data(), 1000, p, 5);
      auto got = SampleToken(logits.data(), 1000, p, 5, Fast());
      ASSERT_TRUE(want.ok() && got.ok());
      EXPECT_EQ(*got, *want) << "special " << special;
      EXPECT_EQ(*want, special == -INFINITY ? 0 : 417);
    }
  }
}

TEST_P(CrossBackendTest, EmbeddingAndArgmax) {
  for (DType dt : {DType::kBF16, DType::kF16, DType::kF32}) {
    const int64_t vocab = 97, dim = 1 + rng_() % 300;
    const auto t = MakeTestWeights(RandomFloats(rng_, vocab * dim, 1.0f, 0.05),
                                   vocab, dim, dt);
    std::vector<int32_t> ids(13);
    for (auto& id : ids) id = rng_() % vocab;
    std::vector<float> want(ids.size() * dim), got(want.size());
    ASSERT_TRUE(
        Ref()->Embedding(t.view, ids.data(), ids.size(), want.data()).ok());
    ASSERT_TRUE(
        Fast()->Embedding(t.view, ids.data(), ids.size(), got.data()).ok());
    ASSERT_TRUE(BitsEqual(want, got));
  }
  for (int trial = 0; trial < 200; ++trial) {
    const int64_t rows = 1 + rng_() % 4, n = 1 + rng_() % 5000;
    auto x = RandomFloats(rng_, rows * n, 3.0f, trial % 2 ? 0.01 : 0);
    if (trial % 5 == 0) {  // exact ties
      for (auto& v : x) v = static_cast<float>(rng_() % 4);
    }
    std::vector<int64_t> want(rows), got(rows);
    ASSERT_TRUE(Ref()->Argmax(x.data(), rows, n, want.data()).ok());
    ASSERT_TRUE(Fast()->Argmax(x.data(), rows, n, got.data()).ok());
    ASSERT_EQ(want, got) << "n=" << n;
  }
}

GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(CrossBackendTest);
INSTANTIATE_TEST_SUITE_P(AllFastBackends, CrossBackendTest,
                         ::testing::ValuesIn(testing::FastBackends()),
                         testing::KindName);

}  // namespace
}  // namespace layerproof::kernels
