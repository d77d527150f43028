#include "store/rocksdb_database.h"

#include <filesystem>
#include <system_error>
#include <utility>

#include "kernels/status.h"
#include "rocksdb/env.h"
#include "rocksdb/file_system.h"
#include "rocksdb/listener.h"
#include "store/internal/str_cat.h"

namespace layerproof::store {
namespace {

namespace fs = std::filesystem;
using internal::Cat;

// fsync(2) on a file or a directory through `fs`, so that a rename or a
// file's contents survive a power loss.
absl::Status SyncPath(rocksdb::FileSystem& fs, const fs::path& path,
                      bool directory) {
  const rocksdb::IOOptions io;
  rocksdb::IOStatus s;
  if (directory) {
    std::unique_ptr<rocksdb::FSDirectory> dir;
    s = fs.NewDirectory(path.string(), io, &dir, nullptr);
    if (s.ok()) s = dir->Fsync(io, nullptr);
    if (dir) dir->Close(io, nullptr).PermitUncheckedError();
  } else {
    // Opened for appending, nothing appended: only the fsync.
    std::unique_ptr<rocksdb::FSWritableFile> file;
    s = fs.ReopenWritableFile(path.string(), rocksdb::FileOptions(), &file,
                              nullptr);
    if (s.ok()) s = file->Fsync(io, nullptr);
    if (file) file->Close(io, nullptr).PermitUncheckedError();
  }
  return FromRocks(s, Cat("fsync ", path.string()));
}

std::vector<rocksdb::ColumnFamilyDescriptor> Descriptors(
    const std::vector<std::string>& families) {
  std::vector<rocksdb::ColumnFamilyDescriptor> out;
  bool has_default = false;
  for (const std::string& name : families) {
    has_default |= name == rocksdb::kDefaultColumnFamilyName;
    out.emplace_back(name, rocksdb::ColumnFamilyOptions());
  }
  // RocksDB wants the default family named on every open.
  if (!has_default) {
    out.emplace_back(rocksdb::kDefaultColumnFamilyName,
                     rocksdb::ColumnFamilyOptions());
  }
  return out;
}

// How a disk error stops and restarts a database. RocksDB 7.8 (Debian's)
// stops taking writes after a failed WAL write or sync, flush, compaction
// or MANIFEST write (a "background error"), and by its own severity table
// a full disk (NoSpace) is a hard error that DB::Resume() recovers from,
// but any other I/O error (EIO) is fatal: Resume() refuses it and only a
// reopen (a restart) brings the database back. Both leave the same state:
// every write that returned OK is in the memtables (and its WAL record
// synced if it asked for sync); the failed one is not in the memtables.
// (Failing to create the next WAL is reported as a memtable error, fatal
// too: RocksDB fears for WAL bytes still in its buffer, which only writes
// without sync can have, and those were never acknowledged as durable.)
// Resume() flushes every memtable to new SSTs and switches to a fresh WAL,
// abandoning the one whose tail is in doubt, which is as safe after EIO as
// after ENOSPC; if the disk still fails, the flush fails and the database
// stays stopped. So this listener
//   - makes every such I/O error a hard error, so that RocksDatabase::
//     Recover() (Resume) brings the database back once the disk does;
//     corruption, fenced I/O and data loss stay fatal or unrecoverable;
//   - turns off RocksDB's own background recovery (for NoSpace it polls the
//     free space and resumes in the background): RocksDatabase::Write
//     recovers before the next write instead, so there is one recovery
//     path, and a manual Resume() is never refused as Busy because a
//     background one is under way.
class RecoverableIoErrors final : public rocksdb::EventListener {
 public:
  const char* Name() const override { return "LayerProofRecoverableIoErrors"; }
  void OnBackgroundError(rocksdb::BackgroundErrorReason /*reason*/,
                         rocksdb::Status* error) override {
    if (!error->IsIOError() || error->IsIOFenced()) return;
    if (error->severity() == rocksdb::Status::Severity::kFatalError) {
      *error = rocksdb::Status(*error, rocksdb::Status::Severity::kHardError);
    }
  }
  void OnErrorRecoveryBegin(rocksdb::BackgroundErrorReason /*reason*/,
                            rocksdb::Status /*error*/,
                            bool* auto_recovery) override {
    *auto_recovery = false;
  }
};

}  // namespace

// In the default family, beside the journal's and the audit store's keys
// (16-byte request ids, "meta/...", "<letter>/..."), which it cannot be.
const char RocksDatabase::kMemtableGuardKey[] = "lp/memtable-guard";

namespace {

// The options every open shares: the Env, RecoverableIoErrors and the bound
// on open tables.
rocksdb::DBOptions BaseOptions(rocksdb::Env& env) {
  rocksdb::DBOptions options;
  options.env = &env;
  options.max_open_files = RocksDatabase::kMaxOpenTables;
  options.listeners.push_back(std::make_shared<RecoverableIoErrors>());
  return options;
}

// Creates the database with every family in `staging`, closes it and syncs
// every file in it and the directory itself.
absl::Status CreateComplete(rocksdb::Env& env, const fs::path& staging,
                            const std::vector<std::string>& families,
                            const std::string& name) {
  std::error_code ec;
  fs::remove_all(staging, ec);  // a creation cut short: never acknowledged
  if (ec) {
    return absl::UnavailableError(Cat(name, ": remove the leftover ",
                                      staging.string(), ": ", ec.message()));
  }
  rocksdb::DBOptions options = BaseOptions(env);
  options.create_if_missing = true;
  options.create_missing_column_families = true;
  options.error_if_exists = true;
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::DB* raw = nullptr;
  LP_RETURN_IF_ERROR(
      FromRocks(rocksdb::DB::Open(options, staging.string(),
                                  Descriptors(families), &handles, &raw),
                Cat(name, ": create in ", staging.string())));
  std::unique_ptr<rocksdb::DB> db(raw);
  for (rocksdb::ColumnFamilyHandle* h : handles) {
    db->DestroyColumnFamilyHandle(h).PermitUncheckedError();
  }
  LP_RETURN_IF_ERROR(FromRocks(db->Close(), Cat(name, ": close after create")));
  db.reset();
  for (const fs::directory_entry& e : fs::directory_iterator(staging, ec)) {
    if (e.is_regular_file()) {
      LP_RETURN_IF_ERROR(
          SyncPath(*env.GetFileSystem(), e.path(), /*directory=*/false));
    }
  }
  if (ec) {
    return absl::UnavailableError(
        Cat(name, ": list ", staging.string(), ": ", ec.message()));
  }
  return SyncPath(*env.GetFileSystem(), staging, /*directory=*/true);
}

// Creates the database at `dir` atomically (see the header).
absl::Status CreateAtomically(rocksdb::Env& env, const fs::path& dir,
                              const std::vector<std::string>& families,
                              const std::string& name) {
  std::error_code ec;
  if (fs::exists(dir, ec) && !fs::is_empty(dir, ec)) {
    return absl::FailedPreconditionError(
        Cat(name,
            ": the directory holds files but no database (no CURRENT);"
            " refusing to create one over them"));
  }
  fs::path staging = dir;
  staging += ".creating";
  const absl::Status created = CreateComplete(env, staging, families, name);
  if (!created.ok()) {
    fs::remove_all(staging, ec);
    return created;
  }
  // rename(2) replaces an empty directory at `dir` atomically.
  const rocksdb::IOStatus renamed = env.GetFileSystem()->RenameFile(
      staging.string(), dir.string(), rocksdb::IOOptions(), nullptr);
  if (!renamed.ok()) {
    fs::remove_all(staging, ec);
    return FromRocks(renamed,
                     Cat(name, ": rename ", staging.string(), " into place"));
  }
  const fs::path parent =
      dir.has_parent_path() ? dir.parent_path() : fs::path(".");
  return SyncPath(*env.GetFileSystem(), parent, /*directory=*/true);
}

}  // namespace

absl::Status FromRocks(const rocksdb::Status& s, std::string_view what) {
  if (s.ok()) return absl::OkStatus();
  const std::string message = Cat("rocksdb ", what, ": ", s.ToString());
  if (s.IsNotFound()) return absl::NotFoundError(message);
  if (s.IsCorruption()) return absl::DataLossError(message);
  if (s.IsInvalidArgument()) return absl::InvalidArgumentError(message);
  if (s.IsNoSpace()) return absl::ResourceExhaustedError(message);
  if (s.IsIOError() || s.IsBusy() || s.IsTryAgain() || s.IsTimedOut()) {
    return absl::UnavailableError(message);
  }
  return absl::InternalError(message);
}

rocksdb::WriteOptions SyncWrite() {
  rocksdb::WriteOptions w;
  w.sync = true;
  return w;
}

absl::StatusOr<std::unique_ptr<RocksDatabase>> RocksDatabase::Open(
    const std::string& dir, const std::vector<std::string>& families, Mode mode,
    std::string label, rocksdb::Env* env) {
  if (env == nullptr) env = rocksdb::Env::Default();
  fs::path path = fs::path(dir).lexically_normal();
  if (path.has_filename() == false && path.has_parent_path()) {
    path = path.parent_path();  // "a/b/" -> "a/b"
  }
  const std::string name = Cat(label, " ", dir);
  std::error_code ec;
  if (!fs::exists(path / "CURRENT", ec)) {
    if (mode == Mode::kReadOnly) {
      return absl::NotFoundError(Cat(name, ": no database here"));
    }
    LP_RETURN_IF_ERROR(CreateAtomically(*env, path, families, name));
  }
  // Never creates: the database is complete.
  rocksdb::DBOptions options = BaseOptions(*env);
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::DB* raw = nullptr;
  const rocksdb::Status s =
      mode == Mode::kReadOnly
          ? rocksdb::DB::OpenForReadOnly(options, path.string(),
                                         Descriptors(families), &handles, &raw)
          : rocksdb::DB::Open(options, path.string(), Descriptors(families),
                              &handles, &raw);
  LP_RETURN_IF_ERROR(FromRocks(s, Cat(name, ": open")));
  return std::unique_ptr<RocksDatabase>(new RocksDatabase(
      std::unique_ptr<rocksdb::DB>(raw), std::move(handles), name));
}

RocksDatabase::RocksDatabase(std::unique_ptr<rocksdb::DB> db,
                             std::vector<rocksdb::ColumnFamilyHandle*> handles,
                             std::string name)
    : db_(std::move(db)),
      handles_(std::move(handles)),
      name_(std::move(name)) {}

RocksDatabase::~RocksDatabase() {
  for (rocksdb::ColumnFamilyHandle* h : handles_) {
    db_->DestroyColumnFamilyHandle(h).PermitUncheckedError();
  }
  db_->Close().PermitUncheckedError();
}

absl::Status RocksDatabase::Check(const rocksdb::Status& s,
                                  std::string_view what) const {
  if (s.ok()) return absl::OkStatus();
  return FromRocks(s, Cat(name_, ": ", what));
}

absl::Status RocksDatabase::Write(rocksdb::WriteBatch* batch,
                                  std::string_view what, bool sync) {
  if (failed_.load()) LP_RETURN_IF_ERROR(Recover());
  GuardMemtable();
  rocksdb::WriteOptions options = SyncWrite();
  options.sync = sync;
  const rocksdb::Status s = db_->Write(options, batch);
  if (!s.ok()) failed_.store(true);
  return Check(s, what);
}

void RocksDatabase::GuardMemtable() {
  uint64_t entries = 0;
  if (db_->GetIntProperty(db_->DefaultColumnFamily(),
                          rocksdb::DB::Properties::kNumEntriesActiveMemTable,
                          &entries) &&
      entries > 0) {
    return;
  }
  rocksdb::WriteOptions memtable_only;
  memtable_only.disableWAL = true;
  // Fails only if the database is stopped; the write that follows then
  // fails alike and says why.
  db_->Put(memtable_only, db_->DefaultColumnFamily(), kMemtableGuardKey, "")
      .PermitUncheckedError();
}

absl::Status RocksDatabase::Recover() {
  const rocksdb::Status s = db_->Resume();
  if (s.ok()) failed_.store(false);
  return Check(s, "recover from an earlier disk error");
}

absl::StatusOr<std::optional<std::string>> RocksDatabase::Get(
    rocksdb::ColumnFamilyHandle* family, std::string_view key,
    std::string_view what) const {
  std::string value;
  const rocksdb::Status s =
      db_->Get(rocksdb::ReadOptions(), family, ToSlice(key), &value);
  if (s.IsNotFound()) return std::optional<std::string>();
  LP_RETURN_IF_ERROR(Check(s, Cat("read ", what)));
  return std::optional<std::string>(std::move(value));
}

}  // namespace layerproof::store
