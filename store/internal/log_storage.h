// LogStorage: what the sequencer (sequenced_log.h) needs from a backend.
// A backend stores leaves, the leaf-hash index, every perfect Merkle node,
// the size and the last signed checkpoint note; it makes no decisions.
//
// Contract: Write is atomic (all of a batch or none of it) and durable when
// it returns OK; WriteCheckpoint likewise. Thread safety: reads may run
// concurrently with each other and with one writer (the sequencer).
#ifndef LAYERPROOF_STORE_INTERNAL_LOG_STORAGE_H_
#define LAYERPROOF_STORE_INTERNAL_LOG_STORAGE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "store/crypto.h"
#include "store/merkle.h"

namespace layerproof::store::internal {

// One group commit: leaves [first_index, first_index + leaves.size()), their
// hashes, the perfect nodes they complete, and the size after them.
struct LogBatch {
  uint64_t first_index = 0;
  std::vector<std::string> leaves;
  std::vector<Sha256Hash> leaf_hashes;
  std::vector<PerfectNode> nodes;
  uint64_t new_size = 0;
  // False when the caller writes a synced checkpoint right after: the WAL
  // is sequential and a synced write makes every earlier record durable, so
  // one fsync covers the batch and its checkpoint. Nothing is acknowledged
  // before that fsync.
  bool sync = true;
};

class LogStorage : public TreeReader {
 public:
  // Durable and atomic on OK.
  virtual absl::Status Write(const LogBatch& batch) = 0;
  // Replaces the stored checkpoint note; durable on OK.
  virtual absl::Status WriteCheckpoint(const std::string& note) = 0;

  // The stored size (0 for a new store).
  virtual absl::StatusOr<uint64_t> StoredSize() const = 0;
  // The stored note, or nullopt when none was ever written.
  virtual absl::StatusOr<std::optional<std::string>> StoredCheckpoint()
      const = 0;
  // Leaf `index`; NotFound when absent (callers check the size first).
  virtual absl::StatusOr<std::string> Leaf(uint64_t index) const = 0;
  // The stored index of a leaf hash, or nullopt.
  virtual absl::StatusOr<std::optional<uint64_t>> FindLeafHash(
      const Sha256Hash& leaf_hash) const = 0;
};

}  // namespace layerproof::store::internal

#endif  // LAYERPROOF_STORE_INTERNAL_LOG_STORAGE_H_
