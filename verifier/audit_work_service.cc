#include "verifier/audit_work_service.h"

#include <string>

#include "verifier/internal/finish_now.h"

namespace layerproof::verifier {
namespace {

using internal::FinishNow;

absl::Status CheckWorkerId(const std::string& id) {
  bool ok = !id.empty() && id.size() <= 128;
  for (char c : id) ok = ok && c >= 0x20 && c <= 0x7e;
  return ok ? absl::OkStatus()
            : absl::InvalidArgumentError(
                  "LeaseAuditRequest.worker_id: want 1 to 128 printable ASCII "
                  "characters");
}

}  // namespace

grpc::ServerUnaryReactor* AuditWorkService::Lease(
    grpc::CallbackServerContext* context, const v1::LeaseAuditRequest* request,
    v1::LeaseAuditResponse* response) {
  if (absl::Status s =
          authorizer_.Check(*context, rpc::Role::kAuditor, "AuditWork.Lease");
      !s.ok()) {
    return FinishNow(context, s);
  }
  if (absl::Status s = CheckWorkerId(request->worker_id()); !s.ok()) {
    return FinishNow(context, s);
  }
  absl::StatusOr<std::optional<v1::AuditTask>> task =
      leases_.Lease(request->worker_id());
  if (task.ok() && task->has_value()) {
    *response->mutable_task() = **std::move(task);
  }
  return FinishNow(context, task.status());
}

grpc::ServerUnaryReactor* AuditWorkService::Renew(
    grpc::CallbackServerContext* context,
    const v1::RenewAuditLeaseRequest* request,
    v1::RenewAuditLeaseResponse* response) {
  if (absl::Status s =
          authorizer_.Check(*context, rpc::Role::kAuditor, "AuditWork.Renew");
      !s.ok()) {
    return FinishNow(context, s);
  }
  absl::StatusOr<int64_t> expires = leases_.Renew(request->lease_id());
  if (expires.ok()) response->set_lease_expires_unix_nanos(*expires);
  return FinishNow(context, expires.status());
}

grpc::ServerUnaryReactor* AuditWorkService::Complete(
    grpc::CallbackServerContext* context,
    const v1::CompleteAuditRequest* request,
    v1::CompleteAuditResponse* /*response*/) {
  if (absl::Status s = authorizer_.Check(*context, rpc::Role::kAuditor,
                                         "AuditWork.Complete");
      !s.ok()) {
    return FinishNow(context, s);
  }
  return FinishNow(context, leases_.Complete(*request));
}

}  // namespace layerproof::verifier
