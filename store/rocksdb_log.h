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
// node. Fsck(dir, ...) runs the same checks on a directory opened read-only,
// with only the public key. RocksDB's lock file keeps a second process from
// opening the same directory, so each log has a single sequencer.
//
// Thread safety: as Log, every method is thread-safe.
#ifndef LAYERPROOF_STORE_ROCKSDB_LOG_H_
#define LAYERPROOF_STORE_ROCKSDB_LOG_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "store/checkpoint.h"
#include "store/crypto.h"
#include "store/log.h"

namespace rocksdb {
class Env;
}  // namespace rocksdb

namespace layerproof::store {

// What a read-only fsck found in a consistent log.
struct LogFsckReport {
  uint64_t size = 0;             // the stored leaves
  Sha256Hash root{};             // their root, re-derived from the leaves
  uint64_t checkpoint_size = 0;  // the last signed checkpoint's (<= size)
};

class RocksDbLog {
 public:
  // Opens (creating if missing) the log in directory `dir` and recovers it.
  // Errors name the directory; corrupt state is DataLoss. `env`: the disk
  // (store/rocksdb_database.h); nullptr for the default.
  static absl::StatusOr<std::unique_ptr<Log>> Open(const std::string& dir,
                                                   LogOptions options,
                                                   rocksdb::Env* env = nullptr);

  // Log::Fsck on the log in `dir`, opened read-only: writes nothing, takes
  // no lock and needs no private key; the last checkpoint must verify under
  // `verifier` with origin `origin`. It sees the log as it was when opened,
  // including a checkpoint that lags the tree after a crash (Open signs the
  // missing one). An empty log without a checkpoint (a creation cut short)
  // is consistent. Errors opening `dir` keep their code and name it; every
  // inconsistency is DataLoss naming the first one found. O(size).
  static absl::StatusOr<LogFsckReport> Fsck(const std::string& dir,
                                            const std::string& origin,
                                            const CheckpointVerifier& verifier,
                                            rocksdb::Env* env = nullptr);
};

}  // namespace layerproof::store

#endif  // LAYERPROOF_STORE_ROCKSDB_LOG_H_
