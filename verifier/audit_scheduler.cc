#include "verifier/audit_scheduler.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <map>
#include <optional>
#include <utility>

#include "kernels/status.h"
// One structured-log format for every node: the prover's header is reused
// as is (it is to move to store/ for both).
#include "check/bytes.h"
#include "check/internal/opening_checks.h"
#include "rpc/structured_log.h"
#include "store/commitment.h"
#include "store/envelope.h"
#include "store/internal/str_cat.h"
#include "store/merkle.h"
#include "verifier/internal/attribution.h"

namespace layerproof::verifier {
namespace {

using check::DigestBytes;
using check::Hex;
using check::VerdictDetail;
using rpc::LogEvent;
using store::internal::Cat;

constexpr char kLogComponent[] = "verifier.audits";

// Log entries indexed per synced write during a catch-up.
constexpr uint64_t kIndexChunk = 1024;

int64_t NowNanos() { return absl::ToUnixNanos(absl::Now()); }

// The envelope's payload type and payload, unverified: for entries the log
// accepted (and so verified) before.
std::optional<v1::Envelope> ParseStoredEnvelope(const std::string& bytes) {
  v1::Envelope env;
  if (!env.ParseFromString(bytes)) return std::nullopt;
  return env;
}

// The verifier's own failure to run an audit (it stays pending, or was
// never started): no verdict, so this line is the only trace of it.
void LogAuditError(const std::string& request_id, const std::string& seed,
                   const absl::Status& status) {
  LogEvent(absl::IsUnavailable(status) ? "warn" : "error", kLogComponent,
           "audit_error",
           {{"request_id", Hex(request_id)},
            {"audit_seed", Hex(seed)},
            {"code", absl::StatusCodeToString(status.code())},
            {"message", std::string(status.message())}});
}

void AddOpening(const check::Opening& opening, v1::AuditRecord& record) {
  static_assert(std::endian::native == std::endian::little,
                "opened layers are stored as little-endian fp32");
  *record.mutable_opening() = opening.header;
  record.clear_opened_layers();
  for (const auto& [layer, rows] : opening.layers) {
    v1::OpenedLayer* out = record.add_opened_layers();
    out->set_layer(layer);
    out->mutable_data()->resize(rows.size() * sizeof(float));
    if (!rows.empty()) {
      std::memcpy(out->mutable_data()->data(), rows.data(),
                  rows.size() * sizeof(float));
    }
  }
}

}  // namespace

AuditScheduler::AuditScheduler(AuditSchedulerOptions options,
                               std::shared_ptr<internal::DbHandles> dbs,
                               const ProverDirectory& provers,
                               const check::ReExecutor& re_executor,
                               std::shared_ptr<check::OpeningSource> openings)
    : options_(std::move(options)),
      dbs_(std::move(dbs)),
      provers_(provers),
      re_executor_(re_executor),
      openings_(std::move(openings)),
      pool_(options_.audit_threads),
      retry_thread_([this] { RetryLoop(); }) {}

AuditScheduler::~AuditScheduler() {
  Shutdown(absl::InfinitePast()).IgnoreError();
}

absl::Status AuditScheduler::CatchUp() {
  LP_ASSIGN_OR_RETURN(const internal::Dbs db, dbs_->Get());
  absl::MutexLock lock(&index_mu_);
  LP_ASSIGN_OR_RETURN(uint64_t next, db.store->IndexedSize());
  const uint64_t size = db.log->Size();
  while (next < size) {
    const uint64_t end = std::min(size, next + kIndexChunk);
    AuditStoreBatch batch;
    AuditCounters added;
    std::map<std::string, uint64_t> new_commitments;
    std::map<std::string, v1::AuditRecord> touched;  // by audit seed
    std::vector<std::string> to_queue;
    for (uint64_t i = next; i < end; ++i) {
      LP_ASSIGN_OR_RETURN(std::string entry, db.log->Entry(i));
      std::optional<v1::Envelope> env = ParseStoredEnvelope(entry);
      // The log holds only verified envelopes; anything else is not ours
      // to index.
      if (!env.has_value()) continue;
      if (env->payload_type() == store::kCommitmentPayloadType) {
        absl::StatusOr<v1::Commitment> c =
            store::ParseCommitment(env->payload());
        if (!c.ok()) continue;
        // The verifier's own time of logging: reports window commitments
        // by it, never by the prover-chosen created_at (docs/reports.md).
        batch.SetLoggedAt(i, NowNanos());
        LP_ASSIGN_OR_RETURN(std::optional<uint64_t> known,
                            db.store->CommitmentIndex(c->request_id()));
        if (known.has_value() || new_commitments.count(c->request_id())) {
          continue;  // the first commitment of a request id wins
        }
        batch.PutCommitment(c->request_id(), i);
        new_commitments[c->request_id()] = i;
        ++added.commitments_indexed;
        LP_ASSIGN_OR_RETURN(std::string seed,
                            options_.draw_seed
                                ? options_.draw_seed(c->prover_id())
                                : FreshAuditSeed());
        AuditDraw draw = DrawAudit(seed, options_.policy, options_.num_layers);
        if (!draw.audit) continue;
        v1::AuditRecord record;
        record.set_request_id(c->request_id());
        record.set_commitment_leaf_index(i);
        record.set_audit_seed(seed);
        for (uint32_t l : draw.layers) record.add_layers(l);
        record.set_created_at_unix_nanos(NowNanos());
        batch.PutAudit(record);
        to_queue.push_back(seed);
        ++added.audits_drawn;
      } else if (env->payload_type() == store::kVerdictPayloadType) {
        absl::StatusOr<v1::Verdict> v = store::ParseVerdict(env->payload());
        if (!v.ok()) continue;
        v1::VerdictIndexEntry index_entry;
        index_entry.set_request_id(v->request_id());
        index_entry.set_outcome(v->outcome());
        index_entry.set_created_at_unix_nanos(v->created_at_unix_nanos());
        index_entry.set_audit_seed(v->audit_seed());
        index_entry.set_refused_at_submission(v->outcome() ==
                                                  v1::FAIL_SIGNATURE &&
                                              !v->has_commitment_leaf_index());
        absl::StatusOr<std::string> prover = ProverIdOf(db, *v);
        if (prover.ok()) index_entry.set_prover_id(*prover);
        batch.PutVerdict(i, index_entry);
        std::optional<v1::AuditRecord> record;
        if (auto t = touched.find(v->audit_seed()); t != touched.end()) {
          record = t->second;
        } else {
          LP_ASSIGN_OR_RETURN(record, db.store->Audit(v->audit_seed()));
        }
        if (record.has_value() && !record->done()) {
          record->set_done(true);
          record->set_verdict_leaf_index(i);
          batch.PutAudit(*record);
          touched[v->audit_seed()] = *record;
        }
        const int outcome = static_cast<int>(v->outcome());
        if (outcome >= 0 && outcome < int(added.verdicts.size())) {
          ++added.verdicts[size_t(outcome)];
        }
      }
    }
    batch.SetIndexed(end);
    LP_RETURN_IF_ERROR(db.store->Write(batch));
    {
      absl::MutexLock c(&counters_mu_);
      counters_.commitments_indexed += added.commitments_indexed;
      counters_.audits_drawn += added.audits_drawn;
      for (size_t k = 0; k < added.verdicts.size(); ++k) {
        counters_.verdicts[k] += added.verdicts[k];
      }
    }
    // Persisted above: queued only now (a crash before this point leaves
    // them pending for ResumePending).
    for (const std::string& seed : to_queue) Queue(seed, nullptr);
    next = end;
  }
  return absl::OkStatus();
}

absl::Status AuditScheduler::ResumePending() {
  LP_ASSIGN_OR_RETURN(const internal::Dbs db, dbs_->Get());
  // The oldest that can be queued now (the running ones, still pending in
  // the store, are among them); the rest wait for a later pass.
  LP_ASSIGN_OR_RETURN(std::vector<v1::AuditRecord> pending,
                      db.store->PendingAudits(options_.max_queued_audits +
                                              size_t(options_.audit_threads)));
  for (const v1::AuditRecord& r : pending) Queue(r.audit_seed(), nullptr);
  return absl::OkStatus();
}

absl::Status AuditScheduler::RoomInQueue(std::string_view call) const {
  if (pool_.queued() < options_.max_queued_audits) return absl::OkStatus();
  return absl::ResourceExhaustedError(
      Cat(call, ": ", pool_.queued(), " tasks queued, want < ",
          options_.max_queued_audits,
          " (AuditSchedulerOptions.max_queued_audits); retry later"));
}

void AuditScheduler::Queue(const std::string& seed, VerdictCallback done) {
  // Full: the audit stays pending in the store; a retry pass queues it.
  if (pool_.queued() >= options_.max_queued_audits) return;
  {
    absl::MutexLock lock(&active_mu_);
    if (!active_.insert(seed).second) return;  // already queued or running
  }
  rpc::TaskPool::Task task;
  task.run = [this, seed, done] { RunAudit(seed, done); };
  task.dropped = [this, seed, done] {
    {
      absl::MutexLock lock(&active_mu_);
      active_.erase(seed);
    }
    if (done) {
      done(absl::UnavailableError(
          "the verifier is shutting down; the audit stays pending and runs "
          "at the next start"));
    }
  };
  auto dropped = task.dropped;
  if (!pool_.Post(std::move(task))) dropped();
}

void AuditScheduler::RequestAudit(std::string request_id, uint64_t leaf_index,
                                  std::vector<uint32_t> layers, bool all_layers,
                                  VerdictCallback done) {
  if (absl::Status room = RoomInQueue("RequestAudit"); !room.ok()) {
    done(room);
    return;
  }
  rpc::TaskPool::Task task;
  // Persisting the record is a synced write: done here, on a worker.
  task.run = [this, request_id = std::move(request_id), leaf_index,
              layers = std::move(layers), all_layers, done]() mutable {
    absl::StatusOr<std::string> seed = FreshAuditSeed();
    if (!seed.ok()) {
      LogAuditError(request_id, "", seed.status());
      done(seed.status());
      return;
    }
    if (!all_layers && layers.empty()) {
      AuditPolicy policy = options_.policy;
      policy.rate = 1.0;
      layers = DrawAudit(*seed, policy, options_.num_layers).layers;
    }
    v1::AuditRecord record;
    record.set_request_id(request_id);
    record.set_commitment_leaf_index(leaf_index);
    record.set_audit_seed(*seed);
    for (uint32_t l : layers) record.add_layers(l);
    record.set_all_layers(all_layers);
    record.set_on_demand(true);
    record.set_created_at_unix_nanos(NowNanos());
    absl::StatusOr<internal::Dbs> db = dbs_->Get();
    if (!db.ok()) {
      LogAuditError(request_id, *seed, db.status());
      done(db.status());
      return;
    }
    AuditStoreBatch batch;
    batch.PutAudit(record);
    if (absl::Status s = db->store->Write(batch); !s.ok()) {
      LogAuditError(request_id, *seed, s);
      done(s);
      return;
    }
    RunAudit(*seed, done);
  };
  task.dropped = [done] {
    done(absl::UnavailableError(
        "the verifier is shutting down; no audit was started"));
  };
  auto dropped = task.dropped;
  if (!pool_.Post(std::move(task))) dropped();
}

void AuditScheduler::RunAudit(const std::string& seed,
                              const VerdictCallback& done) {
  std::string request_id;
  absl::StatusOr<v1::VerdictRecord> result = RunAuditOrError(seed, &request_id);
  if (!result.ok()) {
    LogAuditError(request_id, seed, result.status());
    RecordFailedAttempt(seed, result.status());  // while still active
  }
  {
    absl::MutexLock lock(&active_mu_);
    active_.erase(seed);
  }
  if (!result.ok() && !absl::IsUnavailable(result.status())) {
    absl::MutexLock c(&counters_mu_);
    ++counters_.audit_errors;
  }
  if (done) done(std::move(result));
}

absl::StatusOr<v1::VerdictRecord> AuditScheduler::RunAuditOrError(
    const std::string& seed, std::string* request_id) {
  LP_ASSIGN_OR_RETURN(const internal::Dbs db, dbs_->Get());
  LP_ASSIGN_OR_RETURN(std::optional<v1::AuditRecord> stored,
                      db.store->Audit(seed));
  if (!stored.has_value()) {
    return absl::InternalError("audit record missing from the audit store");
  }
  v1::AuditRecord record = std::move(*stored);
  *request_id = record.request_id();
  if (record.done()) {
    v1::VerdictRecord out;
    LP_ASSIGN_OR_RETURN(*out.mutable_verdict_envelope(),
                        db.log->Entry(record.verdict_leaf_index()));
    out.set_leaf_index(record.verdict_leaf_index());
    return out;
  }
  if (record.verdict_envelope().empty()) {
    LP_ASSIGN_OR_RETURN(std::string envelope,
                        db.log->Entry(record.commitment_leaf_index()));
    check::AuditPlan plan;
    plan.layers.assign(record.layers().begin(), record.layers().end());
    plan.all_layers = record.all_layers();
    plan.audit_seed = seed;
    const absl::Time started = absl::Now();
    LP_ASSIGN_OR_RETURN(check::AuditOutcome outcome,
                        ReExecute(envelope, record, plan));
    if (options_.metrics != nullptr) {
      options_.metrics->audit_reexecution_seconds.Observe(
          absl::ToDoubleSeconds(absl::Now() - started));
      if (outcome.opening.has_value()) {
        double bytes = 0;
        for (const auto& [k, rows] : outcome.opening->layers) {
          bytes += 4.0 * static_cast<double>(rows.size());
        }
        options_.metrics->audit_opening_bytes.Increment(bytes);
      }
    }
    v1::Verdict verdict = std::move(outcome.verdict);
    ApplyRetentionRule(db, record, envelope, verdict);
    verdict.set_verifier_id(options_.verifier_id);
    verdict.set_created_at_unix_nanos(NowNanos());
    LP_ASSIGN_OR_RETURN(*record.mutable_verdict_envelope(),
                        store::SignVerdict(verdict, *options_.key));
    if (outcome.opening.has_value()) AddOpening(*outcome.opening, record);
    absl::ReaderMutexLock lock(&finish_mu_);
    if (abandoned_) {
      return absl::UnavailableError(
          "the audit outlived the shutdown deadline; it runs again at the "
          "next start");
    }
    AuditStoreBatch batch;
    batch.PutAudit(record);
    LP_RETURN_IF_ERROR(db.store->Write(batch));
    return AppendVerdict(db, record);
  }
  absl::ReaderMutexLock lock(&finish_mu_);
  if (abandoned_) {
    return absl::UnavailableError("the verifier shut down before logging");
  }
  return AppendVerdict(db, record);
}

absl::StatusOr<check::AuditOutcome> AuditScheduler::ReExecute(
    const std::string& envelope, const v1::AuditRecord& record,
    const check::AuditPlan& plan) {
  if (options_.leases == nullptr) {
    const std::shared_ptr<const store::KeyRing> keys = provers_.keys();
    return re_executor_.Audit(envelope, record.commitment_leaf_index(), plan,
                              *keys, *openings_, options_.opening_timeout);
  }
  v1::AuditTask task;
  task.set_commitment_envelope(envelope);
  task.set_commitment_leaf_index(record.commitment_leaf_index());
  task.mutable_layers()->Assign(plan.layers.begin(), plan.layers.end());
  task.set_all_layers(plan.all_layers);
  task.set_audit_seed(plan.audit_seed);
  task.set_opening_timeout_ms(static_cast<uint32_t>(
      absl::ToInt64Milliseconds(options_.opening_timeout)));
  // The prover the commitment names (the log verified its signature); an
  // unregistered one goes out without a key, and the worker's re-executor
  // then finds no key for the envelope, as ours would.
  v1::Commitment commitment;
  if (std::optional<v1::Envelope> env = ParseStoredEnvelope(envelope);
      env.has_value() && commitment.ParseFromString(env->payload())) {
    task.set_prover_id(commitment.prover_id());
    if (std::optional<ProverRegistration> p =
            provers_.Find(commitment.prover_id());
        p.has_value()) {
      const auto& raw = p->key.raw();
      task.set_prover_public_key(
          std::string(reinterpret_cast<const char*>(raw.data()), raw.size()));
      task.set_opening_address(p->opening_address);
    }
  }
  return options_.leases->Execute(std::move(task));
}

absl::StatusOr<v1::VerdictRecord> AuditScheduler::AppendVerdict(
    const internal::Dbs& db, const v1::AuditRecord& record) {
  LP_ASSIGN_OR_RETURN(store::AppendResult appended,
                      db.log->Append(record.verdict_envelope()));
  LP_RETURN_IF_ERROR(CatchUp());
  {
    absl::MutexLock c(&counters_mu_);
    if (!record.refused_at_submission() && !record.unlogged_promise()) {
      ++counters_.audits_done;
    }
  }
  LogVerdict(record, appended.index);
  v1::VerdictRecord out;
  out.set_verdict_envelope(record.verdict_envelope());
  out.set_leaf_index(appended.index);
  return out;
}

absl::Status AuditScheduler::RecordRefusal(const std::string& envelope,
                                           const v1::Commitment& commitment,
                                           std::string_view reason,
                                           std::string_view submitter) {
  LP_RETURN_IF_ERROR(
      store::ValidateNodeId("Verdict.refused_submitter", submitter));
  LP_ASSIGN_OR_RETURN(const internal::Dbs db, dbs_->Get());
  const std::string leaf_hash = DigestBytes(store::LeafHash(envelope));
  // Serialises the check-and-append per envelope only, and holds no mutex
  // across the synced writes.
  LockRefusal(leaf_hash);
  absl::Status s = RecordRefusalLocked(db, leaf_hash, envelope, commitment,
                                       reason, submitter);
  UnlockRefusal(leaf_hash);
  return s;
}

absl::Status AuditScheduler::RecordRefusalLocked(
    const internal::Dbs& db, const std::string& leaf_hash,
    const std::string& envelope, const v1::Commitment& commitment,
    std::string_view reason, std::string_view submitter) {
  LP_ASSIGN_OR_RETURN(std::optional<std::string> known,
                      db.store->Refusal(leaf_hash));
  if (known.has_value()) {
    LP_ASSIGN_OR_RETURN(std::optional<v1::AuditRecord> r,
                        db.store->Audit(*known));
    if (!r.has_value() || r->done()) return absl::OkStatus();
    return AppendVerdict(db, *r).status();  // logged before a crash? Retry.
  }
  // Held across the count's read and the batch that raises it (refusals
  // are rare: at most one per submitter per refusal_verdict_interval).
  absl::MutexLock count_lock(&refusal_count_mu_);
  LP_ASSIGN_OR_RETURN(const uint64_t stored, db.store->RefusalCount(submitter));
  if (stored >= options_.max_refusals_per_submitter) {
    return absl::ResourceExhaustedError(
        Cat("submitter ", submitter, " has ", stored,
            " refusal verdicts stored, the most one submitter may "
            "(AuditSchedulerOptions.max_refusals_per_submitter)"));
  }
  LP_ASSIGN_OR_RETURN(std::string seed, FreshAuditSeed());
  v1::Verdict verdict;
  verdict.set_request_id(commitment.request_id());
  verdict.set_outcome(v1::FAIL_SIGNATURE);
  verdict.set_commitment_leaf_hash(leaf_hash);
  verdict.set_audit_seed(seed);
  verdict.set_verifier_id(options_.verifier_id);
  verdict.set_created_at_unix_nanos(NowNanos());
  verdict.set_detail(VerdictDetail(Cat("refused at submission: ", reason)));
  verdict.set_refused_submitter(std::string(submitter));
  v1::AuditRecord record;
  record.set_request_id(commitment.request_id());
  record.set_audit_seed(seed);
  record.set_refused_at_submission(true);
  record.set_refused_envelope(envelope);
  record.set_created_at_unix_nanos(verdict.created_at_unix_nanos());
  LP_ASSIGN_OR_RETURN(*record.mutable_verdict_envelope(),
                      store::SignVerdict(verdict, *options_.key));
  AuditStoreBatch batch;
  batch.PutAudit(record);
  batch.PutRefusal(leaf_hash, seed);
  batch.SetRefusalCount(submitter, stored + 1);
  LP_RETURN_IF_ERROR(db.store->Write(batch));
  return AppendVerdict(db, record).status();
}

void AuditScheduler::LockRefusal(const std::string& leaf_hash) {
  absl::MutexLock lock(&refusal_mu_);
  auto free = [this, &leaf_hash]() ABSL_SHARED_LOCKS_REQUIRED(refusal_mu_) {
    return busy_refusals_.count(leaf_hash) == 0;
  };
  refusal_mu_.Await(absl::Condition(&free));
  busy_refusals_.insert(leaf_hash);
}

void AuditScheduler::UnlockRefusal(const std::string& leaf_hash) {
  absl::MutexLock lock(&refusal_mu_);
  busy_refusals_.erase(leaf_hash);
}

absl::StatusOr<std::string> AuditScheduler::ProverIdOf(
    const internal::Dbs& db, const v1::Verdict& verdict) const {
  if (verdict.has_commitment_leaf_index()) {
    LP_ASSIGN_OR_RETURN(std::string entry,
                        db.log->Entry(verdict.commitment_leaf_index()));
    return internal::CommitmentProverId(entry);
  }
  // A broken promise: the prover that signed it (checked when presented).
  if (verdict.outcome() == v1::FAIL_UNLOGGED) {
    return internal::PromisedProverId(verdict);
  }
  // A refusal at submission: the refused envelope's prover_id is
  // unverified; the authenticated submitter is who the refusal is charged
  // to (none for a verdict without one).
  return verdict.refused_submitter();
}

void AuditScheduler::LogVerdict(const v1::AuditRecord& record,
                                uint64_t leaf_index) const {
  std::optional<v1::Envelope> env =
      ParseStoredEnvelope(record.verdict_envelope());
  v1::Verdict v;
  if (!env.has_value() || !v.ParseFromString(env->payload())) return;
  nlohmann::json fields = {{"request_id", Hex(v.request_id())},
                           {"outcome", v1::VerdictOutcome_Name(v.outcome())},
                           {"verdict_leaf_index", leaf_index},
                           {"audit_seed", Hex(v.audit_seed())},
                           {"detail", v.detail()}};
  if (v.has_mismatch()) fields["mismatch_layer"] = v.mismatch().layer();
  if (v.has_commitment_leaf_index()) {
    fields["commitment_leaf_index"] = v.commitment_leaf_index();
  }
  if (!v.refused_submitter().empty()) {
    fields["refused_submitter"] = v.refused_submitter();
  }
  LogEvent(v.outcome() == v1::PASS ? "info" : "warn", kLogComponent, "verdict",
           std::move(fields));
}

absl::Status AuditScheduler::WaitIdle(absl::Duration timeout) {
  if (pool_.WaitIdle(absl::Now() + timeout)) return absl::OkStatus();
  return absl::DeadlineExceededError(
      Cat("audits still busy after ", absl::FormatDuration(timeout), ": ",
          pool_.queued(), " queued, ", pool_.running(), " running"));
}

absl::Status AuditScheduler::Shutdown(absl::Time deadline) {
  StopRetries();
  if (pool_.Stop(deadline)) return absl::OkStatus();
  absl::MutexLock lock(&finish_mu_);
  abandoned_ = true;
  return absl::DeadlineExceededError(
      Cat(pool_.running(),
          " audit(s) still running at the shutdown deadline were abandoned; "
          "they stay pending and run again at the next start"));
}

AuditCounters AuditScheduler::counters() const {
  absl::MutexLock c(&counters_mu_);
  return counters_;
}

}  // namespace layerproof::verifier
