// `layerproof serve ...` as a child process, for the tests that run the
// real binary: it waits for the node's "listening" line on stdout and
// learns its address from it. Also a port reservation for nodes that must
// come back on the same port. Thread safety: one object per thread.
#ifndef LAYERPROOF_TESTS_INTEGRATION_NODE_PROCESS_H_
#define LAYERPROOF_TESTS_INTEGRATION_NODE_PROCESS_H_

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <map>
#include <string>
#include <vector>

namespace layerproof::integration {

// A port that was free a moment ago.
inline int ReservePort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  EXPECT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  socklen_t len = sizeof addr;
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  close(fd);
  return ntohs(addr.sin_port);
}

class NodeProcess {
 public:
  // Runs LP_LAYERPROOF_BINARY with `args` and waits for its listening
  // lines: `lines` of them (a prover with --http-listen prints its HTTP
  // API's first, as node "prover-http").
  explicit NodeProcess(std::vector<std::string> args, int lines = 1)
      : args_(std::move(args)) {
    // argv is built before fork: the child of a threaded process may only
    // make async-signal-safe calls before exec.
    std::vector<char*> argv = {binary_.data()};
    for (std::string& a : args_) argv.push_back(a.data());
    argv.push_back(nullptr);
    int out[2];
    EXPECT_EQ(pipe(out), 0);
    const pid_t parent = getpid();
    pid_ = fork();
    if (pid_ == 0) {
      // A node never outlives its test: were the test process to die (a
      // crash, a sanitizer's abort) before it stops the node, an orphan
      // holding ctest's output pipe would hang the run. The signal follows
      // the forking thread, and every test forks nodes from its main one.
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (getppid() != parent) _exit(127);  // the test died before prctl
      dup2(out[1], STDOUT_FILENO);
      close(out[0]);
      execv(binary_.c_str(), argv.data());
      _exit(127);
    }
    close(out[1]);
    for (int i = 0; i < lines; ++i) {
      std::string line;
      char c;
      while (read(out[0], &c, 1) == 1 && c != '\n') line += c;
      EXPECT_NE(line.find("\"event\":\"listening\""), std::string::npos)
          << "the node said: " << line;
      const std::string key = "\"address\":\"";
      const size_t at = line.find(key);
      if (at == std::string::npos) break;
      const size_t begin = at + key.size();
      address_ = line.substr(begin, line.find('"', begin) - begin);
      const std::string node_key = "\"node\":\"";
      const size_t n = line.find(node_key);
      if (n != std::string::npos) {
        const size_t b = n + node_key.size();
        addresses_[line.substr(b, line.find('"', b) - b)] = address_;
      }
    }
    close(out[0]);
  }
  ~NodeProcess() { Kill(SIGKILL); }
  NodeProcess(const NodeProcess&) = delete;
  NodeProcess& operator=(const NodeProcess&) = delete;

  // "127.0.0.1:PORT" as the node printed it last (its gRPC server's).
  const std::string& address() const { return address_; }
  // The address of the server named `node` in its line ("prover-http",
  // "prover-metrics", ...), or "".
  std::string address_of(const std::string& node) const {
    auto it = addresses_.find(node);
    return it == addresses_.end() ? "" : it->second;
  }
  // Sends `sig` and reaps the process.
  void Kill(int sig) {
    if (pid_ <= 0) return;
    kill(pid_, sig);
    int status = 0;
    waitpid(pid_, &status, 0);
    exit_status_ = status;
    pid_ = -1;
  }
  // waitpid's status after Kill.
  int exit_status() const { return exit_status_; }

 private:
  std::string binary_ = LP_LAYERPROOF_BINARY;
  std::vector<std::string> args_;
  std::string address_;
  std::map<std::string, std::string> addresses_;
  pid_t pid_ = -1;
  int exit_status_ = 0;
};

}  // namespace layerproof::integration

#endif  // LAYERPROOF_TESTS_INTEGRATION_NODE_PROCESS_H_
