#include "kernels/model/internal/file_io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

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
  // Closes now and reports the result.
  int Close() {
    const int rc = ::close(fd_);
    fd_ = -1;
    return rc;
  }

 private:
  int fd_;
};

}  // namespace

StatusOr<std::string> ReadSmallFile(const std::string& path,
                                    uint64_t max_bytes) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    std::string m = path + ": cannot open: " + ErrnoText(err);
    return err == ENOENT ? NotFoundError(m) : InvalidArgument(m);
  }
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

Status WriteFileAtomically(const std::string& path, std::string_view contents) {
  // Unique per process and call, so concurrent writers never share a temp.
  static std::atomic<uint64_t> counter{0};
  const std::string tmp = path + ".tmp." + std::to_string(::getpid()) + "." +
                          std::to_string(counter.fetch_add(1));
  const int fd =
      ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0)
    return InvalidArgument(tmp + ": cannot create: " + ErrnoText(errno));
  FdCloser closer(fd);
  size_t done = 0;
  while (done < contents.size()) {
    const ssize_t n =
        ::write(fd, contents.data() + done, contents.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = errno;
      ::unlink(tmp.c_str());
      return InvalidArgument(tmp + ": write: " + ErrnoText(err));
    }
    done += size_t(n);
  }
  if (closer.Close() != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    return InvalidArgument(tmp + ": close: " + ErrnoText(err));
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    return InvalidArgument(path + ": rename: " + ErrnoText(err));
  }
  return OkStatus();
}

std::string JoinPath(const std::string& dir, std::string_view name) {
  if (dir.empty()) return std::string(name);
  std::string p = dir;
  if (p.back() != '/') p += '/';
  p += name;
  return p;
}

}  // namespace layerproof::kernels::model::internal
