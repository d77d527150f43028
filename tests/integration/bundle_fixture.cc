#include "tests/integration/bundle_fixture.h"

#include <memory>
#include <string>
#include <vector>

#include "kernels/dispatch.h"
#include "store/checkpoint.h"
#include "store/commitment.h"
#include "store/envelope.h"
#include "store/merkle.h"
#include "tests/integration/test_faults.h"
#include "check/bytes.h"

namespace layerproof::integration {
namespace {

namespace internal = verifier::internal;

std::string RunRequest(Cluster& cluster, RunningProver& prover, int seed) {
  auto stub = cluster.InferenceStub(prover);
  v1::GenerateRequest request;
  for (int32_t id : RandomPrompt(
           seed, static_cast<int32_t>(cluster.model().config().vocab_size),
           8)) {
    request.mutable_token_ids()->add_ids(id);
  }
  request.mutable_sampling()->set_temperature(seed % 2 ? 0.7f : 0.0f);
  request.mutable_sampling()->set_top_p(1.0f);
  request.set_max_tokens(4);
  request.set_ignore_eos(true);
  v1::GenerateResponse response;
  grpc::ClientContext context;
  const grpc::Status status = stub->Generate(&context, request, &response);
  EXPECT_TRUE(status.ok()) << status.error_message();
  return response.request_id();
}

std::string FetchEvidence(Cluster& cluster, const std::string& request_id,
                          uint64_t verdict_leaf_index);

// A request on `promiser` (which never logs) whose promise is presented
// until its deadline has passed: the FAIL_UNLOGGED verdict's bundle.
std::string BrokenPromiseBundle(Cluster& cluster, RunningProver& promiser) {
  auto stub = cluster.InferenceStub(promiser);
  v1::SamplingParams greedy;
  greedy.set_top_p(1.0f);
  absl::StatusOr<ClientResult> r = cluster.Generate(*stub, {9, 10}, 2, greedy);
  EXPECT_TRUE(r.ok()) << r.status();
  if (!r.ok()) return "";
  auto audit = cluster.AuditStub();
  v1::PresentPromiseRequest present;
  present.set_promise_envelope(r->response.receipt().promise_envelope());
  v1::PresentPromiseResponse out;
  const absl::Time deadline = absl::Now() + absl::Seconds(20);
  for (;;) {  // "not yet due" until the promise's deadline
    grpc::ClientContext context;
    const grpc::Status s = audit->PresentPromise(&context, present, &out);
    if (s.ok()) break;
    if (s.error_code() != grpc::StatusCode::FAILED_PRECONDITION ||
        absl::Now() > deadline) {
      ADD_FAILURE() << "PresentPromise: " << s.error_message();
      return "";
    }
    absl::SleepFor(absl::Milliseconds(20));
  }
  EXPECT_TRUE(out.has_verdict());
  return FetchEvidence(cluster, r->response.request_id(),
                       out.verdict().leaf_index());
}

// Audits `request_id` now (blocks `layers`, or all) and returns the
// serialised evidence bundle of that verdict.
std::string AuditAndFetch(Cluster& cluster, const std::string& request_id,
                          const std::vector<uint32_t>& layers,
                          v1::VerdictOutcome want) {
  auto audit = cluster.AuditStub();
  v1::RequestAuditRequest request;
  request.set_request_id(request_id);
  for (uint32_t l : layers) request.add_layers(l);
  request.set_all_layers(layers.empty());
  v1::RequestAuditResponse response;
  {
    grpc::ClientContext context;
    const grpc::Status s = audit->RequestAudit(&context, request, &response);
    EXPECT_TRUE(s.ok()) << s.error_message();
  }
  v1::Envelope envelope;
  EXPECT_TRUE(envelope.ParseFromString(response.verdict().verdict_envelope()));
  absl::StatusOr<v1::Verdict> verdict = store::ParseVerdict(envelope.payload());
  EXPECT_TRUE(verdict.ok()) << verdict.status();
  if (verdict.ok()) {
    EXPECT_EQ(verdict->outcome(), want) << verdict->detail();
  }
  return FetchEvidence(cluster, request_id, response.verdict().leaf_index());
}

// The serialised evidence bundle of the verdict at `verdict_leaf_index` on
// `request_id`.
std::string FetchEvidence(Cluster& cluster, const std::string& request_id,
                          uint64_t verdict_leaf_index) {
  auto audit = cluster.AuditStub();
  v1::GetEvidenceRequest evidence;
  evidence.set_request_id(request_id);
  evidence.set_verdict_leaf_index(verdict_leaf_index);
  const absl::Time deadline = absl::Now() + absl::Seconds(20);
  for (;;) {  // the checkpoint may lag the verdict for a moment: poll
    v1::EvidenceBundle bundle;
    grpc::ClientContext context;
    const grpc::Status s = audit->GetEvidence(&context, evidence, &bundle);
    if (s.ok()) return Serialise(bundle);
    if (s.error_code() != grpc::StatusCode::UNAVAILABLE ||
        absl::Now() > deadline) {
      ADD_FAILURE() << "GetEvidence: " << s.error_message();
      return "";
    }
    absl::SleepFor(absl::Milliseconds(20));
  }
}

}  // namespace

void BundleTest::SetUpTestSuite() {
  world = new World;
  World& w = *world;
  w.cluster = std::make_unique<Cluster>();
  Cluster& c = *w.cluster;
  c.StartVerifier(VerifierSetup{.policy = {0.0, 1}});  // audits on demand
  w.honest = &c.StartProver({.prover_id = "prover-honest"});
  w.cheat =
      &c.StartProver({.prover_id = "prover-cheat",
                      .faults = std::make_shared<RowsFaults<FlipBitTamper>>()});
  const std::string a = RunRequest(c, *w.honest, 1);
  const std::string b = RunRequest(c, *w.honest, 2);
  const std::string d = RunRequest(c, *w.honest, 3);
  const std::string x = RunRequest(c, *w.cheat, 4);
  w.bad_opener =
      &c.StartProver({.prover_id = "prover-bad-opening",
                      .faults = std::make_shared<BadOpeningFaults>()});
  w.other_model = std::make_unique<ModelDir>("tiny", 2);
  w.other = &c.StartProver(
      {.prover_id = "prover-other-model", .model = w.other_model->model.get()});
  const std::string y = RunRequest(c, *w.bad_opener, 5);
  const std::string z = RunRequest(c, *w.other, 6);
  w.pass_sampled = AuditAndFetch(c, a, {1, 3}, v1::PASS);
  w.pass_sampled_2 = AuditAndFetch(c, b, {1, 3}, v1::PASS);
  w.pass_all = AuditAndFetch(c, d, {}, v1::PASS);
  w.mismatch = AuditAndFetch(c, x, {kTamperedLayer}, v1::FAIL_MISMATCH);
  w.mismatch_all = AuditAndFetch(c, x, {}, v1::FAIL_MISMATCH);
  w.bad_opening = AuditAndFetch(c, y, {2, 4}, v1::FAIL_OPENING);
  w.wrong_model = AuditAndFetch(c, z, {1}, v1::FAIL_MODEL);
  w.promiser =
      &c.StartProver({.prover_id = "prover-unlogged",
                      .faults = std::make_shared<SkipSubmissionFaults>(),
                      .receipt_wait = absl::Milliseconds(20),
                      .promise_window = absl::Milliseconds(200)});
  w.unlogged = BrokenPromiseBundle(c, *w.promiser);

  // The third party's own engine over the same model files.
  auto backend = kernels::DefaultBackend();
  ASSERT_TRUE(backend.ok());
  w.executor = kernels::model::MakeHostExecutor(*backend);
  kernels::model::EngineOptions options;
  options.max_context = c.model().config().max_positions;
  auto engine =
      kernels::model::Engine::Create(c.model(), w.executor.get(), options);
  ASSERT_TRUE(engine.ok()) << engine.status().ToString();
  w.engine = *std::move(engine);
  const auto& root = c.model().digest().root;
  w.model_digest.assign(reinterpret_cast<const char*>(root.data()),
                        root.size());
}

// A bundle from a log of our own under the verifier's key and origin:
// "an earlier entry", then `commitment_envelope` unless `refused`, then
// `verdict` (its commitment_leaf_index and leaf hash set here) signed by
// the verifier.
std::string SyntheticBundle(const std::string& commitment_envelope,
                            v1::Verdict verdict, bool refused) {
  const std::string origin = Parse(world->pass_sampled).log_origin();
  const store::Ed25519PrivateKey& key = world->cluster->verifier_private_key();
  store::InMemoryTree tree;
  tree.Append(std::string("an earlier entry"));
  const uint64_t c_index = refused ? 0 : tree.Append(commitment_envelope);
  verdict.set_commitment_leaf_hash(
      check::DigestBytes(store::LeafHash(commitment_envelope)));
  if (refused) {
    verdict.clear_commitment_leaf_index();
  } else {
    verdict.set_commitment_leaf_index(c_index);
  }
  absl::StatusOr<std::string> signed_verdict = store::SignVerdict(verdict, key);
  EXPECT_TRUE(signed_verdict.ok()) << signed_verdict.status();
  const uint64_t v_index = tree.Append(signed_verdict.value_or(""));
  auto signer = store::CheckpointSigner::Create(
      "verifier-1", store::Ed25519PrivateKey::FromPem(key.ToPem()).value());
  EXPECT_TRUE(signer.ok());
  store::Checkpoint cp;
  cp.origin = origin;
  cp.size = tree.size();
  cp.root = tree.Root();
  const std::string note = signer->Sign(cp).value();
  auto inclusion = [&](uint64_t index) {
    v1::LogInclusion incl;
    incl.set_leaf_index(index);
    incl.set_tree_size(tree.size());
    incl.set_checkpoint(note);
    const std::vector<store::Sha256Hash> proof =
        store::InclusionProof(tree, index, tree.size()).value();
    for (const store::Sha256Hash& h : proof) {
      incl.add_inclusion_proof(std::string(h.begin(), h.end()));
    }
    return incl;
  };
  v1::EvidenceBundle b;
  b.set_format_version(1);
  b.set_log_origin(origin);
  b.set_commitment_envelope(commitment_envelope);
  if (!refused) *b.mutable_commitment_inclusion() = inclusion(c_index);
  b.set_verdict_envelope(signed_verdict.value_or(""));
  *b.mutable_verdict_inclusion() = inclusion(v_index);
  return Serialise(b);
}

// The verdict of a real bundle, for SyntheticBundle to change.
v1::Verdict VerdictOf(const std::string& bundle) {
  v1::Envelope e;
  EXPECT_TRUE(e.ParseFromString(Parse(bundle).verdict_envelope()));
  return store::ParseVerdict(e.payload()).value();
}

// The detail of `check` in `v`.
std::string DetailOf(const check::BundleVerification& v, const std::string& check) {
  for (const check::BundleCheckResult& c : v.checks) {
    if (c.check == check) return c.detail;
  }
  return "";
}

// Regression (security review): the opening carries no prover signature,
// so whoever holds the verifier's key can make a "bad opening": a real
// commitment, its real opening with one byte of an opened layer flipped,
// and a FAIL_OPENING verdict signed by the verifier's key in a fresh log
// with the same origin. This used to be VERIFIED (exit 0).
std::string ForgedFailOpening(bool flip) {
  const v1::EvidenceBundle real = Parse(world->pass_sampled);
  v1::Verdict verdict = VerdictOf(world->pass_sampled);
  verdict.set_outcome(v1::FAIL_OPENING);
  verdict.clear_audited_layers();
  verdict.set_head_checked(false);
  verdict.set_detail(
      "opening: check::Opening h^2: got rows whose salted hash differs, want "
      "Commitment.layer_hashes[2]");
  v1::EvidenceBundle b =
      Parse(SyntheticBundle(real.commitment_envelope(), verdict, false));
  *b.mutable_opening() = real.opening();
  *b.mutable_opened_layers() = real.opened_layers();
  if (flip) (*b.mutable_opened_layers(0)->mutable_data())[7] ^= 1;
  return Serialise(b);
}

}  // namespace layerproof::integration
