// The crash loop (issue 17): a verifier's log and audit store and a
// prover's journal under concurrent appends, submissions and audits
// (tests/integration/store_workload.h), crashed again and again, on one
// growing set of databases per test:
//   - kPowerLosses simulated power losses on the simulated disk
//     (tests/store/simulated_disk.h: every write not made durable by an
//     fsync, and every name not made durable by a directory fsync, is gone);
//   - kKills SIGKILLs of a child process running the same workload on the
//     real disk (store_crash_child.cc).
// Each crash comes after a random number of acknowledgements or a random
// time, whichever is first. After each one:
//   - the log, opened read-only as it was left, passes RocksDbLog::Fsck
//     (what `layerproof log fsck` runs; the binary itself runs after every
//     kill and every 25th power loss);
//   - the three databases reopen, and every acknowledgement ever made holds:
//     appends at their index with their bytes, journal entries and their
//     inclusions, verdicts indexed with their audit done;
//   - every checkpoint ever seen is consistent with the recovered log (a
//     verified consistency proof), two of one size have one root, and the
//     recovered log's checkpoint covers it whole; Log::Fsck passes.
// Then: the journal and the audit store under ENOSPC and EIO (the log's own
// tests are tests/store/disk_fault_test.cc).
// LP_CRASH_SEED=N replays a run (the seed is printed).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "store/rocksdb_log.h"
#include "tests/integration/run_command.h"
#include "tests/integration/sanitizer_build.h"
#include "tests/integration/store_workload.h"
#include "tests/store/simulated_disk.h"
#include "tests/store/temp_dir.h"

namespace layerproof::integration {
namespace {

using store::fixture::TempDir;
using store::testing::SimulatedDisk;
using Clock = std::chrono::steady_clock;

constexpr int kPowerLosses = 200;
constexpr int kKills = 50;
// A crash comes after up to this many acknowledgements or milliseconds.
constexpr int kMaxAcks = 60;
constexpr int kMaxMillis = 40;
constexpr int kMaxKillAcks = 1500;
// A child of the regular build acknowledges its first append about 100 ms
// after it starts; under TSan (RocksDB instrumented too) about 1 s
// (2026-12-06, 2-core VM under load), so the TSan build waits ten times as
// long: with 300 ms there every kill landed before the first append.
constexpr int kMaxKillMillis = kUnderThreadSanitizer ? 3000 : 300;
// `layerproof log fsck` runs after every this many power losses.
constexpr int kCliFsckEvery = 25;
// A child that neither acknowledges nor dies for this long is hung.
constexpr auto kHangLimit = std::chrono::seconds(30);

// Durability comes from the simulated disk's model (power losses) or the
// page cache (SIGKILL), never from the medium: run on tmpfs when there is
// one, where an fsync costs nothing, so that 250 recoveries fit in CI time.
void PreferTmpfs() {
  std::error_code ec;
  if (std::filesystem::is_directory("/dev/shm", ec)) {
    setenv("TMPDIR", "/dev/shm", /*overwrite=*/1);
  }
}

uint64_t Seed() {
  uint64_t seed = std::random_device()();
  if (const char* s = std::getenv("LP_CRASH_SEED")) seed = std::stoull(s);
  std::printf("LP_CRASH_SEED=%llu\n", static_cast<unsigned long long>(seed));
  return seed;
}

const store::CheckpointVerifier& Verifier() {
  static const store::CheckpointVerifier* verifier =
      new store::CheckpointVerifier(kWorkloadKeyName,
                                    WorkloadSigner()->public_key());
  return *verifier;
}

// `layerproof log fsck` on the log in `dir`, as an operator runs it.
void ExpectCliFsckClean(const std::string& dir, const std::string& pub) {
  const CommandResult r =
      RunLayerproof({"log", "fsck", "--db", dir, "--origin", kWorkloadOrigin,
                     "--key-name", kWorkloadKeyName, "--pub", pub},
                    std::chrono::seconds(60));
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("consistent"), std::string::npos) << r.out;
}

std::string WritePublicKey(const std::string& dir) {
  const std::string path = dir + "/log.pub";
  std::ofstream(path) << WorkloadSigner()->public_key().ToPem();
  return path;
}

// Lines from the workload's threads, collected until the crash.
class LineCollector {
 public:
  void Add(const std::string& line) {
    absl::MutexLock lock(&mu_);
    lines_.push_back(line);
  }
  // Waits until `n` lines came or `deadline` passed.
  void AwaitLines(size_t n, absl::Time deadline) {
    absl::MutexLock lock(&mu_);
    auto enough = [this, n]() ABSL_SHARED_LOCKS_REQUIRED(mu_) {
      return lines_.size() >= n;
    };
    mu_.AwaitWithDeadline(absl::Condition(&enough), deadline);
  }
  std::vector<std::string> Take() {
    absl::MutexLock lock(&mu_);
    return std::move(lines_);
  }

 private:
  absl::Mutex mu_;
  std::vector<std::string> lines_ ABSL_GUARDED_BY(mu_);
};

TEST(PowerLossTest, NothingAcknowledgedIsLostAcrossPowerLosses) {
  std::mt19937_64 rng(Seed());
  std::uniform_int_distribution<int> acks_before(0, kMaxAcks);
  std::uniform_int_distribution<int> millis_before(0, kMaxMillis);
  PreferTmpfs();
  TempDir tmp("lp_power_loss");
  const std::string root = tmp.path() + "/node";
  const std::string pub = WritePublicKey(tmp.path());
  SimulatedDisk disk;
  Acks acks;
  uint64_t files_cut = 0;
  int lost_before_creation = 0;
  int workload_errors = 0;
  const Clock::time_point start = Clock::now();
  for (int loss = 0; loss < kPowerLosses; ++loss) {
    SCOPED_TRACE("power loss " + std::to_string(loss));
    {
      absl::StatusOr<NodeStores> stores = NodeStores::Open(root, disk.env());
      ASSERT_TRUE(stores.ok()) << stores.status();
      if (loss > 0) {
        acks.Check(*stores);
        if (HasFatalFailure()) return;
      }
      LineCollector lines;
      Workload workload(*stores, loss,
                        [&lines](const std::string& l) { lines.Add(l); });
      lines.AwaitLines(acks_before(rng),
                       absl::Now() + absl::Milliseconds(millis_before(rng)));
      disk.PowerOff();
      workload.Stop();
      workload_errors += workload.errors();
      for (const std::string& line : lines.Take()) acks.Add(line);
    }  // the databases are torn down with the power off: they write nothing
    files_cut += disk.PowerOn();
    // The log as the power loss left it, read-only, before any recovery.
    absl::StatusOr<store::LogFsckReport> fsck = store::RocksDbLog::Fsck(
        root + "/log", kWorkloadOrigin, Verifier(), disk.env());
    if (absl::IsNotFound(fsck.status())) {
      ASSERT_EQ(acks.leaves(), 0u) << "acknowledged, yet no log";
      ++lost_before_creation;
      continue;
    }
    ASSERT_TRUE(fsck.ok()) << fsck.status();
    ASSERT_GE(fsck->size, acks.MinSize());
    if (loss % kCliFsckEvery == kCliFsckEvery - 1) {
      ExpectCliFsckClean(root + "/log", pub);
    }
    if (HasFailure()) return;
  }
  absl::StatusOr<NodeStores> stores = NodeStores::Open(root, disk.env());
  ASSERT_TRUE(stores.ok()) << stores.status();
  acks.Check(*stores);
  EXPECT_GT(acks.leaves(), 0u);
  EXPECT_GT(acks.verdicts(), 0u);
  const double seconds =
      std::chrono::duration<double>(Clock::now() - start).count();
  std::printf(
      "%d power losses in %.1f s: %llu appends, %llu inclusions, %llu "
      "verdicts and %llu checkpoints acknowledged, log size %llu; %llu files "
      "cut back or removed at power-on, %d losses before the databases "
      "existed, %d store calls failed with the power off\n",
      kPowerLosses, seconds, static_cast<unsigned long long>(acks.leaves()),
      static_cast<unsigned long long>(acks.inclusions()),
      static_cast<unsigned long long>(acks.verdicts()),
      static_cast<unsigned long long>(acks.checkpoints_seen()),
      static_cast<unsigned long long>(stores->log->Size()),
      static_cast<unsigned long long>(files_cut), lost_before_creation,
      workload_errors);
}

// Runs store_crash_child on `root` as run `run` until it has reported
// `max_acks` lines or `max_time` has passed, SIGKILLs it, and adds every
// line it wrote to `acks`.
void RunChildAndKill(const std::string& root, int run, int max_acks,
                     std::chrono::milliseconds max_time, Acks* acks) {
  int fds[2];
  ASSERT_EQ(pipe2(fds, O_CLOEXEC), 0);
  const std::string run_text = std::to_string(run);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    // Only async-signal-safe calls until exec.
    dup2(fds[1], STDOUT_FILENO);
    execl(LP_STORE_CRASH_CHILD, LP_STORE_CRASH_CHILD, root.c_str(),
          run_text.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  close(fds[1]);
  std::string buffer;
  int lines = 0;
  auto feed = [&](const char* data, size_t n) {
    buffer.append(data, n);
    size_t begin = 0;
    for (size_t nl; (nl = buffer.find('\n', begin)) != std::string::npos;
         begin = nl + 1) {
      acks->Add(buffer.substr(begin, nl - begin));
      ++lines;
    }
    buffer.erase(0, begin);
  };
  const Clock::time_point kill_at = Clock::now() + max_time;
  bool exited = false;
  char buf[1 << 16];
  while (lines < max_acks && Clock::now() < kill_at) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        kill_at - Clock::now());
    pollfd p{fds[0], POLLIN, 0};
    const int ready =
        poll(&p, 1, static_cast<int>(std::max<int64_t>(left.count(), 0)) + 1);
    if (ready <= 0) continue;  // the deadline, or EINTR
    const ssize_t n = read(fds[0], buf, sizeof(buf));
    if (n == 0) {
      exited = true;
      break;
    }
    if (n > 0) feed(buf, static_cast<size_t>(n));
  }
  kill(pid, SIGKILL);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  const Clock::time_point hang_deadline = Clock::now() + kHangLimit;
  for (ssize_t n; (n = read(fds[0], buf, sizeof(buf))) != 0;) {
    ASSERT_TRUE(n > 0 || errno == EINTR) << "read: " << errno;
    ASSERT_LT(Clock::now(), hang_deadline);
    if (n > 0) feed(buf, static_cast<size_t>(n));
  }
  close(fds[0]);
  EXPECT_FALSE(exited) << "the child exited by itself, status " << status;
  EXPECT_EQ(buffer, "") << "a torn acknowledgement line";
}

TEST(PowerLossTest, NothingAcknowledgedIsLostAcrossSigkills) {
  std::mt19937_64 rng(Seed());
  std::uniform_int_distribution<int> acks_before(1, kMaxKillAcks);
  std::uniform_int_distribution<int> millis_before(1, kMaxKillMillis);
  PreferTmpfs();
  TempDir tmp("lp_sigkill");
  const std::string root = tmp.path() + "/node";
  const std::string pub = WritePublicKey(tmp.path());
  Acks acks;
  int before_creation = 0;
  const Clock::time_point start = Clock::now();
  for (int kill = 0; kill < kKills; ++kill) {
    SCOPED_TRACE("kill " + std::to_string(kill));
    RunChildAndKill(root, kill, acks_before(rng),
                    std::chrono::milliseconds(millis_before(rng)), &acks);
    if (HasFailure()) return;
    if (!std::filesystem::exists(root + "/log/CURRENT")) {
      ASSERT_EQ(acks.leaves(), 0u) << "acknowledged, yet no log";
      ++before_creation;
      continue;
    }
    ExpectCliFsckClean(root + "/log", pub);
    absl::StatusOr<NodeStores> stores = NodeStores::Open(root, nullptr);
    ASSERT_TRUE(stores.ok()) << stores.status();
    acks.Check(*stores);
    if (HasFailure()) return;
  }
  EXPECT_GT(acks.leaves(), 0u);
  std::printf(
      "%d kills in %.1f s: %llu appends, %llu inclusions, %llu verdicts and "
      "%llu checkpoints acknowledged; %d kills before the log existed\n",
      kKills, std::chrono::duration<double>(Clock::now() - start).count(),
      static_cast<unsigned long long>(acks.leaves()),
      static_cast<unsigned long long>(acks.inclusions()),
      static_cast<unsigned long long>(acks.verdicts()),
      static_cast<unsigned long long>(acks.checkpoints_seen()),
      before_creation);
}

// The journal and the audit store on a full or failing disk: a write is
// refused with the fault's code naming the database, the store takes writes
// again once the fault clears (no restart), and after a power loss every
// acknowledged write is there and no refused one is.
TEST(DiskFaultTest, JournalAndAuditStoreRefuseWhileTheDiskFails) {
  using Fault = SimulatedDisk::Fault;
  using Op = SimulatedDisk::Op;
  struct Case {
    Op op;
    Fault fault;
    absl::StatusCode code;
  };
  for (const Case& c :
       {Case{Op::kWrite, Fault::kNoSpace, absl::StatusCode::kResourceExhausted},
        Case{Op::kSync, Fault::kNoSpace, absl::StatusCode::kResourceExhausted},
        Case{Op::kWrite, Fault::kIoError, absl::StatusCode::kUnavailable},
        Case{Op::kSync, Fault::kIoError, absl::StatusCode::kUnavailable}}) {
    SCOPED_TRACE(std::to_string(static_cast<int>(c.op)) + "/" +
                 std::to_string(static_cast<int>(c.fault)));
    TempDir tmp("lp_disk_fault");
    SimulatedDisk disk;
    const std::string root = tmp.path() + "/node";
    std::vector<std::string> stored, refused;
    auto entry = [](const std::string& id) {
      v1::JournalEntry e;
      e.set_request_id(id);
      e.set_created_at_unix_nanos(1);
      return e;
    };
    auto verdict = [](verifier::AuditStoreBatch& b, const std::string& id) {
      v1::VerdictIndexEntry v;
      v.set_request_id(id);
      b.PutVerdict(static_cast<uint64_t>(id.back()), v);
    };
    auto put_both = [&](const NodeStores& s, const std::string& id,
                        absl::Status* journal, absl::Status* audits) {
      *journal = s.journal->Put(entry(id));
      verifier::AuditStoreBatch b;
      verdict(b, id);
      *audits = s.audits->Write(b);
    };
    {
      absl::StatusOr<NodeStores> stores = NodeStores::Open(root, disk.env());
      ASSERT_TRUE(stores.ok()) << stores.status();
      absl::Status j, a;
      put_both(*stores, "request-before-A", &j, &a);
      ASSERT_TRUE(j.ok() && a.ok()) << j << a;
      stored.push_back("request-before-A");
      disk.SetFault(c.op, c.fault);
      for (const char* id : {"request-during-B", "request-during-C"}) {
        put_both(*stores, id, &j, &a);
        EXPECT_EQ(j.code(), c.code) << j;
        EXPECT_NE(j.message().find("journal " + root + "/journal"),
                  std::string::npos)
            << j;
        EXPECT_EQ(a.code(), c.code) << a;
        EXPECT_NE(a.message().find("audit store " + root + "/audits"),
                  std::string::npos)
            << a;
        refused.push_back(id);
      }
      disk.ClearFaults();
      put_both(*stores, "request-after--D", &j, &a);
      ASSERT_TRUE(j.ok() && a.ok()) << j << a;
      stored.push_back("request-after--D");
      disk.PowerOff();
    }
    disk.PowerOn();
    absl::StatusOr<NodeStores> stores = NodeStores::Open(root, disk.env());
    ASSERT_TRUE(stores.ok()) << stores.status();
    for (const std::string& id : stored) {
      EXPECT_TRUE(stores->journal->Get(id).ok()) << id;
      absl::StatusOr<std::optional<v1::VerdictIndexEntry>> v =
          stores->audits->Verdict(static_cast<uint64_t>(id.back()));
      ASSERT_TRUE(v.ok()) << v.status();
      EXPECT_TRUE(v->has_value()) << id;
    }
    for (const std::string& id : refused) {
      EXPECT_TRUE(absl::IsNotFound(stores->journal->Get(id).status())) << id;
      absl::StatusOr<std::optional<v1::VerdictIndexEntry>> v =
          stores->audits->Verdict(static_cast<uint64_t>(id.back()));
      ASSERT_TRUE(v.ok()) << v.status();
      EXPECT_FALSE(v->has_value()) << id;
    }
  }
}

}  // namespace
}  // namespace layerproof::integration
