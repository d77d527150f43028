// Signed envelopes: how a record (proto/layerproof/v1/records.proto) is
// signed, travels and is stored (DESIGN §5 "Envelope"). DSSE-style
// (https://github.com/secure-systems-lab/dsse): each Ed25519 signature
// covers the pre-authentication encoding of the payload type and the
// payload, so a signature over one type of record can never be taken for
// another.
//
// Contract: a record is serialised once. SignEnvelope returns the envelope's
// bytes and those exact bytes are sent and stored (they are the log's leaf
// data). VerifyEnvelope checks signatures over the payload exactly as
// received and returns those bytes. Every record has one encoding: the
// envelope, a commitment and a verdict must each be the canonical
// (deterministic protobuf) serialisation of what they parse to, with no
// unknown field, so no second byte string (no second leaf) exists for one
// signed record. Malformed, non-canonical, oversized or unsigned input is an
// error Status naming what is wrong; no input reaches an assert.
//
// Thread safety: the functions are pure. A KeyRing may be read from any
// number of threads at once; Add needs exclusive access.
#ifndef LAYERPROOF_STORE_ENVELOPE_H_
#define LAYERPROOF_STORE_ENVELOPE_H_

#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "layerproof/v1/records.pb.h"
#include "store/crypto.h"

namespace layerproof::store {

inline constexpr std::string_view kCommitmentPayloadType =
    "application/vnd.layerproof.commitment.v1+proto";
inline constexpr std::string_view kVerdictPayloadType =
    "application/vnd.layerproof.verdict.v1+proto";
// A prover's v1::SubmissionPromise (inference.proto Receipt).
inline constexpr std::string_view kSubmissionPromisePayloadType =
    "application/vnd.layerproof.promise.v1+proto";

// Most signatures one envelope may carry (bounds a verifier's work).
inline constexpr int kMaxEnvelopeSignatures = 16;

// DSSE's PAE: "DSSEv1" SP LEN(type) SP type SP LEN(body) SP body, with LEN
// the byte length in ASCII decimal and SP one space.
std::string PreAuthEncoding(std::string_view payload_type,
                            std::string_view payload);

// Signs PAE(payload_type, payload) with `key` and returns the serialised
// v1::Envelope holding `payload` byte for byte and one signature. The
// returned bytes are the ones to send and store. payload_type must be
// non-empty (InvalidArgument otherwise).
absl::StatusOr<std::string> SignEnvelope(std::string_view payload_type,
                                         std::string payload,
                                         const Ed25519PrivateKey& key);

// Validates `commitment` (ValidateCommitment), serialises it once and signs
// it as kCommitmentPayloadType.
absl::StatusOr<std::string> SignCommitment(const v1::Commitment& commitment,
                                           const Ed25519PrivateKey& key);
// Validates `verdict` (ValidateVerdict), serialises it once and signs it as
// kVerdictPayloadType.
absl::StatusOr<std::string> SignVerdict(const v1::Verdict& verdict,
                                        const Ed25519PrivateKey& key);

// The public keys whose signatures are accepted, by key id (SHA-256 of the
// raw public key, Ed25519PublicKey::KeyId).
class KeyRing {
 public:
  KeyRing() = default;

  // Adds `key`; adding a key that is already present changes nothing.
  void Add(const Ed25519PublicKey& key);
  // The key with this id, or nullptr. The pointer stays valid until the
  // KeyRing is destroyed (Add never moves an entry).
  const Ed25519PublicKey* Find(const Sha256Hash& key_id) const;
  size_t size() const { return keys_.size(); }

 private:
  std::map<Sha256Hash, Ed25519PublicKey> keys_;
};

struct VerifiedEnvelope {
  std::string payload_type;
  // The payload exactly as received: the signed bytes.
  std::string payload;
  // The ids of the keys whose signatures verified, in envelope order.
  std::vector<Sha256Hash> key_ids;
};

// Parses and verifies the serialised envelope `envelope_bytes`:
//  - larger than max_bytes: InvalidArgument naming the limit, checked before
//    anything is parsed;
//  - not a parseable v1::Envelope: InvalidArgument "Envelope: malformed";
//  - not the canonical encoding (see above): InvalidArgument "Envelope: not
//    in canonical encoding ...";
//  - payload_type other than expected_payload_type, no signatures, more
//    than kMaxEnvelopeSignatures, a keyid that is not 32 bytes, a sig that
//    is not 64 bytes, or one key id twice: InvalidArgument naming the field;
//  - a signature by a key id not in `keys`: PermissionDenied naming the key
//    id in hex (the signer is not one this verifier accepts);
//  - a signature that does not verify: InvalidArgument naming the
//    signature's index and key id.
// Every signature must be by a known key and must verify. The signatures
// cover PAE(payload_type, payload) with payload as received.
absl::StatusOr<VerifiedEnvelope> VerifyEnvelope(
    std::string_view envelope_bytes, const KeyRing& keys,
    std::string_view expected_payload_type, size_t max_bytes);

// Parses a verified payload as a Commitment and validates it
// (ValidateCommitment). Unparseable bytes: InvalidArgument
// "Commitment: malformed"; a non-canonical encoding (unknown fields
// included): InvalidArgument "Commitment: not in canonical encoding ...".
absl::StatusOr<v1::Commitment> ParseCommitment(std::string_view payload);

// Parses a verified payload as a Verdict and validates it (ValidateVerdict).
// Unparseable bytes: InvalidArgument "Verdict: malformed".
absl::StatusOr<v1::Verdict> ParseVerdict(std::string_view payload);

// Parses a verified payload as a SubmissionPromise and validates it
// (ValidateSubmissionPromise); canonical encoding as for every record.
absl::StatusOr<v1::SubmissionPromise> ParseSubmissionPromise(
    std::string_view payload);

}  // namespace layerproof::store

#endif  // LAYERPROOF_STORE_ENVELOPE_H_
