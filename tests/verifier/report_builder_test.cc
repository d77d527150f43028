// The compliance report's scan of the log (verifier/report_builder.h) over
// a hand-built log (store::MemoryLog) and audit store: every count equals
// the verdicts logged in the window, the splits by prover and by model,
// on-demand audits and refusals kept out of the detection bounds, the
// window and prover filters, the failures list and its cap, and the
// timeline.
#include "verifier/report_builder.h"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "store/checkpoint.h"
#include "store/envelope.h"
#include "store/memory_log.h"
#include "store/merkle.h"
#include "tests/verifier/report_entries.h"
#include "tests/verifier/verifier_world.h"
#include "verifier/audit_store.h"
#include "check/bytes.h"

namespace layerproof::verifier {
namespace {

using testing::FreshBytes;
using testing::ProverEntry;
using testing::Serve;
using testing::TempDir;
using testing::TheWorld;

constexpr int64_t kSecond = 1000000000;
constexpr int64_t kT0 = 1800000000 * kSecond;

const store::Ed25519PrivateKey& Key() {
  static auto* key =
      new store::Ed25519PrivateKey(*store::Ed25519PrivateKey::Generate());
  return *key;
}

// A log and audit store holding hand-made commitments and verdicts.
class Fixture {
 public:
  Fixture() {
    auto signer = store::CheckpointSigner::Create(
        "verifier-test", *store::Ed25519PrivateKey::FromPem(Key().ToPem()));
    EXPECT_TRUE(signer.ok());
    store::LogOptions o;
    o.origin = "layerproof/verifier-test";
    o.signer =
        std::make_shared<const store::CheckpointSigner>(std::move(*signer));
    log_ = std::move(*store::MemoryLog::Create(std::move(o)));
    auto s = AuditStore::Open(dir_.path());
    EXPECT_TRUE(s.ok()) << s.status();
    store_ = std::move(*s);
    template_ = Serve(Key(), "prover-1").commitment;
  }

  // Logs a commitment by `prover` created at `t`; returns its leaf index.
  uint64_t Commit(const std::string& prover, int64_t t,
                  std::optional<std::string> nonce = std::nullopt) {
    v1::Commitment c = template_;
    if (nonce.has_value()) c.set_client_nonce(*nonce);
    c.set_request_id(FreshBytes(16));
    c.set_prover_id(prover);
    c.set_created_at_unix_nanos(t);
    auto env = store::SignCommitment(c, Key());
    EXPECT_TRUE(env.ok()) << env.status();
    auto r = log_->Append(*env);
    EXPECT_TRUE(r.ok()) << r.status();
    request_ids_[r->index] = c.request_id();
    return r->index;
  }

  // Logs a verdict on commitment `leaf` (absent: a refusal charged to
  // `submitter`) and stores its audit record.
  uint64_t Judge(std::optional<uint64_t> leaf, v1::VerdictOutcome outcome,
                 std::vector<uint32_t> layers, bool on_demand,
                 const std::string& submitter = "", int64_t t = kT0) {
    v1::Verdict v;
    v.set_request_id(leaf.has_value() ? request_ids_[*leaf] : FreshBytes(16));
    if (leaf.has_value()) v.set_commitment_leaf_index(*leaf);
    v.set_outcome(outcome);
    if (outcome == v1::FAIL_MISMATCH) {
      v.mutable_mismatch()->set_layer(layers.empty() ? 1 : layers[0]);
      v.mutable_mismatch()->set_expected(std::string(32, 'e'));
      v.mutable_mismatch()->set_got(std::string(32, 'g'));
      v.set_detail("layer hash differs");
    }
    for (uint32_t l : layers) v.add_audited_layers(l);
    v.set_head_checked(true);
    const std::string seed = FreshBytes(32);
    v.set_audit_seed(seed);
    v.set_verifier_id("verifier-test");
    v.set_created_at_unix_nanos(t + kSecond / 2);
    v.set_commitment_leaf_hash(std::string(32, 'h'));
    v.set_refused_submitter(submitter);
    auto env = store::SignVerdict(v, Key());
    EXPECT_TRUE(env.ok()) << env.status();
    auto r = log_->Append(*env);
    EXPECT_TRUE(r.ok()) << r.status();
    v1::AuditRecord record;
    record.set_audit_seed(seed);
    record.set_request_id(v.request_id());
    record.set_on_demand(on_demand);
    record.set_refused_at_submission(!leaf.has_value());
    record.set_done(true);
    record.set_verdict_leaf_index(r->index);
    AuditStoreBatch batch;
    batch.PutAudit(record);
    EXPECT_TRUE(store_->Write(batch).ok());
    return r->index;
  }

  // Records the verifier's time of logging for commitment entry `leaf`,
  // as the scheduler does when it indexes it.
  void SetLoggedAt(uint64_t leaf, int64_t t) {
    AuditStoreBatch batch;
    batch.SetLoggedAt(leaf, t);
    EXPECT_TRUE(store_->Write(batch).ok());
  }

  // Marks entries [0, size) indexed; 0: the log's size.
  void SetIndexed(uint64_t size = 0) {
    AuditStoreBatch batch;
    batch.SetIndexed(size == 0 ? log_->Size() : size);
    EXPECT_TRUE(store_->Write(batch).ok());
  }

  std::vector<uint32_t> AllLayers() const {
    std::vector<uint32_t> out;
    for (uint32_t l = 1; l <= uint32_t(TheWorld().layers); ++l) {
      out.push_back(l);
    }
    return out;
  }

  nlohmann::json Build(int64_t from, int64_t to, const std::string& prover = "",
                       size_t max_failures = kMaxReportFailures,
                       bool index_all = true) {
    // Every entry indexed, with no recorded logging times unless a test set
    // them: the store of an older build, windowed by created_at.
    if (index_all) SetIndexed();
    ReportInputs in;
    in.from_unix_nanos = from;
    in.to_unix_nanos = to;
    in.prover_id = prover;
    in.verifier_id = "verifier-test";
    in.log_origin = "layerproof/verifier-test";
    in.policy.rate = 0.5;
    in.policy.layers_per_audit = 1;
    in.generated_at = absl::FromUnixNanos(kT0 + 1000 * kSecond);
    in.checkpoint_note = *log_->LatestCheckpoint();
    store::CheckpointVerifier verifier("verifier-test", Key().public_key());
    auto c = verifier.Verify(in.checkpoint_note);
    EXPECT_TRUE(c.ok()) << c.status();
    in.checkpoint = *c;
    in.max_failures = max_failures;
    auto report = BuildReport(*log_, *store_, in);
    EXPECT_TRUE(report.ok()) << report.status();
    return report.value_or(nlohmann::json());
  }

  const std::string& model_hex() {
    static const std::string hex = check::Hex(TheWorld().model_digest);
    return hex;
  }

 private:
  TempDir dir_;
  std::unique_ptr<store::Log> log_;
  std::unique_ptr<AuditStore> store_;
  v1::Commitment template_;
  std::map<uint64_t, std::string> request_ids_;
};

// The scenario of most tests: in the window [kT0, kT0 + 50 s), prover-1
// has two commitments audited by draws of every layer (one also audited
// on demand), prover-2 one commitment that failed its drawn audit and one
// refused submission; outside it, one more of prover-1's.
struct Scenario {
  uint64_t c0, c1, c2, c3;
  uint64_t mismatch_verdict, refusal_verdict;
};

Scenario Populate(Fixture& f) {
  Scenario s;
  s.c0 = f.Commit("prover-1", kT0 + 1 * kSecond);
  s.c1 = f.Commit("prover-1", kT0 + 2 * kSecond);
  s.c2 = f.Commit("prover-2", kT0 + 3 * kSecond);
  s.c3 = f.Commit("prover-1", kT0 + 100 * kSecond);
  f.Judge(s.c0, v1::PASS, f.AllLayers(), /*on_demand=*/false);
  f.Judge(s.c0, v1::PASS, f.AllLayers(), /*on_demand=*/true);
  f.Judge(s.c1, v1::PASS, f.AllLayers(), /*on_demand=*/false);
  s.mismatch_verdict = f.Judge(s.c2, v1::FAIL_MISMATCH, {1}, false);
  s.refusal_verdict = f.Judge(std::nullopt, v1::FAIL_SIGNATURE, {}, false,
                              "prover-2", kT0 + 4 * kSecond);
  f.Judge(s.c3, v1::PASS, f.AllLayers(), false);
  return s;
}

TEST(ReportBuilderTest, CountsEqualTheVerdictsLoggedInTheWindow) {
  Fixture f;
  const Scenario s = Populate(f);
  const nlohmann::json r = f.Build(kT0, kT0 + 50 * kSecond);
  EXPECT_EQ(r["format"], "layerproof.compliance-report.v1");
  EXPECT_EQ(r["checkpoint"]["tree_size"], 10);
  EXPECT_TRUE(r["previous_report"].is_null());
  EXPECT_EQ(r["window"]["from"], "2027-01-15T08:00:00Z");
  const nlohmann::json& t = r["totals"];
  EXPECT_EQ(t["commitments"], 3);
  EXPECT_EQ(t["audited_commitments"], 3);
  EXPECT_EQ(t["audits"], 5);
  EXPECT_EQ(t["drawn_audits"], 3);
  EXPECT_EQ(t["on_demand_audits"], 1);
  EXPECT_EQ(t["refused_submissions"], 1);
  EXPECT_EQ(t["failures"], 2);
  EXPECT_EQ(t["realised_audit_rate"], 1.0);
  EXPECT_EQ(t["verdicts"]["PASS"], 3);
  EXPECT_EQ(t["verdicts"]["FAIL_MISMATCH"], 1);
  EXPECT_EQ(t["verdicts"]["FAIL_SIGNATURE"], 1);
  EXPECT_EQ(t["verdicts"]["FAIL_OPENING"], 0);
  EXPECT_EQ(t["verdicts"]["FAIL_TIMEOUT"], 0);
  EXPECT_EQ(t["verdicts"]["FAIL_MODEL"], 0);

  // By prover: the on-demand audit is counted but not in the bounds.
  ASSERT_EQ(r["by_prover"].size(), 2u);
  const nlohmann::json& p1 = ProverEntry(r, "prover-1");
  EXPECT_EQ(p1["commitments"], 2);
  EXPECT_EQ(p1["audits"], 3);
  EXPECT_EQ(p1["drawn_audits"], 2);
  EXPECT_EQ(p1["on_demand_audits"], 1);
  EXPECT_EQ(p1["failures"], 0);
  EXPECT_EQ(p1["detection"]["drawn_audits"], 2);
  EXPECT_EQ(p1["detection"]["layer_fraction_min"], 1.0);
  // Two audits of every block: M(f) = (1 - f)^2 <= 0.05.
  EXPECT_NEAR(p1["detection"]["ruled_out"]["0.95"].get<double>(),
              1 - std::sqrt(0.05), 1e-12);
  EXPECT_NEAR(p1["detection"]["ruled_out"]["0.99"].get<double>(), 0.9, 1e-12);
  ASSERT_EQ(p1["detection"]["curve"].size(), 51u);
  const nlohmann::json& p2 = ProverEntry(r, "prover-2");
  EXPECT_EQ(p2["commitments"], 1);
  EXPECT_EQ(p2["audits"], 2);
  EXPECT_EQ(p2["refused_submissions"], 1);
  EXPECT_EQ(p2["failures"], 2);
  EXPECT_TRUE(p2["detection"]["ruled_out"]["0.95"].is_null());
  EXPECT_TRUE(p2["detection"]["ruled_out"]["0.99"].is_null());
  // Over everyone: failures, so no bound.
  EXPECT_EQ(r["detection"]["drawn_audits"], 3);
  EXPECT_TRUE(r["detection"]["ruled_out"]["0.95"].is_null());

  // By model: the commitments' model, and "" for the refused envelope.
  ASSERT_EQ(r["by_model"].size(), 2u);
  EXPECT_EQ(r["by_model"][0]["model_digest"], "");
  EXPECT_EQ(r["by_model"][0]["audits"], 1);
  EXPECT_EQ(r["by_model"][1]["model_digest"], f.model_hex());
  EXPECT_EQ(r["by_model"][1]["commitments"], 3);
  EXPECT_EQ(r["by_model"][1]["audits"], 4);

  // Every failure, with its evidence reference.
  ASSERT_EQ(r["failures"].size(), 2u);
  const nlohmann::json& mismatch = r["failures"][0];
  EXPECT_EQ(mismatch["outcome"], "FAIL_MISMATCH");
  EXPECT_EQ(mismatch["prover_id"], "prover-2");
  EXPECT_EQ(mismatch["layer"], 1);
  EXPECT_EQ(mismatch["verdict_leaf_index"], s.mismatch_verdict);
  EXPECT_EQ(mismatch["commitment_leaf_index"], s.c2);
  EXPECT_EQ(mismatch["model_digest"], f.model_hex());
  EXPECT_EQ(mismatch["evidence"]["rpc"], "layerproof.v1.Audit/GetEvidence");
  EXPECT_EQ(mismatch["evidence"]["verdict_leaf_index"], s.mismatch_verdict);
  EXPECT_EQ(mismatch["evidence"]["request_id"], mismatch["request_id"]);
  const nlohmann::json& refusal = r["failures"][1];
  EXPECT_EQ(refusal["outcome"], "FAIL_SIGNATURE");
  EXPECT_TRUE(refusal["commitment_leaf_index"].is_null());
  EXPECT_FALSE(refusal.contains("layer"));
  EXPECT_EQ(refusal["refused_at_submission"], true);
  EXPECT_EQ(r["failures_omitted"], 0);

  // The timeline: 1 s buckets, verdicts at their commitment's time.
  EXPECT_EQ(r["timeline"]["bucket_nanos"], kSecond);
  ASSERT_EQ(r["timeline"]["buckets"].size(), 50u);
  EXPECT_EQ(r["timeline"]["buckets"][1]["pass"], 2);
  EXPECT_EQ(r["timeline"]["buckets"][3]["fail"], 1);
  EXPECT_EQ(r["timeline"]["buckets"][4]["fail"], 1);
}

TEST(ReportBuilderTest, WindowAndProverFilter) {
  Fixture f;
  const Scenario s = Populate(f);
  // Only the commitment at +100 s.
  nlohmann::json r = f.Build(kT0 + 50 * kSecond, kT0 + 200 * kSecond);
  EXPECT_EQ(r["totals"]["commitments"], 1);
  EXPECT_EQ(r["totals"]["audits"], 1);
  EXPECT_EQ(r["totals"]["failures"], 0);
  // [from, to): a commitment at exactly `to` is out, at `from` in.
  r = f.Build(kT0 + 2 * kSecond, kT0 + 3 * kSecond);
  EXPECT_EQ(r["totals"]["commitments"], 1);
  EXPECT_EQ(r["by_prover"][0]["prover_id"], "prover-1");
  // One prover only.
  r = f.Build(kT0, kT0 + 200 * kSecond, "prover-1");
  EXPECT_EQ(r["prover_filter"], "prover-1");
  EXPECT_EQ(r["totals"]["commitments"], 3);
  EXPECT_EQ(r["totals"]["audits"], 4);
  EXPECT_EQ(r["totals"]["failures"], 0);
  ASSERT_EQ(r["by_prover"].size(), 1u);
  EXPECT_EQ(r["failures"].size(), 0u);
  r = f.Build(kT0, kT0 + 200 * kSecond, "prover-2");
  EXPECT_EQ(r["totals"]["commitments"], 1);
  EXPECT_EQ(r["totals"]["audits"], 2);
  EXPECT_EQ(r["failures"].size(), 2u);
  r = f.Build(kT0, kT0 + 200 * kSecond, "prover-9");
  EXPECT_EQ(r["totals"]["commitments"], 0);
  EXPECT_EQ(r["totals"]["realised_audit_rate"], 0.0);
  EXPECT_EQ(r["by_prover"].size(), 0u);
  (void)s;
}

TEST(ReportBuilderTest, FailuresListIsCapped) {
  Fixture f;
  Populate(f);
  const nlohmann::json r = f.Build(kT0, kT0 + 50 * kSecond, "", 1);
  EXPECT_EQ(r["totals"]["failures"], 2);
  EXPECT_EQ(r["failures"].size(), 1u);
  EXPECT_EQ(r["failures_omitted"], 1);
}

TEST(ReportBuilderTest, RealisedRateCountsOnlyDrawnAudits) {
  Fixture f;
  const uint64_t a = f.Commit("prover-1", kT0 + kSecond);
  f.Commit("prover-1", kT0 + kSecond);
  const uint64_t c = f.Commit("prover-1", kT0 + kSecond);
  f.Commit("prover-1", kT0 + kSecond);
  f.Judge(a, v1::PASS, {1}, /*on_demand=*/false);
  f.Judge(c, v1::PASS, {1}, /*on_demand=*/true);
  const nlohmann::json r = f.Build(kT0, kT0 + 10 * kSecond);
  EXPECT_EQ(r["totals"]["commitments"], 4);
  EXPECT_EQ(r["totals"]["audited_commitments"], 2);
  EXPECT_EQ(r["totals"]["drawn_audited_commitments"], 1);
  EXPECT_EQ(r["totals"]["realised_audit_rate"], 0.25);
  EXPECT_EQ(r["detection"]["drawn_audits"], 1);
  EXPECT_EQ(r["detection"]["layer_fraction_mean"],
            1.0 / double(TheWorld().layers));
}

// Requests without a client nonce (the prover chose the seed) are counted
// apart (issue 13, item 2).
TEST(ReportBuilderTest, CommitmentsWithoutANonceAreCountedApart) {
  Fixture f;
  f.Commit("prover-1", kT0 + kSecond, "a nonce");
  f.Commit("prover-1", kT0 + kSecond, "");
  f.Commit("prover-2", kT0 + kSecond, "");
  const nlohmann::json r = f.Build(kT0, kT0 + 10 * kSecond);
  EXPECT_EQ(r["totals"]["commitments"], 3);
  EXPECT_EQ(r["totals"]["commitments_without_nonce"], 2);
  EXPECT_EQ(ProverEntry(r, "prover-1")["commitments_without_nonce"], 1);
}

// An audit the verifier closed without re-executing (v1::INCONCLUSIVE: its
// own errors, or an opening past the prover's retention) is counted apart:
// not an audit, not a failure, in no detection bound.
TEST(ReportBuilderTest, InconclusiveIsCountedApartFromAuditsAndFailures) {
  Fixture f;
  const uint64_t a = f.Commit("prover-1", kT0 + kSecond);
  const uint64_t b = f.Commit("prover-1", kT0 + kSecond);
  f.Judge(a, v1::PASS, {1}, /*on_demand=*/false);
  f.Judge(b, v1::INCONCLUSIVE, {2}, /*on_demand=*/false);
  const nlohmann::json r = f.Build(kT0, kT0 + 10 * kSecond);
  const nlohmann::json& t = r["totals"];
  EXPECT_EQ(t["verdicts"]["INCONCLUSIVE"], 1);
  EXPECT_EQ(t["verdicts"]["PASS"], 1);
  EXPECT_EQ(t["audits"], 1);
  EXPECT_EQ(t["failures"], 0);
  EXPECT_EQ(t["audited_commitments"], 1);
  EXPECT_EQ(r["detection"]["drawn_audits"], 1);
  EXPECT_TRUE(r["failures"].empty());
}

// Regression: reports windowed commitments by the prover-chosen created_at,
// so a prover stamping 1970 dropped out of every window around now.
TEST(ReportBuilderTest, WindowsCommitmentsByTheVerifiersTimeOfLogging) {
  Fixture f;
  const int64_t now = kT0;
  const int64_t y1970 = 5 * kSecond;
  const uint64_t c = f.Commit("prover-1", y1970);
  f.SetLoggedAt(c, now);
  f.Judge(c, v1::FAIL_MISMATCH, {1}, /*on_demand=*/false, "", now);
  const uint64_t old = f.Commit("prover-1", now);  // no recorded time
  f.Judge(old, v1::PASS, f.AllLayers(), false);

  const nlohmann::json around_now =
      f.Build(now - 60 * kSecond, now + 60 * kSecond);
  EXPECT_EQ(around_now["totals"]["commitments"], 2);
  EXPECT_EQ(around_now["totals"]["commitments_timed_by_prover_clock"], 1);
  EXPECT_EQ(around_now["totals"]["failures"], 1);
  ASSERT_EQ(around_now["failures"].size(), 1u);
  EXPECT_EQ(around_now["failures"][0]["commitment_created_at_unix_nanos"],
            y1970);
  EXPECT_EQ(around_now["failures"][0]["commitment_logged_at_unix_nanos"], now);
  // The timeline puts its verdict at the time of logging.
  uint64_t fails = 0;
  for (const nlohmann::json& b : around_now["timeline"]["buckets"]) {
    fails += b["fail"].get<uint64_t>();
  }
  EXPECT_EQ(fails, 1u);

  const nlohmann::json in_1970 = f.Build(0, 3600 * kSecond);
  EXPECT_EQ(in_1970["totals"]["commitments"], 0);
  EXPECT_EQ(in_1970["totals"]["failures"], 0);
  EXPECT_EQ(in_1970["totals"]["commitments_timed_by_prover_clock"], 0);
}

// An entry not yet indexed when the report starts has no recorded time; it
// is timed at the report's generation (it was logged before), never by the
// prover's claim.
TEST(ReportBuilderTest, TimesEntriesNotYetIndexedAtTheReport) {
  Fixture f;
  f.Commit("prover-1", 5 * kSecond);  // claims 1970
  // Build() generates at kT0 + 1000 s.
  const nlohmann::json r = f.Build(kT0 + 999 * kSecond, kT0 + 1001 * kSecond,
                                   "", kMaxReportFailures, /*index_all=*/false);
  EXPECT_EQ(r["totals"]["commitments"], 1);
  EXPECT_EQ(r["totals"]["commitments_timed_by_prover_clock"], 0);
  EXPECT_EQ(f.Build(0, 3600 * kSecond, "", kMaxReportFailures,
                    false)["totals"]["commitments"],
            0);
}

TEST(ReportBuilderTest, AuditStoreKeepsTheLoggedTimeOfAnEntry) {
  TempDir dir;
  {
    auto store = AuditStore::Open(dir.path());
    ASSERT_TRUE(store.ok()) << store.status();
    auto none = (*store)->LoggedAt(7);
    ASSERT_TRUE(none.ok());
    EXPECT_FALSE(none->has_value());
    AuditStoreBatch batch;
    batch.SetLoggedAt(7, kT0);
    ASSERT_TRUE((*store)->Write(batch).ok());
  }
  auto store = AuditStore::Open(dir.path());
  ASSERT_TRUE(store.ok()) << store.status();
  auto read = (*store)->LoggedAt(7);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->value_or(0), kT0);
  EXPECT_FALSE((*store)->LoggedAt(8)->has_value());
}

TEST(ReportBuilderTest, AuditStoreKeepsTheLastReportAcrossReopening) {
  TempDir dir;
  ReportCheckpoint written;
  written.tree_size = 0x0102030405060708;
  written.root_hash = std::string(32, '\x5a');
  written.root_hash[31] = '\x01';
  written.generated_at_unix_nanos = kT0;
  {
    auto store = AuditStore::Open(dir.path());
    ASSERT_TRUE(store.ok()) << store.status();
    auto none = (*store)->LastReport();
    ASSERT_TRUE(none.ok());
    EXPECT_FALSE(none->has_value());
    AuditStoreBatch batch;
    batch.SetLastReport(written);
    ASSERT_TRUE((*store)->Write(batch).ok());
  }
  auto store = AuditStore::Open(dir.path());
  ASSERT_TRUE(store.ok()) << store.status();
  auto read = (*store)->LastReport();
  ASSERT_TRUE(read.ok()) << read.status();
  ASSERT_TRUE(read->has_value());
  EXPECT_EQ((*read)->tree_size, written.tree_size);
  EXPECT_EQ((*read)->root_hash, written.root_hash);
  EXPECT_EQ((*read)->generated_at_unix_nanos, kT0);
}

TEST(ReportBuilderTest, AuditOnDemandReadsTheFlagPastTheOpenings) {
  TempDir dir;
  auto store = AuditStore::Open(dir.path());
  ASSERT_TRUE(store.ok()) << store.status();
  for (bool on_demand : {false, true}) {
    v1::AuditRecord r;
    r.set_audit_seed(std::string(32, on_demand ? 'd' : 'p'));
    r.set_request_id(FreshBytes(16));
    v1::OpenedLayer* l = r.add_opened_layers();
    l->set_data(std::string(1 << 20, '\x07'));  // fields before and after
    r.set_on_demand(on_demand);
    r.set_created_at_unix_nanos(kT0);
    r.set_done(true);
    AuditStoreBatch batch;
    batch.PutAudit(r);
    ASSERT_TRUE((*store)->Write(batch).ok());
    auto got = (*store)->AuditOnDemand(r.audit_seed());
    ASSERT_TRUE(got.ok()) << got.status();
    ASSERT_TRUE(got->has_value());
    EXPECT_EQ(**got, on_demand);
  }
  auto missing = (*store)->AuditOnDemand(std::string(32, 'x'));
  ASSERT_TRUE(missing.ok());
  EXPECT_FALSE(missing->has_value());
}

}  // namespace
}  // namespace layerproof::verifier
