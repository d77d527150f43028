#include "store/submit.h"

#include <utility>

#include "store/status.h"

namespace layerproof::store {

absl::StatusOr<AppendResult> SubmitEnvelope(Log& log,
                                            std::string envelope_bytes,
                                            const KeyRing& keys,
                                            std::string_view payload_type,
                                            size_t max_bytes) {
  if (payload_type != kCommitmentPayloadType &&
      payload_type != kVerdictPayloadType) {
    return absl::InvalidArgumentError(
        "SubmitEnvelope: payload type \"" + std::string(payload_type) +
        "\" is neither a commitment nor a verdict");
  }
  LP_ASSIGN_OR_RETURN(
      const VerifiedEnvelope verified,
      VerifyEnvelope(envelope_bytes, keys, payload_type, max_bytes));
  if (payload_type == kCommitmentPayloadType) {
    LP_RETURN_IF_ERROR(ParseCommitment(verified.payload).status());
  } else {
    LP_RETURN_IF_ERROR(ParseVerdict(verified.payload).status());
  }
  return log.Append(std::move(envelope_bytes));
}

}  // namespace layerproof::store
