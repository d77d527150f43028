// Request validation for the verifier's Log and Audit services (STYLE
// "Errors"): each function checks one request's shape before any work is
// done and returns InvalidArgument naming the field, the value and the
// limit, e.g. "RequestAuditRequest.request_id: got 3 bytes, want 16".
// Checks that need the log or the store (a tree size beyond the log, an
// unknown request) are made by the handlers.
//
// Thread safety: pure functions.
#ifndef LAYERPROOF_VERIFIER_VALIDATION_H_
#define LAYERPROOF_VERIFIER_VALIDATION_H_

#include <cstdint>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "layerproof/v1/audit.pb.h"
#include "layerproof/v1/log.pb.h"

namespace layerproof::verifier {

inline constexpr int kMaxSubmitEnvelopes = 256;
inline constexpr uint32_t kMaxEntriesPerRequest = 1000;
inline constexpr uint32_t kMaxVerdictPageSize = 1000;
inline constexpr uint32_t kDefaultVerdictPageSize = 100;

// 1..256 envelopes. (Each envelope's own checks give its SubmitResult.)
absl::Status ValidateSubmitRequest(const v1::SubmitRequest& request);
// A leaf named by index or by a 32-byte leaf hash.
absl::Status ValidateGetInclusionProofRequest(
    const v1::GetInclusionProofRequest& request);
// old_size <= new_size.
absl::Status ValidateGetConsistencyProofRequest(
    const v1::GetConsistencyProofRequest& request);
// count in 1..1000.
absl::Status ValidateGetEntriesRequest(const v1::GetEntriesRequest& request);

// request_id of 16 bytes; unless all_layers, layers strictly ascending in
// 1..num_layers.
absl::Status ValidateRequestAuditRequest(const v1::RequestAuditRequest& request,
                                         uint32_t num_layers);
absl::Status ValidateGetVerdictRequest(const v1::GetVerdictRequest& request);
absl::Status ValidateGetEvidenceRequest(const v1::GetEvidenceRequest& request);

struct VerdictListing {
  uint32_t page_size = kDefaultVerdictPageSize;
  uint64_t start = 0;  // the leaf index the page token names
};
// page_size 0..1000 (0: 100), a known outcome, from <= to when to is set,
// and a page token from a previous response (a decimal leaf index).
absl::StatusOr<VerdictListing> ValidateListVerdictsRequest(
    const v1::ListVerdictsRequest& request);

}  // namespace layerproof::verifier

#endif  // LAYERPROOF_VERIFIER_VALIDATION_H_
