// The verifier's AuditWork service (audit_work.proto): auditor workers
// lease audits, renew their leases and complete them over gRPC, against
// the AuditLeases board. Every call needs role `auditor` under mTLS (and
// passes on a plaintext loopback server). Handlers never block: Lease
// answers at once, with a task or without (workers poll).
//
// Thread safety: as a gRPC service, every handler may run concurrently.
#ifndef LAYERPROOF_VERIFIER_AUDIT_WORK_SERVICE_H_
#define LAYERPROOF_VERIFIER_AUDIT_WORK_SERVICE_H_

#include "layerproof/v1/audit_work.grpc.pb.h"
#include "rpc/roles.h"
#include "verifier/audit_leases.h"

namespace layerproof::verifier {

class AuditWorkService final : public v1::AuditWork::CallbackService {
 public:
  // `leases` and `authorizer` must outlive the service.
  AuditWorkService(AuditLeases& leases, const rpc::Authorizer& authorizer)
      : leases_(leases), authorizer_(authorizer) {}

  grpc::ServerUnaryReactor* Lease(grpc::CallbackServerContext* context,
                                  const v1::LeaseAuditRequest* request,
                                  v1::LeaseAuditResponse* response) override;
  grpc::ServerUnaryReactor* Renew(
      grpc::CallbackServerContext* context,
      const v1::RenewAuditLeaseRequest* request,
      v1::RenewAuditLeaseResponse* response) override;
  grpc::ServerUnaryReactor* Complete(
      grpc::CallbackServerContext* context,
      const v1::CompleteAuditRequest* request,
      v1::CompleteAuditResponse* response) override;

 private:
  AuditLeases& leases_;
  const rpc::Authorizer& authorizer_;
};

}  // namespace layerproof::verifier

#endif  // LAYERPROOF_VERIFIER_AUDIT_WORK_SERVICE_H_
