// The lease board of scaled-out audits (verifier/audit_leases.h): one
// worker at a time per audit, a lapsed lease is leased again, a completion
// under a lapsed or finished lease is refused and kept nowhere, so each
// posted audit gets exactly one outcome.
#include "verifier/audit_leases.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/notification.h"

namespace layerproof::verifier {
namespace {

using ::testing::HasSubstr;

v1::AuditTask Task(const std::string& seed) {
  v1::AuditTask t;
  t.set_audit_seed(seed);
  t.set_prover_id("prover-1");
  return t;
}

v1::CompleteAuditRequest Pass(const std::string& lease_id) {
  v1::CompleteAuditRequest r;
  r.set_lease_id(lease_id);
  r.mutable_verdict()->set_outcome(v1::PASS);
  return r;
}

// Leases until a task comes (the Execute thread posts it concurrently).
v1::AuditTask LeaseOne(AuditLeases& board, const std::string& worker) {
  const absl::Time deadline = absl::Now() + absl::Seconds(10);
  while (absl::Now() < deadline) {
    absl::StatusOr<std::optional<v1::AuditTask>> t = board.Lease(worker);
    EXPECT_TRUE(t.ok()) << t.status();
    if (t.ok() && t->has_value()) return **t;
    absl::SleepFor(absl::Milliseconds(1));
  }
  ADD_FAILURE() << "nothing to lease";
  return {};
}

TEST(AuditLeases, OneOutcomePerAuditAndLateCompletionsAreRefused) {
  AuditLeases board(absl::Seconds(1));
  std::optional<absl::StatusOr<check::AuditOutcome>> got;
  std::thread execute([&] { got = board.Execute(Task("seed-1")); });
  const v1::AuditTask first = LeaseOne(board, "w1");
  EXPECT_EQ(first.audit_seed(), "seed-1");
  EXPECT_EQ(first.lease_id().size(), 16u);
  EXPECT_EQ(first.lease_duration_ms(), 1000u);
  // Leased: nobody else gets it.
  auto none = board.Lease("w2");
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
  EXPECT_EQ(board.leased(), 1u);
  // w1 goes silent; once the lease lapses w2 gets the audit (LeaseOne
  // polls until then).
  const v1::AuditTask second = LeaseOne(board, "w2");
  EXPECT_EQ(second.audit_seed(), "seed-1");
  EXPECT_NE(second.lease_id(), first.lease_id());
  // w1 comes back: refused, and nothing of its answer is kept.
  const absl::Status late = board.Complete(Pass(first.lease_id()));
  EXPECT_EQ(late.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(late.message(), HasSubstr("not a current lease"));
  EXPECT_EQ(board.Renew(first.lease_id()).status().code(),
            absl::StatusCode::kFailedPrecondition);
  // w2 completes: the one outcome.
  v1::CompleteAuditRequest mismatch = Pass(second.lease_id());
  mismatch.mutable_verdict()->set_outcome(v1::FAIL_MISMATCH);
  ASSERT_TRUE(board.Complete(mismatch).ok());
  execute.join();
  ASSERT_TRUE(got.has_value() && got->ok());
  EXPECT_EQ((*got)->verdict.outcome(), v1::FAIL_MISMATCH);
  // A second completion of the same lease is refused too.
  EXPECT_EQ(board.Complete(Pass(second.lease_id())).code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(board.posted(), 0u);
}

TEST(AuditLeases, RenewingKeepsTheLease) {
  AuditLeases board(absl::Seconds(2));
  std::thread execute([&] { (void)board.Execute(Task("seed-2")); });
  const v1::AuditTask t = LeaseOne(board, "w1");
  // Renewed every 0.5 s for 3 s, past the 2 s lease it began with.
  const absl::Time began = absl::Now();
  while (absl::Now() - began < absl::Seconds(3)) {
    absl::SleepFor(absl::Milliseconds(500));
    ASSERT_TRUE(board.Renew(t.lease_id()).ok());
  }
  auto other = board.Lease("w2");
  ASSERT_TRUE(other.ok());
  EXPECT_FALSE(other->has_value());
  ASSERT_TRUE(board.Complete(Pass(t.lease_id())).ok());
  execute.join();
}

TEST(AuditLeases, WorkerErrorsAndMalformedOutcomes) {
  AuditLeases board(absl::Seconds(10));
  std::optional<absl::StatusOr<check::AuditOutcome>> got;
  std::thread execute([&] { got = board.Execute(Task("seed-3")); });
  const v1::AuditTask t = LeaseOne(board, "w1");
  // Malformed: refused by field, the lease stays current.
  v1::CompleteAuditRequest bad = Pass(t.lease_id());
  bad.mutable_verdict()->set_outcome(v1::VERDICT_UNSPECIFIED);
  EXPECT_THAT(board.Complete(bad).message(),
              HasSubstr("CompleteAuditRequest.verdict.outcome"));
  v1::CompleteAuditRequest ragged = Pass(t.lease_id());
  ragged.mutable_opening();
  ragged.add_opened_layers()->set_data("abc");
  EXPECT_THAT(board.Complete(ragged).message(),
              HasSubstr("opened_layers[0]: want whole fp32 values"));
  // The worker's own error: the audit counts an attempt.
  v1::CompleteAuditRequest error;
  error.set_lease_id(t.lease_id());
  error.set_error("cannot reach prover-1\n");
  ASSERT_TRUE(board.Complete(error).ok());
  execute.join();
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(got->status().message(), HasSubstr("cannot reach prover-1?"));
}

TEST(AuditLeases, ShutdownReleasesWaitersAndStopsLeasing) {
  AuditLeases board(absl::Seconds(10));
  std::optional<absl::StatusOr<check::AuditOutcome>> got;
  std::thread execute([&] { got = board.Execute(Task("seed-4")); });
  (void)LeaseOne(board, "w1");
  board.Shutdown();
  execute.join();
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(board.Lease("w1").status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(board.Execute(Task("seed-5")).status().code(),
            absl::StatusCode::kUnavailable);
}

// Many workers racing for many audits: every audit is completed exactly
// once, by whichever worker held its current lease.
TEST(AuditLeases, ConcurrentWorkersCompleteEachAuditOnce) {
  AuditLeases board(absl::Seconds(10));
  constexpr int kAudits = 200;
  std::vector<std::thread> posters;
  std::atomic<int> outcomes{0};
  for (int i = 0; i < kAudits; ++i) {
    posters.emplace_back([&, i] {
      if (board.Execute(Task("seed-" + std::to_string(i))).ok()) {
        outcomes.fetch_add(1);
      }
    });
  }
  std::atomic<int> accepted{0};
  std::vector<std::thread> workers;
  for (int w = 0; w < 4; ++w) {
    workers.emplace_back([&, w] {
      const absl::Time deadline = absl::Now() + absl::Seconds(30);
      while (accepted.load() < kAudits && absl::Now() < deadline) {
        auto t = board.Lease("w" + std::to_string(w));
        if (!t.ok() || !t->has_value()) {
          absl::SleepFor(absl::Milliseconds(1));
          continue;
        }
        if (board.Complete(Pass((*t)->lease_id())).ok()) accepted.fetch_add(1);
        // A duplicate completion never counts.
        EXPECT_FALSE(board.Complete(Pass((*t)->lease_id())).ok());
      }
    });
  }
  for (std::thread& t : workers) t.join();
  for (std::thread& t : posters) t.join();
  EXPECT_EQ(accepted.load(), kAudits);
  EXPECT_EQ(outcomes.load(), kAudits);
}

}  // namespace
}  // namespace layerproof::verifier
