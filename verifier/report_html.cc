#include "verifier/report_html.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <map>
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
#include "verifier/report_svg.h"

namespace layerproof::verifier {
namespace {

using Json = nlohmann::json;

using store::internal::Cat;

template <typename... Parts>
void Append(std::string* out, const Parts&... parts) {
  (store::internal::AppendPart(*out, parts), ...);
}
using report_svg::HtmlEscape;
using report_svg::Percent;

constexpr std::string_view kFormat = "layerproof.compliance-report.v1";
// More verdict kinds than this in one object is not a report.
constexpr size_t kMaxVerdictKinds = 32;

// ---------------------------------------------------------------------------
// Reading the report: every field is checked before it is used.

std::string Short(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

std::string Describe(const Json& v) {
  // ASCII-only, so cutting it cannot split a character.
  std::string s = v.dump(-1, ' ', true, Json::error_handler_t::replace);
  if (s.size() > 60) s = s.substr(0, 57) + "...";
  return s;
}

absl::Status Bad(std::string_view path, const Json& got,
                 std::string_view want) {
  return absl::InvalidArgumentError(Cat("compliance report: ", path, ": got ",
                                        Describe(got), ", want ", want));
}

absl::Status Missing(std::string_view path, std::string_view want) {
  return absl::InvalidArgumentError(
      Cat("compliance report: ", path, ": missing, want ", want));
}

// Typed access to the fields of one JSON object; `path` names it in
// messages ("" for the report itself, "by_prover[1]", ...).
class Fields {
 public:
  static absl::StatusOr<Fields> Of(const Json& v, std::string path) {
    if (!v.is_object()) {
      return Bad(path.empty() ? "report" : path, v, "a JSON object");
    }
    return Fields(v, std::move(path));
  }

  std::string Path(std::string_view key) const {
    return path_.empty() ? std::string(key) : Cat(path_, ".", key);
  }
  // The field, or nullptr when absent or null.
  const Json* Find(std::string_view key) const {
    const auto it = object_->find(key);
    return it == object_->end() || it->is_null() ? nullptr : &*it;
  }
  absl::StatusOr<const Json*> Required(std::string_view key,
                                       std::string_view want) const {
    const Json* v = Find(key);
    if (v == nullptr) return Missing(Path(key), want);
    return v;
  }
  absl::StatusOr<std::string> String(std::string_view key) const {
    LP_ASSIGN_OR_RETURN(const Json* v, Required(key, "a string"));
    if (!v->is_string()) return Bad(Path(key), *v, "a string");
    return v->get<std::string>();
  }
  absl::StatusOr<bool> Bool(std::string_view key) const {
    LP_ASSIGN_OR_RETURN(const Json* v, Required(key, "true or false"));
    if (!v->is_boolean()) return Bad(Path(key), *v, "true or false");
    return v->get<bool>();
  }
  // A non-negative integer that fits int64_t; nullopt when absent or null.
  absl::StatusOr<std::optional<int64_t>> OptionalCount(
      std::string_view key) const {
    const Json* v = Find(key);
    if (v == nullptr) return std::optional<int64_t>();
    constexpr char kWant[] = "a non-negative integer";
    if (v->is_number_unsigned()) {
      const uint64_t u = v->get<uint64_t>();
      if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
        return Bad(Path(key), *v, kWant);
      }
      return std::optional<int64_t>(static_cast<int64_t>(u));
    }
    if (!v->is_number_integer() || v->get<int64_t>() < 0) {
      return Bad(Path(key), *v, kWant);
    }
    return std::optional<int64_t>(v->get<int64_t>());
  }
  absl::StatusOr<int64_t> Count(std::string_view key) const {
    LP_ASSIGN_OR_RETURN(std::optional<int64_t> n, OptionalCount(key));
    if (!n) return Missing(Path(key), "a non-negative integer");
    return *n;
  }
  // A finite number in [lo, hi]; nullopt when absent or null.
  absl::StatusOr<std::optional<double>> OptionalNumber(std::string_view key,
                                                       double lo,
                                                       double hi) const {
    const Json* v = Find(key);
    if (v == nullptr) return std::optional<double>();
    const std::string want =
        hi == std::numeric_limits<double>::max()
            ? Cat("a number >= ", Short(lo))
            : Cat("a number in [", Short(lo), ", ", Short(hi), "]");
    if (!v->is_number()) return Bad(Path(key), *v, want);
    const double d = v->get<double>();
    if (!std::isfinite(d) || d < lo || d > hi) return Bad(Path(key), *v, want);
    return std::optional<double>(d);
  }
  absl::StatusOr<double> Fraction(std::string_view key) const {
    LP_ASSIGN_OR_RETURN(std::optional<double> d, OptionalNumber(key, 0, 1));
    if (!d) return Missing(Path(key), "a number in [0, 1]");
    return *d;
  }
  absl::StatusOr<Fields> Object(std::string_view key) const {
    LP_ASSIGN_OR_RETURN(const Json* v, Required(key, "a JSON object"));
    return Of(*v, Path(key));
  }
  absl::StatusOr<const Json*> Array(std::string_view key) const {
    LP_ASSIGN_OR_RETURN(const Json* v, Required(key, "a JSON array"));
    if (!v->is_array()) return Bad(Path(key), *v, "a JSON array");
    return v;
  }

 private:
  Fields(const Json& object, std::string path)
      : object_(&object), path_(std::move(path)) {}
  const Json* object_;
  std::string path_;
};

std::string Item(std::string_view path, size_t i) {
  return Cat(path, "[", i, "]");
}

using Verdicts = std::map<std::string, int64_t>;

absl::StatusOr<Verdicts> ReadVerdicts(const Fields& parent) {
  LP_ASSIGN_OR_RETURN(Fields f, parent.Object("verdicts"));
  const Json& v = *parent.Find("verdicts");
  if (v.size() > kMaxVerdictKinds) {
    return Bad(parent.Path("verdicts"), v,
               Cat("at most ", kMaxVerdictKinds, " verdict kinds"));
  }
  Verdicts out;
  for (const auto& [kind, count] : v.items()) {
    LP_ASSIGN_OR_RETURN(out[kind], f.Count(kind));
  }
  return out;
}

struct Detection {
  int64_t drawn_audits = 0, failures = 0;
  double d_min = 0, d_mean = 0;
  std::optional<double> f95, f99;
  std::vector<report_svg::CurvePoint> curve;
};

absl::StatusOr<Detection> ReadDetection(const Fields& parent) {
  LP_ASSIGN_OR_RETURN(Fields f, parent.Object("detection"));
  Detection d;
  LP_ASSIGN_OR_RETURN(d.drawn_audits, f.Count("drawn_audits"));
  LP_ASSIGN_OR_RETURN(d.failures, f.Count("failures"));
  LP_ASSIGN_OR_RETURN(d.d_min, f.Fraction("layer_fraction_min"));
  LP_ASSIGN_OR_RETURN(d.d_mean, f.Fraction("layer_fraction_mean"));
  LP_ASSIGN_OR_RETURN(Fields ruled_out, f.Object("ruled_out"));
  LP_ASSIGN_OR_RETURN(d.f95, ruled_out.OptionalNumber("0.95", 0, 1));
  LP_ASSIGN_OR_RETURN(d.f99, ruled_out.OptionalNumber("0.99", 0, 1));
  LP_ASSIGN_OR_RETURN(const Json* curve, f.Array("curve"));
  for (size_t i = 0; i < curve->size(); ++i) {
    LP_ASSIGN_OR_RETURN(Fields p,
                        Fields::Of((*curve)[i], Item(f.Path("curve"), i)));
    report_svg::CurvePoint point;
    LP_ASSIGN_OR_RETURN(point.f, p.Fraction("f"));
    LP_ASSIGN_OR_RETURN(point.confidence, p.Fraction("confidence"));
    d.curve.push_back(point);
  }
  std::stable_sort(d.curve.begin(), d.curve.end(),
                   [](const auto& a, const auto& b) { return a.f < b.f; });
  return d;
}

// The counts every scope of the report has (totals, a prover, a model).
struct Counts {
  int64_t commitments = 0, audited_commitments = 0, audits = 0;
  int64_t drawn_audits = 0, on_demand_audits = 0, failures = 0;
  double realised_audit_rate = 0;
  Verdicts verdicts;
};

absl::StatusOr<Counts> ReadCounts(const Fields& f, bool full) {
  Counts c;
  LP_ASSIGN_OR_RETURN(c.commitments, f.Count("commitments"));
  LP_ASSIGN_OR_RETURN(c.audits, f.Count("audits"));
  LP_ASSIGN_OR_RETURN(c.failures, f.Count("failures"));
  LP_ASSIGN_OR_RETURN(c.verdicts, ReadVerdicts(f));
  if (!full) return c;
  LP_ASSIGN_OR_RETURN(c.audited_commitments, f.Count("audited_commitments"));
  LP_ASSIGN_OR_RETURN(c.drawn_audits, f.Count("drawn_audits"));
  LP_ASSIGN_OR_RETURN(c.on_demand_audits, f.Count("on_demand_audits"));
  // Audits of commitments logged before the window can push it above 1.
  LP_ASSIGN_OR_RETURN(std::optional<double> rate,
                      f.OptionalNumber("realised_audit_rate", 0,
                                       std::numeric_limits<double>::max()));
  if (!rate) return Missing(f.Path("realised_audit_rate"), "a number >= 0");
  c.realised_audit_rate = *rate;
  return c;
}

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
  int64_t generated_at = 0, tree_size = 0;
  std::string root_hash;
  std::vector<std::string> proof;
};

struct Report {
  std::string verifier_id, log_origin, generated_at, prover_filter;
  int64_t generated_at_nanos = 0;
  std::string window_from, window_to;
  int64_t window_from_nanos = 0, window_to_nanos = 0;
  double audit_rate = 0;
  int64_t layers_per_audit = 0;
  int64_t tree_size = 0;
  std::string root_hash, note;
  std::optional<Previous> previous;
  Counts totals;
  std::vector<Prover> provers;
  std::vector<Model> models;
  Detection detection;
  int64_t bucket_nanos = 0;
  std::vector<std::pair<int64_t, std::pair<int64_t, int64_t>>> buckets;
  std::vector<Failure> failures;
  int64_t failures_omitted = 0;
};

// A 64-hex-digit hash field.
absl::StatusOr<std::string> Hash(const Fields& f, std::string_view key) {
  LP_ASSIGN_OR_RETURN(std::string hex, f.String(key));
  if (!store::ParseHash(hex).ok()) {
    return Bad(f.Path(key), Json(hex), "64 hex digits");
  }
  return hex;
}

absl::StatusOr<Failure> ReadFailure(const Fields& f) {
  Failure x;
  LP_ASSIGN_OR_RETURN(x.request_id, f.String("request_id"));
  LP_ASSIGN_OR_RETURN(x.prover_id, f.String("prover_id"));
  LP_ASSIGN_OR_RETURN(x.model_digest, f.String("model_digest"));
  LP_ASSIGN_OR_RETURN(x.outcome, f.String("outcome"));
  LP_ASSIGN_OR_RETURN(x.detail, f.String("detail"));
  LP_ASSIGN_OR_RETURN(x.layer, f.OptionalCount("layer"));
  LP_ASSIGN_OR_RETURN(x.verdict_leaf_index, f.Count("verdict_leaf_index"));
  LP_ASSIGN_OR_RETURN(x.commitment_leaf_index,
                      f.OptionalCount("commitment_leaf_index"));
  LP_ASSIGN_OR_RETURN(x.created_at, f.Count("created_at_unix_nanos"));
  LP_ASSIGN_OR_RETURN(x.on_demand, f.Bool("on_demand"));
  LP_ASSIGN_OR_RETURN(Fields e, f.Object("evidence"));
  LP_ASSIGN_OR_RETURN(x.evidence_rpc, e.String("rpc"));
  LP_ASSIGN_OR_RETURN(x.evidence_request_id, e.String("request_id"));
  LP_ASSIGN_OR_RETURN(x.evidence_verdict_leaf_index,
                      e.Count("verdict_leaf_index"));
  return x;
}

absl::StatusOr<Report> ReadReport(const Json& json) {
  LP_ASSIGN_OR_RETURN(Fields f, Fields::Of(json, ""));
  Report r;
  LP_ASSIGN_OR_RETURN(std::string format, f.String("format"));
  if (format != kFormat) return Bad("format", Json(format), kFormat);
  LP_ASSIGN_OR_RETURN(r.verifier_id, f.String("verifier_id"));
  LP_ASSIGN_OR_RETURN(r.log_origin, f.String("log_origin"));
  LP_ASSIGN_OR_RETURN(r.generated_at, f.String("generated_at"));
  LP_ASSIGN_OR_RETURN(r.generated_at_nanos, f.Count("generated_at_unix_nanos"));
  LP_ASSIGN_OR_RETURN(r.prover_filter, f.String("prover_filter"));
  LP_ASSIGN_OR_RETURN(Fields window, f.Object("window"));
  LP_ASSIGN_OR_RETURN(r.window_from, window.String("from"));
  LP_ASSIGN_OR_RETURN(r.window_to, window.String("to"));
  LP_ASSIGN_OR_RETURN(r.window_from_nanos, window.Count("from_unix_nanos"));
  LP_ASSIGN_OR_RETURN(r.window_to_nanos, window.Count("to_unix_nanos"));
  LP_ASSIGN_OR_RETURN(Fields policy, f.Object("policy"));
  LP_ASSIGN_OR_RETURN(r.audit_rate, policy.Fraction("audit_rate"));
  LP_ASSIGN_OR_RETURN(r.layers_per_audit, policy.Count("layers_per_audit"));
  LP_ASSIGN_OR_RETURN(Fields checkpoint, f.Object("checkpoint"));
  LP_ASSIGN_OR_RETURN(r.tree_size, checkpoint.Count("tree_size"));
  LP_ASSIGN_OR_RETURN(r.root_hash, Hash(checkpoint, "root_hash"));
  LP_ASSIGN_OR_RETURN(r.note, checkpoint.String("note"));
  if (f.Find("previous_report") != nullptr) {
    LP_ASSIGN_OR_RETURN(Fields p, f.Object("previous_report"));
    Previous prev;
    LP_ASSIGN_OR_RETURN(prev.generated_at, p.Count("generated_at_unix_nanos"));
    LP_ASSIGN_OR_RETURN(prev.tree_size, p.Count("tree_size"));
    LP_ASSIGN_OR_RETURN(prev.root_hash, Hash(p, "root_hash"));
    LP_ASSIGN_OR_RETURN(const Json* proof, p.Array("consistency_proof"));
    for (size_t i = 0; i < proof->size(); ++i) {
      const Json& h = (*proof)[i];
      const std::string path = Item(p.Path("consistency_proof"), i);
      if (!h.is_string() || !store::ParseHash(h.get<std::string>()).ok()) {
        return Bad(path, h, "64 hex digits");
      }
      prev.proof.push_back(h.get<std::string>());
    }
    r.previous = std::move(prev);
  }
  LP_ASSIGN_OR_RETURN(Fields totals, f.Object("totals"));
  LP_ASSIGN_OR_RETURN(r.totals, ReadCounts(totals, /*full=*/true));
  LP_ASSIGN_OR_RETURN(const Json* by_prover, f.Array("by_prover"));
  for (size_t i = 0; i < by_prover->size(); ++i) {
    LP_ASSIGN_OR_RETURN(Fields p,
                        Fields::Of((*by_prover)[i], Item("by_prover", i)));
    Prover prover;
    LP_ASSIGN_OR_RETURN(prover.id, p.String("prover_id"));
    LP_ASSIGN_OR_RETURN(prover.counts, ReadCounts(p, /*full=*/true));
    LP_ASSIGN_OR_RETURN(prover.detection, ReadDetection(p));
    r.provers.push_back(std::move(prover));
  }
  LP_ASSIGN_OR_RETURN(const Json* by_model, f.Array("by_model"));
  for (size_t i = 0; i < by_model->size(); ++i) {
    LP_ASSIGN_OR_RETURN(Fields m,
                        Fields::Of((*by_model)[i], Item("by_model", i)));
    Model model;
    LP_ASSIGN_OR_RETURN(model.digest, m.String("model_digest"));
    LP_ASSIGN_OR_RETURN(model.counts, ReadCounts(m, /*full=*/false));
    r.models.push_back(std::move(model));
  }
  LP_ASSIGN_OR_RETURN(r.detection, ReadDetection(f));
  LP_ASSIGN_OR_RETURN(Fields timeline, f.Object("timeline"));
  LP_ASSIGN_OR_RETURN(r.bucket_nanos, timeline.Count("bucket_nanos"));
  LP_ASSIGN_OR_RETURN(const Json* buckets, timeline.Array("buckets"));
  for (size_t i = 0; i < buckets->size(); ++i) {
    LP_ASSIGN_OR_RETURN(Fields b,
                        Fields::Of((*buckets)[i], Item("timeline.buckets", i)));
    int64_t start, pass, fail;
    LP_ASSIGN_OR_RETURN(start, b.Count("start_unix_nanos"));
    LP_ASSIGN_OR_RETURN(pass, b.Count("pass"));
    LP_ASSIGN_OR_RETURN(fail, b.Count("fail"));
    r.buckets.push_back({start, {pass, fail}});
  }
  LP_ASSIGN_OR_RETURN(const Json* failures, f.Array("failures"));
  for (size_t i = 0; i < failures->size(); ++i) {
    LP_ASSIGN_OR_RETURN(Fields x,
                        Fields::Of((*failures)[i], Item("failures", i)));
    LP_ASSIGN_OR_RETURN(Failure failure, ReadFailure(x));
    r.failures.push_back(std::move(failure));
  }
  LP_ASSIGN_OR_RETURN(r.failures_omitted, f.Count("failures_omitted"));
  return r;
}

// ---------------------------------------------------------------------------
// Writing the page.

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
         "<table class=\"kv\"><tbody><tr><th>Previous report generated</th>",
         Td(E(Utc(p.generated_at))), "</tr><tr><th>Previous tree size</th>",
         TdN(p.tree_size), "</tr><tr><th>Previous root hash</th>",
         Td("<code>" + E(p.root_hash) + "</code>"), "</tr></tbody></table>");
  if (consistent.ok()) {
    Append(&out,
           "<p id=\"consistency\" class=\"banner ok\">"
           "Consistent: the log at tree size ",
           r.tree_size, " extends the one of the previous report (tree size ",
           p.tree_size, "); the consistency proof of ", proof.size(),
           " hashes was checked while rendering this page.</p>");
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
<p><strong>What an audit checks.</strong> After a request's commitment is logged, the verifier draws with fresh randomness whether to audit it and which transformer blocks to re-execute. It recomputes those blocks (and always the head: final norm, LM head and sampler) on its own hardware and requires the layer hashes to match the commitment bit for bit. A single flipped bit is a failure.</p>
<p><strong>The detection bound.</strong> Drawn audit <i>i</i> checks a fraction <i>d<sub>i</sub></i> = audited blocks / <i>L</i> of the model's <i>L</i> blocks. Suppose a prover falsified at least one step in a fraction <i>f</i> of its requests. Each drawn audit then misses the cheating with probability at most 1 &minus; <i>f</i>&middot;<i>d<sub>i</sub></i>, so all of them miss it with probability at most <i>M</i>(<i>f</i>) = &prod;<sub><i>i</i></sub> (1 &minus; <i>f</i>&middot;<i>d<sub>i</sub></i>). The detection chart plots the confidence 1 &minus; <i>M</i>(<i>f</i>). A cheating rate <i>f</i> is <em>ruled out at 95 %</em> (99 %) when 1 &minus; <i>M</i>(<i>f</i>) &ge; 0.95 (0.99): had the prover cheated that often, these audits would have caught it with at least that probability; the tables give the smallest such <i>f</i>. Only drawn audits count: on-demand audits were not chosen at random. &ldquo;Not enough audits&rdquo; means no <i>f</i> &le; 100 % reaches that confidence. &ldquo;Detected&rdquo; means an audit failed: cheating (or a hardware fault) was caught, not bounded, and each failure is listed with its evidence.</p>
<p><strong>Re-verifying without trusting the verifier.</strong></p>
<ul>
<li>Each failure: fetch its evidence bundle with <code>layerproof.v1.Audit/GetEvidence</code> (the request id and verdict leaf index in the Evidence column) and run <code>layerproof verify-bundle</code> on it, on your own hardware: it checks both inclusion proofs against the signed checkpoint and re-executes the audited layers. Bundles hold the request's salt and activations, so they go only to authorised parties.</li>
<li>The log: <code>layerproof log verify-consistency</code> with the sizes, roots and proof in <a href="#log">Log checkpoint</a> checks that the log this report covers extends the one of the previous report (exit 0 verified, 1 not verified).</li>
<li>This page is a view of the report JSON (<code>layerproof.compliance-report.v1</code>); the verifier's signature covers the JSON, which <code>layerproof report</code> fetches.</li>
</ul></section>)html";

}  // namespace

absl::StatusOr<std::string> RenderReportHtml(const nlohmann::json& report) {
  LP_ASSIGN_OR_RETURN(Report r, ReadReport(report));
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

}  // namespace layerproof::verifier
