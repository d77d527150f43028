// `layerproof selftest`: runs every backend this machine has over the golden
// inputs and compares against the golden hashes compiled into the binary.
// A user runs it to learn whether their hardware can serve or verify.
#ifndef LAYERPROOF_CLI_SELFTEST_H_
#define LAYERPROOF_CLI_SELFTEST_H_

#include <string>
#include <vector>

namespace layerproof::cli {

// Returns the process exit code: 0 when every backend matches every golden
// hash, 1 on any difference, 2 on a usage error.
int RunSelftest(const std::vector<std::string>& args);

}  // namespace layerproof::cli

#endif  // LAYERPROOF_CLI_SELFTEST_H_
