#include "verifier/evidence.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "kernels/status.h"
#include "layerproof/v1/records.pb.h"
#include "store/checkpoint.h"
#include "store/envelope.h"
#include "store/internal/str_cat.h"
#include "check/bytes.h"

namespace layerproof::verifier {

using store::internal::Cat;

absl::StatusOr<uint64_t> CheckpointSize(std::string_view note) {
  const size_t blank = note.find("\n\n");
  if (blank == std::string_view::npos) {
    return absl::InvalidArgumentError(
        "checkpoint: no blank line before the signatures");
  }
  LP_ASSIGN_OR_RETURN(store::Checkpoint c,
                      store::ParseCheckpointBody(note.substr(0, blank + 1)));
  return c.size;
}

absl::StatusOr<v1::LogInclusion> MakeInclusion(const store::Log& log,
                                               uint64_t index, uint64_t size,
                                               const std::string& checkpoint) {
  LP_ASSIGN_OR_RETURN(std::vector<store::Sha256Hash> proof,
                      log.InclusionProof(index, size));
  v1::LogInclusion out;
  out.set_leaf_index(index);
  out.set_tree_size(size);
  out.set_checkpoint(checkpoint);
  for (const store::Sha256Hash& h : proof) {
    out.add_inclusion_proof(check::DigestBytes(h));
  }
  return out;
}

absl::StatusOr<v1::EvidenceBundle> BuildEvidence(
    const store::Log& log, const AuditStore& store,
    const std::string& log_origin, std::string_view request_id,
    std::optional<uint64_t> verdict_leaf_index) {
  const std::string request_hex = store::HexEncode(store::AsBytes(request_id));
  LP_ASSIGN_OR_RETURN(std::vector<uint64_t> verdicts,
                      store.VerdictsOf(request_id));
  if (verdicts.empty()) {
    return absl::NotFoundError(
        Cat("GetEvidenceRequest.request_id: ", request_hex, " has no verdict"));
  }
  uint64_t index = verdicts.back();
  if (verdict_leaf_index.has_value()) {
    if (std::find(verdicts.begin(), verdicts.end(), *verdict_leaf_index) ==
        verdicts.end()) {
      return absl::NotFoundError(Cat(
          "GetEvidenceRequest.verdict_leaf_index: got ", *verdict_leaf_index,
          ", want the index of a verdict on ", request_hex));
    }
    index = *verdict_leaf_index;
  }
  v1::EvidenceBundle bundle;
  bundle.set_format_version(check::kEvidenceFormatVersion);
  bundle.set_log_origin(log_origin);
  LP_ASSIGN_OR_RETURN(*bundle.mutable_verdict_envelope(), log.Entry(index));
  v1::Envelope envelope;
  if (!envelope.ParseFromString(bundle.verdict_envelope())) {
    return absl::DataLossError(Cat("log entry ", index, ": malformed"));
  }
  LP_ASSIGN_OR_RETURN(v1::Verdict verdict,
                      store::ParseVerdict(envelope.payload()));

  LP_ASSIGN_OR_RETURN(std::string checkpoint, log.LatestCheckpoint());
  LP_ASSIGN_OR_RETURN(uint64_t size, CheckpointSize(checkpoint));
  if (index >= size) {
    return absl::UnavailableError(Cat("the latest checkpoint (size ", size,
                                      ") does not cover verdict ", index,
                                      " yet; retry"));
  }
  LP_ASSIGN_OR_RETURN(*bundle.mutable_verdict_inclusion(),
                      MakeInclusion(log, index, size, checkpoint));

  LP_ASSIGN_OR_RETURN(std::optional<v1::AuditRecord> record,
                      store.Audit(verdict.audit_seed()));
  if (verdict.has_commitment_leaf_index()) {
    const uint64_t c = verdict.commitment_leaf_index();
    LP_ASSIGN_OR_RETURN(*bundle.mutable_commitment_envelope(), log.Entry(c));
    LP_ASSIGN_OR_RETURN(*bundle.mutable_commitment_inclusion(),
                        MakeInclusion(log, c, size, checkpoint));
  } else if (record.has_value()) {
    bundle.set_commitment_envelope(record->refused_envelope());
  }
  if (record.has_value() && record->has_opening()) {
    *bundle.mutable_opening() = record->opening();
    for (const v1::OpenedLayer& layer : record->opened_layers()) {
      *bundle.add_opened_layers() = layer;
    }
  }
  return bundle;
}

}  // namespace layerproof::verifier
