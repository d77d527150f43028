// Admission of submitted commitments to the verifier's log (DESIGN §5):
// the work behind Log.Submit, off the reactor threads.
//
// Each envelope of a batch is admitted on its own pool thread, so the
// batch's appends reach the log together and its group commit syncs them
// with one write. For each envelope, in order:
//   1. shape: an Envelope of a commitment, every signature 64 bytes by a
//      32-byte key id, a commitment that passes ValidateCommitment;
//      otherwise INVALID_ARGUMENT and nothing else happens;
//   2. signatures against the registered prover keys: an unknown key is
//      PERMISSION_DENIED, a bad signature INVALID_ARGUMENT; when the
//      submitter is authenticated (its client certificate's CN, a valid
//      node id), the refused envelope also gets a signed FAIL_SIGNATURE
//      verdict in the log, charged to that CN (Verdict.refused_submitter;
//      AuditScheduler::RecordRefusal, once per envelope), at most one per
//      refusal_verdict_interval per CN; an anonymous (--insecure)
//      submission, or one over the rate, is only refused. Every refusal
//      here is a "refusal" structured log line;
//   3. the signing key must be registered for the commitment's prover_id,
//      and an authenticated submitter's CN must be that prover_id
//      (PERMISSION_DENIED naming both otherwise; a valid signature, so no
//      verdict);
//   4. under a lock on the request id: a request id already logged with the
//      same envelope is a duplicate (its index, duplicate = true); with a
//      different one ALREADY_EXISTS; otherwise store::SubmitEnvelope
//      appends it, and the scheduler indexes it (and draws its audit)
//      before the lock is released.
// The response carries the latest checkpoint (the log signs one after every
// batch, so it covers every accepted envelope) and each accepted
// envelope's inclusion proof at that checkpoint's size.
//
// Bounded: the envelope bytes of batches admitted but not yet answered are
// at most max_bytes_in_flight; a batch that would go past it is refused
// whole with RESOURCE_EXHAUSTED before anything is queued (the prover's
// submitter retries with backoff), so a flood of 16 MiB batches cannot
// grow the queue without bound.
//
// Thread safety: every method is thread-safe.
#ifndef LAYERPROOF_VERIFIER_SUBMISSION_H_
#define LAYERPROOF_VERIFIER_SUBMISSION_H_

#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "layerproof/v1/log.pb.h"
#include "rpc/task_pool.h"
#include "store/log.h"
#include "verifier/audit_scheduler.h"
#include "verifier/audit_store.h"
#include "verifier/internal/db_handles.h"
#include "verifier/prover_registry.h"
#include "verifier/verifier_metrics.h"

namespace layerproof::verifier {

class Submitter {
 public:
  using Done = std::function<void(absl::StatusOr<v1::SubmitResponse>)>;

  // `provers` and `scheduler` (and `metrics`, which may be null) must
  // outlive the Submitter.
  Submitter(
      std::shared_ptr<internal::DbHandles> dbs, const ProverDirectory& provers,
      AuditScheduler& scheduler, size_t max_leaf_bytes, int threads,
      size_t max_bytes_in_flight,
      absl::Duration refusal_verdict_interval = kDefaultRefusalVerdictInterval,
      VerifierMetrics* metrics = nullptr);
  static constexpr absl::Duration kDefaultRefusalVerdictInterval =
      absl::Seconds(1);
  Submitter(const Submitter&) = delete;
  Submitter& operator=(const Submitter&) = delete;

  // Admits `envelopes` (already validated for count) sent by `submitter`
  // (the client certificate's common name, rpc::Authorizer::PeerCommonName;
  // "" when unauthenticated) and calls `done` once, from a pool thread,
  // with one result per envelope in order. Never blocks. After Shutdown
  // every envelope gets UNAVAILABLE.
  void Submit(std::vector<std::string> envelopes, std::string submitter,
              Done done);

  // Refuses new work and waits for admissions in flight until `deadline`.
  absl::Status Shutdown(absl::Time deadline);

 private:
  struct Batch;
  v1::SubmitResult Admit(const std::string& envelope,
                         const std::string& submitter);
  // Step 2's refusal: `refusal` is the signature check's error.
  v1::SubmitResult RefuseSignature(const std::string& envelope,
                                   const v1::Commitment& commitment,
                                   const absl::Status& refusal,
                                   const std::string& submitter);
  // Whether `submitter` may have one more refusal verdict now (and counts
  // it).
  bool TakeRefusalVerdict(const std::string& submitter);
  v1::SubmitResult AdmitLocked(const internal::Dbs& db,
                               const std::string& envelope,
                               const v1::Commitment& commitment,
                               const store::KeyRing& keys);
  void Finish(Batch& batch);
  void LockRequest(const std::string& request_id);
  void UnlockRequest(const std::string& request_id);

  const std::shared_ptr<internal::DbHandles> dbs_;
  const ProverDirectory& provers_;
  AuditScheduler& scheduler_;
  const size_t max_leaf_bytes_;
  const size_t max_bytes_in_flight_;
  const absl::Duration refusal_verdict_interval_;
  VerifierMetrics* const metrics_;

  absl::Mutex in_flight_mu_;
  size_t bytes_in_flight_ ABSL_GUARDED_BY(in_flight_mu_) = 0;

  absl::Mutex refusals_mu_;
  // When each submitter last got a refusal verdict (one entry per
  // authenticated CN, so bounded by the certificates issued).
  std::map<std::string, absl::Time> last_refusal_verdict_
      ABSL_GUARDED_BY(refusals_mu_);

  absl::Mutex requests_mu_;
  std::set<std::string> busy_requests_ ABSL_GUARDED_BY(requests_mu_);

  rpc::TaskPool pool_;
};

}  // namespace layerproof::verifier

#endif  // LAYERPROOF_VERIFIER_SUBMISSION_H_
