// An honest prover under load (issue 5): 200 requests from 8 concurrent
// clients with every commitment audited. Every verdict must be PASS, and
// every receipt must prove its commitment's inclusion in the final log.
#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <thread>
#include <vector>

#include "store/checkpoint.h"
#include "store/merkle.h"
#include "tests/integration/cluster.h"

namespace layerproof::integration {
namespace {

constexpr int kClients = 8;
constexpr int kRequestsPerClient = 25;

// Hashes from their wire form.
std::vector<store::Sha256Hash> ToHashes(
    const google::protobuf::RepeatedPtrField<std::string>& wire) {
  std::vector<store::Sha256Hash> hashes;
  for (const std::string& h : wire) {
    store::Sha256Hash hash{};
    EXPECT_EQ(h.size(), hash.size());
    std::copy_n(h.begin(), std::min(h.size(), hash.size()), hash.begin());
    hashes.push_back(hash);
  }
  return hashes;
}

// Fetches the inclusion of a receipt that was a promise.
v1::LogInclusion FetchInclusion(Cluster& cluster, const RunningProver& prover,
                                const std::string& request_id) {
  auto opening = cluster.OpeningStub(prover);
  const absl::Time deadline = absl::Now() + absl::Seconds(30);
  while (absl::Now() < deadline) {
    v1::GetCommitmentRequest request;
    request.set_request_id(request_id);
    v1::GetCommitmentResponse response;
    grpc::ClientContext context;
    const grpc::Status status =
        opening->GetCommitment(&context, request, &response);
    EXPECT_TRUE(status.ok()) << status.error_message();
    if (response.has_inclusion()) return response.inclusion();
    absl::SleepFor(absl::Milliseconds(20));  // polling the prover
  }
  ADD_FAILURE() << "no inclusion for a promised commitment";
  return {};
}

TEST(HonestProver, TwoHundredRequestsAllPassAndAllReceiptsVerify) {
  Cluster cluster;
  cluster.StartVerifier(VerifierSetup{.policy = {1.0, 2}});
  RunningProver& prover = cluster.StartProver();
  const int32_t vocab =
      static_cast<int32_t>(cluster.model().config().vocab_size);

  std::mutex mu;
  std::vector<ClientResult> results;
  std::atomic<int> failures{0};
  std::vector<std::thread> clients;
  for (int c = 0; c < kClients; ++c) {
    clients.emplace_back([&, c] {
      auto stub = cluster.InferenceStub(prover);
      for (int i = 0; i < kRequestsPerClient; ++i) {
        const uint64_t seed = uint64_t(c) * 1000 + i;
        v1::SamplingParams sampling;
        // Half greedy, half sampled; every fourth with a client nonce.
        sampling.set_temperature(i % 2 ? 0.8f : 0.0f);
        sampling.set_top_k(i % 3 == 0 ? 0 : 20);
        sampling.set_top_p(i % 2 ? 0.9f : 1.0f);
        const std::string nonce =
            i % 4 == 0 ? "nonce-" + std::to_string(seed) : std::string();
        auto result = cluster.Generate(*stub, RandomPrompt(seed, vocab, 12),
                                       2 + (seed % 7), sampling, nonce);
        if (!result.ok()) {
          ADD_FAILURE() << result.status();
          ++failures;
          continue;
        }
        std::lock_guard<std::mutex> lock(mu);
        results.push_back(*std::move(result));
      }
    });
  }
  for (std::thread& t : clients) t.join();
  ASSERT_EQ(failures.load(), 0);
  ASSERT_EQ(results.size(), size_t{kClients * kRequestsPerClient});

  // Every commitment is logged and audited.
  ASSERT_TRUE(WaitForAudits(cluster, results.size(), absl::Seconds(120)));
  const store::Checkpoint final_checkpoint = cluster.LatestCheckpoint();
  auto log = cluster.LogStub();
  store::CheckpointVerifier checker(cluster.verifier().verifier_id(),
                                    cluster.verifier().public_key());
  int promises = 0;
  for (const ClientResult& result : results) {
    const v1::GenerateResponse& r = result.response;
    // The verdict.
    const std::vector<v1::Verdict> verdicts = cluster.Verdicts(r.request_id());
    ASSERT_EQ(verdicts.size(), 1u);
    EXPECT_EQ(verdicts[0].outcome(), v1::PASS) << verdicts[0].detail();
    EXPECT_TRUE(verdicts[0].head_checked());
    EXPECT_EQ(verdicts[0].audited_layers_size(), 2);

    // The receipt: an inclusion proof against a signed checkpoint, and that
    // checkpoint consistent with the final one.
    v1::LogInclusion inclusion;
    if (r.receipt().has_inclusion()) {
      inclusion = r.receipt().inclusion();
    } else {
      ASSERT_TRUE(r.receipt().has_promise_envelope());
      ++promises;
      inclusion = FetchInclusion(cluster, prover, r.request_id());
    }
    auto checkpoint = checker.Verify(inclusion.checkpoint());
    ASSERT_TRUE(checkpoint.ok()) << checkpoint.status();
    ASSERT_EQ(checkpoint->size, inclusion.tree_size());
    const store::Sha256Hash leaf = store::LeafHash(r.commitment_envelope());
    EXPECT_TRUE(store::VerifyInclusion(
                    leaf, inclusion.leaf_index(), inclusion.tree_size(),
                    ToHashes(inclusion.inclusion_proof()), checkpoint->root)
                    .ok());
    v1::GetConsistencyProofRequest request;
    request.set_old_size(inclusion.tree_size());
    request.set_new_size(final_checkpoint.size);
    v1::GetConsistencyProofResponse response;
    grpc::ClientContext context;
    ASSERT_TRUE(log->GetConsistencyProof(&context, request, &response).ok());
    EXPECT_TRUE(
        store::VerifyConsistency(inclusion.tree_size(), final_checkpoint.size,
                                 checkpoint->root, final_checkpoint.root,
                                 ToHashes(response.proof()))
            .ok());
  }
  // 200 commitments and 200 verdicts in the log.
  EXPECT_EQ(final_checkpoint.size, 2 * results.size());
  RecordProperty("promises", promises);
}

}  // namespace
}  // namespace layerproof::integration
