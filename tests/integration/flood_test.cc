// Regression (issue 13, item 7): floods of Generate and of the verifier's
// open reads from one unauthenticated peer. Every call ends OK or
// RESOURCE_EXHAUSTED (the queue and per-peer bounds), never another error
// or a hang; every OK response passes the client's receipt check; and the
// process's resident memory does not grow from one flood round to the
// next. The figures go to stdout (BENCHMARKS.md "Flood").
#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/integration/cluster.h"
#include "tests/integration/sanitizer_build.h"

namespace layerproof::integration {
namespace {

// VmRSS of this process (both nodes and the clients), in MiB.
double RssMiB() {
  std::ifstream status("/proc/self/status");
  std::string key;
  while (status >> key) {
    if (key == "VmRSS:") {
      double kib = 0;
      status >> kib;
      return kib / 1024;
    }
    std::getline(status, key);
  }
  return 0;
}

struct FloodCounts {
  std::atomic<int> ok{0}, exhausted{0}, other{0};
  std::atomic<int> generated{0};  // Generate calls that passed the check
  std::atomic<double> peak_rss{0};
  std::string first_other;
  std::mutex mu;

  void Count(absl::StatusCode code, const std::string& message) {
    if (code == absl::StatusCode::kOk) {
      ++ok;
    } else if (code == absl::StatusCode::kResourceExhausted) {
      ++exhausted;
    } else {
      ++other;
      std::lock_guard<std::mutex> lock(mu);
      if (first_other.empty()) first_other = message;
    }
  }
};

// `generators` threads calling Generate and `readers` threads calling
// ListVerdicts (a filter that matches nothing) and GetCheckpoint, all as
// fast as they can, for `duration`; RSS sampled every 50 ms.
void Flood(Cluster& cluster, RunningProver& prover, int generators,
           int readers, absl::Duration duration, FloodCounts& counts) {
  const absl::Time end = absl::Now() + duration;
  std::vector<std::thread> threads;
  for (int t = 0; t < generators; ++t) {
    threads.emplace_back([&, t] {
      auto stub = cluster.InferenceStub(prover);
      v1::SamplingParams sampled;
      sampled.set_temperature(0.7f);
      sampled.set_top_p(1.0f);
      for (int i = 0; absl::Now() < end; ++i) {
        absl::StatusOr<ClientResult> r = cluster.Generate(
            *stub, RandomPrompt(t * 100000 + i, 64, 8), 4, sampled,
            "flood-" + std::to_string(t) + "-" + std::to_string(i));
        counts.Count(r.status().code(), r.status().ToString());
        if (r.ok()) ++counts.generated;
      }
    });
  }
  for (int t = 0; t < readers; ++t) {
    threads.emplace_back([&] {
      auto audit = cluster.AuditStub();
      auto log = cluster.LogStub();
      while (absl::Now() < end) {
        v1::ListVerdictsRequest list;
        list.set_prover_id("nobody");
        v1::ListVerdictsResponse listed;
        grpc::ClientContext c1;
        const grpc::Status s1 = audit->ListVerdicts(&c1, list, &listed);
        counts.Count(static_cast<absl::StatusCode>(s1.error_code()),
                     s1.error_message());
        v1::GetCheckpointResponse cp;
        grpc::ClientContext c2;
        const grpc::Status s2 =
            log->GetCheckpoint(&c2, v1::GetCheckpointRequest(), &cp);
        counts.Count(static_cast<absl::StatusCode>(s2.error_code()),
                     s2.error_message());
      }
    });
  }
  while (absl::Now() < end) {
    const double rss = RssMiB();
    if (rss > counts.peak_rss.load()) counts.peak_rss = rss;
    absl::SleepFor(absl::Milliseconds(50));
  }
  for (std::thread& t : threads) t.join();
}

TEST(Flood, BoundedQueuesAndFlatMemoryUnderAFloodFromOnePeer) {
  Cluster cluster;
  cluster.StartVerifier(VerifierSetup{
      .policy = {0.05, 1},
      .peer_limits = {.calls_per_second = 300, .burst = 100,
                      .max_in_flight = 8, .max_peers = 100}});
  RunningProver& prover = cluster.StartProver(
      {.max_waiting_requests = 4,
       .peer_limits = {.calls_per_second = 200, .burst = 50,
                       .max_in_flight = 12, .max_peers = 100}});
  auto stub = cluster.InferenceStub(prover);
  v1::SamplingParams greedy;
  greedy.set_top_p(1.0f);
  ASSERT_TRUE(cluster.Generate(*stub, {1, 2, 3}, 4, greedy).ok());
  const double idle = RssMiB();

  FloodCounts first, second;
  Flood(cluster, prover, 24, 6, absl::Seconds(6), first);
  Flood(cluster, prover, 24, 6, absl::Seconds(6), second);
  std::printf(
      "flood: idle RSS %.1f MiB; round 1 peak %.1f MiB (%d calls ok, %d of "
      "them Generate; %d RESOURCE_EXHAUSTED); round 2 peak %.1f MiB (%d ok, "
      "%d Generate; %d RESOURCE_EXHAUSTED)\n",
      idle, first.peak_rss.load(), first.ok.load(), first.generated.load(),
      first.exhausted.load(), second.peak_rss.load(), second.ok.load(),
      second.generated.load(), second.exhausted.load());
  for (FloodCounts* c : {&first, &second}) {
    EXPECT_EQ(c->other.load(), 0) << c->first_other;
    EXPECT_GT(c->generated.load(), 0);
    EXPECT_GT(c->exhausted.load(), 0);  // the bounds were reached
  }
  // Flat: a second flood like the first costs no new memory (beyond
  // allocator noise), and neither is far above the idle node. Under ASan
  // RSS measures ASan (freed blocks wait in its quarantine, every block
  // carries redzones), so there the bounds are the regular build's to check.
  if (!kUnderAddressSanitizer) {
    EXPECT_LE(second.peak_rss.load(), first.peak_rss.load() + 48);
    EXPECT_LE(first.peak_rss.load(), idle + 400);
  }

  // The nodes still serve, and everything admitted was logged.
  ASSERT_TRUE(cluster.Generate(*stub, {4, 5, 6}, 4, greedy).ok());
  const absl::Time deadline = absl::Now() + absl::Seconds(30);
  while (prover.node->pending_submissions() > 0 && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(20));  // polling the prover
  }
  // Two requests outside the floods, every flood request that passed its
  // receipt check, and any verdicts: each receipt was an inclusion or a
  // promise, and the promises are now logged too.
  EXPECT_EQ(prover.node->pending_submissions(), 0u);
  EXPECT_GE(cluster.LatestCheckpoint().size,
            uint64_t(first.generated + second.generated) + 2);
}

}  // namespace
}  // namespace layerproof::integration
