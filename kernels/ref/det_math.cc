// Deterministic elementary functions; the algorithms and their measured
// errors are written up in docs/det_math.md, the contract they serve in
// docs/determinism.md §2.
//
// Every operation below is one of: + - * / with round-to-nearest-even, an
// explicit std::fma (correctly rounded by the C++ standard; never a
// contraction, the build uses -ffp-contract=off), comparisons, integer
// arithmetic and std::bit_cast. No libm transcendental, no std::ldexp /
// std::nearbyint / std::floor: rounding to an integer uses the 1.5 * 2^p
// "magic number" addition and powers of two are built from exponent bits.

#include "kernels/ref/det_math.h"

#include <bit>
#include <cmath>  // std::fma only
#include <cstdint>

namespace layerproof::kernels::detmath {
namespace {

// ---------------------------------------------------------------- ExpF ----
// The constants are shared, by value, with kernels/cpu/internal/exp_*.h and
// kernels/cuda/det_exp.cuh; a change here must be made there too (the
// exp_simd_test catches a mismatch bit for bit).

// Inputs are clamped to [kExpFMinArg, kExpFMaxArg] before anything else so
// that k stays in [-150, 128]; the clamp bounds lie beyond the thresholds
// where e^x rounds to +0 (x <= -103.972...) and to +inf (x >= 88.7228...),
// so the clamped computation still underflows / overflows by itself.
constexpr float kExpFMinArg = -104.0f;
constexpr float kExpFMaxArg = 89.0f;
// 1.5 * 2^23: adding it rounds a float of magnitude < 2^22 to an integer
// (ties to even) and leaves that integer in the low mantissa bits.
constexpr float kRoundMagicF = 12582912.0f;
constexpr float kLog2eF = 0x1.715476p+0f;    // RN(1 / ln 2)
constexpr float kLn2HiF = 0x1.62e430p-1f;    // RN(ln 2)
constexpr float kLn2LoF = -0x1.05c610p-29f;  // RN(ln 2 - kLn2HiF)
// Minimax (relative error) for e^r ~ 1 + r + r^2 (c2 + c3 r + ... + c6 r^4)
// on |r| <= 0.347, Remez exchange in 40-digit mpmath, rounded to float.
// Approximation error 3.1e-9 (2^-28.3) before float evaluation; the script
// is in docs/det_math.md.
constexpr float kExpFC2 = 0x1.fffffcp-2f;   // 0.49999994
constexpr float kExpFC3 = 0x1.555490p-3f;   // 0.166665196
constexpr float kExpFC4 = 0x1.5558f6p-5f;   // 0.0416683964
constexpr float kExpFC5 = 0x1.123a8ep-7f;   // 0.00836879667
constexpr float kExpFC6 = 0x1.6a2318p-10f;  // 0.00138144335
constexpr uint32_t kCanonicalNanF = 0x7FC00000u;

// -------------------------------------------------------- double helpers --

constexpr double kRoundMagic = 6755399441055744.0;  // 1.5 * 2^52
constexpr uint64_t kCanonicalNan = 0x7FF8000000000000u;

constexpr double kInf = std::bit_cast<double>(0x7FF0000000000000u);

double CanonicalNan() { return std::bit_cast<double>(kCanonicalNan); }

// |x| by clearing the sign bit.
double Abs(double x) {
  return std::bit_cast<double>(std::bit_cast<uint64_t>(x) &
                               0x7FFFFFFFFFFFFFFFu);
}

// An unevaluated sum hi + lo with |lo| <= ulp(hi) / 2 (once normalized).
struct DoubleDouble {
  double hi;
  double lo;
};

// Knuth's TwoSum: a + b == s.hi + s.lo exactly, for any ordering.
DoubleDouble TwoSum(double a, double b) {
  const double s = a + b;
  const double bb = s - a;
  const double e = (a - (s - bb)) + (b - bb);
  return {s, e};
}

// Dekker's Fast2Sum: exact when a == 0 or exponent(a) >= exponent(b).
DoubleDouble FastTwoSum(double a, double b) {
  const double s = a + b;
  return {s, b - (s - a)};
}

// a * b == p.hi + p.lo exactly (barring underflow), via fma.
DoubleDouble TwoProd(double a, double b) {
  const double p = a * b;
  return {p, std::fma(a, b, -p)};
}

// 2^k for k in [-1022, 1023], from exponent bits.
double Pow2(int64_t k) {
  return std::bit_cast<double>(static_cast<uint64_t>(k + 1023) << 52);
}

// ----------------------------------------------------------------- Exp ----

constexpr double kLog2e = 0x1.71547652b82fep+0;   // RN(1 / ln 2)
constexpr double kLn2Hi = 0x1.62e42fefa39efp-1;   // RN(ln 2)
constexpr double kLn2Lo = 0x1.abc9e3b39803fp-56;  // RN(ln 2 - kLn2Hi)
// Clamp bounds beyond the overflow (709.78...) and underflow (-745.13...)
// thresholds, keeping k in [-1076, 1024] so both scale halves are normal.
constexpr double kExpMinArg = -746.0;
constexpr double kExpMaxArg = 710.0;

// e^(x + xlo) for x in [kExpMinArg, kExpMaxArg] and |xlo| tiny relative to
// ln 2 (a rounding error of x). Overflows to +inf and underflows to (possibly
// subnormal) results with a single final rounding.
double ExpWithTail(double x, double xlo) {
  // k = nearest integer to x / ln 2.
  const double t = std::fma(x, kLog2e, kRoundMagic);
  const double kd = t - kRoundMagic;
  const auto k = static_cast<int64_t>(kd);
  // Cody-Waite: x - kd * kLn2Hi is exact under fma (for k != 0, |x| > 0.34,
  // so the exact difference is a multiple of 2^-54 below 0.5 in magnitude);
  // the low part and xlo are folded into a double-double r.
  const double r_hi = std::fma(-kd, kLn2Hi, x);
  const DoubleDouble r = TwoSum(r_hi, xlo - kd * kLn2Lo);
  // q = (e^r - 1 - r) / r^2 by its Taylor series through r^12 / 14!; the
  // truncation error is below 1e-19 on |r| <= 0.347.
  double q = 1.0 / 87178291200.0;  // 1/14!
  q = std::fma(q, r.hi, 1.0 / 6227020800.0);
  q = std::fma(q, r.hi, 1.0 / 479001600.0);
  q = std::fma(q, r.hi, 1.0 / 39916800.0);
  q = std::fma(q, r.hi, 1.0 / 3628800.0);
  q = std::fma(q, r.hi, 1.0 / 362880.0);
  q = std::fma(q, r.hi, 1.0 / 40320.0);
  q = std::fma(q, r.hi, 1.0 / 5040.0);
  q = std::fma(q, r.hi, 1.0 / 720.0);
  q = std::fma(q, r.hi, 1.0 / 120.0);
  q = std::fma(q, r.hi, 1.0 / 24.0);
  q = std::fma(q, r.hi, 1.0 / 6.0);
  q = std::fma(q, r.hi, 0.5);
  // e^(r.hi + r.lo) ~ 1 + r.hi + r.hi^2 q + r.lo (1 + r.hi). 1 + r.hi is
  // split exactly (TwoSum) so that the last addition is the only rounding of
  // a term as large as the result.
  const double tail = std::fma(r.hi * r.hi, q, std::fma(r.lo, r.hi, r.lo));
  const DoubleDouble one_plus_r = TwoSum(1.0, r.hi);
  const double p = one_plus_r.hi + (one_plus_r.lo + tail);
  // 2^k in two normal halves: p * 2^k1 is exact and the second multiply is
  // the only rounding, also for subnormal results.
  const int64_t k1 = k >> 1;
  return (p * Pow2(k1)) * Pow2(k - k1);
}

// ----------------------------------------------------------------- Log ----

constexpr double kSqrt2 = 0x1.6a09e667f3bcdp+0;
constexpr double kTwoThirdsHi = 0x1.5555555555555p-1;
constexpr double kTwoThirdsLo = 0x1.5555555555555p-55;

// ln x as a double-double with relative error below ~2^-62, for finite
// x > 0 (subnormals included). Pow needs the extra bits: y * ln x can reach
// ~700, and each 2^-53 of relative error in ln x costs up to ~8 ulps there.
DoubleDouble LogDD(double x) {
  int64_t e = 0;
  if (x < 0x1p-1022) {  // subnormal: make it normal, exactly
    x *= 0x1p54;
    e = -54;
  }
  const auto bits = std::bit_cast<uint64_t>(x);
  e += static_cast<int64_t>(bits >> 52) - 1023;
  // x = m * 2^e with m in [sqrt(2)/2, sqrt(2)).
  double m =
      std::bit_cast<double>((bits & 0x000FFFFFFFFFFFFFu) | 0x3FF0000000000000u);
  if (m > kSqrt2) {
    m *= 0.5;
    ++e;
  }
  // ln m = 2 atanh(s) = 2 (s + s^3/3 + s^5/5 + ...), s = (m - 1) / (m + 1),
  // |s| <= 0.1716. f = m - 1 is exact (Sterbenz); s is formed as
  // s_hi + s_lo from the exact division residual.
  const double f = m - 1.0;
  const DoubleDouble d = TwoSum(m, 1.0);
  const double s_hi = f / d.hi;
  const double residual = std::fma(-s_hi, d.hi, f);  // exact
  const double s_lo = (residual - s_hi * d.lo) / d.hi;
  // s^3 as a double-double (including the first-order s_lo term).
  const DoubleDouble z = TwoProd(s_hi, s_hi);
  const double c_hi = z.hi * s_hi;
  const double c_lo =
      std::fma(z.hi, s_hi, -c_hi) + (z.lo * s_hi + 3.0 * z.hi * s_lo);
  // (2/3) s^3 as a double-double.
  const double t_hi = kTwoThirdsHi * c_hi;
  const double t_lo = std::fma(kTwoThirdsHi, c_hi, -t_hi) +
                      (kTwoThirdsLo * c_hi + kTwoThirdsHi * c_lo);
  // The rest, sum_{n>=2} 2 s^(2n+1) / (2n+1) = s^3 z R(z), is below 2^-12 of
  // the result, so plain double evaluation suffices. Taylor through s^25:
  // the truncation error is below 2^-65 relative.
  double rz = 2.0 / 25.0;
  rz = std::fma(rz, z.hi, 2.0 / 23.0);
  rz = std::fma(rz, z.hi, 2.0 / 21.0);
  rz = std::fma(rz, z.hi, 2.0 / 19.0);
  rz = std::fma(rz, z.hi, 2.0 / 17.0);
  rz = std::fma(rz, z.hi, 2.0 / 15.0);
  rz = std::fma(rz, z.hi, 2.0 / 13.0);
  rz = std::fma(rz, z.hi, 2.0 / 11.0);
  rz = std::fma(rz, z.hi, 2.0 / 9.0);
  rz = std::fma(rz, z.hi, 2.0 / 7.0);
  rz = std::fma(rz, z.hi, 2.0 / 5.0);
  const double rest = c_hi * z.hi * rz;
  // ln m = 2 s_hi + (2/3) s^3 + 2 s_lo + rest.
  const DoubleDouble head = TwoSum(2.0 * s_hi, t_hi);
  const double log_m_lo = head.lo + ((2.0 * s_lo + t_lo) + rest);
  // + e ln 2, with e * kLn2Hi exact as a double-double.
  const auto ed = static_cast<double>(e);
  const DoubleDouble e_ln2 = TwoProd(ed, kLn2Hi);
  const DoubleDouble sum = TwoSum(e_ln2.hi, head.hi);
  const double lo = sum.lo + (e_ln2.lo + (ed * kLn2Lo + log_m_lo));
  return FastTwoSum(sum.hi, lo);
}

// -------------------------------------------------------------- Sin/Cos ----

constexpr double kTwoOverPi = 0x1.45f306dc9c883p-1;  // RN(2 / pi)
// pi/2 = kPio2_1 + kPio2_2 + kPio2_3 + O(2^-163): three doubles, each the
// rounding of what the previous ones leave.
constexpr double kPio2_1 = 0x1.921fb54442d18p+0;
constexpr double kPio2_2 = 0x1.1a62633145c07p-54;
constexpr double kPio2_3 = -0x1.f1976b7ed8fbcp-110;
// Below this |x| the reduction is skipped (sin x == x and cos x == 1 after
// rounding); keeps sin(-0) == -0.
constexpr double kTrigTiny = 0x1p-27;
// The magic-number rounding of x * 2/pi needs |x * 2/pi| < 2^51.
constexpr double kTrigMaxArg = 0x1p50;

// x = k pi/2 + r, r = hi + lo with |r| <= pi/4 (+ a hair), accurate to about
// 2^-100 relative for |x| < kTrigMaxArg. Returns k mod 4.
int ReducePiOver2(double x, DoubleDouble* r) {
  const double t = std::fma(x, kTwoOverPi, kRoundMagic);
  const double kd = t - kRoundMagic;
  // Exact under fma: kd * kPio2_1 is a multiple of 2^-52 and, whenever
  // kd != 0, so is x (|x| >= pi/4), and the difference is below 2.
  const double r1 = std::fma(-kd, kPio2_1, x);
  const DoubleDouble w = TwoProd(kd, kPio2_2);
  const DoubleDouble s = TwoSum(r1, -w.hi);
  const double tail = (s.lo - w.lo) - kd * kPio2_3;
  *r = FastTwoSum(s.hi, tail);
  return static_cast<int>(static_cast<int64_t>(kd) & 3);
}

// sin(r.hi + r.lo) for |r| <= ~1 (Taylor through r^21 / 21!, truncation
// error below 2^-64 relative at |r| = pi/4).
double KernelSin(DoubleDouble r) {
  const double z = r.hi * r.hi;
  double q = -1.0 / 51090942171709440000.0;  // -1/21!
  q = std::fma(q, z, 1.0 / 121645100408832000.0);
  q = std::fma(q, z, -1.0 / 355687428096000.0);
  q = std::fma(q, z, 1.0 / 1307674368000.0);
  q = std::fma(q, z, -1.0 / 6227020800.0);
  q = std::fma(q, z, 1.0 / 39916800.0);
  q = std::fma(q, z, -1.0 / 362880.0);
  q = std::fma(q, z, 1.0 / 5040.0);
  q = std::fma(q, z, -1.0 / 120.0);
  q = std::fma(q, z, 1.0 / 6.0);
  // q = (r - sin r) / r^3 = 1/3! - z/5! + ...; sin(hi + lo) ~ hi - hi z q +
  // lo (1 - z/2), with hi added last so that its rounding dominates.
  const double lo_term = std::fma(-0.5 * z, r.lo, r.lo);
  return r.hi + std::fma(-(r.hi * z), q, lo_term);
}

// cos(r.hi + r.lo) for |r| <= ~1 (Taylor through r^22 / 22!).
double KernelCos(DoubleDouble r) {
  const DoubleDouble z = TwoProd(r.hi, r.hi);
  double c = 1.0 / 1124000727777607680000.0;  // 1/22!
  c = std::fma(c, z.hi, -1.0 / 2432902008176640000.0);
  c = std::fma(c, z.hi, 1.0 / 6402373705728000.0);
  c = std::fma(c, z.hi, -1.0 / 20922789888000.0);
  c = std::fma(c, z.hi, 1.0 / 87178291200.0);
  c = std::fma(c, z.hi, -1.0 / 479001600.0);
  c = std::fma(c, z.hi, 1.0 / 3628800.0);
  c = std::fma(c, z.hi, -1.0 / 40320.0);
  c = std::fma(c, z.hi, 1.0 / 720.0);
  c = std::fma(c, z.hi, -1.0 / 24.0);
  // c = -(cos r - 1 + z/2) / z^2 = -(1/4! - z/6! + ...), so
  // cos(hi + lo) ~ 1 - z/2 - z^2 c - hi lo. 1 - z/2 is split exactly into
  // w + w_err (Fast2Sum; z/2 <= 0.5 < 1) so its rounding is not lost.
  const double hz = 0.5 * z.hi;
  const double w = 1.0 - hz;
  const double w_err = (1.0 - w) - hz;
  const double small = std::fma(-(z.hi * z.hi), c, -(0.5 * z.lo + r.hi * r.lo));
  return w + (w_err + small);
}

}  // namespace

float ExpF(float x) {
  // Comparisons rather than min/max: a NaN passes through unchanged here and
  // is replaced at the end; the SIMD ports may clamp NaN differently since
  // their NaN lanes are replaced too.
  float xc = x < kExpFMinArg ? kExpFMinArg : x;
  xc = xc > kExpFMaxArg ? kExpFMaxArg : xc;
  // k = nearest integer to x / ln 2 (one fma, one subtraction, both exact
  // apart from the fma's rounding to an integer); the integer k is read from
  // the low bits of t.
  const float t = std::fma(xc, kLog2eF, kRoundMagicF);
  const float kf = t - kRoundMagicF;
  const auto k = static_cast<int32_t>(std::bit_cast<uint32_t>(t) -
                                      std::bit_cast<uint32_t>(kRoundMagicF));
  // r = x - k ln 2 in two fma steps (Cody-Waite); |r| <= 0.3466.
  float r = std::fma(-kf, kLn2HiF, xc);
  r = std::fma(-kf, kLn2LoF, r);
  // p = e^r, Horner with fma, degree 6; the final fma adds the 1 with a single
  // rounding.
  float u = kExpFC6;
  u = std::fma(u, r, kExpFC5);
  u = std::fma(u, r, kExpFC4);
  u = std::fma(u, r, kExpFC3);
  u = std::fma(u, r, kExpFC2);
  u = std::fma(u, r, 1.0f);
  const float p = std::fma(u, r, 1.0f);
  // e^x = p * 2^k1 * 2^k2 with k1 = floor(k/2), k2 = k - k1, both in
  // [-75, 64] so both factors are normal floats. p * 2^k1 is exact; the
  // second multiply rounds once, to a subnormal, +0 or +inf where due.
  const int32_t k1 = k >> 1;
  const int32_t k2 = k - k1;
  const float s1 = std::bit_cast<float>(static_cast<uint32_t>(k1 + 127) << 23);
  const float s2 = std::bit_cast<float>(static_cast<uint32_t>(k2 + 127) << 23);
  const float y = (p * s1) * s2;
  return x != x ? std::bit_cast<float>(kCanonicalNanF) : y;
}

double Exp(double x) {
  if (x != x) return CanonicalNan();
  if (x < kExpMinArg) x = kExpMinArg;  // -> +0 (also -inf)
  if (x > kExpMaxArg) x = kExpMaxArg;  // -> +inf (also +inf)
  return ExpWithTail(x, 0.0);
}

double Log(double x) {
  if (x != x || x < 0.0) return CanonicalNan();
  if (x == 0.0) return -kInf;
  if (x == kInf) return kInf;
  return LogDD(x).hi;
}

double Pow(double x, double y) {
  if (x != x || y != y || x <= 0.0) return CanonicalNan();
  if (y == 0.0 || x == 1.0) return 1.0;
  if (x == kInf) return y > 0.0 ? kInf : 0.0;
  if (y == kInf || y == -kInf) return (x > 1.0) == (y > 0.0) ? kInf : 0.0;
  // x^y = e^(y ln x), with y ln x formed as a double-double so that its
  // rounding error does not scale with |y ln x|.
  const DoubleDouble l = LogDD(x);
  const DoubleDouble prod = TwoProd(y, l.hi);
  if (!(prod.hi <= kExpMaxArg)) return kInf;  // also y * ln x == +inf
  if (!(prod.hi >= kExpMinArg)) return 0.0;
  const DoubleDouble z = FastTwoSum(prod.hi, prod.lo + y * l.lo);
  return ExpWithTail(z.hi, z.lo);
}

double Sin(double x) {
  if (!(Abs(x) < kTrigMaxArg)) return CanonicalNan();  // also inf, NaN
  if (Abs(x) < kTrigTiny) return x;
  DoubleDouble r;
  switch (ReducePiOver2(x, &r)) {
    case 0:
      return KernelSin(r);
    case 1:
      return KernelCos(r);
    case 2:
      return -KernelSin(r);
    default:
      return -KernelCos(r);
  }
}

double Cos(double x) {
  if (!(Abs(x) < kTrigMaxArg)) return CanonicalNan();  // also inf, NaN
  if (Abs(x) < kTrigTiny) return 1.0;
  DoubleDouble r;
  switch (ReducePiOver2(x, &r)) {
    case 0:
      return KernelCos(r);
    case 1:
      return -KernelSin(r);
    case 2:
      return -KernelCos(r);
    default:
      return KernelSin(r);
  }
}

}  // namespace layerproof::kernels::detmath
