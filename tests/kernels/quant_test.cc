// Block-quantized weights and int8 activations (docs/determinism.md §3.12):
// the spec functions of kernels/quant.h against independent formulas, and
// every backend against ref, bit for bit, on random and extreme blocks,
// zero blocks, special activations and every supported K.
#include "kernels/quant.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "kernels/cpu/internal/quant_packed.h"
#include "tests/kernels/test_util.h"
#if defined(__x86_64__)
#include "kernels/cpu/internal/isa_ops.h"
#endif

namespace layerproof::kernels {
namespace {

using testing::BitsEqual;
using testing::RandomFloats;
using testing::Ref;

constexpr DType kBlockTypes[] = {DType::kQ8_0, DType::kQ4_0, DType::kQ4_K,
                                 DType::kQ6_K};

// Offsets of the fp16 scales inside one stored block.
enum class Scales {
  kRandomBits,  // every byte random: fp16 scales of every kind, NaN included
  kSane,        // scales uniform in [1e-3, 0.1)
  kSomeZero,    // sane, with a quarter of the blocks' scales zero
};

std::vector<unsigned char> RandomBlocks(std::mt19937_64& rng, DType t,
                                        int64_t rows, int64_t cols,
                                        Scales scales) {
  std::vector<unsigned char> bytes(
      static_cast<size_t>(rows * RowBytes(t, cols)));
  for (auto& b : bytes) b = uint8_t(rng());
  if (scales == Scales::kRandomBits) return bytes;
  std::uniform_real_distribution<float> u(1e-3f, 0.1f);
  for (size_t off = 0; off < bytes.size(); off += size_t(BlockBytes(t))) {
    const bool zero = scales == Scales::kSomeZero && rng() % 4 == 0;
    for (size_t s : quant::HalfScaleOffsets(t)) {
      const uint16_t h = zero ? 0 : FloatToF16(u(rng));
      std::memcpy(&bytes[off + size_t(s)], &h, 2);
    }
  }
  return bytes;
}

long double HalfAt(const unsigned char* p) {
  uint16_t h;
  std::memcpy(&h, p, 2);
  return F16ToFloat(h);
}

// The dequantized weights in long double, written from llama.cpp's
// dequantize_row_* loops (ggml-quants.c), independently of kernels/quant.cc.
std::vector<long double> LlamaStyleDequant(DType t, const unsigned char* row,
                                           int64_t cols) {
  std::vector<long double> y(static_cast<size_t>(cols));
  const int64_t nb = cols / BlockElems(t);
  for (int64_t i = 0; i < nb; ++i) {
    const unsigned char* b = row + i * BlockBytes(t);
    long double* out = y.data() + i * BlockElems(t);
    if (t == DType::kQ8_0) {
      for (int j = 0; j < 32; ++j) out[j] = HalfAt(b) * int8_t(b[2 + j]);
    } else if (t == DType::kQ4_0) {
      for (int j = 0; j < 16; ++j) {
        out[j] = HalfAt(b) * ((b[2 + j] & 0xF) - 8);
        out[j + 16] = HalfAt(b) * ((b[2 + j] >> 4) - 8);
      }
    } else if (t == DType::kQ4_K) {
      const unsigned char* sc = b + 4;
      const unsigned char* q = b + 16;
      int is = 0;
      for (int j = 0; j < 256; j += 64) {
        int s[2], m[2];
        for (int h = 0; h < 2; ++h, ++is) {
          if (is < 4) {
            s[h] = sc[is] & 63;
            m[h] = sc[is + 4] & 63;
          } else {
            s[h] = (sc[is + 4] & 0xF) | ((sc[is - 4] >> 6) << 4);
            m[h] = (sc[is + 4] >> 4) | ((sc[is] >> 6) << 4);
          }
        }
        for (int l = 0; l < 32; ++l) {
          out[j + l] = HalfAt(b) * s[0] * (q[l] & 0xF) - HalfAt(b + 2) * m[0];
          out[j + 32 + l] =
              HalfAt(b) * s[1] * (q[l] >> 4) - HalfAt(b + 2) * m[1];
        }
        q += 32;
      }
    } else {
      const unsigned char* ql = b;
      const unsigned char* qh = b + 128;
      const auto* sc = reinterpret_cast<const int8_t*>(b + 192);
      const long double d = HalfAt(b + 208);
      for (int n = 0; n < 256; n += 128) {
        for (int l = 0; l < 32; ++l) {
          const int is = l / 16;
          const int q1 = ((ql[l] & 0xF) | (((qh[l] >> 0) & 3) << 4)) - 32;
          const int q2 = ((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4)) - 32;
          const int q3 = ((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
          const int q4 = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
          out[n + l] = d * sc[is] * q1;
          out[n + l + 32] = d * sc[is + 2] * q2;
          out[n + l + 64] = d * sc[is + 4] * q3;
          out[n + l + 96] = d * sc[is + 6] * q4;
        }
        ql += 64;
        qh += 32;
        sc += 8;
      }
    }
  }
  return y;
}

// Equal values; NaN equals NaN and, since a zero weight is d * (+0) in the
// spec (the sign of d), +0 equals -0.
bool SameFloat(float a, float b) {
  return (std::isnan(a) && std::isnan(b)) || a == b;
}

TEST(QuantSpecTest, DequantizationIsTheCorrectlyRoundedWeight) {
  std::mt19937_64 rng(11);
  for (DType t : kBlockTypes) {
    for (Scales s : {Scales::kSane, Scales::kSomeZero}) {
      const int64_t cols = 4 * BlockElems(t);
      const auto bytes = RandomBlocks(rng, t, 1, cols, s);
      const auto want = LlamaStyleDequant(t, bytes.data(), cols);
      std::vector<float> got(static_cast<size_t>(cols));
      quant::DequantizeRow(t, bytes.data(), cols, got.data());
      for (int64_t i = 0; i < cols; ++i) {
        ASSERT_TRUE(SameFloat(float(want[size_t(i)]), got[size_t(i)]))
            << DTypeName(t) << " element " << i << ": want "
            << double(want[size_t(i)]) << ", got " << got[size_t(i)];
      }
    }
  }
}

quant::ActUnit Quantize(const std::vector<float>& x, int8_t* q) {
  return quant::QuantizeActUnit(x.data(), q);
}

TEST(QuantSpecTest, ActivationsRoundHalfEvenAgainstTheScale) {
  std::mt19937_64 rng(12);
  for (int trial = 0; trial < 2000; ++trial) {
    const float scale = std::ldexp(1.0f, int(rng() % 200) - 100);
    std::vector<float> x = RandomFloats(rng, 32, scale);
    if (trial % 3 == 0) x[rng() % 32] = 0.5f * scale;  // exact ties appear
    int8_t q[32];
    const quant::ActUnit a = Quantize(x, q);
    float amax = 0;
    for (float v : x) amax = std::max(amax, std::fabs(v));
    ASSERT_EQ(FloatBits(a.d), FloatBits(amax / 127.0f));
    int32_t sums[2] = {0, 0};
    for (int i = 0; i < 32; ++i) {
      // The exact quotient, rounded half to even by hand.
      const long double v = static_cast<long double>(x[size_t(i)] / a.d);
      long double r = std::floor(v + 0.5L);
      if (r - v == 0.5L && std::fmod(r, 2.0L) != 0) r -= 1;
      r = std::min(127.0L, std::max(-127.0L, r));
      ASSERT_EQ(q[i], int(r)) << "trial " << trial << " i " << i;
      sums[i / 16] += q[i];
    }
    EXPECT_EQ(a.half_sum[0], sums[0]);
    EXPECT_EQ(a.half_sum[1], sums[1]);
    EXPECT_EQ(a.sum, float(sums[0] + sums[1]));
  }
}

TEST(QuantSpecTest, ActivationSpecialCases) {
  int8_t q[32];
  std::vector<float> x(32, 0.0f);
  x[3] = -0.0f;
  quant::ActUnit a = Quantize(x, q);
  EXPECT_EQ(FloatBits(a.d), 0u) << "a zero unit has scale +0";
  for (int8_t v : q) EXPECT_EQ(v, 0);

  for (float bad : {NAN, INFINITY, -INFINITY}) {
    x.assign(32, 1.0f);
    x[17] = bad;
    a = Quantize(x, q);
    EXPECT_EQ(FloatBits(a.d), kCanonicalNanBits) << bad;
    for (int8_t v : q) EXPECT_EQ(v, 0);
    EXPECT_EQ(a.half_sum[0] + a.half_sum[1], 0);
  }

  // The smallest subnormal: its scale underflows to zero, so the unit is zero.
  x.assign(32, 0.0f);
  x[0] = 1e-45f;
  a = Quantize(x, q);
  EXPECT_EQ(FloatBits(a.d), 0u);
  EXPECT_EQ(q[0], 0);

  // amax = 190 * 2^-149: d rounds to 2^-149, and 190 clamps to 127.
  x[0] = std::ldexp(190.0f, -149);
  x[1] = -std::ldexp(3.0f, -149);
  a = Quantize(x, q);
  EXPECT_EQ(FloatBits(a.d), 1u);
  EXPECT_EQ(q[0], 127);
  EXPECT_EQ(q[1], -3);

  // The largest finite values quantize to ±127 without overflow.
  x.assign(32, 0.0f);
  x[5] = 3.4028235e38f;
  x[6] = -3.4028235e38f;
  a = Quantize(x, q);
  EXPECT_EQ(q[5], 127);
  EXPECT_EQ(q[6], -127);
}

// Each CPU ISA's activation quantizer (QuantGemmOps::quantize_row) against
// quant::QuantizeRow, field by field and bit for bit: units whose magnitudes
// span 2^-100..2^100 (rounding ties included), subnormal units whose scale
// underflows or is itself subnormal, zero units with -0, the largest finite
// values, and NaN/inf at random places. NEON and the portable backend call
// quant::QuantizeRow itself.
TEST(QuantSpecTest, VectorActivationQuantizersMatchTheSpec) {
  std::vector<std::pair<std::string, const cpu::QuantGemmOps*>> quantizers;
#if defined(__x86_64__)
  for (BackendKind kind : AvailableBackends()) {
    if (kind == BackendKind::kAvx2) {
      quantizers.emplace_back("avx2", cpu::Avx2Ops().quant);
    } else if (kind == BackendKind::kAvx512) {
      quantizers.emplace_back("avx512", cpu::Avx512Ops().quant);
    }
  }
#endif
  if (quantizers.empty()) GTEST_SKIP() << "no vector quantizer on this CPU";
  std::mt19937_64 rng(14);
  constexpr int64_t kUnits = 64, k = kUnits * 32;
  for (int trial = 0; trial < 300; ++trial) {
    std::vector<float> x =
        RandomFloats(rng, k, 1.0f, trial % 4 == 0 ? 0.01 : 0);
    for (int64_t u = 0; u < kUnits; ++u) {
      float* unit = x.data() + u * 32;
      const int shape = int(rng() % 8);
      const float f = std::ldexp(1.0f, int(rng() % 200) - 100);
      for (int i = 0; i < 32; ++i) unit[i] *= f;
      if (shape == 0) {  // a zero unit, signed zeros
        for (int i = 0; i < 32; ++i) unit[i] = rng() % 2 ? 0.0f : -0.0f;
      } else if (shape == 1) {  // subnormals: the scale underflows or is tiny
        for (int i = 0; i < 32; ++i) {
          unit[i] = std::ldexp(float(int(rng() % 400) - 200), -149);
        }
      } else if (shape == 2) {  // the largest finite magnitudes
        unit[rng() % 32] = rng() % 2 ? 3.4028235e38f : -3.4028235e38f;
      } else if (shape == 3) {  // exact ties against the scale
        unit[rng() % 32] = 0.5f * f;
        unit[rng() % 32] = -2.5f * f;
      }
    }
    std::vector<int8_t> want_q(size_t(k), 1);
    std::vector<quant::ActUnit> want(kUnits);
    quant::QuantizeRow(x.data(), k, want_q.data(), want.data());
    for (const auto& [name, ops] : quantizers) {
      std::vector<int8_t> got_q(size_t(k), 1);
      std::vector<quant::ActUnit> got(kUnits);
      ops->quantize_row(x.data(), k, got_q.data(), got.data());
      ASSERT_EQ(got_q, want_q) << name << " trial " << trial;
      for (int64_t u = 0; u < kUnits; ++u) {
        SCOPED_TRACE(name + " trial " + std::to_string(trial) + " unit " +
                     std::to_string(u));
        ASSERT_EQ(FloatBits(got[u].d), FloatBits(want[u].d));
        ASSERT_EQ(got[u].half_sum[0], want[u].half_sum[0]);
        ASSERT_EQ(got[u].half_sum[1], want[u].half_sum[1]);
        ASSERT_EQ(FloatBits(got[u].sum), FloatBits(want[u].sum));
      }
    }
  }
}

TEST(QuantSpecTest, UnitProductMatchesTheExactInteger) {
  std::mt19937_64 rng(13);
  for (DType t : kBlockTypes) {
    for (int trial = 0; trial < 300; ++trial) {
      const auto bytes = RandomBlocks(rng, t, 1, BlockElems(t), Scales::kSane);
      const auto x = RandomFloats(rng, 32, 3.0f);
      int8_t q[32];
      const quant::ActUnit a = Quantize(x, q);
      const int64_t u = int64_t(rng() % uint64_t(BlockElems(t) / 32));
      quant::WeightUnit w;
      quant::DecodeUnit(t, bytes.data(), u, &w);
      // The exact real value of the unit's dot, before the activation scale.
      const auto deq = LlamaStyleDequant(t, bytes.data(), BlockElems(t));
      long double exact = 0, magnitude = 0;
      for (int i = 0; i < 32; ++i) {
        exact += deq[size_t(u * 32 + i)] * q[i];
        magnitude +=
            (std::fabs(static_cast<long double>(w.d) * w.sc[i / 16] * w.w[i]) +
             std::fabs(static_cast<long double>(w.dmin) * w.mn)) *
            std::abs(q[i]);
      }
      const float got = quant::UnitProduct(t, w, q, a);
      // u is d * I (- dmin * M) with at most two roundings, each within half
      // an ulp of a term no larger than the sum of |products|.
      EXPECT_NEAR(double(got), double(exact),
                  double(magnitude) * 0x1p-23 + 1e-30)
          << DTypeName(t) << " trial " << trial;
    }
  }
}

class QuantBackendTest : public ::testing::TestWithParam<BackendKind> {
 protected:
  Backend* Fast() { return *GetBackend(GetParam()); }
  std::mt19937_64 rng_{static_cast<uint64_t>(GetParam()) * 104729 + 5};

  void Check(DType t, int64_t m, int64_t k, int64_t n, Scales scales,
             float x_scale, double special_rate, bool bias) {
    SCOPED_TRACE(std::string(DTypeName(t)) + " m=" + std::to_string(m) +
                 " k=" + std::to_string(k) + " n=" + std::to_string(n) +
                 " scales=" + std::to_string(int(scales)) +
                 " x_scale=" + std::to_string(x_scale) +
                 " specials=" + std::to_string(special_rate) +
                 " bias=" + std::to_string(bias));
    const auto bytes = RandomBlocks(rng_, t, n, k, scales);
    const WeightView w{bytes.data(), t, n, k};
    auto x = RandomFloats(rng_, m * k, x_scale, special_rate);
    // Units of very different magnitudes in one row.
    for (int64_t u = 0; u < m * k / 32; ++u) {
      if (rng_() % 5 == 0) {
        const float f = std::ldexp(1.0f, int(rng_() % 160) - 80);
        for (int i = 0; i < 32; ++i) x[size_t(u * 32 + i)] *= f;
      }
    }
    const auto b = RandomFloats(rng_, n, 1.0f);
    EXPECT_TRUE(
        testing::GemmMatchesRef(*Fast(), x, m, w, bias ? b.data() : nullptr));
  }
};

TEST_P(QuantBackendTest, EverySupportedKAndEdgeShapes) {
  for (DType t : kBlockTypes) {
    const int64_t be = BlockElems(t);
    for (int64_t blocks : {1, 2, 3, 7, 8, 9, 15, 16, 17, 33}) {
      const int64_t k = blocks * be;
      for (int64_t m : {1, 2, 3, 4, 5, 9}) {
        Check(t, m, k, 1 + int64_t(rng_() % 70), Scales::kSane, 2.0f, 0,
              rng_() % 2);
        if (HasFailure()) return;
      }
    }
  }
}

TEST_P(QuantBackendTest, RandomShapesAndScales) {
  for (int trial = 0; trial < 400; ++trial) {
    const DType t = kBlockTypes[trial % 4];
    const int64_t k =
        BlockElems(t) *
        (1 +
         int64_t(rng_() % (t == DType::kQ8_0 || t == DType::kQ4_0 ? 40 : 6)));
    const Scales s = Scales(trial % 3);
    Check(t, 1 + int64_t(rng_() % 6), k, 1 + int64_t(rng_() % 50), s,
          trial % 2 ? 1.0f : 1e-30f, 0, rng_() % 2);
    if (HasFailure()) return;
  }
}

TEST_P(QuantBackendTest, SpecialActivations) {
  for (int trial = 0; trial < 200; ++trial) {
    const DType t = kBlockTypes[trial % 4];
    const int64_t k = BlockElems(t) * (1 + int64_t(rng_() % 4));
    Check(t, 1 + int64_t(rng_() % 5), k, 1 + int64_t(rng_() % 40),
          Scales(trial % 3), 4.0f, trial % 2 ? 0.02 : 0.3, rng_() % 2);
    if (HasFailure()) return;
  }
}

TEST_P(QuantBackendTest, LlamaShapes) {
  for (DType t : kBlockTypes) {
    Check(t, 1, 4096, 70, Scales::kSane, 1.0f, 0, false);
    Check(t, 3, 14336, 19, Scales::kSane, 1.0f, 0, true);
  }
}

TEST_P(QuantBackendTest, RowsOfABatchEqualTheirGemv) {
  for (DType t : kBlockTypes) {
    const int64_t k = 2 * 256, n = 37, m = 7;
    const auto bytes = RandomBlocks(rng_, t, n, k, Scales::kSane);
    const WeightView wv{bytes.data(), t, n, k};
    auto w = Fast()->PackWeights(wv);
    ASSERT_TRUE(w.ok()) << w.status().ToString();
    const auto x = RandomFloats(rng_, m * k, 2.0f);
    std::vector<float> batch(static_cast<size_t>(m * n)),
        row(static_cast<size_t>(n));
    ASSERT_TRUE(Fast()->Gemm(x.data(), m, **w, nullptr, batch.data()).ok());
    for (int64_t r = 0; r < m; ++r) {
      ASSERT_TRUE(
          Fast()->Gemm(x.data() + r * k, 1, **w, nullptr, row.data()).ok());
      ASSERT_TRUE(BitsEqual(row.data(), batch.data() + r * n, n))
          << DTypeName(t) << " row " << r;
    }
  }
}

TEST_P(QuantBackendTest, ThreadCountsDoNotChangeBits) {
  const int64_t k = 1024, n = 300, m = 3;
  for (DType t : kBlockTypes) {
    const auto bytes = RandomBlocks(rng_, t, n, k, Scales::kSane);
    const auto x = RandomFloats(rng_, m * k, 2.0f);
    std::vector<float> want;
    for (int threads : {1, 2, 3, 5}) {
      Fast()->SetThreads(threads);
      auto w = Fast()->PackWeights({bytes.data(), t, n, k});
      ASSERT_TRUE(w.ok());
      std::vector<float> y(static_cast<size_t>(m * n));
      ASSERT_TRUE(Fast()->Gemm(x.data(), m, **w, nullptr, y.data()).ok());
      if (want.empty()) {
        want = y;
      } else {
        ASSERT_TRUE(BitsEqual(want, y)) << DTypeName(t) << " " << threads;
      }
    }
    Fast()->SetThreads(2);
  }
}

TEST_P(QuantBackendTest, EmbeddingDequantizesRows) {
  for (DType t : kBlockTypes) {
    const int64_t vocab = 11, dim = 2 * BlockElems(t);
    const auto bytes = RandomBlocks(rng_, t, vocab, dim, Scales::kRandomBits);
    const WeightView table{bytes.data(), t, vocab, dim};
    const std::vector<int32_t> ids = {3, 0, 10, 3};
    std::vector<float> want(ids.size() * size_t(dim)),
        got(ids.size() * size_t(dim));
    for (size_t r = 0; r < ids.size(); ++r) {
      quant::DequantizeRow(t, bytes.data() + ids[r] * RowBytes(t, dim), dim,
                           want.data() + r * size_t(dim));
    }
    for (float& v : want) v = CanonicalizeNan(v);
    ASSERT_TRUE(
        Fast()
            ->Embedding(table, ids.data(), int64_t(ids.size()), got.data())
            .ok());
    EXPECT_TRUE(BitsEqual(want, got)) << DTypeName(t);
  }
}

INSTANTIATE_TEST_SUITE_P(AllBackends, QuantBackendTest,
                         ::testing::ValuesIn(AvailableBackends()),
                         testing::KindName);

TEST(QuantArgsTest, RowLengthMustBeAWholeNumberOfBlocks) {
  std::vector<unsigned char> bytes(4096);
  for (DType t : kBlockTypes) {
    // Half a unit more than a block; and for the k-quants, whole units but
    // not whole super-blocks.
    std::vector<int64_t> bad_cols = {BlockElems(t) + 16};
    if (BlockElems(t) == 256) bad_cols.push_back(288);
    for (int64_t cols : bad_cols) {
      const WeightView w{bytes.data(), t, 2, cols};
      for (BackendKind kind : AvailableBackends()) {
        auto packed = (*GetBackend(kind))->PackWeights(w);
        ASSERT_FALSE(packed.ok());
        EXPECT_NE(packed.status().message().find("w.cols"), std::string::npos)
            << packed.status().ToString();
        EXPECT_NE(packed.status().message().find("multiple of " +
                                                 std::to_string(BlockElems(t))),
                  std::string::npos)
            << packed.status().ToString();
      }
    }
  }
}

TEST(QuantArgsTest, RmsNormRefusesQuantizedGamma) {
  std::vector<unsigned char> bytes(64);
  std::vector<float> x(32), y(32);
  const WeightView gamma{bytes.data(), DType::kQ8_0, 1, 32};
  const Status s = Ref()->RmsNorm(x.data(), 1, 32, gamma, 1e-5f, y.data());
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("gamma"), std::string::npos) << s.ToString();
}

}  // namespace
}  // namespace layerproof::kernels
