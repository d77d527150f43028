// The HTML page of a compliance report (verifier/report_html.h), written
// from the report as verifier/report_html_reader.cc read and checked it.
#include "verifier/report_html.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "kernels/status.h"
#include "store/internal/str_cat.h"
#include "store/merkle.h"
#include "store/status.h"
#include "verifier/internal/report_view.h"
#include "verifier/report_svg.h"

namespace layerproof::verifier {
namespace internal::report_view {
namespace {

using store::internal::Cat;

template <typename... Parts>
void Append(std::string* out, const Parts&... parts) {
  (store::internal::AppendPart(*out, parts), ...);
}
using report_svg::HtmlEscape;
using report_svg::Percent;

std::string E(std::string_view s) { return HtmlEscape(s); }

std::string Utc(int64_t nanos, const char* format = "%Y-%m-%d %H:%M:%S UTC") {
  return absl::FormatTime(format, absl::FromUnixNanos(nanos),
                          absl::UTCTimeZone());
}

std::string DurationText(int64_t nanos) {
  constexpr int64_t kSecond = 1'000'000'000;
  if (nanos > 0 && nanos % (3600 * kSecond) == 0) {
    return Cat(nanos / (3600 * kSecond), " h");
  }
  if (nanos > 0 && nanos % (60 * kSecond) == 0) {
    return Cat(nanos / (60 * kSecond), " min");
  }
  if (nanos > 0 && nanos % kSecond == 0) {
    return Cat(nanos / kSecond, " s");
  }
  char ms[32];
  std::snprintf(ms, sizeof ms, "%g ms", static_cast<double>(nanos) / 1e6);
  return ms;
}

// The verdict kinds to show: the six of docs/reports.md, then any other
// kind a verdicts object names, sorted.
std::vector<std::string> KindsOf(const Report& r) {
  std::vector<std::string> kinds(std::begin(report_svg::kVerdictKinds),
                                 std::end(report_svg::kVerdictKinds));
  std::set<std::string> extra;
  const auto add = [&](const Verdicts& v) {
    for (const auto& [kind, n] : v) {
      if (std::find(kinds.begin(), kinds.end(), kind) == kinds.end()) {
        extra.insert(kind);
      }
    }
  };
  add(r.totals.verdicts);
  for (const Prover& p : r.provers) add(p.counts.verdicts);
  for (const Model& m : r.models) add(m.counts.verdicts);
  kinds.insert(kinds.end(), extra.begin(), extra.end());
  return kinds;
}

report_svg::VerdictRow Row(std::string label, const Verdicts& v,
                           const std::vector<std::string>& kinds) {
  report_svg::VerdictRow row{std::move(label), {}};
  for (const std::string& k : kinds) {
    const auto it = v.find(k);
    row.counts.push_back(it == v.end() ? 0 : it->second);
  }
  return row;
}

// "PASS 9<br>FAIL_MISMATCH 7": the non-zero kinds.
std::string VerdictList(const Verdicts& v,
                        const std::vector<std::string>& kinds) {
  std::string out;
  for (const std::string& k : kinds) {
    const auto it = v.find(k);
    if (it == v.end() || it->second == 0) continue;
    Append(&out, out.empty() ? "" : "<br>", E(k), "&nbsp;", it->second);
  }
  return out.empty() ? "&mdash;" : out;
}

std::string RuledOut(const Detection& d, std::optional<double> f) {
  if (d.failures > 0) return "<strong>detected</strong>";
  if (!f) return "not enough audits";
  return "f &ge; " + E(Percent(*f));
}

report_svg::CurveSeries Series(std::string label, const Detection& d) {
  return {std::move(label), d.curve, d.f95, d.f99, d.failures};
}

std::string Td(std::string_view html, std::string_view cls = "") {
  return Cat(cls.empty() ? "<td>" : Cat("<td class=\"", cls, "\">"), html,
             "</td>");
}
std::string TdN(int64_t n) { return Td(Cat(n), "n"); }

constexpr char kStyle[] = R"css(
:root{color-scheme:light}
body{font:14px/1.45 "DejaVu Sans",Arial,Helvetica,sans-serif;color:#111;background:#fff;margin:0}
main{max-width:980px;margin:0 auto;padding:24px}
h1{font-size:26px;margin:0 0 10px}
h2{font-size:19px;border-bottom:2px solid #222;padding-bottom:2px;margin:28px 0 10px}
h3{font-size:15px;margin:16px 0 6px}
dl.meta{display:grid;grid-template-columns:max-content 1fr;gap:2px 16px;margin:0}
dl.meta dt{font-weight:bold}
dl.meta dd{margin:0}
table{border-collapse:collapse;width:100%;margin:8px 0;font-size:13px}
th,td{border:1px solid #888;padding:3px 6px;text-align:left;vertical-align:top}
th{background:#e8e8e8}
td.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
table.kv th{width:34%}
code{font-family:"DejaVu Sans Mono",monospace;font-size:12px;overflow-wrap:anywhere}
pre{white-space:pre-wrap;overflow-wrap:anywhere;background:#f5f5f5;border:1px solid #bbb;padding:8px;font-size:12px;font-family:"DejaVu Sans Mono",monospace}
.banner{border:2px solid;padding:8px 12px;font-weight:bold;margin:12px 0}
.ok{border-color:#2d6a2d;background:#eef7ee}
.bad{border-color:#8c1c13;background:#fbeeed}
figure{margin:16px 0}
figcaption{font-size:12px;color:#333;margin-top:4px}
svg.chart{display:block;width:100%;max-width:720px;height:auto;border:1px solid #bbb}
footer{margin-top:32px;font-size:12px;color:#444}
@page{size:A4;margin:15mm}
@media print{
 *{-webkit-print-color-adjust:exact;print-color-adjust:exact}
 body{font-size:10pt;color:#000;background:#fff}
 main{max-width:none;padding:0}
 h2,h3{break-after:avoid;page-break-after:avoid}
 figure,table,pre,dl,.banner{break-inside:avoid;page-break-inside:avoid}
 table.long{break-inside:auto;page-break-inside:auto}
 tr{break-inside:avoid;page-break-inside:avoid}
 thead{display:table-header-group}
 th{background:#fff}
 .ok,.bad{background:#fff;color:#000}
 svg.chart{border:none;max-width:100%}
 footer{color:#000}
}
)css";

void Header(const Report& r, std::string& out) {
  Append(
      &out, "<header><h1>LayerProof compliance report</h1><dl class=\"meta\">",
      "<dt>Verifier</dt><dd>", E(r.verifier_id), "</dd>",
      "<dt>Log origin</dt><dd><code>", E(r.log_origin), "</code></dd>",
      "<dt>Window</dt><dd>", E(r.window_from), " &ndash; ", E(r.window_to),
      "</dd><dt>Generated at</dt><dd>", E(r.generated_at), "</dd>",
      "<dt>Provers</dt><dd>",
      r.prover_filter.empty() ? "all provers"
                              : "only <code>" + E(r.prover_filter) + "</code>",
      "</dd><dt>Client nonce</dt><dd>",
      r.client_nonce.empty() ? std::string("none sent")
                             : "<code>" + E(r.client_nonce) + "</code>",
      "</dd><dt>Format</dt><dd><code>", kFormat, "</code></dd></dl></header>");
}

void Summary(const Report& r, std::string& out) {
  const Counts& t = r.totals;
  Append(&out, "<section id=\"summary\"><h2>Summary</h2>");
  if (t.failures > 0) {
    Append(&out, "<p class=\"banner bad\">", t.failures, " failed audit",
           t.failures == 1 ? "" : "s",
           " in this window: see <a href=\"#failures\">Failures</a>."
           "</p>");
  } else {
    Append(&out,
           "<p class=\"banner ok\">No failed audits in this "
           "window (",
           t.audits, " audits).</p>");
  }
  if (r.commitments_timed_by_prover_clock > 0) {
    Append(&out, "<p id=\"prover-clock\" class=\"banner bad\">",
           r.commitments_timed_by_prover_clock,
           " commitment(s) have no time of logging recorded by the verifier "
           "(logged by an older build) and are windowed by the time the "
           "prover wrote into them.</p>");
  }
  const Detection& d = r.detection;
  Append(&out, "<table class=\"kv\"><tbody>", "<tr><th>Commitments logged</th>",
         TdN(t.commitments), "</tr>", "<tr><th>Audited commitments</th>",
         TdN(t.audited_commitments), "</tr>",
         "<tr><th>Audits (drawn / on demand)</th>",
         Td(Cat(t.audits, " (", t.drawn_audits, " / ", t.on_demand_audits, ")"),
            "n"),
         "</tr>", "<tr><th>Realised audit rate vs policy</th>",
         Td(Cat(E(Percent(t.realised_audit_rate)), " vs ",
                E(Percent(r.audit_rate)), " (", r.layers_per_audit,
                " blocks per audit)"),
            "n"),
         "</tr>", "<tr><th>Failures</th>", TdN(t.failures), "</tr>",
         "<tr><th>Blocks checked per drawn audit (d min / mean)</th>",
         Td(Cat(E(Percent(d.d_min)), " / ", E(Percent(d.d_mean))), "n"),
         "</tr><tr><th>Cheating rate ruled out at 95 % / 99 %</th>",
         Td(Cat(RuledOut(d, d.f95), " / ", RuledOut(d, d.f99)), "n"),
         "</tr></tbody></table></section>");
}

void LogSection(const Report& r, std::string& out) {
  Append(&out, "<section id=\"log\"><h2>Log checkpoint</h2>",
         "<table class=\"kv\"><tbody><tr><th>Tree size</th>", TdN(r.tree_size),
         "</tr><tr><th>Root hash</th>",
         Td("<code>" + E(r.root_hash) + "</code>"),
         "</tr></tbody></table><h3>Signed checkpoint note</h3><pre>", E(r.note),
         "</pre><h3>Consistency with the previous report</h3>");
  if (!r.previous) {
    Append(&out,
           "<p id=\"consistency\" class=\"banner ok\">First "
           "report: this verifier issued no earlier report to "
           "be consistent with.</p></section>");
    return;
  }
  const Previous& p = *r.previous;
  const bool caller = p.source == "caller";
  std::vector<store::Sha256Hash> proof;
  for (const std::string& h : p.proof) proof.push_back(*store::ParseHash(h));
  const absl::Status consistent = store::VerifyConsistency(
      static_cast<uint64_t>(p.tree_size), static_cast<uint64_t>(r.tree_size),
      *store::ParseHash(p.root_hash), *store::ParseHash(r.root_hash), proof);
  std::string proof_flag;
  for (const std::string& h : p.proof) {
    Append(&proof_flag, proof_flag.empty() ? "" : ",", h);
  }
  Append(&out,
         "<table class=\"kv\"><tbody><tr><th>Previous checkpoint named "
         "by</th>",
         Td(caller ? "the requester (its own previous report's tree size)"
                   : "the verifier (the last report it issued)"),
         "</tr><tr><th>Previous report generated</th>",
         Td(p.generated_at.has_value() ? E(Utc(*p.generated_at))
                                       : std::string("not stated")),
         "</tr><tr><th>Previous tree size</th>", TdN(p.tree_size),
         "</tr><tr><th>Previous root hash</th>",
         Td("<code>" + E(p.root_hash) + "</code>"), "</tr></tbody></table>");
  if (consistent.ok()) {
    Append(&out,
           "<p id=\"consistency\" class=\"banner ok\">"
           "The consistency proof in this report (",
           proof.size(), " hashes) links the checkpoint of tree size ",
           p.tree_size, ", root <code>", E(p.root_hash),
           "</code>, to this report's checkpoint (tree size ", r.tree_size,
           "). This was checked from the report's own fields; check it "
           "against your own previous report with <code>layerproof report "
           "verify NEW.json --verifier-key FILE --previous OLD.json</code>."
           "</p>");
  } else {
    Append(&out,
           "<p id=\"consistency\" class=\"banner bad\">NOT "
           "consistent with the previous report: ",
           E(std::string(consistent.message())), "</p>");
  }
  Append(&out,
         "<p>Check it yourself:</p><pre>layerproof log "
         "verify-consistency --old-size ",
         p.tree_size, " --new-size ", r.tree_size, " \\\n  --old-root ",
         E(p.root_hash), " \\\n  --new-root ", E(r.root_hash),
         " \\\n  --proof '", E(proof_flag), "'</pre></section>");
}

void Charts(const Report& r, const std::vector<std::string>& kinds,
            std::string& out) {
  std::vector<report_svg::TimelineBucket> buckets;
  const bool long_span =
      !r.buckets.empty() &&
      r.buckets.back().first - r.buckets.front().first > 86'400'000'000'000;
  for (const auto& [start, pf] : r.buckets) {
    buckets.push_back({Utc(start, long_span ? "%m-%d %H:%M" : "%H:%M:%S"),
                       pf.first, pf.second});
  }
  std::string caption = "bucket start (UTC)";
  if (!r.buckets.empty()) {
    Append(&caption, ", from ", Utc(r.buckets.front().first), "; buckets of ",
           DurationText(r.bucket_nanos));
  }
  std::vector<report_svg::VerdictRow> prover_rows;
  std::vector<report_svg::CurveSeries> prover_curves;
  for (const Prover& p : r.provers) {
    prover_rows.push_back(Row(p.id, p.counts.verdicts, kinds));
    prover_curves.push_back(Series(p.id, p.detection));
  }
  Append(&out, "<section id=\"charts\"><h2>Charts</h2><figure>",
         report_svg::TimelineChart("chart-timeline", buckets, caption),
         "<figcaption>Audits over time: passed (light) and failed (dark, "
         "hatched) audits per bucket.</figcaption></figure><figure>",
         report_svg::VerdictChart("chart-verdicts", kinds,
                                  Row("all", r.totals.verdicts, kinds),
                                  prover_rows),
         "<figcaption>Verdict breakdown: every audit in the window by verdict, "
         "then per prover.</figcaption></figure><figure>",
         report_svg::DetectionChart(
             "chart-detection",
             Series("all provers (drawn audits)", r.detection), prover_curves),
         "<figcaption>Detection confidence: how sure the window's drawn audits "
         "make us that a prover falsifying a fraction f of its requests would "
         "have been caught (see <a href=\"#how-to-read\">How to read "
         "this</a>).</figcaption></figure></section>");
}

void Tables(const Report& r, const std::vector<std::string>& kinds,
            std::string& out) {
  Append(&out,
         "<section id=\"by-prover\"><h2>By prover</h2><table><thead><tr>"
         "<th>Prover</th><th>Commit&shy;ments</th><th>Audits (drawn / on "
         "demand)</th><th>Audit rate</th><th>Verdicts</th><th>Failures</th>"
         "<th>d min / mean</th><th>Ruled out at 95 %</th><th>Ruled out at "
         "99 %</th></tr></thead><tbody>");
  for (const Prover& p : r.provers) {
    const Counts& c = p.counts;
    const Detection& d = p.detection;
    Append(
        &out, "<tr>", Td("<code>" + E(p.id) + "</code>"), TdN(c.commitments),
        Td(Cat(c.audits, " (", c.drawn_audits, " / ", c.on_demand_audits, ")"),
           "n"),
        Td(E(Percent(c.realised_audit_rate)), "n"),
        Td(VerdictList(c.verdicts, kinds)), TdN(c.failures),
        Td(Cat(E(Percent(d.d_min)), " / ", E(Percent(d.d_mean))), "n"),
        Td(RuledOut(d, d.f95)), Td(RuledOut(d, d.f99)), "</tr>");
  }
  if (r.provers.empty()) {
    out += "<tr><td colspan=\"9\">No provers in this window.</td></tr>";
  }
  Append(&out,
         "</tbody></table></section><section id=\"by-model\"><h2>By "
         "model</h2><table><thead><tr><th>Model digest</th><th>Commitments"
         "</th><th>Audits</th><th>Failures</th><th>Verdicts</th></tr>"
         "</thead><tbody>");
  for (const Model& m : r.models) {
    Append(&out, "<tr>", Td("<code>" + E(m.digest) + "</code>"),
           TdN(m.counts.commitments), TdN(m.counts.audits),
           TdN(m.counts.failures), Td(VerdictList(m.counts.verdicts, kinds)),
           "</tr>");
  }
  if (r.models.empty()) {
    out += "<tr><td colspan=\"5\">No models in this window.</td></tr>";
  }
  Append(&out,
         "</tbody></table></section><section id=\"failures\">"
         "<h2>Failures</h2>");
  if (r.failures.empty() && r.failures_omitted == 0) {
    out += "<p>No failed audits in this window.</p></section>";
    return;
  }
  Append(&out,
         "<table class=\"long\"><thead><tr><th>#</th><th>Request, prover, "
         "model</th><th>Outcome</th><th>Log leaves</th><th>When</th>"
         "<th>Detail</th><th>Evidence</th></tr></thead><tbody>");
  for (size_t i = 0; i < r.failures.size(); ++i) {
    const Failure& x = r.failures[i];
    Append(
        &out, "<tr>", Td(Cat(i + 1), "n"),
        Td(Cat("<code>", E(x.request_id), "</code><br>prover <code>",
               E(x.prover_id), "</code><br>model <code>", E(x.model_digest),
               "</code>")),
        Td(Cat("<strong>", E(x.outcome), "</strong>",
               x.layer ? Cat("<br>layer ", *x.layer) : "")),
        Td(Cat("verdict ", x.verdict_leaf_index, "<br>commitment ",
               x.commitment_leaf_index ? Cat(*x.commitment_leaf_index)
                                       : "none (refused at submission)")),
        Td(Cat(E(Utc(x.created_at)), "<br>",
               x.on_demand ? "on demand" : "drawn")),
        Td(E(x.detail)),
        Td(Cat("<code>", E(x.evidence_rpc), "</code><br>request_id ", "<code>",
               E(x.evidence_request_id), "</code><br>verdict_leaf_index ",
               x.evidence_verdict_leaf_index)),
        "</tr>");
  }
  Append(&out, "</tbody></table>");
  if (r.failures_omitted > 0) {
    Append(&out, "<p><strong>", r.failures_omitted,
           " more failures</strong> are not listed in this report; "
           "list them with <code>layerproof.v1.Audit/ListVerdicts"
           "</code>.</p>");
  }
  out += "</section>";
}

constexpr char kHowToRead[] =
    R"html(<section id="how-to-read"><h2>How to read this</h2>
<p><strong>The window.</strong> Commitments are counted in the window by the time the verifier logged them (its own clock), not by the time the prover wrote into them.</p>
<p><strong>What an audit checks.</strong> After a request's commitment is logged, the verifier draws with fresh randomness whether to audit it and which transformer blocks to re-execute. It recomputes those blocks (and always the head: final norm, LM head and sampler) on its own hardware and requires the layer hashes to match the commitment bit for bit. A single flipped bit is a failure.</p>
<p><strong>The detection bound.</strong> Drawn audit <i>i</i> checks a fraction <i>d<sub>i</sub></i> = audited blocks / <i>L</i> of the model's <i>L</i> blocks. Suppose a prover falsifies each request independently with probability <i>f</i> (one that falsifies a fixed fraction <i>f</i> of the window&rsquo;s requests escapes no more often). Each drawn audit then misses the cheating with probability at most 1 &minus; <i>f</i>&middot;<i>d<sub>i</sub></i>, so all of them miss it with probability at most <i>M</i>(<i>f</i>) = &prod;<sub><i>i</i></sub> (1 &minus; <i>f</i>&middot;<i>d<sub>i</sub></i>). The detection chart plots the confidence 1 &minus; <i>M</i>(<i>f</i>). A cheating rate <i>f</i> is <em>ruled out at 95 %</em> (99 %) when 1 &minus; <i>M</i>(<i>f</i>) &ge; 0.95 (0.99): had the prover cheated that often, these audits would have caught it with at least that probability; the tables give the smallest such <i>f</i>. Only drawn audits count: on-demand audits were not chosen at random. &ldquo;Not enough audits&rdquo; means no <i>f</i> &le; 100 % reaches that confidence. &ldquo;Detected&rdquo; means an audit failed: cheating (or a hardware fault) was caught, not bounded, and each failure is listed with its evidence.</p>
<p><strong>Re-verifying without trusting the verifier.</strong></p>
<ul>
<li>Each failure: fetch its evidence bundle with <code>layerproof.v1.Audit/GetEvidence</code> (the request id and verdict leaf index in the Evidence column) and run <code>layerproof verify-bundle</code> on it, on your own hardware: it checks both inclusion proofs against the signed checkpoint and re-executes the audited layers. Bundles hold the request's salt and activations, so they go only to authorised parties.</li>
<li>The log: <code>layerproof report verify NEW.json --verifier-key FILE --previous OLD.json</code>, with this report's JSON and your own previous report, checks the signature, the signed checkpoint note and that this report's log extends the one of your previous report (exit 0 verified, 1 not verified); fetch the report with <code>layerproof report --previous OLD.json</code> so that its proof starts at your report. <code>layerproof log verify-consistency</code> with the sizes, roots and proof in <a href="#log">Log checkpoint</a> checks the proof alone.</li>
<li>This page is a view of the report JSON (<code>layerproof.compliance-report.v1</code>); the verifier's signature covers the JSON, which <code>layerproof report</code> fetches.</li>
</ul></section>)html";

// The page for the checked report `r`.
std::string Page(const Report& r) {
  const std::vector<std::string> kinds = KindsOf(r);
  std::string out;
  Append(&out,
         "<!DOCTYPE html>\n<html lang=\"en\"><head><meta "
         "charset=\"utf-8\"><meta name=\"viewport\" "
         "content=\"width=device-width, initial-scale=1\">"
         "<title>LayerProof compliance report</title><style>",
         kStyle, "</style></head><body><main>");
  Header(r, out);
  Summary(r, out);
  LogSection(r, out);
  Charts(r, kinds, out);
  Tables(r, kinds, out);
  Append(&out, kHowToRead, "<footer>Rendered from the report of verifier ",
         E(r.verifier_id), " generated at ", E(r.generated_at), " (",
         E(Utc(r.generated_at_nanos)),
         "). The signed JSON is the record; this page is a view of "
         "it.</footer></main></body></html>\n");
  return out;
}

}  // namespace
}  // namespace internal::report_view

absl::StatusOr<std::string> RenderReportHtml(const nlohmann::json& report) {
  absl::StatusOr<std::string> result = [&]() -> absl::StatusOr<std::string> {
    LP_ASSIGN_OR_RETURN(internal::report_view::Report r,
                        internal::report_view::ReadReport(report));
    return internal::report_view::Page(r);
  }();
  if (!result.ok())
    return ::layerproof::store::PrintableStatus(result.status());
  return result;
}

}  // namespace layerproof::verifier
