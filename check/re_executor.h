// The re-executor (DESIGN §1 step 4, §6): audits one commitment by opening
// the prover's activations and re-executing the drawn blocks and the head
// on this verifier's own hardware, bit for bit.
//
// Checks, in order (docs/protocol.md "Audit"); the first that fails decides
// the verdict:
//   1. the envelope's signature, against the registered prover keys
//        -> FAIL_SIGNATURE;
//   2. model digest, spec version, layers and width against this model
//        -> FAIL_MODEL;
//   3. the opening arrives before its deadline -> FAIL_TIMEOUT;
//   4. the opening is well-formed and matches the commitment: the header's
//      envelope, the token, seed and nonce-seed digests, the counts, and
//      every opened h^k hashing to H_k -> FAIL_OPENING;
//   5. h^0 recomputed from the tokens (when block 1 is drawn) and each
//      drawn block l recomputed from h^(l-1) hash to H_0 / H_l
//        -> FAIL_MISMATCH{layer};
//   6. the head (final norm, LM head, sampler with the committed seed)
//      reproduces every output token, and the output obeys the committed
//      stop rule (store::CheckStopRule) -> FAIL_MISMATCH{layer L+1};
// and otherwise PASS. The verdict's audited_layers records the blocks the
// audit planned to re-execute, ascending; a failed audit stops at its first
// failure, so blocks after it (and the head) may not have run; on PASS all
// ran. With AuditPlan::all_layers only the opening's header
// is fetched; every layer is recomputed from the tokens and the first
// differing hash is reported (fault localisation).
//
// The model check (2) also wants Commitment.max_context <= the model's
// max_positions: a prover cannot claim a context this model does not have.
//
// A head mismatch records expected = Commitment.output_digest and got = the
// salted TokenDigest of what the output had to be:
//   - the sampler's tokens, when it did not reproduce the output;
//   - output[0..allowed), when generation had to stop after `allowed`
//     tokens (a stop id before the last token);
//   - output ++ [-1], when generation had to go on (the finish reason is
//     STOP but the last token is no stop id and no limit was reached): -1,
//     never a token id, stands for the tokens that had to follow;
//   - output ++ [-2], when the tokens are right but the committed
//     finish_reason is not the one the stop rule gives (e.g. MAX_TOKENS
//     while the last token is a stop id): -2 stands for "another reason".
// The detail says which, in the rule's words.
//
// The opening requested for blocks S is {l-1 : l in S, l > 1} ∪ {L}: each
// drawn block's input (h^0 is recomputed from the tokens, never opened) and
// the head's input.
//
// Prover misbehaviour is always a verdict, never an error; a verdict's
// detail is in the verifier's words (never text the prover chose). Audit
// fails only for the verifier's own faults (the scheduler then retries the
// audit, and closes it INCONCLUSIVE after bounded attempts:
// audit_scheduler.h "Closing"): an executor error, a bad plan
// (InvalidArgument naming AuditPlan's field), a commitment longer than this
// engine's max_context but within the model's max_positions
// (FailedPrecondition: configure a longer context to audit it), or an opening
// source that cannot reach the prover for reasons of the verifier's
// (OpeningUnavailableToVerifier, or Unavailable: see OpeningSource::Open).
// Thread safety: Audit is const and may run on many threads at once (the
// engine's Embed / RunBlock / RunHead / Forward are const).
#ifndef LAYERPROOF_CHECK_RE_EXECUTOR_H_
#define LAYERPROOF_CHECK_RE_EXECUTOR_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "kernels/model/engine.h"
#include "layerproof/v1/opening.pb.h"
#include "layerproof/v1/records.pb.h"
#include "store/envelope.h"

namespace layerproof::check {

// An opening as received: the header and the opened layers' rows.
struct Opening {
  v1::OpeningHeader header;
  // k -> h^k rows [positions][hidden_size].
  std::map<uint32_t, std::vector<float>> layers;
};

// Where openings come from: the prover's Opening service over gRPC
// (opening_client.h), or a fake in tests.
class OpeningSource {
 public:
  virtual ~OpeningSource() = default;
  // Opens `request_id` at layers `layers` (k values, ascending) from the
  // prover named `prover_id`, by `deadline`. `positions` and `hidden_size`
  // are what the audited commitment fixes (prompt + output - 1 rows of
  // hidden_size floats per layer): a source refuses a header that differs
  // before it allocates anything. A source retries transient failures (the
  // prover unreachable for a while) itself until the deadline. Returns:
  //   - DeadlineExceeded when the opening has not fully arrived by the
  //     deadline (FAIL_TIMEOUT);
  //   - OpeningUnavailableToVerifier (or Unavailable) when the verifier
  //     cannot open for reasons of its own (no Opening address registered
  //     for the prover, an unknown prover): no verdict, the audit stays
  //     pending;
  //   - any other error when the opening failed through the prover
  //     (refused, malformed, too large): FAIL_OPENING, with the message as
  //     the verdict's detail, so it is in the verifier's words and never
  //     carries the prover's own error text or its address.
  virtual absl::StatusOr<Opening> Open(std::string_view prover_id,
                                       std::string_view request_id,
                                       const std::vector<uint32_t>& layers,
                                       uint64_t positions, uint64_t hidden_size,
                                       absl::Time deadline) = 0;
};

// The error an OpeningSource returns when the verifier itself cannot open
// (see OpeningSource::Open): FailedPrecondition with `message`, marked so
// that no prover-reported status (whatever its code) is ever taken for it.
absl::Status OpeningUnavailableToVerifier(std::string_view message);
bool IsOpeningUnavailableToVerifier(const absl::Status& status);

struct AuditPlan {
  // Blocks to re-execute, ascending, in 1..L. Ignored with all_layers.
  std::vector<uint32_t> layers;
  bool all_layers = false;
  // The 32-byte seed the plan was drawn from (recorded in the verdict).
  std::string audit_seed;
};

struct AuditOutcome {
  // The verdict, complete except verifier_id and created_at_unix_nanos,
  // which the caller sets before signing.
  v1::Verdict verdict;
  // What the audit received and checked, for the evidence bundle; empty
  // when it stopped before opening.
  std::optional<Opening> opening;
};

// `text` made fit for Verdict.detail: printable ASCII only (anything else
// becomes '?', so it is valid UTF-8), at most store::kMaxVerdictDetailBytes
// bytes. The one such function: every verdict's detail, the re-executor's
// and the verifier's, goes through it.
std::string VerdictDetail(std::string_view text);

class ReExecutor {
 public:
  // `engine` (with its model and executor) must outlive this.
  // `model_digest` is the 32-byte digest of the engine's model.
  ReExecutor(const kernels::model::Engine& engine, std::string model_digest);

  // Audits the commitment in `envelope` (its exact bytes, logged at
  // `leaf_index`) according to `plan`: its signature is checked against
  // `keys` (the registered provers), the opening fetched from `source`
  // with `opening_timeout`.
  absl::StatusOr<AuditOutcome> Audit(std::string_view envelope,
                                     uint64_t leaf_index, const AuditPlan& plan,
                                     const store::KeyRing& keys,
                                     OpeningSource& source,
                                     absl::Duration opening_timeout) const;

 private:
  const kernels::model::Engine& engine_;
  std::string model_digest_;
};

}  // namespace layerproof::check

#endif  // LAYERPROOF_CHECK_RE_EXECUTOR_H_
