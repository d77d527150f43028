// SequencedLog: the Log contract (store/log.h) over any LogStorage. One
// sequencer thread drains the queue of pending appends, deduplicates them
// (against the store and within the batch), assigns indices, writes one
// atomic durable batch (leaves, hash index, nodes, size), then signs and
// stores a checkpoint after checking it extends the last signed one, and
// only then completes the callers. RocksDbLog and MemoryLog are this class
// over their storage.
//
// Thread safety: every public method is thread-safe. The Merkle builder and
// the last checkpoint's size and root belong to the sequencer thread.
#ifndef LAYERPROOF_STORE_INTERNAL_SEQUENCED_LOG_H_
#define LAYERPROOF_STORE_INTERNAL_SEQUENCED_LOG_H_

#include <atomic>
#include <cstdint>
#include <deque>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "store/checkpoint.h"
#include "store/internal/log_storage.h"
#include "store/log.h"
#include "store/merkle.h"

namespace layerproof::store::internal {

// The checks of Log::Fsck over `storage`'s first `size` leaves against the
// signed checkpoint `note` (verified by `verifier`, its origin `origin`):
// the note's signature, its size <= `size` and its root, each leaf's hash
// index, every perfect node and the root at `size`. Reads only; returns the
// root of the first `size` leaves, or the first problem (DataLoss naming
// it). Reads every leaf: O(size).
absl::StatusOr<Sha256Hash> FsckStorage(const LogStorage& storage, uint64_t size,
                                       const std::string& note,
                                       const CheckpointVerifier& verifier,
                                       const std::string& origin);

class SequencedLog : public Log {
 public:
  // Validates `options`, recovers the state from `storage` (its size, the
  // Merkle edge, the stored checkpoint: DataLoss when the checkpoint is
  // larger than the tree, has another root, or does not verify under the
  // signer's key), signs a checkpoint of the current tree if the stored one
  // does not cover it, and starts the sequencer.
  static absl::StatusOr<std::unique_ptr<SequencedLog>> Create(
      std::unique_ptr<LogStorage> storage, LogOptions options);

  // Drains the queued appends, then stops the sequencer.
  ~SequencedLog() override;
  SequencedLog(const SequencedLog&) = delete;
  SequencedLog& operator=(const SequencedLog&) = delete;

  absl::StatusOr<AppendResult> Append(std::string leaf_data) override;
  uint64_t Size() const override { return size_.load(); }
  absl::StatusOr<std::string> Entry(uint64_t index) const override;
  absl::StatusOr<uint64_t> IndexOfLeafHash(
      const Sha256Hash& leaf_hash) const override;
  absl::StatusOr<Sha256Hash> Root(uint64_t size) const override;
  absl::StatusOr<std::vector<Sha256Hash>> InclusionProof(
      uint64_t index, uint64_t size) const override;
  absl::StatusOr<std::vector<Sha256Hash>> ConsistencyProof(
      uint64_t old_size, uint64_t new_size) const override;
  absl::StatusOr<std::string> LatestCheckpoint() const override;
  absl::Status Fsck() const override;

 private:
  struct Pending {
    std::string data;
    Sha256Hash leaf_hash{};
    std::promise<absl::StatusOr<AppendResult>> done;
  };

  SequencedLog(std::unique_ptr<LogStorage> storage, LogOptions options);
  absl::Status Recover();
  bool HasWork() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return stopping_ || !queue_.empty();
  }
  void Run();
  // Integrates one batch (sequencer thread) and completes its callers.
  void IntegrateBatch(const std::vector<std::shared_ptr<Pending>>& batch);
  bool CheckpointDue() const;
  absl::Time NextCheckpointTime() const;
  // SignCheckpoint, recording a refusal (Internal) or backing off after a
  // storage error.
  absl::Status TrySignCheckpoint();
  // Signs and stores a checkpoint of the builder's tree after checking it
  // extends the last signed one.
  absl::Status SignCheckpoint();
  absl::Status CheckSize(const char* what, uint64_t size) const;

  const LogOptions options_;
  const CheckpointVerifier verifier_;
  std::unique_ptr<LogStorage> storage_;
  std::atomic<uint64_t> size_{0};

  // The sequencer's own state.
  MerkleTreeBuilder builder_;
  uint64_t signed_size_ = 0;
  Sha256Hash signed_root_{};
  absl::Time last_signed_ = absl::InfinitePast();
  // After a signing attempt failed on a storage error, the next waits until
  // then (no busy retry).
  absl::Time retry_after_ = absl::InfinitePast();

  mutable absl::Mutex mu_;
  std::deque<std::shared_ptr<Pending>> queue_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::string latest_note_ ABSL_GUARDED_BY(mu_);
  // Set when the sequencer refused to sign; every later append fails.
  absl::Status refusal_ ABSL_GUARDED_BY(mu_);

  std::thread sequencer_;
};

}  // namespace layerproof::store::internal

#endif  // LAYERPROOF_STORE_INTERNAL_SEQUENCED_LOG_H_
