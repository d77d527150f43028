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
#include <string_view>

#include "kernels/backend.h"
#include "kernels/status.h"

namespace layerproof::kernels {

struct SamplingParams {
  float temperature = 0.0f;  // 0: greedy argmax
  int32_t top_k = 0;         // 0: no top-k cut
  float top_p = 1.0f;        // 1: no nucleus cut
  uint64_t seed = 0;
};

// The admitted sampling parameters (docs/determinism.md §3.11), the one home
// of these ranges: the prover's request validation, the engine and the log's
// commitment validation all call ValidateSamplingParams. Temperature is 0
// (greedy) or in [kMinTemperature, kMaxTemperature]; the lower bound keeps
// a prover from committing to a denormal temperature whose logits/T
// overflows for every row (the sampler is total anyway, §3.11).
inline constexpr float kMinTemperature = 1e-3f;
inline constexpr float kMaxTemperature = 1e3f;

// Checks the parameters; the message names `field` ("sampling",
// "Commitment.sampling", ...) with the member, the value and the range, e.g.
// "Commitment.sampling.temperature: got 1e-45, want 0 (greedy) or
// 0.001..1000".
Status ValidateSamplingParams(const SamplingParams& p,
                              std::string_view field = "sampling");

// Picks the token at sequence `position` from logits[0..vocab). Total over
// the logits: when the tempered softmax is undefined (a NaN logit, a
// logit/T that is +inf, or every logit -inf) the token is the greedy argmax
// of the logits (§3.10), the T -> 0 limit; fails only on invalid params or
// vocab. `softmax`, when set, computes the
// probabilities: every backend's Softmax gives ref's bits (the cross-backend
// tests check it), so the token is the same, only faster than the scalar
// oracle; null uses ref.
StatusOr<int32_t> SampleToken(const float* logits, int64_t vocab,
                              const SamplingParams& params, uint64_t position,
                              Backend* softmax = nullptr);

}  // namespace layerproof::kernels

#endif  // LAYERPROOF_KERNELS_REF_SAMPLING_H_
