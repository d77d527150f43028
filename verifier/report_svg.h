// The hand-written SVG charts of the HTML compliance report
// (verifier/report_html.h) and the text helpers they share with the page.
//
// Every chart is one self-contained <svg> element: its own <defs>, a <title>,
// role="img" and an aria-label, an id given by the caller, no script and no
// external reference. Charts stay legible in greyscale: each series differs
// in lightness or pattern, and bars carry their numbers. Every string that
// reaches the output goes through HtmlEscape. Inputs are already validated
// (counts >= 0, fractions in [0, 1]); sizes are capped here (bars merged,
// series limited), so hostile volumes cannot blow the page up.
//
// Thread safety: pure functions.
#ifndef LAYERPROOF_VERIFIER_REPORT_SVG_H_
#define LAYERPROOF_VERIFIER_REPORT_SVG_H_

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace layerproof::verifier::report_svg {

// `text` made safe for HTML and SVG element content and quoted attribute
// values: & < > " ' become entities; control characters other than tab,
// newline and carriage return and invalid UTF-8 become U+FFFD.
std::string HtmlEscape(std::string_view text);

// At most `max_chars` code points of `text` (valid UTF-8 after HtmlEscape's
// repair), with "…" in place of the rest. Not escaped.
std::string Ellipsize(std::string_view text, size_t max_chars);

// `fraction` as a percentage with `decimals` digits: 0.3 -> "30.0 %".
std::string Percent(double fraction, int decimals = 1);

// The verdict kinds in the order the report lists them (docs/reports.md).
inline constexpr std::string_view kVerdictKinds[] = {
    "PASS",           "FAIL_MISMATCH", "FAIL_OPENING", "FAIL_TIMEOUT",
    "FAIL_SIGNATURE", "FAIL_MODEL",    "INCONCLUSIVE", "FAIL_UNLOGGED"};

// (a) Audits over time: one stacked bar (pass below, fail above) per
// bucket; more than 30 buckets are merged into at most 30 bars, each
// labelled with its first bucket's label. `caption` titles the time axis.
struct TimelineBucket {
  std::string label;
  int64_t pass = 0;
  int64_t fail = 0;
};
std::string TimelineChart(std::string_view id,
                          std::span<const TimelineBucket> buckets,
                          std::string_view caption);

// (b) Verdict breakdown: one horizontal bar per verdict kind over the
// window, then one stacked bar per prover (at most 20 drawn). `kinds` names
// the columns of every `counts` vector.
struct VerdictRow {
  std::string label;
  std::vector<int64_t> counts;  // one per kind
};
std::string VerdictChart(std::string_view id,
                         std::span<const std::string> kinds,
                         const VerdictRow& totals,
                         std::span<const VerdictRow> provers);

// (c) Detection confidence 1 - M(f) against the cheating rate f, with the
// 95 % and 99 % lines and the overall series' ruled-out f marked. At most 6
// of `provers` are drawn besides `overall`.
struct CurvePoint {
  double f = 0;
  double confidence = 0;
};
struct CurveSeries {
  std::string label;
  std::vector<CurvePoint> points;  // ascending f
  std::optional<double> f95;
  std::optional<double> f99;
  int64_t failures = 0;
};
std::string DetectionChart(std::string_view id, const CurveSeries& overall,
                           std::span<const CurveSeries> provers);

}  // namespace layerproof::verifier::report_svg

#endif  // LAYERPROOF_VERIFIER_REPORT_SVG_H_
