// The one receipt check: what a client verifies about a GenerateResponse
// against the GenerateRequest it sent, with nothing but public keys (no
// gRPC, no RocksDB). `layerproof generate --prover`, `layerproof
// verify-receipt`, the demo's clients and the integration tests' client all
// use it. In order, each failure naming the field:
//   envelope       the commitment envelope verifies under a trusted prover
//                  key, its payload is a valid, canonically encoded
//                  Commitment (store/envelope.h ParseCommitment)
//   identity       request_id, prover_id (when trusted) and model_digest
//                  (when pinned) are the response's and the trust's
//   request        the commitment binds the request as sent: sampling (or
//                  greedy when absent), max_tokens, ignore_eos, the stop
//                  ids (the request's own, or stop_ids_from_model when it
//                  named none), the nonce, and the seed (SeedFromNonce of
//                  the nonce, or the seed the request fixed)
//   tokens         prompt and output ids (the request's own prompt ids when
//                  it sent ids), their counts and salted digests, the seed
//                  digest, the finish reason and the stop rule
//   log            the receipt: an inclusion against a checkpoint signed by
//                  the trusted log key (check/log_proofs.h), or a promise
//                  signed by the same prover key for this leaf and log,
//                  with a deadline
// What it cannot check alone: that a text prompt was tokenized honestly
// (the response's prompt ids are what the commitment binds, and a client
// with the tokenizer compares them), and that the model computed the
// output (that is the audit's work, which the inclusion makes certain).
// Thread safety: pure functions.
#ifndef LAYERPROOF_CHECK_RECEIPT_H_
#define LAYERPROOF_CHECK_RECEIPT_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "check/log_proofs.h"
#include "layerproof/v1/inference.pb.h"
#include "layerproof/v1/records.pb.h"
#include "store/checkpoint.h"
#include "store/envelope.h"

namespace layerproof::check {

// What the client trusts.
struct ReceiptTrust {
  // The prover's keys; the envelope must verify under one of them.
  store::KeyRing prover_keys;
  // The expected Commitment.prover_id; empty accepts any.
  std::string prover_id;
  // The expected Commitment.model_digest (32 bytes); empty accepts any.
  std::string model_digest;
  // The log the commitment must be in.
  LogTrust log;
};

// A receipt that passed.
struct CheckedReceipt {
  v1::Commitment commitment;
  // Set when the receipt is an inclusion: the checkpoint it is proved in.
  std::optional<store::Checkpoint> checkpoint;
  uint64_t leaf_index = 0;
  // Set when the receipt is a promise: the inclusion is still to come
  // (fetch it with Opening.GetCommitment, then CheckPromisedInclusion;
  // after log_by_unix_nanos, present it with Audit.PresentPromise).
  std::optional<v1::SubmissionPromise> promise;
};

// Checks `response` against `request` (the request exactly as sent). OK
// with what was established, or DataLoss (the response contradicts the
// request or itself: the prover misbehaved), InvalidArgument (malformed
// bytes) or Unauthenticated (no trusted key signed it), naming the field.
absl::StatusOr<CheckedReceipt> CheckReceipt(const v1::GenerateRequest& request,
                                            const v1::GenerateResponse& response,
                                            const ReceiptTrust& trust);

// The inclusion a promised receipt was followed by: it is of this
// receipt's commitment envelope (`envelope`, the response's bytes) in the
// trusted log. Fills receipt->checkpoint and leaf_index.
absl::Status CheckPromisedInclusion(const v1::LogInclusion& inclusion,
                                    const std::string& envelope,
                                    const ReceiptTrust& trust,
                                    CheckedReceipt* receipt);

}  // namespace layerproof::check

#endif  // LAYERPROOF_CHECK_RECEIPT_H_
