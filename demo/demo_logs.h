// Keeps `layerproof demo`'s terminal readable: the nodes' one-line JSON logs
// (rpc/structured_log.h; every verdict, every refused submission),
// which they write to stderr, go to a file in the output folder instead,
// while everything else written to stderr (the progress bars, gRPC's and
// the demo's own messages) still reaches the real stderr.
//
// How: file descriptor 2 is replaced by a pipe, or, while stderr is a
// terminal, by a pseudo-terminal in raw mode (so that cli/progress.h still
// sees a terminal and redraws its bars in place); one thread reads it,
// sends each line from a '{"' to its newline that has the fields of a
// structured log line ("ts", "level", "component", "event") to the log
// file, and passes every other byte through unchanged, as it arrives (a
// '{"' that starts no log line is passed on at its newline).
// Thread safety: construct and destroy on one thread; writers to stderr
// may be any thread. Destruction restores fd 2 and drains what is left.
#ifndef LAYERPROOF_DEMO_DEMO_LOGS_H_
#define LAYERPROOF_DEMO_DEMO_LOGS_H_

#include <atomic>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>

namespace layerproof::demo {

class NodeLogRedirect {
 public:
  // Starts the redirection into `log_path` (created or truncated). Returns
  // null, leaving stderr as it is, when the file or the pipe cannot be
  // made.
  static std::unique_ptr<NodeLogRedirect> Start(const std::string& log_path);
  ~NodeLogRedirect();
  NodeLogRedirect(const NodeLogRedirect&) = delete;
  NodeLogRedirect& operator=(const NodeLogRedirect&) = delete;

  // Lines sent to the log file so far.
  long lines() const { return lines_.load(); }

 private:
  NodeLogRedirect() = default;
  void Pump();

  int original_ = -1;  // the real stderr
  int source_ = -1;    // the pipe's read end or the pty's master
  FILE* log_ = nullptr;
  std::thread thread_;
  std::atomic<long> lines_{0};
};

}  // namespace layerproof::demo

#endif  // LAYERPROOF_DEMO_DEMO_LOGS_H_
