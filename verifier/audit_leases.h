// The verifier's side of audits that scale out (audit_work.proto, DESIGN
// §8): the board where the audit scheduler posts each audit's re-execution
// (Execute) and stateless auditor workers take it (Lease), keep it
// (Renew) and hand back its outcome (Complete).
//
// Each posted audit is leased to one worker at a time, first posted first
// leased. A lease lapses when not renewed by its deadline; the audit is then
// offered again, to any worker. Complete is accepted only under the current
// lease of a posted audit, before its deadline: a worker that was killed,
// cut off or too slow, and comes back later, is refused (FAILED_PRECONDITION)
// and nothing of its answer is kept. So each Execute returns exactly one
// outcome, and the scheduler turns it into exactly one verdict. Nothing here
// is persisted: the audits themselves are (audit_store.h), and a verifier
// restart posts the pending ones again.
//
// Bounds: Execute callers are the scheduler's audit threads (their number
// bounds what is posted); Complete payloads are bounded by the gRPC
// message limit and checked here (an opened layer must be whole fp32 rows).
//
// Thread safety: every method is thread-safe. Execute blocks its caller
// (an audit thread, never a gRPC reactor thread) until an outcome arrives
// or Shutdown.
#ifndef LAYERPROOF_VERIFIER_AUDIT_LEASES_H_
#define LAYERPROOF_VERIFIER_AUDIT_LEASES_H_

#include <cstddef>
#include <cstdint>
#include <list>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "check/re_executor.h"
#include "layerproof/v1/audit_work.pb.h"

namespace layerproof::verifier {

class AuditLeases {
 public:
  explicit AuditLeases(absl::Duration lease_duration)
      : lease_duration_(lease_duration) {}
  AuditLeases(const AuditLeases&) = delete;
  AuditLeases& operator=(const AuditLeases&) = delete;

  // Posts `task` (its lease fields are filled here) and blocks until a
  // worker completes it under a current lease: the verdict and opening it
  // reported, or Unavailable naming the worker's own error (the audit then
  // counts an attempt), or Unavailable after Shutdown (it stays pending).
  absl::StatusOr<check::AuditOutcome> Execute(v1::AuditTask task);

  // The oldest posted audit not under a current lease, now leased to
  // `worker`; nullopt when there is none. Unavailable after Shutdown.
  absl::StatusOr<std::optional<v1::AuditTask>> Lease(const std::string& worker);
  // A current lease's new deadline; FailedPrecondition when it lapsed or
  // is unknown.
  absl::StatusOr<int64_t> Renew(const std::string& lease_id);
  // The outcome of a current lease (see the header comment); InvalidArgument
  // naming the field for a malformed one (the lease stays current).
  absl::Status Complete(const v1::CompleteAuditRequest& request);

  // Wakes every Execute caller with Unavailable; no lease is given after.
  void Shutdown();

  size_t posted() const;    // posted and not completed
  size_t leased() const;    // of those, under a current lease
  uint64_t lapsed() const;  // leases that lapsed since the start
  // The workers holding a current lease (one entry per lease).
  std::vector<std::string> Holders() const;

 private:
  struct Job;
  // Offers again every job whose lease lapsed.
  void ReapLocked(absl::Time now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const absl::Duration lease_duration_;
  mutable absl::Mutex mu_;
  bool shut_down_ ABSL_GUARDED_BY(mu_) = false;
  uint64_t lapsed_ ABSL_GUARDED_BY(mu_) = 0;
  std::list<std::shared_ptr<Job>> jobs_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::shared_ptr<Job>> by_lease_ ABSL_GUARDED_BY(mu_);
};

}  // namespace layerproof::verifier

#endif  // LAYERPROOF_VERIFIER_AUDIT_LEASES_H_
