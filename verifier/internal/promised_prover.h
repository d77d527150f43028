// The prover a FAIL_UNLOGGED verdict is charged to: the prover_id of the
// SubmissionPromise the verdict carries (Verdict.unlogged_promise), whose
// signature the verifier checked when the promise was presented. One home
// for the scheduler's verdict index and the compliance reports.
// Thread safety: pure.
#ifndef LAYERPROOF_VERIFIER_INTERNAL_PROMISED_PROVER_H_
#define LAYERPROOF_VERIFIER_INTERNAL_PROMISED_PROVER_H_

#include <string>

#include "layerproof/v1/records.pb.h"

namespace layerproof::verifier::internal {

// "" when the verdict carries no parseable promise.
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

#endif  // LAYERPROOF_VERIFIER_INTERNAL_PROMISED_PROVER_H_
