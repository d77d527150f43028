// The one home of the client-side log checks (RFC 9162 §2.1.3-§2.1.4 over
// C2SP signed-note checkpoints): a LogInclusion against a checkpoint the
// verifier signed, and a newer checkpoint against the last one trusted.
// The prover's submitter, the CLI client, verify-bundle, the demo and the
// integration tests all check through these, so that a weaker second copy
// cannot exist. Messages name the field that failed.
// Thread safety: pure functions.
#ifndef LAYERPROOF_CHECK_LOG_PROOFS_H_
#define LAYERPROOF_CHECK_LOG_PROOFS_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "google/protobuf/repeated_ptr_field.h"
#include "layerproof/v1/inference.pb.h"
#include "store/checkpoint.h"
#include "store/merkle.h"

namespace layerproof::check {

// A proof's hashes as they arrive on the wire (repeated bytes, 32 each):
// InvalidArgument naming `field` for one of another length, or for more
// than 64 (no tree of < 2^64 leaves has a longer RFC 9162 proof).
absl::StatusOr<std::vector<store::Sha256Hash>> ProofHashes(
    const google::protobuf::RepeatedPtrField<std::string>& hashes,
    std::string_view field);

// The trusted log: its checkpoint key and origin line.
struct LogTrust {
  const store::CheckpointVerifier* log_key = nullptr;  // required
  std::string origin;                                   // required
};

// `leaf` (the exact bytes the log holds, e.g. a commitment envelope) is at
// inclusion.leaf_index of the tree inclusion.checkpoint describes: the
// checkpoint verifies under trust.log_key with trust.origin, its size is
// inclusion.tree_size, and the proof leads to its root. Returns that
// checkpoint. `field` names the LogInclusion in messages (e.g.
// "GenerateResponse.receipt.inclusion").
absl::StatusOr<store::Checkpoint> CheckInclusion(
    const v1::LogInclusion& inclusion, std::string_view leaf,
    const LogTrust& trust, std::string_view field);

// As CheckInclusion, against a checkpoint already verified: the proof (wire
// hashes) leads from the leaf at leaf_index to its root, in a tree of
// checkpoint.size leaves. The leaf is given by its bytes or by its RFC 9162
// leaf hash.
absl::Status CheckInclusionIn(const store::Checkpoint& checkpoint,
                              uint64_t leaf_index,
                              const google::protobuf::RepeatedPtrField<
                                  std::string>& proof,
                              std::string_view leaf, std::string_view field);
absl::Status CheckLeafHashInclusionIn(
    const store::Checkpoint& checkpoint, uint64_t leaf_index,
    const google::protobuf::RepeatedPtrField<std::string>& proof,
    const store::Sha256Hash& leaf_hash, std::string_view field);

// `next` may follow `last` (both verified): not smaller, the same root at
// the same size, and otherwise `proof` (the wire hashes of
// Log.GetConsistencyProof(last.size, next.size); unused when last.size is 0
// or the sizes are equal) proves the older tree a prefix of the newer.
// DataLoss naming `field` (a log that went back or forked), or
// InvalidArgument for a malformed proof.
absl::Status CheckCheckpointFollows(
    const store::Checkpoint& last, const store::Checkpoint& next,
    const google::protobuf::RepeatedPtrField<std::string>& proof,
    std::string_view field);

// Whether CheckCheckpointFollows needs a consistency proof for this pair.
inline bool NeedsConsistencyProof(const store::Checkpoint& last,
                                  const store::Checkpoint& next) {
  return last.size > 0 && next.size > last.size;
}

}  // namespace layerproof::check

#endif  // LAYERPROOF_CHECK_LOG_PROOFS_H_
