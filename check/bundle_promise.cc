// verify-bundle's check of a FAIL_UNLOGGED verdict's promise
// (internal/bundle_parts.h CheckUnloggedPromise).
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "google/protobuf/stubs/logging.h"
#include "store/commitment.h"
#include "store/envelope.h"
#include "check/internal/bundle_parts.h"
#include "check/bytes.h"

namespace layerproof::check::internal::bundle_check {

BundleCheckResult CheckUnloggedPromise(const Parts& p,
                                       const BundleTrust& trust) {
  const v1::Verdict& v = *p.verdict;
  store::KeyRing ring;
  for (const store::Ed25519PublicKey& k : trust.prover_keys) ring.Add(k);
  google::protobuf::LogSilencer silence;
  absl::StatusOr<store::VerifiedEnvelope> verified = store::VerifyEnvelope(
      v.unlogged_promise(), ring, store::kSubmissionPromisePayloadType,
      store::kMaxPromiseEnvelopeBytes);
  if (!verified.ok()) {
    return Fail(BoundedDetail(absl::StrCat("Verdict.unlogged_promise: ",
                                           verified.status().message())));
  }
  absl::StatusOr<v1::SubmissionPromise> promise =
      store::ParseSubmissionPromise(verified->payload);
  if (!promise.ok()) {
    return Fail(BoundedDetail(absl::StrCat("Verdict.unlogged_promise: ",
                                           promise.status().message())));
  }
  std::vector<std::string> problems;
  if (promise->request_id() != v.request_id()) {
    problems.push_back(
        absl::StrCat("the promise is for request ", Hex(promise->request_id()),
                     ", the verdict's is ", Hex(v.request_id())));
  }
  if (promise->commitment_leaf_hash() != v.commitment_leaf_hash()) {
    problems.push_back(absl::StrCat(
        "the promise is for leaf ", Hex(promise->commitment_leaf_hash()),
        ", the verdict names ", Hex(v.commitment_leaf_hash())));
  }
  if (v.created_at_unix_nanos() <= promise->log_by_unix_nanos()) {
    problems.push_back(
        "the verdict was reached before the promise's log_by deadline");
  }
  if (!problems.empty()) {
    return Fail(BoundedDetail(absl::StrJoin(problems, "; ")));
  }
  return Pass(BoundedDetail(absl::StrCat(
      "promise signed by prover \"", promise->prover_id(), "\" for leaf ",
      Hex(promise->commitment_leaf_hash()), ", due ",
      absl::FormatTime(absl::RFC3339_sec,
                       absl::FromUnixNanos(promise->log_by_unix_nanos()),
                       absl::UTCTimeZone()),
      "; that the log did not hold it then is the verifier's word")));
}

}  // namespace layerproof::check::internal::bundle_check
