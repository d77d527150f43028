// The one validation of an opening's header shape (opening.proto
// OpeningHeader), before anything is sized from it: the layers are exactly
// those requested, and positions and hidden_size are what the commitment
// fixes (prompt + output - 1, and its hidden_size, 1..kMaxHiddenSize).
// The verifier's streaming opening client, the re-executor's full opening
// check and the offline bundle re-execution all start with it; the rest of
// an opening (salt, ids, digests, layer hashes) is the re-executor's
// (check/internal/opening_checks.h).
// Thread safety: pure function.
#ifndef LAYERPROOF_CHECK_OPENING_HEADER_H_
#define LAYERPROOF_CHECK_OPENING_HEADER_H_

#include <cstdint>
#include <span>

#include "absl/status/status.h"
#include "layerproof/v1/opening.pb.h"

namespace layerproof::check {

// OK, or InvalidArgument naming the OpeningHeader field, what it holds and
// what was wanted.
absl::Status CheckOpeningHeaderShape(const v1::OpeningHeader& header,
                                     std::span<const uint32_t> layers,
                                     uint64_t positions, uint64_t hidden_size);

}  // namespace layerproof::check

#endif  // LAYERPROOF_CHECK_OPENING_HEADER_H_
