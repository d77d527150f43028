#include "tests/integration/store_workload.h"

#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <sstream>
#include <system_error>
#include <utility>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "kernels/status.h"
#include "store/crypto.h"
#include "store/rocksdb_log.h"

namespace layerproof::integration {
namespace {

constexpr int kAppenders = 2;
constexpr int kSubmitters = 2;

std::string Hex(std::string_view s) {
  return store::HexEncode(store::AsBytes(s));
}

std::string Unhex(const std::string& hex) {
  absl::StatusOr<std::string> s = store::HexDecode(hex);
  EXPECT_TRUE(s.ok()) << s.status();
  return s.ok() ? *s : std::string();
}

// 16 bytes, unique per run, thread and count.
std::string RequestId(int run, int thread, uint64_t i) {
  char id[32];
  std::snprintf(id, sizeof(id), "%05d%1d%010llu", run % 100000, thread % 10,
                static_cast<unsigned long long>(i % 10000000000ULL));
  return std::string(id, 16);
}

std::string Commitment(const std::string& id) { return "commit-" + id; }
std::string VerdictLeaf(const std::string& id) { return "verdict-" + id; }
std::string AuditSeed(const std::string& id) { return id + id; }

}  // namespace

std::shared_ptr<const store::CheckpointSigner> WorkloadSigner() {
  std::array<uint8_t, 32> seed;
  seed.fill(17);
  absl::StatusOr<store::Ed25519PrivateKey> key =
      store::Ed25519PrivateKey::FromSeed(seed);
  if (!key.ok()) return nullptr;
  absl::StatusOr<store::CheckpointSigner> signer =
      store::CheckpointSigner::Create(kWorkloadKeyName, *std::move(key));
  if (!signer.ok()) return nullptr;
  return std::make_shared<const store::CheckpointSigner>(*std::move(signer));
}

absl::StatusOr<NodeStores> NodeStores::Open(const std::string& root,
                                            rocksdb::Env* env) {
  // The node's data directory is there before its databases (as a
  // deployment makes it); each database is created in it atomically.
  std::error_code ec;
  std::filesystem::create_directories(root, ec);
  if (ec) return absl::UnavailableError("create " + root + ": " + ec.message());
  NodeStores stores;
  store::LogOptions options;
  options.origin = kWorkloadOrigin;
  options.signer = WorkloadSigner();
  LP_ASSIGN_OR_RETURN(stores.log,
                      store::RocksDbLog::Open(root + "/log", options, env));
  LP_ASSIGN_OR_RETURN(stores.audits,
                      verifier::AuditStore::Open(root + "/audits", env));
  LP_ASSIGN_OR_RETURN(stores.journal,
                      prover::ProverJournal::Open(root + "/journal", env));
  return stores;
}

Workload::Workload(NodeStores& stores, int run,
                   std::function<void(const std::string&)> sink)
    : stores_(stores), run_(run), sink_(std::move(sink)) {
  for (int t = 0; t < kAppenders; ++t) {
    threads_.emplace_back([this, t] { Append(t); });
  }
  for (int t = 0; t < kSubmitters; ++t) {
    threads_.emplace_back([this, t] { Submit(t); });
  }
  threads_.emplace_back([this] { Audit(); });
}

Workload::~Workload() { Stop(); }

void Workload::Stop() {
  stop_ = true;
  for (std::thread& t : threads_) {
    if (t.joinable()) t.join();
  }
}

std::optional<uint64_t> Workload::AppendAndReport(const std::string& leaf) {
  absl::StatusOr<store::AppendResult> r = stores_.log->Append(leaf);
  if (!r.ok()) {
    ++errors_;
    return std::nullopt;
  }
  sink_("L " + std::to_string(r->index) + " " + Hex(leaf));
  absl::StatusOr<std::string> note = stores_.log->LatestCheckpoint();
  if (note.ok()) {
    bool fresh = false;
    {
      absl::MutexLock lock(&mu_);
      fresh = *note != last_note_;
      if (fresh) last_note_ = *note;
    }
    if (fresh) sink_("C " + Hex(*note));
  }
  return r->index;
}

void Workload::Append(int thread) {
  for (uint64_t i = 0; !stop_; ++i) {
    std::string leaf = "run" + std::to_string(run_) + "-appender" +
                       std::to_string(thread) + "-" + std::to_string(i);
    leaf.resize(120, '.');
    AppendAndReport(leaf);
  }
}

void Workload::Submit(int thread) {
  for (uint64_t i = 0; !stop_; ++i) {
    const std::string id = RequestId(run_, thread, i);
    v1::JournalEntry entry;
    entry.set_request_id(id);
    entry.set_seed(i);
    entry.set_commitment_envelope(Commitment(id));
    entry.set_created_at_unix_nanos(absl::ToUnixNanos(absl::Now()));
    if (!stores_.journal->Put(entry).ok()) {
      ++errors_;
      continue;
    }
    sink_("J " + Hex(id));
    std::optional<uint64_t> index = AppendAndReport(Commitment(id));
    if (!index) continue;  // pending: a restarted prover resubmits it
    v1::LogInclusion inclusion;
    inclusion.set_leaf_index(*index);
    if (!stores_.journal->SetInclusion(id, inclusion).ok()) {
      ++errors_;
      continue;
    }
    sink_("I " + Hex(id) + " " + std::to_string(*index));
    absl::MutexLock lock(&mu_);
    to_audit_.emplace_back(id, *index);
  }
}

void Workload::Audit() {
  while (!stop_) {
    std::vector<std::pair<std::string, uint64_t>> batch;
    {
      absl::MutexLock lock(&mu_);
      // Wakes for work or every millisecond to look at stop_.
      mu_.AwaitWithTimeout(
          absl::Condition(
              +[](std::vector<std::pair<std::string, uint64_t>>* q) {
                return !q->empty();
              },
              &to_audit_),
          absl::Milliseconds(1));
      batch.swap(to_audit_);
    }
    for (const auto& [id, index] : batch) {
      if (stop_) return;
      v1::AuditRecord record;
      record.set_request_id(id);
      record.set_commitment_leaf_index(index);
      record.set_audit_seed(AuditSeed(id));
      record.set_created_at_unix_nanos(absl::ToUnixNanos(absl::Now()));
      verifier::AuditStoreBatch drawn;
      drawn.PutCommitment(id, index);
      drawn.PutAudit(record);
      if (!stores_.audits->Write(drawn).ok()) {
        ++errors_;
        continue;
      }
      std::optional<uint64_t> verdict = AppendAndReport(VerdictLeaf(id));
      if (!verdict) continue;
      record.set_done(true);
      record.set_verdict_leaf_index(*verdict);
      v1::VerdictIndexEntry entry;
      entry.set_request_id(id);
      entry.set_outcome(v1::PASS);
      entry.set_audit_seed(AuditSeed(id));
      verifier::AuditStoreBatch concluded;
      concluded.PutAudit(record);
      concluded.PutVerdict(*verdict, entry);
      if (!stores_.audits->Write(concluded).ok()) {
        ++errors_;
        continue;
      }
      sink_("V " + std::to_string(*verdict) + " " + Hex(id));
    }
  }
}

void Acks::Add(const std::string& line) {
  std::istringstream in(line);
  std::string kind, a, b;
  in >> kind >> a >> b;
  if (kind == "L") {
    const std::string leaf = Unhex(b);
    auto [it, fresh] = leaves_.emplace(std::stoull(a), leaf);
    EXPECT_EQ(it->second, leaf) << "index " << a << " acknowledged twice";
  } else if (kind == "J") {
    journaled_.emplace(Unhex(a), std::nullopt);
  } else if (kind == "I") {
    included_[Unhex(a)] = std::stoull(b);
  } else if (kind == "V") {
    verdicts_[std::stoull(a)] = Unhex(b);
  } else if (kind == "C") {
    const store::CheckpointVerifier verifier(kWorkloadKeyName,
                                             WorkloadSigner()->public_key());
    absl::StatusOr<store::Checkpoint> cp =
        verifier.Verify(Unhex(a), kWorkloadOrigin);
    ASSERT_TRUE(cp.ok()) << cp.status();
    auto [it, fresh] = checkpoints_.emplace(cp->size, cp->root);
    EXPECT_EQ(store::HexEncode(it->second), store::HexEncode(cp->root))
        << "two checkpoints of size " << cp->size << " with different roots";
    if (fresh) unchecked_.push_back(*std::move(cp));
  } else {
    ADD_FAILURE() << "malformed acknowledgement: " << line;
  }
}

void Acks::Check(const NodeStores& stores) {
  const store::Log& log = *stores.log;
  ASSERT_GE(log.Size(), MinSize());
  for (const auto& [index, leaf] : leaves_) {
    absl::StatusOr<std::string> entry = log.Entry(index);
    ASSERT_TRUE(entry.ok())
        << "acknowledged leaf " << index << " lost: " << entry.status();
    ASSERT_EQ(*entry, leaf) << "index " << index;
  }
  for (const auto& [id, unused] : journaled_) {
    absl::StatusOr<v1::JournalEntry> entry = stores.journal->Get(id);
    ASSERT_TRUE(entry.ok())
        << "journal entry " << Hex(id) << " lost: " << entry.status();
    auto included = included_.find(id);
    if (included != included_.end()) {
      ASSERT_TRUE(entry->has_inclusion()) << "inclusion of " << Hex(id);
      ASSERT_EQ(entry->inclusion().leaf_index(), included->second);
    }
  }
  for (const auto& [index, id] : verdicts_) {
    absl::StatusOr<std::optional<v1::VerdictIndexEntry>> verdict =
        stores.audits->Verdict(index);
    ASSERT_TRUE(verdict.ok()) << verdict.status();
    ASSERT_TRUE(verdict->has_value()) << "verdict " << index << " lost";
    ASSERT_EQ((*verdict)->request_id(), id);
    absl::StatusOr<std::optional<v1::AuditRecord>> audit =
        stores.audits->Audit(AuditSeed(id));
    ASSERT_TRUE(audit.ok() && audit->has_value()) << "audit of " << Hex(id);
    ASSERT_TRUE((*audit)->done());
    absl::StatusOr<std::optional<uint64_t>> commitment =
        stores.audits->CommitmentIndex(id);
    ASSERT_TRUE(commitment.ok() && commitment->has_value());
  }

  // The checkpoints.
  const store::CheckpointVerifier verifier(kWorkloadKeyName,
                                           WorkloadSigner()->public_key());
  absl::StatusOr<std::string> note = log.LatestCheckpoint();
  ASSERT_TRUE(note.ok()) << note.status();
  absl::StatusOr<store::Checkpoint> latest =
      verifier.Verify(*note, kWorkloadOrigin);
  ASSERT_TRUE(latest.ok()) << latest.status();
  ASSERT_EQ(latest->size, log.Size()) << "recovery left the tree unsigned";
  auto [it, fresh] = checkpoints_.emplace(latest->size, latest->root);
  ASSERT_EQ(store::HexEncode(it->second), store::HexEncode(latest->root))
      << "two checkpoints of size " << latest->size;
  if (!last_.has_value()) {
    store::Checkpoint empty;
    empty.size = 0;
    empty.root = store::EmptyRoot();
    last_ = empty;
  }
  unchecked_.push_back(*last_);
  for (const store::Checkpoint& seen : unchecked_) {
    ASSERT_LE(seen.size, latest->size)
        << "a checkpoint of " << seen.size << " was signed, the log has "
        << latest->size << " leaves";
    absl::StatusOr<std::vector<store::Sha256Hash>> proof =
        log.ConsistencyProof(seen.size, latest->size);
    ASSERT_TRUE(proof.ok()) << proof.status();
    const absl::Status consistent = store::VerifyConsistency(
        seen.size, latest->size, seen.root, latest->root, *proof);
    ASSERT_TRUE(consistent.ok()) << "checkpoint " << seen.size << " vs "
                                 << latest->size << ": " << consistent;
  }
  unchecked_.clear();
  last_ = *std::move(latest);
  const absl::Status fsck = log.Fsck();
  ASSERT_TRUE(fsck.ok()) << fsck;
}

}  // namespace layerproof::integration
