// How the AuditScheduler closes audits it cannot conclude (audit_scheduler.h
// "Closing"): bounded retries of an audit its own errors left pending, the
// INCONCLUSIVE verdict that ends it, and the retention rule that decides
// whether a failed opening is the prover's fault or the verifier's
// lateness (docs/protocol.md "Retention").
#include <chrono>
#include <optional>
#include <utility>

#include "kernels/status.h"
#include "store/envelope.h"
#include "store/internal/str_cat.h"
#include "store/merkle.h"
#include "rpc/structured_log.h"
#include "verifier/audit_scheduler.h"
#include "verifier/internal/attribution.h"
#include "check/bytes.h"
#include "check/internal/opening_checks.h"

namespace layerproof::verifier {
namespace {

using check::DigestBytes;
using check::Hex;
using check::VerdictDetail;
using store::internal::Cat;

}  // namespace

void AuditScheduler::ApplyRetentionRule(const internal::Dbs& db,
                                        const v1::AuditRecord& record,
                                        const std::string& commitment_envelope,
                                        v1::Verdict& verdict) const {
  if (verdict.outcome() != v1::FAIL_OPENING &&
      verdict.outcome() != v1::FAIL_TIMEOUT) {
    return;
  }
  const std::string prover_id =
      internal::CommitmentProverId(commitment_envelope);
  std::optional<ProverRegistration> prover = provers_.Find(prover_id);
  absl::StatusOr<std::optional<int64_t>> logged_at =
      db.store->LoggedAt(record.commitment_leaf_index());
  // Without a registration or a logged time the rule cannot excuse the
  // prover: the failure stands.
  if (!prover.has_value() || !logged_at.ok() || !logged_at->has_value()) {
    return;
  }
  const absl::Duration age = absl::Now() - absl::FromUnixNanos(**logged_at);
  if (age <= prover->retention) return;
  const std::string was = v1::VerdictOutcome_Name(verdict.outcome());
  verdict.set_outcome(v1::INCONCLUSIVE);
  verdict.set_detail(VerdictDetail(
      Cat("opened ", absl::FormatDuration(absl::Trunc(age, absl::Seconds(1))),
          " after the commitment was logged, past prover \"", prover_id,
          "\"'s retention of ", absl::FormatDuration(prover->retention),
          ": the verifier was late, so the failed opening (", was, ": ",
          verdict.detail(), ") is not held against the prover")));
}

void AuditScheduler::RecordFailedAttempt(const std::string& seed,
                                         const absl::Status& error) {
  if (stopping_.load()) return;  // not an attempt: the node is going down
  absl::Status s = RecordFailedAttemptOrError(seed, error);
  if (!s.ok()) {
    rpc::LogEvent(
        "error", "verifier.audits", "attempt_not_recorded",
        {{"audit_seed", Hex(seed)}, {"message", std::string(s.message())}});
  }
}

absl::Status AuditScheduler::RecordFailedAttemptOrError(
    const std::string& seed, const absl::Status& error) {
  LP_ASSIGN_OR_RETURN(const internal::Dbs db, dbs_->Get());
  LP_ASSIGN_OR_RETURN(std::optional<v1::AuditRecord> stored,
                      db.store->Audit(seed));
  // Done, or signed already (a retry appends the same bytes): nothing to
  // count.
  if (!stored.has_value() || stored->done() ||
      !stored->verdict_envelope().empty() || stored->refused_at_submission()) {
    return absl::OkStatus();
  }
  v1::AuditRecord record = *std::move(stored);
  record.set_attempts(record.attempts() + 1);
  record.set_last_error(VerdictDetail(std::string(error.message())));
  AuditStoreBatch batch;
  if (record.attempts() < options_.max_audit_attempts) {
    batch.PutAudit(record);
    return db.store->Write(batch);
  }
  // Closed: a signed INCONCLUSIVE verdict, logged like any other.
  LP_ASSIGN_OR_RETURN(std::string envelope,
                      db.log->Entry(record.commitment_leaf_index()));
  v1::Verdict verdict;
  verdict.set_request_id(record.request_id());
  verdict.set_commitment_leaf_index(record.commitment_leaf_index());
  verdict.set_commitment_leaf_hash(DigestBytes(store::LeafHash(envelope)));
  verdict.set_audit_seed(seed);
  verdict.set_outcome(v1::INCONCLUSIVE);
  for (uint32_t l : record.layers()) verdict.add_audited_layers(l);
  verdict.set_verifier_id(options_.verifier_id);
  verdict.set_created_at_unix_nanos(absl::ToUnixNanos(absl::Now()));
  verdict.set_detail(VerdictDetail(
      Cat("the verifier could not complete this audit in ", record.attempts(),
          " attempts (its own errors, not the prover's); last: ",
          record.last_error())));
  LP_ASSIGN_OR_RETURN(*record.mutable_verdict_envelope(),
                      store::SignVerdict(verdict, *options_.key));
  batch.PutAudit(record);
  absl::ReaderMutexLock lock(&finish_mu_);
  if (abandoned_) return absl::OkStatus();  // stays pending: next start
  LP_RETURN_IF_ERROR(db.store->Write(batch));
  return AppendVerdict(db, record).status();
}

void AuditScheduler::RetryLoop() {
  absl::MutexLock lock(&retry_mu_);
  while (!stop_retries_) {
    retry_mu_.AwaitWithTimeout(absl::Condition(&stop_retries_),
                               options_.retry_interval);
    if (stop_retries_) break;
    retry_mu_.Unlock();
    // Queues every pending audit not queued or running already; an error
    // (the node shutting down) is retried at the next interval.
    ResumePending().IgnoreError();
    retry_mu_.Lock();
  }
}

void AuditScheduler::StopRetries() {
  stopping_.store(true);
  {
    absl::MutexLock lock(&retry_mu_);
    stop_retries_ = true;
  }
  std::call_once(retry_joined_, [this] {
    if (retry_thread_.joinable()) retry_thread_.join();
  });
}

}  // namespace layerproof::verifier
