// The transparency log's speed (issue 4): durable appends and proofs of a
// RocksDbLog, each against a named peer measured in the same run.
//
//  1. Durable append throughput: 1 KiB unique leaves from 1, 8 and 64
//     concurrent writers into a fresh RocksDbLog with default LogOptions
//     (max_batch_size 256, checkpoint_interval_ms 0: a signed checkpoint,
//     a second synced write, after every group commit); for information,
//     also with checkpoint_interval_ms 1000. Appends/s is the
//     appends acknowledged inside the timed window over its wall time,
//     after an untimed warm-up; each cell is the median (and best) of
//     --reps runs (default 3), the systems taking turns. Peers, same writer
//     counts, same value size, same filesystem, each in its own fresh DB
//     directory:
//       * "RocksDB Put(sync)": every writer calls db->Put with sync = true
//         under a new key. No application group commit, but RocksDB's own
//         write group still lets one WAL fsync cover concurrent writers.
//       * "fsync per append": the same Put, serialized under a mutex, so
//         every append pays its own fsync.
//  2. Proof latency at N leaves (1,000,000; --quick 100,000): the log is
//     built once through Append (256 writers, max_batch_size 1024,
//     checkpoint_interval_ms 1000) into <build dir>/bench-data/log-N and
//     reused while it holds exactly N leaves. 10,000 random
//     InclusionProof(index, size) and ConsistencyProof(m, n) calls, single
//     thread, right after opening (the OS may have evicted the files) and
//     again with other queries once warm; p50 / p99 / max. Peer: InMemoryTree
//     (store/merkle.h) of N leaves, the same calls. A sample of the log's
//     proofs is verified against its roots.
//  3. Proof sizes in bytes at several sizes, over every index (inclusion)
//     and every old size 0 < m < n (consistency), computed on InMemoryTree,
//     against ceil(log2 n)*32 and (ceil(log2 n)+1)*32.
//
// Temporary databases live under <build dir>/bench-tmp (not /tmp, which
// may be tmpfs) and are removed after each configuration. The output is
// markdown for BENCHMARKS.md. Numbers are only meaningful on an otherwise
// idle machine; the load average is printed.
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "rocksdb/db.h"
#include "rocksdb/options.h"
#include "store/checkpoint.h"
#include "store/crypto.h"
#include "store/log.h"
#include "store/merkle.h"
#include "store/rocksdb_log.h"

namespace layerproof::bench {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using store::Sha256Hash;

constexpr size_t kLeafBytes = 1024;
constexpr char kOrigin[] = "layerproof.bench/log";

struct Options {
  bool quick = false;
  uint64_t proof_leaves = 1000000;
  double measure_s = 3.0;
  double warmup_s = 0.5;
  int proof_calls = 10000;
  int reps = 3;  // runs per append configuration
  std::vector<int> writers = {1, 8, 64};
};

[[noreturn]] void Die(const std::string& what) {
  std::fprintf(stderr, "log_bench: %s\n", what.c_str());
  std::exit(1);
}

void Check(const absl::Status& s, const std::string& what) {
  if (!s.ok()) Die(what + ": " + s.ToString());
}

template <typename T>
T Must(absl::StatusOr<T> v, const std::string& what) {
  Check(v.status(), what);
  return *std::move(v);
}

void CheckRocks(const rocksdb::Status& s, const std::string& what) {
  if (!s.ok()) Die(what + ": " + s.ToString());
}

std::string LoadAverage() {
  std::ifstream f("/proc/loadavg");
  std::string a, b, c;
  f >> a >> b >> c;
  return a + " " + b + " " + c;
}

// The build directory: the parent of this binary's directory.
fs::path BuildDir() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return fs::current_path();
  return exe.parent_path().parent_path();
}

std::shared_ptr<const store::CheckpointSigner> BenchSigner() {
  // A fixed seed, so the cached proof log reopens under the same key.
  std::array<uint8_t, 32> seed{};
  for (size_t i = 0; i < seed.size(); ++i) seed[i] = static_cast<uint8_t>(i);
  store::Ed25519PrivateKey key =
      Must(store::Ed25519PrivateKey::FromSeed(seed), "key");
  return std::make_shared<const store::CheckpointSigner>(
      Must(store::CheckpointSigner::Create("bench", std::move(key)), "signer"));
}

// Unique 1 KiB leaves: random filler (per writer), then a 24-byte prefix of
// a per-process nonce, the writer and its counter.
class LeafSource {
 public:
  LeafSource(uint64_t nonce, uint64_t writer) : nonce_(nonce), writer_(writer) {
    std::mt19937_64 rng(nonce ^ (writer * 0x9E3779B97F4A7C15ull));
    buf_.resize(kLeafBytes);
    for (char& c : buf_) c = static_cast<char>(rng());
  }
  std::string Next() {
    const uint64_t parts[3] = {nonce_, writer_, counter_++};
    std::memcpy(buf_.data(), parts, sizeof(parts));
    return buf_;
  }

 private:
  uint64_t nonce_, writer_, counter_ = 0;
  std::string buf_;
};

uint64_t RandomNonce() {
  std::random_device rd;
  return (uint64_t{rd()} << 32) ^ rd();
}

// ---------------------------------------------------------------------------
// 1. Durable appends

struct RunResult {
  double per_s = 0;
  uint64_t acked = 0;
  double p50_us = 0, p99_us = 0;
};

double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t i = static_cast<size_t>(std::ceil(p * v.size()));
  if (i > 0) --i;
  return v[std::min(i, v.size() - 1)];
}

// Runs `writers` threads calling append(writer, leaf) until stopped; counts
// the appends acknowledged inside [warm-up end, + measure_s].
RunResult RunWriters(int writers, const Options& o,
                     const std::function<void(int, std::string)>& append) {
  std::atomic<bool> stop{false};
  struct Done {
    Clock::time_point end;
    double us;
  };
  std::vector<std::vector<Done>> done(writers);
  const uint64_t nonce = RandomNonce();
  std::vector<std::thread> threads;
  for (int w = 0; w < writers; ++w) {
    threads.emplace_back([&, w] {
      LeafSource leaves(nonce, w);
      done[w].reserve(1 << 16);
      while (!stop.load(std::memory_order_relaxed)) {
        std::string leaf = leaves.Next();
        const auto t = Clock::now();
        append(w, std::move(leaf));
        const auto e = Clock::now();
        done[w].push_back(
            {e, std::chrono::duration<double, std::micro>(e - t).count()});
      }
    });
  }
  std::this_thread::sleep_for(std::chrono::duration<double>(o.warmup_s));
  const auto t0 = Clock::now();
  std::this_thread::sleep_for(std::chrono::duration<double>(o.measure_s));
  const auto t1 = Clock::now();
  stop = true;
  for (std::thread& t : threads) t.join();
  RunResult r;
  std::vector<double> lat;
  for (const auto& d : done) {
    for (const Done& x : d) {
      if (x.end >= t0 && x.end < t1) lat.push_back(x.us);
    }
  }
  r.acked = lat.size();
  r.per_s = r.acked / std::chrono::duration<double>(t1 - t0).count();
  r.p50_us = Percentile(lat, 0.50);
  r.p99_us = Percentile(std::move(lat), 0.99);
  return r;
}

RunResult BenchLog(const fs::path& dir, int writers, const Options& o,
                   int64_t checkpoint_interval_ms) {
  store::LogOptions lo;
  lo.origin = kOrigin;
  lo.signer = BenchSigner();
  lo.checkpoint_interval_ms = checkpoint_interval_ms;
  std::unique_ptr<store::Log> log =
      Must(store::RocksDbLog::Open(dir.string(), std::move(lo)), "open log");
  RunResult r = RunWriters(writers, o, [&](int, std::string leaf) {
    absl::StatusOr<store::AppendResult> a = log->Append(std::move(leaf));
    Check(a.status(), "append");
    if (a->duplicate) Die("a unique leaf was a duplicate");
  });
  // The log must hold what was acknowledged.
  if (log->Size() < r.acked) Die("log smaller than its acknowledged appends");
  return r;
}

RunResult BenchRocksPeer(const fs::path& dir, int writers, const Options& o,
                         bool serialize) {
  rocksdb::Options opts;
  opts.create_if_missing = true;
  rocksdb::DB* raw = nullptr;
  CheckRocks(rocksdb::DB::Open(opts, dir.string(), &raw), "open peer");
  std::unique_ptr<rocksdb::DB> db(raw);
  rocksdb::WriteOptions sync;
  sync.sync = true;
  absl::Mutex mu;
  std::vector<uint64_t> next(writers, 0);
  return RunWriters(writers, o, [&](int w, std::string leaf) {
    uint64_t key[2] = {static_cast<uint64_t>(w), next[w]++};
    const rocksdb::Slice k(reinterpret_cast<const char*>(key), sizeof(key));
    if (serialize) {
      absl::MutexLock l(&mu);
      CheckRocks(db->Put(sync, k, leaf), "peer put");
    } else {
      CheckRocks(db->Put(sync, k, leaf), "peer put");
    }
  });
}

// The median-rate result of `runs` (latencies from that same run).
RunResult Median(std::vector<RunResult> runs) {
  std::sort(
      runs.begin(), runs.end(),
      [](const RunResult& a, const RunResult& b) { return a.per_s < b.per_s; });
  return runs[runs.size() / 2];
}

double Best(const std::vector<RunResult>& runs) {
  double best = 0;
  for (const RunResult& r : runs) best = std::max(best, r.per_s);
  return best;
}

void AppendSection(const Options& o, const fs::path& tmp) {
  std::printf(
      "## Durable appends: 1 KiB leaves, RocksDbLog vs synced RocksDB "
      "Put\n\n");
  std::printf(
      "RocksDbLog: default LogOptions (max_batch_size 256, "
      "checkpoint_interval_ms 0: one signed checkpoint per batch). "
      "%.1f s warm-up, %.1f s timed, fresh DB per run; %d runs per cell, "
      "the four systems taking turns; median (best). Ratios are of "
      "medians. Latencies are of the median run. Load before: %s\n\n",
      o.warmup_s, o.measure_s, o.reps, LoadAverage().c_str());
  std::printf(
      "| writers | RocksDbLog appends/s | p50 / p99 µs | "
      "RocksDB Put(sync) /s | p50 / p99 µs | ratio | "
      "fsync per append /s | ratio | RocksDbLog, checkpoint "
      "every 1000 ms /s |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|\n");
  int run = 0;
  for (int w : o.writers) {
    auto fresh = [&](const char* what) {
      fs::path d = tmp / (std::string(what) + "-" + std::to_string(run++));
      fs::remove_all(d);
      return d;
    };
    std::vector<RunResult> logs, intervals, peers, serials;
    for (int rep = 0; rep < o.reps; ++rep) {
      const fs::path ld = fresh("log");
      logs.push_back(BenchLog(ld, w, o, 0));
      fs::remove_all(ld);
      const fs::path pd = fresh("peer");
      peers.push_back(BenchRocksPeer(pd, w, o, /*serialize=*/false));
      fs::remove_all(pd);
      const fs::path id = fresh("log-interval");
      intervals.push_back(BenchLog(id, w, o, 1000));
      fs::remove_all(id);
      const fs::path sd = fresh("serial");
      serials.push_back(BenchRocksPeer(sd, w, o, /*serialize=*/true));
      fs::remove_all(sd);
    }
    const RunResult log = Median(logs), peer = Median(peers),
                    interval = Median(intervals), serial = Median(serials);
    std::printf(
        "| %d | **%.0f** (%.0f) | %.0f / %.0f | %.0f (%.0f) | %.0f / %.0f | "
        "**%.2f×** | %.0f (%.0f) | %.1f× | %.0f (%.0f) |\n",
        w, log.per_s, Best(logs), log.p50_us, log.p99_us, peer.per_s,
        Best(peers), peer.p50_us, peer.p99_us, log.per_s / peer.per_s,
        serial.per_s, Best(serials), log.per_s / serial.per_s, interval.per_s,
        Best(intervals));
    std::fflush(stdout);
  }
  std::printf("\nLoad after: %s\n\n", LoadAverage().c_str());
}

// ---------------------------------------------------------------------------
// 2. Proof latency

std::unique_ptr<store::Log> OpenOrBuildProofLog(const fs::path& dir,
                                                uint64_t n) {
  store::LogOptions lo;
  lo.origin = kOrigin;
  lo.signer = BenchSigner();
  lo.max_batch_size = 1024;
  lo.checkpoint_interval_ms = 1000;
  auto open = [&] {
    return Must(store::RocksDbLog::Open(dir.string(), lo), "open proof log");
  };
  if (fs::exists(dir)) {
    std::unique_ptr<store::Log> log = open();
    if (log->Size() == n) {
      std::printf("Reusing the %" PRIu64 "-leaf log in %s.\n\n", n,
                  dir.c_str());
      return log;
    }
    std::printf("Cached log has %" PRIu64 " leaves, want %" PRIu64
                "; rebuilding.\n",
                log->Size(), n);
    log.reset();
    fs::remove_all(dir);
  }
  fs::create_directories(dir.parent_path());
  const fs::path building = dir.string() + ".building";
  fs::remove_all(building);
  std::unique_ptr<store::Log> log =
      Must(store::RocksDbLog::Open(building.string(), lo), "open proof log");
  constexpr int kWriters = 256;
  std::atomic<uint64_t> claimed{0};
  const uint64_t nonce = RandomNonce();
  const auto t0 = Clock::now();
  std::vector<std::thread> threads;
  for (int w = 0; w < kWriters; ++w) {
    threads.emplace_back([&, w] {
      LeafSource leaves(nonce, w);
      while (claimed.fetch_add(1) < n) {
        Check(log->Append(leaves.Next()).status(), "build append");
      }
    });
  }
  for (std::thread& t : threads) t.join();
  const double secs = std::chrono::duration<double>(Clock::now() - t0).count();
  if (log->Size() != n) Die("built log has the wrong size");
  log.reset();
  fs::rename(building, dir);
  std::printf("Built the %" PRIu64
              "-leaf log (1 KiB leaves, %d writers, "
              "max_batch_size 1024, checkpoint_interval_ms 1000) in %.1f s "
              "(%.0f appends/s) into %s.\n\n",
              n, kWriters, secs, n / secs, dir.c_str());
  return open();
}

struct Latency {
  double p50 = 0, p99 = 0, max = 0;
};

template <typename Fn>
Latency Time(int calls, Fn fn) {
  std::vector<double> us(calls);
  for (int i = 0; i < calls; ++i) {
    const auto t = Clock::now();
    fn(i);
    us[i] = std::chrono::duration<double, std::micro>(Clock::now() - t).count();
  }
  Latency l;
  l.p50 = Percentile(us, 0.50);
  l.p99 = Percentile(us, 0.99);
  l.max = *std::max_element(us.begin(), us.end());
  return l;
}

void ProofLatencySection(const Options& o) {
  const uint64_t n = o.proof_leaves;
  std::printf("## Proof latency at %" PRIu64 " leaves\n\n", n);
  const fs::path dir = BuildDir() / "bench-data" / ("log-" + std::to_string(n));
  std::unique_ptr<store::Log> log = OpenOrBuildProofLog(dir, n);

  // The peer: every perfect node in memory, over the same number of leaves.
  store::InMemoryTree mem;
  {
    std::mt19937_64 rng(7);
    for (uint64_t i = 0; i < n; ++i) {
      Sha256Hash h;
      for (size_t j = 0; j < h.size(); j += 8) {
        const uint64_t r = rng();
        std::memcpy(h.data() + j, &r, 8);
      }
      mem.AppendLeafHash(h);
    }
  }

  // The same random queries for both: inclusion (index < size <= n),
  // consistency (1 <= m <= size <= n).
  std::mt19937_64 rng(42);
  const int calls = o.proof_calls;
  // Two sets: the first pass after opening (the OS may have dropped the
  // files from its page cache) and a second pass, with other queries, once
  // the first has warmed the caches: a serving log's steady state.
  std::vector<std::pair<uint64_t, uint64_t>> inc(2 * calls), con(2 * calls);
  for (int i = 0; i < 2 * calls; ++i) {
    const uint64_t size = 1 + rng() % n;
    inc[i] = {rng() % size, size};
    const uint64_t size2 = 1 + rng() % n;
    con[i] = {1 + rng() % size2, size2};
  }
  // Verify a sample of the log's proofs against its roots first (this also
  // warms the block cache no more than a handful of queries would).
  for (int i = 0; i < 100; ++i) {
    const auto [index, size] = inc[i];
    const Sha256Hash root = Must(log->Root(size), "root");
    const Sha256Hash leaf = store::LeafHash(Must(log->Entry(index), "entry"));
    Check(store::VerifyInclusion(
              leaf, index, size,
              Must(log->InclusionProof(index, size), "inclusion"), root),
          "verify inclusion");
    const auto [m, s2] = con[i];
    Check(store::VerifyConsistency(
              m, s2, Must(log->Root(m), "root"), Must(log->Root(s2), "root"),
              Must(log->ConsistencyProof(m, s2), "consistency")),
          "verify consistency");
  }

  size_t sink = 0;
  auto log_inc = [&](int base) {
    return Time(calls, [&](int i) {
      const auto [index, size] = inc[base + i];
      sink += Must(log->InclusionProof(index, size), "inc").size();
    });
  };
  auto log_con = [&](int base) {
    return Time(calls, [&](int i) {
      const auto [m, size] = con[base + i];
      sink += Must(log->ConsistencyProof(m, size), "con").size();
    });
  };
  const Latency cold_inc = log_inc(0), cold_con = log_con(0);
  const Latency warm_inc = log_inc(calls), warm_con = log_con(calls);
  const Latency mem_inc = Time(calls, [&](int i) {
    const auto [index, size] = inc[calls + i];
    sink += Must(store::InclusionProof(mem, index, size), "inc").size();
  });
  const Latency mem_con = Time(calls, [&](int i) {
    const auto [m, size] = con[calls + i];
    sink += Must(store::ConsistencyProof(mem, m, size), "con").size();
  });
  if (sink == 0) Die("no proofs");

  std::printf(
      "%d random calls per cell, single thread, sizes uniform in "
      "[1, %" PRIu64
      "]. \"First pass\": the first calls after opening "
      "the log; \"warm\": %d other random calls right after. Load: %s\n\n",
      calls, n, calls, LoadAverage().c_str());
  std::printf(
      "| proof | RocksDbLog first pass p50 / p99 / max µs | RocksDbLog warm "
      "p50 / p99 / max µs | InMemoryTree p50 / p99 / max µs |\n"
      "|---|---|---|---|\n");
  auto row = [](const char* what, const Latency& a, const Latency& b,
                const Latency& c) {
    std::printf(
        "| %s | %.1f / %.1f / %.0f | %.1f / **%.1f** / %.0f | "
        "%.1f / %.1f / %.0f |\n",
        what, a.p50, a.p99, a.max, b.p50, b.p99, b.max, c.p50, c.p99, c.max);
  };
  row("InclusionProof(index, size)", cold_inc, warm_inc, mem_inc);
  row("ConsistencyProof(m, n)", cold_con, warm_con, mem_con);
  std::printf("\n");
  std::fflush(stdout);
}

// ---------------------------------------------------------------------------
// 3. Proof sizes

int CeilLog2(uint64_t n) {
  int k = 0;
  while ((uint64_t{1} << k) < n) ++k;
  return k;
}

void ProofSizeSection(const Options& o) {
  std::vector<uint64_t> sizes = {1000, 65536, 65537, 100000};
  if (!o.quick) sizes.push_back(1000000);
  std::printf(
      "## Proof sizes (bytes; every index, every old size 0 < m < n)"
      "\n\n");
  std::printf(
      "| n | inclusion max / mean | ⌈log₂ n⌉·32 | consistency max / "
      "mean | (⌈log₂ n⌉+1)·32 |\n|---|---|---|---|---|\n");
  store::InMemoryTree mem;
  Sha256Hash h{};
  for (uint64_t n : sizes) {
    while (mem.size() < n) {
      const uint64_t i = mem.size();
      std::memcpy(h.data(), &i, sizeof(i));
      mem.AppendLeafHash(h);
    }
    size_t inc_max = 0, con_max = 0;
    double inc_sum = 0, con_sum = 0;
    for (uint64_t i = 0; i < n; ++i) {
      const size_t b =
          32 * Must(store::InclusionProof(mem, i, n), "inc").size();
      inc_max = std::max(inc_max, b);
      inc_sum += b;
    }
    for (uint64_t m = 1; m < n; ++m) {
      const size_t b =
          32 * Must(store::ConsistencyProof(mem, m, n), "con").size();
      con_max = std::max(con_max, b);
      con_sum += b;
    }
    const int k = CeilLog2(n);
    std::printf("| %" PRIu64 " | %zu / %.0f | %d | %zu / %.0f | %d |\n", n,
                inc_max, inc_sum / n, k * 32, con_max,
                n > 1 ? con_sum / (n - 1) : 0.0, (k + 1) * 32);
    std::fflush(stdout);
  }
  std::printf("\n");
}

}  // namespace
}  // namespace layerproof::bench

int main(int argc, char** argv) {
  using namespace layerproof::bench;
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--quick") {
      o.quick = true;
      o.proof_leaves = 100000;
      o.measure_s = 1.0;
      o.warmup_s = 0.25;
      o.reps = 1;
    } else if (a == "--reps" && i + 1 < argc) {
      o.reps = std::max(1, std::atoi(argv[++i]));
    } else {
      std::fprintf(stderr, "usage: log_bench [--quick] [--reps N]\n");
      return 2;
    }
  }
  const fs::path tmp =
      BuildDir() / "bench-tmp" / ("log_bench-" + std::to_string(getpid()));
  fs::create_directories(tmp);
  std::printf("# log_bench%s\n\n", o.quick ? " --quick" : "");
  AppendSection(o, tmp);
  ProofLatencySection(o);
  ProofSizeSection(o);
  fs::remove_all(tmp);
  return 0;
}
