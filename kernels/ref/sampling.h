// Token selection (docs/determinism.md §3.10–§3.11): greedy argmax and seeded
// temperature / top-k / top-p sampling with the Philox4x32-10 counter-based
// PRNG keyed by (seed, position).
//
// Sampling runs on the host for every backend: it is O(vocab log vocab) per
// token, negligible next to the LM head, and one implementation is the
// simplest way to keep it bit-identical. Thread safety: pure functions.
#ifndef LAYERPROOF_KERNELS_REF_SAMPLING_H_
#define LAYERPROOF_KERNELS_REF_SAMPLING_H_

#include <cstdint>

#include "kernels/backend.h"
#include "kernels/status.h"

namespace layerproof::kernels {

struct SamplingParams {
  float temperature = 0.0f;  // 0: greedy argmax
  int32_t top_k = 0;         // 0: no top-k cut
  float top_p = 1.0f;        // 1: no nucleus cut
  uint64_t seed = 0;
};

// Checks the parameters; the message names the field, value and range.
Status ValidateSamplingParams(const SamplingParams& p);

// Picks the token at sequence `position` from logits[0..vocab). Fails on
// invalid params or a NaN in the logits (sampling mode only; greedy ranks
// NaN first, as Argmax does). `softmax`, when set, computes the
// probabilities: every backend's Softmax gives ref's bits (the cross-backend
// tests check it), so the token is the same, only faster than the scalar
// oracle; null uses ref.
StatusOr<int32_t> SampleToken(const float* logits, int64_t vocab,
                              const SamplingParams& params, uint64_t position,
                              Backend* softmax = nullptr);

}  // namespace layerproof::kernels

#endif  // LAYERPROOF_KERNELS_REF_SAMPLING_H_
