// The verifier's two databases (the log and the audit store), shared by
// its services and workers until the node closes them. Each user takes a
// snapshot for the duration of one operation; Close makes later snapshots
// fail with Unavailable, and the databases close when the last snapshot
// taken before is released (an audit abandoned at shutdown keeps them open
// until it returns).
//
// Thread safety: every method is thread-safe.
#ifndef LAYERPROOF_VERIFIER_INTERNAL_DB_HANDLES_H_
#define LAYERPROOF_VERIFIER_INTERNAL_DB_HANDLES_H_

#include <memory>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "store/log.h"
#include "verifier/audit_store.h"

namespace layerproof::verifier::internal {

struct Dbs {
  std::shared_ptr<store::Log> log;
  std::shared_ptr<AuditStore> store;
};

class DbHandles {
 public:
  explicit DbHandles(Dbs dbs) : dbs_(std::move(dbs)) {}
  DbHandles(const DbHandles&) = delete;
  DbHandles& operator=(const DbHandles&) = delete;

  absl::StatusOr<Dbs> Get() const {
    absl::MutexLock lock(&mu_);
    if (dbs_.log == nullptr) {
      return absl::UnavailableError("the verifier has shut down");
    }
    return dbs_;
  }
  void Close() {
    Dbs dropped;
    absl::MutexLock lock(&mu_);
    std::swap(dropped, dbs_);
  }

 private:
  mutable absl::Mutex mu_;
  Dbs dbs_ ABSL_GUARDED_BY(mu_);
};

}  // namespace layerproof::verifier::internal

#endif  // LAYERPROOF_VERIFIER_INTERNAL_DB_HANDLES_H_
