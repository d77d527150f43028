// What the benchmark programs (model_bench, service_bench, report_bench)
// share: dying on an error status, the markdown report they print as it
// grows, the run's heading and directories, clocks, best / median of
// repetitions, prompts, and main(). Each program names itself in Main().
// Thread safety: Emit, Note and Die may be called from any thread but do not
// order their output; the rest is for the main thread.
#ifndef LAYERPROOF_BENCH_BENCH_COMMON_H_
#define LAYERPROOF_BENCH_BENCH_COMMON_H_

#include <time.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

// The service benchmarks' statuses are Abseil's; a kernels-only build (the
// GPU machine's, scripts/gpu-check.sh) has no Abseil and needs only
// kernels::Status.
#if __has_include("absl/status/status.h")
#define LAYERPROOF_BENCH_HAVE_ABSL 1
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#endif
#include "bench/machine.h"
#include "kernels/dispatch.h"
#include "kernels/status.h"

namespace layerproof::bench {

using Clock = std::chrono::steady_clock;

// The program's name, the prefix of Die's messages (set by Main).
inline const char* g_bench = "bench";

[[noreturn]] inline void Die(const std::string& what, const std::string& why) {
  std::fprintf(stderr, "%s: %s: %s\n", g_bench, what.c_str(), why.c_str());
  std::exit(1);
}
inline void Must(const kernels::Status& s, const char* what) {
  if (!s.ok()) Die(what, s.ToString());
}
template <typename T>
T Must(kernels::StatusOr<T> v, const char* what) {
  if (!v.ok()) Die(what, v.status().ToString());
  return std::move(v).value();
}
#ifdef LAYERPROOF_BENCH_HAVE_ABSL
inline void Must(const absl::Status& s, const char* what) {
  if (!s.ok()) Die(what, s.ToString());
}
template <typename T>
T Must(absl::StatusOr<T> v, const char* what) {
  if (!v.ok()) Die(what, v.status().ToString());
  return std::move(v).value();
}
#endif

// The markdown report: printed as it grows and written to --out at the end.
inline std::string g_report;
inline void Emit(const char* fmt, ...) {
  char buf[4096];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  g_report += buf;
  std::fputs(buf, stdout);
  std::fflush(stdout);
}
// Progress, not part of the report.
inline void Note(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  std::vfprintf(stderr, fmt, ap);
  va_end(ap);
  std::fflush(stderr);
}

inline std::string LoadAverage() {
  std::ifstream f("/proc/loadavg");
  std::string a, b, c;
  f >> a >> b >> c;
  return a + " " + b + " " + c;
}

inline std::string UtcNow() {
  const std::time_t t = std::time(nullptr);
  char buf[64];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M UTC", std::gmtime(&t));
  return buf;
}

// The build directory: the parent of this binary's directory.
inline std::filesystem::path BuildDir() {
  std::error_code ec;
  const std::filesystem::path exe =
      std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::filesystem::current_path() : exe.parent_path().parent_path();
}

// Removes `p` and creates its parent; returns it.
inline std::string Fresh(const std::filesystem::path& p) {
  std::error_code ec;
  std::filesystem::remove_all(p, ec);
  std::filesystem::create_directories(p.parent_path(), ec);
  return p.string();
}

// A run of service_bench or report_bench: where its models are and its
// databases go, and the engine's backend at --threads threads.
struct BenchRun {
  std::filesystem::path models;  // --model-dir, else <build dir>/models
  std::filesystem::path tmp;     // <build dir>/bench-tmp/<program>
  kernels::Backend* backend = nullptr;
};

// Sets up the run and emits the report's heading (time, mode, threads,
// backend, load average, hardware threads and last-level cache).
inline BenchRun StartRun(const std::string& model_dir, int threads,
                         bool quick) {
  const std::filesystem::path build = BuildDir();
  BenchRun r;
  r.models =
      model_dir.empty() ? build / "models" : std::filesystem::path(model_dir);
  r.tmp = build / "bench-tmp" / g_bench;
  r.backend = Must(kernels::DefaultBackend(), "backend");
  r.backend->SetThreads(threads);

  Emit("### %s run of %s\n\n", g_bench, UtcNow().c_str());
  Emit("- %s; %d engine threads (backend %s); load average at start %s\n",
       quick ? "--quick" : "full run", threads,
       std::string(r.backend->name()).c_str(), LoadAverage().c_str());
  Emit("- hardware threads: %u; LLC %.0f MiB\n",
       std::thread::hardware_concurrency(), LastLevelCacheBytes() / 1048576.0);
  return r;
}

// Ends the run: removes its databases and writes the report to `out`
// (none when empty). Returns the exit status.
inline int FinishRun(const BenchRun& r, const std::string& out) {
  std::error_code ec;
  std::filesystem::remove_all(r.tmp, ec);
  if (!out.empty()) {
    std::ofstream f(out);
    f << g_report;
    if (!f) Die("--out", "cannot write " + out);
  }
  return 0;
}

inline double Seconds(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

inline double ProcessCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
}

// The median (of an even count, the mean of the middle two); 0 when empty.
inline double Median(std::vector<double> s) {
  if (s.empty()) return 0;
  std::sort(s.begin(), s.end());
  const size_t n = s.size();
  return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

// The nearest-rank percentile p (0..1) of `v`; 0 when empty.
inline double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t k = static_cast<size_t>(std::ceil(p * double(v.size())));
  k = std::clamp<size_t>(k, 1, v.size());
  return v[k - 1];
}

// Times (seconds) of one measured thing; best is the smallest.
struct Times {
  std::vector<double> v;
  double best() const {
    return v.empty() ? 0 : *std::min_element(v.begin(), v.end());
  }
  double median() const { return Median(v); }
};

// Rates (per second) of one measured thing; best is the largest.
struct Rates {
  std::vector<double> v;
  double best() const {
    return v.empty() ? 0 : *std::max_element(v.begin(), v.end());
  }
  double median() const { return Median(v); }
};

// Distinct pseudo-random prompts (never the synthetic specials).
inline std::vector<int32_t> Prompt(int64_t n, uint64_t salt, int64_t vocab) {
  std::vector<int32_t> p(n);
  uint64_t x = 0x9E3779B97F4A7C15ull * (salt + 1);
  for (int32_t& t : p) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    t = static_cast<int32_t>((x >> 33) % static_cast<uint64_t>(vocab - 2));
  }
  return p;
}

// Runs fn(i) for i in [0, n) on `threads` threads.
template <typename Fn>
void ParallelFor(int64_t n, int threads, Fn fn) {
  std::atomic<int64_t> next{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&] {
      for (int64_t i; (i = next.fetch_add(1)) < n;) fn(i);
    });
  }
  for (auto& t : pool) t.join();
}

// The command line, one argument at a time:
//   for (Args args(argc, argv); args.Next();) {
//     if (args.Flag("--quick")) {
//       ...
//     } else if (const char* v = args.Value("--out")) {
//       ...
//     } else {
//       return false;  // unknown, or a value missing at the end
//     }
//   }
class Args {
 public:
  Args(int argc, char** argv) : argc_(argc), argv_(argv) {}
  // Moves to the next argument; false after the last.
  bool Next() { return ++i_ < argc_; }
  // Whether the argument is `name`.
  bool Flag(std::string_view name) const { return argv_[i_] == name; }
  // The value after the argument when it is `name` and one follows (and
  // moves past it), else null.
  const char* Value(std::string_view name) {
    if (argv_[i_] != name || i_ + 1 >= argc_) return nullptr;
    return argv_[++i_];
  }

 private:
  int argc_;
  char** argv_;
  int i_ = 0;
};

// main() of the program `name`: parses the command line into Options,
// printing the usage and returning 2 when it does not parse, and runs.
template <typename Options>
int Main(const char* name, int argc, char** argv,
         bool (*parse)(int, char**, Options*), void (*usage)(),
         int (*run)(const Options&)) {
  g_bench = name;
  Options o;
  if (!parse(argc, argv, &o)) {
    usage();
    return 2;
  }
  return run(o);
}

}  // namespace layerproof::bench

#endif  // LAYERPROOF_BENCH_BENCH_COMMON_H_
