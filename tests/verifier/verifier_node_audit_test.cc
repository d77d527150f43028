// The verifier node's audits: drawn after logging with an injected honest
// opening source or over gRPC from a prover that is down at first (PASS
// verdicts, evidence whose proofs verify, and its size limit),
// RequestAudit, failed openings and retention, audits the verifier cannot
// run, the engine the node accepts, and restarts that resume pending
// audits.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "tests/verifier/verifier_node_fixture.h"

namespace layerproof::verifier {
namespace {

using namespace node_fixture;  // NOLINT: the fixture of these tests

TEST(VerifierNodeTest, DrawnAuditPassesAndItsEvidenceVerifies) {
  TempDir dir;
  auto openings = std::make_shared<HonestOpenings>();
  Verifier v(dir.path(), openings);
  Served s = Serve(ProverKey(), "prover-1");
  openings->Add(s);
  ASSERT_EQ(v.SubmitOne(s.envelope).code(), 0);
  ASSERT_TRUE(v.node().WaitIdle(absl::Seconds(60)).ok());
  EXPECT_EQ(v.node().counters().audits_done, 1u);
  EXPECT_EQ(v.node().counters().verdicts[v1::PASS], 1u);

  v1::GetVerdictResponse verdicts;
  ASSERT_TRUE(v.GetVerdict(s.request_id, &verdicts).ok());
  ASSERT_EQ(verdicts.verdicts_size(), 1);
  const v1::Verdict verdict =
      v.OpenVerdict(verdicts.verdicts(0).verdict_envelope());
  EXPECT_EQ(verdict.outcome(), v1::PASS) << verdict.DebugString();
  EXPECT_EQ(verdict.commitment_leaf_index(), 0u);
  EXPECT_EQ(verdict.verifier_id(), "verifier-test");
  ASSERT_EQ(verdict.audited_layers_size(), 1);

  v1::GetEvidenceRequest ereq;
  ereq.set_request_id(s.request_id);
  v1::EvidenceBundle bundle;
  {
    grpc::ClientContext ctx;
    ASSERT_TRUE(v.audit->GetEvidence(&ctx, ereq, &bundle).ok());
  }
  EXPECT_EQ(bundle.format_version(), 1u);
  EXPECT_EQ(bundle.log_origin(), "layerproof/verifier-test");
  EXPECT_EQ(bundle.commitment_envelope(), s.envelope);
  EXPECT_EQ(bundle.verdict_envelope(), verdicts.verdicts(0).verdict_envelope());
  // Both proofs against the same checkpoint.
  ASSERT_EQ(bundle.commitment_inclusion().checkpoint(),
            bundle.verdict_inclusion().checkpoint());
  const store::Checkpoint c = v.Verify(bundle.verdict_inclusion().checkpoint());
  EXPECT_TRUE(store::VerifyInclusion(
                  store::LeafHash(bundle.commitment_envelope()), 0, c.size,
                  ToProof(bundle.commitment_inclusion().inclusion_proof()),
                  c.root)
                  .ok());
  EXPECT_TRUE(store::VerifyInclusion(
                  store::LeafHash(bundle.verdict_envelope()),
                  bundle.verdict_inclusion().leaf_index(), c.size,
                  ToProof(bundle.verdict_inclusion().inclusion_proof()), c.root)
                  .ok());
  EXPECT_EQ(bundle.opening().salt(), s.salt);
  EXPECT_GE(bundle.opened_layers_size(), 1);
  for (const v1::OpenedLayer& l : bundle.opened_layers()) {
    EXPECT_EQ(l.data().size(),
              s.Positions().size() * size_t(TheWorld().width) * 4);
  }

  // Listing: PASS matches, FAIL_MISMATCH and another prover do not.
  auto list = [&](v1::VerdictOutcome outcome, const std::string& prover) {
    v1::ListVerdictsRequest r;
    r.set_outcome(outcome);
    r.set_prover_id(prover);
    v1::ListVerdictsResponse out;
    grpc::ClientContext ctx;
    EXPECT_TRUE(v.audit->ListVerdicts(&ctx, r, &out).ok());
    return out.verdicts_size();
  };
  EXPECT_EQ(list(v1::PASS, "prover-1"), 1);
  EXPECT_EQ(list(v1::FAIL_MISMATCH, ""), 0);
  EXPECT_EQ(list(v1::VERDICT_UNSPECIFIED, "prover-2"), 0);
}

TEST(VerifierNodeTest, RequestAuditOnDemandAndItsValidation) {
  TempDir dir;
  auto openings = std::make_shared<HonestOpenings>();
  Verifier v(dir.path(), openings, /*rate=*/0);
  Served s = Serve(ProverKey(), "prover-1");
  openings->Add(s);
  ASSERT_EQ(v.SubmitOne(s.envelope).code(), 0);

  v1::RequestAuditRequest r;
  r.set_request_id(s.request_id);
  r.set_all_layers(true);
  v1::RequestAuditResponse response;
  ASSERT_TRUE(v.RequestAudit(r, &response).ok());
  v1::Verdict verdict = v.OpenVerdict(response.verdict().verdict_envelope());
  EXPECT_EQ(verdict.outcome(), v1::PASS) << verdict.DebugString();
  EXPECT_EQ(response.verdict().leaf_index(), 1u);

  r.set_all_layers(false);
  r.add_layers(static_cast<uint32_t>(TheWorld().layers));
  ASSERT_TRUE(v.RequestAudit(r, &response).ok());
  verdict = v.OpenVerdict(response.verdict().verdict_envelope());
  EXPECT_EQ(verdict.outcome(), v1::PASS);
  ASSERT_EQ(verdict.audited_layers_size(), 1);
  EXPECT_EQ(verdict.audited_layers(0), uint32_t(TheWorld().layers));
  v1::GetVerdictResponse verdicts;
  ASSERT_TRUE(v.GetVerdict(s.request_id, &verdicts).ok());
  EXPECT_EQ(verdicts.verdicts_size(), 2);

  v1::RequestAuditRequest bad;
  bad.set_request_id("abc");
  grpc::Status st = v.RequestAudit(bad, &response);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(st.error_message(),
            "RequestAuditRequest.request_id: got 3 bytes, want 16");
  bad.set_request_id(s.request_id);
  bad.add_layers(1);
  bad.add_layers(1);
  st = v.RequestAudit(bad, &response);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(st.error_message().find("RequestAuditRequest.layers[1]: got 1"),
            std::string::npos)
      << st.error_message();
  bad.clear_layers();
  bad.add_layers(static_cast<uint32_t>(TheWorld().layers) + 1);
  EXPECT_EQ(v.RequestAudit(bad, &response).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
  bad.clear_layers();
  bad.set_request_id(std::string(16, '\x7f'));
  EXPECT_EQ(v.RequestAudit(bad, &response).error_code(),
            grpc::StatusCode::NOT_FOUND);
}

TEST(VerifierNodeTest, FailedOpeningIsAFailOpeningVerdict) {
  TempDir dir;
  auto openings = std::make_shared<HonestOpenings>();  // knows no request
  Verifier v(dir.path(), openings);
  Served s = Serve(ProverKey(), "prover-1");
  ASSERT_EQ(v.SubmitOne(s.envelope).code(), 0);
  ASSERT_TRUE(v.node().WaitIdle(absl::Seconds(60)).ok());
  v1::GetVerdictResponse verdicts;
  ASSERT_TRUE(v.GetVerdict(s.request_id, &verdicts).ok());
  ASSERT_EQ(verdicts.verdicts_size(), 1);
  EXPECT_EQ(v.OpenVerdict(verdicts.verdicts(0).verdict_envelope()).outcome(),
            v1::FAIL_OPENING);
  EXPECT_EQ(v.node().counters().verdicts[v1::FAIL_OPENING], 1u);
}

TEST(VerifierNodeTest, RestartResumesPendingAudits) {
  TempDir dir;
  Served s = Serve(ProverKey(), "prover-1");
  {
    auto held = std::make_shared<HonestOpenings>();
    held->Add(s);
    held->Hold();
    Verifier v(dir.path(), held);
    ASSERT_EQ(v.SubmitOne(s.envelope).code(), 0);
    ASSERT_TRUE(Eventually([&] { return held->opens() == 1; }));
    // The audit is stuck in its opening: shutting down abandons it.
    absl::Status stopped = v.Stop(absl::Milliseconds(20));
    EXPECT_TRUE(absl::IsDeadlineExceeded(stopped)) << stopped;
    held->Release();  // lets the abandoned worker return; its result is dropped
  }
  auto openings = std::make_shared<HonestOpenings>();
  openings->Add(s);
  Verifier v(dir.path(), openings);
  EXPECT_GE(v.node().log()->Size(), 1u);
  ASSERT_TRUE(v.node().WaitIdle(absl::Seconds(60)).ok());
  v1::GetVerdictResponse verdicts;
  ASSERT_TRUE(v.GetVerdict(s.request_id, &verdicts).ok());
  ASSERT_EQ(verdicts.verdicts_size(), 1);
  EXPECT_EQ(v.OpenVerdict(verdicts.verdicts(0).verdict_envelope()).outcome(),
            v1::PASS);
  EXPECT_EQ(v.node().log()->Size(), 2u);
  EXPECT_EQ(openings->opens(), 1);
}

TEST(VerifierNodeTest, StartIndexesAndAuditsEntriesLoggedButNotIndexed) {
  TempDir dir;
  Served s = Serve(ProverKey(), "prover-1");
  {
    // A crash between the log's append and the index: the entry is only in
    // the log.
    std::filesystem::create_directories(dir.path() + "/log");
    auto key = store::Ed25519PrivateKey::FromPem(Verifier::Key()->ToPem());
    ASSERT_TRUE(key.ok());
    auto signer =
        store::CheckpointSigner::Create("verifier-test", std::move(*key));
    ASSERT_TRUE(signer.ok());
    store::LogOptions o;
    o.origin = "layerproof/verifier-test";
    o.signer =
        std::make_shared<const store::CheckpointSigner>(std::move(*signer));
    auto log = store::RocksDbLog::Open(dir.path() + "/log", std::move(o));
    ASSERT_TRUE(log.ok()) << log.status();
    ASSERT_TRUE((*log)->Append(s.envelope).ok());
  }
  auto openings = std::make_shared<HonestOpenings>();
  openings->Add(s);
  Verifier v(dir.path(), openings);
  ASSERT_TRUE(v.node().WaitIdle(absl::Seconds(60)).ok());
  EXPECT_EQ(v.node().counters().commitments_logged, 1u);
  v1::GetVerdictResponse verdicts;
  ASSERT_TRUE(v.GetVerdict(s.request_id, &verdicts).ok());
  ASSERT_EQ(verdicts.verdicts_size(), 1);
  EXPECT_EQ(v.OpenVerdict(verdicts.verdicts(0).verdict_envelope()).outcome(),
            v1::PASS);
  // And the request id is now taken.
  EXPECT_TRUE(v.SubmitOne(s.envelope).duplicate());
}

// Regression: an opening asked for while the prover was down (restarting,
// or not yet up) became a permanent FAIL_OPENING for an honest prover.
TEST(VerifierNodeTest, AuditOfAProverDownAtFirstPassesOnceItServes) {
  TempDir dir;
  const std::string address = FreeAddress();
  NodeSetup setup;  // the node's own gRPC opening client
  setup.opening_address = address;
  Verifier v(dir.path(), setup);
  Served s = Serve(ProverKey(), "prover-1");
  HonestOpenings honest;
  honest.Add(s);
  OpeningService service(honest);
  ASSERT_EQ(v.SubmitOne(s.envelope).code(), 0);  // the audit starts now
  // The window under test: the audit has found the prover down (and is
  // retrying) before the prover starts.
  const absl::Time deadline = absl::Now() + absl::Seconds(30);
  while (v.node().counters().openings_unreachable == 0) {
    ASSERT_LT(absl::Now(), deadline) << "the audit never tried the prover";
    absl::SleepFor(absl::Milliseconds(5));  // polling the node
  }
  std::unique_ptr<rpc::RunningServer> prover = ServeOpenings(service, address);
  ASSERT_NE(prover, nullptr);
  ASSERT_TRUE(v.node().WaitIdle(absl::Seconds(60)).ok());
  v1::GetVerdictResponse verdicts;
  ASSERT_TRUE(v.GetVerdict(s.request_id, &verdicts).ok());
  ASSERT_EQ(verdicts.verdicts_size(), 1);
  const v1::Verdict verdict =
      v.OpenVerdict(verdicts.verdicts(0).verdict_envelope());
  EXPECT_EQ(verdict.outcome(), v1::PASS) << verdict.DebugString();
  EXPECT_EQ(service.calls(), 1);
  EXPECT_EQ(v.node().counters().audit_errors, 0u);
  v.Stop(absl::Seconds(5)).IgnoreError();
  prover->Shutdown(std::chrono::milliseconds(0));
}

// Regression: a prover registered without an Opening address got a
// FAIL_OPENING for the verifier's own gap. The audit stays pending (and is
// logged as an audit_error); once the address is known, it passes.
TEST(VerifierNodeTest, ProverWithoutOpeningAddressLeavesTheAuditPending) {
  TempDir dir;
  Served s = Serve(ProverKey(), "prover-1");
  {
    Verifier v(dir.path(), NodeSetup{});  // no opening address for prover-1
    ::testing::internal::CaptureStderr();
    ASSERT_EQ(v.SubmitOne(s.envelope).code(), 0);
    ASSERT_TRUE(v.node().WaitIdle(absl::Seconds(60)).ok());
    const std::string log = ::testing::internal::GetCapturedStderr();
    EXPECT_EQ(v.node().counters().audit_errors, 1u);
    EXPECT_EQ(v.node().log()->Size(), 1u);  // the commitment, no verdict
    EXPECT_NE(log.find("\"event\":\"audit_error\""), std::string::npos) << log;
    EXPECT_NE(log.find("without an check::Opening address"), std::string::npos)
        << log;
  }
  HonestOpenings honest;
  honest.Add(s);
  OpeningService service(honest);
  const std::string address = FreeAddress();
  std::unique_ptr<rpc::RunningServer> prover = ServeOpenings(service, address);
  NodeSetup setup;
  setup.opening_address = address;
  Verifier v(dir.path(), setup);
  ASSERT_TRUE(v.node().WaitIdle(absl::Seconds(60)).ok());
  v1::GetVerdictResponse verdicts;
  ASSERT_TRUE(v.GetVerdict(s.request_id, &verdicts).ok());
  ASSERT_EQ(verdicts.verdicts_size(), 1);
  EXPECT_EQ(v.OpenVerdict(verdicts.verdicts(0).verdict_envelope()).outcome(),
            v1::PASS);
  v.Stop(absl::Seconds(5)).IgnoreError();
  prover->Shutdown(std::chrono::milliseconds(0));
}

// Regression (issue 13, item 1): an audit the verifier's own errors left
// pending stayed pending forever. It is retried every retry_interval and
// closed with a signed INCONCLUSIVE verdict at max_audit_attempts.
TEST(VerifierNodeTest, AuditTheVerifierCannotRunEndsInconclusive) {
  TempDir dir;
  Served s = Serve(ProverKey(), "prover-1");
  NodeSetup setup;  // no opening address for prover-1: the verifier's gap
  setup.max_audit_attempts = 3;
  setup.retry_interval = absl::Milliseconds(50);
  ::testing::internal::CaptureStderr();
  Verifier v(dir.path(), setup);
  ASSERT_EQ(v.SubmitOne(s.envelope).code(), 0);
  v1::GetVerdictResponse verdicts;
  ASSERT_TRUE(Eventually([&] {
    verdicts.Clear();
    return v.GetVerdict(s.request_id, &verdicts).ok() &&
           verdicts.verdicts_size() == 1;
  }));
  ::testing::internal::GetCapturedStderr();
  const v1::Verdict verdict =
      v.OpenVerdict(verdicts.verdicts(0).verdict_envelope());
  EXPECT_EQ(verdict.outcome(), v1::INCONCLUSIVE);
  EXPECT_NE(verdict.detail().find("in 3 attempts"), std::string::npos)
      << verdict.detail();
  EXPECT_NE(verdict.detail().find("without an check::Opening address"),
            std::string::npos)
      << verdict.detail();
  EXPECT_TRUE(
      Eventually([&] { return v.node().counters().audit_errors == 3; }));
  EXPECT_EQ(v.node().counters().verdicts[v1::INCONCLUSIVE], 1u);
  EXPECT_EQ(v.node().log()->Size(), 2u);  // the commitment and the verdict
}

// Regression (issue 13, item 8): a verifier down longer than the prover's
// retention asked for the opening, got NOT_FOUND and recorded FAIL_OPENING
// against an honest prover. Past the registered retention (measured from
// the verifier's own logging time) a failed opening is the verifier's
// lateness; within it (FailedOpeningIsAFailOpeningVerdict) it stays a
// failure of the prover.
TEST(VerifierNodeTest, FailedOpeningPastTheRetentionIsInconclusive) {
  TempDir dir;
  NodeSetup setup;
  setup.openings = std::make_shared<HonestOpenings>();  // knows no request
  setup.prover_retention = absl::Nanoseconds(1);
  Verifier v(dir.path(), setup);
  Served s = Serve(ProverKey(), "prover-1");
  ASSERT_EQ(v.SubmitOne(s.envelope).code(), 0);
  ASSERT_TRUE(v.node().WaitIdle(absl::Seconds(60)).ok());
  v1::GetVerdictResponse verdicts;
  ASSERT_TRUE(v.GetVerdict(s.request_id, &verdicts).ok());
  ASSERT_EQ(verdicts.verdicts_size(), 1);
  const v1::Verdict verdict =
      v.OpenVerdict(verdicts.verdicts(0).verdict_envelope());
  EXPECT_EQ(verdict.outcome(), v1::INCONCLUSIVE);
  EXPECT_NE(verdict.detail().find("past prover \"prover-1\"'s retention"),
            std::string::npos)
      << verdict.detail();
  EXPECT_NE(verdict.detail().find("FAIL_OPENING"), std::string::npos);
  EXPECT_EQ(v.node().counters().verdicts[v1::FAIL_OPENING], 0u);
}

// Regression: the verifier's engine could be shorter than the model, so
// commitments the model allows could never be audited.
TEST(VerifierNodeTest, EngineShorterThanTheModelIsRefused) {
  TempDir dir;
  kernels::model::EngineOptions short_context;
  short_context.max_context = 64;
  auto engine = kernels::model::Engine::Create(
      *TheWorld().synth->model, TheWorld().executor.get(), short_context);
  ASSERT_TRUE(engine.ok()) << engine.status().ToString();
  VerifierOptions o;
  o.verifier_id = "verifier-test";
  o.engine = engine->get();
  o.key = Verifier::Key();
  o.db_dir = dir.path();
  auto node = VerifierNode::Create(std::move(o));
  ASSERT_FALSE(node.ok());
  EXPECT_EQ(node.status().code(), absl::StatusCode::kInvalidArgument);
  const std::string max_positions =
      std::to_string(TheWorld().synth->model->config().max_positions);
  EXPECT_EQ(node.status().message(),
            "VerifierOptions.engine: got an engine with max_context 64, want "
            "max_context >= the model's max_positions (" +
                max_positions +
                ") so that every commitment the model allows can be "
                "audited; create the verifier's engine with "
                "EngineOptions.max_context = " +
                max_positions);
}

// Regression: a bundle over the server's send limit failed inside gRPC.
TEST(VerifierNodeTest, EvidenceOverTheLimitIsRefusedWithItsSize) {
  TempDir dir;
  auto openings = std::make_shared<HonestOpenings>();
  NodeSetup setup{.openings = openings};
  setup.max_evidence_bytes = 1000;
  Verifier v(dir.path(), setup);
  Served s = Serve(ProverKey(), "prover-1");
  openings->Add(s);
  ASSERT_EQ(v.SubmitOne(s.envelope).code(), 0);
  ASSERT_TRUE(v.node().WaitIdle(absl::Seconds(60)).ok());
  v1::GetEvidenceRequest ereq;
  ereq.set_request_id(s.request_id);
  v1::EvidenceBundle bundle;
  grpc::ClientContext ctx;
  grpc::Status st = v.audit->GetEvidence(&ctx, ereq, &bundle);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_NE(st.error_message().find("EvidenceBundle: got "), std::string::npos)
      << st.error_message();
  EXPECT_NE(st.error_message().find(
                " bytes, want <= 1000 (VerifierOptions.max_evidence_bytes"),
            std::string::npos)
      << st.error_message();
}

}  // namespace
}  // namespace layerproof::verifier
