// Restarts (issue 5): a verifier killed with SIGKILL under load and started
// again loses nothing the prover was acknowledged for and logs every
// pending commitment; a prover restarted between commit and opening still
// serves the opening correctly from its journal.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <atomic>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <thread>

#include "store/merkle.h"
#include "tests/integration/cluster.h"
#include "tests/integration/node_process.h"

namespace layerproof::integration {
namespace {

TEST(Restart, VerifierKilledUnderLoadLosesNothing) {
  Cluster cluster;
  const int port = ReservePort();
  cluster.set_verifier_port(port);
  RunningProver& prover =
      cluster.StartProver({.receipt_wait = absl::Milliseconds(300)});

  // The verifier's key and the prover registry, on disk.
  const std::string keys = cluster.root() + "/keys";
  std::filesystem::create_directories(keys);
  ASSERT_TRUE(
      store::WriteKeyPair(cluster.verifier_private_key(), keys + "/verifier")
          .ok());
  ASSERT_TRUE(store::WriteKeyPair(*prover.key, keys + "/prover").ok());
  const std::string registry = cluster.root() + "/provers.json";
  std::ofstream(registry) << "{\"provers\": [{\"id\": \"prover-1\", "
                             "\"public_key_file\": \"keys/prover.pub\", "
                             "\"opening_address\": \""
                          << prover.address() << "\"}]}";
  const std::vector<std::string> args = {
      "serve",        "verifier",
      "--model",      cluster.model_dir(),
      "--key",        keys + "/verifier.key",
      "--db",         cluster.root() + "/verifier-db",
      "--listen",     "127.0.0.1:" + std::to_string(port),
      "--provers",    registry,
      "--audit-rate", "1",
      "--insecure"};
  auto verifier = std::make_unique<NodeProcess>(args);

  // Load: 4 clients until told to stop.
  std::atomic<bool> stop{false};
  std::atomic<int> acknowledged{0};
  std::mutex mu;
  std::vector<v1::GenerateResponse> responses;
  std::vector<std::thread> clients;
  const int32_t vocab =
      static_cast<int32_t>(cluster.model().config().vocab_size);
  for (int c = 0; c < 4; ++c) {
    clients.emplace_back([&, c] {
      auto stub = cluster.InferenceStub(prover);
      for (int i = 0; !stop; ++i) {
        v1::SamplingParams greedy;
        greedy.set_top_p(1.0f);
        auto r = cluster.Generate(*stub, RandomPrompt(c * 10000 + i, vocab, 8),
                                  3, greedy);
        ASSERT_TRUE(r.ok()) << r.status();
        if (r->response.receipt().has_inclusion()) ++acknowledged;
        std::lock_guard<std::mutex> lock(mu);
        responses.push_back(r->response);
      }
    });
  }
  const auto wait_until = [](const std::function<bool()>& done,
                             absl::Duration timeout) {
    const absl::Time deadline = absl::Now() + timeout;
    while (!done() && absl::Now() < deadline) {
      absl::SleepFor(absl::Milliseconds(10));  // polling the load
    }
    return done();
  };
  ASSERT_TRUE(
      wait_until([&] { return acknowledged >= 20; }, absl::Seconds(60)));
  verifier->Kill(SIGKILL);
  // Requests keep coming while the log is down: they get promises.
  const size_t during = [&] {
    std::lock_guard<std::mutex> lock(mu);
    return responses.size();
  }();
  ASSERT_TRUE(wait_until(
      [&] {
        std::lock_guard<std::mutex> lock(mu);
        return responses.size() >= during + 8;
      },
      absl::Seconds(60)));
  verifier = std::make_unique<NodeProcess>(args);
  ASSERT_TRUE(
      wait_until([&] { return acknowledged >= 40; }, absl::Seconds(60)));
  stop = true;
  for (std::thread& t : clients) t.join();
  ASSERT_TRUE(
      wait_until([&] { return prover.node->pending_submissions() == 0; },
                 absl::Seconds(60)));

  // Every response's commitment is in the log; an acknowledged one at the
  // index its receipt named.
  auto log = cluster.LogStub();
  int promised = 0;
  for (const v1::GenerateResponse& r : responses) {
    v1::GetInclusionProofRequest request;
    const store::Sha256Hash leaf = store::LeafHash(r.commitment_envelope());
    request.set_leaf_hash(std::string(leaf.begin(), leaf.end()));
    v1::GetInclusionProofResponse response;
    grpc::ClientContext context;
    const grpc::Status status =
        log->GetInclusionProof(&context, request, &response);
    ASSERT_TRUE(status.ok()) << status.error_message();
    if (r.receipt().has_inclusion()) {
      EXPECT_EQ(response.inclusion().leaf_index(),
                r.receipt().inclusion().leaf_index());
    } else {
      ++promised;
    }
  }
  EXPECT_GE(promised, 8);
  // Every commitment is audited exactly once, including those whose audit
  // was drawn, or not yet drawn, when the verifier was killed.
  for (const v1::GenerateResponse& r : responses) {
    const std::vector<v1::Verdict> verdicts =
        cluster.WaitForVerdicts(r.request_id(), absl::Seconds(60));
    ASSERT_EQ(verdicts.size(), 1u);
    EXPECT_EQ(verdicts[0].outcome(), v1::PASS) << verdicts[0].detail();
  }
  verifier->Kill(SIGTERM);
  EXPECT_TRUE(WIFEXITED(verifier->exit_status()));
  EXPECT_EQ(WEXITSTATUS(verifier->exit_status()), 0);
}

TEST(Restart, ProverRestartedBetweenCommitAndOpeningStillOpens) {
  Cluster cluster;
  cluster.StartVerifier(VerifierSetup{.policy = {0.0, 1}});
  RunningProver& first = cluster.StartProver();
  const int32_t vocab =
      static_cast<int32_t>(cluster.model().config().vocab_size);
  auto stub = cluster.InferenceStub(first);
  std::vector<std::string> ids;
  for (int i = 0; i < 2; ++i) {
    v1::SamplingParams sampling;
    sampling.set_temperature(0.9f);
    sampling.set_top_p(0.95f);
    auto r = cluster.Generate(*stub, RandomPrompt(7 + i, vocab, 10), 6,
                              sampling, "nonce");
    ASSERT_TRUE(r.ok()) << r.status();
    ASSERT_TRUE(r->response.receipt().has_inclusion());
    ids.push_back(r->response.request_id());
  }
  const std::string journal = first.journal_dir;
  const int port = first.server->port();
  EXPECT_TRUE(first.Stop().ok());
  cluster.StartProver({.journal_dir = journal, .port = port});

  auto audit = cluster.AuditStub();
  for (const std::string& id : ids) {
    for (bool all_layers : {false, true}) {
      v1::RequestAuditRequest request;
      request.set_request_id(id);
      request.set_all_layers(all_layers);
      if (!all_layers) {
        request.add_layers(1);
        request.add_layers(3);
      }
      v1::RequestAuditResponse response;
      grpc::ClientContext context;
      const grpc::Status status =
          audit->RequestAudit(&context, request, &response);
      ASSERT_TRUE(status.ok()) << status.error_message();
      v1::Envelope envelope;
      ASSERT_TRUE(
          envelope.ParseFromString(response.verdict().verdict_envelope()));
      auto verdict = store::ParseVerdict(envelope.payload());
      ASSERT_TRUE(verdict.ok());
      EXPECT_EQ(verdict->outcome(), v1::PASS) << verdict->detail();
    }
  }
}

TEST(Restart, AuditsDrawnWhileTheProverRestartsStillPass) {
  // Every commitment is audited (rate 1) by a remote auditor worker that
  // starts only once the prover is down, so every audit is leased while the
  // prover is away: it must wait for it (the opening source retries an
  // unreachable prover until the opening deadline) rather than fail an
  // honest prover. (The verifier's own audits have the same window, made
  // certain, in verifier_node_audit_test.)
  Cluster cluster;
  cluster.StartVerifier(VerifierSetup{.policy = {1.0, 2},
                                      .opening_timeout = absl::Seconds(20),
                                      .remote_auditors = true});
  RunningProver& first = cluster.StartProver();
  const int32_t vocab =
      static_cast<int32_t>(cluster.model().config().vocab_size);
  auto stub = cluster.InferenceStub(first);
  std::vector<std::string> ids;
  for (int i = 0; i < 6; ++i) {
    v1::SamplingParams greedy;
    greedy.set_top_p(1.0f);
    auto r =
        cluster.Generate(*stub, RandomPrompt(50 + i, vocab, 10), 4, greedy);
    ASSERT_TRUE(r.ok()) << r.status();
    ids.push_back(r->response.request_id());
  }
  const std::string journal = first.journal_dir;
  const int port = first.server->port();
  EXPECT_TRUE(first.Stop().ok());
  auto worker = cluster.StartAuditorWorker("w1", 2);
  ASSERT_NE(worker, nullptr);
  // The window under test: an audit finds the prover away (and keeps
  // retrying) before the prover comes back.
  const absl::Time deadline = absl::Now() + absl::Seconds(30);
  while (worker->openings_unreachable() == 0) {
    ASSERT_LT(absl::Now(), deadline) << "no audit found the prover away";
    absl::SleepFor(absl::Milliseconds(5));  // polling the worker
  }
  cluster.StartProver({.journal_dir = journal, .port = port});
  for (const std::string& id : ids) {
    const std::vector<v1::Verdict> verdicts =
        cluster.WaitForVerdicts(id, absl::Seconds(60));
    ASSERT_EQ(verdicts.size(), 1u);
    EXPECT_EQ(verdicts[0].outcome(), v1::PASS) << verdicts[0].detail();
  }
  EXPECT_EQ(worker->completed(), ids.size());
}

}  // namespace
}  // namespace layerproof::integration
