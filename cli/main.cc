// The layerproof command: a thin dispatcher to subcommands; all logic lives
// in the libraries.
#include <cstdio>
#include <string>
#include <vector>

#include "cli/model_commands.h"
#include "cli/selftest.h"

namespace {

constexpr char kUsage[] =
    "usage: layerproof <command> [args]\n"
    "commands:\n"
    "  selftest   check every kernel backend on this machine against the\n"
    "             golden vectors (exit 0: this hardware can serve or verify)\n"
    "  model      synth: write a synthetic model; digest: print a model's "
    "digest\n"
    "  generate   generate text from a prompt\n"
    "  forward    per-layer hashes and logits of a token sequence (JSON)\n";

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
  if (command == "generate") return layerproof::cli::RunGenerate(args);
  if (command == "forward") return layerproof::cli::RunForward(args);
  if (command == "--help" || command == "help") {
    std::fputs(kUsage, stdout);
    return 0;
  }
  std::fprintf(stderr, "layerproof: unknown command \"%s\"\n%s",
               command.c_str(), kUsage);
  return 2;
}
