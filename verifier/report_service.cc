#include "verifier/report_service.h"

#include <optional>
#include <utility>
#include <vector>

#include "kernels/status.h"
#include "store/checkpoint.h"
#include "store/commitment.h"
#include "store/envelope.h"
#include "store/internal/str_cat.h"
#include "store/merkle.h"
#include "rpc/grpc_status.h"
#include "verifier/internal/finish_now.h"
#include "verifier/report_builder.h"

namespace layerproof::verifier {
namespace {

using internal::FinishNow;
using store::internal::Cat;

constexpr char kRpc[] = "Report.GetComplianceReport";

}  // namespace

absl::Status ValidateComplianceReportRequest(
    const v1::ComplianceReportRequest& request) {
  const int64_t from = request.from_unix_nanos();
  const int64_t to = request.to_unix_nanos();
  if (from < 0) {
    return absl::InvalidArgumentError(Cat(
        "ComplianceReportRequest.from_unix_nanos: got ", from, ", want >= 0"));
  }
  if (to <= from) {
    return absl::InvalidArgumentError(
        Cat("ComplianceReportRequest.to_unix_nanos: got ", to,
            ", want > from_unix_nanos (", from, ")"));
  }
  if (!request.prover_id().empty()) {
    LP_RETURN_IF_ERROR(store::ValidateNodeId(
        "ComplianceReportRequest.prover_id", request.prover_id()));
  }
  if (request.client_nonce().size() > kMaxClientNonceBytes) {
    return absl::InvalidArgumentError(
        Cat("ComplianceReportRequest.client_nonce: got ",
            request.client_nonce().size(),
            " bytes, want <= ", kMaxClientNonceBytes));
  }
  return absl::OkStatus();
}

ReportService::ReportService(std::shared_ptr<internal::DbHandles> dbs,
                             const rpc::Authorizer& authorizer,
                             ReportServiceOptions options)
    : dbs_(std::move(dbs)),
      authorizer_(authorizer),
      options_(std::move(options)) {}

ReportService::~ReportService() { pool_.Stop(absl::InfiniteFuture()); }

bool ReportService::Shutdown(absl::Time deadline) {
  return pool_.Stop(deadline);
}

absl::StatusOr<std::string> ReportService::Generate(
    const v1::ComplianceReportRequest& request) {
  LP_RETURN_IF_ERROR(ValidateComplianceReportRequest(request));
  if (options_.key == nullptr) {
    return absl::FailedPreconditionError("the report service has no key");
  }
  absl::MutexLock lock(&mu_);
  LP_ASSIGN_OR_RETURN(internal::Dbs db, dbs_->Get());
  ReportInputs in;
  in.from_unix_nanos = request.from_unix_nanos();
  in.to_unix_nanos = request.to_unix_nanos();
  in.prover_id = request.prover_id();
  in.verifier_id = options_.verifier_id;
  in.log_origin = options_.log_origin;
  in.policy = options_.policy;
  in.generated_at = absl::Now();
  // The latest signed checkpoint, checked under the verifier's own key.
  LP_ASSIGN_OR_RETURN(in.checkpoint_note, db.log->LatestCheckpoint());
  const store::CheckpointVerifier verifier(options_.verifier_id,
                                           options_.key->public_key());
  LP_ASSIGN_OR_RETURN(in.checkpoint,
                      verifier.Verify(in.checkpoint_note, options_.log_origin));
  in.client_nonce = request.client_nonce();
  // Consistency with the previous report's checkpoint (the caller's, or
  // the last one issued), verified before the report claims it.
  if (request.previous_tree_size() > in.checkpoint.size) {
    return absl::InvalidArgumentError(
        Cat("ComplianceReportRequest.previous_tree_size: got ",
            request.previous_tree_size(), ", want <= ", in.checkpoint.size,
            " (the verifier's latest checkpoint)"));
  }
  if (request.previous_tree_size() > 0) {
    ReportCheckpoint prev;
    prev.tree_size = request.previous_tree_size();
    LP_ASSIGN_OR_RETURN(const store::Sha256Hash root,
                        db.log->Root(prev.tree_size));
    prev.root_hash.assign(root.begin(), root.end());
    in.previous = std::move(prev);
    in.previous_from_caller = true;
  } else {
    LP_ASSIGN_OR_RETURN(in.previous, db.store->LastReport());
  }
  if (in.previous.has_value()) {
    const ReportCheckpoint& prev = *in.previous;
    if (prev.tree_size > in.checkpoint.size) {
      return absl::InternalError(Cat(
          "the log's checkpoint of ", in.checkpoint.size,
          " entries is older than the last report's (", prev.tree_size, ")"));
    }
    LP_ASSIGN_OR_RETURN(
        in.consistency_proof,
        db.log->ConsistencyProof(prev.tree_size, in.checkpoint.size));
    store::Sha256Hash prev_root{};
    if (prev.root_hash.size() != prev_root.size()) {
      return absl::DataLossError("the last report's root hash is malformed");
    }
    std::copy(prev.root_hash.begin(), prev.root_hash.end(), prev_root.begin());
    if (absl::Status s = store::VerifyConsistency(
            prev.tree_size, in.checkpoint.size, prev_root, in.checkpoint.root,
            in.consistency_proof);
        !s.ok()) {
      return absl::InternalError(
          Cat("the log at ", in.checkpoint.size,
              " entries is not consistent with the last report's checkpoint "
              "at ",
              prev.tree_size, ": ", std::string(s.message())));
    }
  }
  LP_ASSIGN_OR_RETURN(nlohmann::json report,
                      BuildReport(*db.log, *db.store, in));
  LP_ASSIGN_OR_RETURN(
      std::string envelope,
      store::SignEnvelope(
          check::kReportPayloadType,
          // Every string is valid UTF-8 (ids are ASCII, verdict details
          // are checked); replace rather than throw all the same.
          report.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace),
          *options_.key));
  if (envelope.size() > options_.max_report_bytes) {
    return absl::ResourceExhaustedError(
        Cat("compliance report: got ", envelope.size(), " bytes, want <= ",
            options_.max_report_bytes, " (narrow the window or the prover)"));
  }
  // Issued only once its checkpoint is recorded for the next report.
  ReportCheckpoint issued;
  issued.tree_size = in.checkpoint.size;
  issued.root_hash.assign(in.checkpoint.root.begin(), in.checkpoint.root.end());
  issued.generated_at_unix_nanos = absl::ToUnixNanos(in.generated_at);
  AuditStoreBatch batch;
  batch.SetLastReport(issued);
  LP_RETURN_IF_ERROR(db.store->Write(batch));
  return envelope;
}

grpc::ServerUnaryReactor* ReportService::GetComplianceReport(
    grpc::CallbackServerContext* context,
    const v1::ComplianceReportRequest* request,
    v1::ComplianceReportResponse* response) {
  if (absl::Status s = authorizer_.Check(*context, rpc::Role::kAuditor, kRpc);
      !s.ok()) {
    return FinishNow(context, s);
  }
  if (absl::Status s = ValidateComplianceReportRequest(*request); !s.ok()) {
    return FinishNow(context, s);
  }
  // Lifetime: gRPC owns the default reactor; it ends after the Finish that
  // the report worker calls (or that Stop's drop callback calls).
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  const bool posted = pool_.Post(rpc::TaskPool::Task{
      [this, reactor, request, response] {
        absl::StatusOr<std::string> envelope = Generate(*request);
        if (envelope.ok()) response->set_report_envelope(std::move(*envelope));
        reactor->Finish(rpc::ToGrpcStatus(envelope.status()));
      },
      [reactor] {
        reactor->Finish(rpc::ToGrpcStatus(
            absl::UnavailableError("the verifier is shutting down")));
      }});
  if (!posted) {
    reactor->Finish(rpc::ToGrpcStatus(
        absl::UnavailableError("the verifier is shutting down")));
  }
  return reactor;
}

}  // namespace layerproof::verifier
