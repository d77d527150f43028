// The shared fixture of the evidence-bundle tests (bundle_test.cc: real
// bundles and their tampering, `layerproof verify-bundle`;
// bundle_forgery_test.cc: bundles forged in a test-owned log with the
// verifier's private key): one in-process cluster per test binary (an
// honest prover, one that flips a bit of layer 2, one whose openings do not
// hash, one serving another model), the bundles of its audits fetched with
// Audit.GetEvidence, and the third party's engine over the same model.
// Thread safety: the tests of a suite run on one thread.
#ifndef LAYERPROOF_TESTS_INTEGRATION_BUNDLE_FIXTURE_H_
#define LAYERPROOF_TESTS_INTEGRATION_BUNDLE_FIXTURE_H_

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "kernels/model/engine.h"
#include "kernels/model/executor.h"
#include "tests/integration/cluster.h"
#include "check/bundle_check.h"

namespace layerproof::integration {

using check::BundleCheckResult;
using check::BundleTrust;
using check::BundleVerification;
using State = check::BundleCheckResult::State;

inline std::string Serialise(const v1::EvidenceBundle& b) {
  std::string out;
  EXPECT_TRUE(b.SerializeToString(&out));
  return out;
}

inline v1::EvidenceBundle Parse(const std::string& bytes) {
  v1::EvidenceBundle b;
  EXPECT_TRUE(b.ParseFromString(bytes));
  return b;
}

// The real bundles every test reads: one cluster for the whole suite.
struct World {
  std::unique_ptr<Cluster> cluster;
  RunningProver* honest = nullptr;
  RunningProver* cheat = nullptr;
  RunningProver* bad_opener = nullptr;
  RunningProver* other = nullptr;
  RunningProver* promiser = nullptr;  // promises, never logs
  std::unique_ptr<kernels::model::Executor> executor;
  std::unique_ptr<kernels::model::Engine> engine;
  std::string model_digest;
  std::string pass_sampled;    // PASS, blocks {1, 3}: opens h^2, h^4
  std::string pass_sampled_2;  // PASS on another request, blocks {1, 3}
  std::string pass_all;        // PASS, all layers: header only
  std::string mismatch;        // FAIL_MISMATCH at 2, block {2}
  std::string mismatch_all;    // FAIL_MISMATCH at 2, all layers
  std::string bad_opening;     // FAIL_OPENING: opened rows do not hash
  std::unique_ptr<ModelDir> other_model;
  std::string wrong_model;  // FAIL_MODEL: served under the other digest
  std::string unlogged;     // FAIL_UNLOGGED: a promise never honoured
};

// Set by BundleTest::SetUpTestSuite, for the suite's lifetime.
inline World* world = nullptr;

class BundleTest : public ::testing::Test {
 protected:
  // The shared cluster, its requests and their bundles (bundle_fixture.cc).
  static void SetUpTestSuite();
  static void TearDownTestSuite() {
    world->cluster.reset();  // its provers before the other model goes
    delete world;
    world = nullptr;
  }

  static check::BundleTrust Trust() {
    check::BundleTrust t;
    t.log_key = world->cluster->verifier_key();
    t.prover_keys = {
        world->honest->key->public_key(), world->cheat->key->public_key(),
        world->bad_opener->key->public_key(), world->other->key->public_key(),
        world->promiser->key->public_key()};
    return t;
  }

  static absl::StatusOr<check::BundleVerification> Verify(
      const std::string& bytes, const check::BundleTrust& trust = Trust(),
      const std::string* digest = nullptr) {
    return check::VerifyEvidenceBundle(
        bytes, *world->engine, digest ? *digest : world->model_digest, trust);
  }

  static State StateOf(const check::BundleVerification& v, const std::string& name) {
    for (const check::BundleCheckResult& c : v.checks) {
      if (c.check == name) return c.state;
    }
    ADD_FAILURE() << "no check named " << name;
    return State::kNotApplicable;
  }

  static std::string Dump(const check::BundleVerification& v) {
    std::string s;
    for (const check::BundleCheckResult& c : v.checks) {
      s += c.check + " " +
           std::string(check::BundleCheckStateName(c.state)) + ": " +
           c.detail + "\n";
    }
    return s;
  }

  // Not ok, and `check` is among the failed.
  static void ExpectFails(const std::string& bytes, const std::string& check,
                          const check::BundleTrust& trust = Trust(),
                          const std::string* digest = nullptr) {
    absl::StatusOr<check::BundleVerification> v = Verify(bytes, trust, digest);
    ASSERT_TRUE(v.ok()) << v.status();
    EXPECT_FALSE(v->ok()) << Dump(*v);
    EXPECT_EQ(StateOf(*v, check), State::kFail) << Dump(*v);
  }
};

// The detail of `check` in `v`.
std::string DetailOf(const check::BundleVerification& v, const std::string& check);

// A bundle from a log of our own under the verifier's key and origin:
// "an earlier entry", then `commitment_envelope` unless `refused`, then
// `verdict` (its commitment_leaf_index and leaf hash set here) signed by
// the verifier.
std::string SyntheticBundle(const std::string& commitment_envelope,
                            v1::Verdict verdict, bool refused);

// The verdict of a real bundle, for SyntheticBundle to change.
v1::Verdict VerdictOf(const std::string& bundle);

// Regression (security review): the opening carries no prover signature,
// so whoever holds the verifier's key can make a "bad opening": a real
// commitment, its real opening with one byte of an opened layer flipped,
// and a FAIL_OPENING verdict signed by the verifier's key in a fresh log
// with the same origin. This used to be VERIFIED (exit 0).
// `flip`: flip a byte of the first opened layer.
std::string ForgedFailOpening(bool flip);

}  // namespace layerproof::integration

#endif  // LAYERPROOF_TESTS_INTEGRATION_BUNDLE_FIXTURE_H_
