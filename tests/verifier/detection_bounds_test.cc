// Detection bounds (verifier/detection_bounds.h, docs/reports.md
// "Detection bounds") on hand-computed cases: the closed form for equal
// layer fractions, bisection for mixed ones checked against direct
// evaluation of M(f), and the cases with no bound.
#include "verifier/detection_bounds.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace layerproof::verifier {
namespace {

TEST(DetectionBoundsTest, MissProbabilityIsTheProductOverAudits) {
  const std::vector<double> d = {1.0, 0.5, 0.25, 0.25};
  // (1 - 0.5)(1 - 0.25)(1 - 0.125)^2, exact in binary.
  EXPECT_EQ(MissProbability(d, 0.5), 0.287109375);
  EXPECT_EQ(MissProbability(d, 0.0), 1.0);
  EXPECT_EQ(MissProbability(d, 1.0), 0.0);
  EXPECT_EQ(MissProbability({}, 0.7), 1.0);
}

TEST(DetectionBoundsTest, OneFullAuditRulesOutNinetyFivePercent) {
  // n = 1, d = 1: M(f) = 1 - f <= 0.05 at f = 0.95.
  const std::vector<double> d = {1.0};
  ASSERT_TRUE(RuledOutRate(d, 0.95).has_value());
  EXPECT_NEAR(*RuledOutRate(d, 0.95), 0.95, 1e-12);
  EXPECT_NEAR(*RuledOutRate(d, 0.99), 0.99, 1e-12);
}

TEST(DetectionBoundsTest, EqualFractionsUseTheClosedForm) {
  // n = 10, d = 0.5: f = (1 - 0.05^(1/10)) / 0.5.
  const std::vector<double> d(10, 0.5);
  std::optional<double> f95 = RuledOutRate(d, 0.95);
  std::optional<double> f99 = RuledOutRate(d, 0.99);
  ASSERT_TRUE(f95.has_value());
  ASSERT_TRUE(f99.has_value());
  EXPECT_NEAR(*f95, (1 - std::pow(0.05, 0.1)) / 0.5, 1e-12);
  EXPECT_NEAR(*f95, 0.5177311017861046, 1e-12);
  EXPECT_NEAR(*f99, 0.7380853110396135, 1e-12);
  EXPECT_NEAR(MissProbability(d, *f95), 0.05, 1e-12);
}

TEST(DetectionBoundsTest, MixedFractionsBisectToTheLeastRuledOutRate) {
  // M(f) = (1-f)(1-f/2)(1-f/4)^2; M(f) = 0.05 at f = 0.85806642494...
  const std::vector<double> d = {1.0, 0.5, 0.25, 0.25};
  std::optional<double> f95 = RuledOutRate(d, 0.95);
  ASSERT_TRUE(f95.has_value());
  EXPECT_NEAR(*f95, 0.8580664249434659, 2e-9);
  // The bound is the least such f: just below it M is still above 1 - c.
  EXPECT_LE(MissProbability(d, *f95), 0.05);
  EXPECT_GT(MissProbability(d, *f95 - 2e-9), 0.05);
  std::optional<double> f99 = RuledOutRate(d, 0.99);
  ASSERT_TRUE(f99.has_value());
  EXPECT_NEAR(*f99, 0.9663602497209618, 2e-9);
}

TEST(DetectionBoundsTest, NoAuditsRuleOutNothing) {
  EXPECT_FALSE(RuledOutRate({}, 0.95).has_value());
  const Detection d = ComputeDetection({}, 0);
  EXPECT_EQ(d.drawn_audits, 0u);
  EXPECT_FALSE(d.ruled_out_95.has_value());
  EXPECT_FALSE(d.ruled_out_99.has_value());
  ASSERT_EQ(d.curve.size(), 51u);
  for (const DetectionPoint& p : d.curve) EXPECT_EQ(p.confidence, 0.0);
}

TEST(DetectionBoundsTest, TooFewLayersCannotReachTheConfidence) {
  // M(1) = 0.9^2 = 0.81 > 0.05: even always cheating escapes too often.
  const std::vector<double> d = {0.1, 0.1};
  EXPECT_FALSE(RuledOutRate(d, 0.95).has_value());
  // ... and mixed: M(1) = 0.9 * 0.8 = 0.72 > 0.01.
  EXPECT_FALSE(RuledOutRate(std::vector<double>{0.1, 0.2}, 0.99).has_value());
}

TEST(DetectionBoundsTest, DetectionObjectAndFailuresVoidTheBound) {
  const std::vector<double> d = {1.0, 0.5, 0.25, 0.25};
  const Detection ok = ComputeDetection(d, 0);
  EXPECT_EQ(ok.drawn_audits, 4u);
  EXPECT_EQ(ok.layer_fraction_min, 0.25);
  EXPECT_EQ(ok.layer_fraction_mean, 0.5);
  ASSERT_TRUE(ok.ruled_out_95.has_value());
  ASSERT_EQ(ok.curve.size(), size_t(kDetectionCurvePoints));
  EXPECT_EQ(ok.curve[0].f, 0.0);
  EXPECT_EQ(ok.curve[0].confidence, 0.0);
  EXPECT_EQ(ok.curve[25].f, 0.5);
  EXPECT_EQ(ok.curve[25].confidence, 0.712890625);
  EXPECT_EQ(ok.curve[50].f, 1.0);
  EXPECT_EQ(ok.curve[50].confidence, 1.0);
  // A failure: cheating was detected, not bounded.
  const Detection failed = ComputeDetection(d, 1);
  EXPECT_EQ(failed.failures, 1u);
  EXPECT_FALSE(failed.ruled_out_95.has_value());
  EXPECT_FALSE(failed.ruled_out_99.has_value());
  EXPECT_EQ(failed.curve[25].confidence, 0.712890625);
}

}  // namespace
}  // namespace layerproof::verifier
