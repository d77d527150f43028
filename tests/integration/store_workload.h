// The crash loop's workload (power_loss_test.cc, store_crash_child.cc): a
// verifier's log and audit store and a prover's journal, opened together on
// one disk and driven concurrently through the same store calls the nodes
// make, reporting every acknowledgement as one text line; and Acks, the
// parser of those lines with the checks that nothing acknowledged was lost.
//
// Driving VerifierNode and ProverNode themselves (gRPC, TLS, a model to
// serve) costs seconds per start; 250 recoveries in a minute leave tens of
// milliseconds each, so the loop drives the stores directly:
//   - appenders: Log::Append of unique leaves (the verifier's Submit);
//   - submitters: ProverJournal::Put of a pending entry, Log::Append of its
//     commitment, ProverJournal::SetInclusion (the prover's LogSubmitter);
//   - an auditor: for each logged commitment, AuditStore::Write of its
//     index and a pending AuditRecord, Log::Append of the verdict, then
//     AuditStore::Write of the verdict's index with the record done (the
//     verifier's AuditScheduler);
//   - every appender reads Log::LatestCheckpoint after each append (a client
//     keeping the checkpoints it was shown).
//
// Lines: "L <index> <leaf hex>" an append, "J <id hex>" a journal entry,
// "I <id hex> <index>" its inclusion, "V <index> <id hex>" a verdict indexed
// in the audit store, "C <note hex>" a checkpoint seen.
//
// Thread safety: Workload's sink is called from its threads concurrently;
// Acks is not thread-safe.
#ifndef LAYERPROOF_TESTS_INTEGRATION_STORE_WORKLOAD_H_
#define LAYERPROOF_TESTS_INTEGRATION_STORE_WORKLOAD_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "prover/journal.h"
#include "store/checkpoint.h"
#include "store/log.h"
#include "store/merkle.h"
#include "verifier/audit_store.h"

namespace rocksdb {
class Env;
}  // namespace rocksdb

namespace layerproof::integration {

inline constexpr char kWorkloadOrigin[] = "layerproof.test/power-loss";
inline constexpr char kWorkloadKeyName[] = "layerproof.test";

// The test log's signer (a fixed seed: the child and the test agree).
std::shared_ptr<const store::CheckpointSigner> WorkloadSigner();

// The three databases under `root`: root/log, root/audits, root/journal.
struct NodeStores {
  std::unique_ptr<store::Log> log;
  std::unique_ptr<verifier::AuditStore> audits;
  std::unique_ptr<prover::ProverJournal> journal;

  // `env`: nullptr for the real disk.
  static absl::StatusOr<NodeStores> Open(const std::string& root,
                                         rocksdb::Env* env);
};

class Workload {
 public:
  // Starts the threads on `stores`, which must outlive Stop(). `run`
  // makes this run's leaves and request ids unique. `sink` gets every line.
  Workload(NodeStores& stores, int run,
           std::function<void(const std::string& line)> sink);
  // Stop().
  ~Workload();
  Workload(const Workload&) = delete;
  Workload& operator=(const Workload&) = delete;

  // Asks the threads to stop and joins them. Calls in flight finish first:
  // fail the disk (SimulatedDisk::PowerOff) so that they end at once.
  void Stop();
  // Store calls that failed so far (expected only once the disk failed).
  int errors() const { return errors_.load(); }

 private:
  void Append(int thread);
  void Submit(int thread);
  void Audit();
  // Appends `leaf`, reports it and the checkpoint after it.
  std::optional<uint64_t> AppendAndReport(const std::string& leaf);

  NodeStores& stores_;
  const int run_;
  const std::function<void(const std::string&)> sink_;
  std::atomic<bool> stop_{false};
  std::atomic<int> errors_{0};
  absl::Mutex mu_;
  // The last checkpoint reported (each is reported once).
  std::string last_note_ ABSL_GUARDED_BY(mu_);
  // Logged commitments waiting for their audit: request id, leaf index.
  std::vector<std::pair<std::string, uint64_t>> to_audit_ ABSL_GUARDED_BY(mu_);
  std::vector<std::thread> threads_;
};

// Every acknowledgement reported so far, across runs, and the checks made
// after each recovery.
class Acks {
 public:
  // Parses one line (gtest failure on a malformed one).
  void Add(const std::string& line);
  size_t size() const { return leaves_.size() + journaled_.size(); }
  uint64_t leaves() const { return leaves_.size(); }
  uint64_t checkpoints_seen() const { return checkpoints_.size(); }
  uint64_t verdicts() const { return verdicts_.size(); }
  uint64_t inclusions() const { return included_.size(); }
  // The smallest tree that holds every acknowledged append.
  uint64_t MinSize() const {
    return leaves_.empty() ? 0 : leaves_.rbegin()->first + 1;
  }

  // After a recovery, on the reopened stores (gtest failures):
  //   - every acknowledged append holds its exact bytes at its index;
  //   - every journal entry is there, with its inclusion once acknowledged;
  //   - every indexed verdict is in the audit store, its audit done;
  //   - every checkpoint seen (verified) is no larger than the log and
  //     consistent with it (a consistency proof to the latest checkpoint,
  //     verified), and two checkpoints of one size have one root;
  //   - the latest checkpoint covers the whole log.
  // Every acknowledgement is checked every time; the checkpoints seen since
  // the last call are proved consistent with the log, and so is the latest
  // checkpoint of the last call (consistency is transitive).
  void Check(const NodeStores& stores);

 private:
  std::map<uint64_t, std::string> leaves_;
  std::map<std::string, std::optional<uint64_t>> journaled_;
  std::map<std::string, uint64_t> included_;
  std::map<uint64_t, std::string> verdicts_;
  // Every checkpoint seen: size -> root.
  std::map<uint64_t, store::Sha256Hash> checkpoints_;
  // The checkpoints seen since the last Check.
  std::vector<store::Checkpoint> unchecked_;
  // The latest checkpoint at the last Check (first the empty tree).
  std::optional<store::Checkpoint> last_;
};

}  // namespace layerproof::integration

#endif  // LAYERPROOF_TESTS_INTEGRATION_STORE_WORKLOAD_H_
