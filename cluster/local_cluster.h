// One in-process LayerProof deployment: a verifier node and any number of
// prover nodes, each built the way `layerproof serve` builds it
// (VerifierNode::Create, ProverNode::Create) and served by rpc::StartServer
// on 127.0.0.1 with a free (or a given) port. Provers submit to the
// verifier and are registered with it once their ports are known.
// `layerproof demo` (demo/demo_cluster.h) and the integration tests
// (tests/integration/cluster.h) both stand their nodes up with it; it
// links no test framework.
//
// TLS and roles are the caller's: plaintext (Insecure()) or mutual TLS.
// The verifier may also run outside this process (set_verifier_port): the
// provers then submit there, and the cluster knows only its id and key.
// Test faults (prover/internal/prover_faults.h) reach a prover only through
// ProverSpec::options.faults, which code building a cluster in process
// sets; `layerproof serve` builds no cluster.
//
// Lifetime: the engine, models, keys and faults in the specs must outlive
// the nodes. Shutdown (also from the destructor) marks every server not
// serving, shuts the provers down (their last submissions reach the still
// running verifier), then the verifier (its running audits may still open
// from the provers), then the servers.
// Thread safety: Start*, Stop*, Shutdown and set_verifier_port on one
// thread; the accessors of started nodes from any thread.
#ifndef LAYERPROOF_CLUSTER_LOCAL_CLUSTER_H_
#define LAYERPROOF_CLUSTER_LOCAL_CLUSTER_H_

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "kernels/model/executor.h"
#include "prover/prover_node.h"
#include "rpc/server.h"
#include "rpc/tls.h"
#include "store/crypto.h"
#include "verifier/verifier_node.h"

namespace layerproof::cluster {

// Plaintext, no identities (loopback only).
rpc::TlsOptions Insecure();

struct ShutdownTimeouts {
  // How long a prover node may drain (its last submissions) and the
  // verifier node may finish its running audits.
  absl::Duration prover = absl::Seconds(30);
  absl::Duration verifier = absl::Seconds(20);
  // How long a server waits for calls in flight once its node is down.
  std::chrono::milliseconds server_grace{1000};
};

struct LocalClusterOptions {
  // Names the verifier's checkpoint key and its log ("layerproof/" + id).
  std::string verifier_id = "verifier-1";
  // Signs checkpoints and verdicts; the provers check receipts with its
  // public key. Required, even for a verifier outside this process.
  std::shared_ptr<const store::Ed25519PrivateKey> verifier_key;
  ShutdownTimeouts timeouts;
};

struct VerifierSpec {
  // As for `serve verifier`; engine and db_dir are required. The cluster
  // sets verifier_id and key (LocalClusterOptions), provers (the running
  // ones) and insecure (server_tls.insecure).
  verifier::VerifierOptions options;
  // The server side (certificate, key, client CA) and the outbound side
  // toward the provers' Opening services.
  rpc::TlsOptions server_tls = Insecure();
  rpc::TlsOptions client_tls = Insecure();
};

struct ProverSpec {
  // As for `serve prover`; prover_id, model, key and journal_dir are
  // required, and executor unless `executor` below is given. The cluster
  // sets verifier_address (unless set), verifier_tls (client_tls),
  // log_key and log_origin (the verifier's) and insecure
  // (server_tls.insecure).
  prover::ProverOptions options;
  // Owned by the prover; options.executor is set to it when given.
  std::unique_ptr<kernels::model::Executor> executor;
  rpc::TlsOptions server_tls = Insecure();
  rpc::TlsOptions client_tls = Insecure();
  // Listen on this port (a restart); 0: a free one.
  int port = 0;
  // Register the prover with the running verifier, under `registered_key`
  // when set (a key the prover does not sign with) or its own.
  bool register_with_verifier = true;
  std::optional<store::Ed25519PublicKey> registered_key;
};

struct LocalProver {
  std::string prover_id;
  std::string journal_dir;
  std::shared_ptr<const store::Ed25519PrivateKey> key;
  std::unique_ptr<kernels::model::Executor> executor;
  std::unique_ptr<prover::ProverNode> node;
  std::unique_ptr<rpc::RunningServer> server;
  ShutdownTimeouts timeouts;

  int port() const { return server ? server->port() : 0; }
  std::string address() const;
  // Shuts the node, then its server, down (a graceful restart); the
  // node's status. Idempotent.
  absl::Status Stop();
};

class LocalCluster {
 public:
  explicit LocalCluster(LocalClusterOptions options);
  ~LocalCluster();
  LocalCluster(const LocalCluster&) = delete;
  LocalCluster& operator=(const LocalCluster&) = delete;

  const std::string& verifier_id() const { return options_.verifier_id; }
  // "layerproof/" + verifier_id, as verifier_node.h names its log.
  std::string log_origin() const;
  const store::Ed25519PrivateKey& verifier_private_key() const {
    return *options_.verifier_key;
  }
  // Where the verifier listens (after StartVerifier), or where provers
  // find it when it runs outside this process.
  void set_verifier_port(int port) { verifier_port_ = port; }
  int verifier_port() const { return verifier_port_; }
  std::string verifier_address() const;

  // Starts the verifier, with every running prover registered, on
  // verifier_port() (a restart, with the same db_dir, reuses both).
  // Errors name the node.
  absl::Status StartVerifier(VerifierSpec spec);
  // The node, then its server (as `serve verifier` does); the node's
  // status.
  absl::Status StopVerifier();
  // Null unless started.
  verifier::VerifierNode* verifier() { return verifier_.get(); }
  const verifier::VerifierNode* verifier() const { return verifier_.get(); }

  // Starts a prover that submits to the verifier and, when it runs here,
  // registers it. The prover is kept (and shut down) even when its
  // registration fails. Errors name the prover.
  absl::StatusOr<LocalProver*> StartProver(ProverSpec spec);
  // In start order, stopped ones included.
  const std::vector<std::unique_ptr<LocalProver>>& provers() const {
    return provers_;
  }

  // See the header comment. The first error other than DeadlineExceeded
  // (work left pending for a next start: nothing lost), or OK. Idempotent.
  absl::Status Shutdown();

 private:
  LocalClusterOptions options_;
  std::unique_ptr<verifier::VerifierNode> verifier_;
  std::unique_ptr<rpc::RunningServer> verifier_server_;
  rpc::TlsOptions verifier_client_tls_ = Insecure();
  int verifier_port_ = 0;
  std::vector<std::unique_ptr<LocalProver>> provers_;
};

}  // namespace layerproof::cluster

#endif  // LAYERPROOF_CLUSTER_LOCAL_CLUSTER_H_
