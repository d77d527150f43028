// The log conformance suite (store/log.h): one typed suite run against every
// Log implementation (RocksDbLog in a temporary directory, MemoryLog), then
// the RocksDB log's recovery and corruption checks.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "rocksdb/db.h"
#include "store/checkpoint.h"
#include "store/internal/log_keys.h"
#include "store/internal/memory_log_storage.h"
#include "store/internal/sequenced_log.h"
#include "store/log.h"
#include "store/memory_log.h"
#include "store/merkle.h"
#include "store/rocksdb_log.h"
#include "tests/store/temp_dir.h"

namespace layerproof::store {
namespace {

using fixture::TempDir;

constexpr char kOrigin[] = "layerproof.test/log";
constexpr char kKeyName[] = "layerproof.test";

std::shared_ptr<const CheckpointSigner> TestSigner(uint8_t fill = 7) {
  std::array<uint8_t, 32> seed;
  seed.fill(fill);
  absl::StatusOr<Ed25519PrivateKey> key = Ed25519PrivateKey::FromSeed(seed);
  EXPECT_TRUE(key.ok()) << key.status();
  absl::StatusOr<CheckpointSigner> signer =
      CheckpointSigner::Create(kKeyName, *std::move(key));
  EXPECT_TRUE(signer.ok()) << signer.status();
  return std::make_shared<const CheckpointSigner>(*std::move(signer));
}

LogOptions TestOptions() {
  LogOptions o;
  o.origin = kOrigin;
  o.signer = TestSigner();
  return o;
}

struct MemoryBackend {
  absl::StatusOr<std::unique_ptr<Log>> Open(LogOptions options) {
    return MemoryLog::Create(std::move(options));
  }
};

struct RocksDbBackend {
  TempDir dir;
  absl::StatusOr<std::unique_ptr<Log>> Open(LogOptions options) {
    return RocksDbLog::Open(dir.path() + "/log", std::move(options));
  }
};

std::string LeafData(int i) { return "leaf-" + std::to_string(i); }

template <typename Backend>
class LogConformance : public ::testing::Test {
 protected:
  std::unique_ptr<Log> OpenLog(LogOptions options = TestOptions()) {
    absl::StatusOr<std::unique_ptr<Log>> log =
        backend_.Open(std::move(options));
    EXPECT_TRUE(log.ok()) << log.status();
    return log.ok() ? *std::move(log) : nullptr;
  }
  Backend backend_;
};

using Backends = ::testing::Types<MemoryBackend, RocksDbBackend>;
TYPED_TEST_SUITE(LogConformance, Backends);

TYPED_TEST(LogConformance, AppendsReadBackWithDenseIndices) {
  std::unique_ptr<Log> log = this->OpenLog();
  ASSERT_NE(log, nullptr);
  EXPECT_EQ(log->Size(), 0u);
  for (int i = 0; i < 20; ++i) {
    absl::StatusOr<AppendResult> r = log->Append(LeafData(i));
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(*r, (AppendResult{uint64_t(i), false}));
  }
  EXPECT_EQ(log->Size(), 20u);
  for (int i = 0; i < 20; ++i) {
    absl::StatusOr<std::string> e = log->Entry(i);
    ASSERT_TRUE(e.ok()) << e.status();
    EXPECT_EQ(*e, LeafData(i));
    absl::StatusOr<uint64_t> index =
        log->IndexOfLeafHash(LeafHash(LeafData(i)));
    ASSERT_TRUE(index.ok()) << index.status();
    EXPECT_EQ(*index, uint64_t(i));
  }
  EXPECT_TRUE(log->Fsck().ok()) << log->Fsck();
}

TYPED_TEST(LogConformance, DuplicateReturnsTheOriginalIndex) {
  std::unique_ptr<Log> log = this->OpenLog();
  ASSERT_NE(log, nullptr);
  ASSERT_EQ(*log->Append("a"), (AppendResult{0, false}));
  ASSERT_EQ(*log->Append("b"), (AppendResult{1, false}));
  absl::StatusOr<AppendResult> again = log->Append("a");
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(*again, (AppendResult{0, true}));
  EXPECT_EQ(log->Size(), 2u);
  // The empty leaf is a leaf like any other.
  EXPECT_EQ(*log->Append(""), (AppendResult{2, false}));
  EXPECT_EQ(*log->Append(""), (AppendResult{2, true}));
  EXPECT_EQ(log->Size(), 3u);
}

TYPED_TEST(LogConformance, OversizedLeafIsRefusedAndNothingStored) {
  LogOptions options = TestOptions();
  options.max_leaf_bytes = 100;
  std::unique_ptr<Log> log = this->OpenLog(std::move(options));
  ASSERT_NE(log, nullptr);
  absl::StatusOr<AppendResult> r = log->Append(std::string(101, 'x'));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("100"), std::string::npos) << r.status();
  EXPECT_EQ(log->Size(), 0u);
  EXPECT_FALSE(log->IndexOfLeafHash(LeafHash(std::string(101, 'x'))).ok());
  EXPECT_EQ(*log->Append(std::string(100, 'x')), (AppendResult{0, false}));
}

TYPED_TEST(LogConformance, RootsAndProofsVerifyAtEverySize) {
  std::unique_ptr<Log> log = this->OpenLog();
  ASSERT_NE(log, nullptr);
  constexpr int kLeaves = 33;
  std::vector<std::string> leaves;
  for (int i = 0; i < kLeaves; ++i) {
    leaves.push_back(LeafData(i));
    ASSERT_TRUE(log->Append(leaves.back()).ok());
  }
  std::vector<Sha256Hash> roots;
  for (uint64_t size = 0; size <= kLeaves; ++size) {
    absl::StatusOr<Sha256Hash> root = log->Root(size);
    ASSERT_TRUE(root.ok()) << root.status();
    EXPECT_EQ(*root, RootOfLeaves(std::span(leaves).first(size))) << size;
    roots.push_back(*root);
  }
  for (uint64_t size = 1; size <= kLeaves; ++size) {
    for (uint64_t index = 0; index < size; ++index) {
      absl::StatusOr<std::vector<Sha256Hash>> proof =
          log->InclusionProof(index, size);
      ASSERT_TRUE(proof.ok()) << proof.status();
      EXPECT_TRUE(VerifyInclusion(LeafHash(leaves[index]), index, size, *proof,
                                  roots[size])
                      .ok())
          << index << " in " << size;
    }
  }
  for (uint64_t new_size = 0; new_size <= kLeaves; ++new_size) {
    for (uint64_t old_size = 0; old_size <= new_size; ++old_size) {
      absl::StatusOr<std::vector<Sha256Hash>> proof =
          log->ConsistencyProof(old_size, new_size);
      ASSERT_TRUE(proof.ok()) << proof.status();
      EXPECT_TRUE(VerifyConsistency(old_size, new_size, roots[old_size],
                                    roots[new_size], *proof)
                      .ok())
          << old_size << " -> " << new_size;
    }
  }
}

TYPED_TEST(LogConformance, CheckpointVerifiesAndMatchesTheTree) {
  LogOptions options = TestOptions();
  const CheckpointVerifier verifier(kKeyName, options.signer->public_key());
  std::unique_ptr<Log> log = this->OpenLog(std::move(options));
  ASSERT_NE(log, nullptr);
  // A new log has signed its empty tree.
  absl::StatusOr<Checkpoint> empty =
      verifier.Verify(*log->LatestCheckpoint(), kOrigin);
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_EQ(empty->size, 0u);
  EXPECT_EQ(empty->root, EmptyRoot());
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(log->Append(LeafData(i)).ok());
  absl::StatusOr<Checkpoint> cp =
      verifier.Verify(*log->LatestCheckpoint(), kOrigin);
  ASSERT_TRUE(cp.ok()) << cp.status();
  EXPECT_EQ(cp->origin, kOrigin);
  EXPECT_EQ(cp->size, log->Size());
  EXPECT_EQ(cp->root, *log->Root(log->Size()));
  // Another key's verifier refuses it.
  const CheckpointVerifier other(kKeyName, TestSigner(9)->public_key());
  EXPECT_FALSE(other.Verify(*log->LatestCheckpoint(), kOrigin).ok());
}

TYPED_TEST(LogConformance, CheckpointIntervalStillCoversEveryLeaf) {
  LogOptions options = TestOptions();
  options.checkpoint_interval_ms = 50;
  const CheckpointVerifier verifier(kKeyName, options.signer->public_key());
  std::unique_ptr<Log> log = this->OpenLog(std::move(options));
  ASSERT_NE(log, nullptr);
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(log->Append(LeafData(i)).ok());
  // The sequencer's timer signs the owed checkpoint: poll with a deadline.
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(5);
  uint64_t signed_size = 0;
  while (std::chrono::steady_clock::now() < deadline) {
    absl::StatusOr<Checkpoint> cp =
        verifier.Verify(*log->LatestCheckpoint(), kOrigin);
    ASSERT_TRUE(cp.ok()) << cp.status();
    signed_size = cp->size;
    if (signed_size == 10) {
      EXPECT_EQ(cp->root, *log->Root(10));
      break;
    }
    std::this_thread::yield();
  }
  EXPECT_EQ(signed_size, 10u);
}

TYPED_TEST(LogConformance, ConcurrentAppendsGetDistinctDenseIndices) {
  std::unique_ptr<Log> log = this->OpenLog();
  ASSERT_NE(log, nullptr);
  constexpr int kThreads = 8;
  constexpr int kPerThread = 200;
  std::vector<std::vector<uint64_t>> indices(kThreads);
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        absl::StatusOr<AppendResult> r =
            log->Append("t" + std::to_string(t) + "-" + std::to_string(i));
        if (!r.ok() || r->duplicate) {
          ++failures;
          continue;
        }
        indices[t].push_back(r->index);
      }
    });
  }
  for (std::thread& t : threads) t.join();
  ASSERT_EQ(failures.load(), 0);
  ASSERT_EQ(log->Size(), uint64_t(kThreads * kPerThread));
  std::set<uint64_t> all;
  for (int t = 0; t < kThreads; ++t) {
    for (int i = 0; i < kPerThread; ++i) {
      const uint64_t index = indices[t][i];
      all.insert(index);
      EXPECT_EQ(*log->Entry(index),
                "t" + std::to_string(t) + "-" + std::to_string(i));
    }
  }
  EXPECT_EQ(all.size(), size_t(kThreads * kPerThread));
  EXPECT_EQ(*all.rbegin(), uint64_t(kThreads * kPerThread - 1));
  EXPECT_TRUE(log->Fsck().ok()) << log->Fsck();
}

TYPED_TEST(LogConformance, OutOfRangeReadsGiveClearErrors) {
  std::unique_ptr<Log> log = this->OpenLog();
  ASSERT_NE(log, nullptr);
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(log->Append(LeafData(i)).ok());
  absl::StatusOr<std::string> e = log->Entry(3);
  EXPECT_EQ(e.status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_NE(e.status().message().find("index 3"), std::string::npos)
      << e.status();
  absl::StatusOr<Sha256Hash> root = log->Root(4);
  EXPECT_EQ(root.status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_NE(root.status().message().find("size 4 exceeds the log's size 3"),
            std::string::npos)
      << root.status();
  EXPECT_EQ(log->InclusionProof(0, 4).status().code(),
            absl::StatusCode::kOutOfRange);
  EXPECT_EQ(log->InclusionProof(3, 3).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(log->ConsistencyProof(1, 4).status().code(),
            absl::StatusCode::kOutOfRange);
  EXPECT_EQ(log->ConsistencyProof(3, 2).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(log->IndexOfLeafHash(LeafHash("absent")).status().code(),
            absl::StatusCode::kNotFound);
}

TYPED_TEST(LogConformance, ConcurrentDuplicatesAreAppendedOnce) {
  std::unique_ptr<Log> log = this->OpenLog();
  ASSERT_NE(log, nullptr);
  constexpr int kThreads = 8;
  constexpr int kLeaves = 50;
  // results[t][i]: thread t's result for leaf i (every thread appends the
  // same leaves).
  std::vector<std::vector<absl::StatusOr<AppendResult>>> results(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kLeaves; ++i) {
        results[t].push_back(log->Append(LeafData(i)));
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(log->Size(), uint64_t(kLeaves));
  for (int i = 0; i < kLeaves; ++i) {
    int originals = 0;
    absl::StatusOr<uint64_t> index =
        log->IndexOfLeafHash(LeafHash(LeafData(i)));
    ASSERT_TRUE(index.ok()) << index.status();
    for (int t = 0; t < kThreads; ++t) {
      ASSERT_TRUE(results[t][i].ok()) << results[t][i].status();
      EXPECT_EQ(results[t][i]->index, *index);
      if (!results[t][i]->duplicate) ++originals;
    }
    EXPECT_EQ(originals, 1) << "leaf " << i;
    EXPECT_EQ(*log->Entry(*index), LeafData(i));
  }
}

TYPED_TEST(LogConformance, ReadersSeeOnlyCompleteTreesWhileAppending) {
  LogOptions options = TestOptions();
  const CheckpointVerifier verifier(kKeyName, options.signer->public_key());
  std::unique_ptr<Log> log = this->OpenLog(std::move(options));
  ASSERT_NE(log, nullptr);
  std::atomic<bool> done{false};
  std::atomic<int> bad_reads{0};
  std::thread reader([&] {
    while (!done.load()) {
      absl::StatusOr<Checkpoint> cp =
          verifier.Verify(*log->LatestCheckpoint(), kOrigin);
      const uint64_t n = log->Size();
      if (!cp.ok() || cp->size > n) {
        ++bad_reads;
        continue;
      }
      absl::StatusOr<Sha256Hash> root = log->Root(n);
      absl::StatusOr<std::vector<Sha256Hash>> proof =
          log->ConsistencyProof(cp->size, n);
      if (!root.ok() || !proof.ok() ||
          !VerifyConsistency(cp->size, n, cp->root, *root, *proof).ok()) {
        ++bad_reads;
      }
    }
  });
  std::vector<std::thread> writers;
  for (int t = 0; t < 4; ++t) {
    writers.emplace_back([&, t] {
      for (int i = 0; i < 100; ++i) {
        EXPECT_TRUE(log->Append(LeafData(t * 1000 + i)).ok());
      }
    });
  }
  for (std::thread& t : writers) t.join();
  done = true;
  reader.join();
  EXPECT_EQ(bad_reads.load(), 0);
  EXPECT_EQ(log->Size(), 400u);
}

// A store whose node reads can be made to lie, as damaged storage would.
class TamperingStorage : public internal::MemoryLogStorage {
 public:
  absl::StatusOr<Sha256Hash> Node(int level, uint64_t index) const override {
    absl::StatusOr<Sha256Hash> h = MemoryLogStorage::Node(level, index);
    if (h.ok() && tamper_->load() && level == 0 && index == 2) {
      (*h)[0] ^= 1;
    }
    return h;
  }
  std::shared_ptr<std::atomic<bool>> tamper_ =
      std::make_shared<std::atomic<bool>>(false);
};

TEST(SequencedLogTest, RefusesToSignAnInconsistentCheckpoint) {
  auto storage = std::make_unique<TamperingStorage>();
  std::shared_ptr<std::atomic<bool>> tamper = storage->tamper_;
  LogOptions options = TestOptions();
  const CheckpointVerifier verifier(kKeyName, options.signer->public_key());
  absl::StatusOr<std::unique_ptr<internal::SequencedLog>> log =
      internal::SequencedLog::Create(std::move(storage), std::move(options));
  ASSERT_TRUE(log.ok()) << log.status();
  for (int i = 0; i < 3; ++i) ASSERT_TRUE((*log)->Append(LeafData(i)).ok());
  const std::string note3 = *(*log)->LatestCheckpoint();
  // PROOF(3, D[4]) reads leaf hash 2, which now differs from what was signed.
  tamper->store(true);
  absl::StatusOr<AppendResult> r = (*log)->Append(LeafData(3));
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInternal) << r.status();
  EXPECT_NE(r.status().message().find("refusing to sign"), std::string::npos)
      << r.status();
  EXPECT_EQ(*(*log)->LatestCheckpoint(), note3);
  // The log stays refused, even once storage reads true again.
  tamper->store(false);
  EXPECT_EQ((*log)->Append(LeafData(4)).status().code(),
            absl::StatusCode::kInternal);
  EXPECT_EQ(*(*log)->LatestCheckpoint(), note3);
  EXPECT_EQ(verifier.Verify(note3, kOrigin)->size, 3u);
}

// ---------------------------------------------------------------------------
// RocksDB only: recovery and corruption.

// Raw access to a closed log's database, to simulate crashes and damage.
class RawDb {
 public:
  explicit RawDb(const std::string& dir) {
    std::vector<rocksdb::ColumnFamilyDescriptor> families;
    for (const char* name : {rocksdb::kDefaultColumnFamilyName.c_str(),
                             internal::kLeavesFamily, internal::kByHashFamily,
                             internal::kNodesFamily, internal::kMetaFamily}) {
      families.emplace_back(name, rocksdb::ColumnFamilyOptions());
    }
    rocksdb::DB* db = nullptr;
    rocksdb::Status s =
        rocksdb::DB::Open(rocksdb::DBOptions(), dir, families, &handles_, &db);
    EXPECT_TRUE(s.ok()) << s.ToString();
    db_.reset(db);
  }
  ~RawDb() {
    for (auto* h : handles_) db_->DestroyColumnFamilyHandle(h);
  }
  void Put(int family, const std::string& key, const std::string& value) {
    rocksdb::Status s =
        db_->Put(rocksdb::WriteOptions(), handles_[family], key, value);
    EXPECT_TRUE(s.ok()) << s.ToString();
  }
  static constexpr int kNodes = 3;
  static constexpr int kMeta = 4;

 private:
  std::vector<rocksdb::ColumnFamilyHandle*> handles_;
  std::unique_ptr<rocksdb::DB> db_;
};

class RocksDbLogTest : public ::testing::Test {
 protected:
  std::string path() const { return dir_.path() + "/log"; }
  // Opens the log and appends leaves [from, to).
  void Fill(int from, int to) {
    absl::StatusOr<std::unique_ptr<Log>> log =
        RocksDbLog::Open(path(), TestOptions());
    ASSERT_TRUE(log.ok()) << log.status();
    for (int i = from; i < to; ++i) {
      ASSERT_EQ(*(*log)->Append(LeafData(i)),
                (AppendResult{uint64_t(i), false}));
    }
  }
  TempDir dir_;
};

TEST_F(RocksDbLogTest, ReopenKeepsTheLogAndAppendsContinue) {
  std::string note;
  Sha256Hash root;
  {
    absl::StatusOr<std::unique_ptr<Log>> log =
        RocksDbLog::Open(path(), TestOptions());
    ASSERT_TRUE(log.ok()) << log.status();
    for (int i = 0; i < 10; ++i) ASSERT_TRUE((*log)->Append(LeafData(i)).ok());
    note = *(*log)->LatestCheckpoint();
    root = *(*log)->Root(10);
  }
  absl::StatusOr<std::unique_ptr<Log>> log =
      RocksDbLog::Open(path(), TestOptions());
  ASSERT_TRUE(log.ok()) << log.status();
  Log& l = **log;
  EXPECT_EQ(l.Size(), 10u);
  EXPECT_EQ(*l.Root(10), root);
  EXPECT_EQ(*l.LatestCheckpoint(), note);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(*l.Entry(i), LeafData(i));
  EXPECT_TRUE(l.Fsck().ok()) << l.Fsck();
  EXPECT_EQ(*l.Append(LeafData(3)), (AppendResult{3, true}));
  EXPECT_EQ(*l.Append(LeafData(10)), (AppendResult{10, false}));
  EXPECT_EQ(l.Size(), 11u);
  absl::StatusOr<std::vector<Sha256Hash>> proof = l.ConsistencyProof(10, 11);
  ASSERT_TRUE(proof.ok());
  EXPECT_TRUE(VerifyConsistency(10, 11, root, *l.Root(11), *proof).ok());
  EXPECT_TRUE(l.Fsck().ok()) << l.Fsck();
}

TEST_F(RocksDbLogTest, ReopenSignsTheCheckpointACrashLeftOut) {
  Fill(0, 5);
  std::string note5;
  {
    absl::StatusOr<std::unique_ptr<Log>> log =
        RocksDbLog::Open(path(), TestOptions());
    ASSERT_TRUE(log.ok()) << log.status();
    note5 = *(*log)->LatestCheckpoint();
  }
  Fill(5, 10);
  // As if the process died after the batch of leaves 5..9 and before its
  // checkpoint.
  RawDb(path()).Put(RawDb::kMeta, internal::kCheckpointKey, note5);
  LogOptions options = TestOptions();
  const CheckpointVerifier verifier(kKeyName, options.signer->public_key());
  absl::StatusOr<std::unique_ptr<Log>> log =
      RocksDbLog::Open(path(), std::move(options));
  ASSERT_TRUE(log.ok()) << log.status();
  absl::StatusOr<Checkpoint> cp =
      verifier.Verify(*(*log)->LatestCheckpoint(), kOrigin);
  ASSERT_TRUE(cp.ok()) << cp.status();
  EXPECT_EQ(cp->size, 10u);
  EXPECT_EQ(cp->root, *(*log)->Root(10));
}

TEST_F(RocksDbLogTest, CorruptInteriorNodeIsFoundByFsck) {
  Fill(0, 10);
  Sha256Hash wrong;
  wrong.fill(0xab);
  // Leaf hash 3 is read neither by recovery nor by the root at size 10.
  RawDb(path()).Put(RawDb::kNodes, internal::NodeKey(0, 3),
                    internal::HashBytes(wrong));
  absl::StatusOr<std::unique_ptr<Log>> log =
      RocksDbLog::Open(path(), TestOptions());
  ASSERT_TRUE(log.ok()) << log.status();
  absl::Status fsck = (*log)->Fsck();
  EXPECT_EQ(fsck.code(), absl::StatusCode::kDataLoss) << fsck;
  EXPECT_NE(fsck.message().find("node (0, 3)"), std::string::npos) << fsck;
}

TEST_F(RocksDbLogTest, CorruptEdgeNodeIsFoundByOpen) {
  Fill(0, 10);
  Sha256Hash wrong;
  wrong.fill(0xcd);
  // Size 10 = 8 + 2: the root is built from nodes (3, 0) and (1, 4).
  RawDb(path()).Put(RawDb::kNodes, internal::NodeKey(1, 4),
                    internal::HashBytes(wrong));
  absl::StatusOr<std::unique_ptr<Log>> log =
      RocksDbLog::Open(path(), TestOptions());
  EXPECT_EQ(log.status().code(), absl::StatusCode::kDataLoss) << log.status();
}

TEST_F(RocksDbLogTest, TruncatedSizeIsFoundByOpen) {
  Fill(0, 10);
  RawDb(path()).Put(RawDb::kMeta, internal::kSizeKey, internal::EncodeU64(5));
  absl::StatusOr<std::unique_ptr<Log>> log =
      RocksDbLog::Open(path(), TestOptions());
  EXPECT_EQ(log.status().code(), absl::StatusCode::kDataLoss) << log.status();
  EXPECT_NE(log.status().message().find("checkpoint has size 10"),
            std::string::npos)
      << log.status();
}

TEST_F(RocksDbLogTest, MalformedSizeIsDataLossNotACrash) {
  Fill(0, 3);
  RawDb(path()).Put(RawDb::kMeta, internal::kSizeKey, "xyz");
  absl::StatusOr<std::unique_ptr<Log>> log =
      RocksDbLog::Open(path(), TestOptions());
  EXPECT_EQ(log.status().code(), absl::StatusCode::kDataLoss) << log.status();
}

TEST_F(RocksDbLogTest, AnotherKeyCannotOpenTheLog) {
  Fill(0, 3);
  LogOptions options = TestOptions();
  options.signer = TestSigner(9);
  absl::StatusOr<std::unique_ptr<Log>> log =
      RocksDbLog::Open(path(), std::move(options));
  EXPECT_EQ(log.status().code(), absl::StatusCode::kDataLoss) << log.status();
}

}  // namespace
}  // namespace layerproof::store
