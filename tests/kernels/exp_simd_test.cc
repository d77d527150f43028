// The vector ExpF ports (kernels/cpu/internal/exp_{avx512,avx2,neon}.h) must
// equal the scalar oracle detmath::ExpF bit for bit, for every float input,
// NaNs included (docs/det_math.md, "ExpF").
//
// The default tests walk a strided subset of all 2^32 bit patterns plus every
// pattern of the subnormal-result and overflow ranges and a list of special
// values; ExhaustiveAllFloats walks every pattern (label `slow`, not in
// the default suite: scripts/test-slow.sh runs it; run it after touching
// ExpF or a port).
//
// x86: this file is compiled without ISA flags; the per-ISA loops carry
// __attribute__((target(...))) like the kernels they call, and run only
// when __builtin_cpu_supports says the CPU has the ISA (GTEST_SKIP
// otherwise). AArch64: the NEON port is baseline and always runs.

#include <gtest/gtest.h>

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "kernels/ref/det_math.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>

#include "kernels/cpu/internal/exp_avx2.h"
#include "kernels/cpu/internal/exp_avx512.h"
#define LP_EXP_SIMD_X86 1
#elif defined(__aarch64__)
#include <arm_neon.h>

#include "kernels/cpu/internal/exp_neon.h"
#define LP_EXP_SIMD_NEON 1
#endif

namespace layerproof::kernels::cpu {
namespace {

// Inputs per batch: a multiple of every port's width (at most 16 lanes).
constexpr size_t kChunk = 1 << 16;

// One vector port: applies ExpF to n floats (n a multiple of 16).
using ExpArrayFn = void (*)(const float* in, float* out, size_t n);

#if defined(LP_EXP_SIMD_X86)
__attribute__((target("avx512f"))) void ExpArrayAvx512(const float* in,
                                                       float* out, size_t n) {
  for (size_t i = 0; i < n; i += 16) {
    _mm512_storeu_ps(out + i, ExpF16(_mm512_loadu_ps(in + i)));
  }
}

__attribute__((target("avx2,fma"))) void ExpArrayAvx2(const float* in,
                                                      float* out, size_t n) {
  for (size_t i = 0; i < n; i += 8) {
    _mm256_storeu_ps(out + i, ExpF8(_mm256_loadu_ps(in + i)));
  }
}
#endif

#if defined(LP_EXP_SIMD_NEON)
void ExpArrayNeon(const float* in, float* out, size_t n) {
  for (size_t i = 0; i < n; i += 4) {
    vst1q_f32(out + i, ExpF4(vld1q_f32(in + i)));
  }
}
#endif

struct Port {
  const char* name;
  ExpArrayFn fn;
  bool supported;
};

// The ports this build has, with whether the running CPU can execute them.
std::vector<Port> Ports() {
  std::vector<Port> ports;
#if defined(LP_EXP_SIMD_X86)
  __builtin_cpu_init();
  ports.push_back(
      {"avx512", ExpArrayAvx512, __builtin_cpu_supports("avx512f") != 0});
  ports.push_back({"avx2", ExpArrayAvx2,
                   __builtin_cpu_supports("avx2") != 0 &&
                       __builtin_cpu_supports("fma") != 0});
#endif
#if defined(LP_EXP_SIMD_NEON)
  ports.push_back({"neon", ExpArrayNeon, true});
#endif
  return ports;
}

// Compares each port against the scalar ExpF on `inputs` (size a multiple
// of 16); returns the number of mismatches and reports the first few.
int64_t CountMismatches(const std::vector<Port>& ports,
                        const std::vector<float>& inputs) {
  std::vector<uint32_t> want(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    want[i] = std::bit_cast<uint32_t>(detmath::ExpF(inputs[i]));
  }
  std::vector<float> got(inputs.size());
  int64_t mismatches = 0;
  for (const Port& port : ports) {
    port.fn(inputs.data(), got.data(), inputs.size());
    for (size_t i = 0; i < inputs.size(); ++i) {
      const auto have = std::bit_cast<uint32_t>(got[i]);
      if (want[i] != have && ++mismatches <= 5) {
        ADD_FAILURE() << port.name << ": ExpF(bits 0x" << std::hex
                      << std::bit_cast<uint32_t>(inputs[i]) << ") = 0x" << have
                      << ", scalar gives 0x" << want[i];
      }
    }
  }
  return mismatches;
}

// Runs the ports over the bit patterns first, first + stride, ... <= last,
// in chunks (the tail padded with zeros), and returns the mismatch count.
int64_t SweepBits(const std::vector<Port>& ports, uint64_t first, uint64_t last,
                  uint64_t stride) {
  std::vector<float> chunk;
  chunk.reserve(kChunk);
  int64_t mismatches = 0;
  for (uint64_t u = first; u <= last; u += stride) {
    chunk.push_back(std::bit_cast<float>(static_cast<uint32_t>(u)));
    if (chunk.size() == kChunk) {
      mismatches += CountMismatches(ports, chunk);
      chunk.clear();
    }
  }
  if (!chunk.empty()) {
    chunk.resize((chunk.size() + 15) / 16 * 16, 0.0f);
    mismatches += CountMismatches(ports, chunk);
  }
  return mismatches;
}

// Skips the test unless some port runs here; returns the runnable ones.
std::vector<Port> RunnablePorts(std::string* skipped) {
  std::vector<Port> runnable;
  for (const Port& p : Ports()) {
    if (p.supported) {
      runnable.push_back(p);
    } else {
      *skipped += std::string(" ") + p.name;
    }
  }
  return runnable;
}

TEST(ExpSimdTest, SpecialValuesMatchScalar) {
  std::string skipped;
  const std::vector<Port> ports = RunnablePorts(&skipped);
  if (ports.empty()) GTEST_SKIP() << "CPU lacks every port:" << skipped;
  const uint32_t special_bits[] = {
      0x00000000u, 0x80000000u,  // +-0
      0x00000001u, 0x80000001u,  // +-smallest subnormal
      0x007FFFFFu, 0x807FFFFFu,  // +-largest subnormal
      0x00800000u, 0x80800000u,  // +-FLT_MIN
      0x7F7FFFFFu, 0xFF7FFFFFu,  // +-FLT_MAX
      0x7F800000u, 0xFF800000u,  // +-inf
      0x7FC00000u, 0xFFC00000u, 0x7F800001u, 0xFF800001u, 0x7FBFFFFFu,
      0x7FFFFFFFu, 0xFFFFFFFFu, 0x7FC12345u,  // quiet and signaling NaNs
      0x42B17217u, 0x42B17218u,  // last finite / first overflowing input
      0xC2CFF1B4u, 0xC2CFF1B5u,  // last 2^-149 / first +0 result
      0x42B20000u, 0xC2D00000u,  // the clamp bounds 89 and -104
      0x3F800000u, 0xBF800000u,  // +-1
  };
  std::vector<float> inputs;
  for (uint32_t b : special_bits) inputs.push_back(std::bit_cast<float>(b));
  while (inputs.size() % 16 != 0) inputs.push_back(0.5f);
  EXPECT_EQ(CountMismatches(ports, inputs), 0);
  if (!skipped.empty()) std::printf("[ skipped  ] ports:%s\n", skipped.c_str());
}

// About 2^26 patterns: every 61st of all 2^32, plus every pattern
// whose result is subnormal, underflows or overflows (the two-step scaling
// and the clamp). A few seconds.
TEST(ExpSimdTest, StridedSweepMatchesScalar) {
  std::string skipped;
  const std::vector<Port> ports = RunnablePorts(&skipped);
  if (ports.empty()) GTEST_SKIP() << "CPU lacks every port:" << skipped;
  const auto bits = [](float f) {
    return static_cast<uint64_t>(std::bit_cast<uint32_t>(f));
  };
  EXPECT_EQ(SweepBits(ports, 0, 0xFFFFFFFFu, 61), 0);
  // Negative floats' bit patterns grow with magnitude: -87 .. -105.
  EXPECT_EQ(SweepBits(ports, bits(-87.0f), bits(-105.0f), 1), 0);
  EXPECT_EQ(SweepBits(ports, bits(88.0f), bits(90.0f), 1), 0);
  if (!skipped.empty()) std::printf("[ skipped  ] ports:%s\n", skipped.c_str());
}

// Every one of the 2^32 patterns, for each port the CPU runs. Minutes
// (label `slow`).
TEST(ExpSimdTest, ExhaustiveAllFloats) {
  std::string skipped;
  const std::vector<Port> ports = RunnablePorts(&skipped);
  if (ports.empty()) GTEST_SKIP() << "CPU lacks every port:" << skipped;
  EXPECT_EQ(SweepBits(ports, 0, 0xFFFFFFFFu, 1), 0);
  for (const Port& port : ports) {
    std::printf("[ checked  ] %s: all 2^32 inputs\n", port.name);
  }
}

}  // namespace
}  // namespace layerproof::kernels::cpu
