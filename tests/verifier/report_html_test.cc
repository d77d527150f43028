// RenderReportHtml (verifier/report_html.h): the page of a realistic report
// (two provers, one of them failing), hostile strings escaped, no external
// resource, the consistency proof checked, an empty report, and
// InvalidArgument naming each missing or ill-typed field.
//
// With LP_REPORT_HTML_OUT=<path> set, SampleReportWritesToOutPath writes the
// sample page there: scripts/test-browser.sh renders it in headless
// Chromium when `layerproof demo` is not available.
#include "verifier/report_html.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "store/crypto.h"
#include "store/merkle.h"

namespace layerproof::verifier {
namespace {

using Json = nlohmann::json;

constexpr int64_t kStart = 1796136600000000000;  // 2026-12-01T14:50:00Z
constexpr int64_t kSecond = 1000000000;

std::string Hex(const store::Sha256Hash& h) {
  return store::HexEncode({h.data(), h.size()});
}

std::string RequestId(int i) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%08x5eed00000000000000%012x", 0xa11ce + i,
                i * 7919);
  return buf;
}

// A Detection object for `drawn` audits each checking a fraction d of the
// blocks: confidence 1 - (1 - f d)^drawn on f = 0, 0.02, ..., 1.
Json Detection(int drawn, int failures, double d) {
  Json curve = Json::array();
  Json f95 = nullptr, f99 = nullptr;
  for (int i = 0; i <= 50; ++i) {
    const double f = i / 50.0;
    const double c = 1 - std::pow(1 - f * d, drawn);
    curve.push_back({{"f", f}, {"confidence", c}});
    if (failures == 0 && c >= 0.95 && f95.is_null()) f95 = f;
    if (failures == 0 && c >= 0.99 && f99.is_null()) f99 = f;
  }
  return {{"drawn_audits", drawn},
          {"failures", failures},
          {"layer_fraction_min", d},
          {"layer_fraction_mean", d},
          {"ruled_out", {{"0.95", f95}, {"0.99", f99}}},
          {"curve", curve}};
}

Json Verdicts(int pass, int mismatch) {
  return {{"PASS", pass},      {"FAIL_MISMATCH", mismatch}, {"FAIL_OPENING", 0},
          {"FAIL_TIMEOUT", 0}, {"FAIL_SIGNATURE", 0},       {"FAIL_MODEL", 0}};
}

// The log the sample report's checkpoints describe: 120 leaves now, 100 at
// the previous report.
struct SampleLog {
  SampleLog() {
    for (int i = 0; i < 120; ++i) tree.Append("leaf-" + std::to_string(i));
  }
  store::InMemoryTree tree;
};

// A report as docs/reports.md describes it: prover-1 honest (9 audits),
// prover-2 caught 7 times (10 audits, one on demand), a 20-bucket timeline.
Json SampleReport() {
  static const SampleLog* log = new SampleLog;
  const std::string model(64, 'a');
  Json failures = Json::array();
  for (int i = 0; i < 7; ++i) {
    failures.push_back(
        {{"request_id", RequestId(i)},
         {"prover_id", "prover-2"},
         {"model_digest", model},
         {"outcome", "FAIL_MISMATCH"},
         {"layer", 1 + i % 4},
         {"detail",
          "H_" + std::to_string(1 + i % 4) + ": expected 3f1c…, got 9a0b…"},
         {"verdict_leaf_index", 41 + 2 * i},
         {"commitment_leaf_index", 38 + 2 * i},
         {"created_at_unix_nanos", kStart + (60 + 60 * i) * kSecond},
         {"on_demand", i == 6},
         {"evidence",
          {{"rpc", "layerproof.v1.Audit/GetEvidence"},
           {"request_id", RequestId(i)},
           {"verdict_leaf_index", 41 + 2 * i}}}});
  }
  Json buckets = Json::array();
  for (int i = 0; i < 20; ++i) {
    buckets.push_back({{"start_unix_nanos", kStart + 30 * i * kSecond},
                       {"pass", i % 3 == 0 ? 0 : 1 + i % 2},
                       {"fail", i % 5 == 2 ? 1 + i % 2 : 0}});
  }
  std::vector<std::string> proof;
  const absl::StatusOr<std::vector<store::Sha256Hash>> hashes =
      store::ConsistencyProof(log->tree, 100, 120);
  EXPECT_TRUE(hashes.ok()) << hashes.status();
  if (hashes.ok()) {
    for (const store::Sha256Hash& h : *hashes) proof.push_back(Hex(h));
  }
  return {{"format", "layerproof.compliance-report.v1"},
          {"verifier_id", "verifier-1"},
          {"log_origin", "layerproof/verifier-1"},
          {"generated_at_unix_nanos", kStart + 600 * kSecond},
          {"generated_at", "2026-12-01T15:00:00Z"},
          {"window",
           {{"from_unix_nanos", kStart},
            {"to_unix_nanos", kStart + 600 * kSecond},
            {"from", "2026-12-01T14:50:00Z"},
            {"to", "2026-12-01T15:00:00Z"}}},
          {"prover_filter", ""},
          {"policy", {{"audit_rate", 0.3}, {"layers_per_audit", 4}}},
          {"checkpoint",
           {{"tree_size", 120},
            {"root_hash", Hex(*store::RootAt(log->tree, 120))},
            {"note",
             "layerproof/verifier-1\n120\nq83vEjRWeJA=\n\n— verifier-1 "
             "AAAAAbase64signature==\n"}}},
          {"previous_report",
           {{"generated_at_unix_nanos", kStart - 3600 * kSecond},
            {"tree_size", 100},
            {"root_hash", Hex(*store::RootAt(log->tree, 100))},
            {"consistency_proof", proof}}},
          {"totals",
           {{"commitments", 60},
            {"audited_commitments", 18},
            {"audits", 19},
            {"drawn_audits", 18},
            {"on_demand_audits", 1},
            {"realised_audit_rate", 0.3},
            {"failures", 7},
            {"verdicts", Verdicts(12, 7)}}},
          {"by_prover",
           {{{"prover_id", "prover-1"},
             {"commitments", 30},
             {"audited_commitments", 9},
             {"audits", 9},
             {"drawn_audits", 9},
             {"on_demand_audits", 0},
             {"realised_audit_rate", 0.3},
             {"failures", 0},
             {"verdicts", Verdicts(9, 0)},
             {"detection", Detection(9, 0, 0.5)}},
            {{"prover_id", "prover-2"},
             {"commitments", 30},
             {"audited_commitments", 9},
             {"audits", 10},
             {"drawn_audits", 9},
             {"on_demand_audits", 1},
             {"realised_audit_rate", 0.3},
             {"failures", 7},
             {"verdicts", Verdicts(3, 7)},
             {"detection", Detection(9, 6, 0.5)}}}},
          {"by_model",
           {{{"model_digest", model},
             {"commitments", 60},
             {"audits", 19},
             {"failures", 7},
             {"verdicts", Verdicts(12, 7)}}}},
          {"detection", Detection(18, 6, 0.5)},
          {"timeline", {{"bucket_nanos", 30 * kSecond}, {"buckets", buckets}}},
          {"failures", failures},
          {"failures_omitted", 0}};
}

// No audits, no provers, no failures, no previous report.
Json EmptyReport() {
  Json r = SampleReport();
  r["previous_report"] = nullptr;
  r["checkpoint"]["tree_size"] = 0;
  r["totals"] = {{"commitments", 0},      {"audited_commitments", 0},
                 {"audits", 0},           {"drawn_audits", 0},
                 {"on_demand_audits", 0}, {"realised_audit_rate", 0},
                 {"failures", 0},         {"verdicts", Verdicts(0, 0)}};
  r["by_prover"] = Json::array();
  r["by_model"] = Json::array();
  r["detection"] = Detection(0, 0, 0);
  r["detection"]["layer_fraction_min"] = 0;
  r["timeline"]["buckets"] = Json::array();
  r["failures"] = Json::array();
  return r;
}

std::string Render(const Json& report) {
  absl::StatusOr<std::string> html = RenderReportHtml(report);
  EXPECT_TRUE(html.ok()) << html.status();
  return html.ok() ? *html : std::string();
}

bool Contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

size_t CountOf(const std::string& s, const std::string& part) {
  size_t n = 0;
  for (size_t at = s.find(part); at != std::string::npos;
       at = s.find(part, at + 1)) {
    ++n;
  }
  return n;
}

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(c));
  return s;
}

TEST(ReportHtmlTest, RendersTitleSummaryChartsAndEveryFailure) {
  const std::string html = Render(SampleReport());
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_TRUE(Contains(html, "<title>LayerProof compliance report</title>"));
  EXPECT_TRUE(Contains(html, "<h1>LayerProof compliance report</h1>"));
  for (const char* part :
       {"verifier-1", "layerproof/verifier-1", "2026-12-01T14:50:00Z",
        "2026-12-01T15:00:00Z", "all provers", "30.0 % vs 30.0 %",
        "19 (18 / 1)", "7 failed audits", "id=\"summary\"", "id=\"by-prover\"",
        "id=\"by-model\"", "id=\"failures\"", "id=\"how-to-read\"",
        "layerproof verify-bundle", "layerproof log verify-consistency",
        "@media print", "@page", "size:A4"}) {
    EXPECT_TRUE(Contains(html, part)) << part;
  }
  for (const char* id :
       {"chart-timeline", "chart-verdicts", "chart-detection"}) {
    const std::string open = std::string("<svg class=\"chart\" id=\"") + id;
    ASSERT_TRUE(Contains(html, open)) << id;
    const std::string svg = html.substr(html.find(open));
    EXPECT_TRUE(Contains(svg.substr(0, svg.find("</svg>")), "<title>")) << id;
    EXPECT_TRUE(Contains(svg.substr(0, 400), "aria-label=")) << id;
  }
  EXPECT_EQ(CountOf(html, "<svg"), 3u);
  for (int i = 0; i < 7; ++i) {
    EXPECT_TRUE(Contains(html, RequestId(i))) << i;
    EXPECT_TRUE(Contains(html, "verdict " + std::to_string(41 + 2 * i))) << i;
    EXPECT_TRUE(
        Contains(html, "verdict_leaf_index " + std::to_string(41 + 2 * i)))
        << i;
  }
  // The checkpoint note is shown whole, in a <pre>.
  EXPECT_TRUE(Contains(html, "<pre>layerproof/verifier-1\n120\n"));
  // prover-1 rules out f at both levels; prover-2 and the window detected.
  EXPECT_TRUE(Contains(html, "ruled out at 95 %"));
  EXPECT_TRUE(Contains(html, "<strong>detected</strong>"));
  EXPECT_TRUE(Contains(html, "cheating was detected, not bounded"));
}

// A window without failures: the ruled-out f is marked on the chart and
// given in the tables.
TEST(ReportHtmlTest, HonestWindowMarksTheRuledOutCheatingRate) {
  Json report = SampleReport();
  report["detection"] = Detection(18, 0, 0.5);
  report["by_prover"][1]["detection"] = Detection(9, 0, 0.25);
  const std::string html = Render(report);
  const size_t chart = html.find("id=\"chart-detection\"");
  ASSERT_NE(chart, std::string::npos);
  const std::string svg =
      html.substr(chart, html.find("</svg>", chart) - chart);
  // 1 - (1 - f/2)^18 first reaches 0.95 at f = 0.32 and 0.99 at f = 0.46.
  EXPECT_TRUE(Contains(svg, "f \u2265 32.0 % ruled out at 95 %")) << svg;
  EXPECT_TRUE(Contains(svg, "f \u2265 46.0 % ruled out at 99 %"));
  EXPECT_TRUE(
      Contains(svg, "prover-1: 95 % f \u2265 58.0 %, 99 % f \u2265 82.0 %"));
  // 1 - (1 - f/4)^9 < 0.95 even at f = 1.
  EXPECT_TRUE(Contains(svg, "prover-2: not enough audits"));
  EXPECT_FALSE(Contains(html, "<strong>detected</strong>"));
  EXPECT_FALSE(Contains(svg, "detected, not bounded"));
}

TEST(ReportHtmlTest, ChecksTheConsistencyProofWithThePreviousReport) {
  Json report = SampleReport();
  const std::string html = Render(report);
  EXPECT_TRUE(Contains(html, "links the checkpoint of tree size 100"));
  EXPECT_TRUE(Contains(html, "checked from the report's own fields"));
  EXPECT_TRUE(Contains(html, "layerproof report verify NEW.json"));
  EXPECT_TRUE(Contains(html, "the verifier (the last report it issued)"));

  report["previous_report"]["consistency_proof"][0] = std::string(64, '0');
  const std::string forged = Render(report);
  EXPECT_TRUE(Contains(forged, "NOT consistent")) << forged.substr(0, 200);
  EXPECT_FALSE(Contains(forged, "links the checkpoint"));

  report = SampleReport();
  EXPECT_FALSE(Contains(Render(report), "id=\"prover-clock\""));
  report["totals"]["commitments_timed_by_prover_clock"] = 2;
  EXPECT_TRUE(Contains(Render(report), "2 commitment(s) have no time"));
  report["client_nonce"] = "00ff";
  report["previous_report"]["source"] = "caller";
  report["previous_report"]["generated_at_unix_nanos"] = nullptr;
  const std::string caller = Render(report);
  EXPECT_TRUE(Contains(caller, "the requester (its own previous report"));
  EXPECT_TRUE(Contains(caller, "<code>00ff</code>"));
  report["previous_report"]["source"] = "someone";
  EXPECT_FALSE(RenderReportHtml(report).ok());

  report["previous_report"] = nullptr;
  EXPECT_TRUE(Contains(Render(report), "First report"));
  report.erase("previous_report");
  EXPECT_TRUE(Contains(Render(report), "First report"));
}

TEST(ReportHtmlTest, EscapesEveryStringFromTheReport) {
  Json report = SampleReport();
  const std::string evil = "<script>alert('x')</script>";
  report["by_prover"][1]["prover_id"] = evil;
  report["failures"][0]["prover_id"] = evil;
  report["failures"][0]["detail"] = "\"><img src=x onerror=alert(1)>" + evil;
  report["verifier_id"] = "v&<b>";
  report["checkpoint"]["note"] = "</pre>" + evil;
  report["totals"]["verdicts"]["<FAIL_NEW>"] = 1;
  report["failures"][1]["detail"] = std::string("nul\0bad\xff\xfe", 9);
  const std::string html = Render(report);
  EXPECT_FALSE(Contains(Lower(html), "<script")) << html;
  EXPECT_FALSE(Contains(html, "<img"));
  EXPECT_FALSE(Contains(html, "<b>"));
  EXPECT_TRUE(
      Contains(html, "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;"));
  EXPECT_TRUE(Contains(html, "&quot;&gt;&lt;img src=x"));
  EXPECT_TRUE(Contains(html, "v&amp;&lt;b&gt;"));
  EXPECT_TRUE(Contains(html, "&lt;FAIL_NEW&gt;"));
  // A NUL and invalid UTF-8 become U+FFFD.
  EXPECT_TRUE(Contains(html,
                       "nul\xEF\xBF\xBD"
                       "bad\xEF\xBF\xBD\xEF\xBF\xBD"));
  EXPECT_FALSE(Contains(html, std::string(1, '\0')));
}

TEST(ReportHtmlTest, IsSelfContained) {
  const std::string html = Lower(Render(SampleReport()));
  for (const char* part :
       {"http://", "https://", "<script", "src=", "<link", "@import", "<iframe",
        "<object", "<img", "javascript:"}) {
    EXPECT_FALSE(Contains(html, part)) << part;
  }
  // Patterns are the only url() references, and they stay in the page.
  EXPECT_EQ(CountOf(html, "url("), CountOf(html, "url(#"));
  // Every in-page link has its target.
  for (const char* anchor : {"#failures", "#how-to-read", "#log"}) {
    EXPECT_TRUE(Contains(html, std::string("id=\"") + (anchor + 1))) << anchor;
  }
}

TEST(ReportHtmlTest, RendersAReportWithoutAudits) {
  const std::string html = Render(EmptyReport());
  EXPECT_TRUE(Contains(html, "<title>LayerProof compliance report</title>"));
  EXPECT_EQ(CountOf(html, "<svg"), 3u);
  EXPECT_TRUE(Contains(html, "No audits in this window"));
  EXPECT_TRUE(Contains(html, "No failed audits in this window"));
  EXPECT_TRUE(Contains(html, "Not enough audits to rule out any f"));
  EXPECT_TRUE(Contains(html, "No provers in this window"));
  EXPECT_TRUE(Contains(html, "First report"));
  for (const char* nan : {">nan", "nan %", "\"nan", "-nan"}) {
    EXPECT_FALSE(Contains(html, nan)) << nan;
  }
}

TEST(ReportHtmlTest, CapsWhatHostileVolumesDraw) {
  Json report = SampleReport();
  Json buckets = Json::array();
  for (int i = 0; i < 5000; ++i) {
    buckets.push_back({{"start_unix_nanos", kStart + i * kSecond},
                       {"pass", std::numeric_limits<int64_t>::max()},
                       {"fail", i % 2}});
  }
  report["timeline"]["buckets"] = buckets;
  for (int i = 0; i < 100; ++i) {
    Json p = report["by_prover"][0];
    p["prover_id"] = "prover-x" + std::to_string(i);
    report["by_prover"].push_back(p);
  }
  const std::string html = Render(report);
  const std::string timeline = html.substr(
      html.find("id=\"chart-timeline\""),
      html.find("id=\"chart-verdicts\"") - html.find("id=\"chart-timeline\""));
  // 30 bars of two segments, plus the background and 2 legend swatches.
  EXPECT_LE(CountOf(timeline, "<rect"), 2u * 30 + 3 + 16);
  EXPECT_TRUE(Contains(timeline, "167 buckets per bar"));
  EXPECT_TRUE(Contains(html, "+ 82 more provers: see the table"));
  EXPECT_TRUE(Contains(html, "prover-x99"));  // the table lists them all
  EXPECT_LT(html.size(), 1u << 20);
}

struct BadField {
  std::string pointer;  // JSON pointer into the sample report
  Json value;           // the replacement; discarded (erase) when null
  bool erase;
  std::string named;  // what the message must name
};

class ReportHtmlBadFieldTest : public testing::TestWithParam<BadField> {};

TEST_P(ReportHtmlBadFieldTest, IsInvalidArgumentNamingTheField) {
  const BadField& bad = GetParam();
  Json report = SampleReport();
  const Json::json_pointer ptr(bad.pointer);
  if (bad.erase) {
    report.at(ptr.parent_pointer()).erase(ptr.back());
  } else {
    report.at(ptr) = bad.value;
  }
  absl::StatusOr<std::string> html = RenderReportHtml(report);
  ASSERT_FALSE(html.ok()) << bad.pointer;
  EXPECT_EQ(html.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(Contains(std::string(html.status().message()), bad.named))
      << html.status();
}

INSTANTIATE_TEST_SUITE_P(
    Fields, ReportHtmlBadFieldTest,
    testing::Values(
        BadField{"/format", "layerproof.compliance-report.v2", false,
                 "format: got \"layerproof.compliance-report.v2\""},
        BadField{"/verifier_id", nullptr, true, "verifier_id: missing"},
        BadField{"/window/from", 5, false, "window.from: got 5, want a string"},
        BadField{"/window", Json::array(), false, "window: got []"},
        BadField{"/policy/audit_rate", 1.5, false, "policy.audit_rate"},
        BadField{"/checkpoint/root_hash", "zz", false, "checkpoint.root_hash"},
        BadField{"/checkpoint/note", nullptr, true, "checkpoint.note: missing"},
        BadField{"/previous_report/consistency_proof/1", 7, false,
                 "previous_report.consistency_proof[1]"},
        BadField{"/totals/audits", nullptr, true, "totals.audits: missing"},
        BadField{"/totals/failures", -1, false, "totals.failures: got -1"},
        BadField{"/totals/commitments", 2.5, false, "totals.commitments"},
        BadField{"/totals/realised_audit_rate", "x", false,
                 "totals.realised_audit_rate"},
        BadField{"/totals/verdicts/PASS", "12", false, "totals.verdicts.PASS"},
        BadField{"/by_prover", Json::object(), false, "by_prover: got {}"},
        BadField{"/by_prover/1", "prover-2", false, "by_prover[1]: got"},
        BadField{"/by_prover/1/prover_id", 5, false,
                 "by_prover[1].prover_id: got 5, want a string"},
        BadField{"/by_prover/0/detection/ruled_out/0.95", "x", false,
                 "by_prover[0].detection.ruled_out.0.95"},
        BadField{"/by_prover/0/detection/curve/3/f", 2.0, false,
                 "by_prover[0].detection.curve[3].f"},
        BadField{"/by_model/0/model_digest", nullptr, true,
                 "by_model[0].model_digest: missing"},
        BadField{"/detection/curve", nullptr, true, "detection.curve: missing"},
        BadField{"/timeline/bucket_nanos", true, false,
                 "timeline.bucket_nanos"},
        BadField{"/timeline/buckets/4/pass", -3, false,
                 "timeline.buckets[4].pass"},
        BadField{"/failures/2/verdict_leaf_index", "41", false,
                 "failures[2].verdict_leaf_index"},
        BadField{"/failures/0/on_demand", 0, false, "failures[0].on_demand"},
        BadField{"/failures/0/evidence", nullptr, true,
                 "failures[0].evidence: missing"},
        BadField{"/failures/0/layer", Json::array({1}), false,
                 "failures[0].layer"},
        BadField{"/failures_omitted", 18446744073709551615ull, false,
                 "failures_omitted: got 18446744073709551615"}));

TEST(ReportHtmlTest, RefusesAReportThatIsNotAnObject) {
  for (const Json& not_object : {Json(nullptr), Json::array(), Json("x")}) {
    absl::StatusOr<std::string> html = RenderReportHtml(not_object);
    ASSERT_FALSE(html.ok());
    EXPECT_EQ(html.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_TRUE(Contains(std::string(html.status().message()), "report: got"))
        << html.status();
  }
  // A NaN a JSON parser never yields but a caller could build.
  Json report = SampleReport();
  report["policy"]["audit_rate"] = std::nan("");
  EXPECT_EQ(RenderReportHtml(report).status().code(),
            absl::StatusCode::kInvalidArgument);
}

// Writes the sample page to $LP_REPORT_HTML_OUT (scripts/test-browser.sh's
// fallback when `layerproof demo` is not available), or to a temporary file.
TEST(ReportHtmlTest, SampleReportWritesToOutPath) {
  const char* env = std::getenv("LP_REPORT_HTML_OUT");
  const std::string path =
      env != nullptr && env[0] != '\0'
          ? std::string(env)
          : (std::filesystem::temp_directory_path() /
             ("lp_report_html_test_" + std::to_string(::getpid()) + ".html"))
                .string();
  const std::string html = Render(SampleReport());
  { std::ofstream(path, std::ios::binary) << html; }
  std::ifstream in(path, std::ios::binary);
  std::stringstream back;
  back << in.rdbuf();
  EXPECT_EQ(back.str(), html) << path;
  if (env == nullptr || env[0] == '\0') std::filesystem::remove(path);
}

}  // namespace
}  // namespace layerproof::verifier
