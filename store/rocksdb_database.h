// RocksDatabase: the one door to RocksDB for every database of the project
// (the transparency log, the prover's journal, the verifier's audit store).
// It owns the open, the column families, the synced write options and the
// one mapping from rocksdb::Status to absl::Status, so the three stores
// agree on what a disk error means and faults can be injected in one place.
//
// Creation is atomic. A database that does not exist yet (no `CURRENT` in
// its directory) is created whole in the sibling directory `<dir>.creating`,
// closed, synced and renamed into place; the parent directory is synced
// after the rename. A crash at any moment therefore leaves either no
// database at `dir` (the next Open discards the leftover `<dir>.creating`
// and starts again: nothing in it was ever acknowledged) or a complete one
// with every column family. A directory holding a database that lacks one
// of its column families (a creation cut short by a version without atomic
// creation) is refused by read-write and read-only opens alike, as
// InvalidArgument naming the directory.
//
// Thread safety: the handle is as thread-safe as rocksdb::DB (every method
// may be called concurrently). Two processes cannot open one directory
// read-write: RocksDB's lock file refuses the second, which is how each log
// keeps a single sequencer.
#ifndef LAYERPROOF_STORE_ROCKSDB_DATABASE_H_
#define LAYERPROOF_STORE_ROCKSDB_DATABASE_H_

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "rocksdb/db.h"
#include "rocksdb/options.h"

namespace layerproof::store {

// The one mapping from RocksDB's status to ours. `what` names the database
// and the operation ("journal ./j: write"). NotFound -> NotFound,
// Corruption -> DataLoss, InvalidArgument -> InvalidArgument, a full disk ->
// ResourceExhausted, other I/O errors and Busy/TryAgain/TimedOut ->
// Unavailable (the operation may succeed once the fault clears), anything
// else -> Internal.
absl::Status FromRocks(const rocksdb::Status& s, std::string_view what);

// Write options for every acknowledged write: the WAL is synced before the
// write returns.
rocksdb::WriteOptions SyncWrite();

inline rocksdb::Slice ToSlice(std::string_view s) {
  return {s.data(), s.size()};
}

class RocksDatabase {
 public:
  enum class Mode {
    kReadWrite,  // creates the database (atomically) when it is missing
    kReadOnly,   // no lock, no writes; the database must exist
  };

  // Opens the database in `dir` with the column families `families`
  // (rocksdb::kDefaultColumnFamilyName first is not required; family(i) is
  // the i-th name given). `label` names the database in every error
  // ("log", "journal", "audit store").
  static absl::StatusOr<std::unique_ptr<RocksDatabase>> Open(
      const std::string& dir, const std::vector<std::string>& families,
      Mode mode, std::string label);

  ~RocksDatabase();
  RocksDatabase(const RocksDatabase&) = delete;
  RocksDatabase& operator=(const RocksDatabase&) = delete;

  rocksdb::DB* db() const { return db_.get(); }
  // The handle of the i-th family passed to Open; owned by this object.
  rocksdb::ColumnFamilyHandle* family(size_t i) const { return handles_[i]; }
  // "<label> <dir>", for error messages.
  const std::string& name() const { return name_; }

  // FromRocks(s, "<label> <dir>: <what>").
  absl::Status Check(const rocksdb::Status& s, std::string_view what) const;

  // Reads `key` from `family`: nullopt when it is absent.
  absl::StatusOr<std::optional<std::string>> Get(
      rocksdb::ColumnFamilyHandle* family, std::string_view key,
      std::string_view what) const;

 private:
  RocksDatabase(std::unique_ptr<rocksdb::DB> db,
                std::vector<rocksdb::ColumnFamilyHandle*> handles,
                std::string name);

  std::unique_ptr<rocksdb::DB> db_;
  std::vector<rocksdb::ColumnFamilyHandle*> handles_;
  std::string name_;
};

}  // namespace layerproof::store

#endif  // LAYERPROOF_STORE_ROCKSDB_DATABASE_H_
