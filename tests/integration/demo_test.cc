// `layerproof demo` as a user runs it (the README's main job): the real
// binary, the default load (60 requests, 8 clients, audit rate 0.3, 4
// blocks per audit, prover-2 tampering with h^3), a fresh model folder (so
// the small model is synthesised) and --json. It must exit 0 with a
// summary saying the honest prover is all PASS, the tamperer was caught
// and localised at the tampered layer, and the report and the evidence
// bundle verified; the files it promises must be there. The chance that
// no audit of the 30 tampered requests catches the tamper is ~3e-4
// (README "Demo").
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "nlohmann/json.hpp"
#include "tests/integration/run_command.h"
#include "tests/store/temp_dir.h"

namespace layerproof::integration {
namespace {

namespace fs = std::filesystem;
using store::fixture::TempDir;

// The test's CTest TIMEOUT (tests/integration/CMakeLists.txt) bounds every
// run; this only keeps a hung binary from outliving it.
constexpr std::chrono::seconds kDemoTimeout(180);

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(Demo, DefaultLoadCatchesAndLocalisesTheTamperingProver) {
  TempDir tmp("lp_demo");
  const std::string out = tmp.path() + "/out";
  const std::string model = tmp.path() + "/model";
  const auto start = std::chrono::steady_clock::now();
  const CommandResult run = RunLayerproof(
      {"demo", "--json", "--out", out, "--model", model}, kDemoTimeout);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  RecordProperty("seconds", std::to_string(seconds));
  ASSERT_EQ(run.exit_code, 0) << "stdout:\n"
                              << run.out << "\nstderr:\n"
                              << run.err;
  const nlohmann::json j = nlohmann::json::parse(run.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << run.out;
  EXPECT_TRUE(j.at("ok").get<bool>());
  EXPECT_TRUE(j.at("errors").empty()) << j.at("errors").dump();
  EXPECT_EQ(j.at("model").at("layers"), 8);
  // README "Demo": P(an audit catches it) = 1 - C(6,4)/C(8,4) = 11/14, and
  // P(no audit of 30 tampered requests does) = (1 - 0.3 * 11/14)^30.
  EXPECT_NEAR(j.at("policy").at("p_detect_per_audit").get<double>(), 11.0 / 14,
              1e-12);
  EXPECT_NEAR(j.at("policy").at("p_miss").get<double>(), 3.145e-4, 1e-6);
  EXPECT_EQ(j.at("load").at("requests"), 60);
  EXPECT_EQ(j.at("load").at("receipts_verified"), 60);
  EXPECT_EQ(j.at("log").at("commitments"), 60);

  // The honest prover: every receipt verified, audited, all PASS.
  const nlohmann::json& honest = j.at("provers").at(0);
  EXPECT_EQ(honest.at("prover_id"), "prover-1");
  EXPECT_FALSE(honest.at("tampers").get<bool>());
  EXPECT_EQ(honest.at("requests"), 30);
  EXPECT_EQ(honest.at("receipts_verified"), 30);
  EXPECT_GT(honest.at("audits").get<int>(), 0);
  EXPECT_EQ(honest.at("failures"), 0);
  EXPECT_EQ(honest.at("verdicts").at("PASS"), honest.at("audits"));
  EXPECT_TRUE(honest.at("all_pass").get<bool>());

  // The tamperer: its receipts verify too (only audits can catch it), and
  // every failed audit is a mismatch at block 3 or block 4.
  const nlohmann::json& cheater = j.at("provers").at(1);
  EXPECT_EQ(cheater.at("prover_id"), "prover-2");
  EXPECT_TRUE(cheater.at("tampers").get<bool>());
  EXPECT_EQ(cheater.at("tampered_layer"), 3);
  EXPECT_EQ(cheater.at("receipts_verified"), 30);
  EXPECT_GT(cheater.at("verdicts").at("FAIL_MISMATCH").get<int>(), 0);
  EXPECT_EQ(cheater.at("failures"), cheater.at("verdicts").at("FAIL_MISMATCH"));
  for (const auto& [layer, n] : cheater.at("mismatch_layers").items()) {
    EXPECT_TRUE(layer == "3" || layer == "4") << layer;
  }
  EXPECT_TRUE(j.at("tamperer_caught").get<bool>());
  EXPECT_EQ(j.at("localisation").at("outcome"), "FAIL_MISMATCH");
  EXPECT_EQ(j.at("localisation").at("layer"), 3);
  EXPECT_TRUE(j.at("localisation").at("matches").get<bool>());

  // The files, and their verification.
  EXPECT_TRUE(j.at("report").at("verified").get<bool>());
  EXPECT_TRUE(j.at("evidence").at("verified").get<bool>());
  // Every check holds: its state is "pass" or "n/a" (an allow-list, so a
  // failure is caught however it is spelt).
  const nlohmann::json& checks = j.at("evidence").at("checks");
  ASSERT_TRUE(checks.is_array());
  ASSERT_FALSE(checks.empty());
  int passed = 0;
  for (const auto& check : checks) {
    const std::string state = check.at("state").get<std::string>();
    EXPECT_TRUE(state == "pass" || state == "n/a") << check.dump();
    passed += state == "pass";
  }
  EXPECT_GT(passed, 0);
  const std::string bundle = j.at("evidence").at("file");
  EXPECT_EQ(fs::path(bundle).parent_path(), fs::path(out));
  EXPECT_GT(fs::file_size(bundle), 0u);
  for (const char* file :
       {"report.json", "report.html", "summary.json", "roles.json",
        "provers.json", "tls/ca.pem", "tls/server.pem", "tls/auditor-1.pem",
        "tls/auditor-1.key", "keys/verifier.pub", "keys/prover-2.pub"}) {
    EXPECT_TRUE(fs::exists(fs::path(out) / file)) << file;
  }
  EXPECT_NE(ReadFile(out + "/report.json").find("payloadType"),
            std::string::npos);
  EXPECT_NE(ReadFile(out + "/report.html").find("<html"), std::string::npos);
  EXPECT_TRUE(fs::exists(fs::path(model) / "model.safetensors"));

  // A second run into the same folders reuses the model and replaces the
  // previous demo's files.
  const CommandResult again =
      RunLayerproof({"demo", "--json", "--requests", "8", "--audit-rate", "1",
                     "--out", out, "--model", model},
                    kDemoTimeout);
  EXPECT_EQ(again.exit_code, 0) << again.err;
}

TEST(Demo, UsageErrorsExitTwoAndHelpExitsZero) {
  TempDir tmp("lp_demo");
  EXPECT_EQ(RunLayerproof({"demo", "--help"}, kDemoTimeout).exit_code, 0);
  EXPECT_EQ(RunLayerproof({"demo", "--no-such-flag"}, kDemoTimeout).exit_code,
            2);
  EXPECT_EQ(
      RunLayerproof({"demo", "--audit-rate", "2"}, kDemoTimeout).exit_code, 2);
  // A non-empty folder that is not a demo's is never cleared.
  std::ofstream(tmp.path() + "/keep.txt") << "mine";
  EXPECT_EQ(
      RunLayerproof({"demo", "--out", tmp.path()}, kDemoTimeout).exit_code, 2);
  EXPECT_TRUE(fs::exists(tmp.path() + "/keep.txt"));
}

}  // namespace
}  // namespace layerproof::integration
