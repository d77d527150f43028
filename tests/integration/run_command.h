// Runs the `layerproof` binary (LP_LAYERPROOF_BINARY) to completion and
// captures its exit code, stdout and stderr: for the tests of the command
// line as a user runs it; RunningCommand, one left running until
// signalled. Thread safety: free function; each call forks. One
// RunningCommand per thread.
#ifndef LAYERPROOF_TESTS_INTEGRATION_RUN_COMMAND_H_
#define LAYERPROOF_TESTS_INTEGRATION_RUN_COMMAND_H_

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <vector>

namespace layerproof::integration {

struct CommandResult {
  int exit_code = -1;  // -1: killed at the timeout or by a signal
  std::string out, err;
};

// The binary with `args` as a background child (stdin from /dev/null),
// for a command that keeps running until signalled (`demo
// --keep-running`): its stdout and stderr are read as they come. The
// child is killed (SIGKILL) and reaped when the object goes.
class RunningCommand {
 public:
  explicit RunningCommand(std::vector<std::string> args) {
    std::string binary = LP_LAYERPROOF_BINARY;
    // argv is built before fork: the child of a threaded process may only
    // make async-signal-safe calls before exec.
    std::vector<char*> argv = {binary.data()};
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    int out[2], err[2];
    if (pipe(out) != 0 || pipe(err) != 0) return;
    pid_ = fork();
    if (pid_ == 0) {
      const int null = open("/dev/null", O_RDONLY);
      dup2(null, STDIN_FILENO);
      dup2(out[1], STDOUT_FILENO);
      dup2(err[1], STDERR_FILENO);
      close(out[0]);
      close(err[0]);
      execv(binary.c_str(), argv.data());
      _exit(127);
    }
    close(out[1]);
    close(err[1]);
    fds_[0] = out[0];
    fds_[1] = err[0];
  }
  ~RunningCommand() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    for (int fd : fds_) {
      if (fd >= 0) close(fd);
    }
  }
  RunningCommand(const RunningCommand&) = delete;
  RunningCommand& operator=(const RunningCommand&) = delete;

  // Reads until `done(out, err)` holds, both streams end, or `timeout`
  // passes; returns whether `done` holds.
  template <typename Done>
  bool ReadUntil(Done done, std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (!done(result_.out, result_.err)) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0 || !ReadOnce(static_cast<int>(left.count()))) {
        return done(result_.out, result_.err);
      }
    }
    return true;
  }

  // Sends `sig`.
  void Signal(int sig) {
    if (pid_ > 0) kill(pid_, sig);
  }

  // Reads both streams to their end and reaps the child, killing it
  // (SIGKILL; exit_code -1) if it has not exited within `timeout`.
  CommandResult Wait(std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    bool killed = false;
    for (;;) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0 && !killed && pid_ > 0) {
        kill(pid_, SIGKILL);
        killed = true;
      }
      if (!ReadOnce(killed ? 1000 : static_cast<int>(left.count()))) break;
    }
    if (pid_ > 0) {
      int status = 0;
      waitpid(pid_, &status, 0);
      pid_ = -1;
      if (!killed && WIFEXITED(status)) result_.exit_code = WEXITSTATUS(status);
    }
    return result_;
  }

  const std::string& out() const { return result_.out; }
  const std::string& err() const { return result_.err; }

 private:
  // One poll of both streams, appending what came; false once both ended
  // (or poll failed).
  bool ReadOnce(int timeout_ms) {
    pollfd fds[2] = {{fds_[0], POLLIN, 0}, {fds_[1], POLLIN, 0}};
    if (fds_[0] < 0 && fds_[1] < 0) return false;
    if (poll(fds, 2, timeout_ms) < 0) return false;
    std::string* sinks[2] = {&result_.out, &result_.err};
    for (int i = 0; i < 2; ++i) {
      if (fds_[i] < 0 || !(fds[i].revents & (POLLIN | POLLHUP))) continue;
      char buf[4096];
      const ssize_t n = read(fds_[i], buf, sizeof buf);
      if (n > 0) {
        sinks[i]->append(buf, static_cast<size_t>(n));
      } else {
        close(fds_[i]);
        fds_[i] = -1;
      }
    }
    return fds_[0] >= 0 || fds_[1] >= 0;
  }

  pid_t pid_ = -1;
  int fds_[2] = {-1, -1};
  CommandResult result_;
};

// Runs the binary with `args`, with stdin from /dev/null, to completion,
// killing it after `timeout`.
inline CommandResult RunLayerproof(
    const std::vector<std::string>& args,
    std::chrono::seconds timeout = std::chrono::seconds(120)) {
  RunningCommand command(args);
  return command.Wait(timeout);
}

}  // namespace layerproof::integration

#endif  // LAYERPROOF_TESTS_INTEGRATION_RUN_COMMAND_H_
