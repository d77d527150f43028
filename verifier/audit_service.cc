#include "verifier/audit_service.h"

#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "kernels/status.h"
#include "store/internal/str_cat.h"
#include "rpc/grpc_status.h"
#include "verifier/evidence.h"
#include "check/bytes.h"
#include "verifier/internal/finish_now.h"
#include "verifier/validation.h"

namespace layerproof::verifier {
namespace {

using store::internal::Cat;

using internal::FinishNow;
using check::Hex;

absl::Status Verdicts(const internal::Dbs& db,
                      const v1::GetVerdictRequest& request,
                      v1::GetVerdictResponse& out) {
  LP_RETURN_IF_ERROR(ValidateGetVerdictRequest(request));
  LP_ASSIGN_OR_RETURN(std::vector<uint64_t> indices,
                      db.store->VerdictsOf(request.request_id()));
  if (indices.empty()) {
    LP_ASSIGN_OR_RETURN(std::optional<uint64_t> logged,
                        db.store->CommitmentIndex(request.request_id()));
    if (!logged.has_value()) {
      return absl::NotFoundError(
          Cat("GetVerdictRequest.request_id: ", Hex(request.request_id()),
              " is not logged"));
    }
  }
  for (uint64_t i : indices) {
    v1::VerdictRecord* r = out.add_verdicts();
    LP_ASSIGN_OR_RETURN(*r->mutable_verdict_envelope(), db.log->Entry(i));
    r->set_leaf_index(i);
  }
  return absl::OkStatus();
}

absl::Status List(const internal::Dbs& db,
                  const v1::ListVerdictsRequest& request,
                  v1::ListVerdictsResponse& out) {
  LP_ASSIGN_OR_RETURN(VerdictListing listing,
                      ValidateListVerdictsRequest(request));
  VerdictFilter filter;
  filter.prover_id = request.prover_id();
  filter.outcome = static_cast<int>(request.outcome());
  filter.from_unix_nanos = request.from_unix_nanos();
  filter.to_unix_nanos = request.to_unix_nanos();
  LP_ASSIGN_OR_RETURN(
      VerdictPage page,
      db.store->ListVerdicts(filter, listing.start, listing.page_size));
  for (uint64_t i : page.leaf_indices) {
    v1::VerdictRecord* r = out.add_verdicts();
    LP_ASSIGN_OR_RETURN(*r->mutable_verdict_envelope(), db.log->Entry(i));
    r->set_leaf_index(i);
  }
  if (page.next.has_value()) out.set_next_page_token(Cat(*page.next));
  return absl::OkStatus();
}

}  // namespace

grpc::ServerUnaryReactor* AuditService::RequestAudit(
    grpc::CallbackServerContext* context,
    const v1::RequestAuditRequest* request,
    v1::RequestAuditResponse* response) {
  if (absl::Status s = authorizer_.Check(*context, rpc::Role::kAuditor,
                                         "Audit.RequestAudit");
      !s.ok()) {
    return FinishNow(context, s);
  }
  if (absl::Status s = ValidateRequestAuditRequest(*request, num_layers_);
      !s.ok()) {
    return FinishNow(context, s);
  }
  absl::StatusOr<internal::Dbs> db = dbs_->Get();
  if (!db.ok()) return FinishNow(context, db.status());
  absl::StatusOr<std::optional<uint64_t>> index =
      db->store->CommitmentIndex(request->request_id());
  if (!index.ok()) return FinishNow(context, index.status());
  if (!index->has_value()) {
    return FinishNow(
        context,
        absl::NotFoundError(Cat("RequestAuditRequest.request_id: ",
                                Hex(request->request_id()), " is not logged")));
  }
  // Lifetime: gRPC owns the default reactor; it ends after the Finish that
  // the audit worker calls once the verdict is logged (or the audit fails).
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  std::vector<uint32_t> layers;
  if (!request->all_layers()) {
    layers.assign(request->layers().begin(), request->layers().end());
  }
  scheduler_.RequestAudit(
      request->request_id(), **index, std::move(layers), request->all_layers(),
      [reactor, response](absl::StatusOr<v1::VerdictRecord> verdict) {
        if (verdict.ok()) *response->mutable_verdict() = std::move(*verdict);
        reactor->Finish(rpc::ToGrpcStatus(verdict.status()));
      });
  return reactor;
}

grpc::ServerUnaryReactor* AuditService::GetVerdict(
    grpc::CallbackServerContext* context, const v1::GetVerdictRequest* request,
    v1::GetVerdictResponse* response) {
  absl::StatusOr<rpc::PeerLease> lease = peers_.Admit(*context, "Audit.GetVerdict");
  if (!lease.ok()) return FinishNow(context, lease.status());
  absl::StatusOr<internal::Dbs> db = dbs_->Get();
  if (!db.ok()) return FinishNow(context, db.status());
  return FinishNow(context, Verdicts(*db, *request, *response));
}

grpc::ServerUnaryReactor* AuditService::ListVerdicts(
    grpc::CallbackServerContext* context,
    const v1::ListVerdictsRequest* request,
    v1::ListVerdictsResponse* response) {
  absl::StatusOr<rpc::PeerLease> lease = peers_.Admit(*context, "Audit.ListVerdicts");
  if (!lease.ok()) return FinishNow(context, lease.status());
  absl::StatusOr<internal::Dbs> db = dbs_->Get();
  if (!db.ok()) return FinishNow(context, db.status());
  return FinishNow(context, List(*db, *request, *response));
}

grpc::ServerUnaryReactor* AuditService::GetEvidence(
    grpc::CallbackServerContext* context, const v1::GetEvidenceRequest* request,
    v1::EvidenceBundle* response) {
  // A bundle holds the salt, tokens and activations (DESIGN §5 "Privacy").
  if (absl::Status s =
          authorizer_.Check(*context, rpc::Role::kAuditor, "Audit.GetEvidence");
      !s.ok()) {
    return FinishNow(context, s);
  }
  if (absl::Status s = ValidateGetEvidenceRequest(*request); !s.ok()) {
    return FinishNow(context, s);
  }
  absl::StatusOr<internal::Dbs> db = dbs_->Get();
  if (!db.ok()) return FinishNow(context, db.status());
  std::optional<uint64_t> verdict_index;
  if (request->has_verdict_leaf_index()) {
    verdict_index = request->verdict_leaf_index();
  }
  absl::StatusOr<v1::EvidenceBundle> bundle = BuildEvidence(
      *db->log, *db->store, log_origin_, request->request_id(), verdict_index);
  if (!bundle.ok()) return FinishNow(context, bundle.status());
  // Refused here, with its size, rather than failing inside gRPC past the
  // server's send limit.
  const size_t size = bundle->ByteSizeLong();
  if (size > max_evidence_bytes_) {
    return FinishNow(
        context,
        absl::ResourceExhaustedError(Cat(
            "EvidenceBundle: got ", size,
            " bytes, want <= ", max_evidence_bytes_,
            " (VerifierOptions.max_evidence_bytes; the opening it carries is "
            "too large to send)")));
  }
  *response = std::move(*bundle);
  return FinishNow(context, absl::OkStatus());
}

grpc::ServerUnaryReactor* AuditService::PresentPromise(
    grpc::CallbackServerContext* context,
    const v1::PresentPromiseRequest* request,
    v1::PresentPromiseResponse* response) {
  absl::StatusOr<rpc::PeerLease> admitted =
      peers_.Admit(*context, "Audit.PresentPromise");
  if (!admitted.ok()) return FinishNow(context, admitted.status());
  // Held until the promise is judged: queued presentations count too.
  auto lease = std::make_shared<rpc::PeerLease>(*std::move(admitted));
  // Lifetime: gRPC owns the default reactor; it ends after the Finish the
  // scheduler's worker calls once the promise is judged.
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  scheduler_.PresentPromise(
      request->promise_envelope(),
      [reactor, response,
       lease](absl::StatusOr<AuditScheduler::PromiseJudgement> judged) {
        if (judged.ok()) {
          if (judged->logged_index.has_value()) {
            response->set_commitment_leaf_index(*judged->logged_index);
          } else if (judged->verdict.has_value()) {
            *response->mutable_verdict() = std::move(*judged->verdict);
          }
        }
        reactor->Finish(rpc::ToGrpcStatus(judged.status()));
      });
  return reactor;
}

}  // namespace layerproof::verifier
