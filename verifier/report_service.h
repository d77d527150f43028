// The verifier's Report service (report.proto; DESIGN §1 step 5, §7):
// GetComplianceReport builds a compliance report over a window
// (verifier/report_builder.h) at the log's latest signed checkpoint, proves
// that checkpoint consistent with the previous report's (RFC 9162), signs
// the report JSON as an Envelope of kReportPayloadType
// (check/report_format.h) and records the checkpoint as the last
// report's (AuditStore "m/last_report") before answering.
//
// The call needs the auditor role (it updates the last report's
// checkpoint; docs/security.md). Reports are generated one at a time on the
// service's own worker thread, never on a reactor thread, so the chain of
// previous-report checkpoints is a line: each report's previous_report is
// exactly the report issued before it, unless the caller names its own
// previous report's tree size (previous_tree_size; the proof then starts
// there). The caller's client_nonce is echoed in the report.
//
// Thread safety: as a gRPC service, every handler may run concurrently;
// Generate is thread-safe (serialised).
#ifndef LAYERPROOF_VERIFIER_REPORT_SERVICE_H_
#define LAYERPROOF_VERIFIER_REPORT_SERVICE_H_

#include <cstddef>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "layerproof/v1/report.grpc.pb.h"
#include "store/crypto.h"
#include "rpc/roles.h"
#include "rpc/task_pool.h"
#include "verifier/audit_policy.h"
#include "verifier/internal/db_handles.h"
#include "check/report_format.h"

namespace layerproof::verifier {

inline constexpr size_t kMaxClientNonceBytes = 64;

struct ReportServiceOptions {
  std::string verifier_id;
  std::string log_origin;
  // Signs reports (the verifier's key). Required.
  std::shared_ptr<const store::Ed25519PrivateKey> key;
  AuditPolicy policy;
  // Largest report envelope returned (RESOURCE_EXHAUSTED naming its size
  // beyond); below the server's send limit.
  size_t max_report_bytes = check::kMaxReportEnvelopeBytes;
};

// from_unix_nanos >= 0, from < to, prover_id empty or a well-formed node
// id, client_nonce at most kMaxClientNonceBytes; InvalidArgument naming the
// field, e.g.
// "ComplianceReportRequest.to_unix_nanos: got 5, want > from_unix_nanos (9)".
// (previous_tree_size is checked against the checkpoint by Generate.)
absl::Status ValidateComplianceReportRequest(
    const v1::ComplianceReportRequest& request);

class ReportService final : public v1::Report::CallbackService {
 public:
  // `authorizer` must outlive the service.
  ReportService(std::shared_ptr<internal::DbHandles> dbs,
                const rpc::Authorizer& authorizer,
                ReportServiceOptions options);
  ~ReportService() override;
  ReportService(const ReportService&) = delete;
  ReportService& operator=(const ReportService&) = delete;

  grpc::ServerUnaryReactor* GetComplianceReport(
      grpc::CallbackServerContext* context,
      const v1::ComplianceReportRequest* request,
      v1::ComplianceReportResponse* response) override;

  // Validates, builds, signs and records one report; returns the
  // serialised envelope. Serialised with every other call.
  absl::StatusOr<std::string> Generate(
      const v1::ComplianceReportRequest& request);

  // Refuses new reports (UNAVAILABLE) and waits for the one running until
  // `deadline`; whether it finished.
  bool Shutdown(absl::Time deadline);

 private:
  std::shared_ptr<internal::DbHandles> dbs_;
  const rpc::Authorizer& authorizer_;
  const ReportServiceOptions options_;
  absl::Mutex mu_;  // one report at a time
  // Runs Generate off the reactor threads.
  rpc::TaskPool pool_{1};
};

}  // namespace layerproof::verifier

#endif  // LAYERPROOF_VERIFIER_REPORT_SERVICE_H_
