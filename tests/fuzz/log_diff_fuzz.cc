// Differential fuzzing of the transparency log: the in-memory log
// (store/memory_log.h) against the RocksDB log (store/rocksdb_log.h, in a
// temporary directory, /dev/shm when there is one) under the same fuzzed
// sequence of appends (new leaves, duplicates, oversized ones) and queries
// (size, entries, leaf-hash lookups, roots, inclusion and consistency
// proofs, the latest checkpoint, fsck). Every answer must be the same, down
// to the status code and the signed checkpoint's bytes, and every proof
// must verify (store/merkle.h).
//
// The two logs live across inputs, as the log does across requests (opening
// RocksDB for every input would make the target a hundred times slower);
// both start over at kMaxLeaves leaves. The replay of the ordinary build
// runs the corpus in name order in one process, so it is reproducible.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <system_error>
#include <vector>

#include "store/log.h"
#include "store/memory_log.h"
#include "store/merkle.h"
#include "store/rocksdb_log.h"
#include "tests/fuzz/fuzz_check.h"
#include "tests/fuzz/fuzz_keys.h"

namespace fs = std::filesystem;
namespace fuzz = layerproof::fuzz;
namespace store = layerproof::store;

namespace {

// Past this size both logs start over. Fsck reads the whole log, so it runs
// at most once per input: with up to 64 ops an input would otherwise spend
// nearly all its time re-reading the log.
constexpr uint64_t kMaxLeaves = 512;
constexpr size_t kMaxLeafBytes = 48;
constexpr int kMaxOps = 64;

store::LogOptions Options() {
  store::LogOptions o;
  o.origin = fuzz::kLogOrigin;
  o.signer = fuzz::LogSigner();
  o.max_leaf_bytes = kMaxLeafBytes;
  return o;
}

class Logs {
 public:
  Logs() {
    const fs::path shm = "/dev/shm";
    const fs::path base =
        fs::is_directory(shm) ? shm : fs::temp_directory_path();
    dir_ = base / ("lp_fuzz_log_" + std::to_string(::getpid()));
    Reset();
  }
  ~Logs() {
    rocks_.reset();
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  void Reset() {
    checked_size = ~uint64_t{0};
    rocks_.reset();
    std::error_code ec;
    fs::remove_all(dir_, ec);
    auto memory = store::MemoryLog::Create(Options());
    auto rocks = store::RocksDbLog::Open(dir_.string(), Options());
    if (!memory.ok() || !rocks.ok()) {
      std::fprintf(stderr, "log_diff: %s / %s\n",
                   memory.status().ToString().c_str(),
                   rocks.status().ToString().c_str());
      std::abort();
    }
    memory_ = *std::move(memory);
    rocks_ = *std::move(rocks);
  }

  store::Log& memory() { return *memory_; }
  store::Log& rocks() { return *rocks_; }

  // The size at which both logs last passed fsck since the last reset (the
  // logs only grow in between, so a size names a state).
  uint64_t checked_size = ~uint64_t{0};

 private:
  fs::path dir_;
  std::unique_ptr<store::Log> memory_;
  std::unique_ptr<store::Log> rocks_;
};

Logs& TheLogs() {
  static Logs* logs = new Logs;  // lives to the end (RocksDB's own threads)
  return *logs;
}

// The same outcome from both; true when both succeeded with equal values.
template <typename T>
bool Same(const absl::StatusOr<T>& a, const absl::StatusOr<T>& b) {
  LP_FUZZ_CHECK_PRINTABLE(a.status());
  LP_FUZZ_CHECK_PRINTABLE(b.status());
  if (a.status().code() != b.status().code()) {
    std::fprintf(stderr, "memory: %s\nrocksdb: %s\n",
                 a.status().ToString().c_str(), b.status().ToString().c_str());
  }
  LP_FUZZ_CHECK(a.status().code() == b.status().code());
  if (!a.ok()) return false;
  LP_FUZZ_CHECK(*a == *b);
  return true;
}

// A size or index around the log's size: inside, at, or past it.
uint64_t Around(fuzz::FuzzInput& in, uint64_t size) {
  const uint8_t b = in.U8();
  if (b == 0xff) return in.U64();
  return b % (size + 3);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Logs& logs = TheLogs();
  if (logs.memory().Size() >= kMaxLeaves) logs.Reset();
  store::Log& m = logs.memory();
  store::Log& r = logs.rocks();
  fuzz::FuzzInput in(data, size);
  bool fsck_done = false;
  for (int op = 0; op < kMaxOps && in.remaining() > 0; ++op) {
    const uint64_t n = m.Size();
    LP_FUZZ_CHECK(r.Size() == n);
    switch (in.U8() % 9) {
      case 0: {  // a new leaf, or an oversized one
        const std::string leaf = in.Bytes(in.U8() % (kMaxLeafBytes + 8));
        Same(m.Append(leaf), r.Append(leaf));
        break;
      }
      case 1: {  // a leaf already in the log
        if (n == 0) break;
        auto leaf = m.Entry(in.U16() % n);
        LP_FUZZ_CHECK(leaf.ok());
        auto a = m.Append(*leaf);
        if (Same(a, r.Append(*leaf))) LP_FUZZ_CHECK(a->duplicate);
        break;
      }
      case 2: {
        const uint64_t i = Around(in, n);
        Same(m.Entry(i), r.Entry(i));
        break;
      }
      case 3: {
        std::string leaf = in.Bytes(in.U8() % 16);
        if (n > 0 && (leaf.size() & 1)) leaf = *m.Entry(in.U16() % n);
        const store::Sha256Hash h = store::LeafHash(leaf);
        auto a = m.IndexOfLeafHash(h);
        if (Same(a, r.IndexOfLeafHash(h))) {
          LP_FUZZ_CHECK(*a < n && *m.Entry(*a) == leaf);
        }
        break;
      }
      case 4: {
        const uint64_t s = Around(in, n);
        Same(m.Root(s), r.Root(s));
        break;
      }
      case 5: {
        const uint64_t i = Around(in, n), s = Around(in, n);
        auto a = m.InclusionProof(i, s);
        if (Same(a, r.InclusionProof(i, s))) {
          auto leaf = m.Entry(i);
          auto root = m.Root(s);
          LP_FUZZ_CHECK(leaf.ok() && root.ok());
          LP_FUZZ_CHECK(
              store::VerifyInclusion(store::LeafHash(*leaf), i, s, *a, *root)
                  .ok());
        }
        break;
      }
      case 6: {
        const uint64_t o = Around(in, n), s = Around(in, n);
        auto a = m.ConsistencyProof(o, s);
        if (Same(a, r.ConsistencyProof(o, s))) {
          auto old_root = m.Root(o);
          auto new_root = m.Root(s);
          LP_FUZZ_CHECK(old_root.ok() && new_root.ok());
          LP_FUZZ_CHECK(
              store::VerifyConsistency(o, s, *old_root, *new_root, *a).ok());
        }
        break;
      }
      case 7: {
        auto a = m.LatestCheckpoint();
        if (Same(a, r.LatestCheckpoint())) {
          auto c = fuzz::LogVerifier().Verify(*a, fuzz::kLogOrigin);
          LP_FUZZ_CHECK(c.ok() && c->size == n && c->root == *m.Root(n));
        }
        break;
      }
      default: {
        // A state already checked is not checked again: fsck reads the
        // whole log, and most inputs leave the log as the last one did.
        if (fsck_done || n == logs.checked_size) break;
        fsck_done = true;
        logs.checked_size = n;
        const absl::Status a = m.Fsck(), b = r.Fsck();
        LP_FUZZ_CHECK(a.ok() && b.ok());
        break;
      }
    }
  }
  return 0;
}
