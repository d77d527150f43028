// The verifier node served over gRPC (insecure, 127.0.0.1:0): Log.Submit's
// admission rules and proofs, the log reads, audits drawn after logging
// with an injected honest opening source (PASS verdicts, evidence whose
// proofs verify), RequestAudit, and a restart that resumes pending audits.
#include "verifier/verifier_node.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "layerproof/v1/audit.grpc.pb.h"
#include "layerproof/v1/log.grpc.pb.h"
#include "store/checkpoint.h"
#include "store/envelope.h"
#include "store/merkle.h"
#include "store/rocksdb_log.h"
#include "store/rpc/server.h"
#include "tests/verifier/verifier_world.h"

namespace layerproof::verifier {
namespace {

using testing::HonestOpenings;
using testing::Serve;
using testing::Served;
using testing::Str;
using testing::TempDir;
using testing::TheWorld;

const store::Ed25519PrivateKey& ProverKey() {
  static auto* key =
      new store::Ed25519PrivateKey(*store::Ed25519PrivateKey::Generate());
  return *key;
}
const store::Ed25519PrivateKey& StrangerKey() {
  static auto* key =
      new store::Ed25519PrivateKey(*store::Ed25519PrivateKey::Generate());
  return *key;
}

store::Sha256Hash ToHash(const std::string& s) {
  store::Sha256Hash h{};
  EXPECT_EQ(s.size(), h.size());
  std::copy_n(s.begin(), std::min(s.size(), h.size()), h.begin());
  return h;
}

std::vector<store::Sha256Hash> ToProof(
    const google::protobuf::RepeatedPtrField<std::string>& p) {
  std::vector<store::Sha256Hash> out;
  for (const std::string& h : p) out.push_back(ToHash(h));
  return out;
}

// A running verifier node and stubs for its services.
class Verifier {
 public:
  Verifier(const std::string& dir, std::shared_ptr<OpeningSource> openings,
           double rate = 1.0) {
    VerifierOptions o;
    o.verifier_id = "verifier-test";
    o.engine = TheWorld().engine.get();
    o.key = Key();
    o.db_dir = dir;
    o.provers.push_back({"prover-1", ProverKey().public_key(), "", {}});
    o.policy.rate = rate;
    o.policy.layers_per_audit = 1;
    o.audit_threads = 2;
    o.submit_threads = 4;
    o.opening_timeout = absl::Seconds(20);
    o.insecure = true;
    o.opening_source = std::move(openings);
    auto node = VerifierNode::Create(std::move(o));
    EXPECT_TRUE(node.ok()) << node.status();
    node_ = std::move(*node);
    rpc::ServerConfig config;
    config.tls.insecure = true;
    auto server = rpc::StartServer(config, node_->services());
    EXPECT_TRUE(server.ok()) << server.status();
    server_ = std::move(*server);
    auto channel =
        grpc::CreateChannel("127.0.0.1:" + std::to_string(server_->port()),
                            grpc::InsecureChannelCredentials());
    log = v1::Log::NewStub(channel);
    audit = v1::Audit::NewStub(channel);
  }
  ~Verifier() { Stop(absl::Seconds(5)); }

  absl::Status Stop(absl::Duration grace) {
    if (server_ != nullptr) server_->Shutdown(std::chrono::milliseconds(100));
    return node_->Shutdown(grace);
  }

  static std::shared_ptr<const store::Ed25519PrivateKey> Key() {
    static auto* key = new std::shared_ptr<const store::Ed25519PrivateKey>(
        std::make_shared<const store::Ed25519PrivateKey>(
            *store::Ed25519PrivateKey::Generate()));
    return *key;
  }

  grpc::Status Submit(const std::vector<std::string>& envelopes,
                      v1::SubmitResponse* response) {
    v1::SubmitRequest request;
    for (const std::string& e : envelopes) request.add_envelopes(e);
    grpc::ClientContext ctx;
    return log->Submit(&ctx, request, response);
  }
  v1::SubmitResult SubmitOne(const std::string& envelope) {
    v1::SubmitResponse response;
    grpc::Status s = Submit({envelope}, &response);
    EXPECT_TRUE(s.ok()) << s.error_message();
    EXPECT_EQ(response.results_size(), 1);
    last_checkpoint = response.checkpoint();
    last_tree_size = response.tree_size();
    return response.results_size() == 1 ? response.results(0)
                                        : v1::SubmitResult();
  }
  grpc::Status GetVerdict(const std::string& request_id,
                          v1::GetVerdictResponse* response) {
    v1::GetVerdictRequest request;
    request.set_request_id(request_id);
    grpc::ClientContext ctx;
    return audit->GetVerdict(&ctx, request, response);
  }
  grpc::Status RequestAudit(const v1::RequestAuditRequest& request,
                            v1::RequestAuditResponse* response) {
    grpc::ClientContext ctx;
    return audit->RequestAudit(&ctx, request, response);
  }
  // The checkpoint, verified under the node's key and origin.
  store::Checkpoint Verify(const std::string& note) {
    store::CheckpointVerifier v(node_->verifier_id(), node_->public_key());
    absl::StatusOr<store::Checkpoint> c = v.Verify(note, node_->log_origin());
    EXPECT_TRUE(c.ok()) << c.status();
    return c.value_or(store::Checkpoint());
  }
  // The verdict an envelope holds, its signature checked.
  v1::Verdict OpenVerdict(const std::string& envelope) {
    store::KeyRing ring;
    ring.Add(node_->public_key());
    auto verified = store::VerifyEnvelope(envelope, ring,
                                          store::kVerdictPayloadType, 1 << 20);
    EXPECT_TRUE(verified.ok()) << verified.status();
    if (!verified.ok()) return {};
    auto verdict = store::ParseVerdict(verified->payload);
    EXPECT_TRUE(verdict.ok()) << verdict.status();
    return verdict.value_or(v1::Verdict());
  }

  VerifierNode& node() { return *node_; }
  std::unique_ptr<v1::Log::Stub> log;
  std::unique_ptr<v1::Audit::Stub> audit;
  std::string last_checkpoint;
  uint64_t last_tree_size = 0;

 private:
  std::unique_ptr<VerifierNode> node_;
  std::unique_ptr<rpc::RunningServer> server_;
};

TEST(VerifierNodeTest, SubmitLogsWithAProofThatVerifies) {
  TempDir dir;
  Verifier v(dir.path(), std::make_shared<HonestOpenings>(), /*rate=*/0);
  Served s = Serve(ProverKey(), "prover-1");
  v1::SubmitResult r = v.SubmitOne(s.envelope);
  ASSERT_EQ(r.code(), 0) << r.message();
  EXPECT_EQ(r.leaf_index(), 0u);
  EXPECT_FALSE(r.duplicate());
  const store::Checkpoint c = v.Verify(v.last_checkpoint);
  EXPECT_EQ(c.size, v.last_tree_size);
  EXPECT_TRUE(store::VerifyInclusion(store::LeafHash(s.envelope),
                                     r.leaf_index(), c.size,
                                     ToProof(r.inclusion_proof()), c.root)
                  .ok());
  // The same bytes again: the original index.
  v1::SubmitResult again = v.SubmitOne(s.envelope);
  EXPECT_EQ(again.code(), 0);
  EXPECT_EQ(again.leaf_index(), 0u);
  EXPECT_TRUE(again.duplicate());
  // Another commitment under the same request id: refused.
  v1::Commitment other = s.commitment;
  other.set_created_at_unix_nanos(other.created_at_unix_nanos() + 1);
  auto other_env = store::SignCommitment(other, ProverKey());
  ASSERT_TRUE(other_env.ok());
  v1::SubmitResult conflict = v.SubmitOne(*other_env);
  EXPECT_EQ(conflict.code(), int(grpc::StatusCode::ALREADY_EXISTS));
  EXPECT_NE(conflict.message().find("Commitment.request_id"), std::string::npos)
      << conflict.message();
  EXPECT_EQ(v.node().log()->Size(), 1u);
}

TEST(VerifierNodeTest, BatchOfManyIsLoggedWithOneCheckpointCoveringAll) {
  TempDir dir;
  Verifier v(dir.path(), std::make_shared<HonestOpenings>(), /*rate=*/0);
  std::vector<std::string> envelopes;
  for (int i = 0; i < 6; ++i) {
    envelopes.push_back(
        Serve(ProverKey(), "prover-1", {1, 2, int32_t(3 + i)}).envelope);
  }
  envelopes.push_back("not an envelope");
  v1::SubmitResponse response;
  ASSERT_TRUE(v.Submit(envelopes, &response).ok());
  ASSERT_EQ(response.results_size(), 7);
  const store::Checkpoint c = v.Verify(response.checkpoint());
  EXPECT_EQ(c.size, 6u);
  std::vector<uint64_t> indices;
  for (int i = 0; i < 6; ++i) {
    const v1::SubmitResult& r = response.results(i);
    ASSERT_EQ(r.code(), 0) << r.message();
    indices.push_back(r.leaf_index());
    EXPECT_TRUE(store::VerifyInclusion(store::LeafHash(envelopes[i]),
                                       r.leaf_index(), c.size,
                                       ToProof(r.inclusion_proof()), c.root)
                    .ok());
  }
  std::sort(indices.begin(), indices.end());
  EXPECT_EQ(indices, (std::vector<uint64_t>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(response.results(6).code(),
            int(grpc::StatusCode::INVALID_ARGUMENT));
  EXPECT_EQ(v.node().counters().commitments_logged, 6u);
}

TEST(VerifierNodeTest, UnregisteredKeyIsRefusedWithALoggedFailSignature) {
  TempDir dir;
  Verifier v(dir.path(), std::make_shared<HonestOpenings>(), /*rate=*/0);
  Served s = Serve(StrangerKey(), "prover-1");
  v1::SubmitResult r = v.SubmitOne(s.envelope);
  EXPECT_EQ(r.code(), int(grpc::StatusCode::PERMISSION_DENIED)) << r.message();
  // Refused, but its FAIL_SIGNATURE verdict is in the log, once.
  EXPECT_EQ(v.SubmitOne(s.envelope).code(),
            int(grpc::StatusCode::PERMISSION_DENIED));
  ASSERT_EQ(v.node().log()->Size(), 1u);
  v1::GetVerdictResponse verdicts;
  ASSERT_TRUE(v.GetVerdict(s.request_id, &verdicts).ok());
  ASSERT_EQ(verdicts.verdicts_size(), 1);
  const v1::Verdict verdict =
      v.OpenVerdict(verdicts.verdicts(0).verdict_envelope());
  EXPECT_EQ(verdict.outcome(), v1::FAIL_SIGNATURE);
  EXPECT_FALSE(verdict.has_commitment_leaf_index());
  EXPECT_EQ(verdict.commitment_leaf_hash(), Str(store::LeafHash(s.envelope)));
  // The refused envelope is kept for evidence.
  v1::GetEvidenceRequest ereq;
  ereq.set_request_id(s.request_id);
  v1::EvidenceBundle bundle;
  grpc::ClientContext ctx;
  ASSERT_TRUE(v.audit->GetEvidence(&ctx, ereq, &bundle).ok());
  EXPECT_EQ(bundle.commitment_envelope(), s.envelope);
  EXPECT_FALSE(bundle.has_commitment_inclusion());
  EXPECT_EQ(bundle.verdict_inclusion().leaf_index(), 0u);
}

TEST(VerifierNodeTest, MalformedAndOversizedBatchesAppendNothing) {
  TempDir dir;
  Verifier v(dir.path(), std::make_shared<HonestOpenings>(), /*rate=*/0);
  v1::SubmitResult bad = v.SubmitOne("\x0a\x03garbage");
  EXPECT_EQ(bad.code(), int(grpc::StatusCode::INVALID_ARGUMENT));
  // A commitment whose record is invalid (no layer hashes), validly signed.
  Served s = Serve(ProverKey(), "prover-1");
  v1::Commitment broken = s.commitment;
  broken.clear_layer_hashes();
  v1::Envelope env;
  env.set_payload(broken.SerializeAsString());
  env.set_payload_type(std::string(store::kCommitmentPayloadType));
  auto* sig = env.add_signatures();
  sig->set_keyid(Str(ProverKey().public_key().KeyId()));
  sig->set_sig(std::string(64, 'x'));
  v1::SubmitResult invalid = v.SubmitOne(env.SerializeAsString());
  EXPECT_EQ(invalid.code(), int(grpc::StatusCode::INVALID_ARGUMENT));
  EXPECT_NE(invalid.message().find("Commitment.layer_hashes"),
            std::string::npos)
      << invalid.message();

  v1::SubmitResponse response;
  grpc::Status too_many =
      v.Submit(std::vector<std::string>(257, s.envelope), &response);
  EXPECT_EQ(too_many.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(too_many.error_message(),
            "SubmitRequest.envelopes: got 257 envelopes, want 1..256");
  EXPECT_EQ(v.Submit({}, &response).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(v.node().log()->Size(), 0u);
}

TEST(VerifierNodeTest, LogReads) {
  TempDir dir;
  Verifier v(dir.path(), std::make_shared<HonestOpenings>(), /*rate=*/0);
  std::vector<Served> served;
  for (int i = 0; i < 3; ++i) {
    served.push_back(Serve(ProverKey(), "prover-1", {4, int32_t(5 + i)}));
    ASSERT_EQ(v.SubmitOne(served.back().envelope).code(), 0);
  }
  // Checkpoint.
  v1::GetCheckpointResponse cp;
  {
    grpc::ClientContext ctx;
    ASSERT_TRUE(v.log->GetCheckpoint(&ctx, {}, &cp).ok());
  }
  const store::Checkpoint c = v.Verify(cp.checkpoint());
  EXPECT_EQ(c.size, 3u);
  EXPECT_EQ(cp.tree_size(), 3u);
  // Inclusion by leaf hash at the latest size.
  v1::GetInclusionProofRequest ip;
  ip.set_leaf_hash(Str(store::LeafHash(served[1].envelope)));
  v1::GetInclusionProofResponse ipr;
  {
    grpc::ClientContext ctx;
    ASSERT_TRUE(v.log->GetInclusionProof(&ctx, ip, &ipr).ok());
  }
  EXPECT_EQ(ipr.inclusion().leaf_index(), 1u);
  EXPECT_EQ(ipr.inclusion().tree_size(), 3u);
  EXPECT_EQ(ipr.inclusion().checkpoint(), cp.checkpoint());
  EXPECT_TRUE(store::VerifyInclusion(store::LeafHash(served[1].envelope), 1, 3,
                                     ToProof(ipr.inclusion().inclusion_proof()),
                                     c.root)
                  .ok());
  ip.set_leaf_hash(std::string(32, '\x01'));
  {
    grpc::ClientContext ctx;
    EXPECT_EQ(v.log->GetInclusionProof(&ctx, ip, &ipr).error_code(),
              grpc::StatusCode::NOT_FOUND);
  }
  ip.set_leaf_hash("short");
  {
    grpc::ClientContext ctx;
    grpc::Status s = v.log->GetInclusionProof(&ctx, ip, &ipr);
    EXPECT_EQ(s.error_message(),
              "GetInclusionProofRequest.leaf_hash: got 5 bytes, want 32");
  }
  // Consistency from 1 to 3.
  v1::GetConsistencyProofRequest cr;
  cr.set_old_size(1);
  cr.set_new_size(3);
  v1::GetConsistencyProofResponse cpr;
  {
    grpc::ClientContext ctx;
    ASSERT_TRUE(v.log->GetConsistencyProof(&ctx, cr, &cpr).ok());
  }
  EXPECT_TRUE(store::VerifyConsistency(1, 3,
                                       store::LeafHash(served[0].envelope),
                                       c.root, ToProof(cpr.proof()))
                  .ok());
  // Entries: bounds.
  auto entries = [&](uint64_t start, uint32_t count,
                     v1::GetEntriesResponse* out) {
    v1::GetEntriesRequest r;
    r.set_start(start);
    r.set_count(count);
    grpc::ClientContext ctx;
    return v.log->GetEntries(&ctx, r, out);
  };
  v1::GetEntriesResponse er;
  ASSERT_TRUE(entries(1, 1000, &er).ok());
  ASSERT_EQ(er.entries_size(), 2);
  EXPECT_EQ(er.entries(0), served[1].envelope);
  EXPECT_EQ(entries(0, 0, &er).error_message(),
            "GetEntriesRequest.count: got 0, want 1..1000");
  EXPECT_EQ(entries(0, 1001, &er).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(entries(3, 1, &er).error_code(), grpc::StatusCode::OUT_OF_RANGE);
}

// Polls `done` until it holds or 30 s pass.
template <typename Pred>
bool Eventually(Pred done) {
  const absl::Time deadline = absl::Now() + absl::Seconds(30);
  while (!done()) {
    if (absl::Now() > deadline) return false;
    absl::SleepFor(absl::Milliseconds(2));
  }
  return true;
}

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

}  // namespace
}  // namespace layerproof::verifier
