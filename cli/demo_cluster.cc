#include "cli/demo_cluster.h"

#include <chrono>
#include <filesystem>
#include <utility>

#include "cli/demo_fault.h"
#include "cli/file_io.h"
#include "nlohmann/json.hpp"
#include "rpc/tls.h"
#include "store/status.h"

namespace layerproof::cli {
namespace {

constexpr char kVerifierId[] = "verifier-1";

absl::StatusOr<std::shared_ptr<const store::Ed25519PrivateKey>> NewKey(
    const std::string& prefix) {
  LP_ASSIGN_OR_RETURN(store::Ed25519PrivateKey key,
                      store::Ed25519PrivateKey::Generate());
  LP_RETURN_IF_ERROR(store::WriteKeyPair(key, prefix));
  return std::make_shared<const store::Ed25519PrivateKey>(std::move(key));
}

}  // namespace

std::string DemoProver::address() const {
  return "127.0.0.1:" + std::to_string(port());
}

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
  LP_RETURN_IF_ERROR(c->StartProver("prover-1", /*tampers=*/false));
  step(3, "prover-1");
  LP_RETURN_IF_ERROR(c->StartProver("prover-2", /*tampers=*/true));
  step(4, "prover-2");
  LP_RETURN_IF_ERROR(c->WriteConfigFiles());
  return c;
}

DemoCluster::~DemoCluster() { (void)Shutdown(); }

std::string DemoCluster::verifier_address() const {
  return "127.0.0.1:" + std::to_string(verifier_port());
}

std::string DemoCluster::PublicKeyFile(const std::string& name) const {
  return options_.out_dir + "/keys/" + name + ".pub";
}

absl::StatusOr<std::shared_ptr<grpc::Channel>> DemoCluster::Channel(
    const std::string& address, const std::string& who) const {
  return rpc::MakeChannel(address, pki_->Client(who));
}

absl::Status DemoCluster::StartVerifier() {
  LP_ASSIGN_OR_RETURN(verifier_key_,
                      NewKey(options_.out_dir + "/keys/verifier"));
  verifier::VerifierOptions v;
  v.verifier_id = kVerifierId;
  v.engine = options_.verifier_engine;
  v.key = verifier_key_;
  v.db_dir = options_.out_dir + "/verifier-db";
  v.policy = options_.policy;
  v.audit_threads = options_.audit_threads;
  v.opening_timeout = absl::Seconds(30);
  v.roles = roles_;
  v.insecure = false;
  auto node = verifier::VerifierNode::Create(std::move(v));
  if (!node.ok()) {
    return absl::Status(node.status().code(),
                        "verifier: " + std::string(node.status().message()));
  }
  verifier_ = *std::move(node);
  rpc::ServerConfig config;
  config.listen = "127.0.0.1:0";
  config.tls = pki_->Server(/*mtls=*/true);
  LP_ASSIGN_OR_RETURN(verifier_server_,
                      rpc::StartServer(config, verifier_->services()));
  return absl::OkStatus();
}

absl::Status DemoCluster::StartProver(const std::string& id, bool tampers) {
  auto p = std::make_unique<DemoProver>();
  p->id = id;
  p->tampers = tampers;
  LP_ASSIGN_OR_RETURN(p->key, NewKey(options_.out_dir + "/keys/" + id));
  auto executor = kernels::model::MakeExecutor(options_.backend);
  if (!executor.ok()) return store::ToAbslStatus(executor.status());
  p->executor = *std::move(executor);
  prover::ProverOptions o;
  o.prover_id = id;
  o.model = options_.model;
  o.executor = p->executor.get();
  o.key = p->key;
  o.journal_dir = options_.out_dir + "/" + id + "-journal";
  o.verifier_address = verifier_address();
  o.verifier_tls = pki_->Client(id);
  o.log_key = std::make_shared<const store::CheckpointVerifier>(
      kVerifierId, verifier_key_->public_key());
  o.log_origin = std::string("layerproof/") + kVerifierId;
  o.max_new_tokens = options_.max_new_tokens;
  o.roles = roles_;
  o.insecure = false;
  // DEMO-ONLY (cli/demo_fault.h): `serve prover` never sets this.
  if (tampers) o.faults = NewDemoLayerTamper(options_.tamper_layer);
  auto node = prover::ProverNode::Create(std::move(o));
  if (!node.ok()) {
    return absl::Status(node.status().code(),
                        id + ": " + std::string(node.status().message()));
  }
  p->node = *std::move(node);
  rpc::ServerConfig config;
  config.listen = "127.0.0.1:0";
  config.tls = pki_->Server(/*mtls=*/true);
  LP_ASSIGN_OR_RETURN(p->server, rpc::StartServer(config, p->node->services()));
  LP_RETURN_IF_ERROR(verifier_->AddProver(verifier::ProverRegistration{
      id, p->key->public_key(), p->address(), pki_->Client(kVerifierId)}));
  provers_.push_back(std::move(p));
  return absl::OkStatus();
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
  for (const auto& p : provers_) {
    provers.push_back({{"id", p->id},
                       {"public_key_file", "keys/" + p->id + ".pub"},
                       {"opening_address", p->address()}});
  }
  return WriteWholeFile(options_.out_dir + "/provers.json",
                        nlohmann::json{{"provers", provers}}.dump(2) + "\n");
}

absl::Status DemoCluster::Shutdown() {
  if (shut_down_) return absl::OkStatus();
  shut_down_ = true;
  absl::Status first;
  const auto keep = [&](const absl::Status& s) {
    // DeadlineExceeded: work left pending for a next start (nothing lost).
    if (!s.ok() && !absl::IsDeadlineExceeded(s) && first.ok()) first = s;
  };
  if (verifier_server_) verifier_server_->MarkNotServing();
  for (const auto& p : provers_) p->server->MarkNotServing();
  // Provers first: their last submissions reach the verifier, and their
  // Opening services keep answering the verifier's running audits.
  for (const auto& p : provers_) {
    keep(p->node->Shutdown(absl::Now() + absl::Seconds(30)));
  }
  if (verifier_) keep(verifier_->Shutdown(absl::Seconds(20)));
  if (verifier_server_) verifier_server_->Shutdown(std::chrono::seconds(1));
  for (const auto& p : provers_) p->server->Shutdown(std::chrono::seconds(1));
  verifier_server_.reset();
  verifier_.reset();
  for (auto& p : provers_) {
    p->server.reset();
    p->node.reset();
  }
  return first;
}

}  // namespace layerproof::cli
