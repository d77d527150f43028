#include "kernels/dtype.h"

#include <gtest/gtest.h>

#include <cmath>

namespace layerproof::kernels {
namespace {

TEST(DTypeTest, Bf16RoundTripsEveryBf16Value) {
  for (uint32_t h = 0; h <= 0xFFFF; ++h) {
    const float f = Bf16ToFloat(uint16_t(h));
    if (std::isnan(f)) continue;
    EXPECT_EQ(FloatToBf16(f), h) << h;
  }
}

TEST(DTypeTest, F16RoundTripsEveryF16Value) {
  for (uint32_t h = 0; h <= 0xFFFF; ++h) {
    const float f = F16ToFloat(uint16_t(h));
    if (std::isnan(f)) {
      EXPECT_EQ((h >> 10) & 0x1F, 0x1Fu);
      continue;
    }
    EXPECT_EQ(FloatToF16(f), h) << h;
  }
}

TEST(DTypeTest, F16KnownValues) {
  EXPECT_EQ(F16ToFloat(0x3C00), 1.0f);
  EXPECT_EQ(F16ToFloat(0xC000), -2.0f);
  EXPECT_EQ(F16ToFloat(0x7BFF), 65504.0f);
  EXPECT_EQ(F16ToFloat(0x0001), std::ldexp(1.0f, -24));  // smallest subnormal
  EXPECT_EQ(F16ToFloat(0x03FF), std::ldexp(1023.0f, -24));
  EXPECT_EQ(F16ToFloat(0x7C00), INFINITY);
  EXPECT_EQ(FloatToF16(65520.0f), 0x7C00);  // halfway to 2^16 rounds to inf
  EXPECT_EQ(FloatToF16(std::ldexp(1.0f, -25)), 0x0000);  // ties to even: 0
  EXPECT_EQ(FloatToF16(std::ldexp(1.5f, -25)), 0x0001);
}

TEST(DTypeTest, Bf16RoundsToNearestEven) {
  EXPECT_EQ(FloatToBf16(BitsToFloat(0x3F808000u)), 0x3F80);  // tie, even
  EXPECT_EQ(FloatToBf16(BitsToFloat(0x3F818000u)), 0x3F82);  // tie, up to even
  EXPECT_EQ(FloatToBf16(BitsToFloat(0x3F808001u)), 0x3F81);
}

TEST(DTypeTest, CanonicalNan) {
  EXPECT_EQ(FloatBits(CanonicalizeNan(BitsToFloat(0xFFC00001u))),
            kCanonicalNanBits);
  EXPECT_EQ(FloatBits(CanonicalizeNan(-0.0f)), 0x80000000u);
}

}  // namespace
}  // namespace layerproof::kernels
