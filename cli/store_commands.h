// Subcommands over store/, prover/ and verifier/ (full build only): `keygen`,
// the offline `log` verification commands and `serve`. Each returns the exit
// code; the log commands exit 0 when a proof verifies, 1 when it does not and 2
// on malformed input.
#ifndef LAYERPROOF_CLI_STORE_COMMANDS_H_
#define LAYERPROOF_CLI_STORE_COMMANDS_H_

#include <string>
#include <vector>

namespace layerproof::cli {

int RunKeygen(const std::vector<std::string>& args);      // cli/keygen.cc
int RunLogCommand(const std::vector<std::string>& args);  // cli/log_commands.cc
int RunServe(const std::vector<std::string>& args);  // cli/serve_commands.cc
// Offline re-verification of an evidence bundle: exit 0 verified, 1 a check
// failed, 2 malformed input, 3 authentic but not re-derivable offline
// (docs/formats.md).
int RunVerifyBundle(const std::vector<std::string>& args);  // verify_bundle.cc
int RunReport(const std::vector<std::string>& args);  // cli/report_command.cc
int RunDemo(const std::vector<std::string>& args);    // cli/demo.cc (demo/)
// A checked Generate against a remote prover, and the same check on a
// saved receipt: exit 0 verified, 1 a check failed, 2 usage or bad input,
// 3 the call failed, 4 a promise still pending (cli/client_commands.cc).
int RunRemoteGenerate(const std::vector<std::string>& args);
int RunVerifyReceipt(const std::vector<std::string>& args);
// `layerproof health ADDR`: a node's gRPC health (health_command.cc).
int RunHealth(const std::vector<std::string>& args);

}  // namespace layerproof::cli

#endif  // LAYERPROOF_CLI_STORE_COMMANDS_H_
