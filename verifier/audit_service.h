// The verifier's Audit service (audit.proto; DESIGN §1 step 4, §6, §7) over
// the gRPC callback API:
//   - RequestAudit (auditor role): audits one logged commitment now, with
//     the layers given, all layers, or a fresh policy draw; the audit runs
//     on the scheduler's pool and the worker finishes the call once the
//     signed verdict is logged;
//   - GetVerdict: every verdict on a request, oldest first (NOT_FOUND when
//     the request is neither logged nor refused);
//   - ListVerdicts: verdicts in log order, filtered by prover, outcome and
//     creation time, paged (the page token is a log index);
//   - GetEvidence: an EvidenceBundle (verifier/evidence.h), refused with
//     RESOURCE_EXHAUSTED naming its size when it is over max_evidence_bytes
//     (which must stay below the server's send limit);
//   - PresentPromise (anyone): judges a prover's SubmissionPromise past its
//     deadline on the scheduler's pool (AuditScheduler::PresentPromise).
// The reads are bounded lookups answered on the reactor thread.
//
// Thread safety: as a gRPC service, every handler may run concurrently.
#ifndef LAYERPROOF_VERIFIER_AUDIT_SERVICE_H_
#define LAYERPROOF_VERIFIER_AUDIT_SERVICE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "layerproof/v1/audit.grpc.pb.h"
#include "rpc/peer_limiter.h"
#include "rpc/roles.h"
#include "verifier/audit_scheduler.h"
#include "verifier/internal/db_handles.h"

namespace layerproof::verifier {

class AuditService final : public v1::Audit::CallbackService {
 public:
  // `scheduler` and `authorizer` must outlive the service. `num_layers` is
  // L of the verifier's model (bounds RequestAuditRequest.layers).
  // The open calls (GetVerdict, ListVerdicts, PresentPromise) are each
  // admitted by `peers`, which must outlive the service too.
  AuditService(std::shared_ptr<internal::DbHandles> dbs,
               AuditScheduler& scheduler, const rpc::Authorizer& authorizer,
               rpc::PeerLimiter& peers, std::string log_origin,
               uint32_t num_layers, size_t max_evidence_bytes)
      : dbs_(std::move(dbs)),
        scheduler_(scheduler),
        authorizer_(authorizer),
        peers_(peers),
        log_origin_(std::move(log_origin)),
        num_layers_(num_layers),
        max_evidence_bytes_(max_evidence_bytes) {}

  grpc::ServerUnaryReactor* RequestAudit(
      grpc::CallbackServerContext* context,
      const v1::RequestAuditRequest* request,
      v1::RequestAuditResponse* response) override;
  grpc::ServerUnaryReactor* GetVerdict(
      grpc::CallbackServerContext* context,
      const v1::GetVerdictRequest* request,
      v1::GetVerdictResponse* response) override;
  grpc::ServerUnaryReactor* ListVerdicts(
      grpc::CallbackServerContext* context,
      const v1::ListVerdictsRequest* request,
      v1::ListVerdictsResponse* response) override;
  grpc::ServerUnaryReactor* GetEvidence(grpc::CallbackServerContext* context,
                                        const v1::GetEvidenceRequest* request,
                                        v1::EvidenceBundle* response) override;
  grpc::ServerUnaryReactor* PresentPromise(
      grpc::CallbackServerContext* context,
      const v1::PresentPromiseRequest* request,
      v1::PresentPromiseResponse* response) override;

 private:
  std::shared_ptr<internal::DbHandles> dbs_;
  AuditScheduler& scheduler_;
  const rpc::Authorizer& authorizer_;
  rpc::PeerLimiter& peers_;
  const std::string log_origin_;
  const uint32_t num_layers_;
  const size_t max_evidence_bytes_;
};

}  // namespace layerproof::verifier

#endif  // LAYERPROOF_VERIFIER_AUDIT_SERVICE_H_
