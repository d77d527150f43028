// Evidence bundles forged by whoever holds the verifier's private key
// (check/bundle_check.h, docs/formats.md): verdicts signed with that key
// in a test-owned log with the real log's origin, over the real
// commitments and openings of the shared cluster (bundle_fixture.h).
// Verdicts that cannot be re-derived offline (FAIL_TIMEOUT, a refusal at
// submission, FAIL_OPENING, FAIL_SIGNATURE) must verify as authentic but
// never as re-derived, and one that re-execution or a given key
// contradicts must fail the check named; details stay bounded whatever a
// hostile header lists.
#include <gtest/gtest.h>

#include <string>

#include "tests/integration/bundle_fixture.h"

namespace layerproof::integration {
namespace {

// Verdicts that cannot be re-derived offline: authentic, so ok(), but not
// re-derived (the binary exits 3).
TEST_F(BundleTest, TimeoutVerdictIsAuthenticButNotRederived) {
  const std::string commitment =
      Parse(world->pass_sampled).commitment_envelope();
  v1::Verdict verdict = VerdictOf(world->pass_sampled);
  verdict.set_outcome(v1::FAIL_TIMEOUT);
  verdict.clear_audited_layers();
  verdict.set_head_checked(false);
  verdict.set_detail("opening: not complete within 10s");
  absl::StatusOr<check::BundleVerification> v =
      Verify(SyntheticBundle(commitment, verdict, false));
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_TRUE(v->ok()) << Dump(*v);
  EXPECT_FALSE(v->verdict_rederived);
  EXPECT_EQ(StateOf(*v, "re_execution"), State::kNotApplicable);
  EXPECT_EQ(StateOf(*v, "opening_binding"), State::kNotApplicable);
  EXPECT_EQ(StateOf(*v, "model_digest"), State::kPass);
  EXPECT_EQ(StateOf(*v, "commitment_inclusion"), State::kPass);

  // The same verdict claiming PASS without an opening fails.
  verdict.set_outcome(v1::PASS);
  verdict.set_head_checked(true);
  verdict.clear_detail();
  const std::string pass = SyntheticBundle(commitment, verdict, false);
  ExpectFails(pass, "bundle_format");
  ExpectFails(pass, "opening_binding");
}

TEST_F(BundleTest, RefusalAtSubmissionIsAuthenticButNotRederived) {
  // A commitment whose signature was corrupted, refused by the log.
  v1::Envelope forged;
  ASSERT_TRUE(
      forged.ParseFromString(Parse(world->pass_sampled).commitment_envelope()));
  (*forged.mutable_signatures(0)->mutable_sig())[5] ^= 1;
  const std::string refused = forged.SerializeAsString();
  v1::Verdict verdict = VerdictOf(world->pass_sampled);
  verdict.set_outcome(v1::FAIL_SIGNATURE);
  verdict.clear_audited_layers();
  verdict.set_head_checked(false);
  verdict.set_detail("refused at submission: signature 0 does not verify");
  verdict.set_refused_submitter("prover-honest");
  absl::StatusOr<check::BundleVerification> v =
      Verify(SyntheticBundle(refused, verdict, true));
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_TRUE(v->ok()) << Dump(*v);
  EXPECT_FALSE(v->verdict_rederived);
  EXPECT_EQ(StateOf(*v, "commitment_signature"), State::kPass);
  EXPECT_EQ(StateOf(*v, "commitment_inclusion"), State::kNotApplicable);
  EXPECT_EQ(StateOf(*v, "re_execution"), State::kNotApplicable);

  // A FAIL_SIGNATURE on a commitment that verifies is contradicted.
  ExpectFails(SyntheticBundle(Parse(world->pass_sampled).commitment_envelope(),
                              verdict, true),
              "commitment_signature");
}

TEST_F(BundleTest, ForgedFailOpeningIsNotRederived) {
  absl::StatusOr<check::BundleVerification> v = Verify(ForgedFailOpening(true));
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_TRUE(v->ok()) << Dump(*v);  // every check that applies passes
  EXPECT_FALSE(v->verdict_rederived) << Dump(*v);
  EXPECT_EQ(StateOf(*v, "re_execution"), State::kNotApplicable);
  EXPECT_NE(DetailOf(*v, "re_execution").find("not signed by the prover"),
            std::string::npos)
      << Dump(*v);
  EXPECT_EQ(StateOf(*v, "opening_binding"), State::kPass);
  EXPECT_EQ(StateOf(*v, "commitment_signature"), State::kPass);

  // With the opening intact it hashes to the commitment: re-execution here
  // gives PASS, which contradicts the FAIL_OPENING verdict.
  ExpectFails(ForgedFailOpening(false), "re_execution");

  // A real FAIL_OPENING bundle is the verifier's word just the same.
  v = Verify(world->bad_opening);
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_TRUE(v->ok()) << Dump(*v);
  EXPECT_FALSE(v->verdict_rederived) << Dump(*v);
  EXPECT_EQ(v->verdict.outcome(), v1::FAIL_OPENING);
  EXPECT_NE(DetailOf(*v, "re_execution").find("not signed by the prover"),
            std::string::npos)
      << Dump(*v);
}

// Regression (security review): a forged FAIL_SIGNATURE verdict on a
// validly signed commitment was VERIFIED when only another prover's key
// was given.
TEST_F(BundleTest, FailSignatureIsNeverRederived) {
  v1::Verdict verdict = VerdictOf(world->pass_sampled);
  verdict.set_outcome(v1::FAIL_SIGNATURE);
  verdict.clear_audited_layers();
  verdict.set_head_checked(false);
  verdict.set_detail("commitment: signature 0 does not verify");
  const std::string forged = SyntheticBundle(
      Parse(world->pass_sampled).commitment_envelope(), verdict, false);
  check::BundleTrust trust = Trust();
  trust.prover_keys = {world->cheat->key->public_key()};
  absl::StatusOr<check::BundleVerification> v = Verify(forged, trust);
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_TRUE(v->ok()) << Dump(*v);
  EXPECT_FALSE(v->verdict_rederived) << Dump(*v);
  EXPECT_EQ(StateOf(*v, "commitment_signature"), State::kPass);
  EXPECT_EQ(StateOf(*v, "re_execution"), State::kNotApplicable);
  // The commitment verifies under a given key (the honest prover's): the
  // verdict is contradicted.
  ExpectFails(forged, "commitment_signature");
}

// Regression: a hostile header listing 2M layers made details of megabytes.
TEST_F(BundleTest, DetailsOfAHostileHeaderAreBounded) {
  v1::EvidenceBundle b = Parse(world->pass_sampled);
  for (uint32_t k = 0; k < 2'000'000; ++k) b.mutable_opening()->add_layers(k);
  absl::StatusOr<check::BundleVerification> v = Verify(Serialise(b));
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_FALSE(v->ok());
  EXPECT_EQ(StateOf(*v, "opening_binding"), State::kFail);
  EXPECT_NE(DetailOf(*v, "opening_binding").find("more)"), std::string::npos);
  for (const check::BundleCheckResult& c : v->checks) {
    EXPECT_LE(c.detail.size(), 4200u) << c.check;
  }
}
}  // namespace
// A broken promise's bundle (issue 13, item 3): the promise it carries is
// checked against the prover keys and the verdict; that the log did not
// hold the leaf is the verifier's word, so it is authentic, not re-derived.
TEST_F(BundleTest, BrokenPromiseIsAuthenticButNotRederived) {
  absl::StatusOr<check::BundleVerification> v = Verify(world->unlogged);
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_TRUE(v->ok()) << Dump(*v);
  EXPECT_FALSE(v->verdict_rederived);
  EXPECT_EQ(v->verdict.outcome(), v1::FAIL_UNLOGGED);
  EXPECT_EQ(StateOf(*v, "commitment_signature"), State::kPass) << Dump(*v);
  EXPECT_EQ(StateOf(*v, "verdict_inclusion"), State::kPass) << Dump(*v);
  EXPECT_EQ(StateOf(*v, "re_execution"), State::kNotApplicable);
  // Without the promising prover's key, the promise does not verify.
  check::BundleTrust strangers = Trust();
  strangers.prover_keys.pop_back();
  ExpectFails(world->unlogged, "commitment_signature", strangers);
}

}  // namespace layerproof::integration
