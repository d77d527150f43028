// Whole-file reads and writes for the subcommands that take input files and
// write one output file (`layerproof verify-bundle`, `layerproof report`).
// Errors are Status values whose messages name the path; callers add the
// flag. Thread safety: free functions; concurrent writes to one path race.
#ifndef LAYERPROOF_CLI_FILE_IO_H_
#define LAYERPROOF_CLI_FILE_IO_H_

#include <cstddef>
#include <limits>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace layerproof::cli {

// The whole of the regular file at `path`, refusing one of more than
// `max_bytes` before reading it. InvalidArgument with "<path>: <why>" when
// it cannot be sized, opened or read in full, or is too large.
absl::StatusOr<std::string> ReadWholeFile(
    const std::string& path,
    size_t max_bytes = std::numeric_limits<size_t>::max());

// Replaces the file at `path` with `data`. PermissionDenied with
// "cannot write <path>" when it cannot be opened or written.
absl::Status WriteWholeFile(const std::string& path, std::string_view data);

}  // namespace layerproof::cli

#endif  // LAYERPROOF_CLI_FILE_IO_H_
