// The NEON backend against kernels/ref, bit for bit, aimed at what is
// specific to kernels/cpu/neon_*.cc: every row-tile remainder (m mod 4) and
// panel pairing of the GEMM micro-kernel, partial last panels, k around the
// 4-step and 256-chunk boundaries, every bf16 and fp16 bit pattern through
// the in-register widening, thread counts 1, 2 and 7 (column slices starting
// mid-matrix), and a caller thread that has set flush-to-zero. For the
// block-quantized GEMM (neon_quant.cc): every format, every row-tile
// remainder, panel tails, extreme and random fp16 scales, the weights and
// activations that take the int16 sums of the baseline dots to their bounds,
// zero, underflowing, huge and non-finite activation units. The NEON quant
// kernel has an sdot and an Armv8.0 version, chosen once per process;
// scripts/test-aarch64.sh runs these tests (and quant_test, golden_test)
// again on a CPU without dotprod and with LAYERPROOF_NEON_DOTPROD=0, and
// NeonQuantPathTest checks that each run got the path it meant to test.
// tests/kernels/cross_backend_test.cc covers the NEON backend too, with the
// other backends; on builds for other architectures this file is one
// skipped test.
#include <gtest/gtest.h>

#if defined(__aarch64__)

#include <sys/auxv.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "kernels/cpu/cpu_backends.h"
#include "kernels/quant.h"
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

// ------------------------------------------------ block-quantized GEMM ---

constexpr DType kBlockTypes[] = {DType::kQ8_0, DType::kQ4_0, DType::kQ4_K,
                                 DType::kQ6_K};

enum class QuantWeights {
  kRandomBits,  // every byte random: fp16 scales of every kind, NaN included
  kSane,        // random integers, fp16 scales in [1e-3, 0.1), some zero
  kExtreme,     // blocks of one repeated byte (0x00, 0xFF, 0x80, 0x7F), the
                // largest, smallest, zero, inf and NaN fp16 scales
};

// Offsets of the fp16 scales inside one stored block.
std::vector<unsigned char> QuantBlocks(std::mt19937_64& rng, DType t,
                                       int64_t rows, int64_t cols,
                                       QuantWeights mode) {
  std::vector<unsigned char> bytes(
      static_cast<size_t>(rows * RowBytes(t, cols)));
  for (auto& b : bytes) b = uint8_t(rng());
  if (mode == QuantWeights::kRandomBits) return bytes;
  // 65504, -65504, 2^-24, 2^-14, 1, +0, -0, inf, NaN, 2^-10.
  constexpr uint16_t kExtremeHalfs[] = {0x7BFF, 0xFBFF, 0x0001, 0x0400, 0x3C00,
                                        0x0000, 0x8000, 0x7C00, 0x7E00, 0x1400};
  constexpr uint8_t kFills[] = {0x00, 0xFF, 0x80, 0x7F};
  std::uniform_real_distribution<float> u(1e-3f, 0.1f);
  const size_t block = size_t(BlockBytes(t));
  for (size_t off = 0; off < bytes.size(); off += block) {
    if (mode == QuantWeights::kExtreme && rng() % 4 != 0) {
      std::memset(&bytes[off], kFills[rng() % 4], block);
    }
    for (size_t s : quant::HalfScaleOffsets(t)) {
      uint16_t h;
      if (mode == QuantWeights::kExtreme) {
        h = rng() % 3 == 0 ? FloatToF16(u(rng))
                           : kExtremeHalfs[rng() % std::size(kExtremeHalfs)];
      } else {
        h = rng() % 6 == 0 ? 0 : FloatToF16(u(rng));
      }
      std::memcpy(&bytes[off + size_t(s)], &h, 2);
    }
  }
  return bytes;
}

// m x k activations, unit by unit: random of scales 2^-80 .. 2^80, constant
// units of ±c or ±c with random signs (every q = ±127), zero units and units
// whose scale underflows to zero; with `extreme` also units of the largest
// floats and units with one NaN or inf.
std::vector<float> QuantActivations(std::mt19937_64& rng, int64_t m, int64_t k,
                                    bool extreme) {
  auto x = RandomFloats(rng, m * k, 2.0f);
  for (int64_t u = 0; u < m * k / 32; ++u) {
    float* v = x.data() + u * 32;
    const float f = std::ldexp(1.0f, int(rng() % 160) - 80);
    switch (extreme ? rng() % 9 : rng() % 5) {
      case 0:
        for (int i = 0; i < 32; ++i) v[i] *= f;
        break;
      case 1:  // all q = +127 or all -127
        std::fill(v, v + 32, (rng() % 2 ? 1 : -1) * f);
        break;
      case 2:
        for (int i = 0; i < 32; ++i) v[i] = (rng() % 2 ? 1 : -1) * f;
        break;
      case 3:
        std::fill(v, v + 32, rng() % 2 ? 0.0f : -0.0f);
        break;
      case 4:  // the scale underflows: a zero unit
        for (int i = 0; i < 32; ++i) v[i] *= 1e-44f;
        break;
      case 5:
        for (int i = 0; i < 32; ++i) v[i] = (rng() % 2 ? 1 : -1) * 3.4e38f;
        break;
      case 6:
        v[rng() % 32] =
            std::vector<float>{NAN, -NAN, INFINITY, -INFINITY}[rng() % 4];
        break;
      default:
        break;
    }
  }
  return x;
}

TEST_P(NeonTest, QuantEveryFormatTileRemainderAndPanelTail) {
  // n: below, at and past one and two panels of 8.
  const int64_t ns[] = {1, 3, 7, 8, 9, 15, 16, 17, 23, 41};
  for (DType t : kBlockTypes) {
    const bool super = BlockElems(t) == 256;
    for (int64_t m = 1; m <= 9; ++m) {
      for (int64_t n : ns) {
        const int64_t blocks =
            super ? 1 + int64_t(rng_() % 3)
                  : std::vector<int64_t>{1, 2, 7, 8, 9, 17}[rng_() % 6];
        const int64_t k = blocks * BlockElems(t);
        SCOPED_TRACE(std::string(DTypeName(t)) + " m=" + std::to_string(m) +
                     " k=" + std::to_string(k) + " n=" + std::to_string(n));
        const auto w = QuantBlocks(rng_, t, n, k, QuantWeights::kSane);
        const auto x = QuantActivations(rng_, m, k, false);
        const auto b = RandomFloats(rng_, n, 1.0f);
        EXPECT_TRUE(testing::GemmMatchesRef(*neon_, x, m, {w.data(), t, n, k},
                                            rng_() % 2 ? b.data() : nullptr));
        if (HasFailure()) return;
      }
    }
  }
}

TEST_P(NeonTest, QuantExtremeScalesWeightsAndActivations) {
  for (int trial = 0; trial < 160; ++trial) {
    const DType t = kBlockTypes[trial % 4];
    const QuantWeights mode =
        trial % 8 < 5 ? QuantWeights::kExtreme : QuantWeights::kRandomBits;
    const int64_t m = 1 + int64_t(rng_() % 5), n = 1 + int64_t(rng_() % 30);
    const int64_t k =
        BlockElems(t) * (1 + int64_t(rng_() % (BlockElems(t) == 256 ? 3 : 20)));
    SCOPED_TRACE(std::string(DTypeName(t)) + " trial " + std::to_string(trial) +
                 " m=" + std::to_string(m) + " k=" + std::to_string(k) +
                 " n=" + std::to_string(n));
    const auto w = QuantBlocks(rng_, t, n, k, mode);
    const auto x = QuantActivations(rng_, m, k, true);
    const auto b = RandomFloats(rng_, n, 1.0f, 0.1);
    EXPECT_TRUE(testing::GemmMatchesRef(*neon_, x, m, {w.data(), t, n, k},
                                        trial % 3 ? b.data() : nullptr));
    if (HasFailure()) return;
  }
}

// The largest |I| of each format (docs/determinism.md §3.12): every weight
// at its most negative (or largest) value, every q = ±127, the largest
// scales; for the baseline dots, the int16 sums at their bounds.
TEST_P(NeonTest, QuantLargestIntegerDots) {
  for (DType t : kBlockTypes) {
    for (uint8_t fill : {0x80, 0x7F, 0xFF, 0x00}) {
      const int64_t k = 2 * 256, n = 11, m = 5;
      std::vector<unsigned char> w(size_t(n * RowBytes(t, k)), fill);
      for (size_t off = 0; off < w.size(); off += size_t(BlockBytes(t))) {
        for (size_t s : quant::HalfScaleOffsets(t)) {
          const uint16_t h = 0x3C00;  // 1
          std::memcpy(&w[off + size_t(s)], &h, 2);
        }
      }
      // Rows: all +1, all -1, units alternately of -3 and +3, random.
      auto x = RandomFloats(rng_, m * k, 1.0f);
      for (int64_t i = 0; i < k; ++i) {
        x[size_t(i)] = 1.0f;
        x[size_t(k + i)] = -1.0f;
        x[size_t(2 * k + i)] = (i / 32) % 2 ? 3.0f : -3.0f;
      }
      EXPECT_TRUE(
          testing::GemmMatchesRef(*neon_, x, m, {w.data(), t, n, k}, nullptr))
          << DTypeName(t) << " fill " << int(fill);
    }
  }
}

TEST_P(NeonTest, QuantManyChunksInTheHalvingTree) {
  // 11 and 23 chunks of 8 units; a short last chunk for Q8_0 / Q4_0.
  for (DType t : kBlockTypes) {
    const int64_t k = BlockElems(t) == 256 ? 11 * 256 : 23 * 256 - 96;
    const auto w = QuantBlocks(rng_, t, 13, k, QuantWeights::kSane);
    const auto x = QuantActivations(rng_, 3, k, false);
    const auto b = RandomFloats(rng_, 13, 1.0f);
    EXPECT_TRUE(
        testing::GemmMatchesRef(*neon_, x, 3, {w.data(), t, 13, k}, b.data()))
        << DTypeName(t);
  }
}

// The quantized GEMM has two versions (sdot, Armv8.0); this names the one
// this process runs, by neon_quant.cc's rule, and when the environment says
// which one the run is meant to test (LP_EXPECT_NEON_QUANT_PATH = sdot or
// baseline, set by scripts/test-aarch64.sh), checks that it is that one.
TEST(NeonQuantPathTest, IsTheOneThisRunMeansToTest) {
  const bool cpu_has_sdot = (getauxval(AT_HWCAP) & HWCAP_ASIMDDP) != 0;
  const char* env = std::getenv("LAYERPROOF_NEON_DOTPROD");
  const bool forced_off = env != nullptr && std::strcmp(env, "0") == 0;
  const std::string path = cpu_has_sdot && !forced_off ? "sdot" : "baseline";
  RecordProperty("neon_quant_path", path);
  const char* want = std::getenv("LP_EXPECT_NEON_QUANT_PATH");
  if (want == nullptr) {
    GTEST_SKIP() << "this process runs the " << path
                 << " path; set LP_EXPECT_NEON_QUANT_PATH to check it";
  }
  EXPECT_EQ(path, want) << "cpu has sdot: " << cpu_has_sdot
                        << ", LAYERPROOF_NEON_DOTPROD=" << (env ? env : "");
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
