// The RocksDB log survives SIGKILL: a child process (log_crash_child.cc)
// appends with 16 writers and reports each acknowledged append on a pipe;
// the test kills it at a random moment (after a random number of
// acknowledgements or a random time since it started, whichever comes
// first), at least kKills times on one growing log. After each kill:
//   - a read-only fsck of the directory, before any recovery, passes;
//   - the log reopens (recovery signs the checkpoint a crash may have
//     left unsigned), and every index ever acknowledged holds its exact
//     bytes, indexed under its leaf hash;
//   - the latest checkpoint verifies, covers the whole tree, has the tree's
//     root, and is consistent with the previous kill's checkpoint;
//   - Log::Fsck passes.
// LP_CRASH_SEED=N replays a run (the seed is printed). The read-only
// RocksDbLog::Fsck the crash test leans on (and `layerproof log fsck` runs)
// has its own tests at the end.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "rocksdb/db.h"
#include "store/checkpoint.h"
#include "store/crypto.h"
#include "store/internal/log_keys.h"
#include "store/log.h"
#include "store/merkle.h"
#include "store/rocksdb_log.h"
#include "tests/store/temp_dir.h"

namespace layerproof::store {
namespace {

using fixture::TempDir;

// As in log_crash_child.cc.
constexpr char kOrigin[] = "layerproof.test/crash";
constexpr char kKeyName[] = "layerproof.test";

constexpr int kKills = 50;
constexpr int kMaxAcksBeforeKill = 300;
constexpr int kMaxMillisBeforeKill = 400;
// A child that neither acknowledges nor dies for this long is hung.
constexpr auto kHangLimit = std::chrono::seconds(30);

using Clock = std::chrono::steady_clock;

std::shared_ptr<const CheckpointSigner> TestSigner() {
  std::array<uint8_t, 32> seed;
  seed.fill(7);
  absl::StatusOr<Ed25519PrivateKey> key = Ed25519PrivateKey::FromSeed(seed);
  EXPECT_TRUE(key.ok()) << key.status();
  absl::StatusOr<CheckpointSigner> signer =
      CheckpointSigner::Create(kKeyName, *std::move(key));
  EXPECT_TRUE(signer.ok()) << signer.status();
  return std::make_shared<const CheckpointSigner>(*std::move(signer));
}

// The child's acknowledged appends, parsed from its stdout.
class AckReader {
 public:
  explicit AckReader(std::map<uint64_t, std::string>* acked) : acked_(acked) {}

  // Parses the complete lines in `buffer_` after appending `data`.
  void Feed(const char* data, size_t n) {
    buffer_.append(data, n);
    size_t start = 0;
    for (size_t nl; (nl = buffer_.find('\n', start)) != std::string::npos;
         start = nl + 1) {
      Parse(buffer_.substr(start, nl - start));
    }
    buffer_.erase(0, start);
  }
  int count() const { return count_; }
  const std::string& partial() const { return buffer_; }

 private:
  void Parse(const std::string& line) {
    const size_t space = line.find(' ');
    ASSERT_NE(space, std::string::npos) << line;
    const uint64_t index = std::stoull(line.substr(0, space));
    std::string leaf;
    const std::string hex = line.substr(space + 1);
    ASSERT_EQ(hex.size() % 2, 0u) << line;
    for (size_t i = 0; i < hex.size(); i += 2) {
      leaf.push_back(
          static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16)));
    }
    auto [it, fresh] = acked_->emplace(index, leaf);
    EXPECT_TRUE(fresh && it->second == leaf)
        << "index " << index << " acknowledged twice";
    ++count_;
  }

  std::map<uint64_t, std::string>* acked_;
  std::string buffer_;
  int count_ = 0;
};

// Runs the child on `dir` as run `run` until it has acknowledged `max_acks`
// appends or `max_time` has passed since it started, SIGKILLs it, and
// collects every acknowledgement it wrote.
void RunChildAndKill(const std::string& dir, int run, int max_acks,
                     std::chrono::microseconds max_time,
                     std::map<uint64_t, std::string>* acked) {
  int fds[2];
  ASSERT_EQ(pipe2(fds, O_CLOEXEC), 0);
  const std::string run_text = std::to_string(run);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    // Only async-signal-safe calls until exec.
    dup2(fds[1], STDOUT_FILENO);
    execl(LP_CRASH_CHILD, LP_CRASH_CHILD, dir.c_str(), run_text.c_str(),
          static_cast<char*>(nullptr));
    _exit(127);
  }
  close(fds[1]);
  AckReader reader(acked);
  const Clock::time_point kill_at = Clock::now() + max_time;
  bool exited = false;
  char buf[1 << 16];
  while (reader.count() < max_acks && Clock::now() < kill_at) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        kill_at - Clock::now());
    pollfd p{fds[0], POLLIN, 0};
    const int ready =
        poll(&p, 1, static_cast<int>(std::max<int64_t>(left.count(), 0)) + 1);
    if (ready <= 0) continue;  // the deadline, or EINTR
    const ssize_t n = read(fds[0], buf, sizeof(buf));
    if (n == 0) {
      exited = true;  // the child died by itself
      break;
    }
    if (n > 0) reader.Feed(buf, static_cast<size_t>(n));
  }
  kill(pid, SIGKILL);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  // What the child wrote before it died was acknowledged too.
  const Clock::time_point hang_deadline = Clock::now() + kHangLimit;
  for (ssize_t n; (n = read(fds[0], buf, sizeof(buf))) != 0;) {
    ASSERT_TRUE(n > 0 || errno == EINTR) << "read: " << errno;
    ASSERT_LT(Clock::now(), hang_deadline);
    if (n > 0) reader.Feed(buf, static_cast<size_t>(n));
  }
  close(fds[0]);
  EXPECT_FALSE(exited) << "the child exited by itself, status " << status;
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
      << "the child was not killed: status " << status;
  EXPECT_EQ(reader.partial(), "") << "a torn acknowledgement line";
}

TEST(LogCrashTest, AcknowledgedAppendsSurviveSigkill) {
  uint64_t seed = std::random_device()();
  if (const char* s = std::getenv("LP_CRASH_SEED")) seed = std::stoull(s);
  std::printf("LP_CRASH_SEED=%llu\n", static_cast<unsigned long long>(seed));
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> acks_before_kill(1, kMaxAcksBeforeKill);
  std::uniform_int_distribution<int> millis_before_kill(1,
                                                        kMaxMillisBeforeKill);

  TempDir tmp;
  const std::string dir = tmp.path() + "/log";
  const std::shared_ptr<const CheckpointSigner> signer = TestSigner();
  const CheckpointVerifier verifier(kKeyName, signer->public_key());
  std::map<uint64_t, std::string> acked;  // every acknowledgement so far
  Checkpoint previous;  // the last kill's checkpoint; first the empty tree
  previous.size = 0;
  previous.root = EmptyRoot();
  int kills_before_an_ack = 0;   // e.g. during the child's recovery
  int kills_before_signing = 0;  // the checkpoint lagged the tree

  for (int kill = 0; kill < kKills; ++kill) {
    SCOPED_TRACE("kill " + std::to_string(kill));
    const size_t acked_before = acked.size();
    RunChildAndKill(dir, kill, acks_before_kill(rng),
                    std::chrono::milliseconds(millis_before_kill(rng)), &acked);
    if (HasFatalFailure() || HasFailure()) return;
    if (acked.size() == acked_before) ++kills_before_an_ack;
    const uint64_t min_size = acked.empty() ? 0 : acked.rbegin()->first + 1;

    // The directory as the crash left it, read-only. A kill before RocksDB
    // finished creating the database (no CURRENT yet, nothing ever
    // acknowledged) leaves nothing to check; the next Open creates it.
    const bool never_created =
        acked.empty() &&
        !std::filesystem::exists(std::filesystem::path(dir) / "CURRENT");
    std::optional<LogFsckReport> report;
    if (!never_created) {
      absl::StatusOr<LogFsckReport> fsck =
          RocksDbLog::Fsck(dir, kOrigin, verifier);
      ASSERT_TRUE(fsck.ok()) << fsck.status();
      report = *fsck;
      EXPECT_GE(report->size, min_size);
      EXPECT_GE(report->checkpoint_size, previous.size);
      if (report->checkpoint_size < report->size) ++kills_before_signing;
    }

    LogOptions options;
    options.origin = kOrigin;
    options.signer = signer;
    absl::StatusOr<std::unique_ptr<Log>> opened =
        RocksDbLog::Open(dir, options);
    ASSERT_TRUE(opened.ok()) << opened.status();
    const Log& log = **opened;
    if (report) ASSERT_EQ(log.Size(), report->size);
    ASSERT_GE(log.Size(), min_size);

    for (const auto& [index, leaf] : acked) {
      absl::StatusOr<std::string> entry = log.Entry(index);
      ASSERT_TRUE(entry.ok()) << "index " << index << ": " << entry.status();
      ASSERT_EQ(*entry, leaf) << "index " << index;
    }
    auto it = acked.begin();
    for (size_t i = 0; i < acked_before; ++i) ++it;
    for (; it != acked.end(); ++it) {
      absl::StatusOr<uint64_t> index =
          log.IndexOfLeafHash(LeafHash(it->second));
      ASSERT_TRUE(index.ok()) << index.status();
      EXPECT_EQ(*index, it->first);
    }

    absl::StatusOr<std::string> note = log.LatestCheckpoint();
    ASSERT_TRUE(note.ok()) << note.status();
    absl::StatusOr<Checkpoint> cp = verifier.Verify(*note, kOrigin);
    ASSERT_TRUE(cp.ok()) << cp.status();
    EXPECT_EQ(cp->size, log.Size()) << "recovery left the tree unsigned";
    absl::StatusOr<Sha256Hash> root = log.Root(cp->size);
    ASSERT_TRUE(root.ok()) << root.status();
    EXPECT_EQ(HexEncode(*root), HexEncode(cp->root));
    if (report) EXPECT_EQ(HexEncode(report->root), HexEncode(cp->root));
    absl::StatusOr<std::vector<Sha256Hash>> proof =
        log.ConsistencyProof(previous.size, cp->size);
    ASSERT_TRUE(proof.ok()) << proof.status();
    absl::Status consistent = VerifyConsistency(
        previous.size, cp->size, previous.root, cp->root, *proof);
    EXPECT_TRUE(consistent.ok()) << "checkpoint " << cp->size << " vs "
                                 << previous.size << ": " << consistent;

    absl::Status fsck = log.Fsck();
    EXPECT_TRUE(fsck.ok()) << fsck;
    previous = *std::move(cp);
    opened->reset();  // closes the log before the next child opens it
    if (HasFailure()) return;
  }
  // The log grew across the crashes.
  EXPECT_GT(previous.size, 0u);
  std::printf(
      "%d kills (%d before an acknowledgement, %d between a batch and its "
      "checkpoint), %zu acknowledged appends, final size %llu\n",
      kKills, kills_before_an_ack, kills_before_signing, acked.size(),
      static_cast<unsigned long long>(previous.size));
}

// Regression (issue 13, LP_CRASH_SEED=1722163858): a SIGKILL while RocksDB
// created a new log left CURRENT written but the column families missing,
// and fsck refused the directory. Creation is now atomic
// (store/rocksdb_database.h): kill the child within its first milliseconds,
// kCreationKills times on fresh directories, and every directory is either
// no database at all (nothing acknowledged) or a whole log that fsck passes.
TEST(LogCrashTest, KillDuringCreationLeavesNothingOrAWholeLog) {
  constexpr int kCreationKills = 200;
  uint64_t seed = std::random_device()();
  if (const char* s = std::getenv("LP_CRASH_SEED")) seed = std::stoull(s);
  std::printf("LP_CRASH_SEED=%llu\n", static_cast<unsigned long long>(seed));
  std::mt19937_64 rng(seed);
  const std::shared_ptr<const CheckpointSigner> signer = TestSigner();
  const CheckpointVerifier verifier(kKeyName, signer->public_key());
  TempDir tmp;
  // Calibrate: how long the child takes from exec to its first
  // acknowledgement (start-up, creation, one append) on this machine. The
  // kills are spread uniformly over 1.2 times that, so they land before,
  // during and just after creation.
  std::chrono::microseconds window;
  {
    std::map<uint64_t, std::string> acked;
    const Clock::time_point start = Clock::now();
    RunChildAndKill(tmp.path() + "/calibration", -1, /*max_acks=*/1,
                    std::chrono::milliseconds(10000), &acked);
    ASSERT_GE(acked.size(), 1u);  // several writers may ack at once
    window = std::chrono::duration_cast<std::chrono::microseconds>(
        (Clock::now() - start) * 6 / 5);
  }
  std::uniform_int_distribution<int64_t> micros_before_kill(1, window.count());
  int absent = 0;
  int cut_short = 0;  // killed mid-creation: <dir>.creating was left
  for (int kill = 0; kill < kCreationKills; ++kill) {
    SCOPED_TRACE("kill " + std::to_string(kill));
    const std::string dir = tmp.path() + "/log" + std::to_string(kill);
    std::map<uint64_t, std::string> acked;
    RunChildAndKill(dir, kill, /*max_acks=*/1,
                    std::chrono::microseconds(micros_before_kill(rng)), &acked);
    if (HasFatalFailure() || HasFailure()) return;
    if (std::filesystem::exists(dir + ".creating")) ++cut_short;
    absl::StatusOr<LogFsckReport> fsck =
        RocksDbLog::Fsck(dir, kOrigin, verifier);
    if (absl::IsNotFound(fsck.status())) {
      ++absent;
      ASSERT_TRUE(acked.empty()) << "acknowledged, yet no database";
    } else {
      ASSERT_TRUE(fsck.ok()) << fsck.status();
      EXPECT_GE(fsck->size, acked.size());
    }
    LogOptions options;
    options.origin = kOrigin;
    options.signer = signer;
    absl::StatusOr<std::unique_ptr<Log>> log = RocksDbLog::Open(dir, options);
    ASSERT_TRUE(log.ok()) << log.status();
    for (const auto& [index, leaf] : acked) {
      absl::StatusOr<std::string> entry = (*log)->Entry(index);
      ASSERT_TRUE(entry.ok()) << entry.status();
      EXPECT_EQ(*entry, leaf);
    }
    EXPECT_TRUE((*log)->Fsck().ok());
    log->reset();
    EXPECT_FALSE(std::filesystem::exists(dir + ".creating"));
  }
  std::printf(
      "%d kills within %lld us of exec: %d left no database (%d of them a "
      "creation cut short), %d a whole one\n",
      kCreationKills, static_cast<long long>(window.count()), absent, cut_short,
      kCreationKills - absent);
}

// Opens a fresh log in `dir` and appends leaves 0..n-1.
void FillLog(const std::string& dir, int n,
             std::shared_ptr<const CheckpointSigner> signer) {
  LogOptions options;
  options.origin = kOrigin;
  options.signer = std::move(signer);
  absl::StatusOr<std::unique_ptr<Log>> log = RocksDbLog::Open(dir, options);
  ASSERT_TRUE(log.ok()) << log.status();
  for (int i = 0; i < n; ++i) {
    ASSERT_TRUE((*log)->Append("leaf " + std::to_string(i)).ok());
  }
}

TEST(ReadOnlyFsckTest, ReportsTheSizeAndRootOfAConsistentLog) {
  TempDir tmp;
  const std::string dir = tmp.path() + "/log";
  const std::shared_ptr<const CheckpointSigner> signer = TestSigner();
  FillLog(dir, 10, signer);
  std::vector<std::string> leaves;
  for (int i = 0; i < 10; ++i) leaves.push_back("leaf " + std::to_string(i));
  absl::StatusOr<LogFsckReport> report = RocksDbLog::Fsck(
      dir, kOrigin, CheckpointVerifier(kKeyName, signer->public_key()));
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->size, 10u);
  EXPECT_EQ(report->checkpoint_size, 10u);
  EXPECT_EQ(HexEncode(report->root), HexEncode(RootOfLeaves(leaves)));
}

// Overwrites one value of the log in `dir` (closed), as corruption or a
// crash would.
void RawPut(const std::string& dir, const char* family, const std::string& key,
            const std::string& value) {
  std::vector<rocksdb::ColumnFamilyDescriptor> families;
  for (const char* name : {rocksdb::kDefaultColumnFamilyName.c_str(),
                           internal::kLeavesFamily, internal::kByHashFamily,
                           internal::kNodesFamily, internal::kMetaFamily}) {
    families.emplace_back(name, rocksdb::ColumnFamilyOptions());
  }
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::DB* raw = nullptr;
  ASSERT_TRUE(
      rocksdb::DB::Open(rocksdb::DBOptions(), dir, families, &handles, &raw)
          .ok());
  std::unique_ptr<rocksdb::DB> db(raw);
  for (rocksdb::ColumnFamilyHandle* h : handles) {
    if (h->GetName() == family) {
      EXPECT_TRUE(db->Put(rocksdb::WriteOptions(), h, key, value).ok());
    }
    db->DestroyColumnFamilyHandle(h);
  }
}

TEST(ReadOnlyFsckTest, CorruptNodeIsDataLoss) {
  TempDir tmp;
  const std::string dir = tmp.path() + "/log";
  const std::shared_ptr<const CheckpointSigner> signer = TestSigner();
  FillLog(dir, 10, signer);
  Sha256Hash wrong;
  wrong.fill(0xab);
  RawPut(dir, internal::kNodesFamily, internal::NodeKey(0, 3),
         internal::HashBytes(wrong));
  absl::StatusOr<LogFsckReport> report = RocksDbLog::Fsck(
      dir, kOrigin, CheckpointVerifier(kKeyName, signer->public_key()));
  EXPECT_EQ(report.status().code(), absl::StatusCode::kDataLoss)
      << report.status();
  EXPECT_NE(report.status().message().find("node (0, 3)"), std::string::npos)
      << report.status();
}

TEST(ReadOnlyFsckTest, LaggingCheckpointIsConsistentAndNotSigned) {
  TempDir tmp;
  const std::string dir = tmp.path() + "/log";
  const std::shared_ptr<const CheckpointSigner> signer = TestSigner();
  const CheckpointVerifier verifier(kKeyName, signer->public_key());
  FillLog(dir, 5, signer);
  {
    LogOptions options;
    options.origin = kOrigin;
    options.signer = signer;
    absl::StatusOr<std::unique_ptr<Log>> log = RocksDbLog::Open(dir, options);
    ASSERT_TRUE(log.ok()) << log.status();
    const std::string note5 = *(*log)->LatestCheckpoint();
    for (int i = 5; i < 9; ++i) {
      ASSERT_TRUE((*log)->Append("leaf " + std::to_string(i)).ok());
    }
    log->reset();
    // As if the process died before signing the checkpoint of size 9.
    RawPut(dir, internal::kMetaFamily, internal::kCheckpointKey, note5);
  }
  for (int run = 0; run < 2; ++run) {  // the first signed nothing
    absl::StatusOr<LogFsckReport> report =
        RocksDbLog::Fsck(dir, kOrigin, verifier);
    ASSERT_TRUE(report.ok()) << report.status();
    EXPECT_EQ(report->size, 9u);
    EXPECT_EQ(report->checkpoint_size, 5u);
  }
}

TEST(ReadOnlyFsckTest, AnotherKeysCheckpointIsDataLoss) {
  TempDir tmp;
  const std::string dir = tmp.path() + "/log";
  FillLog(dir, 3, TestSigner());
  std::array<uint8_t, 32> seed;
  seed.fill(8);
  absl::StatusOr<Ed25519PrivateKey> other = Ed25519PrivateKey::FromSeed(seed);
  ASSERT_TRUE(other.ok()) << other.status();
  absl::StatusOr<LogFsckReport> report = RocksDbLog::Fsck(
      dir, kOrigin, CheckpointVerifier(kKeyName, other->public_key()));
  EXPECT_EQ(report.status().code(), absl::StatusCode::kDataLoss)
      << report.status();
}

TEST(ReadOnlyFsckTest, MissingDirectoryIsNotCreated) {
  TempDir tmp;
  const std::string dir = tmp.path() + "/absent";
  absl::StatusOr<LogFsckReport> report = RocksDbLog::Fsck(
      dir, kOrigin, CheckpointVerifier(kKeyName, TestSigner()->public_key()));
  EXPECT_FALSE(report.ok());
  EXPECT_NE(report.status().code(), absl::StatusCode::kDataLoss)
      << report.status();
  EXPECT_FALSE(std::filesystem::exists(dir));
}

TEST(ReadOnlyFsckTest, RunsBesideAnOpenLog) {
  TempDir tmp;
  const std::string dir = tmp.path() + "/log";
  const std::shared_ptr<const CheckpointSigner> signer = TestSigner();
  LogOptions options;
  options.origin = kOrigin;
  options.signer = signer;
  absl::StatusOr<std::unique_ptr<Log>> log = RocksDbLog::Open(dir, options);
  ASSERT_TRUE(log.ok()) << log.status();
  ASSERT_TRUE((*log)->Append("only leaf").ok());
  absl::StatusOr<LogFsckReport> report = RocksDbLog::Fsck(
      dir, kOrigin, CheckpointVerifier(kKeyName, signer->public_key()));
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->size, 1u);
}

}  // namespace
}  // namespace layerproof::store
