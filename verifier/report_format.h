// The signed forms of a compliance report (docs/reports.md "Signature"):
// the v1::Envelope that Report.GetComplianceReport returns, and the DSSE
// JSON envelope `layerproof report --format json` writes
//   {"payloadType": "application/vnd.layerproof.report.v1+json",
//    "payload": base64(report JSON),
//    "signatures": [{"keyid": hex(SHA-256(raw key)), "sig": base64(sig)}]}.
// Both carry the same payload bytes and Ed25519 signature over DSSE's
// PAE(payloadType, payload) (store/envelope.h PreAuthEncoding), so one
// converts to the other without re-signing.
//
// Errors: malformed input (not an envelope, not JSON, a missing or
// mistyped field, bad base64, a payload that is not a report object) is
// InvalidArgument naming the field; a report with no signature by the
// given key, or whose signature does not verify, is PermissionDenied. No
// report is returned unless its signature verified.
//
// Thread safety: pure functions.
#ifndef LAYERPROOF_VERIFIER_REPORT_FORMAT_H_
#define LAYERPROOF_VERIFIER_REPORT_FORMAT_H_

#include <cstddef>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"
#include "store/crypto.h"

namespace layerproof::verifier {

inline constexpr std::string_view kReportPayloadType =
    "application/vnd.layerproof.report.v1+json";
// The report JSON's "format" member.
inline constexpr std::string_view kReportFormat =
    "layerproof.compliance-report.v1";
// Largest report envelope accepted or produced (below the servers' and
// clients' 64 MiB message limit).
inline constexpr size_t kMaxReportEnvelopeBytes = size_t{32} << 20;

// The DSSE JSON form of a serialised report v1::Envelope (its signature is
// not checked here). InvalidArgument for a malformed envelope or another
// payload type.
absl::StatusOr<std::string> ReportEnvelopeToDsseJson(
    std::string_view envelope_bytes);

// Checks a DSSE JSON report's signature by `verifier_key` and returns the
// report object (its "format" is kReportFormat).
absl::StatusOr<nlohmann::json> VerifyReportDsseJson(
    std::string_view dsse_json, const store::Ed25519PublicKey& verifier_key);

// The same for a serialised report v1::Envelope.
absl::StatusOr<nlohmann::json> VerifyReportEnvelope(
    std::string_view envelope_bytes,
    const store::Ed25519PublicKey& verifier_key);

}  // namespace layerproof::verifier

#endif  // LAYERPROOF_VERIFIER_REPORT_FORMAT_H_
