// Audits that scale out (DESIGN §8; verifier/audit_leases.h,
// verifier/auditor_worker.h): the verifier leases every drawn audit to
// stateless auditor workers and stays the only key that signs verdicts.
// In-process workers conclude every audit with the verdict the verifier
// would reach itself, a cheating prover included; `layerproof serve
// auditor` processes killed (SIGKILL) in a loop while they work lose
// nothing, and no audit ever gets two verdicts.
#include <gtest/gtest.h>
#include <signal.h>

#include <atomic>
#include <cstdio>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "tests/integration/cluster.h"
#include "tests/integration/node_process.h"
#include "tests/integration/test_faults.h"
#include "verifier/auditor_worker.h"

namespace layerproof::integration {
namespace {

v1::SamplingParams Greedy() {
  v1::SamplingParams s;
  s.set_temperature(0);
  s.set_top_p(1);
  return s;
}

TEST(Auditors, WorkersConcludeEveryAuditAndTheVerifierSigns) {
  Cluster cluster;
  VerifierSetup vs;
  vs.policy = verifier::AuditPolicy{1.0, 1};
  vs.remote_auditors = true;
  vs.audit_threads = 8;
  cluster.StartVerifier(vs);
  RunningProver& honest = cluster.StartProver();
  ProverSetup cheat_setup;
  cheat_setup.prover_id = "prover-2";
  cheat_setup.faults = std::make_shared<RowsFaults<FlipBitTamper>>();
  RunningProver& cheat = cluster.StartProver(cheat_setup);

  auto w1 = cluster.StartAuditorWorker("w1", 1);
  auto w2 = cluster.StartAuditorWorker("w2", 2);
  ASSERT_TRUE(w1 && w2);

  std::vector<std::string> honest_ids, cheat_ids;
  auto honest_stub = cluster.InferenceStub(honest);
  auto cheat_stub = cluster.InferenceStub(cheat);
  for (int i = 0; i < 4; ++i) {
    auto a = cluster.Generate(*honest_stub, {1, 2, 3, 4 + i}, 5, Greedy());
    ASSERT_TRUE(a.ok()) << a.status();
    honest_ids.push_back(a->response.request_id());
    auto b = cluster.Generate(*cheat_stub, {5, 6, 7, 8 + i}, 5, Greedy());
    ASSERT_TRUE(b.ok()) << b.status();
    cheat_ids.push_back(b->response.request_id());
  }
  for (const std::string& id : honest_ids) {
    const auto verdicts = cluster.WaitForVerdicts(id, absl::Seconds(60));
    ASSERT_EQ(verdicts.size(), 1u);
    EXPECT_EQ(verdicts[0].outcome(), v1::PASS) << verdicts[0].detail();
    EXPECT_EQ(verdicts[0].verifier_id(), "verifier-1");
  }
  // The tampered layer is caught wherever the draw touches it; every
  // other draw still concludes with one verdict.
  for (const std::string& id : cheat_ids) {
    const auto verdicts = cluster.WaitForVerdicts(id, absl::Seconds(60));
    ASSERT_EQ(verdicts.size(), 1u);
    EXPECT_TRUE(verdicts[0].outcome() == v1::PASS ||
                verdicts[0].outcome() == v1::FAIL_MISMATCH)
        << verdicts[0].detail();
  }
  EXPECT_EQ(w1->completed() + w2->completed(), 8u);
  EXPECT_GT(w1->completed(), 0u);
  EXPECT_GT(w2->completed(), 0u);
  // Every audit's evidence holds the opening the worker used.
  v1::GetEvidenceRequest get;
  get.set_request_id(honest_ids[0]);
  v1::EvidenceBundle bundle;
  grpc::ClientContext context;
  ASSERT_TRUE(cluster.AuditStub()->GetEvidence(&context, get, &bundle).ok());
  EXPECT_TRUE(bundle.has_opening());
  EXPECT_GT(bundle.opened_layers_size(), 0);
}

// `serve auditor` processes SIGKILLed in a loop (mostly while they hold a
// lease) and replaced, while 60 requests are served and their audits
// (every layer) drain: every audit concludes, each with exactly one PASS
// verdict.
TEST(Auditors, KillingWorkersInALoopLosesNothingAndNeverDoublesAVerdict) {
  Cluster cluster;
  VerifierSetup vs;
  vs.policy = verifier::AuditPolicy{1.0, 4};
  vs.remote_auditors = true;
  vs.audit_lease = absl::Seconds(1);
  vs.audit_threads = 16;
  cluster.StartVerifier(vs);
  RunningProver& p = cluster.StartProver();
  const auto worker = [&](int n) {
    return std::make_unique<NodeProcess>(std::vector<std::string>{
        "serve", "auditor", "--verifier", cluster.verifier_address(), "--model",
        cluster.model_dir(), "--worker-id", "killable-" + std::to_string(n),
        "--insecure"});
  };
  std::vector<std::unique_ptr<NodeProcess>> workers;
  std::vector<std::string> names;
  int started = 0;
  for (; started < 3; ++started) {
    names.push_back("killable-" + std::to_string(started));
    workers.push_back(worker(started));
  }

  constexpr int kRequests = 60;
  constexpr int kMinKills = 5;
  std::vector<std::string> ids;
  std::atomic<bool> served{false};
  int kills = 0;                     // every kill (this thread only)
  std::atomic<int> holder_kills{0};  // kills of a worker holding a lease
  const absl::Time deadline = absl::Now() + absl::Seconds(240);
  std::thread load([&] {
    auto stub = cluster.InferenceStub(p);
    std::vector<int32_t> prompt(24);
    for (int i = 0; i < kRequests; ++i) {
      // Paced by the kill loop: while audits are outstanding, a kill of a
      // lease holder per 10 requests (kMinKills before the last 10), so that
      // on a fast machine the audits cannot all drain before the kills.
      while (holder_kills.load() < i / (kRequests / (kMinKills + 1)) &&
             cluster.verifier().counters().audits_done < uint64_t(i) &&
             absl::Now() < deadline) {
        absl::SleepFor(absl::Milliseconds(5));
      }
      for (size_t k = 0; k < prompt.size(); ++k) prompt[k] = int32_t(7 * i + k);
      auto r = cluster.Generate(*stub, prompt, 12, Greedy());
      EXPECT_TRUE(r.ok()) << r.status();
      if (r.ok()) ids.push_back(r->response.request_id());
    }
    served = true;
  });
  std::mt19937 rng(20261203);
  absl::Time last_kill = absl::Now();
  while ((!served.load() ||
          cluster.verifier().counters().audits_done < uint64_t{kRequests}) &&
         absl::Now() < deadline) {
    // Every 100 ms a kill: of a worker holding a lease (mid-audit) as soon
    // as one does, else after 500 ms of any worker.
    absl::SleepFor(absl::Milliseconds(5));
    if (absl::Now() - last_kill < absl::Milliseconds(100)) continue;
    const std::vector<std::string> holders =
        cluster.verifier().AuditLeaseHolders();
    size_t v = workers.size();
    if (!holders.empty()) {
      const std::string& name = holders[rng() % holders.size()];
      for (size_t k = 0; k < workers.size(); ++k) {
        if (names[k] == name) v = k;
      }
    } else if (absl::Now() - last_kill >= absl::Milliseconds(500)) {
      v = rng() % workers.size();
    }
    if (v == workers.size()) continue;
    last_kill = absl::Now();
    workers[v]->Kill(SIGKILL);
    ++kills;
    if (!holders.empty()) ++holder_kills;
    names[v] = "killable-" + std::to_string(started);
    workers[v] = worker(started++);
  }
  load.join();
  ASSERT_EQ(ids.size(), size_t{kRequests});
  EXPECT_GE(kills, kMinKills) << "the audits drained before the kill loop ran";
  for (const std::string& id : ids) {
    const auto verdicts = cluster.WaitForVerdicts(id, absl::Seconds(60));
    ASSERT_EQ(verdicts.size(), 1u) << "an audit got no or two verdicts";
    EXPECT_EQ(verdicts[0].outcome(), v1::PASS) << verdicts[0].detail();
  }
  const verifier::VerifierCounters c = cluster.verifier().counters();
  EXPECT_EQ(c.audits_done, uint64_t{kRequests});
  EXPECT_EQ(c.audits_queued + c.audits_running, 0u);
  // Workers died holding leases, and their audits went to others.
  EXPECT_GE(c.audit_leases_lapsed, 3u);
  std::printf(
      "auditor kill loop: %d kills, %d workers started, %llu leases "
      "lapsed\n",
      kills, started, static_cast<unsigned long long>(c.audit_leases_lapsed));
}

}  // namespace
}  // namespace layerproof::integration
