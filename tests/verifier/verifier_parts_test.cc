// The verifier's parts without a server: the prover registry file, request
// validation messages, and the audit store's pending set and verdict index.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "store/crypto.h"
#include "tests/verifier/verifier_world.h"
#include "verifier/audit_store.h"
#include "verifier/prover_registry.h"
#include "verifier/validation.h"

namespace layerproof::verifier {
namespace {

using testing::TempDir;

void Write(const std::string& path, const std::string& text) {
  std::ofstream(path) << text;
}

TEST(ProverRegistryTest, LoadsRelativeKeyFilesAndRefusesDuplicates) {
  TempDir dir;
  auto key = store::Ed25519PrivateKey::Generate();
  ASSERT_TRUE(key.ok());
  std::filesystem::create_directories(dir.path() + "/keys");
  ASSERT_TRUE(store::WriteKeyPair(*key, dir.path() + "/keys/p1").ok());
  const std::string file = dir.path() + "/provers.json";
  Write(file, R"({"provers":[{"id":"prover-1","public_key_file":"keys/p1.pub",
                 "opening_address":"127.0.0.1:7001"}]})");
  rpc::TlsOptions tls;
  tls.insecure = true;
  auto provers = LoadProverRegistry(file, tls);
  ASSERT_TRUE(provers.ok()) << provers.status();
  ASSERT_EQ(provers->size(), 1u);
  EXPECT_EQ((*provers)[0].prover_id, "prover-1");
  EXPECT_EQ((*provers)[0].opening_address, "127.0.0.1:7001");
  EXPECT_EQ((*provers)[0].key.raw(), key->public_key().raw());
  EXPECT_TRUE((*provers)[0].opening_tls.insecure);

  Write(file, R"({"provers":[{"id":"a","public_key_file":"keys/p1.pub"},
                             {"id":"a","public_key_file":"keys/p1.pub"}]})");
  auto dup = LoadProverRegistry(file);
  EXPECT_EQ(dup.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(dup.status().message().find("provers[1].id"), std::string::npos)
      << dup.status();
  Write(file, R"({"provers":[{"id":"a","public_key_file":"keys/none.pub"}]})");
  auto missing = LoadProverRegistry(file);
  EXPECT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("provers[0].public_key_file"),
            std::string::npos)
      << missing.status();
  Write(file, R"({"provers":[{"id":"a","key":"x"}]})");
  EXPECT_FALSE(LoadProverRegistry(file).ok());

  // The retention the audit's fault rule uses (docs/protocol.md).
  Write(file, R"({"provers":[{"id":"a","public_key_file":"keys/p1.pub",
                              "retention_hours":24}]})");
  auto retained = LoadProverRegistry(file);
  ASSERT_TRUE(retained.ok()) << retained.status();
  EXPECT_EQ((*retained)[0].retention, absl::Hours(24));
  EXPECT_EQ((*provers)[0].retention, absl::Hours(24 * 7));  // the default
  for (const char* bad : {"0", "\"24\"", "1.5", "87601"}) {
    Write(file, std::string(R"({"provers":[{"id":"a",
        "public_key_file":"keys/p1.pub","retention_hours":)") +
                    bad + "}]}");
    auto refused = LoadProverRegistry(file);
    EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument)
        << bad;
    EXPECT_NE(refused.status().message().find(
                  "provers[0].retention_hours: want an integer 1..87600"),
              std::string::npos)
        << refused.status();
  }
}

TEST(ProverDirectoryTest, KeySnapshotsAreCopyOnWrite) {
  ProverDirectory d;
  auto k1 = store::Ed25519PrivateKey::Generate();
  auto k2 = store::Ed25519PrivateKey::Generate();
  ASSERT_TRUE(d.Add({"p1", k1->public_key(), "", {}}).ok());
  auto before = d.keys();
  ASSERT_TRUE(d.Add({"p2", k2->public_key(), "", {}}).ok());
  EXPECT_EQ(before->size(), 1u);
  EXPECT_EQ(d.keys()->size(), 2u);
  EXPECT_EQ(d.ProverOfKey(k2->public_key().KeyId()), "p2");
  EXPECT_EQ(d.Add({"p1", k2->public_key(), "", {}}).code(),
            absl::StatusCode::kAlreadyExists);
}

TEST(ValidationTest, MessagesNameFieldValueAndLimit) {
  v1::RequestAuditRequest r;
  r.set_request_id("abc");
  EXPECT_EQ(ValidateRequestAuditRequest(r, 4).message(),
            "RequestAuditRequest.request_id: got 3 bytes, want 16");
  r.set_request_id(std::string(16, 'x'));
  r.add_layers(2);
  r.add_layers(5);
  EXPECT_EQ(ValidateRequestAuditRequest(r, 4).message(),
            "RequestAuditRequest.layers[1]: got 5, want 3..4 (blocks of the "
            "model, strictly ascending)");
  r.set_all_layers(true);
  EXPECT_TRUE(ValidateRequestAuditRequest(r, 4).ok());

  v1::ListVerdictsRequest l;
  l.set_page_size(1001);
  EXPECT_EQ(ValidateListVerdictsRequest(l).status().message(),
            "ListVerdictsRequest.page_size: got 1001, want 0..1000");
  l.set_page_size(0);
  l.set_page_token("x");
  EXPECT_FALSE(ValidateListVerdictsRequest(l).ok());
  l.set_page_token("17");
  auto listing = ValidateListVerdictsRequest(l);
  ASSERT_TRUE(listing.ok());
  EXPECT_EQ(listing->start, 17u);
  EXPECT_EQ(listing->page_size, kDefaultVerdictPageSize);

  v1::GetConsistencyProofRequest c;
  c.set_old_size(5);
  c.set_new_size(3);
  EXPECT_EQ(ValidateGetConsistencyProofRequest(c).message(),
            "GetConsistencyProofRequest.old_size: got 5, want <= new_size (3)");
}

TEST(AuditStoreTest, PendingSetVerdictIndexAndReopen) {
  TempDir dir;
  {
    auto store = AuditStore::Open(dir.path());
    ASSERT_TRUE(store.ok()) << store.status();
    v1::AuditRecord a;
    a.set_request_id(std::string(16, 'r'));
    a.set_audit_seed(std::string(32, 'a'));
    a.set_created_at_unix_nanos(2);
    v1::AuditRecord b = a;
    b.set_audit_seed(std::string(32, 'b'));
    b.set_created_at_unix_nanos(1);
    AuditStoreBatch batch;
    batch.PutAudit(a);
    batch.PutAudit(b);
    batch.PutCommitment(a.request_id(), 7);
    batch.SetIndexed(8);
    ASSERT_TRUE((*store)->Write(batch).ok());
    auto pending = (*store)->PendingAudits();
    ASSERT_TRUE(pending.ok());
    ASSERT_EQ(pending->size(), 2u);
    EXPECT_EQ((*pending)[0].audit_seed(), b.audit_seed());  // oldest first
    EXPECT_EQ(*(*store)->CountPending(100), 2u);
    EXPECT_EQ(*(*store)->CountPending(1), 1u);  // capped
    b.set_done(true);
    v1::VerdictIndexEntry e;
    e.set_request_id(a.request_id());
    e.set_prover_id("p");
    e.set_outcome(v1::PASS);
    e.set_created_at_unix_nanos(10);
    batch.PutAudit(b);
    batch.PutVerdict(9, e);
    e.set_outcome(v1::FAIL_OPENING);
    batch.PutVerdict(12, e);
    ASSERT_TRUE((*store)->Write(batch).ok());
  }
  auto store = AuditStore::Open(dir.path());
  ASSERT_TRUE(store.ok());
  EXPECT_EQ(*(*store)->IndexedSize(), 8u);
  EXPECT_EQ(**(*store)->CommitmentIndex(std::string(16, 'r')), 7u);
  auto pending = (*store)->PendingAudits();
  ASSERT_TRUE(pending.ok());
  ASSERT_EQ(pending->size(), 1u);
  EXPECT_EQ((*pending)[0].audit_seed(), std::string(32, 'a'));
  EXPECT_EQ(*(*store)->CountPending(100), 1u);  // the done one left the set
  EXPECT_EQ(*(*store)->VerdictsOf(std::string(16, 'r')),
            (std::vector<uint64_t>{9, 12}));
  VerdictFilter f;
  f.outcome = v1::FAIL_OPENING;
  auto page = (*store)->ListVerdicts(f, 0, 10);
  ASSERT_TRUE(page.ok());
  EXPECT_EQ(page->leaf_indices, (std::vector<uint64_t>{12}));
  auto first = (*store)->ListVerdicts({}, 0, 1);
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(first->leaf_indices, (std::vector<uint64_t>{9}));
  EXPECT_EQ(first->next, 12u);
  // Bounded work per call (issue 13, item 7): a filter that matches nothing
  // examines at most max_scanned entries and says where to go on.
  VerdictFilter none;
  none.outcome = v1::FAIL_MODEL;
  auto short_page = (*store)->ListVerdicts(none, 0, 10, /*max_scanned=*/1);
  ASSERT_TRUE(short_page.ok());
  EXPECT_TRUE(short_page->leaf_indices.empty());
  EXPECT_EQ(short_page->next, 12u);
  auto last = (*store)->ListVerdicts(none, 12, 10, /*max_scanned=*/1);
  ASSERT_TRUE(last.ok());
  EXPECT_TRUE(last->leaf_indices.empty());
  EXPECT_FALSE(last->next.has_value());

  // Refusals at submission (issue 13, item 6): once the request id is
  // logged, its verdicts are the ones on its commitment only.
  AuditStoreBatch more;
  v1::VerdictIndexEntry refusal;
  refusal.set_request_id(std::string(16, 'r'));
  refusal.set_prover_id("intruder");
  refusal.set_outcome(v1::FAIL_SIGNATURE);
  refusal.set_refused_at_submission(true);
  more.PutVerdict(14, refusal);
  refusal.set_request_id(std::string(16, 's'));  // never logged
  more.PutVerdict(15, refusal);
  ASSERT_TRUE((*store)->Write(more).ok());
  EXPECT_EQ(*(*store)->VerdictsOf(std::string(16, 'r')),
            (std::vector<uint64_t>{9, 12}));
  EXPECT_EQ(*(*store)->VerdictsOf(std::string(16, 's')),
            (std::vector<uint64_t>{15}));
}

}  // namespace
}  // namespace layerproof::verifier
