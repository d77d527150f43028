#include "tests/store/simulated_disk.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "rocksdb/file_system.h"
#include "rocksdb/io_status.h"

namespace layerproof::store::testing {
namespace {

namespace fs = std::filesystem;
using rocksdb::IODebugContext;
using rocksdb::IOOptions;
using rocksdb::IOStatus;

std::string Normal(const std::string& path) {
  std::string s = fs::path(path).lexically_normal().string();
  while (s.size() > 1 && s.back() == '/') s.pop_back();
  return s;
}

std::string Parent(const std::string& path) {
  return fs::path(path).parent_path().string();
}

bool Under(const std::string& path, const std::string& dir) {
  return path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0 &&
         path[dir.size()] == '/';
}

// The first `limit` bytes of the file at `path` (all of it if shorter).
std::string ReadPrefix(const std::string& path, uint64_t limit) {
  std::ifstream in(path, std::ios::binary);
  std::string out((std::istreambuf_iterator<char>(in)),
                  std::istreambuf_iterator<char>());
  if (out.size() > limit) out.resize(limit);
  return out;
}

[[noreturn]] void Die(const std::string& message) {
  std::fprintf(stderr, "SimulatedDisk: %s\n", message.c_str());
  std::abort();
}

}  // namespace

class FaultFileSystem : public rocksdb::FileSystemWrapper {
 public:
  using Op = SimulatedDisk::Op;
  using Fault = SimulatedDisk::Fault;

  explicit FaultFileSystem(const std::shared_ptr<rocksdb::FileSystem>& base)
      : FileSystemWrapper(base) {}
  const char* Name() const override { return "LayerProofSimulatedDisk"; }

  // --- what SimulatedDisk asks ---

  void SetFault(Op op, Fault fault) {
    absl::MutexLock lock(&mu_);
    (op == Op::kWrite ? write_fault_ : sync_fault_) = fault;
  }
  uint64_t faults_injected() const {
    absl::MutexLock lock(&mu_);
    return faults_injected_;
  }
  void PowerOff() {
    // An fsync under way when the power goes makes nothing durable.
    failing_ = true;
    absl::MutexLock power(&power_mu_);  // waits for the calls in flight
    on_ = false;
  }
  bool failing() const { return failing_.load(); }
  uint64_t PowerOn() {
    absl::MutexLock power(&power_mu_);
    absl::MutexLock lock(&mu_);
    if (open_writers_ != 0) {
      Die(std::to_string(open_writers_) +
          " files are still open for writing at PowerOn: tear the databases "
          "down first");
    }
    uint64_t changed = 0;
    std::error_code ec;
    for (const auto& [path, state] : files_) {
      const uintmax_t size = fs::file_size(path, ec);
      if (ec || size <= state.synced) continue;
      fs::resize_file(path, state.synced, ec);
      if (ec) Die("truncate " + path + ": " + ec.message());
      ++changed;
    }
    // Deepest names first, so that a directory's children are undone
    // before the directory.
    std::vector<std::pair<std::string, Undo>> undo(undo_.begin(), undo_.end());
    std::sort(undo.begin(), undo.end(), [](const auto& a, const auto& b) {
      return a.first.size() > b.first.size();
    });
    for (const auto& [path, u] : undo) {
      if (!u.renamed_from.empty()) {
        if (fs::exists(path, ec)) fs::rename(path, u.renamed_from, ec);
      } else {
        fs::remove_all(path, ec);
      }
      if (ec) Die("undo " + path + ": " + ec.message());
      if (u.previous.has_value()) {
        if (u.previous_is_directory) {
          fs::create_directory(path, ec);
        } else {
          std::ofstream(path, std::ios::binary | std::ios::trunc)
              << *u.previous;
        }
      }
      ++changed;
    }
    files_.clear();
    undo_.clear();
    on_ = true;
    failing_ = false;
    return changed;
  }

  // --- called by the file wrappers, with power_mu_ held as a reader ---

  // The error a mutating call of kind `op` gets now, if any.
  IOStatus Refuse(Op op) ABSL_SHARED_LOCKS_REQUIRED(power_mu_) {
    if (!on_) return IOStatus::IOError("simulated power loss");
    absl::MutexLock lock(&mu_);
    const Fault f = op == Op::kWrite ? write_fault_ : sync_fault_;
    if (f == Fault::kNone) return IOStatus::OK();
    ++faults_injected_;
    return f == Fault::kNoSpace
               ? IOStatus::NoSpace("simulated full disk")
               : IOStatus::IOError("simulated I/O error (EIO)");
  }
  void Wrote(const std::string& path, uint64_t end) {
    absl::MutexLock lock(&mu_);
    FileState& st = files_[path];
    st.size = std::max(st.size, end);
  }
  void Truncated(const std::string& path, uint64_t size) {
    absl::MutexLock lock(&mu_);
    FileState& st = files_[path];
    st.size = size;
    st.synced = std::min(st.synced, size);
  }
  void Synced(const std::string& path) {
    absl::MutexLock lock(&mu_);
    FileState& st = files_[path];
    st.synced = st.size;
  }
  void DirectorySynced(const std::string& dir) {
    absl::MutexLock lock(&mu_);
    for (auto it = undo_.begin(); it != undo_.end();) {
      it = Parent(it->first) == dir ? undo_.erase(it) : std::next(it);
    }
  }
  void WriterClosed() {
    absl::MutexLock lock(&mu_);
    --open_writers_;
  }
  absl::Mutex& power_mu() ABSL_LOCK_RETURNED(power_mu_) { return power_mu_; }

  // --- the rocksdb::FileSystem calls that change the disk ---

  IOStatus NewWritableFile(const std::string& f,
                           const rocksdb::FileOptions& options,
                           std::unique_ptr<rocksdb::FSWritableFile>* r,
                           IODebugContext* dbg) override {
    return OpenWriter(
        f, /*reopen=*/false,
        [&] { return target()->NewWritableFile(f, options, r, dbg); }, r);
  }
  IOStatus ReopenWritableFile(const std::string& f,
                              const rocksdb::FileOptions& options,
                              std::unique_ptr<rocksdb::FSWritableFile>* r,
                              IODebugContext* dbg) override {
    return OpenWriter(
        f, /*reopen=*/true,
        [&] { return target()->ReopenWritableFile(f, options, r, dbg); }, r);
  }
  IOStatus ReuseWritableFile(const std::string& f, const std::string& old,
                             const rocksdb::FileOptions& options,
                             std::unique_ptr<rocksdb::FSWritableFile>* r,
                             IODebugContext* dbg) override {
    IOStatus s = RenameFile(old, f, IOOptions(), dbg);
    if (!s.ok()) return s;
    return NewWritableFile(f, options, r, dbg);
  }
  IOStatus NewRandomRWFile(const std::string& f,
                           const rocksdb::FileOptions& options,
                           std::unique_ptr<rocksdb::FSRandomRWFile>* r,
                           IODebugContext* dbg) override {
    absl::ReaderMutexLock power(&power_mu_);
    if (IOStatus s = Refuse(Op::kWrite); !s.ok()) return s;
    return target()->NewRandomRWFile(f, options, r, dbg);
  }
  IOStatus NewDirectory(const std::string& name, const IOOptions& options,
                        std::unique_ptr<rocksdb::FSDirectory>* result,
                        IODebugContext* dbg) override;
  IOStatus DeleteFile(const std::string& f, const IOOptions& options,
                      IODebugContext* dbg) override {
    absl::ReaderMutexLock power(&power_mu_);
    if (!on_) return IOStatus::IOError("simulated power loss");
    IOStatus s = target()->DeleteFile(f, options, dbg);
    if (s.ok()) {
      absl::MutexLock lock(&mu_);
      files_.erase(Normal(f));
    }
    return s;
  }
  IOStatus Truncate(const std::string& f, size_t size, const IOOptions& options,
                    IODebugContext* dbg) override {
    absl::ReaderMutexLock power(&power_mu_);
    if (IOStatus s = Refuse(Op::kWrite); !s.ok()) return s;
    IOStatus s = target()->Truncate(f, size, options, dbg);
    if (s.ok()) Truncated(Normal(f), size);
    return s;
  }
  IOStatus CreateDir(const std::string& d, const IOOptions& options,
                     IODebugContext* dbg) override {
    return MakeDirectory(d,
                         [&] { return target()->CreateDir(d, options, dbg); });
  }
  IOStatus CreateDirIfMissing(const std::string& d, const IOOptions& options,
                              IODebugContext* dbg) override {
    return MakeDirectory(
        d, [&] { return target()->CreateDirIfMissing(d, options, dbg); });
  }
  IOStatus DeleteDir(const std::string& d, const IOOptions& options,
                     IODebugContext* dbg) override {
    absl::ReaderMutexLock power(&power_mu_);
    if (!on_) return IOStatus::IOError("simulated power loss");
    return target()->DeleteDir(d, options, dbg);
  }
  IOStatus LinkFile(const std::string& s, const std::string& t,
                    const IOOptions& options, IODebugContext* dbg) override {
    absl::ReaderMutexLock power(&power_mu_);
    if (IOStatus st = Refuse(Op::kWrite); !st.ok()) return st;
    return target()->LinkFile(s, t, options, dbg);
  }
  IOStatus RenameFile(const std::string& src, const std::string& dst,
                      const IOOptions& options, IODebugContext* dbg) override;
  IOStatus GetFreeSpace(const std::string& path, const IOOptions& options,
                        uint64_t* free, IODebugContext* dbg) override {
    {
      absl::MutexLock lock(&mu_);
      if (write_fault_ == Fault::kNoSpace) {
        *free = 0;
        return IOStatus::OK();
      }
    }
    return target()->GetFreeSpace(path, options, free, dbg);
  }

 private:
  struct FileState {
    uint64_t size = 0;    // bytes written
    uint64_t synced = 0;  // of which durable
  };
  // How to undo a name that is not durable yet (its parent directory was
  // not fsynced since it appeared).
  struct Undo {
    // The name's durable state before: absent (nullopt), a file's contents,
    // or an empty directory (rename(2) replaces only empty ones).
    std::optional<std::string> previous;
    bool previous_is_directory = false;
    // A durable name the entry was renamed from: it gets it back.
    std::string renamed_from;
  };

  template <typename OpenFn>
  IOStatus OpenWriter(const std::string& f, bool reopen, OpenFn open,
                      std::unique_ptr<rocksdb::FSWritableFile>* r);
  template <typename MakeFn>
  IOStatus MakeDirectory(const std::string& d, MakeFn make) {
    absl::ReaderMutexLock power(&power_mu_);
    if (IOStatus s = Refuse(Op::kWrite); !s.ok()) return s;
    const std::string path = Normal(d);
    std::error_code ec;
    const bool existed = fs::exists(path, ec);
    IOStatus s = make();
    if (s.ok() && !existed) {
      absl::MutexLock lock(&mu_);
      undo_.emplace(path, Undo{});
    }
    return s;
  }
  // The durable state of the name `path` (mu_ held).
  Undo DurableStateOf(const std::string& path)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (auto it = undo_.find(path); it != undo_.end()) return it->second;
    Undo u;
    std::error_code ec;
    if (fs::is_directory(path, ec)) {
      u.previous = "";
      u.previous_is_directory = true;
    } else if (fs::exists(path, ec)) {
      auto it = files_.find(path);
      u.previous =
          ReadPrefix(path, it == files_.end() ? UINT64_MAX : it->second.synced);
    }
    return u;
  }

  // Readers: every call that changes the disk, for its whole duration.
  // Writer: PowerOff and PowerOn.
  absl::Mutex power_mu_;
  bool on_ ABSL_GUARDED_BY(power_mu_) = true;
  // Set by PowerOff before it waits for the calls in flight.
  std::atomic<bool> failing_{false};

  mutable absl::Mutex mu_ ABSL_ACQUIRED_AFTER(power_mu_);
  Fault write_fault_ ABSL_GUARDED_BY(mu_) = Fault::kNone;
  Fault sync_fault_ ABSL_GUARDED_BY(mu_) = Fault::kNone;
  uint64_t faults_injected_ ABSL_GUARDED_BY(mu_) = 0;
  std::map<std::string, FileState> files_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, Undo> undo_ ABSL_GUARDED_BY(mu_);
  int open_writers_ ABSL_GUARDED_BY(mu_) = 0;
};

namespace {

using Op = SimulatedDisk::Op;

class TrackedFile : public rocksdb::FSWritableFileOwnerWrapper {
 public:
  TrackedFile(std::unique_ptr<rocksdb::FSWritableFile> file,
              FaultFileSystem* fs, std::string path)
      : FSWritableFileOwnerWrapper(std::move(file)),
        fs_(fs),
        path_(std::move(path)) {}
  ~TrackedFile() override {
    // Closed before it counts as closed (PowerOn checks the count).
    target()->Close(IOOptions(), nullptr).PermitUncheckedError();
    fs_->WriterClosed();
  }

  IOStatus Append(const rocksdb::Slice& data, const IOOptions& options,
                  IODebugContext* dbg) override {
    return Write(data.size(), [&](uint64_t* end) {
      IOStatus s = target()->Append(data, options, dbg);
      *end = target()->GetFileSize(options, dbg);
      return s;
    });
  }
  IOStatus Append(const rocksdb::Slice& data, const IOOptions& options,
                  const rocksdb::DataVerificationInfo& info,
                  IODebugContext* dbg) override {
    return Write(data.size(), [&](uint64_t* end) {
      IOStatus s = target()->Append(data, options, info, dbg);
      *end = target()->GetFileSize(options, dbg);
      return s;
    });
  }
  IOStatus PositionedAppend(const rocksdb::Slice& data, uint64_t offset,
                            const IOOptions& options,
                            IODebugContext* dbg) override {
    return Write(data.size(), [&](uint64_t* end) {
      *end = offset + data.size();
      return target()->PositionedAppend(data, offset, options, dbg);
    });
  }
  IOStatus PositionedAppend(const rocksdb::Slice& data, uint64_t offset,
                            const IOOptions& options,
                            const rocksdb::DataVerificationInfo& info,
                            IODebugContext* dbg) override {
    return Write(data.size(), [&](uint64_t* end) {
      *end = offset + data.size();
      return target()->PositionedAppend(data, offset, options, info, dbg);
    });
  }
  IOStatus Truncate(uint64_t size, const IOOptions& options,
                    IODebugContext* dbg) override {
    absl::ReaderMutexLock power(&fs_->power_mu());
    if (IOStatus s = fs_->Refuse(Op::kWrite); !s.ok()) return s;
    IOStatus s = target()->Truncate(size, options, dbg);
    if (s.ok()) fs_->Truncated(path_, size);
    return s;
  }
  IOStatus Sync(const IOOptions& options, IODebugContext* dbg) override {
    return MakeDurable([&] { return target()->Sync(options, dbg); });
  }
  IOStatus Fsync(const IOOptions& options, IODebugContext* dbg) override {
    return MakeDurable([&] { return target()->Fsync(options, dbg); });
  }
  // Preallocation (fallocate) is a hint the simulated disk does not take:
  // on tmpfs it costs a WAL's whole preallocated size (~70 MB) in zeroed
  // pages at each open, and it changes no file's size.
  void PrepareWrite(size_t /*offset*/, size_t /*len*/,
                    const IOOptions& /*options*/,
                    IODebugContext* /*dbg*/) override {}
  IOStatus Allocate(uint64_t /*offset*/, uint64_t /*len*/,
                    const IOOptions& /*options*/,
                    IODebugContext* /*dbg*/) override {
    return IOStatus::OK();
  }
  IOStatus RangeSync(uint64_t offset, uint64_t nbytes, const IOOptions& options,
                     IODebugContext* dbg) override {
    // Durable as far as a power loss goes: nothing (see the header).
    absl::ReaderMutexLock power(&fs_->power_mu());
    if (IOStatus s = fs_->Refuse(Op::kSync); !s.ok()) return s;
    return target()->RangeSync(offset, nbytes, options, dbg);
  }

 private:
  template <typename WriteFn>
  IOStatus Write(size_t bytes, WriteFn write) {
    absl::ReaderMutexLock power(&fs_->power_mu());
    if (IOStatus s = fs_->Refuse(Op::kWrite); !s.ok()) return s;
    uint64_t end = 0;
    IOStatus s = write(&end);
    if (s.ok() && bytes > 0) fs_->Wrote(path_, end);
    return s;
  }
  template <typename SyncFn>
  IOStatus MakeDurable(SyncFn sync) {
    absl::ReaderMutexLock power(&fs_->power_mu());
    if (IOStatus s = fs_->Refuse(Op::kSync); !s.ok()) return s;
    IOStatus s = sync();
    if (!s.ok()) return s;
    if (fs_->failing()) return IOStatus::IOError("simulated power loss");
    fs_->Synced(path_);
    return s;
  }

  FaultFileSystem* fs_;
  const std::string path_;
};

class TrackedDirectory : public rocksdb::FSDirectoryWrapper {
 public:
  TrackedDirectory(std::unique_ptr<rocksdb::FSDirectory> dir,
                   FaultFileSystem* fs, std::string path)
      : FSDirectoryWrapper(std::move(dir)), fs_(fs), path_(std::move(path)) {}

  IOStatus Fsync(const IOOptions& options, IODebugContext* dbg) override {
    absl::ReaderMutexLock power(&fs_->power_mu());
    if (IOStatus s = fs_->Refuse(Op::kSync); !s.ok()) return s;
    IOStatus s = FSDirectoryWrapper::Fsync(options, dbg);
    if (!s.ok()) return s;
    if (fs_->failing()) return IOStatus::IOError("simulated power loss");
    fs_->DirectorySynced(path_);
    return s;
  }
  IOStatus FsyncWithDirOptions(
      const IOOptions& options, IODebugContext* dbg,
      const rocksdb::DirFsyncOptions& dir_options) override {
    absl::ReaderMutexLock power(&fs_->power_mu());
    if (IOStatus s = fs_->Refuse(Op::kSync); !s.ok()) return s;
    IOStatus s =
        FSDirectoryWrapper::FsyncWithDirOptions(options, dbg, dir_options);
    if (!s.ok()) return s;
    if (fs_->failing()) return IOStatus::IOError("simulated power loss");
    fs_->DirectorySynced(path_);
    return s;
  }

 private:
  FaultFileSystem* fs_;
  const std::string path_;
};

}  // namespace

template <typename OpenFn>
IOStatus FaultFileSystem::OpenWriter(
    const std::string& f, bool reopen, OpenFn open,
    std::unique_ptr<rocksdb::FSWritableFile>* r) {
  absl::ReaderMutexLock power(&power_mu_);
  if (IOStatus s = Refuse(Op::kWrite); !s.ok()) return s;
  const std::string path = Normal(f);
  std::error_code ec;
  const bool existed = fs::exists(path, ec);
  const uint64_t size_before = existed ? fs::file_size(path, ec) : 0;
  IOStatus s = open();
  if (!s.ok()) return s;
  {
    absl::MutexLock lock(&mu_);
    ++open_writers_;
    if (reopen) {
      // Appending to a file: what it held is as durable as it was.
      files_.emplace(path, FileState{size_before, size_before});
    } else {
      // Created, or truncated to nothing (O_TRUNC) and not yet synced.
      files_[path] = FileState{};
      if (!existed) undo_.emplace(path, Undo{});
    }
  }
  *r = std::make_unique<TrackedFile>(std::move(*r), this, path);
  return s;
}

IOStatus FaultFileSystem::NewDirectory(
    const std::string& name, const IOOptions& options,
    std::unique_ptr<rocksdb::FSDirectory>* result, IODebugContext* dbg) {
  IOStatus s = target()->NewDirectory(name, options, result, dbg);
  if (s.ok()) {
    *result = std::make_unique<TrackedDirectory>(std::move(*result), this,
                                                 Normal(name));
  }
  return s;
}

IOStatus FaultFileSystem::RenameFile(const std::string& src,
                                     const std::string& dst,
                                     const IOOptions& options,
                                     IODebugContext* dbg) {
  absl::ReaderMutexLock power(&power_mu_);
  if (IOStatus s = Refuse(Op::kWrite); !s.ok()) return s;
  const std::string from = Normal(src);
  const std::string to = Normal(dst);
  Undo u;
  {
    absl::MutexLock lock(&mu_);
    u = DurableStateOf(to);
    if (auto it = undo_.find(from); it == undo_.end()) {
      u.renamed_from = from;  // a durable name: the undo gives it back
    } else {
      u.renamed_from = it->second.renamed_from;
    }
  }
  IOStatus s = target()->RenameFile(src, dst, options, dbg);
  if (!s.ok()) return s;
  absl::MutexLock lock(&mu_);
  auto moved = [&](const std::string& path) -> std::optional<std::string> {
    if (path == from) return to;
    if (Under(path, from)) return to + path.substr(from.size());
    return std::nullopt;
  };
  std::map<std::string, FileState> files;
  for (auto& [path, state] : files_) files[moved(path).value_or(path)] = state;
  files_.swap(files);
  std::map<std::string, Undo> kept;
  for (auto& [path, undo] : undo_) {
    if (path == from) continue;
    kept[moved(path).value_or(path)] = undo;
  }
  kept[to] = u;
  undo_.swap(kept);
  return s;
}

SimulatedDisk::SimulatedDisk()
    : fs_(std::make_shared<FaultFileSystem>(rocksdb::FileSystem::Default())),
      env_(rocksdb::NewCompositeEnv(fs_)) {}

SimulatedDisk::~SimulatedDisk() = default;

void SimulatedDisk::SetFault(Op op, Fault fault) { fs_->SetFault(op, fault); }

void SimulatedDisk::ClearFaults() {
  fs_->SetFault(Op::kWrite, Fault::kNone);
  fs_->SetFault(Op::kSync, Fault::kNone);
}

uint64_t SimulatedDisk::faults_injected() const {
  return fs_->faults_injected();
}

void SimulatedDisk::PowerOff() { fs_->PowerOff(); }

uint64_t SimulatedDisk::PowerOn() { return fs_->PowerOn(); }

}  // namespace layerproof::store::testing
