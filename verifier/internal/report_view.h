// The compliance report JSON as the HTML page reads it (private to
// verifier/report_html.cc and verifier/report_html_reader.cc): ReadReport
// checks every field the page uses (docs/reports.md) and returns them typed,
// so that the page writer never touches unchecked JSON.
//
// Thread safety: a pure function over value types.
#ifndef LAYERPROOF_VERIFIER_INTERNAL_REPORT_VIEW_H_
#define LAYERPROOF_VERIFIER_INTERNAL_REPORT_VIEW_H_

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "verifier/report_svg.h"

namespace layerproof::verifier::internal::report_view {

inline constexpr std::string_view kFormat = "layerproof.compliance-report.v1";

using Verdicts = std::map<std::string, int64_t>;

struct Detection {
  int64_t drawn_audits = 0, failures = 0;
  double d_min = 0, d_mean = 0;
  std::optional<double> f95, f99;
  std::vector<report_svg::CurvePoint> curve;
};
// The counts every scope of the report has (totals, a prover, a model).
struct Counts {
  int64_t commitments = 0, audited_commitments = 0, audits = 0;
  int64_t drawn_audits = 0, on_demand_audits = 0, failures = 0;
  double realised_audit_rate = 0;
  Verdicts verdicts;
};
struct Prover {
  std::string id;
  Counts counts;
  Detection detection;
};
struct Model {
  std::string digest;
  Counts counts;
};
struct Failure {
  std::string request_id, prover_id, model_digest, outcome, detail;
  std::optional<int64_t> layer, commitment_leaf_index;
  int64_t verdict_leaf_index = 0, created_at = 0;
  bool on_demand = false;
  std::string evidence_rpc, evidence_request_id;
  int64_t evidence_verdict_leaf_index = 0;
};
struct Previous {
  // "caller" (the requester named tree_size) or "last_issued"; reports
  // older than the field read as "last_issued".
  std::string source = "last_issued";
  std::optional<int64_t> generated_at;  // null for source "caller"
  int64_t tree_size = 0;
  std::string root_hash;
  std::vector<std::string> proof;
};

struct Report {
  std::string verifier_id, log_origin, generated_at, prover_filter;
  std::string client_nonce;  // hex; empty when none was sent
  int64_t generated_at_nanos = 0;
  std::string window_from, window_to;
  int64_t window_from_nanos = 0, window_to_nanos = 0;
  double audit_rate = 0;
  int64_t layers_per_audit = 0;
  int64_t tree_size = 0;
  std::string root_hash, note;
  std::optional<Previous> previous;
  Counts totals;
  // Commitments windowed by their created_at (no recorded time of logging).
  int64_t commitments_timed_by_prover_clock = 0;
  std::vector<Prover> provers;
  std::vector<Model> models;
  Detection detection;
  int64_t bucket_nanos = 0;
  std::vector<std::pair<int64_t, std::pair<int64_t, int64_t>>> buckets;
  std::vector<Failure> failures;
  int64_t failures_omitted = 0;
};

// `json`, a `layerproof.compliance-report.v1` object that may be hostile,
// checked and read; InvalidArgument naming the first bad field
// ("compliance report: by_prover[1].prover_id: got 5, want a string").
// Nothing throws.
absl::StatusOr<Report> ReadReport(const nlohmann::json& json);

}  // namespace layerproof::verifier::internal::report_view

#endif  // LAYERPROOF_VERIFIER_INTERNAL_REPORT_VIEW_H_
