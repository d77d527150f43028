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
// Disk errors: every write goes through Write(), which maps a failure with
// FromRocks (a full disk is ResourceExhausted, any other I/O error
// Unavailable, both naming the database) and, once a write has failed,
// brings the database back before the next one (Recover(); see there). A
// write that failed was not acknowledged; whether it is in the database
// after a crash is undetermined (RocksDB may find its WAL record), exactly
// as for a write in flight when the process dies.
//
// Every file goes through one rocksdb::Env, the default one unless Open is
// given another (tests pass tests/store/simulated_disk.h's, which loses
// unsynced writes at a simulated power loss and fills up on demand);
// atomic creation syncs and renames through its FileSystem too.
//
// Thread safety: the handle is as thread-safe as rocksdb::DB (every method
// may be called concurrently). Two processes cannot open one directory
// read-write: RocksDB's lock file refuses the second, which is how each log
// keeps a single sequencer.
#ifndef LAYERPROOF_STORE_ROCKSDB_DATABASE_H_
#define LAYERPROOF_STORE_ROCKSDB_DATABASE_H_

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "rocksdb/db.h"
#include "rocksdb/options.h"
#include "rocksdb/write_batch.h"

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
  // ("log", "journal", "audit store"). `env` (not owned; it must outlive
  // the database) is the door to the disk; nullptr is
  // rocksdb::Env::Default().
  static absl::StatusOr<std::unique_ptr<RocksDatabase>> Open(
      const std::string& dir, const std::vector<std::string>& families,
      Mode mode, std::string label, rocksdb::Env* env = nullptr);

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

  // Writes `batch` atomically, its WAL record synced before it returns when
  // `sync` (SyncWrite()); errors are Check(s, what). After a failed write
  // the next one first calls Recover().
  absl::Status Write(rocksdb::WriteBatch* batch, std::string_view what,
                     bool sync = true);

  // The key GuardMemtable() writes in the default family; a store never
  // reads it.
  static const char kMemtableGuardKey[];

  // RocksDB's max_open_files for every database: table files kept open at
  // once (an LRU table cache beyond it). RocksDB's default, -1, keeps every
  // .sst open, so descriptors grow with the store: the 30-minute soak saw
  // the verifier's grow by one per table (BENCHMARKS.md, "Reliability").
  // Three databases per node at most, well under the usual 1024 limit.
  static constexpr int kMaxOpenTables = 64;

  // Brings the database out of the read-only state RocksDB enters after a
  // failed WAL write or sync, a failed flush or a failed MANIFEST write
  // (its "background error"): rocksdb::DB::Resume(), which flushes every
  // memtable to new SSTs and switches to a fresh WAL, abandoning the WAL
  // whose tail is in doubt. OK when nothing needed recovering; the fault's
  // error (mapped, naming the database) while the disk still fails.
  absl::Status Recover();

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
  // Keeps the default family's memtable non-empty before a write, with a
  // marker written to the memtable only (no WAL, so no disk fault can fail
  // it). RocksDB 7.8's Resume() starts a fresh WAL only by switching a
  // non-empty memtable: after a WAL write failed on a database whose
  // memtables were all empty (just opened, or just recovered), it would
  // "recover" keeping the failed WAL writer, and the next write would trip
  // RocksDB's assertion on a writer with an earlier error (abort in Debian's
  // build) or fail for ever. Found by tests/integration/power_loss_test.cc.
  // The marker is flushed with the family (at Resume, at close).
  void GuardMemtable();
  // Set when a write failed; the next write calls Recover() first.
  std::atomic<bool> failed_{false};
};

}  // namespace layerproof::store

#endif  // LAYERPROOF_STORE_ROCKSDB_DATABASE_H_
