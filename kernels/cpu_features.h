// x86 CPU features that GCC's and clang's __builtin_cpu_supports disagree
// on (clang 14 knows neither "f16c" nor "sha"), read from CPUID directly so
// that the kernels build under both (scripts/check-thread-safety.sh runs
// clang over every file). The rest of the dispatch keeps
// __builtin_cpu_supports, which also checks that the OS saves the wider
// registers; callers pair these with a feature it checks (avx2, sse4.1).
// Thread safety: pure functions.
#ifndef LAYERPROOF_KERNELS_CPU_FEATURES_H_
#define LAYERPROOF_KERNELS_CPU_FEATURES_H_

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>

namespace layerproof::kernels {

// F16C: CPUID.1:ECX bit 29 (Intel SDM vol. 2A, CPUID).
inline bool CpuHasF16c() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  return __get_cpuid(1, &a, &b, &c, &d) != 0 && (c & bit_F16C) != 0;
}

// SHA extensions: CPUID.(EAX=7,ECX=0):EBX bit 29.
inline bool CpuHasShaNi() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  return __get_cpuid_count(7, 0, &a, &b, &c, &d) != 0 && (b & bit_SHA) != 0;
}

}  // namespace layerproof::kernels

#endif  // x86
#endif  // LAYERPROOF_KERNELS_CPU_FEATURES_H_
