#include "store/internal/sequenced_log.h"

#include <algorithm>
#include <map>
#include <optional>
#include <utility>

#include "kernels/status.h"
#include "store/internal/str_cat.h"

namespace layerproof::store::internal {
namespace {

absl::Status WithContext(const absl::Status& s, absl::StatusCode code,
                         const std::string& context) {
  return absl::Status(code, Cat(context, ": ", std::string(s.message())));
}

std::string Hex(const Sha256Hash& h) { return HexEncode(h); }

constexpr absl::Duration kSignRetryDelay = absl::Milliseconds(100);

}  // namespace

absl::StatusOr<std::unique_ptr<SequencedLog>> SequencedLog::Create(
    std::unique_ptr<LogStorage> storage, LogOptions options) {
  if (options.origin.empty()) {
    return absl::InvalidArgumentError("LogOptions.origin: empty");
  }
  if (options.signer == nullptr) {
    return absl::InvalidArgumentError("LogOptions.signer: not set");
  }
  if (options.max_batch_size == 0) {
    return absl::InvalidArgumentError("LogOptions.max_batch_size: got 0");
  }
  if (options.checkpoint_interval_ms < 0) {
    return absl::InvalidArgumentError(
        Cat("LogOptions.checkpoint_interval_ms: got ",
            options.checkpoint_interval_ms, ", want >= 0"));
  }
  std::unique_ptr<SequencedLog> log(
      new SequencedLog(std::move(storage), std::move(options)));
  LP_RETURN_IF_ERROR(log->Recover());
  log->sequencer_ = std::thread([raw = log.get()] { raw->Run(); });
  return log;
}

SequencedLog::SequencedLog(std::unique_ptr<LogStorage> storage,
                           LogOptions options)
    : options_(std::move(options)),
      verifier_(options_.signer->name(), options_.signer->public_key()),
      storage_(std::move(storage)) {}

SequencedLog::~SequencedLog() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  if (sequencer_.joinable()) sequencer_.join();
}

absl::Status SequencedLog::Recover() {
  LP_ASSIGN_OR_RETURN(const uint64_t size, storage_->StoredSize());
  absl::StatusOr<MerkleTreeBuilder> builder =
      MerkleTreeBuilder::Resume(*storage_, size);
  if (!builder.ok()) {
    return WithContext(builder.status(), absl::StatusCode::kDataLoss,
                       Cat("log recovery: the Merkle edge of size ", size));
  }
  builder_ = *std::move(builder);
  size_.store(size);

  LP_ASSIGN_OR_RETURN(std::optional<std::string> note,
                      storage_->StoredCheckpoint());
  signed_size_ = 0;
  signed_root_ = EmptyRoot();
  if (note.has_value()) {
    absl::StatusOr<Checkpoint> cp = verifier_.Verify(*note, options_.origin);
    if (!cp.ok()) {
      return WithContext(cp.status(), absl::StatusCode::kDataLoss,
                         "log recovery: the stored checkpoint");
    }
    if (cp->size > size) {
      return absl::DataLossError(
          Cat("log recovery: the stored checkpoint has size ", cp->size,
              " but the log holds ", size, " leaves"));
    }
    absl::StatusOr<Sha256Hash> root = RootAt(*storage_, cp->size);
    if (!root.ok()) {
      return WithContext(root.status(), absl::StatusCode::kDataLoss,
                         Cat("log recovery: the root at size ", cp->size));
    }
    if (*root != cp->root) {
      return absl::DataLossError(
          Cat("log recovery: the stored tree's root at size ", cp->size, " is ",
              Hex(*root), " but the signed checkpoint says ", Hex(cp->root)));
    }
    signed_size_ = cp->size;
    signed_root_ = cp->root;
    absl::MutexLock lock(&mu_);
    latest_note_ = *note;
  }
  if (!note.has_value() || builder_.size() > signed_size_) {
    LP_RETURN_IF_ERROR(SignCheckpoint());
  }
  return absl::OkStatus();
}

absl::Status SequencedLog::SignCheckpoint() {
  const uint64_t size = builder_.size();
  const Sha256Hash root = builder_.Root();
  if (size < signed_size_) {
    return absl::InternalError(Cat("refusing to sign a checkpoint of size ",
                                   size, ": smaller than the signed size ",
                                   signed_size_));
  }
  absl::StatusOr<std::vector<Sha256Hash>> proof =
      store::ConsistencyProof(*storage_, signed_size_, size);
  absl::Status consistent =
      proof.ok()
          ? VerifyConsistency(signed_size_, size, signed_root_, root, *proof)
          : proof.status();
  if (!consistent.ok()) {
    return WithContext(
        consistent, absl::StatusCode::kInternal,
        Cat("refusing to sign a checkpoint of size ", size,
            ": not consistent with the signed checkpoint of size ",
            signed_size_));
  }
  Checkpoint c;
  c.origin = options_.origin;
  c.size = size;
  c.root = root;
  absl::StatusOr<std::string> note = options_.signer->Sign(c);
  if (!note.ok()) {
    return WithContext(note.status(), absl::StatusCode::kInternal,
                       "signing a checkpoint");
  }
  LP_RETURN_IF_ERROR(storage_->WriteCheckpoint(*note));
  // The leaves it covers are durable now (see IntegrateBatch); readers see
  // them no later than the checkpoint.
  if (size_.load() < size) size_.store(size);
  signed_size_ = size;
  signed_root_ = root;
  last_signed_ = absl::Now();
  absl::MutexLock lock(&mu_);
  latest_note_ = *std::move(note);
  return absl::OkStatus();
}

absl::Time SequencedLog::NextCheckpointTime() const {
  return std::max(
      last_signed_ + absl::Milliseconds(options_.checkpoint_interval_ms),
      retry_after_);
}

bool SequencedLog::CheckpointDue() const {
  return builder_.size() > signed_size_ && absl::Now() >= NextCheckpointTime();
}

absl::Status SequencedLog::TrySignCheckpoint() {
  absl::Status s = SignCheckpoint();
  if (s.ok()) return s;
  if (s.code() == absl::StatusCode::kInternal) {
    absl::MutexLock lock(&mu_);
    refusal_ = s;
  } else {
    retry_after_ = absl::Now() + kSignRetryDelay;
  }
  return s;
}

void SequencedLog::Run() {
  for (;;) {
    std::vector<std::shared_ptr<Pending>> batch;
    bool stop = false;
    {
      absl::MutexLock lock(&mu_);
      const absl::Condition has_work(this, &SequencedLog::HasWork);
      if (builder_.size() > signed_size_ && refusal_.ok()) {
        // A checkpoint is owed: wake when it is due, if nothing comes first.
        mu_.AwaitWithDeadline(has_work, NextCheckpointTime());
      } else {
        mu_.Await(has_work);
      }
      while (!queue_.empty() && batch.size() < options_.max_batch_size) {
        batch.push_back(std::move(queue_.front()));
        queue_.pop_front();
      }
      stop = stopping_ && queue_.empty();
    }
    if (!batch.empty()) {
      IntegrateBatch(batch);
    } else if (CheckpointDue() || (stop && builder_.size() > signed_size_)) {
      // Nobody waits for this checkpoint; a failure is recorded (refusal)
      // or retried later.
      TrySignCheckpoint().IgnoreError();
    }
    if (stop && batch.empty()) return;
  }
}

void SequencedLog::IntegrateBatch(
    const std::vector<std::shared_ptr<Pending>>& batch) {
  absl::Status refusal;
  {
    absl::MutexLock lock(&mu_);
    refusal = refusal_;
  }
  if (!refusal.ok()) {
    for (const auto& p : batch) p->done.set_value(refusal);
    return;
  }
  const MerkleTreeBuilder before = builder_;
  LogBatch write;
  write.first_index = builder_.size();
  std::vector<absl::StatusOr<AppendResult>> results;
  results.reserve(batch.size());
  std::map<Sha256Hash, uint64_t> in_batch;
  for (const auto& p : batch) {
    if (auto it = in_batch.find(p->leaf_hash); it != in_batch.end()) {
      results.push_back(AppendResult{it->second, true});
      continue;
    }
    absl::StatusOr<std::optional<uint64_t>> found =
        storage_->FindLeafHash(p->leaf_hash);
    if (!found.ok()) {
      results.push_back(found.status());
      continue;
    }
    if (found->has_value()) {
      results.push_back(AppendResult{**found, true});
      continue;
    }
    const uint64_t index = builder_.size();
    for (const PerfectNode& n : builder_.Append(p->leaf_hash)) {
      write.nodes.push_back(n);
    }
    write.leaves.push_back(std::move(p->data));
    write.leaf_hashes.push_back(p->leaf_hash);
    in_batch.emplace(p->leaf_hash, index);
    results.push_back(AppendResult{index, false});
  }
  // An error for every append whose leaf is in this batch.
  auto fail_new = [&](const absl::Status& s) {
    for (auto& r : results) {
      if (r.ok() && r->index >= write.first_index) r = s;
    }
  };
  // With a checkpoint after every batch (interval 0), an append returns
  // only once a signed checkpoint covers its leaf, so that its caller can
  // prove it. A duplicate of a leaf whose own batch's checkpoint failed (a
  // full disk) is not covered yet: it is owed a checkpoint now, rather than
  // after the retry delay, and gets the error if that fails too.
  const uint64_t covered = signed_size_;
  bool owed = false;
  for (const auto& r : results) {
    owed |= options_.checkpoint_interval_ms == 0 && r.ok() && r->duplicate &&
            r->index >= covered;
  }
  // When a checkpoint is due after this batch, the batch is written without
  // its own fsync: the checkpoint's synced write makes both durable at once
  // (LogBatch::sync), and readers see the new size only after it.
  const bool checkpoint_follows =
      !write.leaves.empty() && absl::Now() >= NextCheckpointTime();
  bool written = false;
  if (!write.leaves.empty()) {
    write.new_size = builder_.size();
    write.sync = !checkpoint_follows;
    absl::Status s = storage_->Write(write);
    if (!s.ok()) {
      builder_ = before;
      fail_new(s);
    } else {
      written = true;
      if (!checkpoint_follows) size_.store(write.new_size);
    }
  }
  if (CheckpointDue() || owed) {
    absl::Status s = TrySignCheckpoint();
    if (!s.ok()) {
      fail_new(s);
      for (auto& r : results) {
        if (r.ok() && r->index >= covered) r = s;
      }
    }
  }
  // Published even when the checkpoint failed: the leaves are in the store
  // (and durable once any later synced write passes), and their callers got
  // the checkpoint's error.
  if (written && checkpoint_follows) size_.store(write.new_size);
  for (size_t i = 0; i < batch.size(); ++i) {
    batch[i]->done.set_value(std::move(results[i]));
  }
}

absl::StatusOr<AppendResult> SequencedLog::Append(std::string leaf_data) {
  if (leaf_data.size() > options_.max_leaf_bytes) {
    return absl::InvalidArgumentError(
        Cat("leaf: got ", leaf_data.size(), " bytes, want <= ",
            options_.max_leaf_bytes, " (LogOptions.max_leaf_bytes)"));
  }
  auto pending = std::make_shared<Pending>();
  pending->leaf_hash = LeafHash(leaf_data);
  pending->data = std::move(leaf_data);
  std::future<absl::StatusOr<AppendResult>> done = pending->done.get_future();
  {
    absl::MutexLock lock(&mu_);
    if (!refusal_.ok()) return refusal_;
    if (stopping_) {
      return absl::FailedPreconditionError("the log is shutting down");
    }
    queue_.push_back(std::move(pending));
  }
  return done.get();
}

absl::Status SequencedLog::CheckSize(const char* what, uint64_t size) const {
  const uint64_t n = Size();
  if (size > n) {
    return absl::OutOfRangeError(
        Cat(what, ": size ", size, " exceeds the log's size ", n));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> SequencedLog::Entry(uint64_t index) const {
  const uint64_t n = Size();
  if (index >= n) {
    return absl::OutOfRangeError(Cat("Entry: index ", index,
                                     " is out of range for a log of ", n,
                                     " leaves"));
  }
  absl::StatusOr<std::string> leaf = storage_->Leaf(index);
  if (!leaf.ok() && absl::IsNotFound(leaf.status())) {
    return absl::DataLossError(
        Cat("Entry: leaf ", index, " is missing from the store"));
  }
  return leaf;
}

absl::StatusOr<uint64_t> SequencedLog::IndexOfLeafHash(
    const Sha256Hash& leaf_hash) const {
  LP_ASSIGN_OR_RETURN(std::optional<uint64_t> index,
                      storage_->FindLeafHash(leaf_hash));
  if (!index.has_value() || *index >= Size()) {
    return absl::NotFoundError(Cat("no leaf with hash ", Hex(leaf_hash)));
  }
  return *index;
}

absl::StatusOr<Sha256Hash> SequencedLog::Root(uint64_t size) const {
  LP_RETURN_IF_ERROR(CheckSize("Root", size));
  return RootAt(*storage_, size);
}

absl::StatusOr<std::vector<Sha256Hash>> SequencedLog::InclusionProof(
    uint64_t index, uint64_t size) const {
  LP_RETURN_IF_ERROR(CheckSize("InclusionProof", size));
  return store::InclusionProof(*storage_, index, size);
}

absl::StatusOr<std::vector<Sha256Hash>> SequencedLog::ConsistencyProof(
    uint64_t old_size, uint64_t new_size) const {
  LP_RETURN_IF_ERROR(CheckSize("ConsistencyProof", new_size));
  return store::ConsistencyProof(*storage_, old_size, new_size);
}

absl::StatusOr<std::string> SequencedLog::LatestCheckpoint() const {
  absl::MutexLock lock(&mu_);
  return latest_note_;
}

absl::Status SequencedLog::Fsck() const {
  // The checkpoint first: the size only grows, so it covers the checkpoint.
  LP_ASSIGN_OR_RETURN(const std::string note, LatestCheckpoint());
  return FsckStorage(*storage_, Size(), note, verifier_, options_.origin)
      .status();
}

absl::StatusOr<Sha256Hash> FsckStorage(const LogStorage& storage, uint64_t size,
                                       const std::string& note,
                                       const CheckpointVerifier& verifier,
                                       const std::string& origin) {
  absl::StatusOr<Checkpoint> cp = verifier.Verify(note, origin);
  if (!cp.ok()) {
    return WithContext(cp.status(), absl::StatusCode::kDataLoss,
                       "fsck: the latest checkpoint");
  }
  if (cp->size > size) {
    return absl::DataLossError(Cat("fsck: the latest checkpoint has size ",
                                   cp->size, " but the log holds ", size,
                                   " leaves"));
  }
  // Rebuilds the tree leaf by leaf and compares every perfect node the
  // rebuild completes with the stored one; the root at the checkpoint's
  // size is taken on the way.
  MerkleTreeBuilder rebuilt;
  std::optional<Sha256Hash> root_at_checkpoint;
  if (cp->size == 0) root_at_checkpoint = EmptyRoot();
  for (uint64_t i = 0; i < size; ++i) {
    absl::StatusOr<std::string> leaf = storage.Leaf(i);
    if (!leaf.ok()) {
      return WithContext(leaf.status(), absl::StatusCode::kDataLoss,
                         Cat("fsck: leaf ", i));
    }
    const Sha256Hash leaf_hash = LeafHash(*leaf);
    absl::StatusOr<std::optional<uint64_t>> indexed =
        storage.FindLeafHash(leaf_hash);
    if (!indexed.ok()) return indexed.status();
    if (!indexed->has_value() || **indexed != i) {
      return absl::DataLossError(Cat(
          "fsck: leaf ", i, " (hash ", Hex(leaf_hash), ") is indexed under ",
          indexed->has_value() ? std::to_string(**indexed)
                               : std::string("no index")));
    }
    for (const PerfectNode& n : rebuilt.Append(leaf_hash)) {
      absl::StatusOr<Sha256Hash> stored = storage.Node(n.level, n.index);
      if (!stored.ok()) {
        return WithContext(stored.status(), absl::StatusCode::kDataLoss,
                           Cat("fsck: node (", n.level, ", ", n.index, ")"));
      }
      if (*stored != n.hash) {
        return absl::DataLossError(Cat("fsck: node (", n.level, ", ", n.index,
                                       ") is stored as ", Hex(*stored),
                                       " but the leaves give ", Hex(n.hash)));
      }
    }
    if (rebuilt.size() == cp->size) root_at_checkpoint = rebuilt.Root();
  }
  absl::StatusOr<Sha256Hash> root = RootAt(storage, size);
  if (!root.ok()) {
    return WithContext(root.status(), absl::StatusCode::kDataLoss,
                       Cat("fsck: the root at size ", size));
  }
  if (*root != rebuilt.Root()) {
    return absl::DataLossError(Cat("fsck: the stored root at size ", size,
                                   " is ", Hex(*root), " but the leaves give ",
                                   Hex(rebuilt.Root())));
  }
  if (*root_at_checkpoint != cp->root) {
    return absl::DataLossError(
        Cat("fsck: the checkpoint of size ", cp->size, " has root ",
            Hex(cp->root), " but the leaves give ", Hex(*root_at_checkpoint)));
  }
  return *root;
}

}  // namespace layerproof::store::internal
