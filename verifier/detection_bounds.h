// Detection-probability bounds for compliance reports (DESIGN §6
// "Detection", docs/reports.md "Detection bounds"): how strongly a window's
// random audits of one prover (or of all) rule out a falsification rate f.
//
// Drawn audit i re-executed a fraction d_i = |audited_layers_i| / L_i of
// the commitment's blocks (the head is always checked too). A prover that
// falsifies one step of each request independently with probability f
// escapes audit i with probability at most 1 - f·d_i (worst case: the
// falsified step is a block, caught exactly when that block is drawn), so
// all n audits pass with probability at most
//   M(f) = Π_i (1 - f·d_i),
// and the audits rule out f at confidence c when M(f) <= 1 - c. The report
// gives f_c = min{f in (0, 1] : M(f) <= 1 - c}, or none when M(1) > 1 - c
// or when the audits found a failure (cheating was then detected, not
// bounded). On-demand audits are not random and are never passed here.
//
// Thread safety: pure functions.
#ifndef LAYERPROOF_VERIFIER_DETECTION_BOUNDS_H_
#define LAYERPROOF_VERIFIER_DETECTION_BOUNDS_H_

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace layerproof::verifier {

// Points on the confidence curve: f = 0, 0.02, ..., 1.
inline constexpr int kDetectionCurvePoints = 51;
// Bisection stops when the bracket is narrower than this.
inline constexpr double kRuledOutTolerance = 1e-9;

// M(f) = Π (1 - f·d_i) for f in [0, 1]; each d_i must be in [0, 1]. 1 for
// no audits.
double MissProbability(std::span<const double> fractions, double f);

// f_c for confidence c in (0, 1): the least f in (0, 1] with
// M(f) <= 1 - c, within kRuledOutTolerance (closed form
// (1 - (1-c)^{1/n}) / d when every d_i equals d); nullopt when
// M(1) > 1 - c (including n = 0).
std::optional<double> RuledOutRate(std::span<const double> fractions,
                                   double confidence);

struct DetectionPoint {
  double f = 0;
  double confidence = 0;  // 1 - M(f)
};

struct Detection {
  uint64_t drawn_audits = 0;  // n = fractions.size()
  uint64_t failures = 0;
  double layer_fraction_min = 0;   // 0 when n = 0
  double layer_fraction_mean = 0;  // 0 when n = 0
  // Null when failures > 0 or RuledOutRate is nullopt.
  std::optional<double> ruled_out_95;
  std::optional<double> ruled_out_99;
  std::vector<DetectionPoint> curve;  // kDetectionCurvePoints points
};

// The Detection object of `fractions` (the d_i of the drawn audits) when
// the same audits and verdicts include `failures` failures.
Detection ComputeDetection(std::span<const double> fractions,
                           uint64_t failures);

}  // namespace layerproof::verifier

#endif  // LAYERPROOF_VERIFIER_DETECTION_BOUNDS_H_
