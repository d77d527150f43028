// Philox4x32-10, the counter-based PRNG of Salmon et al., "Parallel random
// numbers: as easy as 1, 2, 3" (SC'11). Integer-only, so identical on every
// platform; keyed by a 64-bit seed, indexed by a 128-bit counter. Used by the
// sampler (docs/determinism.md §3.11) and to generate golden inputs.
// Thread safety: pure functions.
#ifndef LAYERPROOF_KERNELS_PHILOX_H_
#define LAYERPROOF_KERNELS_PHILOX_H_

#include <array>
#include <cstdint>

namespace layerproof::kernels {

using PhiloxCounter = std::array<uint32_t, 4>;
using PhiloxKey = std::array<uint32_t, 2>;

// Ten rounds of Philox4x32 on `counter` under `key`.
PhiloxCounter Philox4x32(PhiloxCounter counter, PhiloxKey key);

// Uniform float in [0, 1) from the top 24 bits of a 32-bit word:
// (w >> 8) * 2^-24, exact.
inline float UniformFloat(uint32_t w) {
  return static_cast<float>(w >> 8) * (1.0f / 16777216.0f);
}

}  // namespace layerproof::kernels

#endif  // LAYERPROOF_KERNELS_PHILOX_H_
