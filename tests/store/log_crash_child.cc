// The crash test's child (tests/store/log_crash_test.cc): opens the RocksDB
// log in argv[1] with the test key, starts kWriters threads that append
// unique leaves ("run<R>-w<T>-<I>", R = argv[2], padded to kLeafBytes) until
// the process is killed, and reports every acknowledged append as one line
// "<index> <hex of the leaf>\n" on stdout, written with a single write(2)
// (atomic on a pipe: the line is shorter than PIPE_BUF). Any error exits
// non-zero with a message on stderr. Not a test by itself.
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "store/checkpoint.h"
#include "store/crypto.h"
#include "store/log.h"
#include "store/rocksdb_log.h"

namespace {

using layerproof::store::AppendResult;
using layerproof::store::CheckpointSigner;
using layerproof::store::Ed25519PrivateKey;
using layerproof::store::Log;
using layerproof::store::LogOptions;
using layerproof::store::RocksDbLog;

constexpr char kOrigin[] = "layerproof.test/crash";
constexpr char kKeyName[] = "layerproof.test";
constexpr int kWriters = 16;
constexpr size_t kLeafBytes = 200;

[[noreturn]] void Fail(const std::string& message) {
  std::fprintf(stderr, "log_crash_child: %s\n", message.c_str());
  std::fflush(stderr);
  std::_Exit(3);
}

std::string Leaf(const std::string& run, int writer, uint64_t i) {
  std::string leaf =
      "run" + run + "-w" + std::to_string(writer) + "-" + std::to_string(i);
  leaf.resize(kLeafBytes, '.');
  return leaf;
}

// One line, one write(2): a partial write on a pipe of a line this short
// does not happen, so anything else is an error.
void Acknowledge(uint64_t index, const std::string& leaf) {
  std::string line =
      std::to_string(index) + " " +
      layerproof::store::HexEncode(layerproof::store::Bytes(
          reinterpret_cast<const uint8_t*>(leaf.data()), leaf.size())) +
      "\n";
  ssize_t n;
  do {
    n = write(STDOUT_FILENO, line.data(), line.size());
  } while (n < 0 && errno == EINTR);
  if (n != static_cast<ssize_t>(line.size())) Fail("short write to stdout");
}

void Write(Log& log, const std::string& run, int writer) {
  for (uint64_t i = 0;; ++i) {
    std::string leaf = Leaf(run, writer, i);
    absl::StatusOr<AppendResult> r = log.Append(leaf);
    if (!r.ok()) Fail("append: " + r.status().ToString());
    if (r->duplicate) Fail("append of a fresh leaf reported a duplicate");
    Acknowledge(r->index, leaf);
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) Fail("usage: log_crash_child DIR RUN");
  std::array<uint8_t, 32> seed;
  seed.fill(7);
  absl::StatusOr<Ed25519PrivateKey> key = Ed25519PrivateKey::FromSeed(seed);
  if (!key.ok()) Fail(key.status().ToString());
  absl::StatusOr<CheckpointSigner> signer =
      CheckpointSigner::Create(kKeyName, *std::move(key));
  if (!signer.ok()) Fail(signer.status().ToString());
  LogOptions options;
  options.origin = kOrigin;
  options.signer = std::make_shared<const CheckpointSigner>(*std::move(signer));
  absl::StatusOr<std::unique_ptr<Log>> log =
      RocksDbLog::Open(argv[1], std::move(options));
  if (!log.ok()) Fail("open: " + log.status().ToString());
  const std::string run = argv[2];
  std::vector<std::thread> writers;
  for (int t = 0; t < kWriters; ++t) {
    writers.emplace_back([&log, &run, t] { Write(**log, run, t); });
  }
  for (std::thread& w : writers) w.join();  // never: killed by the test
  return 0;
}
