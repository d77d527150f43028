// File I/O for the model loader and writers: reading config.json, the shard
// index and the digest cache, identifying a file by size and mtime, mapping
// a weights file read-only, and writing a file under a temporary name that
// is renamed over the target only once it is complete. POSIX only (Linux on
// x86-64 and aarch64).
// Thread safety: functions of the file system state; a MappedFile is
// immutable and may be read from any number of threads; a
// PartialFileWriter is driven by one thread.
#ifndef LAYERPROOF_KERNELS_MODEL_INTERNAL_FILE_IO_H_
#define LAYERPROOF_KERNELS_MODEL_INTERNAL_FILE_IO_H_

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>

#include "kernels/status.h"

namespace layerproof::kernels::model::internal {

// Reads all of `path`. NotFound when it does not exist; InvalidArgument when
// it is not a regular file or is larger than `max_bytes`.
StatusOr<std::string> ReadSmallFile(const std::string& path,
                                    uint64_t max_bytes);

// What the digest cache keys a file by.
struct FileStamp {
  uint64_t size = 0;
  int64_t mtime_ns = 0;  // st_mtim, nanoseconds since the epoch
  bool operator==(const FileStamp&) const = default;
};
StatusOr<FileStamp> StatFile(const std::string& path);

// True when `path` names an existing regular file (following links).
bool IsRegularFile(const std::string& path);

// A whole regular file mapped read-only (MAP_PRIVATE). Mapping reads
// nothing: pages come in when they are touched. The mapping lives as long
// as the object; moving it keeps data() valid.
class MappedFile {
 public:
  // Maps `path`. NotFound ("<path>: cannot open: <errno>") when it does not
  // exist; InvalidArgument when it cannot be opened, is not a readable
  // regular file, or mmap fails. An empty file gives data() == nullptr and
  // size() == 0 (mmap cannot map one); the format's parser reports it.
  static StatusOr<MappedFile> Open(const std::string& path);

  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile();

  const unsigned char* data() const { return data_; }
  uint64_t size() const { return size_; }

 private:
  MappedFile() = default;
  void Unmap();
  const unsigned char* data_ = nullptr;  // munmap'd by the destructor
  uint64_t size_ = 0;
};

// Writes a file in pieces under a temporary name beside `path` (unique per
// process and writer, so concurrent writers never share one) and renames
// it over `path` in Commit, so readers see the old file or the whole new
// one, never a torn one. Destroyed before a successful Commit, or after a
// failed one, it removes the temporary file; `path` is left as it was.
// Writes are buffered (stdio), so small pieces cost no system call each.
class PartialFileWriter {
 public:
  // Creates the temporary file. InvalidArgument "<path>: cannot create:
  // <errno> (temporary file <name>)" when it cannot, or when `path` is a
  // directory.
  static StatusOr<std::unique_ptr<PartialFileWriter>> Create(
      const std::string& path);

  ~PartialFileWriter();
  PartialFileWriter(const PartialFileWriter&) = delete;
  PartialFileWriter& operator=(const PartialFileWriter&) = delete;

  // Appends `bytes` bytes. Fails with "<path>: <what>: write: <errno>"
  // ("<path>: write: <errno>" when `what` is empty), or FailedPrecondition
  // after Commit.
  Status Write(const void* data, uint64_t bytes, std::string_view what = {});
  // Flushes, closes and renames the temporary file over `path`. Fails with
  // "<path>: close: <errno>" or "<path>: rename: <errno>" (the temporary
  // file is then removed), or FailedPrecondition when called twice.
  Status Commit();

  // The target, as given to Create.
  const std::string& path() const { return path_; }

 private:
  struct FileCloser {
    void operator()(std::FILE* f) const { std::fclose(f); }
  };
  PartialFileWriter(std::string path, std::string temp, std::FILE* file);

  std::string path_;
  std::string temp_;
  std::unique_ptr<std::FILE, FileCloser> file_;  // null once committed
};

// Writes `contents` to a temporary file beside `path` and renames it over
// `path` (a PartialFileWriter written in one piece).
Status WriteFileAtomically(const std::string& path, std::string_view contents);

// `dir` + "/" + `name`.
std::string JoinPath(const std::string& dir, std::string_view name);

}  // namespace layerproof::kernels::model::internal

#endif  // LAYERPROOF_KERNELS_MODEL_INTERNAL_FILE_IO_H_
