// The verdict side of the verifier (DESIGN §1 step 4, §6): indexes the log,
// draws audits with fresh randomness after each commitment is logged, runs
// them on a worker pool (ReExecutor), and signs and logs every verdict.
//
// Indexing (CatchUp) walks the log entries not yet indexed, in order, under
// one lock. For a commitment it records the verifier's clock at indexing
// (AuditStore::LoggedAt, what compliance reports window by), request_id ->
// leaf index and, when the policy's draw (FreshAuditSeed + DrawAudit) says
// so, an AuditRecord;
// for a verdict it records the verdict index and marks its audit done. All
// of one catch-up is one synced write, and audits are queued only after
// that write, so a crash anywhere loses no draw: the next start indexes
// what was left and resumes every pending audit (ResumePending).
//
// Running an audit: ReExecutor::Audit; the verdict gets verifier_id and
// created_at, is signed (store::SignVerdict) and stored in the audit's
// record with the opening it used BEFORE it is appended, so a restart
// re-appends the same bytes (the log answers with the original index)
// rather than auditing again. An audit that fails for the verifier's own
// reasons (an executor error, a prover it cannot reach through no fault of
// the prover's: re_executor.h) stays pending and is retried (below).
//
// Closing (audit_closing.cc): every drawn or requested audit of a logged
// commitment ends in a signed verdict. A run that fails for the verifier's
// own reasons counts an attempt (AuditRecord.attempts); pending audits are
// retried every retry_interval, and the max_audit_attempts-th failure
// closes the audit with an INCONCLUSIVE verdict naming the last error. An
// opening that fails (FAIL_OPENING, FAIL_TIMEOUT) more than the prover's
// registered retention after the verifier logged the commitment is the
// verifier's lateness: INCONCLUSIVE too, never a failure of the prover.
//
// Structured log lines (one JSON object per line on stderr, component
// "verifier.audits"): "audit_error" for every audit left pending by an
// error, "verdict" for every verdict this process logs.
//
// Shutdown: refuses new audits, drops the queued ones (they stay pending in
// the store), and waits for the running ones until a deadline; an audit
// still running then is abandoned: its result is discarded, not logged, and
// it is redone at the next start.
//
// Thread safety: every method is thread-safe.
#ifndef LAYERPROOF_VERIFIER_AUDIT_SCHEDULER_H_
#define LAYERPROOF_VERIFIER_AUDIT_SCHEDULER_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "check/re_executor.h"
#include "layerproof/v1/audit.pb.h"
#include "layerproof/v1/records.pb.h"
#include "layerproof/v1/verifier_state.pb.h"
#include "rpc/task_pool.h"
#include "store/crypto.h"
#include "store/log.h"
#include "verifier/audit_leases.h"
#include "verifier/audit_policy.h"
#include "verifier/audit_store.h"
#include "verifier/internal/db_handles.h"
#include "verifier/prover_registry.h"
#include "verifier/verifier_metrics.h"

namespace layerproof::verifier {

struct AuditSchedulerOptions {
  std::string verifier_id;
  // This log's origin: a presented promise must name it.
  std::string log_origin;
  // Signs verdicts. Required.
  std::shared_ptr<const store::Ed25519PrivateKey> key;
  AuditPolicy policy;
  // L of the verifier's model (the draws are over 1..L).
  uint32_t num_layers = 0;
  int audit_threads = 2;
  absl::Duration opening_timeout = absl::Seconds(30);
  // Runs an audit may fail for the verifier's own reasons before it is
  // closed INCONCLUSIVE (>= 1), and how often pending audits are retried.
  uint32_t max_audit_attempts = 5;
  absl::Duration retry_interval = absl::Seconds(30);
  // Audits queued on the workers at most. A drawn audit past it stays
  // pending in the store (persisted) and is queued by a later retry pass;
  // an on-demand RequestAudit past it is refused with RESOURCE_EXHAUSTED.
  size_t max_queued_audits = 10000;
  // Refusal verdicts (FAIL_SIGNATURE at submission) stored per submitter at
  // most, each with its envelope (<= max_leaf_bytes); past it an envelope
  // is still refused, but no verdict is logged or stored for it.
  uint64_t max_refusals_per_submitter = 1000;
  // Re-execution time and opening bytes, when not null; must outlive the
  // scheduler.
  VerifierMetrics* metrics = nullptr;
  // When not null, audits are re-executed by auditor workers that lease
  // them there (audit_leases.h) instead of in this process; must outlive
  // the scheduler. The verdict is signed and logged here either way.
  AuditLeases* leases = nullptr;
  // The policy's draws (audit_policy.h); FreshAuditSeed when empty.
  AuditSeedSource draw_seed;
};

struct AuditCounters {
  uint64_t commitments_indexed = 0;  // since start, by CatchUp
  uint64_t audits_drawn = 0;         // scheduled by the policy
  uint64_t audits_done = 0;          // verdicts logged by this process
  uint64_t audit_errors = 0;         // audits left pending by an error
  // Verdicts indexed since start, by v1::VerdictOutcome value.
  std::array<uint64_t, v1::VerdictOutcome_ARRAYSIZE> verdicts{};
};

class AuditScheduler {
 public:
  using VerdictCallback =
      std::function<void(absl::StatusOr<v1::VerdictRecord>)>;

  // Everything passed must outlive the scheduler, except the shared ones.
  AuditScheduler(AuditSchedulerOptions options,
                 std::shared_ptr<internal::DbHandles> dbs,
                 const ProverDirectory& provers,
                 const check::ReExecutor& re_executor,
                 std::shared_ptr<check::OpeningSource> openings);
  // Shuts down with a zero deadline if not done, and joins the workers
  // (waiting for running audits however long they take).
  ~AuditScheduler();
  AuditScheduler(const AuditScheduler&) = delete;
  AuditScheduler& operator=(const AuditScheduler&) = delete;

  // Indexes every log entry not yet indexed (see the header comment).
  absl::Status CatchUp();
  // Queues the oldest pending audits in the store, up to the queue's bound
  // (at start, before CatchUp, and every retry_interval).
  absl::Status ResumePending();

  // Audits the commitment logged at `leaf_index` now, with `layers` (1..L,
  // ascending; validated by the caller), or all layers, or a fresh draw of
  // the policy's s layers when layers is empty and !all_layers. The record
  // is persisted first; `done` is called from a worker thread once the
  // verdict is logged, or with the error (Unavailable when shutting down:
  // the audit stays pending and runs at the next start).
  void RequestAudit(std::string request_id, uint64_t leaf_index,
                    std::vector<uint32_t> layers, bool all_layers,
                    VerdictCallback done);

  // A structurally valid commitment whose envelope signature failed at
  // submission by the authenticated client `submitter` (its certificate's
  // common name, a valid node id: InvalidArgument otherwise): stores the
  // refused envelope and logs a signed FAIL_SIGNATURE verdict for it (no
  // commitment_leaf_index, refused_submitter = submitter, to whom listings
  // attribute it), once per envelope (deduplicated by leaf hash; a second
  // submitter of the same bytes gets no verdict of its own). Blocks until
  // logged. Rate limits are the caller's (Submitter).
  absl::Status RecordRefusal(const std::string& envelope,
                             const v1::Commitment& commitment,
                             std::string_view reason,
                             std::string_view submitter);

  // Audit.PresentPromise (unlogged_promises.cc), on a worker: judges a
  // presented SubmissionPromise envelope. The promised leaf's index when
  // the log holds it; otherwise, past the promise's log_by deadline (the
  // verifier's clock), the FAIL_UNLOGGED verdict against the prover, logged
  // once per promised leaf (every later presentation gets the same one).
  // Errors, with nothing stored: InvalidArgument naming the field for a
  // malformed or oversized promise, PermissionDenied for one not signed by
  // the registered key of the prover it names, FailedPrecondition for
  // another log's promise or one not yet due.
  struct PromiseJudgement {
    std::optional<uint64_t> logged_index;
    std::optional<v1::VerdictRecord> verdict;
  };
  using PromiseCallback = std::function<void(absl::StatusOr<PromiseJudgement>)>;
  void PresentPromise(std::string envelope, PromiseCallback done);

  // Blocks until no audit is queued or running; DeadlineExceeded naming
  // the counts otherwise.
  absl::Status WaitIdle(absl::Duration timeout);
  // See the header comment. OK when every running audit finished;
  // DeadlineExceeded naming how many were abandoned otherwise.
  absl::Status Shutdown(absl::Time deadline);

  AuditCounters counters() const;
  size_t queued() const { return pool_.queued(); }
  size_t running() const { return pool_.running(); }

 private:
  // Persists nothing; queues the audit with seed `seed`.
  void Queue(const std::string& seed, VerdictCallback done);
  // OK while fewer than max_queued_audits tasks wait (audits, on-demand
  // requests and promise presentations share the pool); else
  // RESOURCE_EXHAUSTED naming `call`.
  absl::Status RoomInQueue(std::string_view call) const;
  // Runs the audit; an error leaves it pending and is logged (audit_error).
  void RunAudit(const std::string& seed, const VerdictCallback& done);
  // Sets *request_id once the audit's record is read.
  absl::StatusOr<v1::VerdictRecord> RunAuditOrError(const std::string& seed,
                                                    std::string* request_id);
  // Appends a signed verdict stored in `record`, indexes it and logs it
  // (a "verdict" line).
  // The audit's outcome: re_executor_ here, or a leased auditor worker.
  absl::StatusOr<check::AuditOutcome> ReExecute(const std::string& envelope,
                                                const v1::AuditRecord& record,
                                                const check::AuditPlan& plan);
  absl::StatusOr<v1::VerdictRecord> AppendVerdict(
      const internal::Dbs& db, const v1::AuditRecord& record);
  void LogVerdict(const v1::AuditRecord& record, uint64_t leaf_index) const;
  // The prover a verdict is attributed to (VerdictIndexEntry.prover_id):
  // the audited commitment's, or for a refusal at submission the
  // authenticated submitter (Verdict.refused_submitter; may be empty).
  absl::StatusOr<std::string> ProverIdOf(const internal::Dbs& db,
                                         const v1::Verdict& verdict) const;
  absl::Status RecordRefusalLocked(const internal::Dbs& db,
                                   const std::string& leaf_hash,
                                   const std::string& envelope,
                                   const v1::Commitment& commitment,
                                   std::string_view reason,
                                   std::string_view submitter);
  void LockRefusal(const std::string& leaf_hash);
  void UnlockRefusal(const std::string& leaf_hash);
  // audit_closing.cc (see "Closing" above). ApplyRetentionRule turns a
  // failed opening past the prover's retention into INCONCLUSIVE.
  void ApplyRetentionRule(const internal::Dbs& db,
                          const v1::AuditRecord& record,
                          const std::string& commitment_envelope,
                          v1::Verdict& verdict) const;
  // Counts a failed run of the audit `seed` (while its seed is active),
  // closing it at max_audit_attempts; errors are logged, not returned.
  void RecordFailedAttempt(const std::string& seed, const absl::Status& error);
  absl::Status RecordFailedAttemptOrError(const std::string& seed,
                                          const absl::Status& error);
  absl::StatusOr<PromiseJudgement> JudgePromise(const std::string& envelope);
  absl::StatusOr<PromiseJudgement> RecordUnloggedLocked(
      const internal::Dbs& db, const std::string& leaf_hash,
      const std::string& envelope, const v1::SubmissionPromise& promise);
  // The retry thread: ResumePending every retry_interval until stopped.
  void RetryLoop();
  void StopRetries();

  const AuditSchedulerOptions options_;
  const std::shared_ptr<internal::DbHandles> dbs_;
  const ProverDirectory& provers_;
  const check::ReExecutor& re_executor_;
  const std::shared_ptr<check::OpeningSource> openings_;

  // Serialises CatchUp (the index is written in log order).
  absl::Mutex index_mu_;
  // Refused envelopes (by leaf hash) whose check-and-append is running:
  // RecordRefusal serialises per envelope without holding a mutex across
  // its synced writes.
  // Serialises the read-check-write of refusal counts.
  absl::Mutex refusal_count_mu_;
  absl::Mutex refusal_mu_;
  std::set<std::string> busy_refusals_ ABSL_GUARDED_BY(refusal_mu_);
  // Workers hold it shared while they persist and log a verdict; Shutdown
  // takes it exclusively to mark the stragglers abandoned.
  absl::Mutex finish_mu_;
  bool abandoned_ ABSL_GUARDED_BY(finish_mu_) = false;

  // Audit seeds queued or running: an audit is never run twice at once.
  absl::Mutex active_mu_;
  std::set<std::string> active_ ABSL_GUARDED_BY(active_mu_);

  mutable absl::Mutex counters_mu_;
  AuditCounters counters_ ABSL_GUARDED_BY(counters_mu_);

  // Set at Shutdown: failures after it are not attempts.
  std::atomic<bool> stopping_{false};
  absl::Mutex retry_mu_;
  bool stop_retries_ ABSL_GUARDED_BY(retry_mu_) = false;
  std::once_flag retry_joined_;

  rpc::TaskPool pool_;
  // Last: started once everything it uses exists.
  std::thread retry_thread_;
};

}  // namespace layerproof::verifier

#endif  // LAYERPROOF_VERIFIER_AUDIT_SCHEDULER_H_
