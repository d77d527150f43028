// Small-file I/O for the model loader: reading config.json, the shard index
// and the digest cache, identifying a file by size and mtime, and replacing
// a file atomically. POSIX only (Linux on x86-64 and aarch64).
// Thread safety: functions of the file system state; no shared memory.
#ifndef LAYERPROOF_KERNELS_MODEL_INTERNAL_FILE_IO_H_
#define LAYERPROOF_KERNELS_MODEL_INTERNAL_FILE_IO_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "kernels/status.h"

namespace layerproof::kernels::model::internal {

// Reads all of `path`. NotFound when it does not exist; InvalidArgument when
// it is not a regular file or is larger than `max_bytes`.
StatusOr<std::string> ReadSmallFile(const std::string& path,
                                    uint64_t max_bytes);

// What the digest cache keys a file by.
struct FileStamp {
  uint64_t size = 0;
  int64_t mtime_ns = 0;  // st_mtim, nanoseconds since the epoch
  bool operator==(const FileStamp&) const = default;
};
StatusOr<FileStamp> StatFile(const std::string& path);

// True when `path` names an existing regular file (following links).
bool IsRegularFile(const std::string& path);

// Writes `contents` to a temporary file beside `path` and renames it over
// `path`, so readers see the old or the new file, never a torn one.
Status WriteFileAtomically(const std::string& path, std::string_view contents);

// `dir` + "/" + `name`.
std::string JoinPath(const std::string& dir, std::string_view name);

}  // namespace layerproof::kernels::model::internal

#endif  // LAYERPROOF_KERNELS_MODEL_INTERNAL_FILE_IO_H_
