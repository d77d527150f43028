// Whom the verifier attributes a logged record to, read without checking
// signatures (the log verified them on admission, or the verifier did when
// a promise was presented): one home for the scheduler's verdict index, its
// retention rule and the compliance reports. Thread safety: pure.
#ifndef LAYERPROOF_VERIFIER_INTERNAL_ATTRIBUTION_H_
#define LAYERPROOF_VERIFIER_INTERNAL_ATTRIBUTION_H_

#include <string>

#include "layerproof/v1/records.pb.h"

namespace layerproof::verifier::internal {

// The prover_id of a logged commitment envelope; "" when it does not parse.
inline std::string CommitmentProverId(const std::string& envelope_bytes) {
  v1::Envelope env;
  v1::Commitment c;
  if (!env.ParseFromString(envelope_bytes) ||
      !c.ParseFromString(env.payload())) {
    return "";
  }
  return c.prover_id();
}

// The prover a FAIL_UNLOGGED verdict is charged to: the prover_id of the
// SubmissionPromise it carries (Verdict.unlogged_promise); "" when the
// verdict carries no parseable promise.
inline std::string PromisedProverId(const v1::Verdict& verdict) {
  v1::Envelope env;
  v1::SubmissionPromise promise;
  if (!env.ParseFromString(verdict.unlogged_promise()) ||
      !promise.ParseFromString(env.payload())) {
    return "";
  }
  return promise.prover_id();
}

}  // namespace layerproof::verifier::internal

#endif  // LAYERPROOF_VERIFIER_INTERNAL_ATTRIBUTION_H_
