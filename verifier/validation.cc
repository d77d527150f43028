#include "verifier/validation.h"

#include <string>
#include <string_view>

#include "absl/strings/numbers.h"
#include "layerproof/v1/records.pb.h"
#include "store/commitment.h"
#include "store/internal/str_cat.h"

namespace layerproof::verifier {
namespace {

using store::internal::Cat;

absl::Status Invalid(std::string_view field, std::string_view got,
                     std::string_view want) {
  return absl::InvalidArgumentError(Cat(field, ": got ", got, ", want ", want));
}

absl::Status CheckRequestId(std::string_view field, const std::string& id) {
  if (id.size() != store::kRequestIdBytes) {
    return Invalid(field, Cat(id.size(), " bytes"),
                   Cat(store::kRequestIdBytes));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateSubmitRequest(const v1::SubmitRequest& request) {
  const int n = request.envelopes_size();
  if (n < 1 || n > kMaxSubmitEnvelopes) {
    return Invalid("SubmitRequest.envelopes", Cat(n, " envelopes"),
                   Cat("1..", kMaxSubmitEnvelopes));
  }
  return absl::OkStatus();
}

absl::Status ValidateGetInclusionProofRequest(
    const v1::GetInclusionProofRequest& request) {
  switch (request.leaf_case()) {
    case v1::GetInclusionProofRequest::kLeafIndex:
      return absl::OkStatus();
    case v1::GetInclusionProofRequest::kLeafHash:
      if (request.leaf_hash().size() != store::kDigestBytes) {
        return Invalid("GetInclusionProofRequest.leaf_hash",
                       Cat(request.leaf_hash().size(), " bytes"),
                       Cat(store::kDigestBytes));
      }
      return absl::OkStatus();
    default:
      return Invalid("GetInclusionProofRequest.leaf", "neither",
                     "leaf_index or leaf_hash");
  }
}

absl::Status ValidateGetConsistencyProofRequest(
    const v1::GetConsistencyProofRequest& request) {
  if (request.old_size() > request.new_size()) {
    return Invalid("GetConsistencyProofRequest.old_size",
                   Cat(request.old_size()),
                   Cat("<= new_size (", request.new_size(), ")"));
  }
  return absl::OkStatus();
}

absl::Status ValidateGetEntriesRequest(const v1::GetEntriesRequest& request) {
  if (request.count() < 1 || request.count() > kMaxEntriesPerRequest) {
    return Invalid("GetEntriesRequest.count", Cat(request.count()),
                   Cat("1..", kMaxEntriesPerRequest));
  }
  return absl::OkStatus();
}

absl::Status ValidateRequestAuditRequest(const v1::RequestAuditRequest& request,
                                         uint32_t num_layers) {
  if (absl::Status s = CheckRequestId("RequestAuditRequest.request_id",
                                      request.request_id());
      !s.ok()) {
    return s;
  }
  if (request.all_layers()) return absl::OkStatus();
  for (int i = 0; i < request.layers_size(); ++i) {
    const uint32_t l = request.layers(i);
    const uint32_t lo = i == 0 ? 1 : request.layers(i - 1) + 1;
    if (l < lo || l > num_layers) {
      return Invalid(Cat("RequestAuditRequest.layers[", i, "]"), Cat(l),
                     Cat(lo, "..", num_layers,
                         " (blocks of the model, strictly ascending)"));
    }
  }
  return absl::OkStatus();
}

absl::Status ValidateGetVerdictRequest(const v1::GetVerdictRequest& request) {
  return CheckRequestId("GetVerdictRequest.request_id", request.request_id());
}

absl::Status ValidateGetEvidenceRequest(const v1::GetEvidenceRequest& request) {
  return CheckRequestId("GetEvidenceRequest.request_id", request.request_id());
}

absl::StatusOr<VerdictListing> ValidateListVerdictsRequest(
    const v1::ListVerdictsRequest& request) {
  VerdictListing out;
  if (request.page_size() > kMaxVerdictPageSize) {
    return Invalid("ListVerdictsRequest.page_size", Cat(request.page_size()),
                   Cat("0..", kMaxVerdictPageSize));
  }
  if (request.page_size() != 0) out.page_size = request.page_size();
  if (!v1::VerdictOutcome_IsValid(request.outcome())) {
    return Invalid("ListVerdictsRequest.outcome",
                   Cat(static_cast<int>(request.outcome())),
                   "a VerdictOutcome");
  }
  if (request.to_unix_nanos() != 0 &&
      request.from_unix_nanos() > request.to_unix_nanos()) {
    return Invalid("ListVerdictsRequest.from_unix_nanos",
                   Cat(request.from_unix_nanos()),
                   Cat("<= to_unix_nanos (", request.to_unix_nanos(), ")"));
  }
  if (!request.page_token().empty() &&
      !absl::SimpleAtoi(request.page_token(), &out.start)) {
    return Invalid("ListVerdictsRequest.page_token",
                   Cat("\"", request.page_token().substr(0, 64), "\""),
                   "a token from a previous response");
  }
  return out;
}

}  // namespace layerproof::verifier
