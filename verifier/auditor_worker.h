// A stateless auditor worker (`layerproof serve auditor`; audit_work.proto):
// leases audits from the verifier's AuditWork service, opens the audited
// request at its prover (role `auditor` under mTLS), re-executes the
// sampled layers on its own engine (a CPU or a GPU) with the same
// check::ReExecutor the verifier runs in process, and completes the lease
// with the verdict and the opening, which the verifier signs and logs.
//
// `concurrency` threads each run one audit at a time; idle ones poll Lease
// every `poll_interval`. A renewer keeps every running audit's lease alive
// (every third of the lease duration), so a long audit is not leased
// twice; a worker that dies simply stops renewing, and the verifier leases
// the audit again once the lease lapses. Nothing is stored here: killing a
// worker at any moment loses nothing.
//
// Thread safety: Stop may be called from any thread; the accessors too.
#ifndef LAYERPROOF_VERIFIER_AUDITOR_WORKER_H_
#define LAYERPROOF_VERIFIER_AUDITOR_WORKER_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "kernels/model/engine.h"
#include "rpc/tls.h"

namespace layerproof::verifier {

struct AuditorWorkerOptions {
  // 1..128 printable ASCII characters; named in the verifier's logs.
  std::string worker_id = "auditor-1";
  // The verifier's AuditWork service, and the TLS toward it.
  std::string verifier_address;
  rpc::TlsOptions verifier_tls;
  // The TLS toward the provers' Opening services (the worker presents its
  // auditor certificate there).
  rpc::TlsOptions prover_tls;
  // Re-executes; must outlive the worker. Its model must be the served one.
  const kernels::model::Engine* engine = nullptr;
  int concurrency = 1;
  absl::Duration poll_interval = absl::Milliseconds(200);
  // Most activation bytes one opening may carry.
  uint64_t max_opening_bytes = uint64_t{1} << 30;
};

class AuditorWorker {
 public:
  // Checks the options (InvalidArgument naming the field), opens the
  // channel and starts the threads.
  static absl::StatusOr<std::unique_ptr<AuditorWorker>> Start(
      AuditorWorkerOptions options);
  ~AuditorWorker();  // Stop()
  AuditorWorker(const AuditorWorker&) = delete;
  AuditorWorker& operator=(const AuditorWorker&) = delete;

  // Stops leasing, lets the running audits finish and complete, and joins.
  void Stop();
  // Audits completed under a current lease, and completions the verifier
  // refused (the lease had lapsed).
  uint64_t completed() const { return completed_.load(); }
  uint64_t refused() const { return refused_.load(); }
  // Opening attempts that found a prover unreachable (each one retried).
  uint64_t openings_unreachable() const;

  struct Impl;

 private:
  explicit AuditorWorker(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
  std::atomic<uint64_t> completed_{0};
  std::atomic<uint64_t> refused_{0};
  friend struct Impl;
};

}  // namespace layerproof::verifier

#endif  // LAYERPROOF_VERIFIER_AUDITOR_WORKER_H_
