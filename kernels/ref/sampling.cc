#include "kernels/ref/sampling.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <string>
#include <vector>

#include "kernels/fp_env.h"
#include "kernels/philox.h"
#include "kernels/ref/ref_ops.h"

namespace layerproof::kernels {

namespace {

// %g: "-1", "nan", "1.4013e-45".
std::string FloatText(float v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%g", static_cast<double>(v));
  return buf;
}

Status Invalid(std::string_view field, const char* member,
               const std::string& got, const char* want) {
  return InvalidArgument(std::string(field) + "." + member + ": got " + got +
                         ", want " + want);
}

}  // namespace

Status ValidateSamplingParams(const SamplingParams& p, std::string_view field) {
  const float t = p.temperature;
  if (!(t == 0.0f || (t >= kMinTemperature && t <= kMaxTemperature))) {
    return Invalid(field, "temperature", FloatText(t),
                   "0 (greedy) or 0.001..1000");
  }
  if (p.top_k < 0) {
    return Invalid(field, "top_k", std::to_string(p.top_k), ">= 0");
  }
  if (!(p.top_p > 0.0f && p.top_p <= 1.0f)) {
    return Invalid(field, "top_p", FloatText(p.top_p),
                   "0 < top_p <= 1 (1: no nucleus cut)");
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
  // Every entry is NaN exactly when the max is NaN, +inf or -inf (§3.7):
  // no distribution, so the T -> 0 limit decides (§3.11).
  if (std::isnan(p[0])) {
    return static_cast<int32_t>(ref::ArgmaxRow(logits, vocab));
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
