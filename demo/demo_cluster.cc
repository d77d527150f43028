#include "demo/demo_cluster.h"

#include <filesystem>
#include <utility>

#include "cli/file_io.h"
#include "demo/demo_fault.h"
#include "kernels/model/executor.h"
#include "nlohmann/json.hpp"
#include "rpc/tls.h"
#include "store/status.h"

namespace layerproof::demo {
namespace {

using cli::WriteWholeFile;

constexpr char kVerifierId[] = "verifier-1";

absl::StatusOr<std::shared_ptr<const store::Ed25519PrivateKey>> NewKey(
    const std::string& prefix) {
  LP_ASSIGN_OR_RETURN(store::Ed25519PrivateKey key,
                      store::Ed25519PrivateKey::Generate());
  LP_RETURN_IF_ERROR(store::WriteKeyPair(key, prefix));
  return std::make_shared<const store::Ed25519PrivateKey>(std::move(key));
}

}  // namespace

absl::StatusOr<std::unique_ptr<DemoCluster>> DemoCluster::Start(
    const DemoClusterOptions& options) {
  if (options.model == nullptr || options.verifier_engine == nullptr ||
      options.backend == nullptr) {
    return absl::InvalidArgumentError(
        "DemoClusterOptions: model, verifier_engine and backend are required");
  }
  std::unique_ptr<DemoCluster> c(new DemoCluster());
  c->options_ = options;
  std::error_code ec;
  std::filesystem::create_directories(options.out_dir + "/keys", ec);
  if (ec) {
    return absl::PermissionDeniedError("cannot create " + options.out_dir +
                                       "/keys: " + ec.message());
  }
  DemoPkiOptions pki;
  pki.client_names = {"prover-1", "prover-2", kVerifierId, kAuditor, kClient};
  LP_ASSIGN_OR_RETURN(DemoPki made,
                      DemoPki::Create(options.out_dir + "/tls", pki));
  c->pki_ = std::make_unique<DemoPki>(std::move(made));
  // As docs/security.md: provers submit, the verifier and the auditor
  // open and audit; client-1 generates (and reads, as anyone may).
  c->roles_.Grant("prover-1", rpc::Role::kProver);
  c->roles_.Grant("prover-2", rpc::Role::kProver);
  c->roles_.Grant(kVerifierId, rpc::Role::kAuditor);
  c->roles_.Grant(kAuditor, rpc::Role::kAuditor);
  c->roles_.Grant(kClient, rpc::Role::kClient);
  const auto step = [&](int done, const std::string& what) {
    if (options.progress) options.progress(done, 4, what);
  };
  step(1, "certificates");
  LP_RETURN_IF_ERROR(c->StartVerifier());
  step(2, "verifier-1");
  LP_RETURN_IF_ERROR(c->StartProver("prover-1"));
  step(3, "prover-1");
  LP_RETURN_IF_ERROR(c->StartProver(kTamperer));
  step(4, kTamperer);
  LP_RETURN_IF_ERROR(c->WriteConfigFiles());
  return c;
}

DemoCluster::~DemoCluster() { (void)Shutdown(); }

std::string DemoCluster::PublicKeyFile(const std::string& name) const {
  return options_.out_dir + "/keys/" + name + ".pub";
}

absl::StatusOr<std::shared_ptr<grpc::Channel>> DemoCluster::Channel(
    const std::string& address, const std::string& who) const {
  return rpc::MakeChannel(address, pki_->Client(who));
}

absl::Status DemoCluster::StartVerifier() {
  cluster::LocalClusterOptions nodes;
  nodes.verifier_id = kVerifierId;
  LP_ASSIGN_OR_RETURN(nodes.verifier_key,
                      NewKey(options_.out_dir + "/keys/verifier"));
  nodes_ = std::make_unique<cluster::LocalCluster>(std::move(nodes));
  cluster::VerifierSpec spec;
  verifier::VerifierOptions& v = spec.options;
  v.engine = options_.verifier_engine;
  v.db_dir = options_.out_dir + "/verifier-db";
  v.policy = options_.policy;
  if (!options_.audit_seed.empty()) {
    v.audit_seeds = verifier::SeededAuditSeeds(options_.audit_seed);
  }
  v.audit_threads = options_.audit_threads;
  v.opening_timeout = absl::Seconds(30);
  v.roles = roles_;
  spec.server_tls = pki_->Server(/*mtls=*/true);
  spec.client_tls = pki_->Client(kVerifierId);
  return nodes_->StartVerifier(std::move(spec));
}

absl::Status DemoCluster::StartProver(const std::string& id) {
  cluster::ProverSpec spec;
  prover::ProverOptions& o = spec.options;
  o.prover_id = id;
  o.model = options_.model;
  LP_ASSIGN_OR_RETURN(o.key, NewKey(options_.out_dir + "/keys/" + id));
  auto executor = kernels::model::MakeExecutor(options_.backend);
  if (!executor.ok()) return store::ToAbslStatus(executor.status());
  spec.executor = *std::move(executor);
  o.journal_dir = options_.out_dir + "/" + id + "-journal";
  o.max_new_tokens = options_.max_new_tokens;
  o.roles = roles_;
  // DEMO-ONLY (demo/demo_fault.h): `serve prover` never sets this.
  if (id == kTamperer) o.faults = NewDemoLayerTamper(options_.tamper_layer);
  spec.server_tls = pki_->Server(/*mtls=*/true);
  spec.client_tls = pki_->Client(id);
  return nodes_->StartProver(std::move(spec)).status();
}

// roles.json and provers.json, as `layerproof serve` takes them, so that
// the same nodes can be run as processes with the files in OUT.
absl::Status DemoCluster::WriteConfigFiles() const {
  nlohmann::json roles = {{"prover-1", {"prover"}},
                          {"prover-2", {"prover"}},
                          {kVerifierId, {"auditor"}},
                          {kAuditor, {"auditor"}},
                          {kClient, {"client"}}};
  LP_RETURN_IF_ERROR(
      WriteWholeFile(options_.out_dir + "/roles.json", roles.dump(2) + "\n"));
  nlohmann::json provers = nlohmann::json::array();
  for (const auto& p : nodes_->provers()) {
    provers.push_back({{"id", p->prover_id},
                       {"public_key_file", "keys/" + p->prover_id + ".pub"},
                       {"opening_address", p->address()}});
  }
  return WriteWholeFile(options_.out_dir + "/provers.json",
                        nlohmann::json{{"provers", provers}}.dump(2) + "\n");
}

absl::Status DemoCluster::Shutdown() {
  return nodes_ ? nodes_->Shutdown() : absl::OkStatus();
}

}  // namespace layerproof::demo
