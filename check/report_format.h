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
// Verifying a report checks, in order: the envelope's signature by the
// verifier key (over the payload bytes, before the payload is parsed);
// then in the payload, that checkpoint.note is a C2SP signed note by the
// same key under the name verifier_id, of origin log_origin, whose size and
// root equal checkpoint.tree_size and root_hash; and, when previous_report
// is not null, that its consistency_proof proves previous_report.{tree_size,
// root_hash} consistent with the checkpoint (RFC 9162).
//
// Errors: malformed input (not an envelope, not JSON, JSON nested deeper
// than kMaxReportJsonDepth, too large, a missing or mistyped field, bad
// base64, a payload that is not a report object) is InvalidArgument naming
// the field; a report with no signature by the given key, or whose
// signature, checkpoint note or consistency proof does not verify, is
// PermissionDenied naming what failed. No report is returned unless every
// check passed. Nothing is parsed as JSON before its nesting depth has been
// checked by a linear scan (CheckJsonDepth).
//
// Thread safety: pure functions.
#ifndef LAYERPROOF_CHECK_REPORT_FORMAT_H_
#define LAYERPROOF_CHECK_REPORT_FORMAT_H_

#include <cstddef>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"
#include "store/crypto.h"

namespace layerproof::check {

inline constexpr std::string_view kReportPayloadType =
    "application/vnd.layerproof.report.v1+json";
// The report JSON's "format" member.
inline constexpr std::string_view kReportFormat =
    "layerproof.compliance-report.v1";
// Largest report envelope accepted or produced (below the servers' and
// clients' 64 MiB message limit).
inline constexpr size_t kMaxReportEnvelopeBytes = size_t{32} << 20;
// Largest DSSE JSON report accepted: the base64 of the largest envelope's
// payload plus 1 MiB for the rest (`layerproof report render`/`verify`
// refuse a larger file before reading it).
inline constexpr size_t kMaxReportDsseJsonBytes =
    (kMaxReportEnvelopeBytes + 2) / 3 * 4 + (size_t{1} << 20);
// Deepest nesting of arrays and objects accepted in a DSSE envelope or a
// report payload (a report nests 6 deep).
inline constexpr size_t kMaxReportJsonDepth = 64;

// OK when `text`, read as JSON, nests arrays and objects at most
// `max_depth` deep (brackets inside strings do not count; nothing else is
// checked). InvalidArgument "<what>: nested deeper than ..." otherwise.
// Linear time, no allocation: run it before parsing untrusted JSON.
absl::Status CheckJsonDepth(std::string_view text, size_t max_depth,
                            std::string_view what);

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

}  // namespace layerproof::check

#endif  // LAYERPROOF_CHECK_REPORT_FORMAT_H_
