// kernels/model/quantize.h: every block it produces decodes (with
// kernels::quant::DequantizeRow, the engine's decoder) within the bound its
// scheme guarantees, exact cases stay exact, and bad inputs are refused.

#include "kernels/model/quantize.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/dtype.h"
#include "kernels/quant.h"

namespace layerproof::kernels::model {
namespace {

using ::testing::HasSubstr;

constexpr DType kBlockTypes[] = {DType::kQ8_0, DType::kQ4_0, DType::kQ4_K,
                                 DType::kQ6_K};

// Deterministic inputs: uniform in [-1, 1) from a 32-bit LCG.
class Lcg {
 public:
  explicit Lcg(uint32_t seed) : x_(seed * 2654435761u + 1) {}
  float Uniform() {
    x_ = x_ * 1664525u + 1013904223u;
    return float(x_ >> 8) / float(1 << 23) - 1.0f;
  }
  // Roughly normal (the sum of four uniforms).
  float Normal() { return Uniform() + Uniform() + Uniform() + Uniform(); }

 private:
  uint32_t x_;
};

float F16At(const unsigned char* p) {
  uint16_t h;
  std::memcpy(&h, p, 2);
  return F16ToFloat(h);
}

std::vector<unsigned char> Quantize(DType t, const std::vector<float>& x) {
  std::vector<unsigned char> out(size_t(RowBytes(t, int64_t(x.size()))));
  const Status s = QuantizeRow(t, x.data(), int64_t(x.size()), out.data());
  EXPECT_TRUE(s.ok()) << DTypeName(t) << ": " << s.ToString();
  return out;
}

std::vector<float> Decode(DType t, const std::vector<unsigned char>& bytes,
                          size_t cols) {
  std::vector<float> y(cols);
  quant::DequantizeRow(t, bytes.data(), int64_t(cols), y.data());
  return y;
}

// The largest error element e of a row of type t may have, from the scales
// its block stores (quantize.h's schemes):
//   Q8_0  half a step, plus the fp16 rounding of d over 127 steps;
//   Q4_0  one step (the clamp at +7), plus the fp16 rounding of d;
//   Q4_K  half a step plus what quantizing the 6-bit scale and min and
//         their fp16 super-scales can add (<= 8.1 d + 0.6 dmin);
//   Q6_K  one step (the clamp at +31) plus 32 times how far the int8 scale
//         can sit from the sub-block's own (half a step of d, or a whole
//         one where it clamps at 127, plus fp16 rounding): <= 35 |d|.
// A scale that underflows fp16 is off by up to 2^-25 absolutely, times the
// largest integer it multiplies: the absolute terms.
double Bound(DType t, const unsigned char* row, int64_t e) {
  const double kUlp = std::ldexp(1.0, -25);
  const int64_t b = e / BlockElems(t);
  const unsigned char* blk = row + b * BlockBytes(t);
  switch (t) {
    case DType::kQ8_0:
      return 0.57 * std::fabs(F16At(blk)) + 127 * kUlp;
    case DType::kQ4_0:
      return 1.01 * std::fabs(F16At(blk)) + 8 * kUlp;
    case DType::kQ4_K: {
      quant::WeightUnit u;
      quant::DecodeUnit(t, row, e / 32, &u);
      return 0.5 * u.d * u.sc[0] + 8.1 * u.d + 0.6 * u.dmin +
             (63 * 15 + 63) * kUlp;
    }
    case DType::kQ6_K: {
      quant::WeightUnit u;
      quant::DecodeUnit(t, row, e / 32, &u);
      const double d = std::fabs(u.d);
      return d * std::abs(u.sc[(e % 32) / 16]) + 35.0 * d + 32 * 128 * kUlp;
    }
    default:
      return 0;
  }
}

// Checks every element against Bound; returns the RMS error relative to the
// RMS of x.
double CheckRow(DType t, const std::vector<float>& x, const std::string& what) {
  const std::vector<unsigned char> q = Quantize(t, x);
  const std::vector<float> y = Decode(t, q, x.size());
  double err2 = 0, x2 = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const double err = std::fabs(double(x[i]) - double(y[i]));
    EXPECT_LE(err, Bound(t, q.data(), int64_t(i)) + 1e-30)
        << DTypeName(t) << " " << what << " element " << i << ": x " << x[i]
        << " decoded " << y[i];
    EXPECT_TRUE(std::isfinite(y[i]));
    err2 += err * err;
    x2 += double(x[i]) * double(x[i]);
  }
  return x2 > 0 ? std::sqrt(err2 / x2) : 0.0;
}

TEST(QuantizeTest, EveryBlockDecodesWithinItsBound) {
  struct Kind {
    const char* name;
    float (*gen)(Lcg&, int64_t);
  };
  const Kind kinds[] = {
      {"normal", [](Lcg& g, int64_t) { return g.Normal(); }},
      {"uniform", [](Lcg& g, int64_t) { return g.Uniform(); }},
      {"positive", [](Lcg& g, int64_t) { return 2.0f + g.Uniform(); }},
      {"negative", [](Lcg& g, int64_t) { return -3.0f + g.Uniform(); }},
      {"outliers",
       [](Lcg& g, int64_t i) {
         return i % 97 == 5 ? 40.0f * g.Uniform() : 0.01f * g.Normal();
       }},
      {"tiny", [](Lcg& g, int64_t) { return 1e-6f * g.Normal(); }},
      {"wide",
       [](Lcg& g, int64_t i) {
         return std::ldexp(g.Uniform(), int(i / 32 % 16) - 8);
       }},
      {"constant", [](Lcg&, int64_t) { return -0.75f; }},
  };
  for (DType t : kBlockTypes) {
    for (const Kind& k : kinds) {
      for (uint32_t seed = 1; seed <= 4; ++seed) {
        Lcg g(seed);
        std::vector<float> x(1024);
        for (size_t i = 0; i < x.size(); ++i) x[i] = k.gen(g, int64_t(i));
        CheckRow(t, x, k.name);
      }
    }
  }
}

TEST(QuantizeTest, ErrorOnNormalWeightsIsWhatTheFormatPromises) {
  // RMS error relative to the RMS weight on normal data (measured 0.0051,
  // 0.082, 0.076 and 0.018; the bounds leave ~1.5x room).
  const struct {
    DType t;
    double max_rel_rms;
  } cases[] = {{DType::kQ8_0, 0.008},
               {DType::kQ4_0, 0.12},
               {DType::kQ4_K, 0.11},
               {DType::kQ6_K, 0.027}};
  for (const auto& c : cases) {
    Lcg g(7);
    std::vector<float> x(4096);
    for (float& v : x) v = g.Normal();
    EXPECT_LE(CheckRow(c.t, x, "normal"), c.max_rel_rms) << DTypeName(c.t);
  }
}

TEST(QuantizeTest, ZeroBlocksAreAllZeroBytesOrNeutralNibbles) {
  // +0, -0 and a mix give the same bytes: a regression test for std::fmax,
  // whose pick between +0 and -0 differed between -O1 and -O2 builds and
  // reached Q4_K's stored dmin as -0.
  std::vector<float> mixed(512, 0.0f);
  for (size_t i = 0; i < mixed.size(); i += 3) mixed[i] = -0.0f;
  const std::vector<std::vector<float>> inputs = {
      std::vector<float>(512, 0.0f), std::vector<float>(512, -0.0f), mixed};
  for (const std::vector<float>& zeros : inputs) {
    for (DType t : kBlockTypes) {
      const std::vector<unsigned char> q = Quantize(t, zeros);
      for (size_t i = 0; i < q.size(); ++i) {
        // Q4_0 stores weight 0 as the nibble 8, and its d = max / -8 is -0
        // (0x8000), as llama.cpp's; every other byte is 0.
        uint8_t want = 0;
        if (t == DType::kQ4_0)
          want = i % 18 >= 2 ? 0x88 : i % 18 == 1 ? 0x80 : 0;
        EXPECT_EQ(q[i], want) << DTypeName(t) << " byte " << i;
      }
      for (float y : Decode(t, q, zeros.size())) EXPECT_EQ(y, 0.0f);
    }
  }
}

TEST(QuantizeTest, RepresentableBlocksAreExact) {
  // Q8_0: k / 2 for k in [-127, 127]: d = 0.5 exactly.
  std::vector<float> q8(256);
  for (size_t i = 0; i < q8.size(); ++i) {
    q8[i] = float(int(i % 32) * 8 - 127 + (i % 32 == 31 ? 6 : 0)) / 2.0f;
  }
  for (size_t b = 0; b < q8.size(); b += 32) q8[b] = -63.5f;  // the amax
  EXPECT_EQ(Decode(DType::kQ8_0, Quantize(DType::kQ8_0, q8), q8.size()), q8);

  // Q4_0: k / 4 for k in [-8, 7], the -8 present: d = 0.25.
  std::vector<float> q4(64);
  for (size_t i = 0; i < q4.size(); ++i) q4[i] = float(int(i % 16) - 8) / 4;
  EXPECT_EQ(Decode(DType::kQ4_0, Quantize(DType::kQ4_0, q4), q4.size()), q4);

  // Q4_K: q * 63/64 for q in [0, 15] in every sub-block: scale 63/64,
  // d = 1/64, sc = 63, no min.
  std::vector<float> k4(256);
  for (size_t i = 0; i < k4.size(); ++i) {
    k4[i] = float(int(i * 7 % 16)) * 63.0f / 64.0f;
  }
  for (size_t j = 0; j < 8; ++j) k4[32 * j] = 15.0f * 63.0f / 64.0f;
  for (size_t j = 0; j < 8; ++j) k4[32 * j + 1] = 0.0f;
  EXPECT_EQ(Decode(DType::kQ4_K, Quantize(DType::kQ4_K, k4), k4.size()), k4);

  // Q6_K: multiples of 1/8 in [-4, 3.875], -4 in every sub-block of 16:
  // scale 1/8, d = -2^-10, sc = -128.
  std::vector<float> k6(256);
  for (size_t i = 0; i < k6.size(); ++i) {
    k6[i] = float(int(i * 13 % 64) - 32) / 8.0f;
  }
  for (size_t s = 0; s < 16; ++s) k6[16 * s + 3] = -4.0f;
  EXPECT_EQ(Decode(DType::kQ6_K, Quantize(DType::kQ6_K, k6), k6.size()), k6);
}

TEST(QuantizeTest, TiesRoundToEven) {
  // Q6_K with step 1/8: 3/16 and 5/16 are ties at 1.5 and 2.5 steps; both
  // round to 2 steps, 1/4.
  std::vector<float> x(256, 0.0f);
  for (size_t s = 0; s < 16; ++s) x[16 * s] = -4.0f;
  x[1] = 3.0f / 16.0f;
  x[2] = 5.0f / 16.0f;
  x[3] = -3.0f / 16.0f;
  const std::vector<float> y =
      Decode(DType::kQ6_K, Quantize(DType::kQ6_K, x), x.size());
  EXPECT_EQ(y[1], 0.25f);
  EXPECT_EQ(y[2], 0.25f);
  EXPECT_EQ(y[3], -0.25f);
}

TEST(QuantizeTest, MatchesLlamaCppQ8_0AndQ4_0ReferenceArithmetic) {
  // quantize_row_q8_0_ref / quantize_row_q4_0_ref, restated for one block.
  Lcg g(3);
  std::vector<float> x(32);
  for (float& v : x) v = g.Normal();
  float amax = 0, max = 0;
  for (float v : x) {
    if (amax < std::fabs(v)) {
      amax = std::fabs(v);
      max = v;
    }
  }
  const std::vector<unsigned char> q8 = Quantize(DType::kQ8_0, x);
  const float d8 = amax / 127.0f;
  EXPECT_EQ(F16At(q8.data()), F16ToFloat(FloatToF16(d8)));
  for (int j = 0; j < 32; ++j) {
    EXPECT_EQ(int8_t(q8[2 + j]), int8_t(std::roundf(x[j] * (1.0f / d8))));
  }
  const std::vector<unsigned char> q4 = Quantize(DType::kQ4_0, x);
  const float d4 = max / -8.0f;
  for (int j = 0; j < 16; ++j) {
    const int lo = std::min(15, int(x[j] * (1.0f / d4) + 8.5f));
    const int hi = std::min(15, int(x[j + 16] * (1.0f / d4) + 8.5f));
    EXPECT_EQ(q4[2 + j], uint8_t(lo | (hi << 4))) << j;
  }
}

TEST(QuantizeTest, NonFiniteWeightsAreRefusedNamingTheElement) {
  for (DType t : {DType::kQ8_0, DType::kQ4_0, DType::kQ4_K, DType::kQ6_K,
                  DType::kF16, DType::kBF16, DType::kF32}) {
    for (float bad : {std::nanf(""), INFINITY, -INFINITY}) {
      std::vector<float> x(256, 0.5f);
      x[37] = bad;
      std::vector<unsigned char> out(size_t(RowBytes(t, 256)));
      const Status s = QuantizeRow(t, x.data(), 256, out.data());
      EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << DTypeName(t);
      EXPECT_THAT(s.message(), HasSubstr("element 37: got"));
      EXPECT_THAT(s.message(), HasSubstr("want a finite weight"));
    }
  }
}

TEST(QuantizeTest, ScalesThatOverflowFp16AreRefused) {
  // Block 9 of Q8_0 / Q4_0 and block 1 of Q6_K hold element 300.
  const struct {
    DType t;
    float big;
    const char* want;
  } cases[] = {{DType::kQ8_0, 1e7f, "block 9 (elements 288..319): scale d = "},
               {DType::kQ4_0, 1e6f, "block 9 (elements 288..319): scale d = "},
               {DType::kQ6_K, 1e9f, "block 1 (elements 256..511): scale d = "}};
  for (const auto& c : cases) {
    std::vector<float> x(512, 1.0f);
    x[300] = c.big;
    std::vector<unsigned char> out(size_t(RowBytes(c.t, 512)));
    const Status s = QuantizeRow(c.t, x.data(), 512, out.data());
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << DTypeName(c.t);
    EXPECT_THAT(s.message(), HasSubstr(c.want));
    EXPECT_THAT(s.message(), HasSubstr("overflows fp16 (max 65504)"));
  }
  // Q4_K: a range of 1e9 overflows d; a minimum of -1e9 with no range
  // overflows dmin only.
  std::vector<float> range(256, 0.0f), low(256, -1e9f);
  range[0] = 1e9f;
  std::vector<unsigned char> out(144);
  EXPECT_THAT(
      QuantizeRow(DType::kQ4_K, range.data(), 256, out.data()).message(),
      HasSubstr("block 0 (elements 0..255): scale d = "));
  EXPECT_THAT(QuantizeRow(DType::kQ4_K, low.data(), 256, out.data()).message(),
              HasSubstr("scale dmin = "));
  // Just inside: amax 8e6 gives d = 62992 for Q8_0.
  std::vector<float> ok(32, 8e6f);
  std::vector<unsigned char> q(34);
  EXPECT_TRUE(QuantizeRow(DType::kQ8_0, ok.data(), 32, q.data()).ok());
}

TEST(QuantizeTest, FloatFormats) {
  const std::vector<float> x = {1.0f, -2.5f, 3.140625f, 0.0f, 65504.0f};
  std::vector<unsigned char> f32(20), f16(10), bf16(10);
  ASSERT_TRUE(QuantizeRow(DType::kF32, x.data(), 5, f32.data()).ok());
  EXPECT_EQ(std::memcmp(f32.data(), x.data(), 20), 0);
  ASSERT_TRUE(QuantizeRow(DType::kF16, x.data(), 5, f16.data()).ok());
  EXPECT_EQ(f16, EncodeWeights(x, DType::kF16));
  ASSERT_TRUE(QuantizeRow(DType::kBF16, x.data(), 5, bf16.data()).ok());
  EXPECT_EQ(bf16, EncodeWeights(x, DType::kBF16));
  const float big = 70000.0f;
  EXPECT_THAT(QuantizeRow(DType::kF16, &big, 1, f16.data()).message(),
              HasSubstr("element 0: 70000 overflows F16"));
}

TEST(QuantizeTest, RowLengthMustBeWholeBlocks) {
  std::vector<float> x(300, 0.0f);
  std::vector<unsigned char> out(1024);
  const Status s = QuantizeRow(DType::kQ4_K, x.data(), 300, out.data());
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(),
              HasSubstr("300 columns, want a positive multiple of 256 for "
                        "Q4_K"));
  EXPECT_FALSE(QuantizeRow(DType::kQ8_0, x.data(), 0, out.data()).ok());
}

TEST(QuantizeTest, SameInputSameBytes) {
  Lcg g(11);
  std::vector<float> x(2048);
  for (float& v : x) v = g.Normal();
  for (DType t : kBlockTypes) EXPECT_EQ(Quantize(t, x), Quantize(t, x));
}

}  // namespace
}  // namespace layerproof::kernels::model
