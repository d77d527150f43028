// The verifier's own database beside its log (DESIGN §6): which log entries
// it has indexed, the request id of every logged commitment, every audit
// from its draw to its verdict (v1::AuditRecord), and an index of the
// verdicts in the log. RocksDB in its own directory (DIR/audits beside the
// log's DIR/log); every write is one synced WriteBatch.
//
// Keys (one column family; integers big-endian so that keys sort by them):
//   m/indexed                    -> u64 log entries indexed (a watermark)
//   c/<request id>               -> u64 the commitment's leaf index
//   l/<u64 leaf index>           -> u64 the verifier's clock (Unix ns) when
//                                   it indexed that commitment entry
//   a/<audit seed>               -> AuditRecord
//   p/<u64 created ns><seed>     -> "" while that audit is not done
//   v/<u64 verdict leaf index>   -> VerdictIndexEntry
//   q/<request id><u64 leaf>     -> "" (the verdicts of one request)
//   r/<envelope leaf hash>       -> audit seed of its FAIL_SIGNATURE verdict
//   m/last_report                -> the last compliance report's checkpoint:
//                                   u64 tree size ‖ 32-byte root ‖ u64
//                                   generated-at ns (verifier/report_service.h)
//
// The log is the source of truth: the index is derived from its entries
// (verifier/audit_scheduler.h indexes each entry once, in order, and marks
// an audit done in the same write that indexes its verdict).
//
// "l/" is the verifier's own time of logging, which compliance reports
// window commitments by (docs/reports.md): the scheduler writes it in the
// same batch as the commitment's index, for every commitment entry
// (duplicates of a request id too). It is the time of indexing, normally
// moments after the append; entries appended before a crash and indexed
// after the restart get the restart's time. Stores written before "l/"
// existed have no time for their older entries.
//
// Thread safety: every method is thread-safe. Read-modify-write sequences
// are the caller's to serialise (the scheduler's index lock does).
#ifndef LAYERPROOF_VERIFIER_AUDIT_STORE_H_
#define LAYERPROOF_VERIFIER_AUDIT_STORE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "layerproof/v1/verifier_state.pb.h"

namespace rocksdb {
class Env;
class WriteBatch;
}  // namespace rocksdb
namespace layerproof::store {
class RocksDatabase;
}  // namespace layerproof::store

namespace layerproof::verifier {

// The checkpoint a compliance report was issued at (the next report proves
// its tree consistent with this one).
struct ReportCheckpoint {
  uint64_t tree_size = 0;
  std::string root_hash;  // 32 bytes
  int64_t generated_at_unix_nanos = 0;
};

// Writes applied together (one synced RocksDB WriteBatch).
class AuditStoreBatch {
 public:
  AuditStoreBatch();
  ~AuditStoreBatch();
  AuditStoreBatch(const AuditStoreBatch&) = delete;
  AuditStoreBatch& operator=(const AuditStoreBatch&) = delete;

  void SetIndexed(uint64_t size);
  void PutCommitment(std::string_view request_id, uint64_t leaf_index);
  // Records the verifier's clock when it indexed commitment entry
  // `leaf_index` (key "l/").
  void SetLoggedAt(uint64_t leaf_index, int64_t unix_nanos);
  // Stores `record`; keeps it in the pending set unless record.done().
  void PutAudit(const v1::AuditRecord& record);
  void PutVerdict(uint64_t leaf_index, const v1::VerdictIndexEntry& entry);
  void PutRefusal(std::string_view leaf_hash, std::string_view audit_seed);
  // How many refusal verdicts `submitter` has stored (key "s/").
  void SetRefusalCount(std::string_view submitter, uint64_t count);
  void PutUnlogged(std::string_view leaf_hash, std::string_view audit_seed);
  // Replaces the last issued report's checkpoint (root_hash: 32 bytes).
  void SetLastReport(const ReportCheckpoint& report);

 private:
  friend class AuditStore;
  std::unique_ptr<rocksdb::WriteBatch> batch_;
};

struct VerdictFilter {
  std::string prover_id;  // empty: any
  int outcome = 0;        // v1::VerdictOutcome; 0: any
  int64_t from_unix_nanos = 0;
  int64_t to_unix_nanos = 0;  // 0: no upper bound
};

struct VerdictPage {
  std::vector<uint64_t> leaf_indices;
  // The leaf index to continue from; absent on the last page.
  std::optional<uint64_t> next;
};

class AuditStore {
 public:
  // Opens (creating if missing) the store in `dir`. Errors name the dir.
  // `env`: the disk (store::RocksDatabase::Open); nullptr for the default.
  static absl::StatusOr<std::unique_ptr<AuditStore>> Open(
      const std::string& dir, rocksdb::Env* env = nullptr);
  ~AuditStore();
  AuditStore(const AuditStore&) = delete;
  AuditStore& operator=(const AuditStore&) = delete;

  absl::Status Write(AuditStoreBatch& batch);

  // Log entries [0, IndexedSize()) are indexed.
  absl::StatusOr<uint64_t> IndexedSize() const;
  absl::StatusOr<std::optional<uint64_t>> CommitmentIndex(
      std::string_view request_id) const;
  // The verifier's clock when it indexed commitment entry `leaf_index`;
  // nullopt when none was recorded (not a commitment, not yet indexed, or
  // indexed by a build that did not record it).
  absl::StatusOr<std::optional<int64_t>> LoggedAt(uint64_t leaf_index) const;
  absl::StatusOr<std::optional<v1::AuditRecord>> Audit(
      std::string_view audit_seed) const;
  // Just the record's on_demand flag (nullopt: no such audit), read without
  // copying the openings the record holds (compliance reports ask this of
  // every verdict).
  absl::StatusOr<std::optional<bool>> AuditOnDemand(
      std::string_view audit_seed) const;
  // How many audits are not yet done (queued, running, waiting for a retry
  // or for a worker), at most `cap`: a scan of keys only, for a gauge.
  absl::StatusOr<uint64_t> CountPending(uint64_t cap) const;
  // The audits not yet done, oldest first, at most `limit` of them.
  absl::StatusOr<std::vector<v1::AuditRecord>> PendingAudits(
      size_t limit = SIZE_MAX) const;
  absl::StatusOr<std::optional<v1::VerdictIndexEntry>> Verdict(
      uint64_t leaf_index) const;
  // The verdict leaf indices of one request, ascending. Once a commitment
  // with this request id is logged, only the verdicts on it: a refusal at
  // submission names a request id the submitter chose (anyone with a prover
  // certificate could name another prover's logged request), so it is filed
  // under its submitter (ListVerdicts by prover) and never shown as that
  // request's. Otherwise every verdict under the id (the refusals of the
  // request's own envelopes).
  absl::StatusOr<std::vector<uint64_t>> VerdictsOf(
      std::string_view request_id) const;
  // Verdicts matching `filter` with leaf index >= start, ascending, at most
  // `limit` (>= 1), examining at most `max_scanned` index entries: a filter
  // that matches little returns a short (even empty) page with `next` set
  // where it stopped, so every call does bounded work (ListVerdicts is open
  // to anyone).
  absl::StatusOr<VerdictPage> ListVerdicts(
      const VerdictFilter& filter, uint64_t start, uint32_t limit,
      uint64_t max_scanned = kMaxVerdictsScanned) const;
  static constexpr uint64_t kMaxVerdictsScanned = 10000;
  // The audit seed of the FAIL_UNLOGGED verdict on the promise of the leaf
  // `leaf_hash` (one per promised leaf).
  absl::StatusOr<std::optional<std::string>> Unlogged(
      std::string_view leaf_hash) const;
  // The audit seed of the FAIL_SIGNATURE verdict of a refused envelope.
  absl::StatusOr<std::optional<std::string>> Refusal(
      std::string_view leaf_hash) const;
  // The refusal verdicts stored for `submitter` (0 when none).
  absl::StatusOr<uint64_t> RefusalCount(std::string_view submitter) const;
  // The checkpoint of the last report issued; nullopt before the first.
  // DataLoss for a malformed value.
  absl::StatusOr<std::optional<ReportCheckpoint>> LastReport() const;

 private:
  AuditStore(std::unique_ptr<store::RocksDatabase> db, std::string dir);
  absl::StatusOr<std::optional<std::string>> Get(const std::string& key) const;
  // Visits the pending set's keys, oldest first, until `visit` returns
  // false; `fill_cache` false for scans that should not evict hot blocks.
  absl::Status ScanPending(
      bool fill_cache,
      const std::function<bool(std::string_view key)>& visit) const;

  std::unique_ptr<store::RocksDatabase> db_;
  std::string dir_;
};

}  // namespace layerproof::verifier

#endif  // LAYERPROOF_VERIFIER_AUDIT_STORE_H_
