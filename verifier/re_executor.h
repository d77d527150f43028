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
//      reproduces every output token -> FAIL_MISMATCH{layer L+1};
// and otherwise PASS. With AuditPlan::all_layers only the opening's header
// is fetched; every layer is recomputed from the tokens and the first
// differing hash is reported (fault localisation).
//
// The opening requested for blocks S is {l-1 : l in S, l > 1} ∪ {L}: each
// drawn block's input (h^0 is recomputed from the tokens, never opened) and
// the head's input.
//
// Prover misbehaviour is always a verdict, never an error: Audit fails only
// for the verifier's own faults: an executor error, a bad plan
// (InvalidArgument naming AuditPlan's field), or a commitment longer than
// this engine's max_context but within the model's max_positions
// (FailedPrecondition: configure a longer context to audit it).
// Thread safety: Audit is const and may run on many threads at once (the
// engine's Embed / RunBlock / RunHead / Forward are const).
#ifndef LAYERPROOF_VERIFIER_RE_EXECUTOR_H_
#define LAYERPROOF_VERIFIER_RE_EXECUTOR_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "kernels/model/engine.h"
#include "layerproof/v1/opening.pb.h"
#include "layerproof/v1/records.pb.h"
#include "store/envelope.h"

namespace layerproof::verifier {

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
  // prover named `prover_id`, by `deadline`. DeadlineExceeded when it has
  // not fully arrived by then; any other error means the opening failed
  // (refused, malformed, too large) and its message says why.
  virtual absl::StatusOr<Opening> Open(std::string_view prover_id,
                                       std::string_view request_id,
                                       const std::vector<uint32_t>& layers,
                                       absl::Time deadline) = 0;
};

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

}  // namespace layerproof::verifier

#endif  // LAYERPROOF_VERIFIER_RE_EXECUTOR_H_
