// The audit draw (verifier/audit_policy.h): determinism, the rate's edges,
// the shape of the drawn layers, coverage of every layer, an independent
// re-derivation of the documented rule, and the policy's validation.
#include "verifier/audit_policy.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>
#include <string>

#include "store/crypto.h"

namespace layerproof::verifier {
namespace {

std::string Seed(uint32_t i) {
  // Distinct, well-spread 32-byte seeds.
  const store::Sha256Hash h =
      store::Sha256Hasher::Digest("audit-policy-test-" + std::to_string(i));
  return std::string(h.begin(), h.end());
}

// A seed whose first 8 bytes are u (little-endian), the rest `fill`.
std::string SeedWithU(uint64_t u, char fill = 'x') {
  std::string s(32, fill);
  for (int b = 0; b < 8; ++b) s[b] = static_cast<char>((u >> (8 * b)) & 0xff);
  return s;
}

AuditPolicy Policy(double rate, uint32_t s) {
  AuditPolicy p;
  p.rate = rate;
  p.layers_per_audit = s;
  return p;
}

TEST(AuditPolicyTest, SameSeedSameDraw) {
  for (uint32_t i = 0; i < 50; ++i) {
    const AuditDraw a = DrawAudit(Seed(i), Policy(1.0, 3), 22);
    const AuditDraw b = DrawAudit(Seed(i), Policy(1.0, 3), 22);
    EXPECT_EQ(a.audit, b.audit);
    EXPECT_EQ(a.layers, b.layers);
  }
}

TEST(AuditPolicyTest, DifferentSeedsDrawDifferentLayers) {
  std::set<std::vector<uint32_t>> seen;
  for (uint32_t i = 0; i < 50; ++i) {
    seen.insert(DrawAudit(Seed(i), Policy(1.0, 2), 32).layers);
  }
  EXPECT_GT(seen.size(), 30u);
}

TEST(AuditPolicyTest, RateZeroNeverAuditsRateOneAlways) {
  for (uint32_t i = 0; i < 100; ++i) {
    const AuditDraw never = DrawAudit(Seed(i), Policy(0.0, 2), 8);
    EXPECT_FALSE(never.audit);
    EXPECT_TRUE(never.layers.empty());
    EXPECT_TRUE(DrawAudit(Seed(i), Policy(1.0, 2), 8).audit);
  }
  // The extreme u values.
  EXPECT_TRUE(DrawAudit(SeedWithU(~uint64_t{0}), Policy(1.0, 1), 4).audit);
  EXPECT_FALSE(DrawAudit(SeedWithU(0), Policy(0.0, 1), 4).audit);
}

TEST(AuditPolicyTest, RateThresholdIsUBelowRateTimesTwoTo64) {
  // rate 0.5: threshold 2^63 exactly.
  EXPECT_TRUE(
      DrawAudit(SeedWithU((uint64_t{1} << 63) - 1), Policy(0.5, 1), 4).audit);
  EXPECT_FALSE(
      DrawAudit(SeedWithU(uint64_t{1} << 63), Policy(0.5, 1), 4).audit);
  // rate 0.25: threshold 2^62.
  EXPECT_TRUE(
      DrawAudit(SeedWithU((uint64_t{1} << 62) - 1), Policy(0.25, 1), 4).audit);
  EXPECT_FALSE(
      DrawAudit(SeedWithU(uint64_t{1} << 62), Policy(0.25, 1), 4).audit);
  EXPECT_FALSE(DrawAudit(SeedWithU(0), Policy(1e-30, 1), 4).audit);
}

TEST(AuditPolicyTest, RateIsRoughlyTheAuditedFraction) {
  int audited = 0;
  for (uint32_t i = 0; i < 2000; ++i) {
    audited += DrawAudit(Seed(i), Policy(0.1, 1), 4).audit ? 1 : 0;
  }
  // Binomial(2000, 0.1): mean 200, sd 13.4; this is > 6 sd wide.
  EXPECT_GT(audited, 120);
  EXPECT_LT(audited, 280);
}

TEST(AuditPolicyTest, LayersAreDistinctInRangeAndAscending) {
  for (uint32_t s : {1u, 2u, 5u, 16u}) {
    for (uint32_t i = 0; i < 100; ++i) {
      const AuditDraw d = DrawAudit(Seed(i), Policy(1.0, s), 16);
      ASSERT_TRUE(d.audit);
      ASSERT_EQ(d.layers.size(), s);
      for (size_t j = 0; j < d.layers.size(); ++j) {
        EXPECT_GE(d.layers[j], 1u);
        EXPECT_LE(d.layers[j], 16u);
        if (j > 0) {
          EXPECT_LT(d.layers[j - 1], d.layers[j]);
        }
      }
    }
  }
}

TEST(AuditPolicyTest, MoreLayersThanTheModelHasAreCappedAtL) {
  const AuditDraw d = DrawAudit(Seed(1), Policy(1.0, 100), 6);
  ASSERT_TRUE(d.audit);
  EXPECT_EQ(d.layers, (std::vector<uint32_t>{1, 2, 3, 4, 5, 6}));
}

TEST(AuditPolicyTest, EveryLayerIsDrawnOverManySeeds) {
  constexpr uint32_t kLayers = 24;
  std::vector<int> count(kLayers + 1, 0);
  constexpr int kDraws = 2400;
  for (int i = 0; i < kDraws; ++i) {
    for (uint32_t l : DrawAudit(Seed(i), Policy(1.0, 1), kLayers).layers) {
      ++count[l];
    }
  }
  // Expected 100 each; a layer the shuffle could not reach, or a strong
  // bias, falls far outside these bounds.
  for (uint32_t l = 1; l <= kLayers; ++l) {
    EXPECT_GT(count[l], 40) << "layer " << l;
    EXPECT_LT(count[l], 180) << "layer " << l;
  }
}

// The documented rule, written out independently: a third party's
// re-derivation must give the same layers.
TEST(AuditPolicyTest, MatchesTheDocumentedDerivation) {
  for (uint32_t i = 0; i < 30; ++i) {
    const std::string seed = Seed(i);
    const uint32_t L = 10, s = 4;
    std::vector<uint32_t> perm(L);
    std::iota(perm.begin(), perm.end(), 1u);
    for (uint32_t k = 0; k < s; ++k) {
      std::string msg = seed;
      msg.push_back(static_cast<char>(k & 0xff));
      msg.push_back(static_cast<char>((k >> 8) & 0xff));
      msg.push_back(static_cast<char>((k >> 16) & 0xff));
      msg.push_back(static_cast<char>((k >> 24) & 0xff));
      const store::Sha256Hash h = store::Sha256Hasher::Digest(msg);
      uint64_t r = 0;
      for (int b = 7; b >= 0; --b) r = (r << 8) | h[b];
      std::swap(perm[k], perm[k + r % (L - k)]);
    }
    std::vector<uint32_t> want(perm.begin(), perm.begin() + s);
    std::sort(want.begin(), want.end());
    EXPECT_EQ(DrawAudit(seed, Policy(1.0, s), L).layers, want);
  }
}

// The reproducible source: SHA-256(key ‖ prover ‖ 0 ‖ u64le(n)), a counter
// per prover (the expected bytes computed independently, with Python's
// hashlib), so a prover's draws do not depend on the other provers'.
TEST(AuditPolicyTest, SeededAuditSeedsAreACounterPerProver) {
  AuditSeedSource seeds = SeededAuditSeeds("k");
  const auto hex = [](const absl::StatusOr<std::string>& s) {
    EXPECT_TRUE(s.ok());
    return store::HexEncode(store::AsBytes(*s));
  };
  EXPECT_EQ(hex(seeds("p")),
            "1fb1567ee78c415524ed25eaeec489a6fb794a697881451e199b1e27a9ee85be");
  const std::string other_first = hex(seeds("q"));  // interleaved
  EXPECT_EQ(hex(seeds("p")),
            "1a8b0c86ddd219aa3d659048e71a810f979a8b19af08f04800376587c8e4f324");
  AuditSeedSource again = SeededAuditSeeds("k");
  EXPECT_EQ(hex(again("q")), other_first);
  EXPECT_NE(hex(SeededAuditSeeds("k2")("p")),
            "1fb1567ee78c415524ed25eaeec489a6fb794a697881451e199b1e27a9ee85be");
}

TEST(AuditPolicyTest, ASeedOfTheWrongLengthNeverAudits) {
  EXPECT_FALSE(DrawAudit(std::string(31, 'a'), Policy(1.0, 1), 4).audit);
  EXPECT_FALSE(DrawAudit("", Policy(1.0, 1), 4).audit);
}

TEST(AuditPolicyTest, ValidateNamesTheField) {
  EXPECT_TRUE(ValidateAuditPolicy(Policy(0.0, 1)).ok());
  EXPECT_TRUE(ValidateAuditPolicy(Policy(1.0, 64)).ok());
  absl::Status s = ValidateAuditPolicy(Policy(1.5, 1));
  EXPECT_TRUE(absl::IsInvalidArgument(s));
  EXPECT_NE(s.message().find("AuditPolicy.rate: got 1.5"), std::string::npos)
      << s;
  s = ValidateAuditPolicy(Policy(-0.1, 1));
  EXPECT_NE(s.message().find("AuditPolicy.rate"), std::string::npos) << s;
  s = ValidateAuditPolicy(Policy(std::nan(""), 1));
  EXPECT_TRUE(absl::IsInvalidArgument(s));
  s = ValidateAuditPolicy(Policy(0.5, 0));
  EXPECT_TRUE(absl::IsInvalidArgument(s));
  EXPECT_NE(s.message().find("AuditPolicy.layers_per_audit: got 0, want >= 1"),
            std::string::npos)
      << s;
}

TEST(AuditPolicyTest, FreshSeedsAre32DistinctBytes) {
  absl::StatusOr<std::string> a = FreshAuditSeed();
  absl::StatusOr<std::string> b = FreshAuditSeed();
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->size(), 32u);
  EXPECT_NE(*a, *b);
}

}  // namespace
}  // namespace layerproof::verifier
