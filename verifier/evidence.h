// Evidence bundles (audit.proto EvidenceBundle; DESIGN §1 step 5): the
// commitment and the verdict on it, each with an inclusion proof against
// the SAME (latest) signed checkpoint, plus the opening the audit received
// and the log's origin. With the model files and the log's and prover's
// public keys, a third party re-checks the verdict offline
// (`layerproof verify-bundle`). Bundles hold the salt, tokens and
// activations: they are confidential (DESIGN §5 "Privacy").
//
// Thread safety: pure functions over thread-safe stores.
#ifndef LAYERPROOF_VERIFIER_EVIDENCE_H_
#define LAYERPROOF_VERIFIER_EVIDENCE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "check/bundle_check.h"
#include "layerproof/v1/audit.pb.h"
#include "layerproof/v1/inference.pb.h"
#include "store/log.h"
#include "verifier/audit_store.h"

namespace layerproof::verifier {

// The tree size a signed checkpoint note states (its body's second line).
// InvalidArgument for a malformed note. Does not check the signature.
absl::StatusOr<uint64_t> CheckpointSize(std::string_view note);

// Leaf `index` of `log` with its inclusion proof at `size` against the
// signed note `checkpoint` (whose size is `size`).
absl::StatusOr<v1::LogInclusion> MakeInclusion(const store::Log& log,
                                               uint64_t index, uint64_t size,
                                               const std::string& checkpoint);

// The bundle of one verdict on `request_id`: the one logged at
// `verdict_leaf_index`, or the latest. NotFound (naming the request or the
// index) when there is no such verdict.
absl::StatusOr<v1::EvidenceBundle> BuildEvidence(
    const store::Log& log, const AuditStore& store,
    const std::string& log_origin, std::string_view request_id,
    std::optional<uint64_t> verdict_leaf_index);

}  // namespace layerproof::verifier

#endif  // LAYERPROOF_VERIFIER_EVIDENCE_H_
