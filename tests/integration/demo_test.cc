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
#include <stdlib.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "nlohmann/json.hpp"

namespace {

namespace fs = std::filesystem;

struct ShellRun {
  int exit_code = -1;
  std::string out;
};

// Runs `command` through the shell; stdout is captured, stderr goes to
// `stderr_file`.
ShellRun Shell(const std::string& command, const std::string& stderr_file) {
  ShellRun run;
  FILE* pipe = popen((command + " 2>'" + stderr_file + "'").c_str(), "r");
  if (pipe == nullptr) return run;
  char buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof buffer, pipe)) > 0) {
    run.out.append(buffer, n);
  }
  const int status = pclose(pipe);
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return run;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class TempDir {
 public:
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "lp_demo_XXXXXX");
    EXPECT_NE(mkdtemp(pattern.data()), nullptr);
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

TEST(Demo, DefaultLoadCatchesAndLocalisesTheTamperingProver) {
  TempDir tmp;
  const std::string out = tmp.path() + "/out";
  const std::string model = tmp.path() + "/model";
  const auto start = std::chrono::steady_clock::now();
  const ShellRun run =
      Shell(std::string("'") + LP_LAYERPROOF_BINARY + "' demo --json --out '" +
                out + "' --model '" + model + "'",
            tmp.path() + "/stderr.txt");
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  RecordProperty("seconds", std::to_string(seconds));
  const std::string err = ReadFile(tmp.path() + "/stderr.txt");
  ASSERT_EQ(run.exit_code, 0) << "stdout:\n" << run.out << "\nstderr:\n" << err;
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
  EXPECT_FALSE(j.at("evidence").at("checks").empty());
  for (const auto& check : j.at("evidence").at("checks")) {
    EXPECT_NE(check.at("state"), "FAIL") << check.dump();
  }
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
  const ShellRun again = Shell(std::string("'") + LP_LAYERPROOF_BINARY +
                                   "' demo --json --requests 8 --audit-rate 1 "
                                   "--out '" +
                                   out + "' --model '" + model + "'",
                               tmp.path() + "/stderr2.txt");
  EXPECT_EQ(again.exit_code, 0) << ReadFile(tmp.path() + "/stderr2.txt");
}

TEST(Demo, UsageErrorsExitTwoAndHelpExitsZero) {
  TempDir tmp;
  const std::string bin = std::string("'") + LP_LAYERPROOF_BINARY + "'";
  EXPECT_EQ(Shell(bin + " demo --help", tmp.path() + "/e").exit_code, 0);
  EXPECT_EQ(Shell(bin + " demo --no-such-flag", tmp.path() + "/e").exit_code,
            2);
  EXPECT_EQ(Shell(bin + " demo --audit-rate 2", tmp.path() + "/e").exit_code,
            2);
  // A non-empty folder that is not a demo's is never cleared.
  std::ofstream(tmp.path() + "/keep.txt") << "mine";
  EXPECT_EQ(Shell(bin + " demo --out '" + tmp.path() + "'", tmp.path() + "/e")
                .exit_code,
            2);
  EXPECT_TRUE(fs::exists(tmp.path() + "/keep.txt"));
}

}  // namespace
