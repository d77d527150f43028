// Pins the floating-point environment the determinism contract assumes
// (docs/determinism.md §1) for the duration of a kernel call on the host —
// every public Backend op, every CPU worker task, sampling and table
// building:
// round-to-nearest-even, no flush-to-zero, no denormals-are-zero. A host
// library built with -ffast-math can set FTZ/DAZ for the whole process; this
// guard makes every CPU backend immune to that, at the cost of two register
// writes per op. Thread safety: per-thread state only.
#ifndef LAYERPROOF_KERNELS_FP_ENV_H_
#define LAYERPROOF_KERNELS_FP_ENV_H_

#include <cstdint>

#if defined(__x86_64__)
#include <xmmintrin.h>
#endif

namespace layerproof::kernels {

class FpEnvGuard {
 public:
  FpEnvGuard() {
#if defined(__x86_64__)
    saved_ = _mm_getcsr();
    _mm_setcsr(0x1F80u);  // all exceptions masked, RNE, FTZ = DAZ = 0
#elif defined(__aarch64__)
    uint64_t fpcr;
    __asm__ volatile("mrs %0, fpcr" : "=r"(fpcr));
    saved_ = fpcr;
    // RMode = 00 (RNE), FZ (bit 24) = 0, FZ16 (bit 19) = 0, and FEAT_AFP's
    // NEP (bit 2), AH (bit 1, alternate NaN/FMAX/FMIN/flush semantics) and
    // FIZ (bit 0, flush inputs to zero) = 0; the AFP bits are RES0, so
    // writing 0 is harmless, on cores without FEAT_AFP.
    const uint64_t want = fpcr & ~((uint64_t{3} << 22) | (uint64_t{1} << 24) |
                                   (uint64_t{1} << 19) | uint64_t{7});
    __asm__ volatile("msr fpcr, %0" : : "r"(want));
#endif
  }
  ~FpEnvGuard() {
#if defined(__x86_64__)
    _mm_setcsr(static_cast<uint32_t>(saved_));
#elif defined(__aarch64__)
    __asm__ volatile("msr fpcr, %0" : : "r"(saved_));
#endif
  }
  FpEnvGuard(const FpEnvGuard&) = delete;
  FpEnvGuard& operator=(const FpEnvGuard&) = delete;

 private:
  uint64_t saved_ = 0;
};

}  // namespace layerproof::kernels

#endif  // LAYERPROOF_KERNELS_FP_ENV_H_
