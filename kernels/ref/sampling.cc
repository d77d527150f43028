#include "kernels/ref/sampling.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <vector>

#include "kernels/fp_env.h"
#include "kernels/philox.h"
#include "kernels/ref/ref_ops.h"

namespace layerproof::kernels {

Status ValidateSamplingParams(const SamplingParams& p) {
  if (!(p.temperature >= 0.0f) || !std::isfinite(p.temperature)) {
    return InvalidArgument("sampling temperature: got " +
                           std::to_string(p.temperature) +
                           ", want finite >= 0");
  }
  if (p.top_k < 0) {
    return InvalidArgument("sampling top_k: got " + std::to_string(p.top_k) +
                           ", want >= 0");
  }
  if (!(p.top_p > 0.0f && p.top_p <= 1.0f)) {
    return InvalidArgument("sampling top_p: got " + std::to_string(p.top_p) +
                           ", want 0 < top_p <= 1");
  }
  return OkStatus();
}

StatusOr<int32_t> SampleToken(const float* logits, int64_t vocab,
                              const SamplingParams& params, uint64_t position,
                              Backend* softmax) {
  FpEnvGuard guard;
  LP_RETURN_IF_ERROR(ValidateSamplingParams(params));
  if (logits == nullptr || vocab < 1 || vocab > (int64_t{1} << 31) - 1) {
    return InvalidArgument("sampling logits: null or vocab " +
                           std::to_string(vocab) + " out of 1..2^31-1");
  }
  if (params.temperature == 0.0f) {
    return static_cast<int32_t>(ref::ArgmaxRow(logits, vocab));
  }
  std::vector<float> p(vocab);
  for (int64_t i = 0; i < vocab; ++i) p[i] = logits[i] / params.temperature;
  if (softmax != nullptr) {
    std::vector<float> scaled = p;
    LP_RETURN_IF_ERROR(softmax->Softmax(scaled.data(), 1, vocab, p.data()));
  } else {
    ref::SoftmaxRow(p.data(), vocab, p.data());
  }
  if (std::isnan(p[0])) {
    return InvalidArgument(
        "sampling logits: softmax is NaN (a NaN logit, or "
        "every logit -inf)");
  }

  // Rank order: probability descending, index ascending on ties — a strict
  // total order, so any correct sort gives the same ranks.
  const int64_t top_k =
      params.top_k > 0 ? std::min<int64_t>(params.top_k, vocab) : vocab;
  std::vector<int32_t> rank(vocab);
  std::iota(rank.begin(), rank.end(), 0);
  auto before = [&](int32_t a, int32_t b) {
    return p[a] > p[b] || (p[a] == p[b] && a < b);
  };
  std::partial_sort(rank.begin(), rank.begin() + top_k, rank.end(), before);

  // Nucleus: the shortest rank prefix whose running sum (fp32, in rank
  // order) reaches top_p.
  int64_t kept = top_k;
  float mass = 0.0f;
  for (int64_t r = 0; r < top_k; ++r) {
    mass = mass + p[rank[r]];
    if (mass >= params.top_p) {
      kept = r + 1;
      break;
    }
  }

  // One draw: u in [0, 1) from Philox(counter = position, key = seed), then
  // the first rank whose running sum exceeds u * mass.
  const PhiloxCounter ctr = {static_cast<uint32_t>(position),
                             static_cast<uint32_t>(position >> 32), 0, 0};
  const PhiloxKey key = {static_cast<uint32_t>(params.seed),
                         static_cast<uint32_t>(params.seed >> 32)};
  const float target = UniformFloat(Philox4x32(ctr, key)[0]) * mass;
  float running = 0.0f;
  for (int64_t r = 0; r < kept; ++r) {
    running = running + p[rank[r]];
    if (target < running) return rank[r];
  }
  return rank[kept - 1];
}

}  // namespace layerproof::kernels
