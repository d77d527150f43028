// Full and failing disks under RocksDatabase and the RocksDB log (issue 17),
// on the simulated disk (tests/store/simulated_disk.h): a write or an fsync
// that fails with ENOSPC or EIO is refused with a clear error naming the
// database (ResourceExhausted or Unavailable), nothing refused is ever
// acknowledged, nothing acknowledged is lost at a power loss during or
// after the fault, and the database takes writes again once the fault
// clears, without a restart. The journal and the audit store get the same
// checks in tests/integration/power_loss_test.cc.
#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "store/checkpoint.h"
#include "store/crypto.h"
#include "store/log.h"
#include "store/merkle.h"
#include "store/rocksdb_database.h"
#include "store/rocksdb_log.h"
#include "tests/store/simulated_disk.h"
#include "tests/store/temp_dir.h"

namespace layerproof::store {
namespace {

using fixture::TempDir;
using testing::SimulatedDisk;
using Fault = SimulatedDisk::Fault;
using Op = SimulatedDisk::Op;

constexpr char kOrigin[] = "layerproof.test/disk";
constexpr char kKeyName[] = "layerproof.test";

struct Case {
  Op op;
  Fault fault;
  absl::StatusCode code;
  const char* name;
};
const Case kCases[] = {
    {Op::kWrite, Fault::kNoSpace, absl::StatusCode::kResourceExhausted,
     "ENOSPC on write"},
    {Op::kSync, Fault::kNoSpace, absl::StatusCode::kResourceExhausted,
     "ENOSPC on fsync"},
    {Op::kWrite, Fault::kIoError, absl::StatusCode::kUnavailable,
     "EIO on write"},
    {Op::kSync, Fault::kIoError, absl::StatusCode::kUnavailable,
     "EIO on fsync"},
};

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

LogOptions Options(int64_t checkpoint_interval_ms = 0) {
  LogOptions options;
  options.origin = kOrigin;
  options.signer = TestSigner();
  options.checkpoint_interval_ms = checkpoint_interval_ms;
  return options;
}

// A write refused for a fault names the database and says what failed.
void ExpectRefused(const absl::Status& s, const Case& c,
                   const std::string& dir) {
  EXPECT_EQ(s.code(), c.code) << s;
  EXPECT_NE(s.message().find(dir), std::string::npos) << s;
  EXPECT_NE(s.message().find("simulated"), std::string::npos) << s;
}

TEST(RocksDatabaseDiskFaultTest, RefusesWhileTheDiskFailsAndRecoversAfter) {
  for (const Case& c : kCases) {
    SCOPED_TRACE(c.name);
    TempDir tmp;
    SimulatedDisk disk;
    const std::string dir = tmp.path() + "/db";
    std::map<std::string, std::string> acked;
    {
      absl::StatusOr<std::unique_ptr<RocksDatabase>> db = RocksDatabase::Open(
          dir, {"a"}, RocksDatabase::Mode::kReadWrite, "test db", disk.env());
      ASSERT_TRUE(db.ok()) << db.status();
      auto put = [&](const std::string& k) {
        rocksdb::WriteBatch wb;
        wb.Put((*db)->family(0), k, "v" + k);
        return (*db)->Write(&wb, "put " + k);
      };
      ASSERT_TRUE(put("before").ok());
      acked["before"] = "vbefore";
      disk.SetFault(c.op, c.fault);
      for (int i = 0; i < 3; ++i) {  // the fault, then the failed recovery
        ExpectRefused(put("during" + std::to_string(i)), c, dir);
      }
      disk.ClearFaults();
      for (int i = 0; i < 3; ++i) {
        const std::string k = "after" + std::to_string(i);
        ASSERT_TRUE(put(k).ok()) << k;
        acked[k] = "v" + k;
      }
      EXPECT_GT(disk.faults_injected(), 0u);
      disk.PowerOff();
    }
    disk.PowerOn();
    absl::StatusOr<std::unique_ptr<RocksDatabase>> db = RocksDatabase::Open(
        dir, {"a"}, RocksDatabase::Mode::kReadWrite, "test db", disk.env());
    ASSERT_TRUE(db.ok()) << db.status();
    for (const auto& [k, v] : acked) {
      absl::StatusOr<std::optional<std::string>> got =
          (*db)->Get((*db)->family(0), k, k);
      ASSERT_TRUE(got.ok()) << got.status();
      EXPECT_EQ(got->value_or("<lost>"), v) << k;
    }
  }
}

// Regression (found by tests/integration/power_loss_test.cc): a WAL write
// that failed on a database whose memtables were all empty (just opened)
// left RocksDB 7.8 "recovered" by Resume() with the failed WAL writer, and
// the next write aborted the process (an assertion in Debian's build).
// RocksDatabase now keeps a marker in the memtable (GuardMemtable).
TEST(RocksDatabaseDiskFaultTest, FailedFirstWriteAfterOpenRecovers) {
  for (const Case& c : kCases) {
    SCOPED_TRACE(c.name);
    TempDir tmp;
    SimulatedDisk disk;
    const std::string dir = tmp.path() + "/db";
    {
      absl::StatusOr<std::unique_ptr<RocksDatabase>> db = RocksDatabase::Open(
          dir, {"a"}, RocksDatabase::Mode::kReadWrite, "test db", disk.env());
      ASSERT_TRUE(db.ok()) << db.status();
      rocksdb::WriteBatch wb;
      wb.Put((*db)->family(0), "k", "v");
      ASSERT_TRUE((*db)->Write(&wb, "put").ok());
    }
    absl::StatusOr<std::unique_ptr<RocksDatabase>> db = RocksDatabase::Open(
        dir, {"a"}, RocksDatabase::Mode::kReadWrite, "test db", disk.env());
    ASSERT_TRUE(db.ok()) << db.status();
    rocksdb::WriteBatch wb;
    wb.Put((*db)->family(0), "k2", "v2");
    disk.SetFault(c.op, c.fault);
    ExpectRefused((*db)->Write(&wb, "put"), c, dir);
    disk.ClearFaults();
    ASSERT_TRUE((*db)->Write(&wb, "put").ok());
    absl::StatusOr<std::optional<std::string>> got =
        (*db)->Get((*db)->family(0), "k2", "k2");
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(got->value_or(""), "v2");
  }
}

// Appends from several threads while the disk fails and recovers; every
// acknowledged append survives a power loss at the end, with fsck clean.
TEST(RocksDbLogDiskFaultTest, NeverAcknowledgesWhatItDidNotStore) {
  for (const Case& c : kCases) {
    for (int64_t interval : {0, 5}) {
      SCOPED_TRACE(std::string(c.name) + " interval " +
                   std::to_string(interval));
      TempDir tmp;
      SimulatedDisk disk;
      const std::string dir = tmp.path() + "/log";
      const LogOptions options = Options(interval);
      std::map<uint64_t, std::string> acked;
      std::set<std::string> refused;
      {
        absl::StatusOr<std::unique_ptr<Log>> log =
            RocksDbLog::Open(dir, options, disk.env());
        ASSERT_TRUE(log.ok()) << log.status();
        absl::Mutex mu;
        std::atomic<int> errors_of_the_fault{0};
        std::atomic<bool> faulty{false};
        int rounds = 0;
        auto writer = [&](int t, int n) {
          for (int i = 0; i < n; ++i) {
            const std::string leaf = "r" + std::to_string(rounds) + "-w" +
                                     std::to_string(t) + "-" +
                                     std::to_string(i);
            absl::StatusOr<AppendResult> r = (*log)->Append(leaf);
            absl::MutexLock lock(&mu);
            if (r.ok()) {
              EXPECT_FALSE(r->duplicate) << leaf;
              acked[r->index] = leaf;
            } else {
              EXPECT_TRUE(r.status().code() == c.code ||
                          absl::IsUnavailable(r.status()))
                  << r.status();
              EXPECT_NE(r.status().message().find(dir), std::string::npos)
                  << r.status();
              if (r.status().code() == c.code) ++errors_of_the_fault;
              refused.insert(leaf);
            }
          }
        };
        auto round = [&](int n) {
          std::vector<std::thread> threads;
          for (int t = 0; t < 4; ++t) threads.emplace_back(writer, t, n);
          for (std::thread& th : threads) th.join();
          ++rounds;
        };
        round(5);
        disk.SetFault(c.op, c.fault);
        faulty = true;
        round(5);
        EXPECT_GT(errors_of_the_fault.load(), 0);
        disk.ClearFaults();
        faulty = false;
        // Back without a restart: a checkpoint signing that failed retries
        // on its own, appends succeed again.
        absl::StatusOr<AppendResult> r = (*log)->Append("after the fault");
        ASSERT_TRUE(r.ok()) << r.status();
        acked[r->index] = "after the fault";
        round(5);
        ASSERT_TRUE((*log)->Fsck().ok());
        disk.PowerOff();
      }
      disk.PowerOn();
      absl::StatusOr<std::unique_ptr<Log>> log =
          RocksDbLog::Open(dir, options, disk.env());
      ASSERT_TRUE(log.ok()) << log.status();
      for (const auto& [index, leaf] : acked) {
        absl::StatusOr<std::string> entry = (*log)->Entry(index);
        ASSERT_TRUE(entry.ok()) << index << ": " << entry.status();
        EXPECT_EQ(*entry, leaf) << index;
      }
      // A refused leaf may be in the log (its write reached the disk but
      // its acknowledgement did not), but only under its own index.
      for (const std::string& leaf : refused) {
        absl::StatusOr<uint64_t> index =
            (*log)->IndexOfLeafHash(LeafHash(leaf));
        if (!index.ok()) continue;
        absl::StatusOr<std::string> entry = (*log)->Entry(*index);
        ASSERT_TRUE(entry.ok()) << entry.status();
        EXPECT_EQ(*entry, leaf);
      }
      EXPECT_TRUE((*log)->Fsck().ok());
      EXPECT_TRUE(RocksDbLog::Fsck(dir, kOrigin,
                                   CheckpointVerifier(
                                       kKeyName, options.signer->public_key()),
                                   disk.env())
                      .ok());
    }
  }
}

// An append whose WAL record was written but whose fsync failed is refused
// and its index goes to the next leaf, while the refused record stays in
// the old WAL file. Were RocksDB to replay it at the next open, the refused
// leaf's hash would be indexed under another leaf's index and appending it
// again would answer that index as a "duplicate". Resume() (before the next
// write) abandons that WAL, so the refused leaf is simply absent.
TEST(RocksDbLogDiskFaultTest, RefusedAppendReplayedAtOpenIsNotADuplicate) {
  TempDir tmp;
  SimulatedDisk disk;
  const std::string dir = tmp.path() + "/log";
  // A checkpoint interval, so that a batch is written with its own fsync.
  const LogOptions options = Options(/*checkpoint_interval_ms=*/60000);
  {
    absl::StatusOr<std::unique_ptr<Log>> log =
        RocksDbLog::Open(dir, options, disk.env());
    ASSERT_TRUE(log.ok()) << log.status();
    ASSERT_TRUE((*log)->Append("first").ok());
  }
  uint64_t next_index = 0;
  {
    absl::StatusOr<std::unique_ptr<Log>> log =
        RocksDbLog::Open(dir, options, disk.env());
    ASSERT_TRUE(log.ok()) << log.status();
    // Signs a checkpoint (the first after an open is due at once), so the
    // next batch is not followed by one and carries its own fsync.
    ASSERT_TRUE((*log)->Append("second").ok());
    disk.SetFault(Op::kSync, Fault::kIoError);
    EXPECT_TRUE(absl::IsUnavailable((*log)->Append("refused").status()));
    disk.ClearFaults();
    absl::StatusOr<AppendResult> next = (*log)->Append("next");
    ASSERT_TRUE(next.ok()) << next.status();
    EXPECT_EQ(next->index, 2u) << "the refused leaf took no index";
    next_index = next->index;
  }
  absl::StatusOr<std::unique_ptr<Log>> log =
      RocksDbLog::Open(dir, options, disk.env());
  ASSERT_TRUE(log.ok()) << log.status();
  absl::StatusOr<std::string> at = (*log)->Entry(next_index);
  ASSERT_TRUE(at.ok()) << at.status();
  EXPECT_EQ(*at, "next");
  EXPECT_TRUE(
      absl::IsNotFound((*log)->IndexOfLeafHash(LeafHash("refused")).status()));
  absl::StatusOr<AppendResult> again = (*log)->Append("refused");
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_FALSE(again->duplicate) << "index " << again->index;
  absl::StatusOr<std::string> stored = (*log)->Entry(again->index);
  ASSERT_TRUE(stored.ok()) << stored.status();
  EXPECT_EQ(*stored, "refused");
  EXPECT_TRUE((*log)->Fsck().ok());
}

}  // namespace
}  // namespace layerproof::store
