// The attestation service as service_bench and report_bench stand it up: a
// VerifierNode and a ProverNode, each behind its own plaintext gRPC server
// on 127.0.0.1, the prover registered with the verifier (as
// tests/integration/cluster.cc does), with fresh Ed25519 keys and their
// databases under one directory. Also the keys and model digest those
// benchmarks need on their own.
// Thread safety: construct and destroy on one thread; the nodes themselves
// are thread-safe.
#ifndef LAYERPROOF_BENCH_LOOPBACK_NODES_H_
#define LAYERPROOF_BENCH_LOOPBACK_NODES_H_

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <utility>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "bench/bench_common.h"
#include "kernels/dispatch.h"
#include "kernels/model/engine.h"
#include "kernels/model/executor.h"
#include "kernels/model/model.h"
#include "prover/prover_node.h"
#include "rpc/server.h"
#include "rpc/tls.h"
#include "store/crypto.h"
#include "verifier/audit_policy.h"
#include "verifier/verifier_node.h"

namespace layerproof::bench {

inline std::shared_ptr<const store::Ed25519PrivateKey> NewKey() {
  return std::make_shared<const store::Ed25519PrivateKey>(
      Must(store::Ed25519PrivateKey::Generate(), "Ed25519 key"));
}

// The model's digest root as the verifier's ReExecutor takes it.
inline std::string ModelDigest(const kernels::model::Model& model) {
  const kernels::Sha256Digest& root = model.digest().root;
  return std::string(reinterpret_cast<const char*>(root.data()), root.size());
}

class LoopbackNodes {
 public:
  // The verifier ("bench-verifier") audits by `policy` on its own engine;
  // the prover ("bench-prover") serves `model`; both on `backend`, their
  // databases in `dir`/verifier and `dir`/journal (removed first).
  LoopbackNodes(const kernels::model::Model& model, kernels::Backend* backend,
                const std::filesystem::path& dir,
                const verifier::AuditPolicy& policy, bool record_metrics = true,
                bool remote_auditors = false) {
    namespace km = kernels::model;
    verifier_executor_ = Must(km::MakeExecutor(backend), "executor");
    prover_executor_ = Must(km::MakeExecutor(backend), "executor");
    verifier_key_ = NewKey();
    prover_key_ = NewKey();
    verifier_engine_ = Must(km::Engine::Create(model, verifier_executor_.get()),
                            "verifier engine");
    verifier::VerifierOptions vo;
    vo.verifier_id = "bench-verifier";
    vo.engine = verifier_engine_.get();
    vo.key = verifier_key_;
    vo.db_dir = Fresh(dir / "verifier");
    vo.policy = policy;
    vo.remote_auditors = remote_auditors;
    if (remote_auditors) vo.audit_threads = 64;  // they wait on workers
    vo.insecure = true;
    verifier_ = Must(verifier::VerifierNode::Create(std::move(vo)),
                     "VerifierNode::Create");
    rpc::ServerConfig vc;
    vc.listen = "127.0.0.1:0";
    vc.tls.insecure = true;
    verifier_server_ =
        Must(rpc::StartServer(vc, verifier_->services()), "verifier server");

    prover::ProverOptions po;
    po.prover_id = "bench-prover";
    po.model = &model;
    po.executor = prover_executor_.get();
    po.key = prover_key_;
    po.journal_dir = Fresh(dir / "journal");
    po.verifier_address = verifier_address();
    po.verifier_tls.insecure = true;
    po.log_key = std::make_shared<const store::CheckpointVerifier>(
        "bench-verifier", verifier_key_->public_key());
    po.log_origin = "layerproof/bench-verifier";
    po.insecure = true;
    po.record_metrics = record_metrics;
    prover_ =
        Must(prover::ProverNode::Create(std::move(po)), "ProverNode::Create");
    rpc::ServerConfig pc;
    pc.listen = "127.0.0.1:0";
    pc.tls.insecure = true;
    prover_server_ =
        Must(rpc::StartServer(pc, prover_->services()), "prover server");
    Must(verifier_->AddProver(verifier::ProverRegistration{
             "bench-prover", prover_key_->public_key(), prover_address(),
             tls()}),
         "AddProver");
  }
  ~LoopbackNodes() {
    (void)prover_->Shutdown(absl::Now() + absl::Seconds(30));
    prover_server_->Shutdown(std::chrono::seconds(5));
    prover_server_.reset();
    prover_.reset();
    verifier_server_->Shutdown(std::chrono::seconds(5));
    (void)verifier_->Shutdown(absl::Seconds(30));
    verifier_server_.reset();
    verifier_.reset();
  }
  LoopbackNodes(const LoopbackNodes&) = delete;
  LoopbackNodes& operator=(const LoopbackNodes&) = delete;

  std::string prover_address() const {
    return "127.0.0.1:" + std::to_string(prover_server_->port());
  }
  std::string verifier_address() const {
    return "127.0.0.1:" + std::to_string(verifier_server_->port());
  }
  // What a client's channel to either node takes (plaintext).
  static rpc::TlsOptions tls() {
    rpc::TlsOptions t;
    t.insecure = true;
    return t;
  }
  verifier::VerifierNode& verifier() { return *verifier_; }
  prover::ProverNode& prover() { return *prover_; }
  const store::Ed25519PublicKey& verifier_key() const {
    return verifier_->public_key();
  }
  const store::Ed25519PublicKey& prover_key() const {
    return prover_key_->public_key();
  }

 private:
  std::unique_ptr<kernels::model::Executor> verifier_executor_,
      prover_executor_;
  std::shared_ptr<const store::Ed25519PrivateKey> verifier_key_, prover_key_;
  std::unique_ptr<kernels::model::Engine> verifier_engine_;
  std::unique_ptr<verifier::VerifierNode> verifier_;
  std::unique_ptr<rpc::RunningServer> verifier_server_;
  std::unique_ptr<prover::ProverNode> prover_;
  std::unique_ptr<rpc::RunningServer> prover_server_;
};

}  // namespace layerproof::bench

#endif  // LAYERPROOF_BENCH_LOOPBACK_NODES_H_
