// The prover's journal (DESIGN §5 "Journals"): every committed request in
// RocksDB, so that the prover can answer openings by deterministic replay
// and resubmit commitments after a restart.
//
// Column families:
//   default  request_id (16 bytes)                  -> JournalEntry
//   pending  request_id                              -> "" (not yet logged,
//                                                       not refused)
//   by_time  u64 created_at_unix_nanos (big-endian) ‖ request_id -> ""
// Every write is one synced WriteBatch over the three, so an entry, its
// pending mark and its time index appear and disappear together; Put
// returns only once the entry is durable (its WAL record synced).
//
// Retention: DeleteOlderThan removes every entry created before a cutoff,
// walking the time index in order, except those still pending submission:
// a commitment the log has not acknowledged (nor refused) is never lost to
// retention; it goes at the first sweep after it left the pending index.
//
// Thread safety: every method may be called from any thread; writes are
// serialised by an internal mutex so that an update never resurrects an
// entry a sweep deleted.
#ifndef LAYERPROOF_PROVER_JOURNAL_H_
#define LAYERPROOF_PROVER_JOURNAL_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "layerproof/v1/prover_journal.pb.h"

namespace rocksdb {
class ColumnFamilyHandle;
class Env;
}  // namespace rocksdb
namespace layerproof::store {
class RocksDatabase;
}  // namespace layerproof::store

namespace layerproof::prover {

// What one retention sweep did.
struct JournalSweep {
  // Entries deleted (created before the cutoff and not pending).
  uint64_t deleted = 0;
  // Entries created before the cutoff but kept, still pending submission,
  // and the oldest one's created_at_unix_nanos (0 when none).
  uint64_t pending_kept = 0;
  int64_t oldest_pending_unix_nanos = 0;
};

class ProverJournal {
 public:
  // Opens (creating if missing) the journal in directory `dir`. Errors name
  // the directory; RocksDB's lock keeps a second process out. `env`: the
  // disk (store::RocksDatabase::Open); nullptr for the default.
  static absl::StatusOr<std::unique_ptr<ProverJournal>> Open(
      const std::string& dir, rocksdb::Env* env = nullptr);
  ~ProverJournal();
  ProverJournal(const ProverJournal&) = delete;
  ProverJournal& operator=(const ProverJournal&) = delete;

  // Stores `entry` (request_id 16 bytes), marked pending unless it already
  // has an inclusion or a refusal; AlreadyExists if the id is journaled.
  absl::Status Put(const v1::JournalEntry& entry);
  // NotFound naming the id (hex) when the journal does not hold it.
  absl::StatusOr<v1::JournalEntry> Get(std::string_view request_id) const;
  // Records the log's acknowledgement and clears the pending mark. NotFound
  // if the entry was swept meanwhile.
  absl::Status SetInclusion(std::string_view request_id,
                            const v1::LogInclusion& inclusion);
  // Records a permanent refusal and clears the pending mark.
  absl::Status MarkRefused(std::string_view request_id, int32_t code,
                           std::string message);
  // Every pending entry, in request-id order.
  absl::StatusOr<std::vector<v1::JournalEntry>> Pending() const;
  // The log's last checkpoint this prover accepted (a signed note), kept
  // so that a restarted prover still requires the log's next checkpoints
  // to extend it (log_submitter.h); nullopt before the first. Stored under
  // a key no request id can take (request ids are 16 bytes).
  absl::Status SetLogCheckpoint(std::string_view note);
  absl::StatusOr<std::optional<std::string>> LogCheckpoint() const;
  // Deletes every entry with created_at_unix_nanos < cutoff that is not
  // pending submission; says how many it deleted and kept.
  absl::StatusOr<JournalSweep> DeleteOlderThan(int64_t cutoff_unix_nanos);

 private:
  explicit ProverJournal(std::unique_ptr<store::RocksDatabase> db);
  absl::Status Update(std::string_view request_id, const char* what,
                      const std::function<void(v1::JournalEntry&)>& change);

  mutable absl::Mutex write_mu_;
  std::unique_ptr<store::RocksDatabase> db_;
  rocksdb::ColumnFamilyHandle* entries_;
  rocksdb::ColumnFamilyHandle* pending_;
  rocksdb::ColumnFamilyHandle* by_time_;
};

}  // namespace layerproof::prover

#endif  // LAYERPROOF_PROVER_JOURNAL_H_
