// mTLS and roles across the whole deployment (issue 5, docs/security.md):
// with TLS on, the honest flow works end to end over certificates, and
// Submit, RequestAudit, GetEvidence and Open are refused without the right
// client certificate.
#include <gtest/gtest.h>

#include "layerproof/v1/audit_work.grpc.pb.h"
#include "rpc/roles.h"
#include "rpc/tls.h"
#include "store/envelope.h"
#include "tests/integration/cluster.h"
#include "tests/rpc/test_certs.h"
#include "verifier/auditor_worker.h"

namespace layerproof::integration {
namespace {

using rpc::fixture::TestCerts;

rpc::RoleMap Roles() {
  rpc::RoleMap roles;
  roles.Grant("prover-1", rpc::Role::kProver);
  roles.Grant("prover-2", rpc::Role::kProver);
  roles.Grant("verifier-1", rpc::Role::kAuditor);
  roles.Grant("auditor-1", rpc::Role::kAuditor);
  roles.Grant("client-1", rpc::Role::kClient);
  return roles;
}

class SecureCluster : public ::testing::Test {
 protected:
  void SetUp() override {
    const TestCerts& certs = TestCerts::Get();
    ASSERT_TRUE(certs.ok());
    cluster_.set_query_tls(certs.Client("stranger"));
    cluster_.StartVerifier(
        VerifierSetup{.policy = {1.0, 1},
                      .server_tls = certs.Server(true),
                      .client_tls = certs.Client("verifier-1"),
                      .roles = Roles()});
    prover_ = &cluster_.StartProver({.server_tls = certs.Server(true),
                                     .client_tls = certs.Client("prover-1"),
                                     .roles = Roles()});
  }

  // Runs one request over TLS as `client` and returns its response.
  v1::GenerateResponse GenerateOne() {
    auto stub =
        cluster_.InferenceStub(*prover_, TestCerts::Get().Client("client-1"));
    v1::SamplingParams greedy;
    greedy.set_top_p(1.0f);
    auto r = cluster_.Generate(*stub, {1, 2, 3}, 3, greedy);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? r->response : v1::GenerateResponse();
  }

  Cluster cluster_;
  RunningProver* prover_ = nullptr;
};

TEST_F(SecureCluster, HonestFlowWorksOverMutualTls) {
  const v1::GenerateResponse r = GenerateOne();
  ASSERT_TRUE(r.receipt().has_inclusion());
  ASSERT_TRUE(WaitForAudits(cluster_, 1, absl::Seconds(60)));
  const std::vector<v1::Verdict> verdicts = cluster_.Verdicts(r.request_id());
  ASSERT_EQ(verdicts.size(), 1u);
  EXPECT_EQ(verdicts[0].outcome(), v1::PASS) << verdicts[0].detail();
}

// Regression (issue 13, item 7): under mTLS, Generate was open to any
// certificate from the CA. It needs role client now; a refused call
// commits, journals and logs nothing.
TEST_F(SecureCluster, GenerateNeedsTheClientRole) {
  for (const char* who : {"stranger", "auditor-1"}) {
    auto stub = cluster_.InferenceStub(*prover_, TestCerts::Get().Client(who));
    v1::GenerateRequest request;
    request.mutable_token_ids()->add_ids(1);
    request.set_max_tokens(2);
    v1::GenerateResponse response;
    grpc::ClientContext context;
    const grpc::Status status = stub->Generate(&context, request, &response);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::PERMISSION_DENIED) << who;
    EXPECT_NE(status.error_message().find("role client"), std::string::npos)
        << status.error_message();
  }
  // A barrier, not a wait: an allowed request's commitment is logged before
  // its response returns (with its inclusion), behind anything the refused
  // calls had queued for submission. It is the log's first entry (its
  // verdict may follow it).
  const v1::GenerateResponse allowed = GenerateOne();
  ASSERT_TRUE(allowed.receipt().has_inclusion());
  EXPECT_EQ(allowed.receipt().inclusion().leaf_index(), 0u);
  EXPECT_EQ(prover_->node->committed_requests(), 1u);
  EXPECT_EQ(prover_->node->pending_submissions(), 0u);
}

TEST_F(SecureCluster, SubmitNeedsTheProverRole) {
  const v1::GenerateResponse r = GenerateOne();
  for (const char* who : {"stranger", "auditor-1"}) {
    auto log = cluster_.LogStub(TestCerts::Get().Client(who));
    v1::SubmitRequest request;
    request.add_envelopes(r.commitment_envelope());
    v1::SubmitResponse response;
    grpc::ClientContext context;
    const grpc::Status status = log->Submit(&context, request, &response);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::PERMISSION_DENIED) << who;
    EXPECT_NE(status.error_message().find("role prover"), std::string::npos)
        << status.error_message();
  }
  // No client certificate: the handshake itself fails.
  auto anonymous = cluster_.LogStub(TestCerts::Get().Client(""));
  v1::SubmitRequest request;
  request.add_envelopes(r.commitment_envelope());
  v1::SubmitResponse response;
  grpc::ClientContext context;
  EXPECT_FALSE(anonymous->Submit(&context, request, &response).ok());
  // The prover's own certificate may submit (a duplicate here).
  auto log = cluster_.LogStub(TestCerts::Get().Client("prover-1"));
  grpc::ClientContext ok_context;
  ASSERT_TRUE(log->Submit(&ok_context, request, &response).ok());
  ASSERT_EQ(response.results_size(), 1);
  EXPECT_EQ(response.results(0).code(), 0);
  EXPECT_TRUE(response.results(0).duplicate());
}

TEST_F(SecureCluster, RequestAuditAndEvidenceNeedTheAuditorRole) {
  const v1::GenerateResponse r = GenerateOne();
  ASSERT_TRUE(WaitForAudits(cluster_, 1, absl::Seconds(60)));
  for (const char* who : {"stranger", "prover-1"}) {
    auto audit = cluster_.AuditStub(TestCerts::Get().Client(who));
    v1::RequestAuditRequest request;
    request.set_request_id(r.request_id());
    v1::RequestAuditResponse response;
    grpc::ClientContext context;
    EXPECT_EQ(audit->RequestAudit(&context, request, &response).error_code(),
              grpc::StatusCode::PERMISSION_DENIED)
        << who;
    v1::GetEvidenceRequest evidence_request;
    evidence_request.set_request_id(r.request_id());
    v1::EvidenceBundle bundle;
    grpc::ClientContext evidence_context;
    EXPECT_EQ(audit->GetEvidence(&evidence_context, evidence_request, &bundle)
                  .error_code(),
              grpc::StatusCode::PERMISSION_DENIED)
        << who;
  }
  auto audit = cluster_.AuditStub(TestCerts::Get().Client("auditor-1"));
  v1::RequestAuditRequest request;
  request.set_request_id(r.request_id());
  v1::RequestAuditResponse response;
  grpc::ClientContext context;
  const grpc::Status status = audit->RequestAudit(&context, request, &response);
  EXPECT_TRUE(status.ok()) << status.error_message();
  v1::GetEvidenceRequest evidence_request;
  evidence_request.set_request_id(r.request_id());
  v1::EvidenceBundle bundle;
  grpc::ClientContext evidence_context;
  EXPECT_TRUE(
      audit->GetEvidence(&evidence_context, evidence_request, &bundle).ok());
  EXPECT_EQ(bundle.commitment_envelope(), r.commitment_envelope());
}

// AuditWork (leasing audits to workers) needs role auditor; a worker with
// the auditor certificate concludes the audit over mTLS, opening at the
// prover with the same certificate.
TEST(SecureAuditors, AuditWorkNeedsTheAuditorRole) {
  const TestCerts& certs = TestCerts::Get();
  ASSERT_TRUE(certs.ok());
  Cluster cluster;
  cluster.set_query_tls(certs.Client("stranger"));
  VerifierSetup vs{.policy = {1.0, 1},
                   .server_tls = certs.Server(true),
                   .client_tls = certs.Client("verifier-1"),
                   .roles = Roles()};
  vs.remote_auditors = true;
  cluster.StartVerifier(vs);
  RunningProver& prover =
      cluster.StartProver({.server_tls = certs.Server(true),
                           .client_tls = certs.Client("prover-1"),
                           .roles = Roles()});
  for (const char* who : {"stranger", "prover-1", "client-1"}) {
    auto channel =
        rpc::MakeChannel(cluster.verifier_address(), certs.Client(who));
    ASSERT_TRUE(channel.ok());
    auto work = v1::AuditWork::NewStub(*channel);
    v1::LeaseAuditRequest request;
    request.set_worker_id(who);
    v1::LeaseAuditResponse response;
    grpc::ClientContext context;
    EXPECT_EQ(work->Lease(&context, request, &response).error_code(),
              grpc::StatusCode::PERMISSION_DENIED)
        << who;
  }
  auto stub = cluster.InferenceStub(prover, certs.Client("client-1"));
  v1::SamplingParams greedy;
  greedy.set_top_p(1.0f);
  auto r = cluster.Generate(*stub, {1, 2, 3}, 3, greedy);
  ASSERT_TRUE(r.ok()) << r.status();
  auto backend = kernels::DefaultBackend();
  ASSERT_TRUE(backend.ok());
  auto executor = kernels::model::MakeHostExecutor(*backend);
  auto engine = kernels::model::Engine::Create(cluster.model(), executor.get());
  ASSERT_TRUE(engine.ok());
  verifier::AuditorWorkerOptions o;
  o.verifier_address = cluster.verifier_address();
  o.verifier_tls = certs.Client("auditor-1");
  o.prover_tls = certs.Client("auditor-1");
  o.engine = engine->get();
  o.poll_interval = absl::Milliseconds(20);
  auto worker = verifier::AuditorWorker::Start(std::move(o));
  ASSERT_TRUE(worker.ok()) << worker.status();
  const std::vector<v1::Verdict> verdicts =
      cluster.WaitForVerdicts(r->response.request_id(), absl::Seconds(60));
  ASSERT_EQ(verdicts.size(), 1u);
  EXPECT_EQ(verdicts[0].outcome(), v1::PASS) << verdicts[0].detail();
  EXPECT_EQ((*worker)->completed(), 1u);
}

// Signs with its own key corrupted: the key id is the registered one, the
// signature is not a signature.
struct ForgedSignatureFaults : prover::ProverFaults {
  void TamperEnvelope(v1::Envelope& envelope) override {
    std::string sig = envelope.signatures(0).sig();
    sig[0] ^= 1;
    envelope.mutable_signatures(0)->set_sig(sig);
  }
};

// A second prover, prover-2 (its certificate's name), with `setup`'s
// faults or key.
RunningProver& StartSecondProver(Cluster& cluster, ProverSetup setup) {
  const TestCerts& certs = TestCerts::Get();
  setup.prover_id = "prover-2";
  setup.receipt_wait = absl::Milliseconds(500);
  setup.server_tls = certs.Server(true);
  setup.client_tls = certs.Client("prover-2");
  setup.roles = Roles();
  return cluster.StartProver(setup);
}

// Requests on `prover` must each end in one FAIL_SIGNATURE verdict that
// blames prover-2, the authenticated submitter, and nothing it signed may
// be logged.
void ExpectRefusalVerdicts(Cluster& cluster, RunningProver& prover) {
  auto stub =
      cluster.InferenceStub(prover, TestCerts::Get().Client("client-1"));
  v1::SamplingParams greedy;
  greedy.set_top_p(1.0f);
  v1::GenerateRequest request;
  request.mutable_token_ids()->add_ids(5);
  request.mutable_token_ids()->add_ids(6);
  *request.mutable_sampling() = greedy;
  request.set_max_tokens(3);
  v1::GenerateResponse response;
  grpc::ClientContext context;
  ASSERT_TRUE(stub->Generate(&context, request, &response).ok());
  const std::vector<v1::Verdict> verdicts =
      cluster.WaitForVerdicts(response.request_id(), absl::Seconds(30));
  ASSERT_EQ(verdicts.size(), 1u);
  EXPECT_EQ(verdicts[0].outcome(), v1::FAIL_SIGNATURE);
  EXPECT_FALSE(verdicts[0].has_commitment_leaf_index());
  EXPECT_EQ(verdicts[0].refused_submitter(), "prover-2");
  // The log holds the verdict only.
  EXPECT_EQ(cluster.LatestCheckpoint().size, 1u);
}

TEST_F(SecureCluster, ForeignKeyGetsASignatureVerdictAgainstTheSubmitter) {
  ExpectRefusalVerdicts(cluster_,
                        StartSecondProver(cluster_, {.foreign_key = true}));
}

TEST_F(SecureCluster, ForgedSignatureGetsASignatureVerdictAgainstTheSubmitter) {
  ExpectRefusalVerdicts(
      cluster_,
      StartSecondProver(cluster_,
                        {.faults = std::make_shared<ForgedSignatureFaults>()}));
}

// Regression (issue 13, item 6): an authenticated prover-2 sent a
// bad-signature envelope naming prover-1's logged request id; its
// FAIL_SIGNATURE verdict was filed under that id, and GetVerdict and
// GetEvidence for prover-1's request returned prover-2's refusal. The
// refusal is logged and charged to prover-2, but prover-1's request shows
// only its own audit.
TEST_F(SecureCluster, RefusalNamingAnotherProversRequestIsTheSubmitters) {
  const v1::GenerateResponse r = GenerateOne();
  ASSERT_TRUE(WaitForAudits(cluster_, 1, absl::Seconds(60)));
  const uint64_t before = cluster_.LatestCheckpoint().size;  // commit, PASS

  v1::Envelope env;
  ASSERT_TRUE(env.ParseFromString(r.commitment_envelope()));
  v1::Commitment c;
  ASSERT_TRUE(c.ParseFromString(env.payload()));
  c.set_prover_id("prover-2");
  auto stranger_key = store::Ed25519PrivateKey::Generate();
  ASSERT_TRUE(stranger_key.ok());
  auto forged = store::SignCommitment(c, *stranger_key);
  ASSERT_TRUE(forged.ok()) << forged.status();
  auto log = cluster_.LogStub(TestCerts::Get().Client("prover-2"));
  v1::SubmitRequest request;
  request.add_envelopes(*forged);
  v1::SubmitResponse response;
  grpc::ClientContext context;
  ASSERT_TRUE(log->Submit(&context, request, &response).ok());
  ASSERT_EQ(response.results_size(), 1);
  EXPECT_EQ(response.results(0).code(),
            static_cast<int>(grpc::StatusCode::PERMISSION_DENIED))
      << response.results(0).message();
  // The refusal verdict is logged (and only it).
  EXPECT_EQ(cluster_.LatestCheckpoint().size, before + 1);

  const std::vector<v1::Verdict> verdicts = cluster_.Verdicts(r.request_id());
  ASSERT_EQ(verdicts.size(), 1u);
  EXPECT_EQ(verdicts[0].outcome(), v1::PASS) << verdicts[0].detail();
  auto audit = cluster_.AuditStub(TestCerts::Get().Client("auditor-1"));
  v1::GetEvidenceRequest get;
  get.set_request_id(r.request_id());
  v1::EvidenceBundle bundle;
  grpc::ClientContext evidence_context;
  ASSERT_TRUE(audit->GetEvidence(&evidence_context, get, &bundle).ok());
  EXPECT_EQ(bundle.commitment_envelope(), r.commitment_envelope());

  // Filed under its submitter.
  v1::ListVerdictsRequest list;
  list.set_prover_id("prover-2");
  v1::ListVerdictsResponse listed;
  grpc::ClientContext list_context;
  ASSERT_TRUE(audit->ListVerdicts(&list_context, list, &listed).ok());
  ASSERT_EQ(listed.verdicts_size(), 1);
  v1::Envelope verdict_env;
  ASSERT_TRUE(
      verdict_env.ParseFromString(listed.verdicts(0).verdict_envelope()));
  v1::Verdict refusal;
  ASSERT_TRUE(refusal.ParseFromString(verdict_env.payload()));
  EXPECT_EQ(refusal.outcome(), v1::FAIL_SIGNATURE);
  EXPECT_EQ(refusal.refused_submitter(), "prover-2");
}

// Regression (issue 13, item 6): each refusal verdict stores the refused
// envelope (up to max_leaf_bytes), so an authenticated submitter could
// fill the verifier's disk at the refusal rate. Past
// max_refusals_per_submitter its envelopes are still refused, but nothing
// more is logged or stored.
TEST(SecureClusterBounds, RefusalVerdictsPerSubmitterAreBounded) {
  const TestCerts& certs = TestCerts::Get();
  ASSERT_TRUE(certs.ok());
  Cluster cluster;
  cluster.set_query_tls(certs.Client("stranger"));
  cluster.StartVerifier(VerifierSetup{.policy = {1.0, 1},
                                      .server_tls = certs.Server(true),
                                      .client_tls = certs.Client("verifier-1"),
                                      .roles = Roles(),
                                      .max_refusals_per_submitter = 2});
  auto stranger_key = store::Ed25519PrivateKey::Generate();
  ASSERT_TRUE(stranger_key.ok());
  auto log = cluster.LogStub(certs.Client("prover-2"));
  for (int i = 0; i < 3; ++i) {
    if (i > 0) absl::SleepFor(absl::Milliseconds(1100));  // the refusal rate
    v1::Commitment c;
    c.set_request_id(std::string(15, '\x01') + char('a' + i));
    c.set_prover_id("prover-2");
    c.set_model_digest(std::string(32, '\x02'));
    c.set_spec_version(1);
    c.set_prompt_digest(std::string(32, '\x03'));
    c.set_prompt_tokens(2);
    c.set_output_digest(std::string(32, '\x04'));
    c.set_output_tokens(1);
    c.mutable_sampling()->set_top_p(1);
    c.set_seed_digest(std::string(32, '\x05'));
    c.set_num_layers(1);
    c.add_layer_hashes(std::string(32, 'a'));
    c.add_layer_hashes(std::string(32, 'b'));
    c.set_hidden_size(8);
    c.set_created_at_unix_nanos(1764460000000000000);
    c.set_finish_reason(v1::FINISH_REASON_MAX_TOKENS);
    c.set_max_new_tokens(1);
    c.set_stop_ids_from_model(true);
    c.set_max_context(16);
    auto forged = store::SignCommitment(c, *stranger_key);
    ASSERT_TRUE(forged.ok()) << forged.status();
    v1::SubmitRequest request;
    request.add_envelopes(*forged);
    v1::SubmitResponse response;
    grpc::ClientContext context;
    ASSERT_TRUE(log->Submit(&context, request, &response).ok());
    ASSERT_EQ(response.results_size(), 1);
    EXPECT_NE(response.results(0).code(), 0) << i;
    EXPECT_EQ(cluster.LatestCheckpoint().size, uint64_t(std::min(i + 1, 2)))
        << i << ": " << response.results(0).message();
    if (i == 2) {
      EXPECT_NE(response.results(0).message().find("refusal verdicts stored"),
                std::string::npos)
          << response.results(0).message();
    }
  }
}

TEST_F(SecureCluster, OpeningNeedsTheAuditorRole) {
  const v1::GenerateResponse r = GenerateOne();
  auto opening =
      cluster_.OpeningStub(*prover_, TestCerts::Get().Client("stranger"));
  v1::OpenRequest request;
  request.set_request_id(r.request_id());
  request.add_layers(0);
  grpc::ClientContext context;
  auto reader = opening->Open(&context, request);
  v1::OpenChunk chunk;
  EXPECT_FALSE(reader->Read(&chunk));
  const grpc::Status status = reader->Finish();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::PERMISSION_DENIED)
      << status.error_message();
}

}  // namespace
}  // namespace layerproof::integration
