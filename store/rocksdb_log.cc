#include "store/rocksdb_log.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "kernels/status.h"
#include "rocksdb/db.h"
#include "rocksdb/options.h"
#include "rocksdb/write_batch.h"
#include "store/internal/log_keys.h"
#include "store/internal/log_storage.h"
#include "store/internal/sequenced_log.h"
#include "store/internal/str_cat.h"
#include "store/rocksdb_database.h"

namespace layerproof::store {
namespace {

using internal::Cat;

class RocksDbStorage final : public internal::LogStorage {
 public:
  // Read-only: no lock, no writes (Write and WriteCheckpoint then fail),
  // and the directory must hold a log already.
  static absl::StatusOr<std::unique_ptr<RocksDbStorage>> Open(
      const std::string& dir, bool read_only, rocksdb::Env* env) {
    LP_ASSIGN_OR_RETURN(
        std::unique_ptr<RocksDatabase> db,
        RocksDatabase::Open(dir,
                            {internal::kLeavesFamily, internal::kByHashFamily,
                             internal::kNodesFamily, internal::kMetaFamily},
                            read_only ? RocksDatabase::Mode::kReadOnly
                                      : RocksDatabase::Mode::kReadWrite,
                            "log", env));
    return std::unique_ptr<RocksDbStorage>(new RocksDbStorage(std::move(db)));
  }

  absl::Status Write(const internal::LogBatch& batch) override {
    rocksdb::WriteBatch wb;
    for (size_t i = 0; i < batch.leaves.size(); ++i) {
      const std::string index = internal::EncodeU64(batch.first_index + i);
      LP_RETURN_IF_ERROR(FromRocks(
          wb.Put(leaves_, ToSlice(index), ToSlice(batch.leaves[i])), "put"));
      LP_RETURN_IF_ERROR(FromRocks(
          wb.Put(by_hash_, ToSlice(internal::HashBytes(batch.leaf_hashes[i])),
                 ToSlice(index)),
          "put"));
    }
    for (const PerfectNode& n : batch.nodes) {
      LP_RETURN_IF_ERROR(
          FromRocks(wb.Put(nodes_, ToSlice(internal::NodeKey(n.level, n.index)),
                           ToSlice(internal::HashBytes(n.hash))),
                    "put"));
    }
    LP_RETURN_IF_ERROR(
        FromRocks(wb.Put(meta_, internal::kSizeKey,
                         ToSlice(internal::EncodeU64(batch.new_size))),
                  "put"));
    return db_->Write(&wb, Cat("write of leaves from ", batch.first_index),
                      batch.sync);
  }

  absl::Status WriteCheckpoint(const std::string& note) override {
    rocksdb::WriteBatch wb;
    LP_RETURN_IF_ERROR(FromRocks(
        wb.Put(meta_, internal::kCheckpointKey, ToSlice(note)), "put"));
    return db_->Write(&wb, "write checkpoint");
  }

  absl::StatusOr<uint64_t> StoredSize() const override {
    LP_ASSIGN_OR_RETURN(std::optional<std::string> v,
                        Get(meta_, internal::kSizeKey, "meta size"));
    if (!v.has_value()) return 0;
    return internal::DecodeU64(*v, "meta size");
  }

  absl::StatusOr<std::optional<std::string>> StoredCheckpoint() const override {
    return Get(meta_, internal::kCheckpointKey, "meta checkpoint");
  }

  absl::StatusOr<std::string> Leaf(uint64_t index) const override {
    LP_ASSIGN_OR_RETURN(
        std::optional<std::string> v,
        Get(leaves_, internal::EncodeU64(index), Cat("leaf ", index)));
    if (!v.has_value()) {
      return absl::NotFoundError(Cat("leaf ", index, " is not stored"));
    }
    return *std::move(v);
  }

  absl::StatusOr<std::optional<uint64_t>> FindLeafHash(
      const Sha256Hash& leaf_hash) const override {
    LP_ASSIGN_OR_RETURN(
        std::optional<std::string> v,
        Get(by_hash_, internal::HashBytes(leaf_hash), "by_hash entry"));
    if (!v.has_value()) return std::optional<uint64_t>();
    LP_ASSIGN_OR_RETURN(uint64_t index,
                        internal::DecodeU64(*v, "by_hash entry"));
    return std::optional<uint64_t>(index);
  }

  absl::StatusOr<Sha256Hash> Node(int level, uint64_t index) const override {
    if (level < 0 || level >= 64) {
      return absl::InvalidArgumentError(Cat("node level ", level));
    }
    const std::string what = Cat("node (", level, ", ", index, ")");
    LP_ASSIGN_OR_RETURN(std::optional<std::string> v,
                        Get(nodes_, internal::NodeKey(level, index), what));
    if (!v.has_value()) {
      return absl::OutOfRangeError(Cat(what, " is not stored"));
    }
    return internal::DecodeHash(*v, what);
  }

 private:
  explicit RocksDbStorage(std::unique_ptr<RocksDatabase> db)
      : db_(std::move(db)),
        leaves_(db_->family(0)),
        by_hash_(db_->family(1)),
        nodes_(db_->family(2)),
        meta_(db_->family(3)) {}

  absl::StatusOr<std::optional<std::string>> Get(
      rocksdb::ColumnFamilyHandle* family, const std::string& key,
      const std::string& what) const {
    return db_->Get(family, key, what);
  }

  std::unique_ptr<RocksDatabase> db_;
  rocksdb::ColumnFamilyHandle* leaves_;
  rocksdb::ColumnFamilyHandle* by_hash_;
  rocksdb::ColumnFamilyHandle* nodes_;
  rocksdb::ColumnFamilyHandle* meta_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Log>> RocksDbLog::Open(const std::string& dir,
                                                      LogOptions options,
                                                      rocksdb::Env* env) {
  LP_ASSIGN_OR_RETURN(std::unique_ptr<RocksDbStorage> storage,
                      RocksDbStorage::Open(dir, /*read_only=*/false, env));
  absl::StatusOr<std::unique_ptr<internal::SequencedLog>> log =
      internal::SequencedLog::Create(std::move(storage), std::move(options));
  if (!log.ok()) {
    return absl::Status(
        log.status().code(),
        Cat("log ", dir, ": ", std::string(log.status().message())));
  }
  return std::unique_ptr<Log>(*std::move(log));
}

absl::StatusOr<LogFsckReport> RocksDbLog::Fsck(
    const std::string& dir, const std::string& origin,
    const CheckpointVerifier& verifier, rocksdb::Env* env) {
  LP_ASSIGN_OR_RETURN(std::unique_ptr<RocksDbStorage> storage,
                      RocksDbStorage::Open(dir, /*read_only=*/true, env));
  auto in_dir = [&](const absl::Status& s) {
    return absl::Status(s.code(),
                        Cat("log ", dir, ": ", std::string(s.message())));
  };
  absl::StatusOr<uint64_t> size = storage->StoredSize();
  if (!size.ok()) return in_dir(size.status());
  absl::StatusOr<std::optional<std::string>> note = storage->StoredCheckpoint();
  if (!note.ok()) return in_dir(note.status());
  LogFsckReport report;
  report.size = *size;
  if (!note->has_value()) {
    if (*size == 0) {
      report.root = EmptyRoot();
      return report;
    }
    return in_dir(absl::DataLossError(
        Cat("fsck: no signed checkpoint for ", *size, " leaves")));
  }
  absl::StatusOr<Sha256Hash> root =
      internal::FsckStorage(*storage, *size, **note, verifier, origin);
  if (!root.ok()) return in_dir(root.status());
  report.root = *root;
  // FsckStorage verified the note; this cannot fail.
  absl::StatusOr<Checkpoint> cp = verifier.Verify(**note, origin);
  if (!cp.ok()) return in_dir(cp.status());
  report.checkpoint_size = cp->size;
  return report;
}

}  // namespace layerproof::store
