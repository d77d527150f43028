#include "demo/demo_summary.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "layerproof/v1/audit.grpc.pb.h"
#include "store/crypto.h"
#include "store/envelope.h"
#include "store/status.h"

namespace layerproof::demo {
namespace {

double Choose(uint32_t n, uint32_t k) {
  if (k > n) return 0;
  double c = 1;
  for (uint32_t i = 1; i <= k; ++i) c = c * (n - k + i) / i;
  return c;
}

std::string Hex(const std::string& bytes) {
  return store::HexEncode(store::AsBytes(bytes));
}

}  // namespace

std::string VerifyBundleCommand(const DemoOutcome& o) {
  const std::string keys = o.out_dir + "/keys/";
  return "layerproof verify-bundle --model " + o.model_dir + " --log-key " +
         keys + "verifier.pub --prover-key " + keys + "prover-1.pub," + keys +
         "prover-2.pub " + o.evidence_file;
}

void PrintGrpcurl(FILE* to, DemoCluster& cluster, const std::string& out) {
  const std::string tls = std::filesystem::absolute(out).string() + "/tls/";
  const std::string auditor = "grpcurl -cacert " + tls + "ca.pem -cert " + tls +
                              "auditor-1.pem -key " + tls + "auditor-1.key";
  const std::string client = "grpcurl -cacert " + tls + "ca.pem -cert " + tls +
                             "client-1.pem -key " + tls + "client-1.key";
  const std::string v = cluster.verifier_address();
  const std::string p1 = cluster.provers()[0]->address();
  std::fprintf(
      to,
      "\nThe nodes keep running (Ctrl-C or SIGTERM to stop): verifier %s, "
      "prover-1 %s, prover-2 %s. Try:\n\n",
      v.c_str(), p1.c_str(), cluster.provers()[1]->address().c_str());
  std::fprintf(to, "  %s %s list\n", client.c_str(), v.c_str());
  std::fprintf(
      to,
      "  %s -d '{\"text\": \"The transparency log says\", \"max_tokens\": "
      "12}' %s layerproof.v1.Inference/Generate\n",
      client.c_str(), p1.c_str());
  std::fprintf(
      to,
      "  %s -d '{\"outcome\": \"FAIL_MISMATCH\", \"page_size\": 3}' %s "
      "layerproof.v1.Audit/ListVerdicts\n",
      client.c_str(), v.c_str());
  std::fprintf(
      to,
      "  %s -d '{\"from_unix_nanos\": \"0\", \"to_unix_nanos\": \"%lld\"}' "
      "%s layerproof.v1.Report/GetComplianceReport\n",
      auditor.c_str(),
      static_cast<long long>(absl::ToUnixNanos(absl::Now() + absl::Hours(24))),
      v.c_str());
  std::fprintf(to, "  %s %s grpc.health.v1.Health/Check\n\n", client.c_str(),
               v.c_str());
  std::fflush(to);
}

std::string VerdictCounts(const verifier::VerifierCounters& c) {
  uint64_t failed = 0;
  for (size_t k = 0; k < c.verdicts.size(); ++k) {
    if (k != v1::PASS && k != v1::VERDICT_UNSPECIFIED) failed += c.verdicts[k];
  }
  return std::to_string(c.verdicts[v1::PASS]) + " PASS, " +
         std::to_string(failed) + " FAIL";
}

double DetectPerAudit(uint32_t num_layers, uint32_t s) {
  if (num_layers < 2) return 1;
  s = std::min(s, num_layers);
  return 1 - Choose(num_layers - 2, s) / Choose(num_layers, s);
}

double MissProbability(uint32_t num_layers, uint32_t s, double rate, int n) {
  return std::pow(1 - rate * DetectPerAudit(num_layers, s), n);
}

absl::StatusOr<std::vector<DemoVerdict>> ListDemoVerdicts(
    DemoCluster& cluster) {
  LP_ASSIGN_OR_RETURN(
      std::shared_ptr<grpc::Channel> channel,
      cluster.Channel(cluster.verifier_address(), DemoCluster::kClient));
  auto stub = v1::Audit::NewStub(channel);
  std::vector<DemoVerdict> out;
  std::string token;
  do {
    v1::ListVerdictsRequest request;
    request.set_page_size(1000);
    request.set_page_token(token);
    v1::ListVerdictsResponse response;
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() +
                         std::chrono::seconds(30));
    const grpc::Status status =
        stub->ListVerdicts(&context, request, &response);
    if (!status.ok()) {
      return absl::Status(static_cast<absl::StatusCode>(status.error_code()),
                          "Audit.ListVerdicts: " + status.error_message());
    }
    for (const v1::VerdictRecord& record : response.verdicts()) {
      v1::Envelope envelope;
      if (!envelope.ParseFromString(record.verdict_envelope())) {
        return absl::DataLossError("a verdict envelope does not parse");
      }
      LP_ASSIGN_OR_RETURN(v1::Verdict verdict,
                          store::ParseVerdict(envelope.payload()));
      out.push_back(
          DemoVerdict{verdict.request_id(), record.leaf_index(), verdict});
    }
    token = response.next_page_token();
  } while (!token.empty());
  return out;
}

void TallyVerdicts(const std::vector<DemoRequest>& requests,
                   const std::vector<DemoVerdict>& verdicts,
                   DemoOutcome& outcome) {
  std::map<std::string, DemoProverTally*> by_request;
  for (const DemoRequest& r : requests) {
    for (DemoProverTally& p : outcome.provers) {
      if (p.id == r.prover_id && !r.request_id.empty()) {
        by_request[r.request_id] = &p;
      }
    }
  }
  for (DemoProverTally& p : outcome.provers) {
    // Every outcome, zero or not, so the summary's shape never varies.
    for (int o = 1; o < v1::VerdictOutcome_ARRAYSIZE; ++o) {
      p.verdicts[v1::VerdictOutcome_Name(static_cast<v1::VerdictOutcome>(o))] =
          0;
    }
  }
  for (const DemoVerdict& v : verdicts) {
    auto it = by_request.find(v.request_id);
    if (it == by_request.end()) continue;
    DemoProverTally& p = *it->second;
    ++p.audits;
    ++p.verdicts[v1::VerdictOutcome_Name(v.verdict.outcome())];
    if (v.verdict.outcome() == v1::PASS) continue;
    ++p.failures;
    if (v.verdict.outcome() != v1::FAIL_MISMATCH) continue;
    ++p.mismatch_layers[v.verdict.mismatch().layer()];
    if (p.failed_request.empty()) {
      p.failed_request = v.request_id;
      p.failed_verdict_leaf = v.leaf_index;
    }
  }
  outcome.honest_all_pass = true;
  outcome.tamperer_caught = false;
  for (const DemoProverTally& p : outcome.provers) {
    if (!p.tampers) {
      outcome.honest_all_pass = outcome.honest_all_pass && p.failures == 0 &&
                                p.receipts_ok == p.requests && p.audits > 0;
    } else if (p.verdicts.at("FAIL_MISMATCH") > 0) {
      outcome.tamperer_caught = true;
    }
  }
}

std::vector<std::string> DetectionLines(const DemoOutcome& o) {
  const uint32_t L = o.num_layers, s = std::min(o.layers_per_audit, L);
  const int tampered = o.requests / 2;  // every second request
  const double p = DetectPerAudit(L, s);
  char line[256];
  std::vector<std::string> lines;
  std::snprintf(line, sizeof line,
                "a tamper of h^%u is caught when block %u or %u is drawn: "
                "P(audit catches it) = 1 - C(%u,%u)/C(%u,%u) = %.4f",
                o.tamper_layer, o.tamper_layer, o.tamper_layer + 1, L - 2, s, L,
                s, p);
  lines.push_back(line);
  std::snprintf(line, sizeof line,
                "%d tampered requests at audit rate %.2f: P(no audit catches "
                "any) = (1 - %.2f*%.4f)^%d = %.1e",
                tampered, o.audit_rate, o.audit_rate, p, tampered,
                MissProbability(L, s, o.audit_rate, tampered));
  lines.push_back(line);
  return lines;
}

void PrintDemoSummary(const DemoOutcome& o) {
  std::printf("\n%-10s %-14s %8s %8s %11s %7s %6s %6s  %s\n", "prover",
              "behaviour", "requests", "receipts", "commitments", "audits",
              "PASS", "FAIL", "mismatch layers");
  for (const DemoProverTally& p : o.provers) {
    std::string layers;
    for (const auto& [layer, n] : p.mismatch_layers) {
      if (!layers.empty()) layers += ", ";
      layers += std::to_string(layer) + " (x" + std::to_string(n) + ")";
    }
    const std::string behaviour =
        p.tampers ? "tampers h^" + std::to_string(o.tamper_layer) : "honest";
    std::printf("%-10s %-14s %8d %8d %11llu %7d %6d %6d  %s\n", p.id.c_str(),
                behaviour.c_str(), p.requests, p.receipts_ok,
                static_cast<unsigned long long>(p.commitments), p.audits,
                p.verdicts.count("PASS") ? p.verdicts.at("PASS") : 0,
                p.failures, layers.empty() ? "-" : layers.c_str());
  }
  std::printf(
      "\nlog: %llu entries (%llu commitments, %llu verdicts); %llu audits "
      "drawn at rate %.2f, %u of %u blocks each\n",
      static_cast<unsigned long long>(o.log_size),
      static_cast<unsigned long long>(o.commitments_logged),
      static_cast<unsigned long long>(o.log_size - o.commitments_logged),
      static_cast<unsigned long long>(o.audits_drawn), o.audit_rate,
      o.layers_per_audit, o.num_layers);
  for (const std::string& line : DetectionLines(o)) {
    std::printf("  %s\n", line.c_str());
  }
  const auto mark = [](bool ok) { return ok ? "yes" : "NO"; };
  std::printf("\nhonest prover-1 all PASS, every receipt verified: %s\n",
              mark(o.honest_all_pass));
  std::printf("tampering prover-2 caught by a drawn audit:        %s\n",
              mark(o.tamperer_caught));
  if (!o.localised_request.empty()) {
    std::printf(
        "fault localisation (all-layers audit of request %s): %s at layer "
        "%d, tampered layer %u: %s\n",
        Hex(o.localised_request).substr(0, 16).c_str(),
        o.localised_outcome.c_str(), o.localised_layer, o.tamper_layer,
        mark(o.localised_right));
  } else {
    std::printf("fault localisation:                                NO\n");
  }
  std::printf("signed report verified (%s): %s\n", o.report_json.c_str(),
              mark(o.report_verified));
  for (const std::string& line : o.report_lines) {
    std::printf("  report: %s\n", line.c_str());
  }
  std::printf("evidence bundle verified offline (%s): %s\n",
              o.evidence_file.c_str(), mark(o.bundle_verified));
  if (o.bundle_verified) {
    std::printf("  re-check it yourself: %s\n", VerifyBundleCommand(o).c_str());
  }
  for (const std::string& e : o.errors) {
    std::printf("error: %s\n", e.c_str());
  }
  std::printf("\n%s\n", o.ok() ? "DEMO OK" : "DEMO FAILED");
  std::fflush(stdout);
}

nlohmann::json DemoSummaryJson(const DemoOutcome& o) {
  using nlohmann::json;
  const int tampered = o.requests / 2;
  json provers = json::array();
  for (const DemoProverTally& p : o.provers) {
    json layers = json::object();
    for (const auto& [layer, n] : p.mismatch_layers) {
      layers[std::to_string(layer)] = n;
    }
    provers.push_back(
        {{"prover_id", p.id},
         {"tampers", p.tampers},
         {"tampered_layer", p.tampers ? json(o.tamper_layer) : json(nullptr)},
         {"requests", p.requests},
         {"receipts_verified", p.receipts_ok},
         {"commitments", p.commitments},
         {"audits", p.audits},
         {"verdicts", p.verdicts},
         {"failures", p.failures},
         {"all_pass", p.failures == 0 && p.audits > 0},
         {"mismatch_layers", layers}});
  }
  json checks = json::array();
  for (const DemoCheck& c : o.bundle_checks) {
    checks.push_back(
        {{"check", c.check}, {"state", c.state}, {"detail", c.detail}});
  }
  return {
      {"ok", o.ok()},
      {"out", o.out_dir},
      {"model",
       {{"dir", o.model_dir},
        {"digest", o.model_digest},
        {"layers", o.num_layers},
        {"backend", o.backend},
        {"verifier_backend", o.verifier_backend}}},
      {"policy",
       {{"audit_rate", o.audit_rate},
        {"layers_per_audit", o.layers_per_audit},
        {"p_detect_per_audit",
         DetectPerAudit(o.num_layers, o.layers_per_audit)},
        {"p_miss", MissProbability(o.num_layers, o.layers_per_audit,
                                   o.audit_rate, tampered)}}},
      {"load",
       {{"requests", o.requests},
        {"concurrency", o.concurrency},
        {"receipts_verified", o.requests_ok},
        {"promises", o.promises},
        {"output_tokens", o.output_tokens}}},
      {"log",
       {{"size", o.log_size},
        {"commitments", o.commitments_logged},
        {"audits_drawn", o.audits_drawn}}},
      {"provers", provers},
      {"honest_all_pass", o.honest_all_pass},
      {"tamperer_caught", o.tamperer_caught},
      {"localisation",
       {{"request_id", Hex(o.localised_request)},
        {"outcome", o.localised_outcome},
        {"layer", o.localised_layer},
        {"tampered_layer", o.tamper_layer},
        {"matches", o.localised_right}}},
      {"report",
       {{"json", o.report_json},
        {"html", o.report_html},
        {"verified", o.report_verified},
        {"summary", o.report_lines}}},
      {"evidence",
       {{"file", o.evidence_file},
        {"verified", o.bundle_verified},
        {"verify_command", VerifyBundleCommand(o)},
        {"checks", checks}}},
      {"seconds", o.seconds},
      {"errors", o.errors},
  };
}

}  // namespace layerproof::demo
