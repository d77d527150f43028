#include "verifier/audit_store.h"

#include <utility>

#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/wire_format_lite.h"
#include "kernels/status.h"
#include "rocksdb/db.h"
#include "rocksdb/write_batch.h"
#include "store/internal/str_cat.h"
#include "store/rocksdb_database.h"

namespace layerproof::verifier {
namespace {

using store::ToSlice;
using store::internal::Cat;

std::string U64Key(uint64_t v) {
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[size_t(i)] = char(uint8_t(v >> (56 - 8 * i)));
  return out;
}

uint64_t DecodeU64(std::string_view s) {
  uint64_t v = 0;
  for (size_t i = 0; i < 8 && i < s.size(); ++i) v = (v << 8) | uint8_t(s[i]);
  return v;
}

std::string Key(std::string_view prefix, std::string_view rest) {
  std::string k(prefix);
  k.append(rest);
  return k;
}

std::string PendingKey(const v1::AuditRecord& r) {
  return Key("p/",
             U64Key(uint64_t(r.created_at_unix_nanos())) + r.audit_seed());
}

constexpr char kIndexedKey[] = "m/indexed";
constexpr char kLastReportKey[] = "m/last_report";
constexpr size_t kLastReportBytes = 8 + 32 + 8;

}  // namespace

AuditStoreBatch::AuditStoreBatch()
    : batch_(std::make_unique<rocksdb::WriteBatch>()) {}
AuditStoreBatch::~AuditStoreBatch() = default;

void AuditStoreBatch::SetIndexed(uint64_t size) {
  batch_->Put(kIndexedKey, ToSlice(U64Key(size)));
}

void AuditStoreBatch::PutCommitment(std::string_view request_id,
                                    uint64_t leaf_index) {
  batch_->Put(ToSlice(Key("c/", request_id)), ToSlice(U64Key(leaf_index)));
}

void AuditStoreBatch::SetLoggedAt(uint64_t leaf_index, int64_t unix_nanos) {
  batch_->Put(ToSlice(Key("l/", U64Key(leaf_index))),
              ToSlice(U64Key(uint64_t(unix_nanos))));
}

void AuditStoreBatch::PutAudit(const v1::AuditRecord& record) {
  batch_->Put(ToSlice(Key("a/", record.audit_seed())),
              ToSlice(record.SerializeAsString()));
  if (record.done()) {
    batch_->Delete(ToSlice(PendingKey(record)));
  } else {
    batch_->Put(ToSlice(PendingKey(record)), "");
  }
}

void AuditStoreBatch::PutVerdict(uint64_t leaf_index,
                                 const v1::VerdictIndexEntry& entry) {
  batch_->Put(ToSlice(Key("v/", U64Key(leaf_index))),
              ToSlice(entry.SerializeAsString()));
  batch_->Put(ToSlice(Key("q/", entry.request_id() + U64Key(leaf_index))), "");
}

void AuditStoreBatch::PutRefusal(std::string_view leaf_hash,
                                 std::string_view audit_seed) {
  batch_->Put(ToSlice(Key("r/", leaf_hash)),
              rocksdb::Slice(audit_seed.data(), audit_seed.size()));
}

void AuditStoreBatch::SetRefusalCount(std::string_view submitter,
                                      uint64_t count) {
  batch_->Put(ToSlice(Key("s/", submitter)), ToSlice(U64Key(count)));
}

void AuditStoreBatch::PutUnlogged(std::string_view leaf_hash,
                                  std::string_view audit_seed) {
  batch_->Put(ToSlice(Key("u/", leaf_hash)),
              rocksdb::Slice(audit_seed.data(), audit_seed.size()));
}

void AuditStoreBatch::SetLastReport(const ReportCheckpoint& report) {
  std::string value = U64Key(report.tree_size);
  value.append(report.root_hash);
  value.append(U64Key(uint64_t(report.generated_at_unix_nanos)));
  batch_->Put(kLastReportKey, ToSlice(value));
}

absl::StatusOr<std::unique_ptr<AuditStore>> AuditStore::Open(
    const std::string& dir, rocksdb::Env* env) {
  LP_ASSIGN_OR_RETURN(
      std::unique_ptr<store::RocksDatabase> db,
      store::RocksDatabase::Open(dir, {rocksdb::kDefaultColumnFamilyName},
                                 store::RocksDatabase::Mode::kReadWrite,
                                 "audit store", env));
  return std::unique_ptr<AuditStore>(new AuditStore(std::move(db), dir));
}

AuditStore::AuditStore(std::unique_ptr<store::RocksDatabase> db,
                       std::string dir)
    : db_(std::move(db)), dir_(std::move(dir)) {}

AuditStore::~AuditStore() = default;

absl::Status AuditStore::Write(AuditStoreBatch& batch) {
  LP_RETURN_IF_ERROR(db_->Write(batch.batch_.get(), "write"));
  batch.batch_->Clear();
  return absl::OkStatus();
}

absl::StatusOr<std::optional<std::string>> AuditStore::Get(
    const std::string& key) const {
  return db_->Get(db_->family(0), key, "a key");
}

absl::StatusOr<uint64_t> AuditStore::IndexedSize() const {
  LP_ASSIGN_OR_RETURN(std::optional<std::string> v, Get(kIndexedKey));
  return v.has_value() ? DecodeU64(*v) : 0;
}

absl::StatusOr<std::optional<uint64_t>> AuditStore::CommitmentIndex(
    std::string_view request_id) const {
  LP_ASSIGN_OR_RETURN(std::optional<std::string> v, Get(Key("c/", request_id)));
  if (!v.has_value()) return std::optional<uint64_t>();
  return std::optional<uint64_t>(DecodeU64(*v));
}

absl::StatusOr<std::optional<int64_t>> AuditStore::LoggedAt(
    uint64_t leaf_index) const {
  LP_ASSIGN_OR_RETURN(std::optional<std::string> v,
                      Get(Key("l/", U64Key(leaf_index))));
  if (!v.has_value()) return std::optional<int64_t>();
  if (v->size() != 8) {
    return absl::DataLossError(Cat("audit store ", dir_, ": logged time of ",
                                   leaf_index, ": got ", v->size(),
                                   " bytes, want 8"));
  }
  return std::optional<int64_t>(int64_t(DecodeU64(*v)));
}

absl::StatusOr<std::optional<v1::AuditRecord>> AuditStore::Audit(
    std::string_view audit_seed) const {
  LP_ASSIGN_OR_RETURN(std::optional<std::string> v, Get(Key("a/", audit_seed)));
  if (!v.has_value()) return std::optional<v1::AuditRecord>();
  v1::AuditRecord r;
  if (!r.ParseFromString(*v)) {
    return absl::DataLossError(
        Cat("audit store ", dir_, ": audit record is malformed"));
  }
  return std::optional<v1::AuditRecord>(std::move(r));
}

absl::StatusOr<std::optional<bool>> AuditStore::AuditOnDemand(
    std::string_view audit_seed) const {
  using google::protobuf::internal::WireFormatLite;
  const std::string key = Key("a/", audit_seed);
  rocksdb::PinnableSlice value;
  rocksdb::Status s = db_->db()->Get(rocksdb::ReadOptions(), db_->family(0),
                                     ToSlice(key), &value);
  if (s.IsNotFound()) return std::optional<bool>();
  LP_RETURN_IF_ERROR(db_->Check(s, "read an audit"));
  // Scan the record's fields, skipping the others (the openings) unread.
  google::protobuf::io::CodedInputStream in(
      reinterpret_cast<const uint8_t*>(value.data()), int(value.size()));
  in.SetTotalBytesLimit(int(value.size()));
  bool on_demand = false;
  constexpr int kOnDemandField = v1::AuditRecord::kOnDemandFieldNumber;
  while (true) {
    const uint32_t tag = in.ReadTag();
    if (tag == 0) break;
    if (WireFormatLite::GetTagFieldNumber(tag) == kOnDemandField &&
        WireFormatLite::GetTagWireType(tag) ==
            WireFormatLite::WIRETYPE_VARINT) {
      uint64_t v = 0;
      if (!in.ReadVarint64(&v)) break;
      on_demand = v != 0;  // the last occurrence wins, as in parsing
    } else if (!WireFormatLite::SkipField(&in, tag)) {
      break;
    }
  }
  if (in.CurrentPosition() != int(value.size())) {
    return absl::DataLossError(
        Cat("audit store ", dir_, ": audit record is malformed"));
  }
  return std::optional<bool>(on_demand);
}

absl::Status AuditStore::ScanPending(
    bool fill_cache,
    const std::function<bool(std::string_view key)>& visit) const {
  rocksdb::ReadOptions read;
  read.fill_cache = fill_cache;
  std::unique_ptr<rocksdb::Iterator> it(
      db_->db()->NewIterator(read, db_->family(0)));
  for (it->Seek("p/"); it->Valid() && it->key().starts_with("p/"); it->Next()) {
    if (!visit(std::string_view(it->key().data(), it->key().size()))) break;
  }
  return db_->Check(it->status(), "scan");
}

absl::StatusOr<uint64_t> AuditStore::CountPending(uint64_t cap) const {
  uint64_t n = 0;
  if (cap == 0) return n;
  LP_RETURN_IF_ERROR(ScanPending(/*fill_cache=*/false,
                                 [&](std::string_view) { return ++n < cap; }));
  return n;
}

absl::StatusOr<std::vector<v1::AuditRecord>> AuditStore::PendingAudits(
    size_t limit) const {
  std::vector<std::string> seeds;
  if (limit == 0) return std::vector<v1::AuditRecord>();
  LP_RETURN_IF_ERROR(ScanPending(/*fill_cache=*/true, [&](std::string_view k) {
    if (k.size() >= 2 + 8) seeds.emplace_back(k.data() + 10, k.size() - 10);
    return seeds.size() < limit;
  }));
  std::vector<v1::AuditRecord> out;
  for (const std::string& seed : seeds) {
    LP_ASSIGN_OR_RETURN(std::optional<v1::AuditRecord> r, Audit(seed));
    if (r.has_value() && !r->done()) out.push_back(std::move(*r));
  }
  return out;
}

absl::StatusOr<std::optional<v1::VerdictIndexEntry>> AuditStore::Verdict(
    uint64_t leaf_index) const {
  LP_ASSIGN_OR_RETURN(std::optional<std::string> v,
                      Get(Key("v/", U64Key(leaf_index))));
  if (!v.has_value()) return std::optional<v1::VerdictIndexEntry>();
  v1::VerdictIndexEntry e;
  if (!e.ParseFromString(*v)) {
    return absl::DataLossError(Cat("audit store ", dir_,
                                   ": verdict index entry ", leaf_index,
                                   " is malformed"));
  }
  return std::optional<v1::VerdictIndexEntry>(std::move(e));
}

absl::StatusOr<std::vector<uint64_t>> AuditStore::VerdictsOf(
    std::string_view request_id) const {
  const std::string prefix = Key("q/", request_id);
  std::vector<uint64_t> out;
  std::unique_ptr<rocksdb::Iterator> it(
      db_->db()->NewIterator(rocksdb::ReadOptions(), db_->family(0)));
  for (it->Seek(ToSlice(prefix));
       it->Valid() && it->key().starts_with(ToSlice(prefix)); it->Next()) {
    if (it->key().size() != prefix.size() + 8) continue;
    out.push_back(
        DecodeU64(std::string_view(it->key().data() + prefix.size(), 8)));
  }
  LP_RETURN_IF_ERROR(db_->Check(it->status(), "scan"));
  LP_ASSIGN_OR_RETURN(std::optional<uint64_t> logged,
                      CommitmentIndex(request_id));
  if (!logged.has_value()) return out;
  std::vector<uint64_t> own;
  for (uint64_t index : out) {
    LP_ASSIGN_OR_RETURN(std::optional<v1::VerdictIndexEntry> e, Verdict(index));
    if (e.has_value() && !e->refused_at_submission()) own.push_back(index);
  }
  return own;
}

absl::StatusOr<VerdictPage> AuditStore::ListVerdicts(
    const VerdictFilter& filter, uint64_t start, uint32_t limit,
    uint64_t max_scanned) const {
  uint64_t scanned = 0;
  VerdictPage page;
  std::unique_ptr<rocksdb::Iterator> it(
      db_->db()->NewIterator(rocksdb::ReadOptions(), db_->family(0)));
  const std::string first = Key("v/", U64Key(start));
  for (it->Seek(ToSlice(first)); it->Valid() && it->key().starts_with("v/");
       it->Next()) {
    if (it->key().size() != 10) continue;
    const uint64_t index = DecodeU64(std::string_view(it->key().data() + 2, 8));
    if (page.leaf_indices.size() >= limit || scanned >= max_scanned) {
      page.next = index;
      break;
    }
    ++scanned;
    v1::VerdictIndexEntry e;
    if (!e.ParseFromArray(it->value().data(), int(it->value().size()))) {
      return absl::DataLossError(Cat("audit store ", dir_,
                                     ": verdict index entry ", index,
                                     " is malformed"));
    }
    if (!filter.prover_id.empty() && e.prover_id() != filter.prover_id) {
      continue;
    }
    if (filter.outcome != 0 && int(e.outcome()) != filter.outcome) continue;
    if (e.created_at_unix_nanos() < filter.from_unix_nanos) continue;
    if (filter.to_unix_nanos != 0 &&
        e.created_at_unix_nanos() >= filter.to_unix_nanos) {
      continue;
    }
    page.leaf_indices.push_back(index);
  }
  LP_RETURN_IF_ERROR(db_->Check(it->status(), "scan"));
  return page;
}

absl::StatusOr<std::optional<std::string>> AuditStore::Unlogged(
    std::string_view leaf_hash) const {
  return Get(Key("u/", leaf_hash));
}

absl::StatusOr<std::optional<std::string>> AuditStore::Refusal(
    std::string_view leaf_hash) const {
  return Get(Key("r/", leaf_hash));
}

absl::StatusOr<uint64_t> AuditStore::RefusalCount(
    std::string_view submitter) const {
  LP_ASSIGN_OR_RETURN(std::optional<std::string> v, Get(Key("s/", submitter)));
  return v.has_value() ? DecodeU64(*v) : 0;
}

absl::StatusOr<std::optional<ReportCheckpoint>> AuditStore::LastReport() const {
  LP_ASSIGN_OR_RETURN(std::optional<std::string> v, Get(kLastReportKey));
  if (!v.has_value()) return std::optional<ReportCheckpoint>();
  if (v->size() != kLastReportBytes) {
    return absl::DataLossError(Cat("audit store ", dir_, ": ", kLastReportKey,
                                   ": got ", v->size(), " bytes, want ",
                                   kLastReportBytes));
  }
  ReportCheckpoint r;
  r.tree_size = DecodeU64(std::string_view(*v).substr(0, 8));
  r.root_hash = v->substr(8, 32);
  r.generated_at_unix_nanos =
      int64_t(DecodeU64(std::string_view(*v).substr(40, 8)));
  return std::optional<ReportCheckpoint>(std::move(r));
}

}  // namespace layerproof::verifier
