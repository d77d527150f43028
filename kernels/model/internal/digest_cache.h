// The digest cache file `.layerproof-digest.json` (kernels/model/digest.h):
//
//   {"format": "layerproof.digest-cache.v1",
//    "spec": "layerproof.tensor.v1 layerproof.config.v1 rfc6962",
//    "files": [{"name": "config.json", "size": 612,
//               "mtime_ns": 1700000000123456789}, ...],
//    "config_hash": "<hex>", "root": "<hex>",
//    "tensors": {"<tensor name>": "<hex>", ...}}
//
// Hashes are lowercase hex SHA-256. The cache is a hint, never trusted for
// correctness by --verify: a file that is missing, malformed, of another
// format or spec, or keyed by other file stamps reads as no cache at all.
// Thread safety: functions of the file system state.
#ifndef LAYERPROOF_KERNELS_MODEL_INTERNAL_DIGEST_CACHE_H_
#define LAYERPROOF_KERNELS_MODEL_INTERNAL_DIGEST_CACHE_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "kernels/model/digest.h"
#include "kernels/model/internal/file_io.h"
#include "kernels/status.h"

namespace layerproof::kernels::model::internal {

// A file the cache is keyed by, named relative to the model directory.
struct CachedFile {
  std::string name;
  FileStamp stamp;
  bool operator==(const CachedFile&) const = default;
};

struct CachedDigest {
  Sha256Digest config_hash{};
  Sha256Digest root{};
  std::map<std::string, Sha256Digest> tensor_hashes;
};

// The cache at `path` when it is well-formed and keyed by exactly `files`
// (same names, order, sizes and mtimes); nullopt otherwise.
std::optional<CachedDigest> ReadDigestCache(
    const std::string& path, const std::vector<CachedFile>& files);

// True when `cached` can stand in for hashing: its config hash is
// `config_hash`, it has a hash for exactly the tensors in `tensors`, and its
// root is the root of its own hashes.
bool CacheIsConsistent(const CachedDigest& cached,
                       const Sha256Digest& config_hash,
                       const std::map<std::string, TensorView>& tensors);

// Writes the cache atomically (temp file + rename).
Status WriteDigestCache(const std::string& path,
                        const std::vector<CachedFile>& files,
                        const ModelDigest& digest);

}  // namespace layerproof::kernels::model::internal

#endif  // LAYERPROOF_KERNELS_MODEL_INTERNAL_DIGEST_CACHE_H_
