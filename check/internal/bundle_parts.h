// The pieces of check/bundle_check.cc that its re-execution check
// (check/bundle_reexecute.cc) shares: the bundle's parts as parsed, the
// result constructors and the verdict descriptions used in check details.
// Private to those two files.
//
// Thread safety: value types and functions over them.
#ifndef LAYERPROOF_CHECK_INTERNAL_BUNDLE_PARTS_H_
#define LAYERPROOF_CHECK_INTERNAL_BUNDLE_PARTS_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "check/bundle_check.h"
#include "google/protobuf/repeated_field.h"
#include "layerproof/v1/audit.pb.h"
#include "layerproof/v1/inference.pb.h"
#include "store/checkpoint.h"

namespace layerproof::check::internal::bundle_check {

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
// Check details stay bounded whatever the bundle holds: a list of layers
// names at most this many, a detail at most this many bytes.
inline constexpr int kMaxListedLayers = 16;
inline constexpr size_t kMaxDetailBytes = 4096;

// "[1,3]"; past kMaxListedLayers entries, the first ones and
// ", ... (N more)]".
std::string Layers(const google::protobuf::RepeatedField<uint32_t>& layers);
// `detail` made printable (kernels/printable.h), then cut to at most
// kMaxDetailBytes (on a UTF-8 boundary) plus " ... (N more bytes)" when it
// is longer: hostile fields quoted in a detail (a request id, a status
// message) can neither make it unbounded nor put raw bytes in front of a
// person.
std::string BoundedDetail(std::string detail);

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

// A FAIL_UNLOGGED verdict (a broken SubmissionPromise): the bundle has no
// commitment, the verdict carries the promise instead.
inline bool UnloggedPromise(const std::optional<v1::Verdict>& v) {
  return v.has_value() && v->outcome() == v1::FAIL_UNLOGGED;
}

// For a FAIL_UNLOGGED verdict (bundle_promise.cc), in place of
// commitment_signature: the promise the verdict carries verifies under the
// given prover keys, is for the verdict's request and leaf, and its log_by
// deadline precedes the verdict. Re-deriving the verdict would need a proof
// that the log did not hold the leaf, which RFC 6962 trees do not give, so
// re_execution is not applicable (exit 3).
BundleCheckResult CheckUnloggedPromise(const Parts& p,
                                       const BundleTrust& trust);

// The last check, "re_execution" (bundle_reexecute.cc): re-runs the audit
// the verdict records on `engine`, from the bundle's opening, and compares
// the re-derived verdict with the bundle's. Not applicable where the
// verdict is never re-derived offline (FAIL_TIMEOUT, FAIL_SIGNATURE,
// FAIL_OPENING: with an opening, after re-execution here agrees) or the
// machine cannot re-execute.
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

}  // namespace layerproof::check::internal::bundle_check

#endif  // LAYERPROOF_CHECK_INTERNAL_BUNDLE_PARTS_H_
