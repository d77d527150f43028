// The checks an audit makes on an opening before re-executing anything
// (re_executor.h step 4): that the opening belongs to the audited
// commitment, is complete and consistent, and that every opened h^k hashes
// to the committed H_k. A failure is the prover's fault (FAIL_OPENING); the
// error's message is the verdict's detail, so it names the field, the value
// and what was wanted, and never a token, an activation, the seed or the
// salt. Thread safety: pure functions.
#ifndef LAYERPROOF_CHECK_INTERNAL_OPENING_CHECKS_H_
#define LAYERPROOF_CHECK_INTERNAL_OPENING_CHECKS_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "layerproof/v1/records.pb.h"
#include "check/bytes.h"
#include "check/re_executor.h"

namespace layerproof::check::internal {

// `commitment` is the verified, validated commitment carried by `envelope`
// (its exact bytes); `layers` the k values that were requested; vocab_size
// the model's. Checks, in order: the header's envelope bytes, layers, salt
// length, token counts, positions, hidden size, token id ranges, the token
// and seed digests, the nonce-derived seed, then each opened layer's size
// and hash. OK, or InvalidArgument whose message says what was wrong.
absl::Status CheckOpening(const Opening& opening,
                          const v1::Commitment& commitment,
                          std::string_view envelope,
                          const std::vector<uint32_t>& layers,
                          int64_t vocab_size);


}  // namespace layerproof::check::internal

#endif  // LAYERPROOF_CHECK_INTERNAL_OPENING_CHECKS_H_
