// Known answers for the oracle itself: each test pins one rule of
// docs/determinism.md with inputs where a different rule gives other bits.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "kernels/ref/reduction.h"
#include "kernels/ref/ref_ops.h"
#include "kernels/ref/rope_table.h"
#include "kernels/ref/sampling.h"
#include "tests/kernels/test_util.h"

namespace layerproof::kernels {
namespace {

constexpr float k2p24 = 16777216.0f;  // 2^24: adding 1 to it rounds away

TEST(RefGemmTest, SmallKnownAnswerWithBias) {
  const float x[2 * 3] = {1, 2, 3, -1, 0.5f, 2};
  const float w[2 * 3] = {1, 1, 1, 0.25f, -2, 4};
  const float bias[2] = {10, -1};
  float y[4];
  ref::Gemm(x, 2, {w, DType::kF32, 2, 3}, bias, y);
  EXPECT_EQ(y[0], 16.0f);  // 1+2+3 + 10
  EXPECT_EQ(y[1], 7.25f);  // 0.25-4+12 - 1
  EXPECT_EQ(y[2], 11.5f);  // -1+0.5+2 + 10
  EXPECT_EQ(y[3], 5.75f);  // -0.25-1+8 - 1
}

TEST(RefGemmTest, ChunkPartialsMeetInTheHalvingTree) {
  // Five chunks with partials 2^24, 1, 1, 1, 1. The halving tree gives
  // ((c0+c1)+c2) + (c3+c4) = 2^24 + 2; a left-to-right chain gives 2^24 and
  // the RFC 6962 shape (split at a power of two) gives 2^24 + 4.
  const int64_t k = 5 * ref::kChunk;
  std::vector<float> x(k, 1.0f), w(k, 0.0f);
  w[0] = k2p24;
  for (int c = 1; c < 5; ++c) w[c * ref::kChunk] = 1.0f;
  float y;
  ref::Gemm(x.data(), 1, {w.data(), DType::kF32, 1, k}, nullptr, &y);
  EXPECT_EQ(y, k2p24 + 2.0f);
}

TEST(RefGemmTest, ChunkIsAnFmaChain) {
  // One chunk: fma keeps the exact product, so 1 + (2^-13)^2 ... rounds once.
  const float e = std::ldexp(1.0f, -13);
  const float x[2] = {1.0f, e};
  const float w[2] = {1.0f, e};
  float y;
  ref::Gemm(x, 1, {w, DType::kF32, 1, 2}, nullptr, &y);
  EXPECT_EQ(y, std::fma(e, e, 1.0f));
}

TEST(RefGemmTest, NanOutputsAreCanonical) {
  const float x[2] = {INFINITY, 1.0f};
  const float w[2] = {0.0f, 1.0f};  // inf * 0 = NaN (x86 would give -NaN)
  float y;
  ref::Gemm(x, 1, {w, DType::kF32, 1, 2}, nullptr, &y);
  EXPECT_EQ(FloatBits(y), kCanonicalNanBits);
}

TEST(RefReductionTest, Lane32UsesTheButterflyNotASequentialSum) {
  // Terms at lanes 0, 1 and 3: the butterfly adds lane 3 into lane 1 first,
  // then lane 1 (now 2) into lane 0, so 2^24 + 2 survives. A sequential sum
  // loses both ones.
  const float t[4] = {k2p24, 1.0f, 0.0f, 1.0f};
  EXPECT_EQ(ref::Lane32Sum(4, [&](int64_t i) { return t[i]; }), k2p24 + 2.0f);
  // Lanes wrap: term 32 joins lane 0 before the butterfly.
  std::vector<float> u(33, 0.0f);
  u[0] = k2p24;
  u[32] = 1.0f;
  u[1] = 1.0f;
  EXPECT_EQ(ref::Lane32Sum(33, [&](int64_t i) { return u[i]; }), k2p24);
}

TEST(RefRmsNormTest, SumOfSquaresIsLane32) {
  // Squares 2^24 in lane 0 and 1 in lanes 1..31. The butterfly adds the ones
  // among themselves before they meet 2^24 (sum 2^24 + 30); a sequential sum
  // loses every one of them (2^24).
  std::vector<float> x(32, 1.0f), g(32, 1.0f), y(32);
  x[0] = 4096.0f;
  ref::RmsNorm(x.data(), 1, 32, {g.data(), DType::kF32, 1, 32}, 0.0f, y.data());
  const float inv = 1.0f / std::sqrt((k2p24 + 30.0f) / 32.0f);
  EXPECT_EQ(y[1], inv);
  EXPECT_EQ(y[0], 4096.0f * inv);
  EXPECT_NE(y[1], 1.0f / std::sqrt(k2p24 / 32.0f));
}

TEST(RefSoftmaxTest, RowMaxRules) {
  const float zeros[3] = {-0.0f, -0.0f, -0.0f};
  EXPECT_EQ(FloatBits(ref::RowMax(zeros, 3)), 0u);  // +0, not -0
  const float with_nan[3] = {1.0f, NAN, 5.0f};
  EXPECT_EQ(FloatBits(ref::RowMax(with_nan, 3)), kCanonicalNanBits);
  const float masked[2] = {-INFINITY, -INFINITY};
  EXPECT_EQ(ref::RowMax(masked, 2), -INFINITY);
}

TEST(RefSoftmaxTest, SpecialRows) {
  float y[4];  // the widest row below
  const float masked[3] = {-INFINITY, -INFINITY, -INFINITY};
  ref::SoftmaxRow(masked, 3, y);  // as PyTorch: a fully masked row is NaN
  for (int i = 0; i < 3; ++i) EXPECT_EQ(FloatBits(y[i]), kCanonicalNanBits);
  const float one_hot[3] = {-INFINITY, 7.0f, -INFINITY};
  ref::SoftmaxRow(one_hot, 3, y);
  EXPECT_EQ(y[0], 0.0f);
  EXPECT_EQ(y[1], 1.0f);
  const float uniform[4] = {3, 3, 3, 3};
  ref::SoftmaxRow(uniform, 4, y);
  EXPECT_EQ(y[0], 0.25f);
}

TEST(RefArgmaxTest, TiesNanAndZeros) {
  const float ties[4] = {1, 5, 5, 2};
  EXPECT_EQ(ref::ArgmaxRow(ties, 4), 1);
  const float nan_late[4] = {1, INFINITY, NAN, NAN};
  EXPECT_EQ(ref::ArgmaxRow(nan_late, 4), 2);
  const float zeros[3] = {-0.0f, 0.0f, -0.0f};
  EXPECT_EQ(ref::ArgmaxRow(zeros, 3), 0);  // -0 == +0: a tie
  const float all_neg_inf[2] = {-INFINITY, -INFINITY};
  EXPECT_EQ(ref::ArgmaxRow(all_neg_inf, 2), 0);
}

TEST(RefAttentionTest, SingleKeyReturnsItsValue) {
  const float q[4] = {0.3f, -1, 2, 0.5f}, k[4] = {1, 2, 3, 4};
  const float v[4] = {9, -8, 0.125f, 6};
  float out[4];
  ref::Attention({q, k, v, out, 1, 0, 1, 1, 1, 4});
  for (int i = 0; i < 4; ++i) EXPECT_EQ(out[i], v[i]);
}

TEST(RefAttentionTest, EqualScoresAverageTheValues) {
  // q = 0 makes every score 0, so each p is exactly 1/4.
  const float q[2] = {0, 0};
  const float k[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  const float v[8] = {4, 8, 0, 0, 4, 8, 8, 16};
  float out[2];
  ref::Attention({q, k, v, out, 1, 3, 4, 1, 1, 2});
  EXPECT_EQ(out[0], 4.0f);
  EXPECT_EQ(out[1], 8.0f);
}

TEST(RefSwiGluTest, KnownValues) {
  const float g[5] = {0.0f, 1.0f, -200.0f, INFINITY, -INFINITY};
  const float u[5] = {3, 2, 1, 1, 1};
  float y[5];
  ref::SwiGlu(g, u, 5, y);
  EXPECT_EQ(y[0], 0.0f);
  EXPECT_NEAR(y[1], 2.0 / (1.0 + std::exp(-1.0)), 2e-7);
  EXPECT_EQ(FloatBits(y[2]), 0x80000000u);  // -200 / inf = -0
  EXPECT_EQ(y[3], INFINITY);
  EXPECT_EQ(FloatBits(y[4]), kCanonicalNanBits);  // -inf / inf
}

TEST(RefRopeTest, RotatesPairsAndPositionZeroIsIdentity) {
  auto t = BuildRopeTable(4, 10000.0, 8);
  ASSERT_TRUE(t.ok());
  float x[4] = {1, 2, 3, 4};
  const int64_t p0 = 0;
  ref::Rope(x, 1, 1, &p0, *t);
  EXPECT_EQ(x[0], 1.0f);
  EXPECT_EQ(x[3], 4.0f);
  // Position 1, pair 0 has inv_freq 1: angle 1 rad.
  float y[4] = {1, 0, 0, 0};
  const int64_t p1 = 1;
  ref::Rope(y, 1, 1, &p1, *t);
  EXPECT_EQ(y[0], static_cast<float>(std::cos(1.0)));
  EXPECT_EQ(y[2], static_cast<float>(std::sin(1.0)));
}

TEST(RopeTableTest, MatchesDoubleLibmWithinRounding) {
  auto t = BuildRopeTable(128, 500000.0, 70000);
  ASSERT_TRUE(t.ok());
  auto inv = RopeInverseFrequencies(128, 500000.0, {});
  ASSERT_TRUE(inv.ok());
  double worst = 0;
  for (int64_t p = 0; p < 70000; p += 7) {
    for (int64_t i = 0; i < 64; ++i) {
      const double angle = double(p) * double((*inv)[i]);
      worst = std::max(worst, std::abs(t->cos[p * 64 + i] - std::cos(angle)));
      worst = std::max(worst, std::abs(t->sin[p * 64 + i] - std::sin(angle)));
    }
  }
  EXPECT_LE(worst, 6.0e-8);  // half an fp32 ulp at 1, plus slack
}

TEST(RopeTableTest, Llama3ScalingFollowsTheReference) {
  RopeScaling s;
  s.type = RopeScaling::Type::kLlama3;
  s.factor = 8;
  s.low_freq_factor = 1;
  s.high_freq_factor = 4;
  s.original_max_positions = 8192;
  auto plain = RopeInverseFrequencies(128, 500000.0, {});
  auto scaled = RopeInverseFrequencies(128, 500000.0, s);
  ASSERT_TRUE(plain.ok() && scaled.ok());
  // High frequencies (wavelength < 8192/4) are kept, low ones divided by 8.
  EXPECT_EQ((*scaled)[0], (*plain)[0]);
  EXPECT_EQ((*scaled)[63], static_cast<float>(double((*plain)[63]) / 8.0));
  int smoothed = 0;
  for (int i = 0; i < 64; ++i) {
    if ((*scaled)[i] != (*plain)[i] &&
        (*scaled)[i] != static_cast<float>(double((*plain)[i]) / 8.0)) {
      ++smoothed;
      EXPECT_LT((*scaled)[i], (*plain)[i]);
      EXPECT_GT((*scaled)[i], (*plain)[i] / 8.0f);
    }
  }
  EXPECT_GT(smoothed, 0);
}

TEST(SamplingTest, ValidatesParameters) {
  const float logits[3] = {1, 2, 3};
  EXPECT_THAT(SampleToken(logits, 3, {-1.0f, 0, 1.0f, 0}, 0).status().message(),
              ::testing::HasSubstr("temperature: got -1"));
  EXPECT_THAT(SampleToken(logits, 3, {1.0f, -2, 1.0f, 0}, 0).status().message(),
              ::testing::HasSubstr("top_k: got -2"));
  EXPECT_THAT(SampleToken(logits, 3, {1.0f, 0, 0.0f, 0}, 0).status().message(),
              ::testing::HasSubstr("top_p: got 0"));
  EXPECT_FALSE(SampleToken(logits, 0, {1.0f, 0, 1.0f, 0}, 0).ok());
  // Regression (issue 13): a committed temperature of the smallest denormal
  // overflowed logits/T, the softmax was NaN and every audit of it erred.
  // The log now refuses it, and so does the sampler.
  EXPECT_THAT(
      SampleToken(logits, 3, {1.4e-45f, 0, 1.0f, 0}, 0).status().message(),
      ::testing::HasSubstr(
          "sampling.temperature: got 1.4013e-45, want 0 (greedy) or "
          "0.001..1000"));
  EXPECT_FALSE(SampleToken(logits, 3, {1001.0f, 0, 1.0f, 0}, 0).ok());
  EXPECT_TRUE(SampleToken(logits, 3, {kMinTemperature, 0, 1.0f, 0}, 0).ok());
  EXPECT_TRUE(SampleToken(logits, 3, {kMaxTemperature, 0, 1.0f, 0}, 0).ok());
}

// §3.11: where the tempered softmax is undefined the token is the greedy
// argmax of the logits, so the head is a total function and an audit of
// any opened h^L computes a token (issue 13: a NaN h^L made audits err).
TEST(SamplingTest, UndefinedSoftmaxFallsBackToGreedy) {
  const SamplingParams t1 = {1.0f, 0, 1.0f, 9};
  const float nan_logits[3] = {1, NAN, 5};
  EXPECT_EQ(*SampleToken(nan_logits, 3, t1, 0), 1);  // the first NaN
  const float inf_logits[4] = {1, INFINITY, 5, INFINITY};
  EXPECT_EQ(*SampleToken(inf_logits, 4, t1, 0), 1);  // the first +inf
  const float none[3] = {-INFINITY, -INFINITY, -INFINITY};
  EXPECT_EQ(*SampleToken(none, 3, t1, 0), 0);
  // logits/T overflows for two of them: the larger logit wins, as T -> 0.
  const float big[3] = {3e38f, -1.0f, 3.2e38f};
  EXPECT_EQ(*SampleToken(big, 3, {kMinTemperature, 0, 1.0f, 9}, 0), 2);
  for (uint64_t pos = 0; pos < 20; ++pos) {
    EXPECT_EQ(*SampleToken(nan_logits, 3, {0.7f, 2, 0.5f, pos}, pos), 1);
  }
}

TEST(SamplingTest, GreedyAndTopKOneAreArgmax) {
  const float logits[5] = {0.1f, 3, -1, 3, 2};
  EXPECT_EQ(*SampleToken(logits, 5, {0.0f, 0, 1.0f, 7}, 0), 1);
  for (uint64_t pos = 0; pos < 50; ++pos) {
    EXPECT_EQ(*SampleToken(logits, 5, {1.3f, 1, 1.0f, 7}, pos), 1);
  }
}

TEST(SamplingTest, SeededDrawsFollowTheDistribution) {
  // p = (1/4, 3/4): token 1 should win about 75% of 4000 draws; the seed and
  // positions are fixed, so this is deterministic, and a broken draw (always
  // the top token, or uniform) fails it.
  const float logits[2] = {0.0f, static_cast<float>(std::log(3.0))};
  int ones = 0;
  for (uint64_t pos = 0; pos < 4000; ++pos) {
    ones += *SampleToken(logits, 2, {1.0f, 0, 1.0f, 12345}, pos);
  }
  EXPECT_NEAR(ones / 4000.0, 0.75, 0.03);
  // Same (seed, position) -> same token; another seed -> another sequence.
  int differ = 0;
  for (uint64_t pos = 0; pos < 200; ++pos) {
    EXPECT_EQ(*SampleToken(logits, 2, {1.0f, 0, 1.0f, 1}, pos),
              *SampleToken(logits, 2, {1.0f, 0, 1.0f, 1}, pos));
    differ += *SampleToken(logits, 2, {1.0f, 0, 1.0f, 1}, pos) !=
              *SampleToken(logits, 2, {1.0f, 0, 1.0f, 2}, pos);
  }
  EXPECT_GT(differ, 20);
}

TEST(SamplingTest, TopPKeepsTheSmallestPrefix) {
  // p ~ (0.64, 0.24, 0.09, 0.03): top_p 0.6 keeps only the first token.
  const float logits[4] = {3, 2, 1, 0};
  for (uint64_t pos = 0; pos < 100; ++pos) {
    EXPECT_EQ(*SampleToken(logits, 4, {1.0f, 0, 0.6f, 3}, pos), 0);
  }
  int third_or_later = 0;
  for (uint64_t pos = 0; pos < 2000; ++pos) {
    const int t = *SampleToken(logits, 4, {1.0f, 0, 0.85f, 3}, pos);
    EXPECT_LE(t, 1);  // 0.64 + 0.24 >= 0.85: two tokens kept
    third_or_later += t >= 2;
  }
  EXPECT_EQ(third_or_later, 0);
}

}  // namespace
}  // namespace layerproof::kernels
