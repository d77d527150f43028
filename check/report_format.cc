#include "check/report_format.h"

#include <string>
#include <utility>
#include <vector>

#include "kernels/status.h"
#include "layerproof/v1/records.pb.h"
#include "store/checkpoint.h"
#include "store/envelope.h"
#include "store/internal/str_cat.h"
#include "store/merkle.h"
#include "store/status.h"

namespace layerproof::check {
namespace {

using store::internal::Cat;

struct Signature {
  std::string keyid;  // raw bytes
  std::string sig;    // raw bytes
};

struct Parts {
  std::string payload_type;
  std::string payload;
  std::vector<Signature> signatures;
};

absl::StatusOr<Parts> EnvelopeParts(std::string_view envelope_bytes) {
  if (envelope_bytes.size() > kMaxReportEnvelopeBytes) {
    return absl::InvalidArgumentError(
        Cat("report envelope: got ", envelope_bytes.size(),
            " bytes, want <= ", kMaxReportEnvelopeBytes));
  }
  v1::Envelope env;
  if (!env.ParseFromArray(envelope_bytes.data(),
                          static_cast<int>(envelope_bytes.size()))) {
    return absl::InvalidArgumentError("report envelope: malformed");
  }
  Parts p;
  p.payload_type = env.payload_type();
  p.payload = env.payload();
  for (const v1::Envelope::Signature& s : env.signatures()) {
    p.signatures.push_back({s.keyid(), s.sig()});
  }
  return p;
}

absl::StatusOr<std::string> StringMember(const nlohmann::json& obj,
                                         const char* name,
                                         std::string_view where);

// `obj`.name as an unsigned integer; InvalidArgument naming it otherwise.
absl::StatusOr<uint64_t> CountMember(const nlohmann::json& obj,
                                     const char* name, std::string_view where) {
  auto it = obj.find(name);
  if (it == obj.end() || !it->is_number_unsigned()) {
    return absl::InvalidArgumentError(
        Cat(where, ".", name, ": missing or not a non-negative integer"));
  }
  return it->get<uint64_t>();
}

absl::StatusOr<store::Sha256Hash> HashMember(const nlohmann::json& obj,
                                             const char* name,
                                             std::string_view where) {
  LP_ASSIGN_OR_RETURN(std::string hex, StringMember(obj, name, where));
  absl::StatusOr<store::Sha256Hash> h = store::ParseHash(hex);
  if (!h.ok()) {
    return absl::InvalidArgumentError(
        Cat(where, ".", name, ": ", std::string(h.status().message())));
  }
  return h;
}

// The checks docs/reports.md "Signature" lists beyond the envelope's own
// signature: the checkpoint note and the previous report's proof.
absl::Status CheckReportLinks(const nlohmann::json& report,
                              const store::Ed25519PublicKey& key) {
  LP_ASSIGN_OR_RETURN(std::string verifier_id,
                      StringMember(report, "verifier_id", "report"));
  LP_ASSIGN_OR_RETURN(std::string origin,
                      StringMember(report, "log_origin", "report"));
  auto cp = report.find("checkpoint");
  if (cp == report.end() || !cp->is_object()) {
    return absl::InvalidArgumentError(
        "report.checkpoint: missing or not an object");
  }
  LP_ASSIGN_OR_RETURN(uint64_t size,
                      CountMember(*cp, "tree_size", "report.checkpoint"));
  LP_ASSIGN_OR_RETURN(store::Sha256Hash root,
                      HashMember(*cp, "root_hash", "report.checkpoint"));
  LP_ASSIGN_OR_RETURN(std::string note,
                      StringMember(*cp, "note", "report.checkpoint"));
  if (verifier_id.empty()) {
    return absl::InvalidArgumentError("report.verifier_id: empty");
  }
  absl::StatusOr<store::Checkpoint> c =
      store::CheckpointVerifier(verifier_id, key).Verify(note, origin);
  if (!c.ok()) {
    return absl::PermissionDeniedError(
        Cat("report.checkpoint.note: not a checkpoint of log \"", origin,
            "\" signed by the verifier key named \"", verifier_id,
            "\": ", std::string(c.status().message())));
  }
  if (c->size != size || c->root != root) {
    return absl::PermissionDeniedError(Cat(
        "report.checkpoint: tree_size ", size, " / root_hash ",
        store::HexEncode(store::Bytes(root)), " differ from the signed note's ",
        c->size, " / ", store::HexEncode(store::Bytes(c->root))));
  }
  auto prev = report.find("previous_report");
  if (prev == report.end() || prev->is_null()) return absl::OkStatus();
  if (!prev->is_object()) {
    return absl::InvalidArgumentError(
        "report.previous_report: not an object or null");
  }
  constexpr std::string_view kWhere = "report.previous_report";
  LP_ASSIGN_OR_RETURN(uint64_t old_size,
                      CountMember(*prev, "tree_size", kWhere));
  LP_ASSIGN_OR_RETURN(store::Sha256Hash old_root,
                      HashMember(*prev, "root_hash", kWhere));
  auto proof_json = prev->find("consistency_proof");
  if (proof_json == prev->end() || !proof_json->is_array()) {
    return absl::InvalidArgumentError(
        "report.previous_report.consistency_proof: missing or not an array");
  }
  std::vector<store::Sha256Hash> proof;
  for (size_t i = 0; i < proof_json->size(); ++i) {
    const nlohmann::json& h = (*proof_json)[i];
    absl::StatusOr<store::Sha256Hash> hash =
        h.is_string() ? store::ParseHash(h.get<std::string>())
                      : absl::InvalidArgumentError("not a string");
    if (!hash.ok()) {
      return absl::InvalidArgumentError(
          Cat("report.previous_report.consistency_proof[", i,
              "]: ", std::string(hash.status().message())));
    }
    proof.push_back(*hash);
  }
  if (absl::Status s =
          store::VerifyConsistency(old_size, size, old_root, root, proof);
      !s.ok()) {
    return absl::PermissionDeniedError(
        Cat("report.previous_report.consistency_proof: does not prove tree ",
            old_size, " consistent with the checkpoint's tree ", size, ": ",
            std::string(s.message())));
  }
  return absl::OkStatus();
}

absl::StatusOr<nlohmann::json> Verify(const Parts& p,
                                      const store::Ed25519PublicKey& key) {
  if (p.payload_type != kReportPayloadType) {
    return absl::InvalidArgumentError(Cat("report payloadType: got \"",
                                          p.payload_type, "\", want \"",
                                          kReportPayloadType, "\""));
  }
  const store::Sha256Hash key_id = key.KeyId();
  const std::string key_id_bytes(key_id.begin(), key_id.end());
  const std::string pae = store::PreAuthEncoding(p.payload_type, p.payload);
  bool found = false;
  for (size_t i = 0; i < p.signatures.size(); ++i) {
    const Signature& s = p.signatures[i];
    if (s.keyid != key_id_bytes) continue;
    found = true;
    if (absl::Status st =
            key.Verify(store::AsBytes(pae), store::AsBytes(s.sig));
        !st.ok()) {
      return absl::PermissionDeniedError(
          Cat("report signatures[", i, "] by key ",
              store::HexEncode(store::Bytes(key_id)),
              " does not verify: ", std::string(st.message())));
    }
  }
  if (!found) {
    return absl::PermissionDeniedError(
        Cat("report: no signature by the verifier key ",
            store::HexEncode(store::Bytes(key_id)), " (", p.signatures.size(),
            " signature(s) by other keys)"));
  }
  LP_RETURN_IF_ERROR(
      CheckJsonDepth(p.payload, kMaxReportJsonDepth, "report payload"));
  nlohmann::json report =
      nlohmann::json::parse(p.payload, nullptr, /*allow_exceptions=*/false);
  if (report.is_discarded() || !report.is_object()) {
    return absl::InvalidArgumentError("report payload: not a JSON object");
  }
  auto format = report.find("format");
  if (format == report.end() || !format->is_string() ||
      format->get<std::string>() != kReportFormat) {
    return absl::InvalidArgumentError(
        Cat("report payload.format: want \"", kReportFormat, "\""));
  }
  LP_RETURN_IF_ERROR(CheckReportLinks(report, key));
  return report;
}

absl::StatusOr<std::string> StringMember(const nlohmann::json& obj,
                                         const char* name,
                                         std::string_view where) {
  auto it = obj.find(name);
  if (it == obj.end() || !it->is_string()) {
    return absl::InvalidArgumentError(
        Cat(where, ".", name, ": missing or not a string"));
  }
  return it->get<std::string>();
}

absl::StatusOr<Parts> DsseParts(std::string_view dsse_json) {
  if (dsse_json.size() > kMaxReportDsseJsonBytes) {
    return absl::InvalidArgumentError(
        Cat("DSSE envelope: got ", dsse_json.size(),
            " bytes, want <= ", kMaxReportDsseJsonBytes));
  }
  LP_RETURN_IF_ERROR(
      CheckJsonDepth(dsse_json, kMaxReportJsonDepth, "DSSE envelope"));
  nlohmann::json j =
      nlohmann::json::parse(dsse_json, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    return absl::InvalidArgumentError("DSSE envelope: not a JSON object");
  }
  Parts p;
  LP_ASSIGN_OR_RETURN(p.payload_type,
                      StringMember(j, "payloadType", "DSSE envelope"));
  LP_ASSIGN_OR_RETURN(std::string payload64,
                      StringMember(j, "payload", "DSSE envelope"));
  absl::StatusOr<std::string> payload = store::Base64Decode(payload64);
  if (!payload.ok()) {
    return absl::InvalidArgumentError(Cat(
        "DSSE envelope.payload: ", std::string(payload.status().message())));
  }
  p.payload = std::move(*payload);
  auto sigs = j.find("signatures");
  if (sigs == j.end() || !sigs->is_array()) {
    return absl::InvalidArgumentError(
        "DSSE envelope.signatures: missing or not an array");
  }
  for (size_t i = 0; i < sigs->size(); ++i) {
    const nlohmann::json& s = (*sigs)[i];
    const std::string where = Cat("DSSE envelope.signatures[", i, "]");
    if (!s.is_object()) {
      return absl::InvalidArgumentError(Cat(where, ": not an object"));
    }
    LP_ASSIGN_OR_RETURN(std::string keyid_hex, StringMember(s, "keyid", where));
    LP_ASSIGN_OR_RETURN(std::string sig64, StringMember(s, "sig", where));
    absl::StatusOr<std::string> keyid = store::HexDecode(keyid_hex);
    if (!keyid.ok()) {
      return absl::InvalidArgumentError(
          Cat(where, ".keyid: ", std::string(keyid.status().message())));
    }
    absl::StatusOr<std::string> sig = store::Base64Decode(sig64);
    if (!sig.ok()) {
      return absl::InvalidArgumentError(
          Cat(where, ".sig: ", std::string(sig.status().message())));
    }
    p.signatures.push_back({std::move(*keyid), std::move(*sig)});
  }
  return p;
}

}  // namespace

absl::Status CheckJsonDepth(std::string_view text, size_t max_depth,
                            std::string_view what) {
  size_t depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;  // the escaped character (a \uXXXX's digits are harmless)
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    switch (c) {
      case '"':
        in_string = true;
        break;
      case '[':
      case '{':
        if (++depth > max_depth) {
          return absl::InvalidArgumentError(Cat(
              what, ": nested deeper than ", max_depth, " levels at byte ", i));
        }
        break;
      case ']':
      case '}':
        if (depth > 0) --depth;
        break;
      default:
        break;
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> ReportEnvelopeToDsseJson(
    std::string_view envelope_bytes) {
  absl::StatusOr<std::string> result = [&]() -> absl::StatusOr<std::string> {
    LP_ASSIGN_OR_RETURN(Parts p, EnvelopeParts(envelope_bytes));
    if (p.payload_type != kReportPayloadType) {
      return absl::InvalidArgumentError(
          Cat("report envelope.payload_type: got \"", p.payload_type,
              "\", want \"", kReportPayloadType, "\""));
    }
    nlohmann::json out = nlohmann::json::object();
    out["payloadType"] = p.payload_type;
    out["payload"] = store::Base64Encode(store::AsBytes(p.payload));
    nlohmann::json sigs = nlohmann::json::array();
    for (const Signature& s : p.signatures) {
      sigs.push_back({{"keyid", store::HexEncode(store::AsBytes(s.keyid))},
                      {"sig", store::Base64Encode(store::AsBytes(s.sig))}});
    }
    out["signatures"] = std::move(sigs);
    return out.dump(2) + "\n";
  }();
  if (!result.ok())
    return ::layerproof::store::PrintableStatus(result.status());
  return result;
}

absl::StatusOr<nlohmann::json> VerifyReportDsseJson(
    std::string_view dsse_json, const store::Ed25519PublicKey& verifier_key) {
  absl::StatusOr<nlohmann::json> result =
      [&]() -> absl::StatusOr<nlohmann::json> {
    LP_ASSIGN_OR_RETURN(Parts p, DsseParts(dsse_json));
    return Verify(p, verifier_key);
  }();
  if (!result.ok())
    return ::layerproof::store::PrintableStatus(result.status());
  return result;
}

absl::StatusOr<nlohmann::json> VerifyReportEnvelope(
    std::string_view envelope_bytes,
    const store::Ed25519PublicKey& verifier_key) {
  absl::StatusOr<nlohmann::json> result =
      [&]() -> absl::StatusOr<nlohmann::json> {
    LP_ASSIGN_OR_RETURN(Parts p, EnvelopeParts(envelope_bytes));
    return Verify(p, verifier_key);
  }();
  if (!result.ok())
    return ::layerproof::store::PrintableStatus(result.status());
  return result;
}

}  // namespace layerproof::check
