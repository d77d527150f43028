#include "kernels/model/internal/file_io.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <utility>

#include "kernels/model/internal/errors.h"

namespace layerproof::kernels::model::internal {
namespace {

std::string ErrnoText(int err) { return std::strerror(err); }

// Closes the descriptor when the scope ends.
class FdCloser {
 public:
  explicit FdCloser(int fd) : fd_(fd) {}
  ~FdCloser() {
    if (fd_ >= 0) ::close(fd_);
  }
  FdCloser(const FdCloser&) = delete;
  FdCloser& operator=(const FdCloser&) = delete;

 private:
  int fd_;
};

// Opens `path` for reading: NotFound when it does not exist, else
// InvalidArgument naming the errno. The caller closes the descriptor.
StatusOr<int> OpenForReading(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd >= 0) return fd;
  const int err = errno;
  std::string m = path + ": cannot open: " + ErrnoText(err);
  return err == ENOENT ? NotFoundError(m) : InvalidArgument(m);
}

}  // namespace

StatusOr<std::string> ReadSmallFile(const std::string& path,
                                    uint64_t max_bytes) {
  LP_ASSIGN_OR_RETURN(const int fd, OpenForReading(path));
  FdCloser closer(fd);
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    return InvalidArgument(path + ": cannot stat: " + ErrnoText(errno));
  }
  if (!S_ISREG(st.st_mode)) {
    return InvalidArgument(path + ": not a regular file");
  }
  if (uint64_t(st.st_size) > max_bytes) {
    return InvalidArgument(GotWant(path + ": size",
                                   std::to_string(st.st_size) + " bytes",
                                   "<= " + std::to_string(max_bytes)));
  }
  std::string text(size_t(st.st_size), '\0');
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::read(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return InvalidArgument(path + ": read: " + ErrnoText(errno));
    if (n == 0) break;  // shrank under us: use what is there
    done += size_t(n);
  }
  text.resize(done);
  return text;
}

StatusOr<FileStamp> StatFile(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    const int err = errno;
    std::string m = path + ": cannot stat: " + ErrnoText(err);
    return err == ENOENT ? NotFoundError(m) : InvalidArgument(m);
  }
  FileStamp s;
  s.size = uint64_t(st.st_size);
  s.mtime_ns = int64_t(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  return s;
}

bool IsRegularFile(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// --- MappedFile --------------------------------------------------------------

StatusOr<MappedFile> MappedFile::Open(const std::string& path) {
  LP_ASSIGN_OR_RETURN(const int fd, OpenForReading(path));
  FdCloser closer(fd);  // the mapping outlives the descriptor
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    return InvalidArgument(path + ": not a readable regular file");
  }
  MappedFile f;
  if (st.st_size == 0) return f;
  void* map =
      ::mmap(nullptr, size_t(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
  if (map == MAP_FAILED) {
    return InvalidArgument(path + ": mmap: " + ErrnoText(errno));
  }
  f.data_ = static_cast<const unsigned char*>(map);
  f.size_ = uint64_t(st.st_size);
  return f;
}

MappedFile::MappedFile(MappedFile&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)) {}

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
  if (this != &other) {
    Unmap();
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

MappedFile::~MappedFile() { Unmap(); }

void MappedFile::Unmap() {
  if (data_ != nullptr) {
    ::munmap(const_cast<unsigned char*>(data_), size_t(size_));
  }
  data_ = nullptr;
  size_ = 0;
}

// --- PartialFileWriter -------------------------------------------------------

StatusOr<std::unique_ptr<PartialFileWriter>> PartialFileWriter::Create(
    const std::string& path) {
  // Refused now rather than by rename after every byte is written.
  struct stat st;
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
    return InvalidArgument(path + ": cannot create: " + ErrnoText(EISDIR));
  }
  // Unique per process and call, so concurrent writers never share a temp.
  static std::atomic<uint64_t> counter{0};
  std::string temp = path + ".tmp." + std::to_string(::getpid()) + "." +
                     std::to_string(counter.fetch_add(1));
  const int fd =
      ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  std::FILE* file = fd < 0 ? nullptr : ::fdopen(fd, "wb");
  if (file == nullptr) {
    const int err = errno;
    if (fd >= 0) {
      ::close(fd);
      ::unlink(temp.c_str());
    }
    return InvalidArgument(path + ": cannot create: " + ErrnoText(err) +
                           " (temporary file " + temp + ")");
  }
  return std::unique_ptr<PartialFileWriter>(
      new PartialFileWriter(path, std::move(temp), file));
}

PartialFileWriter::PartialFileWriter(std::string path, std::string temp,
                                     std::FILE* file)
    : path_(std::move(path)), temp_(std::move(temp)), file_(file) {}

PartialFileWriter::~PartialFileWriter() {
  if (file_ != nullptr) {
    file_.reset();
    ::unlink(temp_.c_str());
  }
}

Status PartialFileWriter::Write(const void* data, uint64_t bytes,
                                std::string_view what) {
  if (file_ == nullptr) {
    return FailedPreconditionError(path_ + ": write after Commit");
  }
  if (bytes > 0 && std::fwrite(data, 1, size_t(bytes), file_.get()) != bytes) {
    std::string m = path_ + ": ";
    if (!what.empty()) m.append(what).append(": ");
    return InvalidArgument(m + "write: " + ErrnoText(errno));
  }
  return OkStatus();
}

Status PartialFileWriter::Commit() {
  if (file_ == nullptr) {
    return FailedPreconditionError(path_ + ": Commit called twice");
  }
  std::FILE* f = file_.release();
  const bool flushed = std::fflush(f) == 0;
  const int flush_errno = errno;
  const bool closed = std::fclose(f) == 0;
  if (!flushed || !closed) {
    const int err = flushed ? errno : flush_errno;
    ::unlink(temp_.c_str());
    return InvalidArgument(path_ + ": close: " + ErrnoText(err));
  }
  if (::rename(temp_.c_str(), path_.c_str()) != 0) {
    const int err = errno;
    ::unlink(temp_.c_str());
    return InvalidArgument(path_ + ": rename: " + ErrnoText(err));
  }
  return OkStatus();
}

Status WriteFileAtomically(const std::string& path, std::string_view contents) {
  LP_ASSIGN_OR_RETURN(std::unique_ptr<PartialFileWriter> w,
                      PartialFileWriter::Create(path));
  LP_RETURN_IF_ERROR(w->Write(contents.data(), contents.size()));
  return w->Commit();
}

std::string JoinPath(const std::string& dir, std::string_view name) {
  if (dir.empty()) return std::string(name);
  std::string p = dir;
  if (p.back() != '/') p += '/';
  p += name;
  return p;
}

}  // namespace layerproof::kernels::model::internal
