// The contents of the log's records (proto/layerproof/v1/records.proto):
// the salted digests a Commitment carries instead of tokens and seeds
// (DESIGN §5 "Privacy"), and the structural checks every Commitment and
// Verdict passes before it is signed or after it is parsed.
//
//   TokenDigest = SHA-256("layerproof.tokens.v1\0" ‖ u32 len(salt) ‖ salt
//                         ‖ u64 count ‖ i32 id[0] ‖ … ‖ i32 id[count-1])
//   SeedDigest  = SHA-256("layerproof.seed.v1\0" ‖ u32 len(salt) ‖ salt
//                         ‖ u64 seed)
//
// integers little-endian, "\0" one zero byte ending the tag; the salt is
// framed as in the layer hashes (kernels/model/layer_hash.h). A client that
// holds its salt recomputes both from the tokens it received.
//
// Validation checks what a record says about itself (sizes, ranges, enum
// values, consistency between fields); it never consults a model or the
// log. Its messages name the field, the value and what was wanted, e.g.
// "Commitment.layer_hashes[3]: got 31 bytes, want 32".
//
// Thread safety: pure functions.
#ifndef LAYERPROOF_STORE_COMMITMENT_H_
#define LAYERPROOF_STORE_COMMITMENT_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "layerproof/v1/records.pb.h"
#include "store/crypto.h"

namespace layerproof::store {

// The per-request secret salt is this long (DESIGN §5).
inline constexpr size_t kSaltBytes = 32;
inline constexpr size_t kRequestIdBytes = 16;
inline constexpr size_t kDigestBytes = 32;
inline constexpr size_t kMaxClientNonceBytes = 64;
inline constexpr size_t kMaxNodeIdChars = 256;  // prover_id, verifier_id
inline constexpr size_t kMaxVerdictDetailBytes = 4096;
// A signed SubmissionPromise envelope is ~300 bytes.
inline constexpr size_t kMaxPromiseEnvelopeBytes = 4096;
inline constexpr uint32_t kMaxLayers = 1024;  // so H_0..H_L is <= 1025 hashes
inline constexpr uint32_t kMaxHiddenSize = uint32_t{1} << 20;
// prompt_tokens + output_tokens; far above any context length served.
inline constexpr uint64_t kMaxCommittedTokens = uint64_t{1} << 24;
inline constexpr int kMaxStopTokens = 64;

// The key every salted digest of a request is computed under: salt ‖
// request_id (kSaltBytes + kRequestIdBytes for records). Binding the request
// id makes an old commitment relabelled with a new id fail every audit's
// token check (docs/protocol.md).
std::string DigestKey(Bytes salt, Bytes request_id);

// The salted digest of a token sequence (prompt or output). `salt` is at
// most 2^32 - 1 bytes; records use DigestKey(salt, request_id).
Sha256Hash TokenDigest(Bytes salt, std::span<const int32_t> ids);

// The salted digest of a sampling seed (keyed as TokenDigest).
Sha256Hash SeedDigest(Bytes salt, uint64_t seed);

// The sampling seed a client nonce fixes (records.proto
// Commitment.client_nonce): the first 8 bytes, little-endian, of
// SHA-256("layerproof.nonce-seed.v1\0" ‖ u32 len(nonce) ‖ nonce).
uint64_t SeedFromNonce(Bytes nonce);

// OK when `c` is a well-formed Commitment (records.proto states every
// field's rule); InvalidArgument naming the first offending field
// otherwise.
absl::Status ValidateCommitment(const v1::Commitment& c);

// Whether `output` (the revealed output ids, output_tokens of them) obeys
// the stop rule committed in `c` with its finish_reason (records.proto
// Commitment.finish_reason): no stop id before the last token (unless
// ignore_eos), and the finish reason the rule gives for the last one. OK,
// or FailedPrecondition saying what broke the rule, with *allowed set to
// the number of tokens the rule allows: fewer than output_tokens when
// generation had to stop earlier, output_tokens + 1 when it had to go on.
// Assumes ValidateCommitment(c) passed.
absl::Status CheckStopRule(const v1::Commitment& c,
                           std::span<const int32_t> output, size_t* allowed);

// 1..kMaxNodeIdChars printable ASCII characters without spaces
// (0x21..0x7e), as prover_id and verifier_id; InvalidArgument naming
// `field` otherwise.
absl::Status ValidateNodeId(std::string_view field, std::string_view id);

// OK when `v` is a well-formed Verdict; InvalidArgument naming the first
// offending field otherwise. A PASS must have head_checked; `mismatch` is
// present exactly for FAIL_MISMATCH; commitment_leaf_index may be absent
// only for FAIL_SIGNATURE and FAIL_UNLOGGED; unlogged_promise (at most
// kMaxPromiseEnvelopeBytes) is present exactly for FAIL_UNLOGGED.
absl::Status ValidateVerdict(const v1::Verdict& v);

// OK when `p` is a well-formed SubmissionPromise (records.proto):
// request_id 16 bytes, commitment_leaf_hash 32, a valid prover_id, a
// non-empty log_origin, promised_at > 0 and log_by > promised_at;
// InvalidArgument naming the first offending field otherwise.
absl::Status ValidateSubmissionPromise(const v1::SubmissionPromise& p);

// The longest window a promise gets: whatever log_by says, a promise is due
// at PromiseDueUnixNanos, so a prover cannot sign a deadline out of reach
// (a promise "due" in a hundred years would never be presentable). Seven
// days: well above any log outage a prover's promise window must cover
// (docs/protocol.md "Promises").
inline constexpr int64_t kMaxPromiseWindowNanos =
    int64_t{7} * 24 * 3600 * 1000 * 1000 * 1000;
// min(log_by, promised_at + kMaxPromiseWindowNanos), for a promise that
// passed ValidateSubmissionPromise. The verifier judges and the client
// follows a promise by this time.
int64_t PromiseDueUnixNanos(const v1::SubmissionPromise& p);

}  // namespace layerproof::store

#endif  // LAYERPROOF_STORE_COMMITMENT_H_
