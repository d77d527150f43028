#include "store/rocksdb_database.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <utility>

#include "kernels/status.h"
#include "store/internal/str_cat.h"

namespace layerproof::store {
namespace {

namespace fs = std::filesystem;
using internal::Cat;

// fsync(2) on a file or a directory, so that a rename or a file's contents
// survive a power loss.
absl::Status SyncPath(const fs::path& path, bool directory) {
  const int fd = ::open(
      path.c_str(), directory ? O_RDONLY | O_DIRECTORY : O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return absl::UnavailableError(
        Cat("open ", path.string(), " to sync: ", std::strerror(errno)));
  }
  const int rc = ::fsync(fd);
  const int err = errno;
  ::close(fd);
  if (rc != 0) {
    return absl::UnavailableError(
        Cat("fsync ", path.string(), ": ", std::strerror(err)));
  }
  return absl::OkStatus();
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

// Creates the database with every family in `staging`, closes it and syncs
// every file in it and the directory itself.
absl::Status CreateComplete(const fs::path& staging,
                            const std::vector<std::string>& families,
                            const std::string& name) {
  std::error_code ec;
  fs::remove_all(staging, ec);  // a creation cut short: never acknowledged
  if (ec) {
    return absl::UnavailableError(Cat(name, ": remove the leftover ",
                                      staging.string(), ": ", ec.message()));
  }
  rocksdb::DBOptions options;
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
      LP_RETURN_IF_ERROR(SyncPath(e.path(), /*directory=*/false));
    }
  }
  if (ec) {
    return absl::UnavailableError(
        Cat(name, ": list ", staging.string(), ": ", ec.message()));
  }
  return SyncPath(staging, /*directory=*/true);
}

// Creates the database at `dir` atomically (see the header).
absl::Status CreateAtomically(const fs::path& dir,
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
  const absl::Status created = CreateComplete(staging, families, name);
  if (!created.ok()) {
    fs::remove_all(staging, ec);
    return created;
  }
  // rename(2) replaces an empty directory at `dir` atomically.
  if (::rename(staging.c_str(), dir.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    fs::remove_all(staging, ec);
    return absl::UnavailableError(
        Cat(name, ": rename ", staging.string(), " into place: ", why));
  }
  const fs::path parent =
      dir.has_parent_path() ? dir.parent_path() : fs::path(".");
  return SyncPath(parent, /*directory=*/true);
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
    std::string label) {
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
    LP_RETURN_IF_ERROR(CreateAtomically(path, families, name));
  }
  rocksdb::DBOptions options;  // never creates: the database is complete
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
