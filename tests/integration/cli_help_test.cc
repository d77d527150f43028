// The command line as a whole (README "Exit codes"): every subcommand
// answers --help on stdout with exit 0, bad usage exits 2 with a message
// on stderr, and the --json forms print one parseable JSON object.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/integration/run_command.h"

namespace layerproof::integration {
namespace {

TEST(CliHelp, EverySubcommandAnswersHelpOnStdout) {
  const std::vector<std::vector<std::string>> commands = {
      {"--help"},
      {"selftest", "--help"},
      {"model", "--help"},
      {"model", "synth", "--help"},
      {"model", "digest", "--help"},
      {"generate", "--help"},
      {"forward", "--help"},
      {"keygen", "--help"},
      {"log", "--help"},
      {"log", "verify-inclusion", "--help"},
      {"log", "verify-consistency", "--help"},
      {"log", "root", "--help"},
      {"log", "fsck", "--help"},
      {"serve", "--help"},
      {"serve", "prover", "--help"},
      {"serve", "verifier", "--help"},
      {"serve", "auditor", "--help"},
      {"health", "--help"},
      {"verify-receipt", "--help"},
      {"verify-bundle", "--help"},
      {"report", "--help"},
      {"demo", "--help"},
  };
  for (const auto& args : commands) {
    std::string line;
    for (const std::string& a : args) line += a + " ";
    const CommandResult r = RunLayerproof(args);
    EXPECT_EQ(r.exit_code, 0) << line << "\n" << r.err;
    EXPECT_NE(r.out.find("usage"), std::string::npos) << line << "\n" << r.out;
  }
}

TEST(CliHelp, BadUsageExitsTwoWithAMessage) {
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{{"no-such-command"},
                                             {"model", "synth", "--bogus"},
                                             {"keygen"},
                                             {"log", "root"},
                                             {"verify-bundle"},
                                             {"report"},
                                             {"demo", "--requests", "x"}}) {
    const CommandResult r = RunLayerproof(args);
    EXPECT_EQ(r.exit_code, 2) << args[0] << "\n" << r.err;
    EXPECT_FALSE(r.err.empty()) << args[0];
  }
}

TEST(CliHelp, JsonFormsParse) {
  const CommandResult selftest = RunLayerproof({"selftest", "--json"});
  ASSERT_EQ(selftest.exit_code, 0) << selftest.err;
  const auto json = nlohmann::json::parse(selftest.out, nullptr, false);
  ASSERT_FALSE(json.is_discarded()) << selftest.out;
  EXPECT_EQ(json.at("ok"), true);
  ASSERT_TRUE(json.at("backends").is_array());
  EXPECT_FALSE(json.at("backends").empty());
  for (const auto& b : json.at("backends")) EXPECT_EQ(b.at("identical"), true);
}

}  // namespace
}  // namespace layerproof::integration
