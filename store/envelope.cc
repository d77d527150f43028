#include "store/envelope.h"

#include <algorithm>
#include <climits>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "kernels/status.h"
#include "store/commitment.h"
#include "store/status.h"

namespace layerproof::store {
namespace {

// Protobuf's parsers take an int length.
constexpr size_t kMaxParseBytes = INT_MAX;

std::string KeyIdHex(const std::string& key_id) {
  return HexEncode(AsBytes(key_id));
}

// Debian's Abseil has its own string_view, which StrCat takes.
absl::string_view Av(std::string_view s) { return {s.data(), s.size()}; }

// Parses `payload` and requires it to be the record's one canonical
// encoding: what this library's deterministic serialisation of the parsed
// record, without unknown fields, gives. Anything else (an unknown field,
// known fields out of order or repeated, a default value written out, a
// non-minimal varint) would let a second byte string, hence a second log
// leaf, stand for the same signed record (issue 13: a copy re-encoded and
// logged first locked the honest prover out of its own request id).
template <typename Record>
absl::StatusOr<Record> ParseRecord(std::string_view payload, const char* name) {
  Record record;
  if (payload.size() > kMaxParseBytes ||
      !record.ParseFromArray(payload.data(),
                             static_cast<int>(payload.size()))) {
    return absl::InvalidArgumentError(absl::StrCat(name, ": malformed"));
  }
  record.DiscardUnknownFields();
  std::string canonical;
  {
    google::protobuf::io::StringOutputStream stream(&canonical);
    google::protobuf::io::CodedOutputStream out(&stream);
    out.SetSerializationDeterministic(true);
    record.SerializeToCodedStream(&out);
  }
  if (canonical != payload) {
    return absl::InvalidArgumentError(absl::StrCat(
        name, ": not in canonical encoding (got ", payload.size(),
        " bytes, the canonical re-encoding has ", canonical.size(),
        "): unknown fields, fields out of order or repeated, or explicit "
        "defaults are refused so that one record has one encoding"));
  }
  return record;
}

}  // namespace

std::string PreAuthEncoding(std::string_view payload_type,
                            std::string_view payload) {
  const std::string type_len = std::to_string(payload_type.size());
  const std::string body_len = std::to_string(payload.size());
  std::string pae;
  pae.reserve(10 + type_len.size() + payload_type.size() + body_len.size() +
              payload.size());
  pae.append("DSSEv1 ").append(type_len).append(" ").append(payload_type);
  pae.append(" ").append(body_len).append(" ").append(payload);
  return pae;
}

absl::StatusOr<std::string> SignEnvelope(std::string_view payload_type,
                                         std::string payload,
                                         const Ed25519PrivateKey& key) {
  if (payload_type.empty()) {
    return absl::InvalidArgumentError(
        "Envelope.payload_type: got \"\", want a media type");
  }
  LP_ASSIGN_OR_RETURN(
      const Ed25519Signature sig,
      key.Sign(AsBytes(PreAuthEncoding(payload_type, payload))));
  v1::Envelope envelope;
  envelope.set_payload_type(std::string(payload_type));
  envelope.set_payload(std::move(payload));
  v1::Envelope::Signature* s = envelope.add_signatures();
  const Sha256Hash key_id = key.public_key().KeyId();
  s->set_keyid(key_id.data(), key_id.size());
  s->set_sig(sig.data(), sig.size());
  std::string bytes;
  if (!envelope.SerializeToString(&bytes)) {
    return absl::InternalError("Envelope: serialisation failed");
  }
  return bytes;
}

absl::StatusOr<std::string> SignCommitment(const v1::Commitment& commitment,
                                           const Ed25519PrivateKey& key) {
  LP_RETURN_IF_ERROR(ValidateCommitment(commitment));
  return SignEnvelope(kCommitmentPayloadType, commitment.SerializeAsString(),
                      key);
}

absl::StatusOr<std::string> SignVerdict(const v1::Verdict& verdict,
                                        const Ed25519PrivateKey& key) {
  LP_RETURN_IF_ERROR(ValidateVerdict(verdict));
  return SignEnvelope(kVerdictPayloadType, verdict.SerializeAsString(), key);
}

void KeyRing::Add(const Ed25519PublicKey& key) {
  keys_.emplace(key.KeyId(), key);
}

const Ed25519PublicKey* KeyRing::Find(const Sha256Hash& key_id) const {
  auto it = keys_.find(key_id);
  return it == keys_.end() ? nullptr : &it->second;
}

absl::StatusOr<VerifiedEnvelope> VerifyEnvelope(
    std::string_view envelope_bytes, const KeyRing& keys,
    std::string_view expected_payload_type, size_t max_bytes) {
  return PrintableStatus([&]() -> absl::StatusOr<VerifiedEnvelope> {
    if (envelope_bytes.size() > max_bytes) {
      return absl::InvalidArgumentError(
          absl::StrCat("Envelope: got ", envelope_bytes.size(),
                       " bytes, want <= ", max_bytes));
    }
    LP_ASSIGN_OR_RETURN(v1::Envelope envelope,
                        ParseRecord<v1::Envelope>(envelope_bytes, "Envelope"));
    if (envelope.payload_type() != expected_payload_type) {
      return absl::InvalidArgumentError(
          absl::StrCat("Envelope.payload_type: got \"", envelope.payload_type(),
                       "\", want \"", Av(expected_payload_type), "\""));
    }
    const int n = envelope.signatures_size();
    if (n < 1 || n > kMaxEnvelopeSignatures) {
      return absl::InvalidArgumentError(
          absl::StrCat("Envelope.signatures: got ", n, ", want 1..",
                       kMaxEnvelopeSignatures));
    }
    // Shape first, so that no signature is checked in an envelope that is
    // malformed further on.
    for (int i = 0; i < n; ++i) {
      const v1::Envelope::Signature& s = envelope.signatures(i);
      if (s.keyid().size() != Sha256Hash().size()) {
        return absl::InvalidArgumentError(
            absl::StrCat("Envelope.signatures[", i, "].keyid: got ",
                         s.keyid().size(), " bytes, want 32"));
      }
      if (s.sig().size() != Ed25519Signature().size()) {
        return absl::InvalidArgumentError(
            absl::StrCat("Envelope.signatures[", i, "].sig: got ",
                         s.sig().size(), " bytes, want 64"));
      }
      for (int j = 0; j < i; ++j) {
        if (envelope.signatures(j).keyid() == s.keyid()) {
          return absl::InvalidArgumentError(absl::StrCat(
              "Envelope.signatures[", i, "].keyid: got ", KeyIdHex(s.keyid()),
              " again (signatures[", j, "]), want each key once"));
        }
      }
    }

    VerifiedEnvelope out;
    const std::string pae =
        PreAuthEncoding(envelope.payload_type(), envelope.payload());
    for (int i = 0; i < n; ++i) {
      const v1::Envelope::Signature& s = envelope.signatures(i);
      Sha256Hash key_id;
      std::copy(s.keyid().begin(), s.keyid().end(), key_id.begin());
      const Ed25519PublicKey* key = keys.Find(key_id);
      if (key == nullptr) {
        return absl::PermissionDeniedError(absl::StrCat(
            "Envelope.signatures[", i, "].keyid: ", KeyIdHex(s.keyid()),
            " is not a trusted key"));
      }
      if (absl::Status st = key->Verify(AsBytes(pae), AsBytes(s.sig()));
          !st.ok()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "Envelope.signatures[", i, "]: signature by key ",
            KeyIdHex(s.keyid()), " does not verify: ", st.message()));
      }
      out.key_ids.push_back(key_id);
    }
    out.payload_type = std::move(*envelope.mutable_payload_type());
    out.payload = std::move(*envelope.mutable_payload());
    return out;
  }());
}

absl::StatusOr<v1::Commitment> ParseCommitment(std::string_view payload) {
  return PrintableStatus([&]() -> absl::StatusOr<v1::Commitment> {
    LP_ASSIGN_OR_RETURN(v1::Commitment c,
                        ParseRecord<v1::Commitment>(payload, "Commitment"));
    LP_RETURN_IF_ERROR(ValidateCommitment(c));
    return c;
  }());
}

absl::StatusOr<v1::Verdict> ParseVerdict(std::string_view payload) {
  return PrintableStatus([&]() -> absl::StatusOr<v1::Verdict> {
    LP_ASSIGN_OR_RETURN(v1::Verdict v,
                        ParseRecord<v1::Verdict>(payload, "Verdict"));
    LP_RETURN_IF_ERROR(ValidateVerdict(v));
    return v;
  }());
}

absl::StatusOr<v1::SubmissionPromise> ParseSubmissionPromise(
    std::string_view payload) {
  return PrintableStatus([&]() -> absl::StatusOr<v1::SubmissionPromise> {
    LP_ASSIGN_OR_RETURN(
        v1::SubmissionPromise p,
        ParseRecord<v1::SubmissionPromise>(payload, "SubmissionPromise"));
    LP_RETURN_IF_ERROR(ValidateSubmissionPromise(p));
    return p;
  }());
}

}  // namespace layerproof::store
