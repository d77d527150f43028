// The verifier node (DESIGN §1 steps 3-4, §5-§7): the transparency log of
// commitments and verdicts, the audits drawn after each commitment is
// logged, and the Log, Audit and Report gRPC services over them. `layerproof
// serve verifier` builds one from its flags and serves services() with
// rpc::StartServer.
//
// On disk, under db_dir: log/ (store::RocksDbLog, origin
// "layerproof/<verifier_id>", checkpoints signed by the verifier's key under
// the key name verifier_id) and audits/ (verifier/audit_store.h). Create
// indexes any log entry not yet indexed (a crash between an append and its
// indexing) and resumes every audit left pending.
//
// Shutdown(grace) loses nothing: new submissions and audits are refused
// (UNAVAILABLE), queued audits stay pending in the store, running ones may
// finish until the deadline (an audit still running then, or one waiting
// for an unreachable prover, is abandoned and redone at the next start),
// and the databases close as soon as no operation uses them. Mark the
// server not serving, shut the node down (which answers the RequestAudit
// calls waiting on it), then shut the server down, as `layerproof serve
// verifier` does.
//
// Thread safety: every method is thread-safe.
#ifndef LAYERPROOF_VERIFIER_VERIFIER_NODE_H_
#define LAYERPROOF_VERIFIER_VERIFIER_NODE_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "check/re_executor.h"
#include "grpcpp/impl/service_type.h"
#include "kernels/model/engine.h"
#include "layerproof/v1/records.pb.h"
#include "rpc/metrics.h"
#include "rpc/peer_limiter.h"
#include "rpc/roles.h"
#include "store/crypto.h"
#include "store/log.h"
#include "verifier/audit_leases.h"
#include "verifier/audit_policy.h"
#include "verifier/audit_work_service.h"
#include "verifier/prover_registry.h"
#include "verifier/verifier_metrics.h"

namespace rocksdb {
class Env;
}  // namespace rocksdb

namespace layerproof::verifier {

class AuditScheduler;
class AuditService;
class GrpcOpeningSource;
class LogService;
class ReportService;
class Submitter;
namespace internal {
class DbHandles;
}

struct VerifierOptions {
  // 1..256 printable ASCII characters without spaces or '+' (it names the
  // checkpoint key and the log origin).
  std::string verifier_id;
  // The engine audits re-execute on (its model and executor); must outlive
  // the node. Required, with max_context() >= the model's max_positions
  // (EngineOptions.max_context = max_positions) so that every commitment
  // the model allows can be audited. cli/engine_setup.h LoadEngine builds
  // one.
  const kernels::model::Engine* engine = nullptr;
  // The 32-byte digest of the engine's model; empty: the model's own
  // (engine->model().digest().root).
  std::string model_digest;
  // Signs checkpoints and verdicts. Required.
  std::shared_ptr<const store::Ed25519PrivateKey> key;
  // Holds log/ and audits/; created if missing.
  std::string db_dir;
  // The provers whose commitments are accepted, each with the address and
  // TLS of its Opening service (LoadProverRegistry).
  std::vector<ProverRegistration> provers;
  AuditPolicy policy;
  // The policy's audit seeds: FreshAuditSeed when empty, the only choice
  // for a real verifier (audit_policy.h); tests and the demo may seed them.
  AuditSeedSource audit_seeds;
  // Audit worker threads (re-executions running at once), 1..256.
  int audit_threads = 2;
  // Re-execute audits in auditor workers (`serve auditor`, AuditWork:
  // audit_leases.h) rather than in this process; audit_threads then bounds
  // the audits posted for leasing at once. A lease not renewed within
  // audit_lease is leased again.
  bool remote_auditors = false;
  absl::Duration audit_lease = absl::Seconds(60);
  // Threads admitting submitted envelopes; a batch's appends run on them
  // at once so the log group-commits them. 1..1024.
  int submit_threads = 32;
  // How long an opening may take to arrive.
  absl::Duration opening_timeout = absl::Seconds(30);
  // Runs an audit may fail for the verifier's own reasons before it is
  // closed INCONCLUSIVE (1..1000), and how often pending audits are retried
  // (audit_scheduler.h "Closing").
  uint32_t max_audit_attempts = 5;
  absl::Duration audit_retry_interval = absl::Seconds(30);
  // Audits queued on the workers at most (audit_scheduler.h).
  size_t max_queued_audits = 10000;
  // Refusal verdicts stored per submitter at most
  // (AuditSchedulerOptions.max_refusals_per_submitter).
  uint64_t max_refusals_per_submitter = 1000;
  // The open reads (Log.Get*, Audit.GetVerdict, ListVerdicts,
  // PresentPromise) from callers without a client certificate, per peer
  // address (rpc/peer_limiter.h).
  rpc::PeerLimits peer_limits;
  // Largest envelope the log accepts.
  size_t max_leaf_bytes = 1 << 20;
  // Envelope bytes of Log.Submit batches admitted but not yet answered;
  // past it a batch is refused with RESOURCE_EXHAUSTED (submission.h).
  size_t max_submission_bytes_in_flight = size_t{256} << 20;
  // Largest EvidenceBundle GetEvidence returns (RESOURCE_EXHAUSTED naming
  // the size beyond it); below the server's send limit
  // (rpc::ServerConfig.max_send_message_bytes, 64 MiB by default), which a
  // larger bundle would fail inside gRPC. >= 1.
  size_t max_evidence_bytes = size_t{60} << 20;
  // Client certificate roles; with `insecure` every role check passes.
  rpc::RoleMap roles;
  bool insecure = false;
  // For tests: where openings come from instead of the provers' Opening
  // services over gRPC (GrpcOpeningSource).
  std::shared_ptr<check::OpeningSource> opening_source;
  // For tests: the disk under the log and the audit store
  // (store::RocksDatabase::Open; tests/store/simulated_disk.h fails it on
  // demand); nullptr for the real one. Must outlive the node.
  rocksdb::Env* env = nullptr;
};

struct VerifierCounters {
  uint64_t log_size = 0;
  uint64_t commitments_logged = 0;  // indexed since start
  uint64_t audits_drawn = 0;        // by the policy since start
  uint64_t audits_done = 0;         // verdicts logged by audits since start
  uint64_t audit_errors = 0;        // audits left pending by an error
  // Opening attempts of in-process audits that found the prover
  // unreachable (retried until the opening deadline).
  uint64_t openings_unreachable = 0;
  uint64_t audits_queued = 0;
  uint64_t audits_running = 0;
  // With remote auditors: audits posted for workers, under a current
  // lease, and leases that lapsed since the start.
  uint64_t audits_posted = 0;
  uint64_t audits_leased = 0;
  uint64_t audit_leases_lapsed = 0;
  // Verdicts indexed since start, by v1::VerdictOutcome value.
  std::array<uint64_t, v1::VerdictOutcome_ARRAYSIZE> verdicts{};
};

class VerifierNode {
 public:
  // Opens the databases, registers the provers, catches the index up and
  // resumes pending audits. InvalidArgument naming a bad option (among
  // them an engine whose max_context is below the model's max_positions);
  // database errors name the directory.
  static absl::StatusOr<std::unique_ptr<VerifierNode>> Create(
      VerifierOptions options);
  // Shuts down (zero grace) if not yet, then waits for abandoned audits.
  ~VerifierNode();
  VerifierNode(const VerifierNode&) = delete;
  VerifierNode& operator=(const VerifierNode&) = delete;

  // The Log, Audit and Report services (owned by the node) for
  // rpc::StartServer, with AuditWork under remote_auditors.
  std::vector<grpc::Service*> services();
  // The same, split for a deployment that gives submissions and audit work
  // listeners of their own, so that a network policy lets only provers
  // reach Log.Submit and only auditors AuditWork (docs/operations.md):
  // `open` has Log without Submit (UNIMPLEMENTED there), Audit and Report;
  // `submit` the whole Log; `audit_work` AuditWork (empty without
  // remote_auditors).
  struct SplitServices {
    std::vector<grpc::Service*> open;
    std::vector<grpc::Service*> submit;
    std::vector<grpc::Service*> audit_work;
  };
  SplitServices split_services();

  // Registers one more prover (e.g. one started after the verifier).
  absl::Status AddProver(const ProverRegistration& prover);

  // Blocks until no audit is queued or running (tests).
  absl::Status WaitIdle(absl::Duration timeout);
  // See the header comment. OK, or DeadlineExceeded when audits were
  // abandoned (they stay pending). Idempotent.
  absl::Status Shutdown(absl::Duration grace);

  VerifierCounters counters() const;
  // With remote auditors, the workers that hold a current lease (one entry
  // per lease); empty otherwise.
  std::vector<std::string> AuditLeaseHolders() const;
  // The node's Prometheus metrics (verifier_metrics.h, and the log size,
  // audits and backlog sampled when scraped), for an rpc::MetricsServer.
  const rpc::NodeMetrics& metrics() const { return metrics_; }
  // The log; null after Shutdown.
  std::shared_ptr<const store::Log> log() const;
  const std::string& log_origin() const { return log_origin_; }
  // The checkpoint key name (store::CheckpointVerifier) and public key.
  const std::string& verifier_id() const { return verifier_id_; }
  const store::Ed25519PublicKey& public_key() const { return public_key_; }

 private:
  VerifierNode();
  void AddSampledMetrics();

  // Declared first: the samplers read the members below, and every user
  // of the metrics (scheduler, submitter) goes before them.
  rpc::NodeMetrics metrics_;
  std::unique_ptr<VerifierMetrics> verifier_metrics_;
  std::string verifier_id_;
  std::string log_origin_;
  store::Ed25519PublicKey public_key_;
  VerifierOptions options_;
  std::unique_ptr<ProverDirectory> provers_;
  std::unique_ptr<check::ReExecutor> re_executor_;
  std::shared_ptr<check::OpeningSource> openings_;
  // Set when the node made its own gRPC opening client (not owned here).
  GrpcOpeningSource* grpc_openings_ = nullptr;
  std::shared_ptr<internal::DbHandles> dbs_;
  // Before the scheduler: its threads wait on the leases until Shutdown.
  std::unique_ptr<AuditLeases> leases_;
  std::unique_ptr<AuditWorkService> audit_work_service_;
  std::unique_ptr<AuditScheduler> scheduler_;
  std::unique_ptr<Submitter> submitter_;
  std::unique_ptr<rpc::Authorizer> authorizer_;
  std::unique_ptr<rpc::PeerLimiter> peer_limiter_;
  std::unique_ptr<LogService> log_service_;
  std::unique_ptr<LogService> log_reads_service_;  // Submit refused
  std::unique_ptr<AuditService> audit_service_;
  std::unique_ptr<ReportService> report_service_;
  absl::Mutex shutdown_mu_;
  bool shut_down_ ABSL_GUARDED_BY(shutdown_mu_) = false;
  absl::Status shutdown_status_ ABSL_GUARDED_BY(shutdown_mu_);
};

}  // namespace layerproof::verifier

#endif  // LAYERPROOF_VERIFIER_VERIFIER_NODE_H_
