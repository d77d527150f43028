#include "cluster/local_cluster.h"

#include <utility>

#include "store/checkpoint.h"
#include "store/status.h"

namespace layerproof::cluster {

rpc::TlsOptions Insecure() {
  rpc::TlsOptions tls;
  tls.insecure = true;
  return tls;
}

std::string LocalProver::address() const {
  return "127.0.0.1:" + std::to_string(port());
}

absl::Status LocalProver::Stop() {
  absl::Status status;
  if (node) status = node->Shutdown(absl::Now() + timeouts.prover);
  if (server) server->Shutdown(timeouts.server_grace);
  server.reset();
  node.reset();
  return status;
}

LocalCluster::LocalCluster(LocalClusterOptions options)
    : options_(std::move(options)) {}

LocalCluster::~LocalCluster() { (void)Shutdown(); }

std::string LocalCluster::log_origin() const {
  return "layerproof/" + options_.verifier_id;
}

std::string LocalCluster::verifier_address() const {
  return "127.0.0.1:" + std::to_string(verifier_port_);
}

absl::Status LocalCluster::StartVerifier(VerifierSpec spec) {
  verifier::VerifierOptions& v = spec.options;
  v.verifier_id = options_.verifier_id;
  v.key = options_.verifier_key;
  v.insecure = spec.server_tls.insecure;
  verifier_client_tls_ = spec.client_tls;
  v.provers.clear();
  for (const auto& p : provers_) {
    if (!p->node) continue;
    v.provers.push_back(verifier::ProverRegistration{
        p->prover_id, p->key->public_key(), p->address(), spec.client_tls});
  }
  auto node = verifier::VerifierNode::Create(std::move(v));
  if (!node.ok()) {
    return absl::Status(node.status().code(),
                        "verifier: " + std::string(node.status().message()));
  }
  verifier_ = *std::move(node);
  rpc::ServerConfig config;
  config.listen = verifier_address();
  config.tls = spec.server_tls;
  LP_ASSIGN_OR_RETURN(verifier_server_,
                      rpc::StartServer(config, verifier_->services()));
  verifier_port_ = verifier_server_->port();
  return absl::OkStatus();
}

absl::Status LocalCluster::StopVerifier() {
  if (verifier_server_) verifier_server_->MarkNotServing();
  absl::Status status;
  if (verifier_) status = verifier_->Shutdown(options_.timeouts.verifier);
  if (verifier_server_) {
    verifier_server_->Shutdown(options_.timeouts.server_grace);
  }
  verifier_server_.reset();
  verifier_.reset();
  return status;
}

absl::StatusOr<LocalProver*> LocalCluster::StartProver(ProverSpec spec) {
  auto p = std::make_unique<LocalProver>();
  prover::ProverOptions& o = spec.options;
  p->prover_id = o.prover_id;
  p->journal_dir = o.journal_dir;
  p->key = o.key;
  p->timeouts = options_.timeouts;
  if (spec.executor) {
    p->executor = std::move(spec.executor);
    o.executor = p->executor.get();
  }
  if (o.verifier_address.empty()) o.verifier_address = verifier_address();
  o.verifier_tls = spec.client_tls;
  o.log_key = std::make_shared<const store::CheckpointVerifier>(
      options_.verifier_id, options_.verifier_key->public_key());
  o.log_origin = log_origin();
  o.insecure = spec.server_tls.insecure;
  auto node = prover::ProverNode::Create(std::move(o));
  if (!node.ok()) {
    return absl::Status(
        node.status().code(),
        p->prover_id + ": " + std::string(node.status().message()));
  }
  p->node = *std::move(node);
  rpc::ServerConfig config;
  config.listen = "127.0.0.1:" + std::to_string(spec.port);
  config.tls = spec.server_tls;
  LP_ASSIGN_OR_RETURN(p->server, rpc::StartServer(config, p->node->services()));
  provers_.push_back(std::move(p));
  LocalProver* started = provers_.back().get();
  if (spec.register_with_verifier && verifier_) {
    LP_RETURN_IF_ERROR(verifier_->AddProver(verifier::ProverRegistration{
        started->prover_id,
        spec.registered_key ? *spec.registered_key : started->key->public_key(),
        started->address(), verifier_client_tls_}));
  }
  return started;
}

absl::Status LocalCluster::Shutdown() {
  absl::Status first;
  const auto keep = [&](const absl::Status& s) {
    // DeadlineExceeded: work left pending for a next start (nothing lost).
    if (!s.ok() && !absl::IsDeadlineExceeded(s) && first.ok()) first = s;
  };
  if (verifier_server_) verifier_server_->MarkNotServing();
  for (const auto& p : provers_) {
    if (p->server) p->server->MarkNotServing();
  }
  // Provers first: their last submissions reach the verifier, and their
  // Opening services keep answering the verifier's running audits.
  for (const auto& p : provers_) {
    if (p->node) {
      keep(p->node->Shutdown(absl::Now() + options_.timeouts.prover));
    }
  }
  if (verifier_) keep(verifier_->Shutdown(options_.timeouts.verifier));
  if (verifier_server_) {
    verifier_server_->Shutdown(options_.timeouts.server_grace);
  }
  for (const auto& p : provers_) {
    if (p->server) p->server->Shutdown(options_.timeouts.server_grace);
  }
  verifier_server_.reset();
  verifier_.reset();
  for (auto& p : provers_) {
    p->server.reset();
    p->node.reset();
  }
  return first;
}

}  // namespace layerproof::cluster
