// The nodes of `layerproof demo`, in this process on 127.0.0.1 with free
// ports, over mutual TLS with roles (docs/security.md): a verifier with its
// embedded RocksDB in OUT/verifier-db, an honest prover `prover-1`, and
// `prover-2`, which carries the DEMO-ONLY fault of demo/demo_fault.h. The
// nodes are the in-process deployment of cluster/local_cluster.h (built and
// served the way `layerproof serve` does it; the provers registered with
// the verifier once their ports are known); this adds the demo's keys,
// certificates, roles and files.
//
// Material written into the output folder: keys/NAME.key|.pub (Ed25519:
// verifier, prover-1, prover-2), tls/ (the demo CA, the server certificate
// and client certificates prover-1, prover-2, verifier-1, auditor-1,
// client-1; demo/demo_pki.h), roles.json and provers.json (the same
// files `serve` takes).
//
// Lifetime: the Model and Engine passed in must outlive the cluster.
// Shutdown (also from the destructor) is LocalCluster::Shutdown: the
// provers, then the verifier, then the servers. Thread safety: the
// accessors and Channel may be called from any thread; Start and Shutdown
// from one.
#ifndef LAYERPROOF_DEMO_DEMO_CLUSTER_H_
#define LAYERPROOF_DEMO_DEMO_CLUSTER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "cluster/local_cluster.h"
#include "demo/demo_pki.h"
#include "grpcpp/channel.h"
#include "kernels/dispatch.h"
#include "kernels/model/engine.h"
#include "kernels/model/model.h"
#include "rpc/roles.h"
#include "verifier/audit_policy.h"
#include "verifier/verifier_node.h"

namespace layerproof::demo {

struct DemoClusterOptions {
  std::string out_dir;
  // Not owned. The provers serve `model`; the verifier audits on `engine`
  // (built over the same model with the full context).
  const kernels::model::Model* model = nullptr;
  const kernels::model::Engine* verifier_engine = nullptr;
  // The backend the provers' executors run on.
  kernels::Backend* backend = nullptr;
  verifier::AuditPolicy policy;
  // Non-empty: the key of reproducible audit draws (DemoConfig::audit_seed).
  std::string audit_seed;
  int audit_threads = 2;
  // The block whose output prover-2 tampers with (demo/demo_fault.h).
  uint32_t tamper_layer = 3;
  // Largest GenerateRequest.max_tokens the provers accept.
  uint32_t max_new_tokens = 256;
  // Called after each start-up step (certificates, each node) with the
  // steps done of 4 and what was done; may be empty.
  std::function<void(int done, int total, const std::string& step)> progress;
};

class DemoCluster {
 public:
  // Writes the keys and TLS material, starts the verifier and the provers
  // and registers the provers. Errors name the node or file.
  static absl::StatusOr<std::unique_ptr<DemoCluster>> Start(
      const DemoClusterOptions& options);
  ~DemoCluster();
  DemoCluster(const DemoCluster&) = delete;
  DemoCluster& operator=(const DemoCluster&) = delete;

  // The client certificates of the demo: its auditor and its load.
  static constexpr char kAuditor[] = "auditor-1";
  static constexpr char kClient[] = "client-1";
  // The prover that carries the DEMO-ONLY fault.
  static constexpr char kTamperer[] = "prover-2";

  const DemoPki& pki() const { return *pki_; }
  verifier::VerifierNode& verifier() { return *nodes_->verifier(); }
  int verifier_port() const { return nodes_->verifier_port(); }
  std::string verifier_address() const { return nodes_->verifier_address(); }
  // prover-1 (honest) then prover-2 (tampering).
  const std::vector<std::unique_ptr<cluster::LocalProver>>& provers() const {
    return nodes_->provers();
  }
  static bool Tampers(const cluster::LocalProver& p) {
    return p.prover_id == kTamperer;
  }
  // A TLS channel to `address` presenting the client certificate `who`.
  absl::StatusOr<std::shared_ptr<grpc::Channel>> Channel(
      const std::string& address, const std::string& who) const;
  // Path of the Ed25519 public key of `name` (verifier, prover-1, ...).
  std::string PublicKeyFile(const std::string& name) const;

  // See the header comment. Idempotent; the first error, or OK.
  absl::Status Shutdown();

 private:
  DemoCluster() = default;
  absl::Status StartVerifier();
  absl::Status StartProver(const std::string& id);
  absl::Status WriteConfigFiles() const;

  DemoClusterOptions options_;
  std::unique_ptr<DemoPki> pki_;
  rpc::RoleMap roles_;
  std::unique_ptr<cluster::LocalCluster> nodes_;
};

}  // namespace layerproof::demo

#endif  // LAYERPROOF_DEMO_DEMO_CLUSTER_H_
