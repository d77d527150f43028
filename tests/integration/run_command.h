// Runs the `layerproof` binary (LP_LAYERPROOF_BINARY) to completion and
// captures its exit code, stdout and stderr: for the tests of the command
// line as a user runs it. Thread safety: free function; each call forks.
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

// Runs the binary with `args`, with stdin from /dev/null, killing it after
// `timeout`.
inline CommandResult RunLayerproof(
    const std::vector<std::string>& args,
    std::chrono::seconds timeout = std::chrono::seconds(120)) {
  CommandResult result;
  std::string binary = LP_LAYERPROOF_BINARY;
  std::vector<std::string> copy = args;
  std::vector<char*> argv = {binary.data()};
  for (std::string& a : copy) argv.push_back(a.data());
  argv.push_back(nullptr);
  int out[2], err[2];
  if (pipe(out) != 0 || pipe(err) != 0) return result;
  const pid_t pid = fork();
  if (pid == 0) {
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
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  pollfd fds[2] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}};
  std::string* sinks[2] = {&result.out, &result.err};
  int open_fds = 2;
  bool killed = false;
  while (open_fds > 0) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0 && !killed) {
      kill(pid, SIGKILL);
      killed = true;
    }
    if (poll(fds, 2, killed ? 1000 : static_cast<int>(left.count())) < 0) {
      break;
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP))) continue;
      char buf[4096];
      const ssize_t n = read(fds[i].fd, buf, sizeof buf);
      if (n > 0) {
        sinks[i]->append(buf, static_cast<size_t>(n));
      } else {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      }
    }
  }
  int status = 0;
  waitpid(pid, &status, 0);
  if (!killed && WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  return result;
}

}  // namespace layerproof::integration

#endif  // LAYERPROOF_TESTS_INTEGRATION_RUN_COMMAND_H_
