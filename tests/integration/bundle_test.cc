// Evidence bundles verified offline (check/bundle_check.h,
// `layerproof verify-bundle`, docs/formats.md): real bundles from an
// in-process cluster (an honest prover and one that flips a bit of layer
// 2), fetched with Audit.GetEvidence, must verify, a FAIL_MISMATCH bundle
// included (the evidence confirms the verdict), and every kind of tampering
// must be caught with the failing check named. Bundles forged with the
// verifier's key: bundle_forgery_test.cc; the shared cluster:
// bundle_fixture.h.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "store/checkpoint.h"
#include "tests/integration/bundle_fixture.h"
#include "tests/integration/run_command.h"
#include "tests/integration/test_faults.h"

namespace layerproof::integration {
namespace {

TEST_F(BundleTest, HonestBundlesVerify) {
  for (const std::string* bytes :
       {&world->pass_sampled, &world->pass_sampled_2, &world->pass_all}) {
    absl::StatusOr<check::BundleVerification> v = Verify(*bytes);
    ASSERT_TRUE(v.ok()) << v.status();
    EXPECT_TRUE(v->ok()) << Dump(*v);
    EXPECT_TRUE(v->verdict_rederived) << Dump(*v);
    EXPECT_EQ(v->verdict.outcome(), v1::PASS);
    EXPECT_EQ(v->checks.size(), 11u);
    for (const check::BundleCheckResult& c : v->checks) {
      EXPECT_EQ(c.state, State::kPass) << c.check << ": " << c.detail;
    }
  }
}

TEST_F(BundleTest, MismatchBundleOfACheatingProverConfirmsTheVerdict) {
  for (const std::string* bytes : {&world->mismatch, &world->mismatch_all}) {
    absl::StatusOr<check::BundleVerification> v = Verify(*bytes);
    ASSERT_TRUE(v.ok()) << v.status();
    EXPECT_TRUE(v->ok()) << Dump(*v);
    EXPECT_TRUE(v->verdict_rederived);
    EXPECT_EQ(v->verdict.outcome(), v1::FAIL_MISMATCH);
    EXPECT_EQ(v->verdict.mismatch().layer(), kTamperedLayer);
    EXPECT_EQ(v->commitment.prover_id(), "prover-cheat");
  }
}

TEST_F(BundleTest, ProgressReportsEveryCheck) {
  std::vector<std::string> steps;
  int last_done = -1, last_total = 0;
  absl::StatusOr<check::BundleVerification> v = check::VerifyEvidenceBundle(
      world->pass_sampled, *world->engine, world->model_digest, Trust(),
      [&](int done, int total, std::string_view step) {
        EXPECT_GT(done, last_done);
        last_done = done;
        last_total = total;
        steps.emplace_back(step);
      });
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(last_done, last_total);
  EXPECT_EQ(steps.size(), v->checks.size() + 1);
}

// The offsets of `bytes` (a serialised bundle) to flip: every byte before
// the opened activations (field 8, serialised last: the envelopes, proofs,
// checkpoints and the opening header) and of each OpenedLayer's framing,
// and a spread through the activations themselves.
std::vector<size_t> FlipPositions(const std::string& bytes) {
  v1::EvidenceBundle b = Parse(bytes);
  const v1::EvidenceBundle layers = b;
  b.clear_opened_layers();
  const size_t prefix = b.ByteSizeLong();
  std::vector<size_t> out;
  for (size_t i = 0; i < prefix; ++i) out.push_back(i);
  size_t at = prefix;
  for (const v1::OpenedLayer& l : layers.opened_layers()) {
    v1::EvidenceBundle one;
    *one.add_opened_layers() = l;
    const size_t size = one.ByteSizeLong();
    for (size_t i = at; i < at + size; ++i) {
      if (i < at + 16 || i % 97 == 0 || i + 1 == at + size) out.push_back(i);
    }
    at += size;
  }
  EXPECT_EQ(at, bytes.size());
  return out;
}

// Every single-byte change of a real bundle is either malformed or fails
// a named check, and none is ever confirmed (ok() && verdict_rederived).
// A FAIL_OPENING bundle is never re-derived, so a change to its (unsigned)
// opening may leave it authentic but not re-derived; every other bundle
// verifies as it is, so there a change must fail a check.
TEST_F(BundleTest, EveryFlippedByteIsCaught) {
  // Every position of the sampled bundles; every 5th of the all-layers one
  // (each of its checks re-executes every block).
  struct Case {
    const std::string* bundle;
    size_t stride;
  };
  for (const auto& [original, stride] :
       {Case{&world->pass_sampled, 1}, Case{&world->mismatch, 1},
        Case{&world->bad_opening, 1}, Case{&world->wrong_model, 1},
        Case{&world->pass_all, 5}}) {
    absl::StatusOr<check::BundleVerification> as_is = Verify(*original);
    ASSERT_TRUE(as_is.ok()) << as_is.status();
    ASSERT_TRUE(as_is->ok()) << Dump(*as_is);
    const bool failed_opening = as_is->verdict.outcome() == v1::FAIL_OPENING;
    // The assertion below means something only where the unchanged bundle
    // is confirmed.
    EXPECT_EQ(as_is->verdict_rederived, !failed_opening) << Dump(*as_is);
    int malformed = 0, failed = 0, authentic_only = 0;
    for (size_t i : FlipPositions(*original)) {
      if (i % stride != 0) continue;
      // The low bit of every byte, and several bits of some.
      for (uint8_t mask : {uint8_t{0x01}, uint8_t{0xa4}}) {
        if (mask == 0xa4 && i % 5 != 0) continue;
        std::string bytes = *original;
        bytes[i] = static_cast<char>(bytes[i] ^ mask);
        absl::StatusOr<check::BundleVerification> v = Verify(bytes);
        if (!v.ok()) {
          EXPECT_TRUE(absl::IsInvalidArgument(v.status())) << v.status();
          ++malformed;
          continue;
        }
        ASSERT_FALSE(v->ok() && v->verdict_rederived)
            << "byte " << i << " ^ " << int(mask) << " of " << original->size()
            << " was confirmed:\n"
            << Dump(*v);
        if (v->ok()) {
          ASSERT_TRUE(failed_opening)
              << "byte " << i << " ^ " << int(mask) << " of "
              << original->size() << " passed:\n"
              << Dump(*v);
          ++authentic_only;
        } else {
          ++failed;
        }
      }
    }
    EXPECT_GT(malformed, 0);
    EXPECT_GT(failed, 0);
    std::printf(
        "%zu bytes: %d changes malformed, %d failing a check, %d authentic "
        "but not re-derived\n",
        original->size(), malformed, failed, authentic_only);
  }
}

TEST_F(BundleTest, CheckpointOfAnotherLogFails) {
  v1::EvidenceBundle b = Parse(world->pass_sampled);
  // Another verifier's key, name and origin over the same tree.
  auto key = store::Ed25519PrivateKey::Generate();
  ASSERT_TRUE(key.ok());
  store::CheckpointVerifier real("verifier-1", world->cluster->verifier_key());
  auto c = real.Verify(b.verdict_inclusion().checkpoint());
  ASSERT_TRUE(c.ok()) << c.status();
  store::Checkpoint other = *c;
  other.origin = "layerproof/verifier-2";
  auto signer = store::CheckpointSigner::Create("verifier-2", *std::move(key));
  ASSERT_TRUE(signer.ok());
  auto note = signer->Sign(other);
  ASSERT_TRUE(note.ok());
  b.mutable_verdict_inclusion()->set_checkpoint(*note);
  b.mutable_commitment_inclusion()->set_checkpoint(*note);
  ExpectFails(Serialise(b), "checkpoint_signature");
  b.set_log_origin(other.origin);
  ExpectFails(Serialise(b), "checkpoint_signature");

  // The log's own key, but another origin: caught by the bundle's
  // log_origin, and by --log-origin when the bundle is changed to match.
  auto same_key = store::CheckpointSigner::Create(
      "verifier-1", store::Ed25519PrivateKey::FromPem(
                        world->cluster->verifier_private_key().ToPem())
                        .value());
  ASSERT_TRUE(same_key.ok());
  auto resigned = same_key->Sign(other);
  ASSERT_TRUE(resigned.ok());
  b = Parse(world->pass_sampled);
  b.mutable_verdict_inclusion()->set_checkpoint(*resigned);
  b.mutable_commitment_inclusion()->set_checkpoint(*resigned);
  ExpectFails(Serialise(b), "log_origin");
  b.set_log_origin(other.origin);
  check::BundleTrust trust = Trust();
  trust.expected_origin = "layerproof/verifier-1";
  ExpectFails(Serialise(b), "log_origin", trust);
  // Regression: without --log-origin the bundle's own log_origin was
  // trusted. The expected origin defaults to "layerproof/" + the verdict's
  // verifier_id ("verifier-1"), as the verifier names its log.
  trust.expected_origin = "";
  ExpectFails(Serialise(b), "log_origin", trust);
  // --log-origin overrides the default.
  trust.expected_origin = other.origin;
  absl::StatusOr<check::BundleVerification> v = Verify(Serialise(b), trust);
  ASSERT_TRUE(v.ok());
  EXPECT_TRUE(v->ok()) << Dump(*v);
  EXPECT_TRUE(v->verdict_rederived) << Dump(*v);
}

TEST_F(BundleTest, LogOriginDefaultsToTheVerifiersName) {
  absl::StatusOr<check::BundleVerification> v = Verify(world->pass_sampled);
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(Parse(world->pass_sampled).log_origin(),
            "layerproof/" + v->verdict.verifier_id());
  EXPECT_EQ(StateOf(*v, "log_origin"), State::kPass) << Dump(*v);
}

TEST_F(BundleTest, InclusionProofOfAnotherLeafFails) {
  // The verdict's proof offered for the commitment: same checkpoint, other
  // leaf.
  v1::EvidenceBundle b = Parse(world->pass_sampled);
  *b.mutable_commitment_inclusion() = b.verdict_inclusion();
  ExpectFails(Serialise(b), "commitment_inclusion");
  // The right index with another leaf's path.
  b = Parse(world->pass_sampled);
  v1::EvidenceBundle other = Parse(world->pass_sampled_2);
  b.mutable_commitment_inclusion()->clear_inclusion_proof();
  for (const std::string& h : other.commitment_inclusion().inclusion_proof()) {
    b.mutable_commitment_inclusion()->add_inclusion_proof(h);
  }
  if (b.commitment_inclusion().inclusion_proof_size() ==
      Parse(world->pass_sampled)
          .commitment_inclusion()
          .inclusion_proof_size()) {
    ExpectFails(Serialise(b), "commitment_inclusion");
  }
  // Another leaf's index with the right path.
  b = Parse(world->pass_sampled);
  b.mutable_verdict_inclusion()->set_leaf_index(
      b.verdict_inclusion().leaf_index() ^ 1);
  ExpectFails(Serialise(b), "verdict_inclusion");
}

TEST_F(BundleTest, OpeningOfAnotherRequestFails) {
  v1::EvidenceBundle b = Parse(world->pass_sampled);
  const v1::EvidenceBundle other = Parse(world->pass_sampled_2);
  *b.mutable_opening() = other.opening();
  *b.mutable_opened_layers() = other.opened_layers();
  ExpectFails(Serialise(b), "opening_binding");
  ExpectFails(Serialise(b), "re_execution");
  // The other opening's activations under this request's header.
  b = Parse(world->pass_sampled);
  *b.mutable_opened_layers() = other.opened_layers();
  ExpectFails(Serialise(b), "re_execution");
}

TEST_F(BundleTest, WrongModelDigestFails) {
  std::string digest = world->model_digest;
  digest[0] = static_cast<char>(digest[0] ^ 1);
  ExpectFails(world->pass_sampled, "model_digest", Trust(), &digest);
  ExpectFails(world->mismatch, "model_digest", Trust(), &digest);
}

TEST_F(BundleTest, WrongProverKeyFails) {
  check::BundleTrust trust = Trust();
  auto key = store::Ed25519PrivateKey::Generate();
  ASSERT_TRUE(key.ok());
  trust.prover_keys = {key->public_key()};
  ExpectFails(world->pass_sampled, "commitment_signature", trust);
  // The cheat's key does not vouch for the honest prover's commitment.
  trust.prover_keys = {world->cheat->key->public_key()};
  ExpectFails(world->pass_sampled, "commitment_signature", trust);
}

TEST_F(BundleTest, WrongLogKeyFails) {
  check::BundleTrust trust = Trust();
  auto key = store::Ed25519PrivateKey::Generate();
  ASSERT_TRUE(key.ok());
  trust.log_key = key->public_key();
  ExpectFails(world->pass_sampled, "verdict_signature", trust);
  ExpectFails(world->pass_sampled, "checkpoint_signature", trust);
}

TEST_F(BundleTest, VerdictOnAnotherRequestFails) {
  // The cheat's commitment and opening under a PASS verdict on another
  // request: the verdict does not bind the commitment, and re-execution
  // gives FAIL_MISMATCH.
  v1::EvidenceBundle b = Parse(world->mismatch);
  const v1::EvidenceBundle pass = Parse(world->pass_sampled);
  b.set_verdict_envelope(pass.verdict_envelope());
  *b.mutable_verdict_inclusion() = pass.verdict_inclusion();
  ExpectFails(Serialise(b), "verdict_binding");
  ExpectFails(Serialise(b), "re_execution");
}

TEST_F(BundleTest, MalformedBundlesAreInvalidArgument) {
  for (const std::string& bytes :
       {std::string(""), std::string("\xff\xff\xff\xff garbage"),
        world->pass_sampled.substr(0, world->pass_sampled.size() / 2)}) {
    absl::StatusOr<check::BundleVerification> v = Verify(bytes);
    EXPECT_TRUE(absl::IsInvalidArgument(v.status())) << v.status();
  }
  v1::EvidenceBundle b = Parse(world->pass_sampled);
  b.set_format_version(2);
  absl::StatusOr<check::BundleVerification> v = Verify(Serialise(b));
  EXPECT_TRUE(absl::IsInvalidArgument(v.status())) << v.status();
  EXPECT_NE(std::string(v.status().message()).find("format_version"),
            std::string::npos);
}

TEST_F(BundleTest, ModelFailureIsRederivedAgainstTheGivenModel) {
  absl::StatusOr<check::BundleVerification> v = Verify(world->wrong_model);
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_TRUE(v->ok()) << Dump(*v);
  EXPECT_TRUE(v->verdict_rederived) << Dump(*v);
  EXPECT_EQ(v->verdict.outcome(), v1::FAIL_MODEL);
  // What that confirms, and no more.
  EXPECT_NE(DetailOf(*v, "re_execution")
                .find("confirms only that the commitment is not for the "
                      "model given here"),
            std::string::npos)
      << Dump(*v);
  // With the other model's digest it is contradicted.
  const auto& other = world->other_model->model->digest().root;
  const std::string digest(other.begin(), other.end());
  ExpectFails(world->wrong_model, "re_execution", Trust(), &digest);
}

// A mismatch's re_execution detail does not claim that blocks after the
// failure were re-derived: the audit stops at its first failure.
TEST_F(BundleTest, MismatchDetailStopsAtTheFailure) {
  absl::StatusOr<check::BundleVerification> v = Verify(world->mismatch_all);
  ASSERT_TRUE(v.ok()) << v.status();
  const std::string detail = DetailOf(*v, "re_execution");
  EXPECT_NE(detail.find("later blocks and the head were not re-derived"),
            std::string::npos)
      << detail;
  EXPECT_EQ(detail.find("and the head on this machine"), std::string::npos)
      << detail;
}

// `layerproof verify-bundle <args>`: its exit code, and its stdout then
// its stderr.
std::pair<int, std::string> RunVerifyBundle(std::vector<std::string> args) {
  args.insert(args.begin(), "verify-bundle");
  const CommandResult r = RunLayerproof(args);
  return {r.exit_code, r.out + r.err};
}

void WriteFile(const std::string& path, const std::string& data) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << data;
  ASSERT_TRUE(out.good()) << path;
}

// The real binary: exit 0 on a good bundle, 1 naming the check on a
// tampered one, 2 on garbage and bad flags, 3 on a verdict that cannot be
// re-derived offline.
TEST_F(BundleTest, BinaryExitCodes) {
  const std::string dir = world->cluster->root();
  WriteFile(dir + "/log.pub", world->cluster->verifier_key().ToPem());
  WriteFile(dir + "/honest.pub", world->honest->key->public_key().ToPem());
  WriteFile(dir + "/cheat.pub", world->cheat->key->public_key().ToPem());
  WriteFile(dir + "/good.bundle", world->mismatch);
  v1::EvidenceBundle tampered = Parse(world->mismatch);
  tampered.set_log_origin("layerproof/elsewhere");
  WriteFile(dir + "/tampered.bundle", Serialise(tampered));
  WriteFile(dir + "/garbage.bundle", "\xff\xff\xff\xff not a bundle");
  const std::vector<std::string> flags = {
      "--model",      world->cluster->model_dir(),
      "--log-key",    dir + "/log.pub",
      "--prover-key", dir + "/honest.pub," + dir + "/cheat.pub"};
  // `flags`, then `more`.
  auto with = [&](std::vector<std::string> more) {
    more.insert(more.begin(), flags.begin(), flags.end());
    return more;
  };

  auto [rc, out] = RunVerifyBundle(with({dir + "/good.bundle"}));
  EXPECT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("VERIFIED"), std::string::npos) << out;
  EXPECT_NE(out.find("FAIL_MISMATCH at layer 2"), std::string::npos) << out;

  std::tie(rc, out) = RunVerifyBundle(with({"--json", dir + "/good.bundle"}));
  EXPECT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("\"verdict_rederived\": true"), std::string::npos) << out;

  std::tie(rc, out) = RunVerifyBundle(with({dir + "/tampered.bundle"}));
  EXPECT_EQ(rc, 1) << out;
  EXPECT_NE(out.find("NOT VERIFIED: failed log_origin"), std::string::npos)
      << out;

  std::tie(rc, out) = RunVerifyBundle(
      with({"--log-origin", "layerproof/other", dir + "/good.bundle"}));
  EXPECT_EQ(rc, 1) << out;

  v1::Verdict timeout = VerdictOf(world->pass_sampled);
  timeout.set_outcome(v1::FAIL_TIMEOUT);
  timeout.clear_audited_layers();
  timeout.set_head_checked(false);
  WriteFile(dir + "/timeout.bundle",
            SyntheticBundle(Parse(world->pass_sampled).commitment_envelope(),
                            timeout, false));
  std::tie(rc, out) = RunVerifyBundle(with({dir + "/timeout.bundle"}));
  EXPECT_EQ(rc, 3) << out;
  EXPECT_NE(out.find("AUTHENTIC, NOT RE-DERIVED"), std::string::npos) << out;

  // A forged FAIL_OPENING is not confirmed; nor is a FAIL_SIGNATURE, and
  // one on a commitment that verifies under a given key fails.
  WriteFile(dir + "/forged-opening.bundle", ForgedFailOpening(true));
  std::tie(rc, out) = RunVerifyBundle(with({dir + "/forged-opening.bundle"}));
  EXPECT_EQ(rc, 3) << out;
  EXPECT_NE(out.find("AUTHENTIC, NOT RE-DERIVED"), std::string::npos) << out;
  v1::Verdict bad_signature = timeout;
  bad_signature.set_outcome(v1::FAIL_SIGNATURE);
  WriteFile(dir + "/signature.bundle",
            SyntheticBundle(Parse(world->pass_sampled).commitment_envelope(),
                            bad_signature, false));
  std::tie(rc, out) = RunVerifyBundle(
      {"--model", world->cluster->model_dir(), "--log-key", dir + "/log.pub",
       "--prover-key", dir + "/cheat.pub", dir + "/signature.bundle"});
  EXPECT_EQ(rc, 3) << out;
  std::tie(rc, out) = RunVerifyBundle(with({dir + "/signature.bundle"}));
  EXPECT_EQ(rc, 1) << out;
  EXPECT_NE(out.find("failed commitment_signature"), std::string::npos) << out;

  std::tie(rc, out) =
      RunVerifyBundle(with({"--json", dir + "/garbage.bundle"}));
  EXPECT_EQ(rc, 2) << out;
  EXPECT_NE(out.find("\"exit_code\": 2"), std::string::npos) << out;

  std::tie(rc, out) = RunVerifyBundle(with({dir + "/garbage.bundle"}));
  EXPECT_EQ(rc, 2) << out;
  EXPECT_NE(out.find("malformed"), std::string::npos) << out;

  std::tie(rc, out) = RunVerifyBundle(with({dir + "/missing.bundle"}));
  EXPECT_EQ(rc, 2) << out;
  std::tie(rc, out) = RunVerifyBundle(
      {"--model", world->cluster->model_dir(), dir + "/good.bundle"});
  EXPECT_EQ(rc, 2) << out;  // no keys
  std::tie(rc, out) = RunVerifyBundle({"--help"});
  EXPECT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("usage: layerproof verify-bundle"), std::string::npos);
}

}  // namespace
}  // namespace layerproof::integration
