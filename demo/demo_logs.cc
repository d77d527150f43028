#include "demo/demo_logs.h"

#include <fcntl.h>
#include <pty.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>

namespace layerproof::demo {
namespace {

void WriteAll(int fd, const std::string& bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // the real stderr is gone: drop the rest
    done += static_cast<size_t>(n);
  }
}

// A structured_log.h line: a JSON object with the fields every one has.
bool IsNodeLogLine(const std::string& line) {
  for (const char* field :
       {"\"ts\":", "\"level\":", "\"component\":", "\"event\":"}) {
    if (line.find(field) == std::string::npos) return false;
  }
  return true;
}

}  // namespace

std::unique_ptr<NodeLogRedirect> NodeLogRedirect::Start(
    const std::string& log_path) {
  std::unique_ptr<NodeLogRedirect> r(new NodeLogRedirect());
  r->log_ = std::fopen(log_path.c_str(), "w");
  if (r->log_ == nullptr) return nullptr;
  std::fflush(stderr);
  r->original_ = ::dup(STDERR_FILENO);
  if (r->original_ < 0) return nullptr;
  int sink = -1;
  if (::isatty(r->original_) == 1) {
    // A raw pseudo-terminal: the bars still see a terminal, and bytes pass
    // unchanged (no output processing).
    if (::openpty(&r->source_, &sink, nullptr, nullptr, nullptr) != 0) {
      return nullptr;
    }
    termios raw;
    if (::tcgetattr(sink, &raw) == 0) {
      ::cfmakeraw(&raw);
      ::tcsetattr(sink, TCSANOW, &raw);
    }
  } else {
    int fds[2];
    if (::pipe(fds) != 0) return nullptr;
    r->source_ = fds[0];
    sink = fds[1];
  }
  ::fcntl(r->source_, F_SETFD, FD_CLOEXEC);
  ::fcntl(r->original_, F_SETFD, FD_CLOEXEC);
  if (::dup2(sink, STDERR_FILENO) < 0) {
    ::close(sink);
    return nullptr;
  }
  ::close(sink);  // fd 2 is now the only writer
  r->thread_ = std::thread([p = r.get()] { p->Pump(); });
  return r;
}

NodeLogRedirect::~NodeLogRedirect() {
  std::fflush(stderr);
  if (original_ >= 0 && thread_.joinable()) {
    // Closing the last writer ends the reader (EOF, or EIO on a pty).
    ::dup2(original_, STDERR_FILENO);
    thread_.join();
  }
  if (source_ >= 0) ::close(source_);
  if (original_ >= 0) ::close(original_);
  if (log_ != nullptr) std::fclose(log_);
}

void NodeLogRedirect::Pump() {
  char buffer[4096];
  std::string pass, json;
  bool in_json = false, held_brace = false;
  while (true) {
    const ssize_t n = ::read(source_, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    pass.clear();
    for (ssize_t i = 0; i < n; ++i) {
      const char c = buffer[i];
      if (in_json) {
        json += c;
        if (c == '\n') {
          if (IsNodeLogLine(json)) {
            std::fwrite(json.data(), 1, json.size(), log_);
            std::fflush(log_);
            ++lines_;
          } else {
            pass += json;  // e.g. a grpcurl example with a JSON body
          }
          json.clear();
          in_json = false;
        }
        continue;
      }
      if (held_brace) {
        held_brace = false;
        if (c == '"') {  // '{"': a structured log line starts
          in_json = true;
          json = "{\"";
          continue;
        }
        pass += '{';
      }
      if (c == '{') {
        held_brace = true;
        continue;
      }
      pass += c;
    }
    WriteAll(original_, pass);
  }
  if (held_brace) WriteAll(original_, "{");
  if (!json.empty()) WriteAll(original_, json);
}

}  // namespace layerproof::demo
