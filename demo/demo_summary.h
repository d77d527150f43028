// What `layerproof demo` found, and its two renderings: the table printed
// for people and the JSON of --json (one object on stdout). Also the
// verdicts it is built from (Audit.ListVerdicts, as any client reads them)
// and the detection arithmetic the demo's defaults rest on.
// Thread safety: plain values and pure functions, except
// ListDemoVerdicts (one gRPC client).
#ifndef LAYERPROOF_DEMO_DEMO_SUMMARY_H_
#define LAYERPROOF_DEMO_DEMO_SUMMARY_H_

#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "demo/demo_cluster.h"
#include "demo/demo_load.h"
#include "layerproof/v1/records.pb.h"
#include "nlohmann/json.hpp"

namespace layerproof::demo {

// P(an audit re-executing s of L blocks catches a consistent tamper of
// h^l, 1 <= l < L): block l or block l+1 is drawn,
//   1 - C(L-2, s) / C(L, s).
double DetectPerAudit(uint32_t num_layers, uint32_t s);
// P(none of n tampered requests is caught) at audit rate a:
//   (1 - a * DetectPerAudit)^n.
double MissProbability(uint32_t num_layers, uint32_t s, double rate, int n);

struct DemoVerdict {
  std::string request_id;
  uint64_t leaf_index = 0;
  v1::Verdict verdict;
};

// Every verdict in the verifier's log, in log order (paged ListVerdicts).
absl::StatusOr<std::vector<DemoVerdict>> ListDemoVerdicts(DemoCluster& cluster);

struct DemoProverTally {
  std::string id;
  bool tampers = false;
  int requests = 0;     // sent to it
  int receipts_ok = 0;  // answered, and every client check passed
  uint64_t commitments = 0;
  int audits = 0;  // drawn audits with a verdict
  std::map<std::string, int> verdicts;
  int failures = 0;
  std::map<uint32_t, int> mismatch_layers;  // layer -> FAIL_MISMATCHes
  // The first drawn audit that failed with FAIL_MISMATCH (for
  // localisation and evidence).
  std::string failed_request;
  uint64_t failed_verdict_leaf = 0;
};

struct DemoCheck {
  std::string check, state, detail;  // state: pass, fail, n/a
};

struct DemoOutcome {
  // Inputs.
  std::string out_dir, model_dir, model_digest;
  std::string backend, verifier_backend;  // the provers' and the verifier's
  uint32_t num_layers = 0;
  double audit_rate = 0;
  uint32_t layers_per_audit = 0, tamper_layer = 0;
  int requests = 0, concurrency = 0;
  // The load and the log.
  int requests_ok = 0, promises = 0;
  uint64_t output_tokens = 0;
  uint64_t log_size = 0, commitments_logged = 0, audits_drawn = 0;
  std::vector<DemoProverTally> provers;
  // Localisation: the all-layers audit of one failed prover-2 request.
  std::string localised_request;
  std::string localised_outcome;
  int localised_layer = -1;
  // Files and their verification.
  std::string report_json, report_html, evidence_file;
  bool report_verified = false, bundle_verified = false;
  std::vector<DemoCheck> bundle_checks;
  // What the verified report says, one line per fact.
  std::vector<std::string> report_lines;
  // Expectations and what went wrong.
  bool honest_all_pass = false, tamperer_caught = false;
  bool localised_right = false;
  std::vector<std::string> errors;
  std::map<std::string, double> seconds;  // phase -> wall time

  bool ok() const {
    return honest_all_pass && tamperer_caught && localised_right &&
           report_verified && bundle_verified && errors.empty();
  }
};

// Fills provers' verdict tallies from `verdicts` (`requests` maps request
// ids to provers) and derives honest_all_pass and tamperer_caught.
void TallyVerdicts(const std::vector<DemoRequest>& requests,
                   const std::vector<DemoVerdict>& verdicts,
                   DemoOutcome& outcome);

// The `layerproof verify-bundle` command that re-checks the evidence file.
std::string VerifyBundleCommand(const DemoOutcome& outcome);
// The detection arithmetic of the run's parameters, as printed lines.
std::vector<std::string> DetectionLines(const DemoOutcome& outcome);
// The summary table (stdout).
void PrintDemoSummary(const DemoOutcome& outcome);
nlohmann::json DemoSummaryJson(const DemoOutcome& outcome);
// "N PASS, M FAIL" of the verifier's verdicts so far.
std::string VerdictCounts(const verifier::VerifierCounters& counters);
// The nodes' addresses and grpcurl commands with the real ports and
// certificate paths (--keep-running).
void PrintGrpcurl(FILE* to, DemoCluster& cluster, const std::string& out);

}  // namespace layerproof::demo

#endif  // LAYERPROOF_DEMO_DEMO_SUMMARY_H_
