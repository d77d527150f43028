// MemoryLogStorage: a LogStorage (log_storage.h) in memory, behind one
// mutex: MemoryLog's backend. Its methods are virtual so tests can inject
// faults. Thread safety: every method is thread-safe.
#ifndef LAYERPROOF_STORE_INTERNAL_MEMORY_LOG_STORAGE_H_
#define LAYERPROOF_STORE_INTERNAL_MEMORY_LOG_STORAGE_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "store/internal/log_storage.h"
#include "store/internal/str_cat.h"

namespace layerproof::store::internal {

class MemoryLogStorage : public LogStorage {
 public:
  absl::Status Write(const LogBatch& batch) override {
    absl::MutexLock lock(&mu_);
    for (size_t i = 0; i < batch.leaves.size(); ++i) {
      leaves_.push_back(batch.leaves[i]);
      by_hash_.emplace(batch.leaf_hashes[i], batch.first_index + i);
    }
    for (const PerfectNode& n : batch.nodes) {
      if (levels_.size() <= static_cast<size_t>(n.level)) {
        levels_.resize(n.level + 1);
      }
      std::vector<Sha256Hash>& level = levels_[n.level];
      if (level.size() <= n.index) level.resize(n.index + 1);
      level[n.index] = n.hash;
    }
    size_ = batch.new_size;
    return absl::OkStatus();
  }

  absl::Status WriteCheckpoint(const std::string& note) override {
    absl::MutexLock lock(&mu_);
    checkpoint_ = note;
    return absl::OkStatus();
  }

  absl::StatusOr<uint64_t> StoredSize() const override {
    absl::MutexLock lock(&mu_);
    return size_;
  }

  absl::StatusOr<std::optional<std::string>> StoredCheckpoint() const override {
    absl::MutexLock lock(&mu_);
    return checkpoint_;
  }

  absl::StatusOr<std::string> Leaf(uint64_t index) const override {
    absl::MutexLock lock(&mu_);
    if (index >= leaves_.size()) {
      return absl::NotFoundError(Cat("leaf ", index, " is not stored"));
    }
    return leaves_[index];
  }

  absl::StatusOr<std::optional<uint64_t>> FindLeafHash(
      const Sha256Hash& leaf_hash) const override {
    absl::MutexLock lock(&mu_);
    auto it = by_hash_.find(leaf_hash);
    if (it == by_hash_.end()) return std::optional<uint64_t>();
    return std::optional<uint64_t>(it->second);
  }

  absl::StatusOr<Sha256Hash> Node(int level, uint64_t index) const override {
    absl::MutexLock lock(&mu_);
    if (level < 0 || static_cast<size_t>(level) >= levels_.size() ||
        index >= levels_[level].size()) {
      return absl::OutOfRangeError(
          Cat("node (", level, ", ", index, ") is not stored"));
    }
    return levels_[level][index];
  }

 private:
  mutable absl::Mutex mu_;
  std::vector<std::string> leaves_ ABSL_GUARDED_BY(mu_);
  std::map<Sha256Hash, uint64_t> by_hash_ ABSL_GUARDED_BY(mu_);
  std::vector<std::vector<Sha256Hash>> levels_ ABSL_GUARDED_BY(mu_);
  uint64_t size_ ABSL_GUARDED_BY(mu_) = 0;
  std::optional<std::string> checkpoint_ ABSL_GUARDED_BY(mu_);
};

}  // namespace layerproof::store::internal

#endif  // LAYERPROOF_STORE_INTERNAL_MEMORY_LOG_STORAGE_H_
