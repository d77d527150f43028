#include "check/log_proofs.h"

#include <algorithm>

#include "kernels/status.h"
#include "store/envelope.h"
#include "store/internal/str_cat.h"

namespace layerproof::check {
namespace {

using store::internal::Cat;

// RFC 9162 §2.1.3.1: a path has at most ceil(log2(tree_size)) hashes.
constexpr int kMaxProofHashes = 64;

absl::Status Prefixed(const absl::Status& s, std::string_view field) {
  return absl::Status(s.code(), Cat(field, ": ", std::string(s.message())));
}

}  // namespace

absl::StatusOr<std::vector<store::Sha256Hash>> ProofHashes(
    const google::protobuf::RepeatedPtrField<std::string>& hashes,
    std::string_view field) {
  if (hashes.size() > kMaxProofHashes) {
    return absl::InvalidArgumentError(Cat(field, ": ", hashes.size(),
                                          " hashes, want <= ",
                                          kMaxProofHashes));
  }
  std::vector<store::Sha256Hash> proof;
  proof.reserve(hashes.size());
  for (int i = 0; i < hashes.size(); ++i) {
    const std::string& h = hashes[i];
    store::Sha256Hash x{};
    if (h.size() != x.size()) {
      return absl::InvalidArgumentError(
          Cat(field, "[", i, "]: ", h.size(), " bytes, want 32"));
    }
    std::copy(h.begin(), h.end(), x.begin());
    proof.push_back(x);
  }
  return proof;
}

absl::Status CheckLeafHashInclusionIn(
    const store::Checkpoint& checkpoint, uint64_t leaf_index,
    const google::protobuf::RepeatedPtrField<std::string>& proof,
    const store::Sha256Hash& leaf_hash, std::string_view field) {
  LP_ASSIGN_OR_RETURN(const std::vector<store::Sha256Hash> hashes,
                      ProofHashes(proof, Cat(field, ".inclusion_proof")));
  const absl::Status verified = store::VerifyInclusion(
      leaf_hash, leaf_index, checkpoint.size, hashes, checkpoint.root);
  if (!verified.ok()) {
    return Prefixed(verified, Cat(field, ".inclusion_proof (leaf ", leaf_index,
                                  " of ", checkpoint.size, ")"));
  }
  return absl::OkStatus();
}

absl::Status CheckInclusionIn(
    const store::Checkpoint& checkpoint, uint64_t leaf_index,
    const google::protobuf::RepeatedPtrField<std::string>& proof,
    std::string_view leaf, std::string_view field) {
  return CheckLeafHashInclusionIn(checkpoint, leaf_index, proof,
                                  store::LeafHash(leaf), field);
}

absl::StatusOr<store::Checkpoint> CheckInclusion(
    const v1::LogInclusion& inclusion, std::string_view leaf,
    const LogTrust& trust, std::string_view field) {
  if (trust.log_key == nullptr || trust.origin.empty()) {
    return absl::FailedPreconditionError(
        Cat(field, ": no trusted log key and origin to check it against"));
  }
  absl::StatusOr<store::Checkpoint> checkpoint =
      trust.log_key->Verify(inclusion.checkpoint(), trust.origin);
  if (!checkpoint.ok()) {
    return Prefixed(checkpoint.status(), Cat(field, ".checkpoint"));
  }
  if (checkpoint->size != inclusion.tree_size()) {
    return absl::InvalidArgumentError(
        Cat(field, ".tree_size: ", inclusion.tree_size(),
            ", but the checkpoint is of size ", checkpoint->size));
  }
  LP_RETURN_IF_ERROR(CheckInclusionIn(*checkpoint, inclusion.leaf_index(),
                                      inclusion.inclusion_proof(), leaf,
                                      field));
  return checkpoint;
}

absl::Status CheckCheckpointFollows(
    const store::Checkpoint& last, const store::Checkpoint& next,
    const google::protobuf::RepeatedPtrField<std::string>& proof,
    std::string_view field) {
  if (next.size < last.size) {
    return absl::DataLossError(Cat(field, ": size ", next.size,
                                   " is below the last verified checkpoint's ",
                                   last.size, " (the log went back)"));
  }
  if (next.size == last.size) {
    if (next.root != last.root) {
      return absl::DataLossError(Cat(field, ": size ", next.size,
                                     " with a root other than the last "
                                     "verified checkpoint's (a forked log)"));
    }
    return absl::OkStatus();
  }
  if (last.size == 0) return absl::OkStatus();
  LP_ASSIGN_OR_RETURN(const std::vector<store::Sha256Hash> hashes,
                      ProofHashes(proof, Cat(field, " consistency proof")));
  const absl::Status consistent = store::VerifyConsistency(
      last.size, next.size, last.root, next.root, hashes);
  if (!consistent.ok()) {
    return absl::DataLossError(
        Cat(field, ": size ", next.size,
            " is not consistent with the last verified checkpoint (size ",
            last.size, "): ", std::string(consistent.message())));
  }
  return absl::OkStatus();
}

}  // namespace layerproof::check
