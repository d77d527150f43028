#include "verifier/verifier_node.h"

#include <filesystem>
#include <system_error>
#include <utility>

#include "kernels/status.h"
#include "store/checkpoint.h"
#include "store/commitment.h"
#include "store/internal/str_cat.h"
#include "store/rocksdb_log.h"
#include "verifier/audit_scheduler.h"
#include "verifier/audit_service.h"
#include "verifier/audit_store.h"
#include "verifier/internal/db_handles.h"
#include "verifier/log_service.h"
#include "verifier/opening_client.h"
#include "verifier/report_service.h"
#include "verifier/submission.h"

namespace layerproof::verifier {
namespace {

using store::internal::Cat;

absl::Status Invalid(std::string_view field, std::string_view got,
                     std::string_view want) {
  return absl::InvalidArgumentError(
      Cat("VerifierOptions.", field, ": got ", got, ", want ", want));
}

absl::Status ValidateOptions(const VerifierOptions& o) {
  if (o.verifier_id.empty() || o.verifier_id.size() > store::kMaxNodeIdChars) {
    return Invalid("verifier_id", Cat(o.verifier_id.size(), " characters"),
                   Cat("1..", store::kMaxNodeIdChars));
  }
  for (char c : o.verifier_id) {
    if (c < 0x21 || c > 0x7e || c == '+') {
      return Invalid("verifier_id", Cat("\"", o.verifier_id, "\""),
                     "printable ASCII without spaces or '+'");
    }
  }
  if (o.engine == nullptr) return Invalid("engine", "null", "an engine");
  const int64_t max_positions = o.engine->model().config().max_positions;
  if (o.engine->max_context() < max_positions) {
    return Invalid(
        "engine", Cat("an engine with max_context ", o.engine->max_context()),
        Cat("max_context >= the model's max_positions (", max_positions,
            ") so that every commitment the model allows can be audited; "
            "create the verifier's engine with EngineOptions.max_context = ",
            max_positions));
  }
  if (o.key == nullptr) return Invalid("key", "null", "a private key");
  if (o.db_dir.empty()) return Invalid("db_dir", "\"\"", "a directory");
  if (!o.model_digest.empty() && o.model_digest.size() != store::kDigestBytes) {
    return Invalid("model_digest", Cat(o.model_digest.size(), " bytes"),
                   Cat(store::kDigestBytes, " (or empty)"));
  }
  if (o.audit_threads < 1 || o.audit_threads > 256) {
    return Invalid("audit_threads", Cat(o.audit_threads), "1..256");
  }
  if (o.submit_threads < 1 || o.submit_threads > 1024) {
    return Invalid("submit_threads", Cat(o.submit_threads), "1..1024");
  }
  if (o.max_audit_attempts < 1 || o.max_audit_attempts > 1000) {
    return Invalid("max_audit_attempts", Cat(o.max_audit_attempts), "1..1000");
  }
  if (o.max_queued_audits < 1) {
    return Invalid("max_queued_audits", "0", ">= 1");
  }
  if (o.audit_retry_interval <= absl::ZeroDuration()) {
    return Invalid("audit_retry_interval",
                   absl::FormatDuration(o.audit_retry_interval), "> 0");
  }
  if (o.opening_timeout <= absl::ZeroDuration()) {
    return Invalid("opening_timeout", absl::FormatDuration(o.opening_timeout),
                   "> 0");
  }
  if (o.max_leaf_bytes == 0) return Invalid("max_leaf_bytes", "0", ">= 1");
  if (o.max_submission_bytes_in_flight < o.max_leaf_bytes) {
    return Invalid("max_submission_bytes_in_flight",
                   Cat(o.max_submission_bytes_in_flight),
                   Cat(">= max_leaf_bytes (", o.max_leaf_bytes, ")"));
  }
  if (o.max_evidence_bytes == 0) {
    return Invalid("max_evidence_bytes", "0", ">= 1");
  }
  if (absl::Status s = ValidateAuditPolicy(o.policy); !s.ok()) return s;
  return absl::OkStatus();
}

absl::Status MakeDir(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    return absl::UnavailableError(Cat(dir, ": cannot create: ", ec.message()));
  }
  return absl::OkStatus();
}

}  // namespace

VerifierNode::VerifierNode() = default;

absl::StatusOr<std::unique_ptr<VerifierNode>> VerifierNode::Create(
    VerifierOptions options) {
  LP_RETURN_IF_ERROR(ValidateOptions(options));
  std::unique_ptr<VerifierNode> node(new VerifierNode());
  node->verifier_id_ = options.verifier_id;
  node->log_origin_ = Cat("layerproof/", options.verifier_id);
  node->public_key_ = options.key->public_key();
  const kernels::model::Engine& engine = *options.engine;
  if (options.model_digest.empty()) {
    const auto& root = engine.model().digest().root;
    options.model_digest.assign(reinterpret_cast<const char*>(root.data()),
                                root.size());
  }
  const uint32_t num_layers =
      static_cast<uint32_t>(engine.model().config().num_layers);

  // The databases.
  const std::string log_dir = options.db_dir + "/log";
  const std::string audits_dir = options.db_dir + "/audits";
  LP_RETURN_IF_ERROR(MakeDir(log_dir));
  LP_RETURN_IF_ERROR(MakeDir(audits_dir));
  // The signer owns its key: a copy of the verifier's.
  LP_ASSIGN_OR_RETURN(store::Ed25519PrivateKey signer_key,
                      store::Ed25519PrivateKey::FromPem(options.key->ToPem()));
  LP_ASSIGN_OR_RETURN(store::CheckpointSigner signer,
                      store::CheckpointSigner::Create(options.verifier_id,
                                                      std::move(signer_key)));
  store::LogOptions log_options;
  log_options.origin = node->log_origin_;
  log_options.signer =
      std::make_shared<const store::CheckpointSigner>(std::move(signer));
  log_options.max_leaf_bytes = options.max_leaf_bytes;
  log_options.checkpoint_interval_ms = 0;  // every batch gets its checkpoint
  LP_ASSIGN_OR_RETURN(
      std::unique_ptr<store::Log> log,
      store::RocksDbLog::Open(log_dir, std::move(log_options), options.env));
  LP_ASSIGN_OR_RETURN(std::unique_ptr<AuditStore> audit_store,
                      AuditStore::Open(audits_dir, options.env));
  node->dbs_ = std::make_shared<internal::DbHandles>(
      internal::Dbs{std::shared_ptr<store::Log>(std::move(log)),
                    std::shared_ptr<AuditStore>(std::move(audit_store))});

  // Provers and openings.
  node->provers_ = std::make_unique<ProverDirectory>();
  if (options.opening_source != nullptr) {
    node->openings_ = options.opening_source;
  } else {
    auto grpc_openings = std::make_shared<GrpcOpeningSource>();
    node->grpc_openings_ = grpc_openings.get();
    node->openings_ = std::move(grpc_openings);
  }
  for (const ProverRegistration& p : options.provers) {
    LP_RETURN_IF_ERROR(node->AddProver(p));
  }
  node->re_executor_ =
      std::make_unique<check::ReExecutor>(engine, options.model_digest);

  // Audits.
  AuditSchedulerOptions scheduler_options;
  scheduler_options.verifier_id = options.verifier_id;
  scheduler_options.key = options.key;
  scheduler_options.policy = options.policy;
  scheduler_options.draw_seed = options.audit_seeds;
  scheduler_options.num_layers = num_layers;
  scheduler_options.audit_threads = options.audit_threads;
  scheduler_options.opening_timeout = options.opening_timeout;
  scheduler_options.log_origin = node->log_origin_;
  scheduler_options.max_audit_attempts = options.max_audit_attempts;
  scheduler_options.retry_interval = options.audit_retry_interval;
  scheduler_options.max_queued_audits = options.max_queued_audits;
  scheduler_options.max_refusals_per_submitter =
      options.max_refusals_per_submitter;
  node->verifier_metrics_ =
      std::make_unique<VerifierMetrics>(node->metrics_.registry());
  scheduler_options.metrics = node->verifier_metrics_.get();
  if (options.remote_auditors) {
    if (options.audit_lease < absl::Seconds(1)) {
      return absl::InvalidArgumentError(
          "VerifierOptions.audit_lease: want at least 1 s");
    }
    node->leases_ = std::make_unique<AuditLeases>(options.audit_lease);
    scheduler_options.leases = node->leases_.get();
  }
  node->scheduler_ = std::make_unique<AuditScheduler>(
      std::move(scheduler_options), node->dbs_, *node->provers_,
      *node->re_executor_, node->openings_);
  // Audits left pending first, then what the log holds beyond the index
  // (its draws are queued as they are made).
  LP_RETURN_IF_ERROR(node->scheduler_->ResumePending());
  LP_RETURN_IF_ERROR(node->scheduler_->CatchUp());

  // The services.
  node->submitter_ = std::make_unique<Submitter>(
      node->dbs_, *node->provers_, *node->scheduler_, options.max_leaf_bytes,
      options.submit_threads, options.max_submission_bytes_in_flight,
      Submitter::kDefaultRefusalVerdictInterval, node->verifier_metrics_.get());
  node->AddSampledMetrics();
  node->authorizer_ =
      std::make_unique<rpc::Authorizer>(options.roles, options.insecure);
  LP_ASSIGN_OR_RETURN(node->peer_limiter_,
                      rpc::PeerLimiter::Create(options.peer_limits));
  node->log_service_ = std::make_unique<LogService>(
      node->dbs_, *node->submitter_, *node->authorizer_, *node->peer_limiter_);
  node->log_reads_service_ = std::make_unique<LogService>(
      node->dbs_, *node->submitter_, *node->authorizer_, *node->peer_limiter_,
      /*serves_submit=*/false);
  if (node->leases_ != nullptr) {
    node->audit_work_service_ =
        std::make_unique<AuditWorkService>(*node->leases_, *node->authorizer_);
  }
  node->audit_service_ = std::make_unique<AuditService>(
      node->dbs_, *node->scheduler_, *node->authorizer_, *node->peer_limiter_,
      node->log_origin_, num_layers, options.max_evidence_bytes);
  ReportServiceOptions report_options;
  report_options.verifier_id = options.verifier_id;
  report_options.log_origin = node->log_origin_;
  report_options.key = options.key;
  report_options.policy = options.policy;
  node->report_service_ = std::make_unique<ReportService>(
      node->dbs_, *node->authorizer_, std::move(report_options));
  node->options_ = std::move(options);
  return node;
}

VerifierNode::~VerifierNode() {
  if (dbs_ != nullptr) Shutdown(absl::ZeroDuration()).IgnoreError();
  // Members go in reverse order: the services, then the submitter's and the
  // scheduler's pools (joining any abandoned audit), then the rest.
}

std::vector<grpc::Service*> VerifierNode::services() {
  std::vector<grpc::Service*> out = {log_service_.get(), audit_service_.get(),
                                     report_service_.get()};
  if (audit_work_service_ != nullptr) out.push_back(audit_work_service_.get());
  return out;
}

VerifierNode::SplitServices VerifierNode::split_services() {
  SplitServices out;
  out.open = {log_reads_service_.get(), audit_service_.get(),
              report_service_.get()};
  out.submit = {log_service_.get()};
  if (audit_work_service_ != nullptr) {
    out.audit_work = {audit_work_service_.get()};
  }
  return out;
}

absl::Status VerifierNode::AddProver(const ProverRegistration& prover) {
  LP_RETURN_IF_ERROR(provers_->Add(prover));
  if (grpc_openings_ != nullptr) {
    // Also without an address: its audits then stay pending, logged as the
    // verifier's problem, rather than failing the prover.
    LP_RETURN_IF_ERROR(grpc_openings_->AddProver(
        prover.prover_id, prover.opening_address, prover.opening_tls));
  }
  return absl::OkStatus();
}

absl::Status VerifierNode::WaitIdle(absl::Duration timeout) {
  return scheduler_->WaitIdle(timeout);
}

absl::Status VerifierNode::Shutdown(absl::Duration grace) {
  absl::MutexLock lock(&shutdown_mu_);
  if (shut_down_) return shutdown_status_;
  shut_down_ = true;
  const absl::Time deadline = absl::Now() + grace;
  // Audits waiting for an unreachable prover give up now (they stay
  // pending) rather than hold the shutdown until their opening deadline.
  if (grpc_openings_ != nullptr) grpc_openings_->StopRetrying();
  absl::Status submissions =
      submitter_ != nullptr ? submitter_->Shutdown(deadline) : absl::OkStatus();
  absl::Status audits =
      scheduler_ != nullptr ? scheduler_->Shutdown(deadline) : absl::OkStatus();
  // Remote audits still running after the grace are abandoned like local
  // ones (they stay pending): their audit threads stop waiting now.
  if (leases_ != nullptr) leases_->Shutdown();
  // A report still being built finishes on its own snapshot of the
  // databases; queued ones are refused.
  if (report_service_ != nullptr) report_service_->Shutdown(deadline);
  // Operations still running hold their own handles; the databases close
  // when the last of them returns.
  dbs_->Close();
  shutdown_status_ = !audits.ok() ? audits : submissions;
  return shutdown_status_;
}

void VerifierNode::AddSampledMetrics() {
  using Type = rpc::SampledMetrics::Type;
  using Samples = std::vector<std::pair<rpc::SampledMetrics::Labels, double>>;
  rpc::SampledMetrics& m = metrics_.sampled();
  m.Add("layerproof_log_size", "Entries in the transparency log.", Type::kGauge,
        [this] { return double(counters().log_size); });
  m.Add("layerproof_log_checkpoint_age_seconds",
        "Seconds since the log last signed a checkpoint (with an appended "
        "batch); 0 before the first.",
        Type::kGauge, [this] {
          const int64_t at =
              verifier_metrics_->last_checkpoint_unix_nanos.load();
          return at == 0 ? 0.0
                         : absl::ToDoubleSeconds(absl::Now() -
                                                 absl::FromUnixNanos(at));
        });
  m.Add("layerproof_commitments_logged_total",
        "Commitments logged and indexed since the start.", Type::kCounter,
        [this] { return double(counters().commitments_logged); });
  m.Add("layerproof_audits_drawn_total",
        "Audits drawn by the policy since the start.", Type::kCounter,
        [this] { return double(counters().audits_drawn); });
  m.Add("layerproof_openings_unreachable_total",
        "Opening attempts of in-process audits that found the prover "
        "unreachable (each retried until the opening deadline).",
        Type::kCounter,
        [this] { return double(counters().openings_unreachable); });
  m.Add("layerproof_audit_errors_total",
        "Audit runs left pending by an error since the start.", Type::kCounter,
        [this] { return double(counters().audit_errors); });
  m.Add("layerproof_audit_backlog",
        "Audits queued or running (drawn, requested or retried).", Type::kGauge,
        [this] {
          const VerifierCounters c = counters();
          return double(c.audits_queued + c.audits_running);
        });
  // The signal that every drawn audit has its verdict (e.g. before a spec
  // upgrade, docs/operations.md): the backlog above misses audits waiting
  // for a retry.
  m.Add("layerproof_audits_pending",
        "Audits without a verdict yet: queued, running, or waiting for a "
        "retry or a worker (counted up to 1000000).",
        Type::kGauge, [this] {
          // NaN, not 0, when it cannot be read: 0 would say "all done".
          absl::StatusOr<internal::Dbs> db = dbs_->Get();
          if (!db.ok()) return std::numeric_limits<double>::quiet_NaN();
          absl::StatusOr<uint64_t> n = db->store->CountPending(1000000);
          return n.ok() ? double(*n) : std::numeric_limits<double>::quiet_NaN();
        });
  m.Add("layerproof_audit_leases",
        "With remote auditors: audits posted for workers, by state.",
        Type::kGauge, rpc::SampledMetrics::Sampler([this] {
          const VerifierCounters c = counters();
          return Samples{{{{"state", "posted"}}, double(c.audits_posted)},
                         {{{"state", "leased"}}, double(c.audits_leased)}};
        }));
  m.Add("layerproof_audit_leases_lapsed_total",
        "Leases that lapsed (a worker died or stalled) and were offered "
        "again.",
        Type::kCounter,
        [this] { return double(counters().audit_leases_lapsed); });
  m.Add(
      "layerproof_verdicts_total",
      "Verdicts logged since the start, by outcome.", Type::kCounter,
      rpc::SampledMetrics::Sampler([this] {
        const VerifierCounters c = counters();
        Samples out;
        for (int v = 1; v < v1::VerdictOutcome_ARRAYSIZE; ++v) {
          if (!v1::VerdictOutcome_IsValid(v)) continue;
          out.push_back({{{"verdict", v1::VerdictOutcome_Name(
                                          static_cast<v1::VerdictOutcome>(v))}},
                         double(c.verdicts[v])});
        }
        return out;
      }));
}

std::vector<std::string> VerifierNode::AuditLeaseHolders() const {
  return leases_ != nullptr ? leases_->Holders() : std::vector<std::string>{};
}

VerifierCounters VerifierNode::counters() const {
  VerifierCounters out;
  const AuditCounters a = scheduler_->counters();
  out.commitments_logged = a.commitments_indexed;
  out.audits_drawn = a.audits_drawn;
  out.audits_done = a.audits_done;
  out.audit_errors = a.audit_errors;
  out.verdicts = a.verdicts;
  out.audits_queued = scheduler_->queued();
  out.audits_running = scheduler_->running();
  if (grpc_openings_ != nullptr) {
    out.openings_unreachable = grpc_openings_->unreachable_attempts();
  }
  if (leases_ != nullptr) {
    out.audits_posted = leases_->posted();
    out.audits_leased = leases_->leased();
    out.audit_leases_lapsed = leases_->lapsed();
  }
  absl::StatusOr<internal::Dbs> db = dbs_->Get();
  if (db.ok()) out.log_size = db->log->Size();
  return out;
}

std::shared_ptr<const store::Log> VerifierNode::log() const {
  absl::StatusOr<internal::Dbs> db = dbs_->Get();
  if (!db.ok()) return nullptr;
  return db->log;
}

}  // namespace layerproof::verifier
