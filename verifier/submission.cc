#include "verifier/submission.h"

#include <atomic>
#include <utility>

#include "kernels/status.h"
// The prover's structured-log header, reused (it is to move to store/).
#include "check/bytes.h"
#include "rpc/structured_log.h"
#include "store/commitment.h"
#include "store/envelope.h"
#include "store/internal/str_cat.h"
#include "store/merkle.h"
#include "store/submit.h"
#include "verifier/evidence.h"

namespace layerproof::verifier {
namespace {

using rpc::LogEvent;
using store::internal::Cat;

constexpr char kLogComponent[] = "verifier.submissions";

v1::SubmitResult Refused(const absl::Status& s) {
  v1::SubmitResult r;
  r.set_code(static_cast<int>(s.code()));
  r.set_message(std::string(s.message()));
  return r;
}

v1::SubmitResult Accepted(uint64_t index, bool duplicate) {
  v1::SubmitResult r;
  r.set_leaf_index(index);
  r.set_duplicate(duplicate);
  return r;
}

}  // namespace

struct Submitter::Batch {
  std::vector<std::string> envelopes;
  size_t bytes = 0;       // of the envelopes, counted in bytes_in_flight_
  std::string submitter;  // the client certificate's CN; "" if none
  std::vector<v1::SubmitResult> results;
  std::atomic<size_t> remaining{0};
  Done done;
};

Submitter::Submitter(std::shared_ptr<internal::DbHandles> dbs,
                     const ProverDirectory& provers, AuditScheduler& scheduler,
                     size_t max_leaf_bytes, int threads,
                     size_t max_bytes_in_flight,
                     absl::Duration refusal_verdict_interval,
                     VerifierMetrics* metrics)
    : dbs_(std::move(dbs)),
      provers_(provers),
      scheduler_(scheduler),
      max_leaf_bytes_(max_leaf_bytes),
      max_bytes_in_flight_(max_bytes_in_flight),
      refusal_verdict_interval_(refusal_verdict_interval),
      metrics_(metrics),
      pool_(threads) {}

void Submitter::Submit(std::vector<std::string> envelopes,
                       std::string submitter, Done done) {
  size_t bytes = 0;
  for (const std::string& e : envelopes) bytes += e.size();
  size_t busy = 0;
  bool admitted = false;
  {
    absl::MutexLock lock(&in_flight_mu_);
    busy = bytes_in_flight_;
    admitted =
        bytes <= max_bytes_in_flight_ && busy <= max_bytes_in_flight_ - bytes;
    if (admitted) bytes_in_flight_ += bytes;
  }
  if (!admitted) {
    done(absl::ResourceExhaustedError(
        Cat("Log.Submit: ", bytes, " bytes with ", busy,
            " bytes of submissions in flight, want <= ", max_bytes_in_flight_,
            " in all (VerifierOptions.max_submission_bytes_in_flight); "
            "retry later")));
    return;
  }
  auto batch = std::make_shared<Batch>();
  batch->bytes = bytes;
  batch->submitter = std::move(submitter);
  batch->envelopes = std::move(envelopes);
  batch->results.resize(batch->envelopes.size());
  batch->remaining = batch->envelopes.size();
  batch->done = std::move(done);
  if (batch->envelopes.empty()) {
    Finish(*batch);
    return;
  }
  for (size_t i = 0; i < batch->envelopes.size(); ++i) {
    rpc::TaskPool::Task task;
    task.run = [this, batch, i] {
      batch->results[i] = Admit(batch->envelopes[i], batch->submitter);
      if (batch->remaining.fetch_sub(1) == 1) Finish(*batch);
    };
    task.dropped = [this, batch, i] {
      batch->results[i] =
          Refused(absl::UnavailableError("the verifier is shutting down"));
      if (batch->remaining.fetch_sub(1) == 1) Finish(*batch);
    };
    auto dropped = task.dropped;
    if (!pool_.Post(std::move(task))) dropped();
  }
}

v1::SubmitResult Submitter::Admit(const std::string& envelope,
                                  const std::string& submitter) {
  // 1. Shape: with no trusted key, a well-formed envelope fails only at its
  // first signature's key (PermissionDenied).
  absl::StatusOr<store::VerifiedEnvelope> shape =
      store::VerifyEnvelope(envelope, store::KeyRing(),
                            store::kCommitmentPayloadType, max_leaf_bytes_);
  if (!shape.ok() && !absl::IsPermissionDenied(shape.status())) {
    return Refused(shape.status());
  }
  v1::Envelope parsed;
  if (!parsed.ParseFromString(envelope)) {
    return Refused(absl::InvalidArgumentError("Envelope: malformed"));
  }
  absl::StatusOr<v1::Commitment> commitment =
      store::ParseCommitment(parsed.payload());
  if (!commitment.ok()) return Refused(commitment.status());

  // 2. Signatures against the registered keys.
  const std::shared_ptr<const store::KeyRing> keys = provers_.keys();
  absl::StatusOr<store::VerifiedEnvelope> verified = store::VerifyEnvelope(
      envelope, *keys, store::kCommitmentPayloadType, max_leaf_bytes_);
  if (!verified.ok()) {
    return RefuseSignature(envelope, *commitment, verified.status(), submitter);
  }
  // 3. The key must be the commitment's prover's.
  for (const store::Sha256Hash& key_id : verified->key_ids) {
    std::optional<std::string> owner = provers_.ProverOfKey(key_id);
    if (!owner.has_value() || *owner != commitment->prover_id()) {
      return Refused(absl::PermissionDeniedError(
          Cat("Commitment.prover_id: got \"", commitment->prover_id(),
              "\", but the envelope is signed by the key of prover \"",
              owner.value_or("?"), "\"")));
    }
  }
  // ... and an authenticated submitter may submit only its own.
  if (!submitter.empty() && submitter != commitment->prover_id()) {
    return Refused(absl::PermissionDeniedError(
        Cat("Commitment.prover_id: got \"", commitment->prover_id(),
            "\", but the submitter's client certificate CN is \"", submitter,
            "\" (a prover submits only its own commitments)")));
  }
  // 4. One commitment per request id.
  const std::string& request_id = commitment->request_id();
  absl::StatusOr<internal::Dbs> db = dbs_->Get();
  if (!db.ok()) return Refused(db.status());
  LockRequest(request_id);
  v1::SubmitResult result = AdmitLocked(*db, envelope, *commitment, *keys);
  UnlockRequest(request_id);
  return result;
}

v1::SubmitResult Submitter::RefuseSignature(const std::string& envelope,
                                            const v1::Commitment& commitment,
                                            const absl::Status& refusal,
                                            const std::string& submitter) {
  // Only an authenticated submitter gets a FAIL_SIGNATURE verdict logged,
  // charged to it (the envelope's prover_id is unverified), and at most one
  // per refusal_verdict_interval: an anonymous or flooding client could
  // otherwise fill the log with signed failures "of" any prover.
  std::string why;
  if (submitter.empty()) {
    why = "anonymous submitter";
  } else if (!store::ValidateNodeId("submitter", submitter).ok()) {
    why = "the submitter's CN is not a valid node id";
  } else if (!TakeRefusalVerdict(submitter)) {
    why = "refusal verdict rate limit";
  }
  bool logged = false;
  absl::Status result = refusal;
  if (why.empty()) {
    absl::Status s = scheduler_.RecordRefusal(
        envelope, commitment, std::string(refusal.message()), submitter);
    logged = s.ok();
    if (!s.ok()) {
      why = Cat("logging failed: ", std::string(s.message()));
      result = absl::Status(
          refusal.code(),
          Cat(std::string(refusal.message()),
              " (and its FAIL_SIGNATURE verdict could not be logged: ",
              std::string(s.message()), ")"));
    }
  }
  nlohmann::json fields = {{"request_id", check::Hex(commitment.request_id())},
                           {"claimed_prover_id", commitment.prover_id()},
                           {"submitter", submitter},
                           {"code", absl::StatusCodeToString(refusal.code())},
                           {"message", std::string(refusal.message())},
                           {"verdict_logged", logged}};
  if (!why.empty()) fields["no_verdict_because"] = why;
  LogEvent("warn", kLogComponent, "refusal", std::move(fields));
  return Refused(result);
}

bool Submitter::TakeRefusalVerdict(const std::string& submitter) {
  const absl::Time now = absl::Now();
  absl::MutexLock lock(&refusals_mu_);
  auto [it, fresh] = last_refusal_verdict_.try_emplace(submitter, now);
  if (fresh) return true;
  if (now - it->second < refusal_verdict_interval_) return false;
  it->second = now;
  return true;
}

v1::SubmitResult Submitter::AdmitLocked(const internal::Dbs& db,
                                        const std::string& envelope,
                                        const v1::Commitment& commitment,
                                        const store::KeyRing& keys) {
  absl::StatusOr<std::optional<uint64_t>> known =
      db.store->CommitmentIndex(commitment.request_id());
  if (!known.ok()) return Refused(known.status());
  if (known->has_value()) {
    const uint64_t index = **known;
    absl::StatusOr<std::string> logged = db.log->Entry(index);
    if (!logged.ok()) return Refused(logged.status());
    if (store::LeafHash(*logged) == store::LeafHash(envelope)) {
      return Accepted(index, /*duplicate=*/true);
    }
    return Refused(absl::AlreadyExistsError(
        Cat("Commitment.request_id: ",
            store::HexEncode(store::AsBytes(commitment.request_id())),
            " is already logged at index ", index,
            " with a different commitment")));
  }
  const absl::Time started = absl::Now();
  absl::StatusOr<store::AppendResult> appended = store::SubmitEnvelope(
      *db.log, envelope, keys, store::kCommitmentPayloadType, max_leaf_bytes_);
  if (!appended.ok()) return Refused(appended.status());
  if (metrics_ != nullptr) {
    const absl::Time now = absl::Now();
    metrics_->log_append_seconds.Observe(absl::ToDoubleSeconds(now - started));
    // The log signs a checkpoint with every appended batch.
    metrics_->last_checkpoint_unix_nanos.store(absl::ToUnixNanos(now));
  }
  // Index it (and draw its audit) before the request id is unlocked.
  if (absl::Status s = scheduler_.CatchUp(); !s.ok()) {
    return Refused(absl::Status(
        s.code(), Cat("logged at index ", appended->index,
                      " but not indexed: ", std::string(s.message()))));
  }
  return Accepted(appended->index, appended->duplicate);
}

void Submitter::Finish(Batch& batch) {
  absl::StatusOr<v1::SubmitResponse> response =
      [&]() -> absl::StatusOr<v1::SubmitResponse> {
    v1::SubmitResponse out;
    LP_ASSIGN_OR_RETURN(const internal::Dbs db, dbs_->Get());
    LP_ASSIGN_OR_RETURN(std::string note, db.log->LatestCheckpoint());
    LP_ASSIGN_OR_RETURN(uint64_t size, CheckpointSize(note));
    out.set_checkpoint(std::move(note));
    out.set_tree_size(size);
    for (v1::SubmitResult& r : batch.results) {
      // The log signs a checkpoint after every batch, so an accepted leaf
      // is always below `size`.
      if (r.code() == 0 && r.leaf_index() < size) {
        LP_ASSIGN_OR_RETURN(std::vector<store::Sha256Hash> proof,
                            db.log->InclusionProof(r.leaf_index(), size));
        for (const store::Sha256Hash& h : proof) {
          r.add_inclusion_proof(check::DigestBytes(h));
        }
      }
      *out.add_results() = std::move(r);
    }
    return out;
  }();
  {
    absl::MutexLock lock(&in_flight_mu_);
    bytes_in_flight_ -= batch.bytes;
  }
  Done done = std::move(batch.done);
  done(std::move(response));
}

void Submitter::LockRequest(const std::string& request_id) {
  absl::MutexLock lock(&requests_mu_);
  auto free = [this, &request_id]() ABSL_SHARED_LOCKS_REQUIRED(requests_mu_) {
    return busy_requests_.count(request_id) == 0;
  };
  requests_mu_.Await(absl::Condition(&free));
  busy_requests_.insert(request_id);
}

void Submitter::UnlockRequest(const std::string& request_id) {
  absl::MutexLock lock(&requests_mu_);
  busy_requests_.erase(request_id);
}

absl::Status Submitter::Shutdown(absl::Time deadline) {
  if (pool_.Stop(deadline)) return absl::OkStatus();
  return absl::DeadlineExceededError(
      "submissions still running at the shutdown deadline");
}

}  // namespace layerproof::verifier
