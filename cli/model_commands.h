// Subcommands over the model runtime: `model synth`, `model digest`,
// `generate` and `forward`. Each returns the process exit code (0 ok,
// 1 failure, 2 usage error).
#ifndef LAYERPROOF_CLI_MODEL_COMMANDS_H_
#define LAYERPROOF_CLI_MODEL_COMMANDS_H_

#include <string>
#include <vector>

namespace layerproof::cli {

int RunModelCommand(const std::vector<std::string>& args);
int RunGenerate(const std::vector<std::string>& args);
int RunForward(const std::vector<std::string>& args);

}  // namespace layerproof::cli

#endif  // LAYERPROOF_CLI_MODEL_COMMANDS_H_
