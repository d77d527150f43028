// Builds a compliance report's JSON (docs/reports.md) from the verifier's
// log: scans exactly the entries [0, tree_size) of a signed checkpoint,
// counts the commitments logged in the window (by the verifier's own time
// of logging, AuditStore::LoggedAt) and the verdicts on them
// (and the refusals of the window), splits them by prover and by model,
// computes detection bounds from the policy-drawn audits
// (verifier/detection_bounds.h), and lists every failure with its evidence
// reference. The audit store is read only to tell on-demand audits
// (v1::AuditRecord.on_demand, found by the verdict's audit_seed) from
// drawn ones and for the commitments' logging times; every count comes
// from the log's entries.
//
// Thread safety: BuildReport reads the log and store, which are
// thread-safe; it keeps no state.
#ifndef LAYERPROOF_VERIFIER_REPORT_BUILDER_H_
#define LAYERPROOF_VERIFIER_REPORT_BUILDER_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "nlohmann/json.hpp"
#include "store/checkpoint.h"
#include "store/log.h"
#include "verifier/audit_policy.h"
#include "verifier/audit_store.h"

namespace layerproof::verifier {

// Failures listed in full; beyond these only failures_omitted counts them.
inline constexpr size_t kMaxReportFailures = 1000;
// The timeline has at most this many buckets.
inline constexpr int64_t kMaxTimelineBuckets = 120;

struct ReportInputs {
  // The window [from, to), Unix nanoseconds; 0 <= from < to.
  int64_t from_unix_nanos = 0;
  int64_t to_unix_nanos = 0;
  // Only this prover's commitments and verdicts; empty: all.
  std::string prover_id;

  std::string verifier_id;
  std::string log_origin;
  AuditPolicy policy;
  absl::Time generated_at;
  // The signed checkpoint note and its verified contents; the scan covers
  // [0, checkpoint.size), which must be <= the log's size.
  std::string checkpoint_note;
  store::Checkpoint checkpoint;
  // The previous report's checkpoint and the consistency proof from it to
  // `checkpoint` (already verified by the caller); nullopt for the first.
  // previous_from_caller: the caller named its size (its generated-at is
  // then unknown and shown as null); otherwise the last report issued.
  std::optional<ReportCheckpoint> previous;
  bool previous_from_caller = false;
  std::vector<store::Sha256Hash> consistency_proof;
  // Echoed as hex in "client_nonce" (0..64 bytes).
  std::string client_nonce;
  size_t max_failures = kMaxReportFailures;
};

// The report object. Errors: the log's or store's read errors; DataLoss for
// an entry in the scanned range that is not a parseable commitment or
// verdict envelope.
absl::StatusOr<nlohmann::json> BuildReport(const store::Log& log,
                                           const AuditStore& store,
                                           const ReportInputs& in);

// RFC 3339 UTC with the fraction of a second when there is one, e.g.
// "2026-12-01T15:00:00Z", "2026-12-01T15:00:00.5Z".
std::string Rfc3339(int64_t unix_nanos);

}  // namespace layerproof::verifier

#endif  // LAYERPROOF_VERIFIER_REPORT_BUILDER_H_
