// The HTML rendering of a compliance report (DESIGN §1 step 5,
// docs/reports.md): one self-contained page for a compliance officer to read
// and print. Inline CSS (with print rules for A4), hand-written inline SVG
// charts, no script and no external resource.
//
// The page shows the header (verifier, log origin, window, generation time,
// prover filter), a summary, the log checkpoint and the consistency with the
// previous report (the RFC 9162 proof is checked while rendering), three
// charts (ids "chart-timeline", "chart-verdicts", "chart-detection"), tables
// by prover, by model and of every failure with its evidence reference, and
// a "How to read this" section.
//
// The page is a view of the signed report JSON, not an attestation itself:
// the signature covers the JSON.
//
// Thread safety: a pure function.
#ifndef LAYERPROOF_VERIFIER_REPORT_HTML_H_
#define LAYERPROOF_VERIFIER_REPORT_HTML_H_

#include <nlohmann/json.hpp>
#include <string>

#include "absl/status/statusor.h"

namespace layerproof::verifier {

// Renders `report`, a `layerproof.compliance-report.v1` object
// (docs/reports.md), as a UTF-8 HTML document. The report may be hostile:
// every field the page uses is checked first, and a missing or ill-typed
// one gives InvalidArgument naming it ("compliance report: by_prover[1].
// prover_id: got 5, want a string"); nothing throws. Every string from the
// report is HTML-escaped (invalid UTF-8 and control characters become
// U+FFFD).
absl::StatusOr<std::string> RenderReportHtml(const nlohmann::json& report);

}  // namespace layerproof::verifier

#endif  // LAYERPROOF_VERIFIER_REPORT_HTML_H_
