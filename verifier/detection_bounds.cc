#include "verifier/detection_bounds.h"

#include <algorithm>
#include <cmath>

namespace layerproof::verifier {

double MissProbability(std::span<const double> fractions, double f) {
  double m = 1.0;
  for (double d : fractions) m *= 1.0 - f * d;
  return m;
}

std::optional<double> RuledOutRate(std::span<const double> fractions,
                                   double confidence) {
  if (fractions.empty() || !(confidence > 0.0 && confidence < 1.0)) {
    return std::nullopt;
  }
  const double target = 1.0 - confidence;
  if (MissProbability(fractions, 1.0) > target) return std::nullopt;
  const bool all_equal =
      std::all_of(fractions.begin(), fractions.end(),
                  [&](double d) { return d == fractions.front(); });
  if (all_equal) {
    // (1 - f·d)^n = 1 - c  <=>  f = (1 - (1-c)^{1/n}) / d.
    const double n = static_cast<double>(fractions.size());
    const double f = (1.0 - std::pow(target, 1.0 / n)) / fractions.front();
    return std::min(f, 1.0);
  }
  // M is non-increasing in f on [0, 1]: bisect for the least f with
  // M(f) <= target, keeping M(hi) <= target < M(lo).
  double lo = 0.0, hi = 1.0;
  while (hi - lo > kRuledOutTolerance) {
    const double mid = lo + (hi - lo) / 2;
    if (MissProbability(fractions, mid) <= target) {
      hi = mid;
    } else {
      lo = mid;
    }
  }
  return hi;
}

Detection ComputeDetection(std::span<const double> fractions,
                           uint64_t failures) {
  Detection out;
  out.drawn_audits = fractions.size();
  out.failures = failures;
  if (!fractions.empty()) {
    double sum = 0;
    out.layer_fraction_min = fractions.front();
    for (double d : fractions) {
      sum += d;
      out.layer_fraction_min = std::min(out.layer_fraction_min, d);
    }
    out.layer_fraction_mean = sum / static_cast<double>(fractions.size());
  }
  if (failures == 0) {
    out.ruled_out_95 = RuledOutRate(fractions, 0.95);
    out.ruled_out_99 = RuledOutRate(fractions, 0.99);
  }
  out.curve.reserve(kDetectionCurvePoints);
  for (int i = 0; i < kDetectionCurvePoints; ++i) {
    const double f = static_cast<double>(i) / (kDetectionCurvePoints - 1);
    out.curve.push_back({f, 1.0 - MissProbability(fractions, f)});
  }
  return out;
}

}  // namespace layerproof::verifier
