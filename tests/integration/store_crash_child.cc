// The SIGKILL half of the crash loop (power_loss_test.cc): opens the log,
// the audit store and the journal under argv[1] on the real disk, runs the
// workload of tests/integration/store_workload.h as run argv[2] until the
// process is killed, and writes every acknowledgement line to stdout with a
// single write(2) (atomic on a pipe: each line is shorter than PIPE_BUF).
// Any error opening exits non-zero with a message on stderr. Not a test by
// itself.
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "tests/integration/store_workload.h"

namespace {

[[noreturn]] void Fail(const std::string& message) {
  std::fprintf(stderr, "store_crash_child: %s\n", message.c_str());
  std::fflush(stderr);
  std::_Exit(3);
}

void Report(const std::string& line) {
  const std::string out = line + "\n";
  if (out.size() > PIPE_BUF) Fail("line longer than PIPE_BUF");
  ssize_t n;
  do {
    n = write(STDOUT_FILENO, out.data(), out.size());
  } while (n < 0 && errno == EINTR);
  if (n != static_cast<ssize_t>(out.size())) Fail("short write to stdout");
}

}  // namespace

int main(int argc, char** argv) {
  using layerproof::integration::NodeStores;
  using layerproof::integration::Workload;
  if (argc != 3) Fail("usage: store_crash_child ROOT RUN");
  absl::StatusOr<NodeStores> stores = NodeStores::Open(argv[1], nullptr);
  if (!stores.ok()) Fail("open: " + stores.status().ToString());
  Workload workload(*stores, std::atoi(argv[2]), Report);
  for (;;) pause();  // killed by the test
}
