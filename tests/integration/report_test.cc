// `layerproof report` as a user runs it (docs/reports.md "The command
// line") against an in-process verifier that audited an honest prover and
// one whose tokens do not come from its sampler: the written DSSE JSON
// report verifies and its counts equal the verdicts the cluster sees, the
// --json summary, HTML output and offline `report render`, an RFC 3339
// window that holds nothing, and the exit codes of a wrong key (1, nothing
// written), an unreachable verifier (1) and bad input (2).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "nlohmann/json.hpp"
#include "store/crypto.h"
#include "tests/integration/cluster.h"
#include "tests/integration/node_process.h"
#include "tests/integration/run_command.h"
#include "tests/integration/test_faults.h"
#include "check/report_format.h"

namespace layerproof::integration {
namespace {

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// `n` greedy requests through `prover`; their request ids.
std::vector<std::string> Requests(Cluster& cluster, RunningProver& prover,
                                  int n) {
  auto stub = cluster.InferenceStub(prover);
  std::vector<std::string> ids;
  for (int i = 0; i < n; ++i) {
    v1::SamplingParams sampling;
    sampling.set_top_p(1.0f);
    auto r = cluster.Generate(*stub, {1, 2, 3, int32_t(10 + i)}, 4, sampling);
    EXPECT_TRUE(r.ok()) << r.status();
    if (r.ok()) ids.push_back(r->response.request_id());
  }
  return ids;
}

TEST(ReportCommand, WritesAVerifiedReportWhoseCountsMatchTheLog) {
  Cluster cluster;
  const uint32_t layers = uint32_t(cluster.model().config().num_layers);
  cluster.StartVerifier({.policy = {1.0, layers}});
  RunningProver& honest = cluster.StartProver({.prover_id = "prover-1"});
  const int32_t vocab = int32_t(cluster.model().config().vocab_size);
  RunningProver& cheat = cluster.StartProver(
      {.prover_id = "prover-2",
       .faults = std::make_shared<WrongTokenFaults>(vocab)});
  std::vector<std::string> ids = Requests(cluster, honest, 3);
  const std::vector<std::string> bad = Requests(cluster, cheat, 2);
  ids.insert(ids.end(), bad.begin(), bad.end());
  int verdicts = 0, failures = 0;
  for (const std::string& id : ids) {
    for (const v1::Verdict& v :
         cluster.WaitForVerdicts(id, absl::Seconds(60))) {
      ++verdicts;
      failures += v.outcome() != v1::PASS;
    }
  }
  ASSERT_EQ(verdicts, 5);
  ASSERT_EQ(failures, 2);

  const std::string root = cluster.root();
  ASSERT_TRUE(
      store::WriteKeyPair(cluster.verifier_private_key(), root + "/verifier")
          .ok());
  auto other = store::Ed25519PrivateKey::Generate();
  ASSERT_TRUE(other.ok());
  ASSERT_TRUE(store::WriteKeyPair(*other, root + "/other").ok());
  const std::vector<std::string> common = {
      "--verifier", cluster.verifier_address(), "--insecure", "--verifier-key",
      root + "/verifier.pub"};
  auto run = [&](std::vector<std::string> args) {
    args.insert(args.end(), common.begin(), common.end());
    return RunLayerproof(args);
  };

  // JSON, with the --json summary.
  CommandResult r = run({"report", "--from", "0", "--to", "now", "--out",
                         root + "/report.json", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json summary = nlohmann::json::parse(r.out);
  EXPECT_EQ(summary["totals"]["commitments"], 5);
  EXPECT_EQ(summary["totals"]["audits"], verdicts);
  EXPECT_EQ(summary["totals"]["failures"], failures);
  auto report = check::VerifyReportDsseJson(ReadAll(root + "/report.json"),
                                               cluster.verifier_key());
  ASSERT_TRUE(report.ok()) << report.status();
  const nlohmann::json& rep = *report;
  EXPECT_EQ(rep["totals"]["drawn_audits"], 5);
  EXPECT_EQ(rep["totals"]["verdicts"]["FAIL_MISMATCH"], 2);
  ASSERT_EQ(rep["failures"].size(), 2u);
  for (const nlohmann::json& f : rep["failures"]) {
    EXPECT_EQ(f["prover_id"], "prover-2");
    EXPECT_EQ(f["layer"], layers + 1);  // the head
    EXPECT_EQ(f["evidence"]["rpc"], "layerproof.v1.Audit/GetEvidence");
  }
  for (const nlohmann::json& p : rep["by_prover"]) {
    if (p["prover_id"] == "prover-1") {
      // Three audits of every block: (1 - f)^3 <= 0.05.
      EXPECT_NEAR(p["detection"]["ruled_out"]["0.95"].get<double>(),
                  1 - std::cbrt(0.05), 1e-9);
    } else {
      EXPECT_TRUE(p["detection"]["ruled_out"]["0.95"].is_null());
    }
  }

  // HTML straight from the verifier, and rendered offline from the JSON.
  r = run({"report", "--from", "0", "--to", "now", "--format", "html",
           "--prover", "prover-1", "--out", root + "/report.html"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(ReadAll(root + "/report.html").find("<html"), std::string::npos);
  r = RunLayerproof({"report", "render", "--in", root + "/report.json",
                     "--verifier-key", root + "/verifier.pub", "--out",
                     root + "/rendered.html"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(ReadAll(root + "/rendered.html").find("<html"), std::string::npos);

  // The chain of reports as a reader checks it (`report verify`,
  // `report --previous`). More entries, then a report that links to the
  // verifier's last issued one.
  auto verified = [&](const std::string& path) {
    auto v =
        check::VerifyReportDsseJson(ReadAll(path), cluster.verifier_key());
    EXPECT_TRUE(v.ok()) << path << ": " << v.status();
    return v.value_or(nlohmann::json());
  };
  const uint64_t first_size = rep["checkpoint"]["tree_size"].get<uint64_t>();
  const std::vector<std::string> more = Requests(cluster, honest, 1);
  ASSERT_EQ(more.size(), 1u);
  ASSERT_EQ(cluster.WaitForVerdicts(more[0], absl::Seconds(60)).size(), 1u);
  r = run(
      {"report", "--from", "0", "--to", "now", "--out", root + "/mid.json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json mid = verified(root + "/mid.json");
  ASSERT_GT(mid["checkpoint"]["tree_size"].get<uint64_t>(), first_size);
  EXPECT_EQ(mid["previous_report"]["source"], "last_issued");
  EXPECT_EQ(mid["client_nonce"].get<std::string>().size(), 64u);
  // Against our own first report, whatever was issued since.
  r = run({"report", "--from", "0", "--to", "now", "--previous",
           root + "/report.json", "--verifier-id", "verifier-1", "--out",
           root + "/next.json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json next = verified(root + "/next.json");
  EXPECT_EQ(next["previous_report"]["source"], "caller");
  EXPECT_EQ(next["previous_report"]["tree_size"], first_size);
  EXPECT_EQ(next["previous_report"]["root_hash"],
            rep["checkpoint"]["root_hash"]);
  const std::string key_flag = root + "/verifier.pub";
  r = RunLayerproof({"report", "verify", root + "/next.json", "--verifier-key",
                     key_flag, "--previous", root + "/report.json", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(nlohmann::json::parse(r.out)["extends_previous"].get<bool>());
  EXPECT_EQ(RunLayerproof({"report", "verify", root + "/mid.json",
                           "--verifier-key", key_flag})
                .exit_code,
            0);
  // next.json links to the first report, not to mid.json; the first
  // report links to nothing.
  r = RunLayerproof({"report", "verify", root + "/next.json", "--verifier-key",
                     key_flag, "--previous", root + "/mid.json"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("was not requested against it"), std::string::npos)
      << r.err;
  EXPECT_EQ(RunLayerproof({"report", "verify", root + "/report.json",
                           "--verifier-key", key_flag, "--previous",
                           root + "/next.json"})
                .exit_code,
            1);
  EXPECT_EQ(RunLayerproof({"report", "verify", root + "/next.json",
                           "--verifier-key", root + "/other.pub"})
                .exit_code,
            1);
  EXPECT_EQ(
      RunLayerproof({"report", "verify", "--verifier-key", key_flag}).exit_code,
      2);
  // A report that names another verifier id than the one asked for.
  r = run({"report", "--from", "0", "--to", "now", "--verifier-id",
           "verifier-9", "--out", root + "/wrong_id.json"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("verifier_id"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(root + "/wrong_id.json"));

  // Regression: `report render` read and parsed any file before checking
  // it (64 MB of '[' took 2.4 GB). Too large: refused unread; too deep:
  // refused before parsing. Both are malformed input (2), nothing written.
  {
    std::ofstream(root + "/huge.json").put(' ');
    std::filesystem::resize_file(root + "/huge.json",
                                 check::kMaxReportDsseJsonBytes + 1);
    std::ofstream(root + "/deep.json") << std::string(1 << 20, '[');
  }
  const std::vector<std::pair<std::string, std::string>> bad_inputs = {
      {"/huge.json",
       " bytes, want <= " + std::to_string(check::kMaxReportDsseJsonBytes)},
      {"/deep.json", "nested deeper than 64"}};
  for (const auto& [bad, why] : bad_inputs) {
    r = RunLayerproof({"report", "render", "--in", root + bad, "--verifier-key",
                       key_flag, "--out", root + "/bad.html"});
    EXPECT_EQ(r.exit_code, 2) << bad << ": " << r.err;
    EXPECT_NE(r.err.find(why), std::string::npos) << r.err;
    EXPECT_FALSE(std::filesystem::exists(root + "/bad.html"));
    r = RunLayerproof(
        {"report", "verify", root + bad, "--verifier-key", key_flag});
    EXPECT_EQ(r.exit_code, 2) << bad << ": " << r.err;
  }

  // An RFC 3339 window before any of it.
  r = run({"report", "--from", "2000-01-01T00:00:00Z", "--to",
           "2000-01-02T00:00:00Z", "--out", root + "/empty.json", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["totals"]["commitments"], 0);

  // A key that did not sign it: refused, nothing written.
  r = RunLayerproof({"report", "--verifier", cluster.verifier_address(),
                     "--insecure", "--verifier-key", root + "/other.pub",
                     "--from", "0", "--to", "now", "--out",
                     root + "/unverified.json"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_FALSE(std::filesystem::exists(root + "/unverified.json"));
  r = RunLayerproof({"report", "render", "--in", root + "/report.json",
                     "--verifier-key", root + "/other.pub", "--out",
                     root + "/unverified.html"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_FALSE(std::filesystem::exists(root + "/unverified.html"));

  // Bad input: 2.
  EXPECT_EQ(run({"report", "--from", "yesterday", "--to", "now", "--out",
                 root + "/x.json"})
                .exit_code,
            2);
  EXPECT_EQ(
      run({"report", "--from", "now", "--to", "0", "--out", root + "/x.json"})
          .exit_code,
      2);
  EXPECT_EQ(run({"report", "--from", "0", "--to", "now", "--format", "pdf",
                 "--out", root + "/x.json"})
                .exit_code,
            2);
  EXPECT_EQ(RunLayerproof({"report", "--help"}).exit_code, 0);
  // Nobody listening: 1.
  r = RunLayerproof(
      {"report", "--verifier", "127.0.0.1:" + std::to_string(ReservePort()),
       "--insecure", "--verifier-key", root + "/verifier.pub", "--from", "0",
       "--to", "now", "--timeout-s", "5", "--out", root + "/x.json"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
}

}  // namespace
}  // namespace layerproof::integration
