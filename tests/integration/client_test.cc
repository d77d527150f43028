// `layerproof generate --prover` and `layerproof verify-receipt` as a user
// runs them, against an in-process verifier and prover on loopback: a
// checked generation exits 0 and its saved receipt verifies; a saved
// receipt that was altered, a wrong log key or a wrong prover key exits 1
// naming what failed; a promise the prover never honours is reported
// pending (exit 4) within the follow window, and broken (exit 1) past its
// deadline.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "nlohmann/json.hpp"
#include "store/crypto.h"
#include "tests/integration/cluster.h"
#include "tests/integration/run_command.h"
#include "tests/integration/test_faults.h"

namespace layerproof::integration {
namespace {

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class ClientCommands : public ::testing::Test {
 protected:
  void SetUp() override {
    cluster_.StartVerifier();
    ASSERT_TRUE(store::WriteKeyPair(cluster_.verifier_private_key(),
                                    cluster_.root() + "/verifier")
                    .ok());
  }

  // Starts a prover and writes its public key to <root>/<id>.pub.
  RunningProver& Prover(ProverSetup setup = {}) {
    RunningProver& p = cluster_.StartProver(setup);
    EXPECT_TRUE(
        store::WriteKeyPair(*p.key, cluster_.root() + "/" + p.prover_id).ok());
    return p;
  }

  std::vector<std::string> Trust(const RunningProver& p) const {
    return {"--prover-key", cluster_.root() + "/" + p.prover_id + ".pub",
            "--log-key", cluster_.root() + "/verifier.pub", "--prover-id",
            p.prover_id};
  }

  CommandResult Generate(const RunningProver& p,
                         std::vector<std::string> extra) {
    std::vector<std::string> args = {
        "generate", "--prover", p.address(), "--insecure", "--tokens",
        "3,4,5",    "--max-tokens", "3", "--json"};
    for (const std::string& a : Trust(p)) args.push_back(a);
    for (const std::string& a : extra) args.push_back(a);
    return RunLayerproof(args);
  }

  Cluster cluster_;
};

TEST_F(ClientCommands, ACheckedGenerationAndItsSavedReceiptVerify) {
  RunningProver& p = Prover();
  const std::string saved = cluster_.root() + "/receipt.json";
  const CommandResult r = Generate(
      p, {"--temperature", "0.8", "--top-k", "20", "--ignore-eos", "--save",
          saved});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_TRUE(j["ok"].get<bool>());
  EXPECT_EQ(j["log"]["state"], "logged");
  EXPECT_EQ(j["prover_id"], "prover-1");
  EXPECT_EQ(j["client_nonce"].get<std::string>().size(), 32u);  // 16 bytes
  EXPECT_EQ(j["output_token_ids"].size(), 3u);

  std::vector<std::string> verify = {"verify-receipt", saved, "--json"};
  for (const std::string& a : Trust(p)) verify.push_back(a);
  const CommandResult v = RunLayerproof(verify);
  ASSERT_EQ(v.exit_code, 0) << v.out << v.err;
  EXPECT_EQ(nlohmann::json::parse(v.out)["log"]["leaf_index"],
            j["log"]["leaf_index"]);

  // The saved response with one output token changed.
  nlohmann::json altered = nlohmann::json::parse(ReadFile(saved));
  auto& ids = altered["response"]["outputTokenIds"];
  ASSERT_FALSE(ids.empty()) << altered.dump();
  ids[0] = ids[0].get<int>() + 1;
  std::ofstream(saved) << altered.dump();
  const CommandResult bad = RunLayerproof(verify);
  EXPECT_EQ(bad.exit_code, 1) << bad.out << bad.err;
  EXPECT_NE(bad.out.find("Commitment.output_digest"), std::string::npos)
      << bad.out;

  // A wrong log key: the inclusion is not in the log the client trusts.
  const CommandResult wrong_log = Generate(
      p, {"--log-key", cluster_.root() + "/prover-1.pub"});
  EXPECT_EQ(wrong_log.exit_code, 1) << wrong_log.out << wrong_log.err;
  EXPECT_NE(wrong_log.out.find("checkpoint"), std::string::npos)
      << wrong_log.out;
}

TEST_F(ClientCommands, AWrongProverKeyOrMalformedFlagsAreRefused) {
  RunningProver& p = Prover();
  RunningProver& other = Prover({.prover_id = "prover-2"});
  const CommandResult r = Generate(
      p, {"--prover-key", cluster_.root() + "/" + other.prover_id + ".pub"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("commitment_envelope"), std::string::npos) << r.out;
  // Usage errors name the flag and exit 2.
  EXPECT_EQ(Generate(p, {"--prompt", "both"}).exit_code, 2);
  const CommandResult digest = Generate(p, {"--model-digest", "zz"});
  EXPECT_EQ(digest.exit_code, 2);
  EXPECT_NE(digest.err.find("--model-digest"), std::string::npos);
  // Plaintext only on loopback.
  std::vector<std::string> remote = {"generate", "--prover", "10.1.2.3:443",
                                     "--insecure", "--tokens", "1"};
  for (const std::string& a : Trust(p)) remote.push_back(a);
  const CommandResult refused = RunLayerproof(remote);
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_NE(refused.err.find("loopback"), std::string::npos) << refused.err;
}

TEST_F(ClientCommands, AnUnhonouredPromiseIsPendingThenBroken) {
  RunningProver& pending = Prover(
      {.faults = std::make_shared<SkipSubmissionFaults>(),
       .receipt_wait = absl::Milliseconds(50)});
  const CommandResult r = Generate(pending, {"--follow-seconds", "1"});
  EXPECT_EQ(r.exit_code, 4) << r.out << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["log"]["state"], "promised");

  RunningProver& broken = Prover(
      {.prover_id = "prover-2",
       .faults = std::make_shared<SkipSubmissionFaults>(),
       .receipt_wait = absl::Milliseconds(50),
       .promise_window = absl::Milliseconds(500)});
  const CommandResult b = Generate(broken, {"--follow-seconds", "30"});
  EXPECT_EQ(b.exit_code, 1) << b.out << b.err;
  const nlohmann::json j = nlohmann::json::parse(b.out);
  EXPECT_EQ(j["log"]["state"], "broken");
  EXPECT_NE(j["error"].get<std::string>().find("PresentPromise"),
            std::string::npos);
}

}  // namespace
}  // namespace layerproof::integration
