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

namespace layerproof::store {
namespace {

using internal::Cat;

absl::Status FromRocks(const rocksdb::Status& s, const std::string& what) {
  if (s.ok()) return absl::OkStatus();
  const std::string message = Cat("rocksdb ", what, ": ", s.ToString());
  if (s.IsNotFound()) return absl::NotFoundError(message);
  if (s.IsCorruption()) return absl::DataLossError(message);
  if (s.IsInvalidArgument()) return absl::InvalidArgumentError(message);
  if (s.IsBusy() || s.IsTryAgain() || s.IsTimedOut()) {
    return absl::UnavailableError(message);
  }
  return absl::InternalError(message);
}

rocksdb::Slice ToSlice(const std::string& s) { return {s.data(), s.size()}; }

class RocksDbStorage final : public internal::LogStorage {
 public:
  // Read-only: no lock, no writes (Write and WriteCheckpoint then fail),
  // and the directory must hold a log already.
  static absl::StatusOr<std::unique_ptr<RocksDbStorage>> Open(
      const std::string& dir, bool read_only = false) {
    rocksdb::DBOptions options;
    options.create_if_missing = !read_only;
    options.create_missing_column_families = !read_only;
    std::vector<rocksdb::ColumnFamilyDescriptor> families;
    for (const char* name : {rocksdb::kDefaultColumnFamilyName.c_str(),
                             internal::kLeavesFamily, internal::kByHashFamily,
                             internal::kNodesFamily, internal::kMetaFamily}) {
      families.emplace_back(name, rocksdb::ColumnFamilyOptions());
    }
    std::vector<rocksdb::ColumnFamilyHandle*> handles;
    rocksdb::DB* db = nullptr;
    rocksdb::Status s =
        read_only ? rocksdb::DB::OpenForReadOnly(options, dir, families,
                                                 &handles, &db)
                  : rocksdb::DB::Open(options, dir, families, &handles, &db);
    LP_RETURN_IF_ERROR(FromRocks(s, Cat("open ", dir)));
    return std::unique_ptr<RocksDbStorage>(
        new RocksDbStorage(std::unique_ptr<rocksdb::DB>(db), handles));
  }

  ~RocksDbStorage() override {
    for (rocksdb::ColumnFamilyHandle* h : handles_) {
      db_->DestroyColumnFamilyHandle(h);
    }
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
    rocksdb::WriteOptions options = SyncWrite();
    options.sync = batch.sync;
    return FromRocks(db_->Write(options, &wb),
                     Cat("write of leaves from ", batch.first_index));
  }

  absl::Status WriteCheckpoint(const std::string& note) override {
    return FromRocks(
        db_->Put(SyncWrite(), meta_, internal::kCheckpointKey, ToSlice(note)),
        "write checkpoint");
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
  RocksDbStorage(std::unique_ptr<rocksdb::DB> db,
                 std::vector<rocksdb::ColumnFamilyHandle*> handles)
      : db_(std::move(db)),
        handles_(std::move(handles)),
        leaves_(handles_[1]),
        by_hash_(handles_[2]),
        nodes_(handles_[3]),
        meta_(handles_[4]) {}

  static rocksdb::WriteOptions SyncWrite() {
    rocksdb::WriteOptions w;
    w.sync = true;
    return w;
  }

  absl::StatusOr<std::optional<std::string>> Get(
      rocksdb::ColumnFamilyHandle* family, const std::string& key,
      const std::string& what) const {
    std::string value;
    rocksdb::Status s =
        db_->Get(rocksdb::ReadOptions(), family, ToSlice(key), &value);
    if (s.IsNotFound()) return std::optional<std::string>();
    LP_RETURN_IF_ERROR(FromRocks(s, Cat("read ", what)));
    return std::optional<std::string>(std::move(value));
  }

  std::unique_ptr<rocksdb::DB> db_;
  std::vector<rocksdb::ColumnFamilyHandle*> handles_;
  rocksdb::ColumnFamilyHandle* leaves_;
  rocksdb::ColumnFamilyHandle* by_hash_;
  rocksdb::ColumnFamilyHandle* nodes_;
  rocksdb::ColumnFamilyHandle* meta_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Log>> RocksDbLog::Open(const std::string& dir,
                                                      LogOptions options) {
  LP_ASSIGN_OR_RETURN(std::unique_ptr<RocksDbStorage> storage,
                      RocksDbStorage::Open(dir));
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
    const CheckpointVerifier& verifier) {
  LP_ASSIGN_OR_RETURN(std::unique_ptr<RocksDbStorage> storage,
                      RocksDbStorage::Open(dir, /*read_only=*/true));
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
