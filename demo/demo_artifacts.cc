#include "demo/demo_artifacts.h"

#include <cstdio>
#include <memory>
#include <mutex>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "check/bundle_check.h"
#include "check/report_format.h"
#include "cli/file_io.h"
#include "cli/progress.h"
#include "layerproof/v1/audit.grpc.pb.h"
#include "layerproof/v1/report.grpc.pb.h"
#include "store/crypto.h"
#include "store/envelope.h"
#include "store/status.h"
#include "verifier/report_html.h"

namespace layerproof::demo {
namespace {

using cli::ProgressBar;
using cli::WriteWholeFile;

std::chrono::system_clock::time_point Deadline(int seconds) {
  return std::chrono::system_clock::now() + std::chrono::seconds(seconds);
}

std::string Hex(const std::string& bytes) {
  return store::HexEncode(store::AsBytes(bytes));
}

absl::Status FromGrpc(const char* method, const grpc::Status& s) {
  return absl::Status(static_cast<absl::StatusCode>(s.error_code()),
                      std::string(method) + ": " + s.error_message());
}

void Record(DemoOutcome& o, const std::string& step, const absl::Status& s) {
  o.errors.push_back(step + ": " + s.ToString());
}

// The report's totals and, per prover, its failures or what its clean
// audits rule out (docs/reports.md), read defensively: a field missing
// from the report only drops its line.
std::vector<std::string> ReportLines(const nlohmann::json& r) {
  std::vector<std::string> lines;
  const auto num = [](const nlohmann::json& j, const char* key) -> long long {
    return j.is_object() && j.contains(key) && j.at(key).is_number()
               ? j.at(key).get<long long>()
               : -1;
  };
  if (r.contains("totals")) {
    const nlohmann::json& t = r.at("totals");
    lines.push_back(std::to_string(num(t, "commitments")) + " commitments, " +
                    std::to_string(num(t, "audits")) + " audits (" +
                    std::to_string(num(t, "drawn_audits")) + " drawn, " +
                    std::to_string(num(t, "on_demand_audits")) +
                    " on demand), " + std::to_string(num(t, "failures")) +
                    " failures");
  }
  if (!r.contains("by_prover") || !r.at("by_prover").is_array()) return lines;
  for (const nlohmann::json& p : r.at("by_prover")) {
    if (!p.contains("prover_id") || !p.at("prover_id").is_string()) continue;
    std::string line = p.at("prover_id").get<std::string>() + ": " +
                       std::to_string(num(p, "failures")) + " failures in " +
                       std::to_string(num(p, "audits")) + " audits";
    const nlohmann::json f95 =
        p.contains("detection") && p.at("detection").contains("ruled_out")
            ? p.at("detection").at("ruled_out").value("0.95", nlohmann::json())
            : nlohmann::json();
    if (num(p, "failures") > 0) {
      line += ": cheating detected";
    } else if (f95.is_number()) {
      char text[128];
      std::snprintf(text, sizeof text,
                    ": rules out cheating on >= %.0f%% of its requests at "
                    "95%% confidence",
                    100 * f95.get<double>());
      line += text;
    }
    lines.push_back(line);
  }
  return lines;
}

}  // namespace

void LocaliseFault(DemoCluster& cluster, const std::string& request_id,
                   DemoOutcome& o) {
  o.localised_request = request_id;
  auto channel =
      cluster.Channel(cluster.verifier_address(), DemoCluster::kAuditor);
  if (!channel.ok()) return Record(o, "localisation", channel.status());
  auto stub = v1::Audit::NewStub(*channel);
  v1::RequestAuditRequest request;
  request.set_request_id(request_id);
  request.set_all_layers(true);
  v1::RequestAuditResponse response;
  grpc::ClientContext context;
  context.set_deadline(Deadline(120));
  const grpc::Status status = stub->RequestAudit(&context, request, &response);
  if (!status.ok()) {
    return Record(o, "localisation", FromGrpc("Audit.RequestAudit", status));
  }
  v1::Envelope envelope;
  if (!envelope.ParseFromString(response.verdict().verdict_envelope())) {
    return Record(o, "localisation",
                  absl::DataLossError("the verdict envelope does not parse"));
  }
  auto verdict = store::ParseVerdict(envelope.payload());
  if (!verdict.ok()) return Record(o, "localisation", verdict.status());
  o.localised_outcome = v1::VerdictOutcome_Name(verdict->outcome());
  if (verdict->outcome() == v1::FAIL_MISMATCH) {
    o.localised_layer = static_cast<int>(verdict->mismatch().layer());
  }
  o.localised_right = o.localised_layer == static_cast<int>(o.tamper_layer);
}

void WriteDemoReport(DemoCluster& cluster, int64_t from_unix_nanos,
                     DemoOutcome& o) {
  o.report_json = o.out_dir + "/report.json";
  o.report_html = o.out_dir + "/report.html";
  auto channel =
      cluster.Channel(cluster.verifier_address(), DemoCluster::kAuditor);
  if (!channel.ok()) return Record(o, "report", channel.status());
  auto stub = v1::Report::NewStub(*channel);
  v1::ComplianceReportRequest request;
  request.set_from_unix_nanos(from_unix_nanos);
  request.set_to_unix_nanos(absl::ToUnixNanos(absl::Now() + absl::Seconds(1)));
  v1::ComplianceReportResponse response;
  grpc::ClientContext context;
  context.set_deadline(Deadline(60));
  const grpc::Status status =
      stub->GetComplianceReport(&context, request, &response);
  if (!status.ok()) {
    return Record(o, "report",
                  FromGrpc("Report.GetComplianceReport (is the Report "
                           "service registered by VerifierNode::services()?)",
                           status));
  }
  auto dsse = check::ReportEnvelopeToDsseJson(response.report_envelope());
  if (!dsse.ok()) return Record(o, "report.json", dsse.status());
  if (absl::Status s = WriteWholeFile(o.report_json, *dsse); !s.ok()) {
    return Record(o, "report.json", s);
  }
  auto report =
      check::VerifyReportDsseJson(*dsse, cluster.verifier().public_key());
  if (!report.ok()) return Record(o, "report verification", report.status());
  o.report_verified = true;
  o.report_lines = ReportLines(*report);
  auto html = verifier::RenderReportHtml(*report);
  if (!html.ok()) return Record(o, "report.html", html.status());
  if (absl::Status s = WriteWholeFile(o.report_html, *html); !s.ok()) {
    return Record(o, "report.html", s);
  }
}

void WriteAndCheckEvidence(DemoCluster& cluster,
                           const kernels::model::Engine& engine,
                           const std::string& model_digest,
                           const std::string& request_id, uint64_t verdict_leaf,
                           bool quiet, DemoOutcome& o) {
  o.evidence_file = o.out_dir + "/evidence-" + Hex(request_id) + ".bundle";
  auto channel =
      cluster.Channel(cluster.verifier_address(), DemoCluster::kAuditor);
  if (!channel.ok()) return Record(o, "evidence", channel.status());
  auto stub = v1::Audit::NewStub(*channel);
  v1::GetEvidenceRequest request;
  request.set_request_id(request_id);
  request.set_verdict_leaf_index(verdict_leaf);
  v1::EvidenceBundle bundle;
  grpc::ClientContext context;
  context.set_deadline(Deadline(60));
  const grpc::Status status = stub->GetEvidence(&context, request, &bundle);
  if (!status.ok()) {
    return Record(o, "evidence", FromGrpc("Audit.GetEvidence", status));
  }
  const std::string bytes = bundle.SerializeAsString();
  if (absl::Status s = WriteWholeFile(o.evidence_file, bytes); !s.ok()) {
    return Record(o, "evidence", s);
  }
  // A third party's trust: the public keys as published in OUT/keys.
  check::BundleTrust trust;
  auto log_key = store::ReadPublicKeyFile(cluster.PublicKeyFile("verifier"));
  if (!log_key.ok()) return Record(o, "evidence", log_key.status());
  trust.log_key = *log_key;
  for (const auto& p : cluster.provers()) {
    auto key = store::ReadPublicKeyFile(cluster.PublicKeyFile(p->prover_id));
    if (!key.ok()) return Record(o, "evidence", key.status());
    trust.prover_keys.push_back(*key);
  }
  trust.expected_origin = cluster.verifier().log_origin();
  std::mutex mu;
  std::unique_ptr<ProgressBar> bar;
  auto checked = check::VerifyEvidenceBundle(
      bytes, engine, model_digest, trust,
      [&](int done, int total, std::string_view step) {
        std::lock_guard<std::mutex> lock(mu);
        if (!bar) {
          bar = std::make_unique<ProgressBar>("bundle check", total, "steps",
                                              quiet);
        }
        bar->Update(done, std::string(step));
      });
  if (bar) bar->Finish();
  if (!checked.ok()) return Record(o, "bundle verification", checked.status());
  for (const check::BundleCheckResult& c : checked->checks) {
    // The names verify-bundle prints: "pass", "fail", "n/a".
    const std::string state(check::BundleCheckStateName(c.state));
    o.bundle_checks.push_back(DemoCheck{c.check, state, c.detail});
    if (!quiet) {
      std::printf("  bundle check %-28s %-4s %s\n", c.check.c_str(),
                  state.c_str(), c.detail.c_str());
    }
  }
  // The bundle verifies when every check holds and this machine re-derived
  // the verdict (a FAIL_MISMATCH here) from what the prover signed: it then
  // proves, to anyone, that the logged verdict is right.
  o.bundle_verified = checked->ok() && checked->verdict_rederived;
  if (!checked->ok()) {
    o.errors.push_back("the evidence bundle did not verify");
  } else if (!checked->verdict_rederived) {
    o.errors.push_back(
        "the evidence bundle is authentic but its verdict was not re-derived");
  }
}

}  // namespace layerproof::demo
