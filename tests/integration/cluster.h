// The integration tests' face of the in-process deployment
// (cluster/local_cluster.h): the `tiny` synthetic model, a verifier node and
// any number of prover nodes on 127.0.0.1, with the tests' defaults
// (plaintext, every commitment audited) and gtest assertions, plus clients
// that check what a real client would: receipts, token digests, inclusion
// and consistency proofs, and the verifier's verdicts.
//
// Provers may be built with test-only faults (prover/internal/
// prover_faults.h) or another model; everything else is the production
// code path. Thread safety: Cluster's setup methods run on the test
// thread; Generate and the stubs may be called from client threads.
#ifndef LAYERPROOF_TESTS_INTEGRATION_CLUSTER_H_
#define LAYERPROOF_TESTS_INTEGRATION_CLUSTER_H_

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "check/receipt.h"
#include "cluster/local_cluster.h"
#include "kernels/dispatch.h"
#include "kernels/model/engine.h"
#include "kernels/model/executor.h"
#include "kernels/model/model.h"
#include "layerproof/v1/audit.grpc.pb.h"
#include "layerproof/v1/inference.grpc.pb.h"
#include "layerproof/v1/log.grpc.pb.h"
#include "layerproof/v1/opening.grpc.pb.h"
#include "prover/internal/prover_faults.h"
#include "prover/prover_node.h"
#include "rpc/roles.h"
#include "rpc/server.h"
#include "rpc/tls.h"
#include "store/crypto.h"
#include "verifier/audit_policy.h"
#include "verifier/auditor_worker.h"
#include "verifier/verifier_node.h"

namespace layerproof::integration {

// Plaintext: the default of every node and client here.
using cluster::Insecure;

// A synthetic model directory, removed with the object.
struct ModelDir {
  ModelDir(const std::string& preset, uint64_t seed);
  ~ModelDir();
  std::filesystem::path dir;
  std::unique_ptr<kernels::model::Model> model;
};

struct VerifierSetup {
  verifier::AuditPolicy policy{1.0, 1};
  absl::Duration opening_timeout = absl::Seconds(10);
  int audit_threads = 2;
  // TLS: the server side (cert, key, client CA), the outbound side toward
  // provers, and the roles; insecure by default.
  rpc::TlsOptions server_tls = Insecure();
  rpc::TlsOptions client_tls = Insecure();
  rpc::RoleMap roles{};
  rpc::PeerLimits peer_limits{};
  uint64_t max_refusals_per_submitter = 1000;
  // Audits re-executed by auditor workers that lease them (AuditWork).
  bool remote_auditors = false;
  absl::Duration audit_lease = absl::Seconds(60);
};

struct ProverSetup {
  std::string prover_id = "prover-1";
  // Serve this model instead of the cluster's (model substitution).
  const kernels::model::Model* model = nullptr;
  std::shared_ptr<prover::ProverFaults> faults{};
  // Sign with a key the verifier does not know.
  bool foreign_key = false;
  // Do not register the prover with the verifier.
  bool register_with_verifier = true;
  // Reuse this journal dir and port (a restart); empty / 0: fresh.
  std::string journal_dir{};
  int port = 0;
  absl::Duration receipt_wait = absl::Milliseconds(3000);
  absl::Duration promise_window = absl::Hours(24);
  rpc::TlsOptions server_tls = Insecure();
  rpc::TlsOptions client_tls = Insecure();
  rpc::RoleMap roles{};
  size_t max_waiting_requests = 1024;
  rpc::PeerLimits peer_limits{};
};

// Stop() shuts the node, then its server, down (a graceful restart).
using RunningProver = cluster::LocalProver;

// What a client keeps of one request.
struct ClientResult {
  v1::GenerateResponse response;
  v1::Commitment commitment;  // parsed from the response's envelope
  bool promised = false;      // the receipt is a promise, not an inclusion
};

class Cluster {
 public:
  // Builds the tiny model (seed 1) and the verifier's key; starts nothing.
  Cluster();
  ~Cluster();

  const kernels::model::Model& model() const { return *model_.model; }
  std::string model_dir() const { return model_.dir.string(); }
  const std::string& root() const { return root_; }
  // The verifier's key (to run it out of process with the same key).
  const store::Ed25519PrivateKey& verifier_private_key() const {
    return *verifier_key_;
  }
  // Where provers find the verifier when it runs outside this process.
  void set_verifier_port(int port) { nodes_.set_verifier_port(port); }
  // The TLS of the cluster's own queries (Verdicts, LatestCheckpoint).
  void set_query_tls(const rpc::TlsOptions& tls) { query_tls_ = tls; }

  // Starts (or, with the same db dir, restarts) the verifier.
  void StartVerifier(const VerifierSetup& setup = {});
  void StopVerifier();
  verifier::VerifierNode& verifier() { return *nodes_.verifier(); }
  std::string verifier_address() const;
  const store::Ed25519PublicKey& verifier_key() const;

  // Starts an in-process auditor worker (insecure, polling every 20 ms)
  // that leases the verifier's audits when it runs with remote_auditors;
  // it re-executes with the verifier's engine. Null (and a test failure)
  // when it cannot start.
  std::unique_ptr<verifier::AuditorWorker> StartAuditorWorker(
      const std::string& id, int concurrency);

  // Starts a prover that submits to the verifier and registers it there.
  RunningProver& StartProver(const ProverSetup& setup = {});

  // Stubs over insecure channels (or `tls`).
  std::unique_ptr<v1::Inference::Stub> InferenceStub(
      const RunningProver& p, const rpc::TlsOptions& tls = Insecure());
  std::unique_ptr<v1::Opening::Stub> OpeningStub(
      const RunningProver& p, const rpc::TlsOptions& tls = Insecure());
  std::unique_ptr<v1::Log::Stub> LogStub(
      const rpc::TlsOptions& tls = Insecure());
  std::unique_ptr<v1::Audit::Stub> AuditStub(
      const rpc::TlsOptions& tls = Insecure());

  // One Generate call with `prompt` ids; checks the response as every
  // client does (check::CheckReceipt, with the started provers' keys and
  // the verifier's log key) and returns it.
  absl::StatusOr<ClientResult> Generate(v1::Inference::Stub& stub,
                                        const std::vector<int32_t>& prompt,
                                        uint32_t max_tokens,
                                        const v1::SamplingParams& sampling,
                                        const std::string& nonce = "");

  // check::CheckReceipt of `response` against `request`, trusting the
  // started provers' keys and the verifier's log key.
  absl::StatusOr<check::CheckedReceipt> CheckReceipt(
      const v1::GenerateRequest& request, const v1::GenerateResponse& response);

  // All verdicts on `request_id`, parsed.
  std::vector<v1::Verdict> Verdicts(const std::string& request_id);
  // Polls until `request_id` has at least one verdict (or the timeout).
  std::vector<v1::Verdict> WaitForVerdicts(const std::string& request_id,
                                           absl::Duration timeout);

  // The verifier's latest checkpoint, verified with its key.
  store::Checkpoint LatestCheckpoint();

 private:
  std::string root_;
  ModelDir model_;
  std::unique_ptr<kernels::model::Executor> verifier_executor_;
  std::unique_ptr<kernels::model::Engine> verifier_engine_;
  std::shared_ptr<const store::Ed25519PrivateKey> verifier_key_;
  // Last: its nodes go before the engine and the model they use.
  cluster::LocalCluster nodes_;
  int next_journal_ = 0;
  rpc::TlsOptions query_tls_ = Insecure();
};

// Polls until the verifier has logged `n` audit verdicts since its start
// and is idle; false at the deadline.
bool WaitForAudits(Cluster& cluster, uint64_t n, absl::Duration timeout);

// Random prompts of 2..max_len ids < vocab, deterministic in `seed`.
std::vector<int32_t> RandomPrompt(uint64_t seed, int32_t vocab, int max_len);

}  // namespace layerproof::integration

#endif  // LAYERPROOF_TESTS_INTEGRATION_CLUSTER_H_
