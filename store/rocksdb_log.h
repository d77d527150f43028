// RocksDbLog: the Log contract (store/log.h) on RocksDB (DESIGN §5).
//
// Column families (encodings in store/internal/log_keys.h):
//   leaves   u64 index (big-endian) -> leaf bytes
//   by_hash  leaf hash              -> u64 index
//   nodes    u8 level || u64 index  -> 32-byte hash of every perfect subtree
//   meta     "size", "checkpoint" (the last signed note)
// Each group commit is one WriteBatch (leaves, by_hash, nodes and the new
// size) written with sync = true; the checkpoint signed after it is a
// second synced write. A crash between the two leaves a tree larger than its
// checkpoint; Open then signs the missing checkpoint after checking it
// extends the stored one.
//
// Recovery (Open): reads the size, resumes the Merkle edge from the stored
// nodes, and checks the stored checkpoint (its signature under the
// options' signer, size <= the tree's, root == the tree's root at that
// size); any mismatch is DataLoss naming it. Fsck() checks every leaf and
// node. RocksDB's lock file keeps a second process from opening the same
// directory, so each log has a single sequencer.
//
// Thread safety: as Log, every method is thread-safe.
#ifndef LAYERPROOF_STORE_ROCKSDB_LOG_H_
#define LAYERPROOF_STORE_ROCKSDB_LOG_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "store/log.h"

namespace layerproof::store {

class RocksDbLog {
 public:
  // Opens (creating if missing) the log in directory `dir` and recovers it.
  // Errors name the directory; corrupt state is DataLoss.
  static absl::StatusOr<std::unique_ptr<Log>> Open(const std::string& dir,
                                                   LogOptions options);
};

}  // namespace layerproof::store

#endif  // LAYERPROOF_STORE_ROCKSDB_LOG_H_
