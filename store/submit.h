// Admission to the log: a submitted envelope is verified and its record
// validated before anything is appended (DESIGN §5: only registered keys
// may submit, and every signature is checked). Anything else is refused with
// a clear error and nothing appended; the leaf stored is the envelope's
// exact bytes. The gRPC Log service (issue 5) calls this for every Submit.
// Thread safety: as Log::Append.
#ifndef LAYERPROOF_STORE_SUBMIT_H_
#define LAYERPROOF_STORE_SUBMIT_H_

#include <cstddef>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "store/envelope.h"
#include "store/log.h"

namespace layerproof::store {

// Verifies `envelope_bytes` (at most `max_bytes`, signed only by keys in
// `keys`, of `payload_type`: kCommitmentPayloadType or kVerdictPayloadType),
// validates the record it carries, and appends the bytes to `log`. The same
// envelope submitted twice returns its original index (duplicate = true).
// Errors: those of VerifyEnvelope (InvalidArgument, PermissionDenied for an
// unregistered key), ParseCommitment / ParseVerdict, an unknown payload type
// (InvalidArgument), or the log's.
absl::StatusOr<AppendResult> SubmitEnvelope(Log& log,
                                            std::string envelope_bytes,
                                            const KeyRing& keys,
                                            std::string_view payload_type,
                                            size_t max_bytes);

}  // namespace layerproof::store

#endif  // LAYERPROOF_STORE_SUBMIT_H_
