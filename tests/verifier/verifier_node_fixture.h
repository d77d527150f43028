// The verifier node under test, served over gRPC (insecure or mTLS,
// 127.0.0.1:0), with a prover's Opening service over honest openings: what
// tests/verifier/verifier_node_submission_test.cc and
// verifier_node_audit_test.cc share. Thread safety: one Verifier per test.
#ifndef LAYERPROOF_TESTS_VERIFIER_VERIFIER_NODE_FIXTURE_H_
#define LAYERPROOF_TESTS_VERIFIER_VERIFIER_NODE_FIXTURE_H_

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
#include "rpc/server.h"
#include "store/checkpoint.h"
#include "store/envelope.h"
#include "store/merkle.h"
#include "store/rocksdb_log.h"
#include "tests/rpc/test_certs.h"
#include "tests/verifier/verifier_world.h"
#include "verifier/verifier_node.h"

namespace layerproof::verifier::node_fixture {

using testing::HonestOpenings;
using testing::Serve;
using testing::Served;
using testing::Str;
using testing::TempDir;
using testing::TheWorld;

inline const store::Ed25519PrivateKey& ProverKey() {
  static auto* key =
      new store::Ed25519PrivateKey(*store::Ed25519PrivateKey::Generate());
  return *key;
}
inline const store::Ed25519PrivateKey& StrangerKey() {
  static auto* key =
      new store::Ed25519PrivateKey(*store::Ed25519PrivateKey::Generate());
  return *key;
}

inline store::Sha256Hash ToHash(const std::string& s) {
  store::Sha256Hash h{};
  EXPECT_EQ(s.size(), h.size());
  std::copy_n(s.begin(), std::min(s.size(), h.size()), h.begin());
  return h;
}

inline std::vector<store::Sha256Hash> ToProof(
    const google::protobuf::RepeatedPtrField<std::string>& p) {
  std::vector<store::Sha256Hash> out;
  for (const std::string& h : p) out.push_back(ToHash(h));
  return out;
}

inline const store::Ed25519PrivateKey& Prover2Key() {
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
    absl::StatusOr<check::Opening> o = source_.Open(
        "", request->request_id(), layers, 0, 0, absl::InfiniteFuture());
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

inline std::unique_ptr<rpc::RunningServer> ServeOpenings(
    OpeningService& service, const std::string& listen) {
  rpc::ServerConfig config;
  config.listen = listen;
  config.tls.insecure = true;
  auto server = rpc::StartServer(config, {&service});
  EXPECT_TRUE(server.ok()) << server.status();
  return server.ok() ? std::move(*server) : nullptr;
}

// A loopback address nothing listens on (a server's, once it is gone).
inline std::string FreeAddress() {
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
  rocksdb::Env* env = nullptr;  // the node's disk (VerifierOptions.env)
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
  Verifier(const std::string& dir,
           std::shared_ptr<check::OpeningSource> openings, double rate = 1.0)
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
    o.env = setup.env;
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

}  // namespace layerproof::verifier::node_fixture

#endif  // LAYERPROOF_TESTS_VERIFIER_VERIFIER_NODE_FIXTURE_H_
