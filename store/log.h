// The transparency log: an append-only sequence of leaves (envelope bytes)
// under an RFC 6962 Merkle tree, with signed C2SP checkpoints (DESIGN §5).
//
// Contract, for every implementation (RocksDbLog, MemoryLog; one
// conformance suite runs against both):
//   - Append returns only once the leaf is durable (for RocksDB: its write
//     batch is synced) and, when a checkpoint is due, once a checkpoint
//     covering it is signed and stored. Indices are dense from 0.
//   - The same leaf data (same leaf hash) appended twice returns the
//     original index with duplicate = true; nothing is appended twice.
//   - A single sequencer assigns indices, so concurrent appends are group
//     committed: one write and at most one checkpoint per batch.
//   - The log never signs two inconsistent checkpoints: before signing, the
//     new tree is checked to extend the last signed one (a consistency
//     proof, verified); if it does not, nothing is signed, the appends get
//     Internal and the log refuses every later append.
//   - If the checkpoint due after a batch cannot be signed or stored, that
//     batch's appends get the error although their leaves are durable;
//     appending the same data again returns its index as a duplicate.
//   - Reads and proofs are served at any size <= Size(); a larger size is
//     OutOfRange naming both sizes.
//
// Checkpoint cadence (`checkpoint_interval_ms`): after each integrated
// batch a checkpoint is signed if at least the interval has passed since the
// last signing; otherwise the sequencer signs one when the interval
// expires, covering everything integrated by then. With the default 0, every
// batch is followed by its checkpoint before its callers return.
//
// Thread safety: every method may be called from any number of threads.
#ifndef LAYERPROOF_STORE_LOG_H_
#define LAYERPROOF_STORE_LOG_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "store/checkpoint.h"
#include "store/crypto.h"

namespace layerproof::store {

struct LogOptions {
  // The log's origin line, e.g. "layerproof.example/log". Non-empty.
  std::string origin;
  // Signs checkpoints; shared so callers can keep its public key. Required.
  std::shared_ptr<const CheckpointSigner> signer;
  // Larger leaves are refused (InvalidArgument naming the limit).
  size_t max_leaf_bytes = 1 << 20;
  // The most appends one group commit integrates.
  size_t max_batch_size = 256;
  // At most one checkpoint per interval (see the header comment); 0 signs
  // after every batch.
  int64_t checkpoint_interval_ms = 0;
};

struct AppendResult {
  uint64_t index = 0;
  bool duplicate = false;  // the leaf was already in the log at `index`

  friend bool operator==(const AppendResult&, const AppendResult&) = default;
};

class Log {
 public:
  virtual ~Log() = default;

  // Appends `leaf_data` and blocks until it is durable (see the contract).
  // InvalidArgument for a leaf over max_leaf_bytes (nothing is stored);
  // storage errors pass through; Internal once the log has refused to sign.
  virtual absl::StatusOr<AppendResult> Append(std::string leaf_data) = 0;

  // The number of durable leaves.
  virtual uint64_t Size() const = 0;
  // Leaf `index`'s bytes; OutOfRange when index >= Size().
  virtual absl::StatusOr<std::string> Entry(uint64_t index) const = 0;
  // The index of the leaf with `leaf_hash` (LeafHash of its data); NotFound
  // when the log holds no such leaf.
  virtual absl::StatusOr<uint64_t> IndexOfLeafHash(
      const Sha256Hash& leaf_hash) const = 0;

  // MTH of the first `size` leaves; OutOfRange when size > Size().
  virtual absl::StatusOr<Sha256Hash> Root(uint64_t size) const = 0;
  // RFC 9162 PATH(index, D[size]); OutOfRange when size > Size(),
  // InvalidArgument when index >= size.
  virtual absl::StatusOr<std::vector<Sha256Hash>> InclusionProof(
      uint64_t index, uint64_t size) const = 0;
  // RFC 9162 PROOF(old_size, D[new_size]); OutOfRange when new_size >
  // Size(), InvalidArgument when old_size > new_size.
  virtual absl::StatusOr<std::vector<Sha256Hash>> ConsistencyProof(
      uint64_t old_size, uint64_t new_size) const = 0;

  // The latest signed checkpoint note (C2SP signed note). A log always has
  // one: an empty log signs the empty tree when created.
  virtual absl::StatusOr<std::string> LatestCheckpoint() const = 0;

  // Re-derives the tree from every stored leaf and checks it against the
  // stored state: each leaf's hash index, every stored perfect node, the
  // root at Size(), and the last checkpoint (its signature, size <= Size(),
  // and root). OK, or the first problem found (DataLoss naming it). Reads
  // every leaf: O(Size()).
  virtual absl::Status Fsck() const = 0;
};

}  // namespace layerproof::store

#endif  // LAYERPROOF_STORE_LOG_H_
