#include "prover/journal.h"

#include <utility>

#include "kernels/status.h"
#include "rocksdb/db.h"
#include "rocksdb/options.h"
#include "rocksdb/write_batch.h"
#include "store/crypto.h"
#include "store/internal/str_cat.h"
#include "store/rocksdb_database.h"

namespace layerproof::prover {
namespace {

using store::ToSlice;
using store::internal::Cat;

constexpr char kPendingFamily[] = "pending";
// In the entries family; not 16 bytes, so never a request id.
constexpr char kLogCheckpointKey[] = "meta/log_checkpoint";
constexpr char kByTimeFamily[] = "by_time";

std::string Hex(std::string_view id) {
  return store::HexEncode(store::AsBytes(id));
}

// u64 big-endian nanos (sign bit flipped so negative times sort first) ‖ id.
std::string TimeKey(int64_t nanos, std::string_view request_id) {
  const uint64_t u = static_cast<uint64_t>(nanos) ^ (uint64_t{1} << 63);
  std::string key(8, '\0');
  for (int i = 0; i < 8; ++i) key[i] = static_cast<char>(u >> (56 - 8 * i));
  key.append(request_id);
  return key;
}

int64_t TimeOfKey(std::string_view key) {
  uint64_t u = 0;
  for (int i = 0; i < 8; ++i) u = (u << 8) | static_cast<uint8_t>(key[i]);
  return static_cast<int64_t>(u ^ (uint64_t{1} << 63));
}

bool IsPending(const v1::JournalEntry& e) {
  return !e.has_inclusion() && e.refused_code() == 0;
}

}  // namespace

absl::StatusOr<std::unique_ptr<ProverJournal>> ProverJournal::Open(
    const std::string& dir, rocksdb::Env* env) {
  LP_ASSIGN_OR_RETURN(
      std::unique_ptr<store::RocksDatabase> db,
      store::RocksDatabase::Open(
          dir,
          {rocksdb::kDefaultColumnFamilyName, std::string(kPendingFamily),
           std::string(kByTimeFamily)},
          store::RocksDatabase::Mode::kReadWrite, "journal", env));
  return std::unique_ptr<ProverJournal>(new ProverJournal(std::move(db)));
}

ProverJournal::ProverJournal(std::unique_ptr<store::RocksDatabase> db)
    : db_(std::move(db)),
      entries_(db_->family(0)),
      pending_(db_->family(1)),
      by_time_(db_->family(2)) {}

ProverJournal::~ProverJournal() = default;

absl::Status ProverJournal::Put(const v1::JournalEntry& entry) {
  const std::string& id = entry.request_id();
  if (id.size() != 16) {
    return absl::InvalidArgumentError(
        Cat("JournalEntry.request_id: got ", id.size(), " bytes, want 16"));
  }
  absl::MutexLock lock(&write_mu_);
  std::string existing;
  rocksdb::Status s =
      db_->db()->Get(rocksdb::ReadOptions(), entries_, ToSlice(id), &existing);
  if (s.ok()) {
    return absl::AlreadyExistsError(
        Cat("journal: request ", Hex(id), " is already journaled"));
  }
  if (!s.IsNotFound()) return db_->Check(s, Cat("read ", Hex(id)));
  rocksdb::WriteBatch wb;
  wb.Put(entries_, ToSlice(id), entry.SerializeAsString());
  if (IsPending(entry)) wb.Put(pending_, ToSlice(id), rocksdb::Slice());
  wb.Put(by_time_, TimeKey(entry.created_at_unix_nanos(), id),
         rocksdb::Slice());
  return db_->Write(&wb, Cat("write ", Hex(id)));
}

absl::StatusOr<v1::JournalEntry> ProverJournal::Get(
    std::string_view request_id) const {
  std::string value;
  rocksdb::Status s = db_->db()->Get(rocksdb::ReadOptions(), entries_,
                                     ToSlice(request_id), &value);
  if (s.IsNotFound()) {
    return absl::NotFoundError(
        Cat("journal: no request ", Hex(request_id),
            " (never served, or older than the retention)"));
  }
  LP_RETURN_IF_ERROR(db_->Check(s, Cat("read ", Hex(request_id))));
  v1::JournalEntry entry;
  if (!entry.ParseFromString(value)) {
    return absl::DataLossError(
        Cat("journal: entry ", Hex(request_id), " is malformed"));
  }
  return entry;
}

absl::Status ProverJournal::Update(
    std::string_view request_id, const char* what,
    const std::function<void(v1::JournalEntry&)>& change) {
  absl::MutexLock lock(&write_mu_);
  LP_ASSIGN_OR_RETURN(v1::JournalEntry entry, Get(request_id));
  change(entry);
  rocksdb::WriteBatch wb;
  wb.Put(entries_, ToSlice(request_id), entry.SerializeAsString());
  wb.Delete(pending_, ToSlice(request_id));
  return db_->Write(&wb, Cat(what, " ", Hex(request_id)));
}

absl::Status ProverJournal::SetInclusion(std::string_view request_id,
                                         const v1::LogInclusion& inclusion) {
  return Update(request_id, "record inclusion of", [&](v1::JournalEntry& e) {
    *e.mutable_inclusion() = inclusion;
  });
}

absl::Status ProverJournal::MarkRefused(std::string_view request_id,
                                        int32_t code, std::string message) {
  return Update(request_id, "record refusal of", [&](v1::JournalEntry& e) {
    e.set_refused_code(code);
    e.set_refused_message(std::move(message));
  });
}

absl::StatusOr<std::vector<v1::JournalEntry>> ProverJournal::Pending() const {
  std::vector<v1::JournalEntry> out;
  std::unique_ptr<rocksdb::Iterator> it(
      db_->db()->NewIterator(rocksdb::ReadOptions(), pending_));
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    const std::string_view id(it->key().data(), it->key().size());
    absl::StatusOr<v1::JournalEntry> e = Get(id);
    if (absl::IsNotFound(e.status())) continue;  // swept meanwhile
    LP_RETURN_IF_ERROR(e.status());
    out.push_back(*std::move(e));
  }
  LP_RETURN_IF_ERROR(db_->Check(it->status(), "scan pending"));
  return out;
}

absl::StatusOr<JournalSweep> ProverJournal::DeleteOlderThan(
    int64_t cutoff_unix_nanos) {
  // Under write_mu_: a pending mark cannot be cleared (Update) or set (Put)
  // between the check below and the batch's write.
  absl::MutexLock lock(&write_mu_);
  rocksdb::WriteBatch wb;
  JournalSweep sweep;
  std::unique_ptr<rocksdb::Iterator> it(
      db_->db()->NewIterator(rocksdb::ReadOptions(), by_time_));
  std::string unused;
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    const std::string_view key(it->key().data(), it->key().size());
    if (key.size() < 8) continue;
    const int64_t created = TimeOfKey(key);
    if (created >= cutoff_unix_nanos) break;
    const rocksdb::Slice id(key.data() + 8, key.size() - 8);
    const rocksdb::Status p =
        db_->db()->Get(rocksdb::ReadOptions(), pending_, id, &unused);
    if (p.ok()) {
      // Not yet logged: keep it (and its time key) for the submitter.
      if (sweep.pending_kept++ == 0) sweep.oldest_pending_unix_nanos = created;
      continue;
    }
    if (!p.IsNotFound()) {
      return db_->Check(p, Cat("read pending mark of ",
                               Hex(std::string_view(id.data(), id.size()))));
    }
    wb.Delete(entries_, id);
    wb.Delete(by_time_, it->key());
    ++sweep.deleted;
  }
  LP_RETURN_IF_ERROR(db_->Check(it->status(), "scan by_time"));
  if (sweep.deleted == 0) return sweep;
  LP_RETURN_IF_ERROR(db_->Write(&wb, "sweep"));
  return sweep;
}

absl::Status ProverJournal::SetLogCheckpoint(std::string_view note) {
  rocksdb::WriteBatch wb;
  wb.Put(entries_, kLogCheckpointKey, ToSlice(note));
  return db_->Write(&wb, "write the log checkpoint");
}

absl::StatusOr<std::optional<std::string>> ProverJournal::LogCheckpoint()
    const {
  return db_->Get(entries_, kLogCheckpointKey, "the log checkpoint");
}

}  // namespace layerproof::prover
