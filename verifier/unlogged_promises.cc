// Broken promises (audit_scheduler.h PresentPromise, docs/protocol.md
// "Promises"): a prover that hands a client a signed SubmissionPromise and
// never logs the commitment is held to it. Anyone holding the promise
// presents it after its log_by deadline; the verifier checks the prover's
// signature and its own log, and logs a signed FAIL_UNLOGGED verdict
// against the prover, once per promised leaf.
#include <optional>
#include <utility>

#include "kernels/status.h"
#include "store/commitment.h"
#include "store/envelope.h"
#include "store/internal/str_cat.h"
#include "verifier/audit_scheduler.h"
#include "check/bytes.h"
#include "check/internal/opening_checks.h"

namespace layerproof::verifier {
namespace {

using check::Hex;
using check::VerdictDetail;
using store::internal::Cat;

constexpr char kField[] = "PresentPromiseRequest.promise_envelope";

absl::Status InField(const absl::Status& s) {
  return absl::Status(s.code(), Cat(kField, ": ", std::string(s.message())));
}

std::string Time(int64_t unix_nanos) {
  return absl::FormatTime(absl::RFC3339_sec, absl::FromUnixNanos(unix_nanos),
                          absl::UTCTimeZone());
}

}  // namespace

void AuditScheduler::PresentPromise(std::string envelope,
                                    PromiseCallback done) {
  if (absl::Status room = RoomInQueue("PresentPromise"); !room.ok()) {
    done(room);
    return;
  }
  rpc::TaskPool::Task task;
  // Signature checks and synced writes: on a worker, never a reactor.
  task.run = [this, envelope = std::move(envelope), done] {
    done(JudgePromise(envelope));
  };
  task.dropped = [done] {
    done(absl::UnavailableError("the verifier is shutting down"));
  };
  auto dropped = task.dropped;
  if (!pool_.Post(std::move(task))) dropped();
}

absl::StatusOr<AuditScheduler::PromiseJudgement> AuditScheduler::JudgePromise(
    const std::string& envelope) {
  const std::shared_ptr<const store::KeyRing> keys = provers_.keys();
  absl::StatusOr<store::VerifiedEnvelope> verified = store::VerifyEnvelope(
      envelope, *keys, store::kSubmissionPromisePayloadType,
      store::kMaxPromiseEnvelopeBytes);
  if (!verified.ok()) return InField(verified.status());
  absl::StatusOr<v1::SubmissionPromise> promise =
      store::ParseSubmissionPromise(verified->payload);
  if (!promise.ok()) return InField(promise.status());
  for (const store::Sha256Hash& key_id : verified->key_ids) {
    const std::optional<std::string> owner = provers_.ProverOfKey(key_id);
    if (owner != promise->prover_id()) {
      return absl::PermissionDeniedError(
          Cat("SubmissionPromise.prover_id: got \"", promise->prover_id(),
              "\", but the promise is signed by the key of prover \"",
              owner.value_or("?"), "\""));
    }
  }
  if (promise->log_origin() != options_.log_origin) {
    return absl::FailedPreconditionError(
        Cat("SubmissionPromise.log_origin: got \"", promise->log_origin(),
            "\", want \"", options_.log_origin,
            "\" (a promise is judged by the log it names)"));
  }
  LP_ASSIGN_OR_RETURN(const internal::Dbs db, dbs_->Get());
  store::Sha256Hash leaf;
  std::copy(promise->commitment_leaf_hash().begin(),
            promise->commitment_leaf_hash().end(), leaf.begin());
  absl::StatusOr<uint64_t> logged = db.log->IndexOfLeafHash(leaf);
  if (logged.ok()) return PromiseJudgement{*logged, std::nullopt};
  if (!absl::IsNotFound(logged.status())) return logged.status();
  const int64_t due = store::PromiseDueUnixNanos(*promise);
  if (absl::Now() <= absl::FromUnixNanos(due)) {
    return absl::FailedPreconditionError(
        Cat("SubmissionPromise.log_by_unix_nanos: not yet due (the prover "
            "has until ",
            Time(due), " to log it)"));
  }
  const std::string leaf_hash = promise->commitment_leaf_hash();
  // Serialised per promised leaf with the refusals' lock (distinct keys).
  const std::string lock_key = "u/" + leaf_hash;
  LockRefusal(lock_key);
  absl::StatusOr<PromiseJudgement> judged =
      RecordUnloggedLocked(db, leaf_hash, envelope, *promise);
  UnlockRefusal(lock_key);
  return judged;
}

absl::StatusOr<AuditScheduler::PromiseJudgement>
AuditScheduler::RecordUnloggedLocked(const internal::Dbs& db,
                                     const std::string& leaf_hash,
                                     const std::string& envelope,
                                     const v1::SubmissionPromise& promise) {
  LP_ASSIGN_OR_RETURN(std::optional<std::string> known,
                      db.store->Unlogged(leaf_hash));
  if (known.has_value()) {
    LP_ASSIGN_OR_RETURN(std::optional<v1::AuditRecord> r,
                        db.store->Audit(*known));
    if (!r.has_value()) {
      return absl::DataLossError(
          "audit store: unlogged promise record missing");
    }
    if (r->done()) {
      v1::VerdictRecord out;
      LP_ASSIGN_OR_RETURN(*out.mutable_verdict_envelope(),
                          db.log->Entry(r->verdict_leaf_index()));
      out.set_leaf_index(r->verdict_leaf_index());
      return PromiseJudgement{std::nullopt, std::move(out)};
    }
    // Stored before a crash but not yet logged: log the same bytes.
    LP_ASSIGN_OR_RETURN(v1::VerdictRecord out, AppendVerdict(db, *r));
    return PromiseJudgement{std::nullopt, std::move(out)};
  }
  LP_ASSIGN_OR_RETURN(std::string seed, FreshAuditSeed());
  const int64_t now = absl::ToUnixNanos(absl::Now());
  v1::Verdict verdict;
  verdict.set_request_id(promise.request_id());
  verdict.set_outcome(v1::FAIL_UNLOGGED);
  verdict.set_commitment_leaf_hash(leaf_hash);
  verdict.set_audit_seed(seed);
  verdict.set_verifier_id(options_.verifier_id);
  verdict.set_created_at_unix_nanos(now);
  verdict.set_unlogged_promise(envelope);
  verdict.set_detail(VerdictDetail(Cat(
      "prover \"", promise.prover_id(), "\" promised at ",
      Time(promise.promised_at_unix_nanos()), " that this log would hold leaf ",
      Hex(leaf_hash), " by ", Time(promise.log_by_unix_nanos()),
      "; it did not when the promise was presented at ", Time(now))));
  v1::AuditRecord record;
  record.set_request_id(promise.request_id());
  record.set_audit_seed(seed);
  record.set_unlogged_promise(true);
  record.set_created_at_unix_nanos(now);
  LP_ASSIGN_OR_RETURN(*record.mutable_verdict_envelope(),
                      store::SignVerdict(verdict, *options_.key));
  AuditStoreBatch batch;
  batch.PutAudit(record);
  batch.PutUnlogged(leaf_hash, seed);
  LP_RETURN_IF_ERROR(db.store->Write(batch));
  LP_ASSIGN_OR_RETURN(v1::VerdictRecord out, AppendVerdict(db, record));
  return PromiseJudgement{std::nullopt, std::move(out)};
}

}  // namespace layerproof::verifier
