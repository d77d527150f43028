// Cheating provers (issue 5, docs/protocol.md "Cheating"): each kind of
// cheat, injected through the test-only hooks of prover/internal/
// prover_faults.h, must be caught with the right verdict in every audit
// that samples the tampered step. Most tests audit every block (s = L), so
// every audit samples it; one samples a single block and checks that
// exactly the audits touching the tampered step fail.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <mutex>
#include <optional>
#include <set>

#include "kernels/model/quantize_model.h"
#include "store/commitment.h"
#include "store/envelope.h"
#include "tests/integration/cluster.h"
#include "tests/integration/test_faults.h"

namespace layerproof::integration {
namespace {

// Skips block kTamperedLayer: its output is its input.
class SkipLayerTamper : public prover::RowsTamper {
 public:
  void Tamper(int64_t layer, int64_t, float* rows, int64_t n,
              int64_t width) override {
    if (layer == kTamperedLayer - 1) previous_.assign(rows, rows + n * width);
    if (layer == kTamperedLayer) {
      ASSERT_EQ(previous_.size(), size_t(n * width));
      std::copy(previous_.begin(), previous_.end(), rows);
    }
  }

 private:
  std::vector<float> previous_;
};

// Claims another model digest than the one it serves.
class ClaimDigestFaults : public prover::ProverFaults {
 public:
  explicit ClaimDigestFaults(std::string digest) : digest_(std::move(digest)) {}
  void TamperCommitment(v1::Commitment& c) override {
    c.set_model_digest(digest_);
  }

 private:
  std::string digest_;
};

// Commits to its first request's computation for every later request.
class ReplayFaults : public prover::ProverFaults {
 public:
  void TamperCommitment(v1::Commitment& c) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (!first_) {
      first_ = c;
      return;
    }
    v1::Commitment replayed = *first_;
    replayed.set_request_id(c.request_id());
    replayed.set_created_at_unix_nanos(c.created_at_unix_nanos());
    c = replayed;
  }

 private:
  std::mutex mu_;
  std::optional<v1::Commitment> first_;
};

class StallFaults : public prover::ProverFaults {
 public:
  bool StallOpenings() override { return true; }
};

grpc::Status Present(Cluster& cluster, const std::string& promise,
                     v1::PresentPromiseResponse* out) {
  auto audit = cluster.AuditStub();
  v1::PresentPromiseRequest request;
  request.set_promise_envelope(promise);
  grpc::ClientContext context;
  return audit->PresentPromise(&context, request, out);
}

std::string DigestOf(const kernels::model::Model& model) {
  const auto& root = model.digest().root;
  return std::string(root.begin(), root.end());
}

// Runs `n` requests through `prover` and returns their request ids.
std::vector<std::string> RunRequests(Cluster& cluster, RunningProver& prover,
                                     int n) {
  auto stub = cluster.InferenceStub(prover);
  const int32_t vocab =
      static_cast<int32_t>(cluster.model().config().vocab_size);
  std::vector<std::string> ids;
  for (int i = 0; i < n; ++i) {
    v1::SamplingParams sampling;
    sampling.set_temperature(i % 2 ? 0.7f : 0.0f);
    sampling.set_top_p(1.0f);
    v1::GenerateRequest request;
    for (int32_t id : RandomPrompt(100 + i, vocab, 10)) {
      request.mutable_token_ids()->add_ids(id);
    }
    *request.mutable_sampling() = sampling;
    request.set_max_tokens(5);
    request.set_ignore_eos(true);
    v1::GenerateResponse response;
    grpc::ClientContext context;
    const grpc::Status status = stub->Generate(&context, request, &response);
    EXPECT_TRUE(status.ok()) << status.error_message();
    ids.push_back(response.request_id());
  }
  return ids;
}

// Every request gets exactly one verdict, with `outcome` (and `layer` for
// a mismatch, when given).
void ExpectEveryVerdict(Cluster& cluster, const std::vector<std::string>& ids,
                        v1::VerdictOutcome outcome,
                        std::optional<uint32_t> layer = std::nullopt) {
  ASSERT_TRUE(WaitForAudits(cluster, ids.size(), absl::Seconds(60)));
  for (const std::string& id : ids) {
    const std::vector<v1::Verdict> verdicts = cluster.Verdicts(id);
    ASSERT_EQ(verdicts.size(), 1u);
    EXPECT_EQ(verdicts[0].outcome(), outcome)
        << v1::VerdictOutcome_Name(verdicts[0].outcome()) << ": "
        << verdicts[0].detail();
    if (layer) {
      EXPECT_EQ(verdicts[0].mismatch().layer(), *layer);
    }
  }
}

VerifierSetup AuditEverything(uint32_t layers) {
  return VerifierSetup{.policy = {1.0, layers}};
}

TEST(CheatingProver, FlippedBitInOneLayerIsAMismatchAtThatLayer) {
  Cluster cluster;
  cluster.StartVerifier(AuditEverything(4));
  RunningProver& prover = cluster.StartProver(
      {.faults = std::make_shared<RowsFaults<FlipBitTamper>>()});
  ExpectEveryVerdict(cluster, RunRequests(cluster, prover, 4),
                     v1::FAIL_MISMATCH, kTamperedLayer);
}

TEST(CheatingProver, FlippedBitIsCaughtByEverySampleTouchingIt) {
  // s = 1: block 2 recomputed from the honest h^1 differs from the flipped
  // H_2, and block 3 recomputed from the (consistently) flipped h^2
  // differs from the honest H_3. Blocks 1 and 4 cannot see the flip.
  Cluster cluster;
  cluster.StartVerifier(AuditEverything(1));
  RunningProver& prover = cluster.StartProver(
      {.faults = std::make_shared<RowsFaults<FlipBitTamper>>()});
  const std::vector<std::string> ids = RunRequests(cluster, prover, 16);
  ASSERT_TRUE(WaitForAudits(cluster, ids.size(), absl::Seconds(60)));
  std::set<uint32_t> sampled;
  for (const std::string& id : ids) {
    const std::vector<v1::Verdict> verdicts = cluster.Verdicts(id);
    ASSERT_EQ(verdicts.size(), 1u);
    const v1::Verdict& v = verdicts[0];
    ASSERT_EQ(v.audited_layers_size(), 1);
    const uint32_t l = v.audited_layers(0);
    sampled.insert(l);
    if (l == kTamperedLayer || l == kTamperedLayer + 1) {
      EXPECT_EQ(v.outcome(), v1::FAIL_MISMATCH) << "block " << l;
      EXPECT_EQ(v.mismatch().layer(), l);
    } else {
      EXPECT_EQ(v.outcome(), v1::PASS) << "block " << l << ": " << v.detail();
    }
  }
  EXPECT_GE(sampled.size(), 2u);  // 16 draws over 4 blocks
}

TEST(CheatingProver, RequestAuditOfAllLayersLocalisesTheFirstDivergence) {
  Cluster cluster;
  cluster.StartVerifier(VerifierSetup{.policy = {0.0, 1}});
  RunningProver& prover = cluster.StartProver(
      {.faults = std::make_shared<RowsFaults<FlipBitTamper>>()});
  const std::vector<std::string> ids = RunRequests(cluster, prover, 1);
  auto audit = cluster.AuditStub();
  v1::RequestAuditRequest request;
  request.set_request_id(ids[0]);
  request.set_all_layers(true);
  v1::RequestAuditResponse response;
  grpc::ClientContext context;
  const grpc::Status status = audit->RequestAudit(&context, request, &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  v1::Envelope envelope;
  ASSERT_TRUE(envelope.ParseFromString(response.verdict().verdict_envelope()));
  auto verdict = store::ParseVerdict(envelope.payload());
  ASSERT_TRUE(verdict.ok());
  EXPECT_EQ(verdict->outcome(), v1::FAIL_MISMATCH);
  EXPECT_EQ(verdict->mismatch().layer(), kTamperedLayer);
  EXPECT_EQ(verdict->audited_layers_size(), 4);
}

TEST(CheatingProver, SubstitutedWeightsUnderTheHonestDigestMismatch) {
  Cluster cluster;
  cluster.StartVerifier(AuditEverything(4));
  ModelDir other("tiny", 2);
  RunningProver& prover =
      cluster.StartProver({.model = other.model.get(),
                           .faults = std::make_shared<ClaimDigestFaults>(
                               DigestOf(cluster.model()))});
  ExpectEveryVerdict(cluster, RunRequests(cluster, prover, 3),
                     v1::FAIL_MISMATCH);
  EXPECT_TRUE(prover.Stop().ok());  // before `other` goes
}

TEST(CheatingProver, SubstitutedWeightsUnderTheirOwnDigestAreTheWrongModel) {
  Cluster cluster;
  cluster.StartVerifier(AuditEverything(1));
  ModelDir other("tiny", 2);
  RunningProver& prover = cluster.StartProver({.model = other.model.get()});
  ExpectEveryVerdict(cluster, RunRequests(cluster, prover, 3), v1::FAIL_MODEL);
  EXPECT_TRUE(prover.Stop().ok());
}

// The cluster's model quantized: MODEL_DIR-q4_0/model.gguf, removed with
// the object.
struct QuantizedModel {
  explicit QuantizedModel(const Cluster& cluster)
      : dir(cluster.model_dir() + "-q4_0") {
    std::filesystem::create_directories(dir);
    const std::string gguf = (dir / "model.gguf").string();
    EXPECT_TRUE(kernels::model::QuantizeModelDir(cluster.model_dir(),
                                                 kernels::DType::kQ4_0, gguf)
                    .ok());
    auto loaded = kernels::model::Model::Load(gguf);
    EXPECT_TRUE(loaded.ok()) << loaded.status().ToString();
    if (loaded.ok()) model = std::move(*loaded);
  }
  ~QuantizedModel() {
    model.reset();
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
  std::filesystem::path dir;
  std::unique_ptr<kernels::model::Model> model;
};

// The same model quantized (Q4_0 GGUF) is another model: served under its
// own digest it is FAIL_MODEL, under the cluster's digest FAIL_MISMATCH,
// exactly as for substituted safetensors weights.
TEST(CheatingProver, QuantizedWeightsUnderTheirOwnDigestAreTheWrongModel) {
  Cluster cluster;
  cluster.StartVerifier(AuditEverything(1));
  QuantizedModel q(cluster);
  ASSERT_NE(q.model, nullptr);
  EXPECT_NE(DigestOf(*q.model), DigestOf(cluster.model()));
  RunningProver& prover = cluster.StartProver({.model = q.model.get()});
  ExpectEveryVerdict(cluster, RunRequests(cluster, prover, 2), v1::FAIL_MODEL);
  EXPECT_TRUE(prover.Stop().ok());
}

TEST(CheatingProver, QuantizedWeightsUnderTheRealDigestAreCaught) {
  Cluster cluster;
  cluster.StartVerifier(AuditEverything(1));
  QuantizedModel q(cluster);
  ASSERT_NE(q.model, nullptr);
  RunningProver& prover =
      cluster.StartProver({.model = q.model.get(),
                           .faults = std::make_shared<ClaimDigestFaults>(
                               DigestOf(cluster.model()))});
  ExpectEveryVerdict(cluster, RunRequests(cluster, prover, 2),
                     v1::FAIL_MISMATCH);
  EXPECT_TRUE(prover.Stop().ok());
}

TEST(CheatingProver, SkippedLayerIsAMismatchAtThatLayer) {
  Cluster cluster;
  cluster.StartVerifier(AuditEverything(4));
  RunningProver& prover = cluster.StartProver(
      {.faults = std::make_shared<RowsFaults<SkipLayerTamper>>()});
  ExpectEveryVerdict(cluster, RunRequests(cluster, prover, 4),
                     v1::FAIL_MISMATCH, kTamperedLayer);
}

TEST(CheatingProver, TokensNotFromTheSamplerFailTheHeadCheck) {
  Cluster cluster;
  cluster.StartVerifier(AuditEverything(1));  // the head is always checked
  const int32_t vocab =
      static_cast<int32_t>(cluster.model().config().vocab_size);
  RunningProver& prover = cluster.StartProver(
      {.faults = std::make_shared<WrongTokenFaults>(vocab)});
  ExpectEveryVerdict(cluster, RunRequests(cluster, prover, 4),
                     v1::FAIL_MISMATCH, 4 + 1);
}

TEST(CheatingProver, OpeningThatDoesNotMatchTheCommitmentFails) {
  Cluster cluster;
  cluster.StartVerifier(AuditEverything(2));
  RunningProver& prover =
      cluster.StartProver({.faults = std::make_shared<BadOpeningFaults>()});
  ExpectEveryVerdict(cluster, RunRequests(cluster, prover, 4),
                     v1::FAIL_OPENING);
}

TEST(CheatingProver, OldCommitmentUnderANewRequestIdFailsTheOpening) {
  Cluster cluster;
  cluster.StartVerifier(AuditEverything(1));
  RunningProver& prover =
      cluster.StartProver({.faults = std::make_shared<ReplayFaults>()});
  const std::vector<std::string> ids = RunRequests(cluster, prover, 4);
  ASSERT_TRUE(WaitForAudits(cluster, ids.size(), absl::Seconds(60)));
  EXPECT_EQ(cluster.Verdicts(ids[0]).at(0).outcome(), v1::PASS);
  ExpectEveryVerdict(cluster, {ids.begin() + 1, ids.end()}, v1::FAIL_OPENING);
}

TEST(CheatingProver, OutputCutShortClaimingAStopFailsTheHeadCheck) {
  // Generation ran to max_tokens = 5 (ignore_eos), but the commitment says
  // the request allowed 50 and stopped at a stop id: the output looks cut
  // short on purpose. No stop id is committed, so the claim is false
  // whatever the last token is.
  struct CutShortFaults : prover::ProverFaults {
    void TamperCommitment(v1::Commitment& c) override {
      c.set_max_new_tokens(50);
      c.set_ignore_eos(false);
      c.clear_stop_token_ids();
      c.set_finish_reason(v1::FINISH_REASON_STOP);
    }
  };
  Cluster cluster;
  cluster.StartVerifier(AuditEverything(1));
  RunningProver& prover =
      cluster.StartProver({.faults = std::make_shared<CutShortFaults>()});
  ExpectEveryVerdict(cluster, RunRequests(cluster, prover, 3),
                     v1::FAIL_MISMATCH, 4 + 1);
}

// Regression (issue 13, item 2): the request named no stop ids, so the
// model's end-of-sequence ids apply (Commitment.stop_ids_from_model). A
// prover that commits another stop list there (one the client cannot tell
// from the model's) fails the head check: the audit holds the committed
// list to the model's.
TEST(CheatingProver, StopIdsThatAreNotTheModelsFailTheHeadCheck) {
  struct OtherStopIdsFaults : prover::ProverFaults {
    explicit OtherStopIdsFaults(std::vector<int32_t> ids)
        : ids(std::move(ids)) {}
    void TamperCommitment(v1::Commitment& c) override {
      c.mutable_stop_token_ids()->Assign(ids.begin(), ids.end());
    }
    std::vector<int32_t> ids;
  };
  Cluster cluster;
  std::vector<int32_t> other = cluster.model().config().eos_token_ids;
  other.push_back(static_cast<int32_t>(cluster.model().config().vocab_size) -
                  1);
  cluster.StartVerifier(AuditEverything(1));
  RunningProver& prover = cluster.StartProver(
      {.faults = std::make_shared<OtherStopIdsFaults>(other)});
  const std::vector<std::string> ids = RunRequests(cluster, prover, 2);
  ExpectEveryVerdict(cluster, ids, v1::FAIL_MISMATCH, 4 + 1);
  EXPECT_NE(cluster.Verdicts(ids[0]).at(0).detail().find(
                "not the model's end-of-sequence ids"),
            std::string::npos)
      << cluster.Verdicts(ids[0]).at(0).detail();
}

// Signatures over plaintext: refused at admission, but with no
// authenticated submitter there is nobody to attribute a verdict to (with
// TLS there is: tests/integration/security_test.cc).
TEST(CheatingProver, ForeignKeyOverPlaintextIsRefusedAndNothingIsLogged) {
  Cluster cluster;
  cluster.StartVerifier(AuditEverything(1));
  RunningProver& prover = cluster.StartProver(
      {.foreign_key = true, .receipt_wait = absl::Milliseconds(500)});
  const std::vector<std::string> ids = RunRequests(cluster, prover, 2);
  const absl::Time deadline = absl::Now() + absl::Seconds(30);
  while (prover.node->pending_submissions() > 0 && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(10));  // polling the submitter
  }
  EXPECT_EQ(prover.node->pending_submissions(), 0u);
  auto audit = cluster.AuditStub();
  for (const std::string& id : ids) {
    v1::GetVerdictRequest request;
    request.set_request_id(id);
    v1::GetVerdictResponse response;
    grpc::ClientContext context;
    EXPECT_EQ(audit->GetVerdict(&context, request, &response).error_code(),
              grpc::StatusCode::NOT_FOUND);
  }
  EXPECT_EQ(cluster.LatestCheckpoint().size, 0u);
}

TEST(CheatingProver, NeverAnsweringAnOpeningTimesOut) {
  Cluster cluster;
  cluster.StartVerifier(VerifierSetup{
      .policy = {1.0, 1}, .opening_timeout = absl::Milliseconds(800)});
  RunningProver& prover =
      cluster.StartProver({.faults = std::make_shared<StallFaults>()});
  ExpectEveryVerdict(cluster, RunRequests(cluster, prover, 2),
                     v1::FAIL_TIMEOUT);
}

// Regression (issue 13, item 3): a prover that handed out only a signed
// SubmissionPromise could log its honest requests alone, and nobody could
// hold it to the promise. Past the promise's log_by deadline, anyone who
// presents it gets a signed FAIL_UNLOGGED verdict against the prover,
// logged once; before it, or for a forged promise, nothing is stored.
TEST(CheatingProver, PromiseNeverHonouredIsAFailUnloggedVerdict) {
  Cluster cluster;
  cluster.StartVerifier(VerifierSetup{.policy = {1.0, 1}});
  RunningProver& prover =
      cluster.StartProver({.faults = std::make_shared<SkipSubmissionFaults>(),
                           .receipt_wait = absl::Milliseconds(50),
                           .promise_window = absl::Milliseconds(600)});
  auto stub = cluster.InferenceStub(prover);
  v1::SamplingParams greedy;
  greedy.set_top_p(1.0f);
  absl::StatusOr<ClientResult> r =
      cluster.Generate(*stub, {4, 5, 6}, 3, greedy);
  ASSERT_TRUE(r.ok()) << r.status();
  const std::string promise = r->response.receipt().promise_envelope();
  ASSERT_FALSE(promise.empty());

  // Not yet due: refused, nothing logged.
  v1::PresentPromiseResponse early;
  const grpc::Status not_due = Present(cluster, promise, &early);
  EXPECT_EQ(not_due.error_code(), grpc::StatusCode::FAILED_PRECONDITION)
      << not_due.error_message();
  EXPECT_NE(not_due.error_message().find("not yet due"), std::string::npos);
  // A promise whose signature has a bit flipped does not verify: refused,
  // nothing logged.
  v1::Envelope forged;
  ASSERT_TRUE(forged.ParseFromString(promise));
  (*forged.mutable_signatures(0)->mutable_sig())[0] ^= 1;
  v1::PresentPromiseResponse bad;
  const grpc::Status refused =
      Present(cluster, forged.SerializeAsString(), &bad);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(refused.error_message().find("does not verify"), std::string::npos)
      << refused.error_message();
  EXPECT_EQ(cluster.LatestCheckpoint().size, 0u);

  // Past the deadline (the verifier's clock), still unlogged.
  v1::PresentPromiseResponse broken;
  grpc::Status status;
  const absl::Time deadline = absl::Now() + absl::Seconds(30);
  do {
    broken.Clear();
    status = Present(cluster, promise, &broken);
  } while (status.error_code() == grpc::StatusCode::FAILED_PRECONDITION &&
           absl::Now() < deadline);
  ASSERT_TRUE(status.ok()) << status.error_message();
  ASSERT_TRUE(broken.has_verdict());
  v1::Envelope env;
  ASSERT_TRUE(env.ParseFromString(broken.verdict().verdict_envelope()));
  v1::Verdict verdict;
  ASSERT_TRUE(verdict.ParseFromString(env.payload()));
  EXPECT_EQ(verdict.outcome(), v1::FAIL_UNLOGGED);
  EXPECT_EQ(verdict.request_id(), r->response.request_id());
  EXPECT_EQ(verdict.unlogged_promise(), promise);
  EXPECT_FALSE(verdict.has_commitment_leaf_index());
  EXPECT_EQ(cluster.LatestCheckpoint().size, 1u);  // the verdict only

  // Presented again: the same verdict, nothing new logged.
  v1::PresentPromiseResponse again;
  ASSERT_TRUE(Present(cluster, promise, &again).ok());
  EXPECT_EQ(again.verdict().leaf_index(), broken.verdict().leaf_index());
  EXPECT_EQ(cluster.LatestCheckpoint().size, 1u);
  // It is the request's verdict, charged to the prover.
  const std::vector<v1::Verdict> on_request =
      cluster.Verdicts(r->response.request_id());
  ASSERT_EQ(on_request.size(), 1u);
  EXPECT_EQ(on_request[0].outcome(), v1::FAIL_UNLOGGED);
  auto audit = cluster.AuditStub();
  v1::ListVerdictsRequest list;
  list.set_prover_id(prover.prover_id);
  v1::ListVerdictsResponse listed;
  grpc::ClientContext list_context;
  ASSERT_TRUE(audit->ListVerdicts(&list_context, list, &listed).ok());
  EXPECT_EQ(listed.verdicts_size(), 1);
}

// An honoured promise: presenting it answers with the commitment's index.
// A prover that signs a deadline out of reach (log_by a century away)
// cannot keep its promise from ever being presentable: a promise is due
// seven days after it was made at the latest (store::PromiseDueUnixNanos).
TEST(CheatingProver, PromiseWithADeadlineOutOfReachIsDueAfterSevenDays) {
  Cluster cluster;
  cluster.StartVerifier(VerifierSetup{.policy = {1.0, 1}});
  RunningProver& prover = cluster.StartProver();
  const int64_t now = absl::ToUnixNanos(absl::Now());
  v1::SubmissionPromise p;
  p.set_request_id(std::string(16, '\x07'));
  p.set_commitment_leaf_hash(std::string(32, '\x08'));  // never logged
  p.set_prover_id(prover.prover_id);
  p.set_log_origin("layerproof/verifier-1");
  p.set_promised_at_unix_nanos(now - store::kMaxPromiseWindowNanos -
                               int64_t{3600} * 1000000000);
  p.set_log_by_unix_nanos(now + int64_t{100} * 365 * 24 * 3600 * 1000000000);
  auto signed_promise = store::SignEnvelope(
      store::kSubmissionPromisePayloadType, p.SerializeAsString(), *prover.key);
  ASSERT_TRUE(signed_promise.ok()) << signed_promise.status();
  v1::PresentPromiseResponse broken;
  const grpc::Status status = Present(cluster, *signed_promise, &broken);
  ASSERT_TRUE(status.ok()) << status.error_message();
  ASSERT_TRUE(broken.has_verdict());
  v1::Envelope env;
  ASSERT_TRUE(env.ParseFromString(broken.verdict().verdict_envelope()));
  v1::Verdict verdict;
  ASSERT_TRUE(verdict.ParseFromString(env.payload()));
  EXPECT_EQ(verdict.outcome(), v1::FAIL_UNLOGGED);

  // The same promise made an hour ago is not yet due, whatever its log_by.
  p.set_promised_at_unix_nanos(now - int64_t{3600} * 1000000000);
  p.set_commitment_leaf_hash(std::string(32, '\x09'));
  auto recent = store::SignEnvelope(store::kSubmissionPromisePayloadType,
                                    p.SerializeAsString(), *prover.key);
  ASSERT_TRUE(recent.ok());
  v1::PresentPromiseResponse early;
  EXPECT_EQ(Present(cluster, *recent, &early).error_code(),
            grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(cluster.LatestCheckpoint().size, 1u);  // the one verdict
}

TEST(CheatingProver, HonouredPromiseAnswersWithTheLogIndex) {
  Cluster cluster;
  cluster.StartVerifier(VerifierSetup{.policy = {0.0, 1}});
  RunningProver& prover =
      cluster.StartProver({.receipt_wait = absl::Milliseconds(0),
                           .promise_window = absl::Hours(1)});
  auto stub = cluster.InferenceStub(prover);
  v1::SamplingParams greedy;
  greedy.set_top_p(1.0f);
  absl::StatusOr<ClientResult> r = cluster.Generate(*stub, {7, 8}, 2, greedy);
  ASSERT_TRUE(r.ok()) << r.status();
  const std::string promise = r->response.receipt().promise_envelope();
  ASSERT_FALSE(promise.empty());
  v1::PresentPromiseResponse out;
  grpc::Status status;
  const absl::Time deadline = absl::Now() + absl::Seconds(30);
  do {  // "not yet due" until the prover's submission reaches the log
    out.Clear();
    status = Present(cluster, promise, &out);
  } while ((!status.ok() || !out.has_commitment_leaf_index()) &&
           absl::Now() < deadline);
  ASSERT_TRUE(status.ok()) << status.error_message();
  ASSERT_TRUE(out.has_commitment_leaf_index()) << out.DebugString();
  EXPECT_EQ(out.commitment_leaf_index(), 0u);
  EXPECT_EQ(cluster.LatestCheckpoint().size, 1u);  // no verdict logged
}

}  // namespace
}  // namespace layerproof::integration
