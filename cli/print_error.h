// The CLI's error lines: "PREFIX: MESSAGE\n" on stderr, with MESSAGE made
// Printable (kernels/printable.h). A message may quote bytes from a model
// file, a proto, a bundle or a server's reply; none of them reach the
// terminal raw. Every command prints its errors through here.
// Thread safety: one fprintf per line.
#ifndef LAYERPROOF_CLI_PRINT_ERROR_H_
#define LAYERPROOF_CLI_PRINT_ERROR_H_

#include <string_view>

namespace layerproof::cli {

// `prefix` is the program's own text ("layerproof", "layerproof log fsck").
void PrintError(std::string_view prefix, std::string_view message);

}  // namespace layerproof::cli

#endif  // LAYERPROOF_CLI_PRINT_ERROR_H_
