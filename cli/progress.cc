#include "cli/progress.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>

namespace layerproof::cli {

namespace {
constexpr int kWidth = 30;
constexpr auto kRedrawEvery = std::chrono::milliseconds(100);
}  // namespace

bool ProgressBar::Interactive() { return isatty(STDERR_FILENO) == 1; }

ProgressBar::ProgressBar(std::string label, int64_t total, std::string unit,
                         bool quiet)
    : label_(std::move(label)),
      unit_(std::move(unit)),
      total_(std::max<int64_t>(total, 1)),
      quiet_(quiet),
      interactive_(Interactive()),
      start_(std::chrono::steady_clock::now()) {}

ProgressBar::~ProgressBar() { Finish(); }

void ProgressBar::Update(int64_t done, const std::string& suffix) {
  std::lock_guard<std::mutex> lock(mu_);
  if (finished_) return;
  done_ = std::clamp<int64_t>(done, 0, total_);
  suffix_ = suffix;
  if (quiet_ || !interactive_) return;
  const auto now = std::chrono::steady_clock::now();
  if (now - last_draw_ < kRedrawEvery && done_ < total_) return;
  last_draw_ = now;
  DrawLocked(false);
}

void ProgressBar::Finish(const std::string& suffix) {
  std::lock_guard<std::mutex> lock(mu_);
  if (finished_) return;
  finished_ = true;
  if (!suffix.empty()) suffix_ = suffix;
  if (quiet_) return;
  DrawLocked(true);
}

void ProgressBar::DrawLocked(bool final_line) {
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_)
          .count();
  const int filled = static_cast<int>(kWidth * done_ / total_);
  std::string bar(filled, '#');
  bar.append(kWidth - filled, '.');
  std::fprintf(stderr, "%s%-18s [%s] %3d%%  %lld/%lld %s  %.1fs%s%s%s",
               interactive_ ? "\r\033[K" : "", label_.c_str(), bar.c_str(),
               static_cast<int>(100 * done_ / total_),
               static_cast<long long>(done_), static_cast<long long>(total_),
               unit_.c_str(), seconds, suffix_.empty() ? "" : "  ",
               suffix_.c_str(), final_line ? "\n" : "");
  std::fflush(stderr);
}

}  // namespace layerproof::cli
