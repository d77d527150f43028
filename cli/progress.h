// Progress bars for the long jobs of the command line (model synthesis and
// loading, replay, bundle verification, the demo's load). A bar is drawn on
// stderr, redrawn in place, only when stderr is a terminal; otherwise (CI
// logs, pipes, --json runs) it prints nothing until Finish, which prints
// one line, so logs stay readable. Thread safety: Update may be called from
// any thread; draws are serialised and rate-limited to ~10 per second.
#ifndef LAYERPROOF_CLI_PROGRESS_H_
#define LAYERPROOF_CLI_PROGRESS_H_

#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>

namespace layerproof::cli {

class ProgressBar {
 public:
  // `label` precedes the bar; `unit` follows the counts ("requests", "M
  // params"); `total` > 0. quiet: draw nothing at all (e.g. with --json).
  ProgressBar(std::string label, int64_t total, std::string unit = "",
              bool quiet = false);
  ~ProgressBar();
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;

  // Sets the count done (clamped to total) and an optional suffix, e.g.
  // "3 FAIL". Cheap when no redraw is due.
  void Update(int64_t done, const std::string& suffix = "");
  // Draws the final state and ends the line (once; the destructor calls it).
  void Finish(const std::string& suffix = "");

  // Whether bars redraw in place (stderr is a terminal).
  static bool Interactive();

 private:
  void DrawLocked(bool final_line);

  std::mutex mu_;
  std::string label_, unit_, suffix_;
  int64_t total_, done_ = 0;
  bool quiet_, interactive_, finished_ = false;
  std::chrono::steady_clock::time_point start_, last_draw_;
};

}  // namespace layerproof::cli

#endif  // LAYERPROOF_CLI_PROGRESS_H_
