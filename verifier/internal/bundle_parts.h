// The pieces of verifier/bundle_check.cc that its re-execution check
// (verifier/bundle_reexecute.cc) shares: the bundle's parts as parsed, the
// result constructors and the verdict descriptions used in check details.
// Private to those two files.
//
// Thread safety: value types and functions over them.
#ifndef LAYERPROOF_VERIFIER_INTERNAL_BUNDLE_PARTS_H_
#define LAYERPROOF_VERIFIER_INTERNAL_BUNDLE_PARTS_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "google/protobuf/repeated_field.h"
#include "layerproof/v1/audit.pb.h"
#include "layerproof/v1/inference.pb.h"
#include "store/checkpoint.h"
#include "verifier/bundle_check.h"

namespace layerproof::verifier::internal::bundle_check {

using State = BundleCheckResult::State;

inline BundleCheckResult Pass(std::string detail) {
  return {"", State::kPass, std::move(detail)};
}
inline BundleCheckResult Fail(std::string detail) {
  return {"", State::kFail, std::move(detail)};
}
inline BundleCheckResult NotApplicable(std::string detail) {
  return {"", State::kNotApplicable, std::move(detail)};
}

// The outcome's name, or "outcome N" for one this build does not know.
std::string Outcome(v1::VerdictOutcome o);
// "FAIL_MISMATCH at layer 2 (expected <hex>, got <hex>)", or the outcome.
std::string Describe(const v1::Verdict& v);
// "[1,3]".
std::string Layers(const google::protobuf::RepeatedField<uint32_t>& layers);

// The parts of the bundle, parsed but not yet trusted.
struct Parts {
  v1::EvidenceBundle bundle;
  // The verdict and commitment payloads, when their envelopes parse and the
  // payloads are valid records (signatures not checked).
  std::optional<v1::Verdict> verdict;
  std::optional<v1::Commitment> commitment;
  // The commitment's request id read without validating anything (a
  // FAIL_SIGNATURE verdict may be about an invalid commitment).
  std::optional<std::string> commitment_request_id;
  std::string commitment_leaf_hash;  // LeafHash(commitment_envelope)
  // Set by the checks that establish them.
  std::optional<store::Checkpoint> checkpoint;  // signed by the log key
};

// A FAIL_SIGNATURE verdict on a commitment the log refused: no audit ran.
inline bool RefusedAtSubmission(const v1::Verdict& v) {
  return v.outcome() == v1::FAIL_SIGNATURE && !v.has_commitment_leaf_index();
}

// The last check, "re_execution" (bundle_reexecute.cc): re-runs the audit
// the verdict records on `engine`, from the bundle's opening, and compares
// the re-derived verdict with the bundle's. Not applicable where the
// verdict cannot be re-derived offline (FAIL_TIMEOUT, a refusal at
// submission, FAIL_OPENING without an opening) or the machine cannot
// re-execute.
BundleCheckResult CheckReExecution(Parts& p,
                                   const kernels::model::Engine& engine,
                                   std::string_view model_digest,
                                   const BundleTrust& trust);

// Runs every check of VerifyEvidenceBundle on the parsed `bundle`, in
// order, reporting each to `progress` (may be empty) before it runs.
BundleVerification RunChecks(
    v1::EvidenceBundle bundle, const kernels::model::Engine& engine,
    std::string_view model_digest, const BundleTrust& trust,
    const std::function<void(int done, int total, std::string_view step)>&
        progress);

}  // namespace layerproof::verifier::internal::bundle_check

#endif  // LAYERPROOF_VERIFIER_INTERNAL_BUNDLE_PARTS_H_
