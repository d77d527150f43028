// The layerproof command: a thin dispatcher to subcommands; all logic lives
// in the libraries.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "cli/model_commands.h"
#include "cli/selftest.h"
#if defined(LAYERPROOF_WITH_STORE)
#include "cli/store_commands.h"
#endif

namespace {

constexpr char kUsage[] =
    "usage: layerproof <command> [args]\n"
    "commands:\n"
    "  selftest   check every kernel backend on this machine against the\n"
    "             golden vectors (exit 0: this hardware can serve or verify)\n"
    "  model      synth: write a synthetic model; digest: print a model's "
    "digest\n"
    "  generate   generate text from a prompt (a local model, or with\n"
    "             --prover a remote prover, checking its receipt)\n"
    "  forward    per-layer hashes and logits of a token sequence (JSON)\n"
#if defined(LAYERPROOF_WITH_STORE)
    "  keygen     write an Ed25519 key pair (PREFIX.key, PREFIX.pub)\n"
    "  log        verify-inclusion, verify-consistency, root: offline proof\n"
    "             checks (exit 0 verified, 1 not verified, 2 bad input)\n"
    "  serve      prover | verifier | auditor: run a node (docs/protocol.md)\n"
    "  health     is a node's gRPC server serving (readiness probes)\n"
    "  verify-bundle  re-check an evidence bundle offline on this hardware\n"
    "  verify-receipt check a receipt saved by `generate --prover --save`,\n"
    "             or an OpenAI API response body with its receipt\n"
    "  report     fetch a signed compliance report (JSON or HTML)\n"
    "  demo       a verifier and two provers on loopback under load, one\n"
    "             of them cheating; writes a report and checks a bundle\n"
#endif
    ;

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fputs(kUsage, stderr);
    return 2;
  }
  const std::string command = argv[1];
  const std::vector<std::string> args(argv + 2, argv + argc);
  if (command == "selftest") return layerproof::cli::RunSelftest(args);
  if (command == "model") return layerproof::cli::RunModelCommand(args);
#if defined(LAYERPROOF_WITH_STORE)
  // With --prover, generate is a client of a remote prover (and checks
  // the receipt); without it, it runs a local model.
  if (command == "generate" &&
      std::find(args.begin(), args.end(), "--prover") != args.end()) {
    return layerproof::cli::RunRemoteGenerate(args);
  }
#endif
  if (command == "generate") return layerproof::cli::RunGenerate(args);
  if (command == "forward") return layerproof::cli::RunForward(args);
#if defined(LAYERPROOF_WITH_STORE)
  if (command == "keygen") return layerproof::cli::RunKeygen(args);
  if (command == "log") return layerproof::cli::RunLogCommand(args);
  if (command == "serve") return layerproof::cli::RunServe(args);
  if (command == "verify-bundle") return layerproof::cli::RunVerifyBundle(args);
  if (command == "report") return layerproof::cli::RunReport(args);
  if (command == "demo") return layerproof::cli::RunDemo(args);
  if (command == "health") return layerproof::cli::RunHealth(args);
  if (command == "verify-receipt") {
    return layerproof::cli::RunVerifyReceipt(args);
  }
#endif
  if (command == "--help" || command == "help") {
    std::fputs(kUsage, stdout);
    return 0;
  }
  std::fprintf(stderr, "layerproof: unknown command \"%s\"\n%s",
               command.c_str(), kUsage);
  return 2;
}
