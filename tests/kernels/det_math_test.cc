// Accuracy and special-value tests for kernels/ref/det_math.h.
//
// Errors are measured in ulps of the result's format against a
// higher-precision reference: ExpF against exp in double, the double
// functions against the long double libm (expl, logl, powl, sinl, cosl:
// 64-bit significands on x86, 113-bit on AArch64). The bounds asserted here
// are the ones docs/det_math.md states; the measured maxima are printed as
// "[ measured ]" lines so that the doc's numbers can be reproduced.

#include "kernels/ref/det_math.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cfloat>
#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <random>
#include <utility>

namespace layerproof::kernels::detmath {
namespace {

constexpr float kInfF = std::numeric_limits<float>::infinity();
constexpr double kInf = std::numeric_limits<double>::infinity();

// Bounds asserted by this file (and stated in docs/det_math.md).
constexpr double kExpFMaxUlp = 1.0;
constexpr double kDoubleMaxUlp = 1.0;

float FloatFromBits(uint32_t b) { return std::bit_cast<float>(b); }
uint32_t BitsOf(float f) { return std::bit_cast<uint32_t>(f); }
uint64_t BitsOf(double d) { return std::bit_cast<uint64_t>(d); }

// ulp of the float format at |v| (v a double-precision reference value):
// 2^(e - 23) for v in [2^e, 2^(e+1)), never below the subnormal 2^-149.
double UlpOfFloat(double v) {
  int e = 0;
  std::frexp(std::fabs(v), &e);  // |v| = m * 2^e, m in [0.5, 1)
  return std::ldexp(1.0, std::max(e - 1, -126) - 23);
}

// ulp of the double format at |v|, never below 2^-1074.
long double UlpOfDouble(long double v) {
  int e = 0;
  std::frexp(std::fabs(v), &e);
  return std::ldexp(1.0L, std::max(e - 1, -1022) - 52);
}

// Largest-error bookkeeping for one sweep.
struct ErrorStats {
  double max_ulp = 0.0;
  double worst_x = 0.0;
  double worst_y = 0.0;  // second argument, for Pow
  uint64_t count = 0;
  uint64_t over_half = 0;  // results that are not correctly rounded

  void Add(double err, double x, double y = 0.0) {
    ++count;
    if (err > 0.5) ++over_half;
    if (err > max_ulp || err != err) {
      max_ulp = err;
      worst_x = x;
      worst_y = y;
    }
  }
  void Print(const char* what) const {
    std::printf("[ measured ] %-34s max %.4f ulp at x=%a y=%a (%" PRIu64
                " points, %.3f%% not correctly rounded)\n",
                what, max_ulp, worst_x, worst_y, count,
                count ? 100.0 * static_cast<double>(over_half) / count : 0.0);
  }
};

// Error of ExpF(x) in float ulps; overflow to +inf counts as exact when the
// true value is at or beyond FLT_MAX + ulp/2, and as infinitely wrong
// otherwise.
double ExpFError(float x) {
  const double ref = std::exp(static_cast<double>(x));
  const float y = ExpF(x);
  constexpr double kOverflow = 0x1.ffffffp+127;  // FLT_MAX + ulp/2
  if (std::isinf(y) || ref >= kOverflow) {
    return (std::isinf(y) && ref >= kOverflow) ? 0.0 : kInf;
  }
  return std::fabs(static_cast<double>(y) - ref) / UlpOfFloat(ref);
}

// Error of a double result against a long double reference, in double ulps.
double DoubleError(double y, long double ref) {
  constexpr long double kOverflow = 0x1.fffffffffffff8p+1023L;
  if (std::isinf(y) || std::fabs(ref) >= kOverflow) {
    return (std::isinf(y) && std::fabs(ref) >= kOverflow &&
            std::signbit(y) == std::signbit(ref))
               ? 0.0
               : kInf;
  }
  return static_cast<double>(std::fabs(static_cast<long double>(y) - ref) /
                             UlpOfDouble(ref));
}

// Every `stride`-th float bit pattern in [lo, hi] (same sign), plus the end.
template <typename F>
void ForFloatsBetween(float lo, float hi, uint32_t stride, F f) {
  uint32_t a = BitsOf(lo), b = BitsOf(hi);
  if (a > b) std::swap(a, b);  // negative range: bits run the other way
  for (uint64_t u = a; u <= b; u += stride) f(FloatFromBits(u));
  f(FloatFromBits(b));
}

// ------------------------------------------------------------------ ExpF --

TEST(ExpFTest, ErrorDenseSweep) {
  ErrorStats all;
  ErrorStats nontrivial;  // |x| >= 2^-24: the result is not simply 1
  ErrorStats subnormal;
  auto check = [&](float x) {
    const double err = ExpFError(x);
    all.Add(err, x);
    if (std::fabs(x) >= 0x1p-24f) nontrivial.Add(err, x);
    if (std::exp(static_cast<double>(x)) < FLT_MIN) subnormal.Add(err, x);
  };
  // Every 37th pattern of the finite-result domain...
  ForFloatsBetween(0.0f, 89.0f, 37, check);
  ForFloatsBetween(-0.0f, -104.0f, 37, check);
  // ...and every pattern where the result is subnormal or underflows
  // (x < ln FLT_MIN = -87.336...) or overflows (x > 88).
  ForFloatsBetween(-87.0f, -104.0f, 1, check);
  ForFloatsBetween(88.0f, 89.0f, 1, check);
  all.Print("ExpF dense sweep");
  nontrivial.Print("ExpF dense sweep, |x| >= 2^-24");
  subnormal.Print("ExpF subnormal results");
  EXPECT_LE(all.max_ulp, kExpFMaxUlp) << std::hexfloat << all.worst_x;
  EXPECT_LE(subnormal.max_ulp, kExpFMaxUlp)
      << std::hexfloat << subnormal.worst_x;
  EXPECT_GT(subnormal.count, 1000000u);
  // A regression guard on the rounding quality: exhaustively 2.06% of the
  // non-trivial results are not correctly rounded.
  EXPECT_LT(nontrivial.over_half, nontrivial.count * 3 / 100);
}

// Reproduces the exhaustive number in docs/det_math.md (about a minute;
// label `slow`: scripts/test-slow.sh).
TEST(ExpFTest, ExhaustiveErrorAllFloats) {
  ErrorStats all;
  for (uint64_t u = 0; u <= 0xFFFFFFFFu; ++u) {
    const float x = FloatFromBits(static_cast<uint32_t>(u));
    if (x != x) continue;
    all.Add(ExpFError(x), x);
  }
  all.Print("ExpF all floats");
  EXPECT_LE(all.max_ulp, kExpFMaxUlp) << std::hexfloat << all.worst_x;
}

TEST(ExpFTest, SpecialValues) {
  EXPECT_EQ(BitsOf(ExpF(0.0f)), BitsOf(1.0f));
  EXPECT_EQ(BitsOf(ExpF(-0.0f)), BitsOf(1.0f));
  EXPECT_EQ(BitsOf(ExpF(kInfF)), BitsOf(kInfF));
  EXPECT_EQ(BitsOf(ExpF(-kInfF)), 0u);  // +0, not -0
  EXPECT_EQ(BitsOf(ExpF(FLT_MAX)), BitsOf(kInfF));
  EXPECT_EQ(BitsOf(ExpF(-FLT_MAX)), 0u);
  // Tiny arguments, subnormal ones included, round to exactly 1.
  EXPECT_EQ(ExpF(FloatFromBits(1)), 1.0f);
  EXPECT_EQ(ExpF(-FloatFromBits(1)), 1.0f);
  EXPECT_EQ(ExpF(0x1p-26f), 1.0f);
  EXPECT_EQ(ExpF(-0x1p-26f), 1.0f);
  EXPECT_EQ(ExpF(-0x1p-24f), 1.0f - 0x1p-24f);
  // e itself is correctly rounded.
  EXPECT_EQ(BitsOf(ExpF(1.0f)), 0x402DF854u);
}

TEST(ExpFTest, EveryNanBecomesCanonicalQuietNan) {
  const uint32_t nans[] = {0x7FC00000u, 0xFFC00000u, 0x7F800001u, 0xFF800001u,
                           0x7FBFFFFFu, 0x7FFFFFFFu, 0xFFFFFFFFu, 0x7FC12345u};
  for (uint32_t n : nans) {
    EXPECT_EQ(BitsOf(ExpF(FloatFromBits(n))), 0x7FC00000u)
        << std::hex << "input 0x" << n;
  }
}

TEST(ExpFTest, OverflowThreshold) {
  // e^x rounds to +inf exactly when x >= ln(FLT_MAX + ulp/2) = 88.7228390...
  // 0x42B17217 = 88.7228317 is the last float below it.
  EXPECT_TRUE(std::isfinite(ExpF(FloatFromBits(0x42B17217u))));
  EXPECT_GT(ExpF(FloatFromBits(0x42B17217u)), 0x1.fffp127f);
  EXPECT_EQ(ExpF(FloatFromBits(0x42B17218u)), kInfF);
  EXPECT_EQ(ExpF(88.8f), kInfF);
  EXPECT_EQ(ExpF(89.0f), kInfF);
  EXPECT_EQ(ExpF(1e10f), kInfF);
}

TEST(ExpFTest, UnderflowThresholdAndSubnormalResults) {
  // e^x <= 2^-150 (half the smallest subnormal; the tie rounds to even, 0)
  // exactly when x <= -150 ln 2 = -103.9720770...
  // 0xC2CFF1B4 = -103.9720764 has e^x = 1.00000067 * 2^-150 -> 2^-149;
  // 0xC2CFF1B5 = -103.9720840 has e^x = 0.99999304 * 2^-150 -> +0.
  EXPECT_EQ(BitsOf(ExpF(FloatFromBits(0xC2CFF1B4u))), 1u);
  EXPECT_EQ(BitsOf(ExpF(FloatFromBits(0xC2CFF1B5u))), 0u);
  EXPECT_EQ(BitsOf(ExpF(-104.0f)), 0u);
  EXPECT_EQ(BitsOf(ExpF(-1000.0f)), 0u);
  // Subnormal results are graded (no flush): each is within a subnormal
  // ulp of the truth and they increase monotonically.
  float prev = 0.0f;
  for (float x = -103.9f; x < -87.5f; x += 0.01f) {
    const float y = ExpF(x);
    EXPECT_GE(y, prev) << x;
    EXPECT_LE(ExpFError(x), kExpFMaxUlp) << x;
    prev = y;
  }
  EXPECT_GT(prev, 0.0f);
  EXPECT_LT(prev, FLT_MIN);
}

// ------------------------------------------------------------ double Exp --

TEST(ExpTest, ErrorAgainstLongDouble) {
  std::mt19937_64 rng(20240601);
  std::uniform_real_distribution<double> wide(-745.2, 709.8);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  std::uniform_real_distribution<double> sub(-745.2, -708.4);
  ErrorStats normal, subnormal;
  auto check = [&](double x) {
    const long double ref = std::exp(static_cast<long double>(x));
    const double err = DoubleError(Exp(x), ref);
    (ref < DBL_MIN ? subnormal : normal).Add(err, x);
  };
  for (int i = 0; i < 1000000; ++i) check(wide(rng));
  for (int i = 0; i < 500000; ++i) check(unit(rng));
  for (int i = 0; i < 500000; ++i) check(sub(rng));
  normal.Print("Exp normal results");
  subnormal.Print("Exp subnormal results");
  EXPECT_LE(normal.max_ulp, kDoubleMaxUlp) << std::hexfloat << normal.worst_x;
  EXPECT_LE(subnormal.max_ulp, kDoubleMaxUlp)
      << std::hexfloat << subnormal.worst_x;
}

TEST(ExpTest, SpecialValuesAndThresholds) {
  EXPECT_EQ(Exp(0.0), 1.0);
  EXPECT_EQ(Exp(-0.0), 1.0);
  EXPECT_EQ(Exp(kInf), kInf);
  EXPECT_EQ(BitsOf(Exp(-kInf)), 0u);
  EXPECT_EQ(BitsOf(Exp(std::numeric_limits<double>::quiet_NaN())),
            0x7FF8000000000000u);
  EXPECT_EQ(BitsOf(Exp(-std::numeric_limits<double>::signaling_NaN())),
            0x7FF8000000000000u);
  // ln(DBL_MAX + ulp/2) = 709.78271289338399678...
  EXPECT_TRUE(std::isfinite(Exp(0x1.62e42fefa39efp+9)));
  EXPECT_EQ(Exp(0x1.62e42fefa39f0p+9), kInf);
  // -1075 ln 2 = -745.13321910194120762...
  EXPECT_EQ(Exp(-0x1.74910d52d3051p+9), 0x1p-1074);
  EXPECT_EQ(BitsOf(Exp(-0x1.74910d52d3052p+9)), 0u);
}

// ------------------------------------------------------------ double Log --

TEST(LogTest, ErrorAgainstLongDouble) {
  std::mt19937_64 rng(7);
  ErrorStats stats;
  auto check = [&](double x) {
    stats.Add(DoubleError(Log(x), std::log(static_cast<long double>(x))), x);
  };
  // Uniform over the bit patterns of positive finite doubles: every binade,
  // subnormals included.
  std::uniform_int_distribution<uint64_t> bits(1, 0x7FEFFFFFFFFFFFFFu);
  for (int i = 0; i < 1000000; ++i) check(std::bit_cast<double>(bits(rng)));
  // Near 1, where ln x is small and cancellation would show.
  std::uniform_real_distribution<double> near_one(0.5, 2.0);
  for (int i = 0; i < 1000000; ++i) check(near_one(rng));
  for (int i = 1; i < 100000; ++i) {
    check(1.0 + i * 0x1p-52);
    check(1.0 - i * 0x1p-53);
  }
  stats.Print("Log");
  EXPECT_LE(stats.max_ulp, kDoubleMaxUlp) << std::hexfloat << stats.worst_x;
}

TEST(LogTest, SpecialValues) {
  EXPECT_EQ(BitsOf(Log(1.0)), 0u);  // +0
  EXPECT_EQ(Log(0.0), -kInf);
  EXPECT_EQ(Log(-0.0), -kInf);
  EXPECT_EQ(Log(kInf), kInf);
  EXPECT_EQ(BitsOf(Log(-1.0)), 0x7FF8000000000000u);
  EXPECT_EQ(BitsOf(Log(-kInf)), 0x7FF8000000000000u);
  EXPECT_EQ(BitsOf(Log(std::numeric_limits<double>::quiet_NaN())),
            0x7FF8000000000000u);
  EXPECT_EQ(Log(2.0), 0x1.62e42fefa39efp-1);  // RN(ln 2)
  EXPECT_LE(DoubleError(Log(0x1p-1074), std::log(0x1p-1074L)), kDoubleMaxUlp);
}

// ------------------------------------------------------------ double Pow --

TEST(PowTest, RopeInverseFrequencies) {
  // inv_freq_i = base^(-2i/d), the RoPE use.
  ErrorStats stats;
  for (double base : {10000.0, 500000.0, 1000000.0}) {
    for (int d : {32, 64, 80, 96, 128, 256}) {
      for (int i = 0; i < d / 2; ++i) {
        const double y = -2.0 * i / d;
        stats.Add(
            DoubleError(Pow(base, y), std::pow(static_cast<long double>(base),
                                               static_cast<long double>(y))),
            base, y);
      }
    }
  }
  stats.Print("Pow (RoPE inverse frequencies)");
  EXPECT_LE(stats.max_ulp, kDoubleMaxUlp);
}

TEST(PowTest, ErrorAgainstLongDouble) {
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> log_x(-700.0, 700.0);
  std::uniform_real_distribution<double> exponent(-700.0, 700.0);
  std::uniform_real_distribution<double> small_y(-2.0, 2.0);
  ErrorStats stats;
  auto check = [&](double x, double y) {
    stats.Add(DoubleError(Pow(x, y), std::pow(static_cast<long double>(x),
                                              static_cast<long double>(y))),
              x, y);
  };
  for (int i = 0; i < 500000; ++i) {
    // Any x > 0, with y chosen so that y ln x spans the whole finite range
    // (the hard case: a large product magnifies any error of ln x).
    const double x = std::exp(log_x(rng));
    const double lx = std::log(x);
    if (lx == 0.0) continue;
    check(x, exponent(rng) / lx);
    check(x, small_y(rng));
  }
  stats.Print("Pow");
  EXPECT_LE(stats.max_ulp, kDoubleMaxUlp)
      << std::hexfloat << stats.worst_x << " ^ " << stats.worst_y;
}

TEST(PowTest, SpecialValues) {
  const uint64_t nan = 0x7FF8000000000000u;
  EXPECT_EQ(Pow(2.0, 10.0), 1024.0);
  EXPECT_EQ(Pow(2.0, -1074.0), 0x1p-1074);
  EXPECT_EQ(Pow(4.0, 0.5), 2.0);
  EXPECT_EQ(Pow(10.0, 0.0), 1.0);
  EXPECT_EQ(Pow(1.0, kInf), 1.0);
  EXPECT_EQ(Pow(kInf, 0.0), 1.0);
  EXPECT_EQ(Pow(kInf, 2.0), kInf);
  EXPECT_EQ(Pow(kInf, -2.0), 0.0);
  EXPECT_EQ(Pow(2.0, kInf), kInf);
  EXPECT_EQ(Pow(2.0, -kInf), 0.0);
  EXPECT_EQ(Pow(0.5, kInf), 0.0);
  EXPECT_EQ(Pow(0.5, -kInf), kInf);
  EXPECT_EQ(Pow(10.0, 400.0), kInf);
  EXPECT_EQ(Pow(10.0, -400.0), 0.0);
  EXPECT_EQ(Pow(DBL_MAX, 2.0), kInf);
  // Outside the domain x > 0.
  EXPECT_EQ(BitsOf(Pow(0.0, 2.0)), nan);
  EXPECT_EQ(BitsOf(Pow(-2.0, 2.0)), nan);
  EXPECT_EQ(BitsOf(Pow(std::numeric_limits<double>::quiet_NaN(), 0.0)), nan);
  EXPECT_EQ(BitsOf(Pow(2.0, std::numeric_limits<double>::quiet_NaN())), nan);
}

// -------------------------------------------------------- double Sin/Cos --

void CheckTrig(double x, ErrorStats* sin_stats, ErrorStats* cos_stats) {
  const long double xl = x;
  sin_stats->Add(DoubleError(Sin(x), std::sin(xl)), x);
  cos_stats->Add(DoubleError(Cos(x), std::cos(xl)), x);
}

TEST(SinCosTest, ErrorAgainstLongDouble) {
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> wide(-0x1p20, 0x1p20);
  std::uniform_real_distribution<double> small(-4.0, 4.0);
  ErrorStats sin_stats, cos_stats;
  for (int i = 0; i < 1000000; ++i) {
    CheckTrig(wide(rng), &sin_stats, &cos_stats);
    CheckTrig(small(rng), &sin_stats, &cos_stats);
  }
  // The doubles nearest to multiples of pi/2, where the reduced argument is
  // tiny and only the 3-part Cody-Waite constant keeps its relative error
  // small.
  for (int64_t k = 1; k < 667000; k += 7) {
    const double x = static_cast<double>(k) * 0x1.921fb54442d18p+0;
    for (double d : {x, std::nextafter(x, 0.0), std::nextafter(x, kInf)}) {
      CheckTrig(d, &sin_stats, &cos_stats);
      CheckTrig(-d, &sin_stats, &cos_stats);
    }
  }
  sin_stats.Print("Sin |x| <= 2^20");
  cos_stats.Print("Cos |x| <= 2^20");
  EXPECT_LE(sin_stats.max_ulp, kDoubleMaxUlp)
      << std::hexfloat << sin_stats.worst_x;
  EXPECT_LE(cos_stats.max_ulp, kDoubleMaxUlp)
      << std::hexfloat << cos_stats.worst_x;
}

// Beyond the RoPE range the reduction still works up to 2^50; random
// arguments only (the worst cases near multiples of pi/2 are not searched
// there, see docs/det_math.md).
TEST(SinCosTest, ErrorUpTo2Pow50) {
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> log2_x(20.0, 50.0);
  ErrorStats sin_stats, cos_stats;
  for (int i = 0; i < 200000; ++i) {
    CheckTrig(std::exp2(log2_x(rng)), &sin_stats, &cos_stats);
  }
  sin_stats.Print("Sin 2^20 < |x| < 2^50");
  cos_stats.Print("Cos 2^20 < |x| < 2^50");
  EXPECT_LE(sin_stats.max_ulp, kDoubleMaxUlp)
      << std::hexfloat << sin_stats.worst_x;
  EXPECT_LE(cos_stats.max_ulp, kDoubleMaxUlp)
      << std::hexfloat << cos_stats.worst_x;
}

TEST(SinCosTest, RopeAngles) {
  // angle = pos * inv_freq for positions up to 2^17, inv_freq as built from
  // Pow; the angles reach 2^17 rad.
  ErrorStats sin_stats, cos_stats;
  for (double base : {10000.0, 1000000.0}) {
    constexpr int kDim = 128;
    for (int i = 0; i < kDim / 2; ++i) {
      const double inv_freq = 1.0 / Pow(base, 2.0 * i / kDim);
      for (int pos = 0; pos < (1 << 17); pos += 97) {
        CheckTrig(pos * inv_freq, &sin_stats, &cos_stats);
      }
    }
  }
  sin_stats.Print("Sin (RoPE angles)");
  cos_stats.Print("Cos (RoPE angles)");
  EXPECT_LE(sin_stats.max_ulp, kDoubleMaxUlp);
  EXPECT_LE(cos_stats.max_ulp, kDoubleMaxUlp);
}

TEST(SinCosTest, SpecialValues) {
  const uint64_t nan = 0x7FF8000000000000u;
  EXPECT_EQ(BitsOf(Sin(0.0)), 0u);
  EXPECT_EQ(BitsOf(Sin(-0.0)), BitsOf(-0.0));
  EXPECT_EQ(Cos(0.0), 1.0);
  EXPECT_EQ(Cos(-0.0), 1.0);
  EXPECT_EQ(Sin(0x1p-30), 0x1p-30);
  EXPECT_EQ(Sin(-0x1p-1074), -0x1p-1074);
  EXPECT_EQ(BitsOf(Sin(kInf)), nan);
  EXPECT_EQ(BitsOf(Cos(-kInf)), nan);
  EXPECT_EQ(BitsOf(Sin(std::numeric_limits<double>::quiet_NaN())), nan);
  EXPECT_EQ(BitsOf(Cos(std::numeric_limits<double>::quiet_NaN())), nan);
  // The reduction's documented limit: |x| >= 2^50 is outside the domain.
  EXPECT_EQ(BitsOf(Sin(0x1p50)), nan);
  EXPECT_EQ(BitsOf(Cos(-0x1p60)), nan);
  EXPECT_TRUE(std::isfinite(Sin(0x1.fffffffffffffp49)));
  // Odd and even symmetry hold exactly (the algorithm is sign-symmetric).
  for (double x : {0.5, 1.0, 2.0, 3.0, 100.0, 12345.678, 1e6}) {
    EXPECT_EQ(Sin(-x), -Sin(x)) << x;
    EXPECT_EQ(Cos(-x), Cos(x)) << x;
  }
}

}  // namespace
}  // namespace layerproof::kernels::detmath
