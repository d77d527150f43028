// The verifier node served over gRPC (insecure or mTLS, 127.0.0.1:0):
// Log.Submit's admission rules and proofs, refusals and whom they are
// charged to, the log reads, audits drawn after logging with an injected
// honest opening source or over gRPC from a prover that is down at first
// (PASS verdicts, evidence whose proofs verify, and its size limit),
// RequestAudit, the engine the node accepts, and restarts that resume
// pending audits.
#include "verifier/verifier_node.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "layerproof/v1/audit.grpc.pb.h"
#include "layerproof/v1/log.grpc.pb.h"
#include "layerproof/v1/opening.grpc.pb.h"
#include "store/checkpoint.h"
#include "store/envelope.h"
#include "store/merkle.h"
#include "store/rocksdb_log.h"
#include "rpc/server.h"
#include "tests/rpc/test_certs.h"
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

const store::Ed25519PrivateKey& Prover2Key() {
  static auto* key =
      new store::Ed25519PrivateKey(*store::Ed25519PrivateKey::Generate());
  return *key;
}

// A prover's Opening service over an OpeningSource (HonestOpenings): the
// header, then each layer's rows in chunks of 3 rows.
class OpeningService : public v1::Opening::CallbackService {
 public:
  explicit OpeningService(check::OpeningSource& source) : source_(source) {}

  grpc::ServerWriteReactor<v1::OpenChunk>* Open(
      grpc::CallbackServerContext*, const v1::OpenRequest* request) override {
    ++calls_;
    std::vector<uint32_t> layers(request->layers().begin(),
                                 request->layers().end());
    absl::StatusOr<check::Opening> o = source_.Open("", request->request_id(), layers,
                                             0, 0, absl::InfiniteFuture());
    auto* writer = new Writer();
    if (!o.ok()) {
      writer->status =
          grpc::Status(grpc::StatusCode::NOT_FOUND, "not journaled");
    } else {
      writer->chunks.emplace_back();
      *writer->chunks.back().mutable_header() = o->header;
      const size_t row = o->header.hidden_size();
      for (const auto& [layer, rows] : o->layers) {
        for (size_t p = 0; p < o->header.positions(); p += 3) {
          const size_t n = std::min<size_t>(3, o->header.positions() - p);
          v1::OpenChunk c;
          c.mutable_rows()->set_layer(layer);
          c.mutable_rows()->set_position0(p);
          c.mutable_rows()->set_data(
              reinterpret_cast<const char*>(rows.data() + p * row),
              n * row * sizeof(float));
          writer->chunks.push_back(std::move(c));
        }
      }
    }
    writer->Next();
    return writer;
  }
  int calls() const { return calls_; }

 private:
  // Lifetime: from Open until OnDone, which deletes it.
  struct Writer : grpc::ServerWriteReactor<v1::OpenChunk> {
    void Next() {
      if (next < chunks.size()) {
        StartWrite(&chunks[next++]);
      } else {
        Finish(status);
      }
    }
    void OnWriteDone(bool ok) override {
      if (ok) {
        Next();
      } else {
        Finish(grpc::Status(grpc::StatusCode::CANCELLED, "write failed"));
      }
    }
    void OnDone() override { delete this; }
    std::vector<v1::OpenChunk> chunks;
    size_t next = 0;
    grpc::Status status;
  };

  check::OpeningSource& source_;
  std::atomic<int> calls_{0};
};

std::unique_ptr<rpc::RunningServer> ServeOpenings(OpeningService& service,
                                                  const std::string& listen) {
  rpc::ServerConfig config;
  config.listen = listen;
  config.tls.insecure = true;
  auto server = rpc::StartServer(config, {&service});
  EXPECT_TRUE(server.ok()) << server.status();
  return server.ok() ? std::move(*server) : nullptr;
}

// A loopback address nothing listens on (a server's, once it is gone).
std::string FreeAddress() {
  HonestOpenings none;
  OpeningService service(none);
  std::unique_ptr<rpc::RunningServer> s = ServeOpenings(service, "127.0.0.1:0");
  const std::string address = "127.0.0.1:" + std::to_string(s->port());
  s->Shutdown(std::chrono::milliseconds(0));
  return address;
}

// How a test's verifier node is set up.
struct NodeSetup {
  // Null: the node's own gRPC opening client, to each prover's
  // opening_address.
  std::shared_ptr<check::OpeningSource> openings;
  double rate = 1.0;
  // mTLS (tests/rpc/test_certs.h) with roles prover-1 and prover-2 as
  // provers and auditor-1 as auditor; the stubs present `client_cn`'s
  // certificate. Otherwise insecure.
  bool mtls = false;
  std::string client_cn = "prover-1";
  // prover-1's Opening service ("": none registered).
  std::string opening_address{};
  size_t max_evidence_bytes = 0;  // 0: the default
  // Closing (audit_scheduler.h): attempts, retries, prover-1's retention.
  uint32_t max_audit_attempts = 5;
  absl::Duration retry_interval = absl::Seconds(30);
  absl::Duration prover_retention = absl::Hours(24 * 7);
  size_t max_submission_bytes_in_flight = 0;  // 0: the default
  size_t max_queued_audits = 0;               // 0: the default
};

template <typename Pred>
bool Eventually(Pred done) {
  const absl::Time deadline = absl::Now() + absl::Seconds(30);
  while (!done()) {
    if (absl::Now() > deadline) return false;
    absl::SleepFor(absl::Milliseconds(2));
  }
  return true;
}

// A running verifier node and stubs for its services.
class Verifier {
 public:
  Verifier(const std::string& dir, std::shared_ptr<check::OpeningSource> openings,
           double rate = 1.0)
      : Verifier(dir,
                 NodeSetup{.openings = std::move(openings), .rate = rate}) {}

  Verifier(const std::string& dir, NodeSetup setup) {
    VerifierOptions o;
    o.verifier_id = "verifier-test";
    o.engine = TheWorld().engine.get();
    o.key = Key();
    o.db_dir = dir;
    rpc::TlsOptions opening_tls;
    opening_tls.insecure = true;
    o.provers.push_back({"prover-1", ProverKey().public_key(),
                         setup.opening_address, opening_tls,
                         setup.prover_retention});
    o.max_audit_attempts = setup.max_audit_attempts;
    if (setup.max_submission_bytes_in_flight != 0) {
      o.max_leaf_bytes = setup.max_submission_bytes_in_flight;
      o.max_submission_bytes_in_flight = setup.max_submission_bytes_in_flight;
    }
    if (setup.max_queued_audits != 0) {
      o.max_queued_audits = setup.max_queued_audits;
    }
    o.audit_retry_interval = setup.retry_interval;
    o.provers.push_back({"prover-2", Prover2Key().public_key(), "", {}});
    o.policy.rate = setup.rate;
    o.policy.layers_per_audit = 1;
    o.audit_threads = 2;
    o.submit_threads = 4;
    o.opening_timeout = absl::Seconds(20);
    if (setup.max_evidence_bytes != 0) {
      o.max_evidence_bytes = setup.max_evidence_bytes;
    }
    o.insecure = !setup.mtls;
    o.roles.Grant("prover-1", rpc::Role::kProver);
    o.roles.Grant("prover-2", rpc::Role::kProver);
    o.roles.Grant("auditor-1", rpc::Role::kAuditor);
    o.opening_source = std::move(setup.openings);
    auto node = VerifierNode::Create(std::move(o));
    EXPECT_TRUE(node.ok()) << node.status();
    node_ = std::move(*node);
    rpc::ServerConfig config;
    config.tls.insecure = true;
    if (setup.mtls) config.tls = rpc::fixture::TestCerts::Get().Server(true);
    auto server = rpc::StartServer(config, node_->services());
    EXPECT_TRUE(server.ok()) << server.status();
    server_ = std::move(*server);
    const std::string address = "127.0.0.1:" + std::to_string(server_->port());
    std::shared_ptr<grpc::Channel> channel =
        grpc::CreateChannel(address, grpc::InsecureChannelCredentials());
    if (setup.mtls) {
      auto tls_channel = rpc::MakeChannel(
          address, rpc::fixture::TestCerts::Get().Client(setup.client_cn));
      EXPECT_TRUE(tls_channel.ok()) << tls_channel.status();
      channel = *tls_channel;
    }
    log = v1::Log::NewStub(channel);
    audit = v1::Audit::NewStub(channel);
  }
  ~Verifier() { Stop(absl::Seconds(5)).IgnoreError(); }

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

  // The verdicts ListVerdicts attributes to `prover_id`.
  std::vector<v1::Verdict> ListOf(const std::string& prover_id) {
    v1::ListVerdictsRequest r;
    r.set_prover_id(prover_id);
    v1::ListVerdictsResponse out;
    grpc::ClientContext ctx;
    grpc::Status s = audit->ListVerdicts(&ctx, r, &out);
    EXPECT_TRUE(s.ok()) << s.error_message();
    std::vector<v1::Verdict> verdicts;
    for (const v1::VerdictRecord& v : out.verdicts()) {
      verdicts.push_back(OpenVerdict(v.verdict_envelope()));
    }
    return verdicts;
  }

  VerifierNode& node() { return *node_; }
  int port() const { return server_->port(); }
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

// Regression (issue 13, item 7): submissions never refused, each task
// holding the whole (up to 16 MiB) batch. Envelope bytes in flight are
// bounded; a batch past the bound is refused whole, nothing appended.
TEST(VerifierNodeTest, SubmissionsPastTheInFlightBoundAreRefused) {
  TempDir dir;
  std::vector<std::string> envelopes;
  size_t bytes = 0;
  for (int i = 0; i < 6; ++i) {
    envelopes.push_back(
        Serve(ProverKey(), "prover-1", {1, 2, int32_t(3 + i)}).envelope);
    bytes += envelopes.back().size();
  }
  NodeSetup setup;
  setup.openings = std::make_shared<HonestOpenings>();
  setup.rate = 0;
  setup.max_submission_bytes_in_flight = bytes - 1;
  Verifier v(dir.path(), setup);
  v1::SubmitResponse response;
  const grpc::Status refused = v.Submit(envelopes, &response);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_NE(refused.error_message().find("max_submission_bytes_in_flight"),
            std::string::npos)
      << refused.error_message();
  EXPECT_EQ(v.node().log()->Size(), 0u);
  // Within the bound (and after the refusal released nothing it held).
  envelopes.pop_back();
  ASSERT_TRUE(v.Submit(envelopes, &response).ok());
  EXPECT_EQ(response.results_size(), 5);
  EXPECT_EQ(v.node().log()->Size(), 5u);
  ASSERT_TRUE(v.Submit(envelopes, &response).ok());  // released again
}

// Regression (issue 13, item 7): the audit queue never refused. On-demand
// audits past max_queued_audits are RESOURCE_EXHAUSTED; drawn ones stay
// pending in the store and are queued by a later pass.
TEST(VerifierNodeTest, AuditsPastTheQueueBoundWaitOrAreRefused) {
  TempDir dir;
  Served s = Serve(ProverKey(), "prover-1");
  auto held = std::make_shared<HonestOpenings>();
  held->Add(s);
  held->Hold();  // the first audit blocks a worker in its opening
  NodeSetup setup;
  setup.openings = held;
  setup.max_queued_audits = 1;
  Verifier v(dir.path(), setup);
  ASSERT_EQ(v.SubmitOne(s.envelope).code(), 0);
  ASSERT_TRUE(Eventually([&] { return held->opens() == 1; }));
  v1::RequestAuditRequest request;
  request.set_request_id(s.request_id);
  v1::RequestAuditResponse response;
  // The second worker takes the first on-demand audit (it blocks too) ...
  std::thread first([&] {
    v1::RequestAuditResponse r;
    EXPECT_TRUE(v.RequestAudit(request, &r).ok());
  });
  ASSERT_TRUE(Eventually([&] { return held->opens() == 2; }));
  // ... the next one waits in the queue ...
  std::thread second([&] {
    v1::RequestAuditResponse r;
    EXPECT_TRUE(v.RequestAudit(request, &r).ok());
  });
  ASSERT_TRUE(
      Eventually([&] { return v.node().counters().audits_queued == 1; }));
  // ... and one more is refused.
  const grpc::Status refused = v.RequestAudit(request, &response);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED)
      << refused.error_message();
  held->Release();
  first.join();
  second.join();
  ASSERT_TRUE(v.node().WaitIdle(absl::Seconds(60)).ok());
  v1::GetVerdictResponse verdicts;
  ASSERT_TRUE(v.GetVerdict(s.request_id, &verdicts).ok());
  EXPECT_EQ(verdicts.verdicts_size(), 3);
}

// Regression: anyone (here an anonymous client of an --insecure verifier)
// could have signed FAIL_SIGNATURE verdicts logged "for" any prover. An
// unauthenticated submission with a bad signature is only refused.
TEST(VerifierNodeTest, AnonymousBadSignatureIsRefusedWithoutAVerdict) {
  TempDir dir;
  Verifier v(dir.path(), std::make_shared<HonestOpenings>(), /*rate=*/0);
  Served s = Serve(StrangerKey(), "prover-1");
  v1::SubmitResult r = v.SubmitOne(s.envelope);
  EXPECT_EQ(r.code(), int(grpc::StatusCode::PERMISSION_DENIED)) << r.message();
  Served forged = Serve(ProverKey(), "prover-1");
  v1::Envelope e;
  ASSERT_TRUE(e.ParseFromString(forged.envelope));
  e.mutable_signatures(0)->mutable_sig()->at(5) ^= 0x10;
  EXPECT_EQ(v.SubmitOne(e.SerializeAsString()).code(),
            int(grpc::StatusCode::INVALID_ARGUMENT));
  EXPECT_EQ(v.node().log()->Size(), 0u);
  v1::GetVerdictResponse verdicts;
  EXPECT_EQ(v.GetVerdict(s.request_id, &verdicts).error_code(),
            grpc::StatusCode::NOT_FOUND);
}

// Regression: a refusal verdict was credited to the refused envelope's
// unverified prover_id. It is charged to the authenticated submitter.
TEST(VerifierNodeTest, RefusalVerdictIsChargedToTheAuthenticatedSubmitter) {
  TempDir dir;
  NodeSetup setup{.openings = std::make_shared<HonestOpenings>(), .rate = 0};
  setup.mtls = true;
  Verifier v(dir.path(), setup);
  // prover-1 submits an envelope signed by a foreign key that claims to be
  // prover-2's.
  Served s = Serve(StrangerKey(), "prover-2");
  v1::SubmitResult r = v.SubmitOne(s.envelope);
  EXPECT_EQ(r.code(), int(grpc::StatusCode::PERMISSION_DENIED)) << r.message();
  // Again: refused, and its verdict is in the log once.
  EXPECT_EQ(v.SubmitOne(s.envelope).code(),
            int(grpc::StatusCode::PERMISSION_DENIED));
  ASSERT_EQ(v.node().log()->Size(), 1u);
  v1::GetVerdictResponse verdicts;
  ASSERT_TRUE(v.GetVerdict(s.request_id, &verdicts).ok());
  ASSERT_EQ(verdicts.verdicts_size(), 1);
  const v1::Verdict verdict =
      v.OpenVerdict(verdicts.verdicts(0).verdict_envelope());
  EXPECT_EQ(verdict.outcome(), v1::FAIL_SIGNATURE);
  EXPECT_EQ(verdict.refused_submitter(), "prover-1");
  EXPECT_FALSE(verdict.has_commitment_leaf_index());
  EXPECT_EQ(verdict.commitment_leaf_hash(), Str(store::LeafHash(s.envelope)));
  // Listed under the submitter, not under the prover the envelope names.
  EXPECT_EQ(v.ListOf("prover-1").size(), 1u);
  EXPECT_TRUE(v.ListOf("prover-2").empty());
  // The refused envelope is kept for evidence (auditor role).
  auto auditor =
      rpc::MakeChannel("127.0.0.1:" + std::to_string(v.port()),
                       rpc::fixture::TestCerts::Get().Client("auditor-1"));
  ASSERT_TRUE(auditor.ok()) << auditor.status();
  v1::GetEvidenceRequest ereq;
  ereq.set_request_id(s.request_id);
  v1::EvidenceBundle bundle;
  grpc::ClientContext ctx;
  grpc::Status got =
      v1::Audit::NewStub(*auditor)->GetEvidence(&ctx, ereq, &bundle);
  ASSERT_TRUE(got.ok()) << got.error_message();
  EXPECT_EQ(bundle.commitment_envelope(), s.envelope);
  EXPECT_FALSE(bundle.has_commitment_inclusion());
  EXPECT_EQ(bundle.verdict_inclusion().leaf_index(), 0u);
}

// Regression: a compromised prover certificate could flood the log with
// signed refusals. At most one per second per submitter is logged.
TEST(VerifierNodeTest, RefusalVerdictsAreRateLimitedPerSubmitter) {
  TempDir dir;
  NodeSetup setup{.openings = std::make_shared<HonestOpenings>(), .rate = 0};
  setup.mtls = true;
  Verifier v(dir.path(), setup);
  std::vector<std::string> forged;
  for (int i = 0; i < 4; ++i) {
    forged.push_back(
        Serve(StrangerKey(), "prover-1", {3, int32_t(10 + i)}).envelope);
  }
  v1::SubmitResponse response;
  ASSERT_TRUE(v.Submit(forged, &response).ok());
  ASSERT_EQ(response.results_size(), 4);
  for (const v1::SubmitResult& r : response.results()) {
    EXPECT_EQ(r.code(), int(grpc::StatusCode::PERMISSION_DENIED))
        << r.message();
  }
  EXPECT_EQ(v.node().log()->Size(), 1u);
  EXPECT_EQ(v.ListOf("prover-1").size(), 1u);
}

TEST(VerifierNodeTest, SubmitterMayOnlySubmitItsOwnCommitments) {
  TempDir dir;
  NodeSetup setup{.openings = std::make_shared<HonestOpenings>(), .rate = 0};
  setup.mtls = true;
  setup.client_cn = "prover-2";
  Verifier v(dir.path(), setup);
  // prover-1's own, validly signed commitment, submitted by prover-2.
  v1::SubmitResult r = v.SubmitOne(Serve(ProverKey(), "prover-1").envelope);
  EXPECT_EQ(r.code(), int(grpc::StatusCode::PERMISSION_DENIED));
  EXPECT_EQ(r.message(),
            "Commitment.prover_id: got \"prover-1\", but the submitter's "
            "client certificate CN is \"prover-2\" (a prover submits only "
            "its own commitments)");
  EXPECT_EQ(v.node().log()->Size(), 0u);
  // Its own is logged.
  EXPECT_EQ(v.SubmitOne(Serve(Prover2Key(), "prover-2").envelope).code(), 0);
  EXPECT_EQ(v.node().log()->Size(), 1u);
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
  absl::SleepFor(absl::Milliseconds(300));
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
    EXPECT_NE(log.find("without an check::Opening address"), std::string::npos) << log;
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
