#include "verifier/log_service.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "check/bytes.h"
#include "kernels/status.h"
#include "rpc/grpc_status.h"
#include "store/internal/str_cat.h"
#include "verifier/evidence.h"
#include "verifier/internal/finish_now.h"
#include "verifier/validation.h"

namespace layerproof::verifier {
namespace {

using store::internal::Cat;

using check::DigestBytes;
using internal::FinishNow;

absl::Status Checkpoint(const internal::Dbs& db,
                        v1::GetCheckpointResponse& out) {
  LP_ASSIGN_OR_RETURN(*out.mutable_checkpoint(), db.log->LatestCheckpoint());
  LP_ASSIGN_OR_RETURN(uint64_t size, CheckpointSize(out.checkpoint()));
  out.set_tree_size(size);
  return absl::OkStatus();
}

absl::Status InclusionProof(const internal::Dbs& db,
                            const v1::GetInclusionProofRequest& request,
                            v1::GetInclusionProofResponse& out) {
  LP_RETURN_IF_ERROR(ValidateGetInclusionProofRequest(request));
  uint64_t index = request.leaf_index();
  if (request.leaf_case() == v1::GetInclusionProofRequest::kLeafHash) {
    store::Sha256Hash hash;
    std::copy(request.leaf_hash().begin(), request.leaf_hash().end(),
              hash.begin());
    absl::StatusOr<uint64_t> found = db.log->IndexOfLeafHash(hash);
    if (absl::IsNotFound(found.status())) {
      return absl::NotFoundError(
          Cat("GetInclusionProofRequest.leaf_hash: ", store::HexEncode(hash),
              " is not in the log"));
    }
    LP_RETURN_IF_ERROR(found.status());
    index = *found;
  }
  LP_ASSIGN_OR_RETURN(std::string note, db.log->LatestCheckpoint());
  LP_ASSIGN_OR_RETURN(uint64_t latest, CheckpointSize(note));
  const uint64_t size = request.tree_size() == 0 ? latest : request.tree_size();
  if (index >= size) {
    return absl::InvalidArgumentError(
        Cat("GetInclusionProofRequest.leaf_index: got ", index,
            ", want < tree_size (", size, ")"));
  }
  LP_ASSIGN_OR_RETURN(
      *out.mutable_inclusion(),
      MakeInclusion(*db.log, index, size, size == latest ? note : ""));
  return absl::OkStatus();
}

absl::Status ConsistencyProof(const internal::Dbs& db,
                              const v1::GetConsistencyProofRequest& request,
                              v1::GetConsistencyProofResponse& out) {
  LP_RETURN_IF_ERROR(ValidateGetConsistencyProofRequest(request));
  LP_ASSIGN_OR_RETURN(
      std::vector<store::Sha256Hash> proof,
      db.log->ConsistencyProof(request.old_size(), request.new_size()));
  for (const store::Sha256Hash& h : proof) out.add_proof(DigestBytes(h));
  return absl::OkStatus();
}

absl::Status Entries(const internal::Dbs& db,
                     const v1::GetEntriesRequest& request,
                     v1::GetEntriesResponse& out) {
  LP_RETURN_IF_ERROR(ValidateGetEntriesRequest(request));
  const uint64_t size = db.log->Size();
  if (request.start() >= size) {
    return absl::OutOfRangeError(Cat("GetEntriesRequest.start: got ",
                                     request.start(), ", want < log size (",
                                     size, ")"));
  }
  const uint64_t end =
      std::min<uint64_t>(size, request.start() + request.count());
  size_t bytes = 0;
  for (uint64_t i = request.start(); i < end; ++i) {
    LP_ASSIGN_OR_RETURN(std::string entry, db.log->Entry(i));
    bytes += entry.size();
    if (bytes > kMaxEntriesResponseBytes && out.entries_size() > 0) break;
    out.add_entries(std::move(entry));
  }
  return absl::OkStatus();
}

}  // namespace

grpc::ServerUnaryReactor* LogService::Submit(
    grpc::CallbackServerContext* context, const v1::SubmitRequest* request,
    v1::SubmitResponse* response) {
  if (!serves_submit_) {
    return FinishNow(context,
                     absl::UnimplementedError(
                         "Log.Submit is served on this verifier's submission"
                         " listener (serve verifier --submit-listen), not"
                         " here"));
  }
  if (absl::Status s =
          authorizer_.Check(*context, rpc::Role::kProver, "Log.Submit");
      !s.ok()) {
    return FinishNow(context, s);
  }
  if (absl::Status s = ValidateSubmitRequest(*request); !s.ok()) {
    return FinishNow(context, s);
  }
  // Lifetime: gRPC owns the default reactor; it ends after the Finish that
  // a submission worker calls once every envelope is admitted.
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  std::vector<std::string> envelopes(request->envelopes().begin(),
                                     request->envelopes().end());
  // The authenticated submitter (none under --insecure): refusals are
  // charged to it, and it may submit only its own commitments.
  submitter_.Submit(
      std::move(envelopes), rpc::Authorizer::PeerCommonName(*context),
      [reactor, response](absl::StatusOr<v1::SubmitResponse> result) {
        if (result.ok()) *response = std::move(*result);
        reactor->Finish(rpc::ToGrpcStatus(result.status()));
      });
  return reactor;
}

grpc::ServerUnaryReactor* LogService::GetCheckpoint(
    grpc::CallbackServerContext* context, const v1::GetCheckpointRequest*,
    v1::GetCheckpointResponse* response) {
  absl::StatusOr<rpc::PeerLease> lease =
      peers_.Admit(*context, "Log.GetCheckpoint");
  if (!lease.ok()) return FinishNow(context, lease.status());
  absl::StatusOr<internal::Dbs> db = dbs_->Get();
  if (!db.ok()) return FinishNow(context, db.status());
  return FinishNow(context, Checkpoint(*db, *response));
}

grpc::ServerUnaryReactor* LogService::GetInclusionProof(
    grpc::CallbackServerContext* context,
    const v1::GetInclusionProofRequest* request,
    v1::GetInclusionProofResponse* response) {
  absl::StatusOr<rpc::PeerLease> lease =
      peers_.Admit(*context, "Log.GetInclusionProof");
  if (!lease.ok()) return FinishNow(context, lease.status());
  absl::StatusOr<internal::Dbs> db = dbs_->Get();
  if (!db.ok()) return FinishNow(context, db.status());
  return FinishNow(context, InclusionProof(*db, *request, *response));
}

grpc::ServerUnaryReactor* LogService::GetConsistencyProof(
    grpc::CallbackServerContext* context,
    const v1::GetConsistencyProofRequest* request,
    v1::GetConsistencyProofResponse* response) {
  absl::StatusOr<rpc::PeerLease> lease =
      peers_.Admit(*context, "Log.GetConsistencyProof");
  if (!lease.ok()) return FinishNow(context, lease.status());
  absl::StatusOr<internal::Dbs> db = dbs_->Get();
  if (!db.ok()) return FinishNow(context, db.status());
  return FinishNow(context, ConsistencyProof(*db, *request, *response));
}

grpc::ServerUnaryReactor* LogService::GetEntries(
    grpc::CallbackServerContext* context, const v1::GetEntriesRequest* request,
    v1::GetEntriesResponse* response) {
  absl::StatusOr<rpc::PeerLease> lease =
      peers_.Admit(*context, "Log.GetEntries");
  if (!lease.ok()) return FinishNow(context, lease.status());
  absl::StatusOr<internal::Dbs> db = dbs_->Get();
  if (!db.ok()) return FinishNow(context, db.status());
  return FinishNow(context, Entries(*db, *request, *response));
}

}  // namespace layerproof::verifier
