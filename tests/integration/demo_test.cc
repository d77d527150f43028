// `layerproof demo` as a user runs it (the README's main job): the real
// binary, the default load (60 requests, 8 clients, audit rate 0.3, 4
// blocks per audit, prover-2 tampering with h^3), a fresh model folder (so
// the small model is synthesised) and --json. It must exit 0 with a
// summary saying the honest prover is all PASS, the tamperer was caught
// and localised at the tampered layer, and the report and the evidence
// bundle verified; the files it promises must be there. Its audit draws are
// seeded (--audit-seed), so it cannot fail by chance: unseeded, no audit of
// the 30 tampered requests catches the tamper about 3 runs in 10,000
// (README "Demo"); with this seed prover-2's first draw already audits the
// tampered block 3 (draws 0, 2, 7, 9, ... of its 30 do). With --keep-running
// the nodes then serve, over mTLS with the demo's certificates, until SIGTERM.
// The tests share one model folder, so the model is synthesised once.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <memory>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "grpcpp/client_context.h"
#include "grpcpp/generic/generic_stub.h"
#include "grpcpp/support/byte_buffer.h"
#include "layerproof/v1/audit.grpc.pb.h"
#include "nlohmann/json.hpp"
#include "rpc/tls.h"
#include "tests/integration/run_command.h"
#include "tests/store/temp_dir.h"

namespace layerproof::integration {
namespace {

namespace fs = std::filesystem;
using store::fixture::TempDir;

// The test's CTest TIMEOUT (tests/integration/CMakeLists.txt) bounds every
// run; this only keeps a hung binary from outliving it.
constexpr std::chrono::seconds kDemoTimeout(180);

// The model folder of every test here: the first demo run synthesises the
// model into it (fresh, as for a user), the later ones reuse it.
const std::string& SharedModelDir() {
  static const TempDir dir("lp_demo_model");  // removed at exit
  static const std::string model = dir.path() + "/model";
  return model;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(Demo, DefaultLoadCatchesAndLocalisesTheTamperingProver) {
  TempDir tmp("lp_demo");
  const std::string out = tmp.path() + "/out";
  const std::string& model = SharedModelDir();
  const auto start = std::chrono::steady_clock::now();
  const CommandResult run =
      RunLayerproof({"demo", "--json", "--out", out, "--model", model,
                     "--audit-seed", "layerproof-demo-test-0"},
                    kDemoTimeout);
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

// `demo --quant q4_0` (issue 15): the shared model quantized once into
// MODEL-q4_0/model.gguf, and the whole demo on it: the provers serve the
// GGUF, the verifier re-executes its integer GEMMs on ref, the honest
// prover is all PASS and the tamperer is caught.
TEST(Demo, QuantizedModelServesAndAuditsEndToEnd) {
  TempDir tmp("lp_demo_q");
  const std::string out = tmp.path() + "/out";
  const std::string& model = SharedModelDir();
  const CommandResult run =
      RunLayerproof({"demo", "--json", "--quant", "q4_0", "--requests", "20",
                     "--audit-rate", "1", "--out", out, "--model", model},
                    kDemoTimeout);
  ASSERT_EQ(run.exit_code, 0) << "stdout:\n"
                              << run.out << "\nstderr:\n"
                              << run.err;
  const nlohmann::json j = nlohmann::json::parse(run.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << run.out;
  EXPECT_TRUE(j.at("ok").get<bool>());
  const std::string gguf = model + "-q4_0/model.gguf";
  EXPECT_EQ(j.at("model").at("dir"), gguf);
  EXPECT_TRUE(fs::exists(gguf));
  EXPECT_TRUE(fs::exists(model + "-q4_0/tokenizer.json"));
  const nlohmann::json& honest = j.at("provers").at(0);
  EXPECT_EQ(honest.at("receipts_verified"), 10);
  EXPECT_GT(honest.at("audits").get<int>(), 0);
  EXPECT_EQ(honest.at("verdicts").at("PASS"), honest.at("audits"));
  EXPECT_TRUE(j.at("tamperer_caught").get<bool>());
  EXPECT_TRUE(j.at("evidence").at("verified").get<bool>());

  const CommandResult bad =
      RunLayerproof({"demo", "--quant", "q5_1", "--out", out, "--model", model},
                    kDemoTimeout);
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("--quant: got \"q5_1\""), std::string::npos)
      << bad.err;

  // `model quantize` itself, and `model digest` of what it wrote.
  const std::string q8 = tmp.path() + "/q8/m.gguf";
  fs::create_directories(tmp.path() + "/q8");
  const CommandResult quantize =
      RunLayerproof({"model", "quantize", "--type", "q8_0", "--out", q8, model},
                    kDemoTimeout);
  ASSERT_EQ(quantize.exit_code, 0) << quantize.err;
  EXPECT_NE(quantize.out.find("Q8_0"), std::string::npos) << quantize.out;
  EXPECT_TRUE(fs::exists(tmp.path() + "/q8/tokenizer.json"));
  const CommandResult digest =
      RunLayerproof({"model", "digest", q8, "--json"}, kDemoTimeout);
  ASSERT_EQ(digest.exit_code, 0) << digest.err;
  EXPECT_NE(digest.out.find("\"model_digest\""), std::string::npos);
  const CommandResult wrong_type =
      RunLayerproof({"model", "quantize", "--type", "q5_1", "--out", q8, model},
                    kDemoTimeout);
  EXPECT_EQ(wrong_type.exit_code, 2);
  EXPECT_NE(wrong_type.err.find("--type: got \"q5_1\""), std::string::npos)
      << wrong_type.err;
}

// grpc.health.v1.Health/Check (the whole server) through a generic stub:
// the health protos are not generated in this tree, so the empty request
// and the response (field 1: the ServingStatus enum, SERVING = 1) are
// handled by hand. Returns the status, or -1 on an RPC error (`rpc`).
int HealthStatus(const std::shared_ptr<grpc::Channel>& channel,
                 grpc::Status* rpc) {
  grpc::ByteBuffer request, response;
  grpc::Slice empty("");
  request = grpc::ByteBuffer(&empty, 1);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::seconds(10));
  std::promise<grpc::Status> done;
  grpc::GenericStub stub(channel);
  stub.UnaryCall(&context, "/grpc.health.v1.Health/Check", grpc::StubOptions(),
                 &request, &response,
                 [&done](grpc::Status s) { done.set_value(std::move(s)); });
  *rpc = done.get_future().get();
  if (!rpc->ok()) return -1;
  std::vector<grpc::Slice> slices;
  EXPECT_TRUE(response.Dump(&slices).ok());
  std::string bytes;
  for (const grpc::Slice& slice : slices) {
    bytes.append(reinterpret_cast<const char*>(slice.begin()), slice.size());
  }
  if (bytes.empty()) return 0;  // proto3 default: UNKNOWN
  if (bytes.size() == 2 && bytes[0] == 0x08) return bytes[1];
  return -1;
}

// `demo --keep-running` (README "Demo"): after the summary the nodes keep
// serving, over mTLS with the demo's certificates, the addresses its
// grpcurl examples name (on stderr with --json), until SIGTERM; then it
// shuts down and exits 0. Audit rate 1, so every request of the tamperer
// is audited and caught.
TEST(Demo, KeepRunningServesUntilSigterm) {
  TempDir tmp("lp_demo");
  const std::string out = tmp.path() + "/out";
  RunningCommand demo({"demo", "--out", out, "--model", SharedModelDir(),
                       "--requests", "16", "--audit-rate", "1",
                       "--keep-running", "--json"});
  // The examples end with the health check, then a blank line; the summary
  // goes to stdout first, but the two pipes are read as data arrives, so
  // wait for both (stderr's marker could be read before the last of
  // stdout).
  const bool ready = demo.ReadUntil(
      [](const std::string& out, const std::string& err) {
        return err.find("grpc.health.v1.Health/Check\n\n") !=
                   std::string::npos &&
               !nlohmann::json::parse(out, nullptr, false).is_discarded();
      },
      std::chrono::seconds(90));
  ASSERT_TRUE(ready) << "stdout:\n"
                     << demo.out() << "\nstderr:\n"
                     << demo.err();

  // The summary, on stdout, came first.
  const nlohmann::json j = nlohmann::json::parse(demo.out(), nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << demo.out();
  EXPECT_TRUE(j.at("ok").get<bool>()) << j.dump(2);
  EXPECT_EQ(j.at("load").at("requests"), 16);
  EXPECT_TRUE(j.at("tamperer_caught").get<bool>()) << j.dump(2);

  std::smatch m;
  const std::string& err = demo.err();
  ASSERT_TRUE(std::regex_search(
      err, m,
      std::regex("verifier (127\\.0\\.0\\.1:[0-9]+), prover-1 "
                 "(127\\.0\\.0\\.1:[0-9]+), prover-2 "
                 "(127\\.0\\.0\\.1:[0-9]+)")))
      << err;
  const std::string verifier = m[1], prover = m[2];
  EXPECT_NE(err.find(verifier + " layerproof.v1.Audit/ListVerdicts"),
            std::string::npos)
      << err;
  EXPECT_NE(err.find(prover + " layerproof.v1.Inference/Generate"),
            std::string::npos)
      << err;

  // The client certificate the examples use, against the demo's CA.
  rpc::TlsOptions tls;
  tls.cert_file = out + "/tls/client-1.pem";
  tls.key_file = out + "/tls/client-1.key";
  tls.ca_file = out + "/tls/ca.pem";
  for (const std::string& address : {verifier, prover}) {
    auto channel = rpc::MakeChannel(address, tls);
    ASSERT_TRUE(channel.ok()) << channel.status();
    grpc::Status rpc;
    EXPECT_EQ(HealthStatus(*channel, &rpc), 1)
        << address << ": " << rpc.error_message();
  }
  auto channel = rpc::MakeChannel(verifier, tls);
  ASSERT_TRUE(channel.ok()) << channel.status();
  auto audit = v1::Audit::NewStub(*channel);
  // The verdicts with `outcome` (unspecified: all): at least one each.
  for (const v1::VerdictOutcome outcome :
       {v1::VERDICT_UNSPECIFIED, v1::PASS, v1::FAIL_MISMATCH}) {
    v1::ListVerdictsRequest request;
    request.set_outcome(outcome);
    v1::ListVerdictsResponse response;
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() +
                         std::chrono::seconds(10));
    const grpc::Status s = audit->ListVerdicts(&context, request, &response);
    ASSERT_TRUE(s.ok()) << s.error_message();
    EXPECT_FALSE(response.verdicts().empty())
        << v1::VerdictOutcome_Name(outcome);
  }

  // SIGTERM: a clean shutdown, exit 0 (with --json nothing more is
  // printed: the summary was the whole of stdout).
  const std::string summary = demo.out();
  demo.Signal(SIGTERM);
  const auto stop = std::chrono::steady_clock::now();
  const CommandResult done = demo.Wait(std::chrono::seconds(20));
  EXPECT_EQ(done.exit_code, 0) << "stderr:\n" << done.err;
  EXPECT_LT(std::chrono::steady_clock::now() - stop, std::chrono::seconds(20));
  EXPECT_EQ(done.out, summary);
  EXPECT_EQ(done.err.find("layerproof: demo:"), std::string::npos) << done.err;
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
