#include "cli/demo_load.h"

#include <openssl/rand.h>

#include <algorithm>
#include <chrono>
#include <mutex>
#include <random>
#include <thread>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "layerproof/v1/inference.grpc.pb.h"
#include "layerproof/v1/opening.grpc.pb.h"
#include "store/checkpoint.h"
#include "store/commitment.h"
#include "store/envelope.h"
#include "store/merkle.h"
#include "store/status.h"

namespace layerproof::cli {
namespace {

absl::Status FromGrpc(const grpc::Status& s) {
  return absl::Status(static_cast<absl::StatusCode>(s.error_code()),
                      s.error_message());
}

std::chrono::system_clock::time_point Deadline(int seconds) {
  return std::chrono::system_clock::now() + std::chrono::seconds(seconds);
}

absl::StatusOr<std::vector<store::Sha256Hash>> ToHashes(
    const google::protobuf::RepeatedPtrField<std::string>& wire) {
  std::vector<store::Sha256Hash> hashes;
  for (const std::string& h : wire) {
    store::Sha256Hash hash{};
    if (h.size() != hash.size()) {
      return absl::DataLossError("inclusion proof: a hash is not 32 bytes");
    }
    std::copy(h.begin(), h.end(), hash.begin());
    hashes.push_back(hash);
  }
  return hashes;
}

// What a client verifies about one client, one prover and the log.
struct ClientView {
  const DemoProver* prover;
  store::KeyRing prover_keys;
  const store::CheckpointVerifier* checkpoints;
  std::string log_origin;
  std::unique_ptr<v1::Inference::Stub> inference;
  std::unique_ptr<v1::Opening::Stub> opening;
};

// The inclusion of the commitment `envelope` verifies against a checkpoint
// the verifier signed.
absl::Status CheckInclusion(const ClientView& view,
                            const v1::LogInclusion& inclusion,
                            const std::string& envelope) {
  LP_ASSIGN_OR_RETURN(
      store::Checkpoint checkpoint,
      view.checkpoints->Verify(inclusion.checkpoint(), view.log_origin));
  if (checkpoint.size != inclusion.tree_size()) {
    return absl::DataLossError("receipt: checkpoint size != tree_size");
  }
  LP_ASSIGN_OR_RETURN(std::vector<store::Sha256Hash> proof,
                      ToHashes(inclusion.inclusion_proof()));
  return store::VerifyInclusion(store::LeafHash(envelope),
                                inclusion.leaf_index(), inclusion.tree_size(),
                                proof, checkpoint.root);
}

// A promise: asks the prover for the inclusion until the log has it.
absl::StatusOr<v1::LogInclusion> FetchInclusion(const ClientView& view,
                                                const std::string& request_id) {
  const absl::Time deadline = absl::Now() + absl::Seconds(30);
  while (true) {
    v1::GetCommitmentRequest request;
    request.set_request_id(request_id);
    v1::GetCommitmentResponse response;
    grpc::ClientContext context;
    context.set_deadline(Deadline(10));
    const grpc::Status status =
        view.opening->GetCommitment(&context, request, &response);
    if (!status.ok()) return FromGrpc(status);
    if (response.has_inclusion()) return response.inclusion();
    if (absl::Now() >= deadline) {
      return absl::DeadlineExceededError("promised commitment never logged");
    }
    absl::SleepFor(absl::Milliseconds(50));  // polling the prover
  }
}

// One request with a client's checks.
DemoRequest OneRequest(const ClientView& view, uint64_t seed, int32_t vocab,
                       uint32_t max_new_tokens) {
  DemoRequest out;
  out.prover_id = view.prover->id;
  std::mt19937_64 rng(seed);
  v1::GenerateRequest request;
  const int len = 4 + static_cast<int>(rng() % 13);
  std::vector<int32_t> prompt(len);
  for (int32_t& id : prompt) id = static_cast<int32_t>(rng() % vocab);
  for (int32_t id : prompt) request.mutable_token_ids()->add_ids(id);
  if (seed % 2 == 1) {  // half sampled, half greedy
    request.mutable_sampling()->set_temperature(0.8f);
    request.mutable_sampling()->set_top_k(40);
    request.mutable_sampling()->set_top_p(0.95f);
  }
  request.set_max_tokens(max_new_tokens);
  std::string nonce(16, '\0');
  RAND_bytes(reinterpret_cast<unsigned char*>(nonce.data()), 16);
  request.set_client_nonce(nonce);
  out.prompt_tokens = static_cast<uint32_t>(len);

  v1::GenerateResponse r;
  grpc::ClientContext context;
  context.set_deadline(Deadline(120));
  const grpc::Status status = view.inference->Generate(&context, request, &r);
  const auto fail = [&](const absl::Status& s) {
    out.error = s.ToString();
    return out;
  };
  if (!status.ok()) return fail(FromGrpc(status));
  out.request_id = r.request_id();
  out.output_tokens = static_cast<uint32_t>(r.output_token_ids_size());

  auto verified =
      store::VerifyEnvelope(r.commitment_envelope(), view.prover_keys,
                            store::kCommitmentPayloadType, 1 << 20);
  if (!verified.ok()) return fail(verified.status());
  auto commitment = store::ParseCommitment(verified->payload);
  if (!commitment.ok()) return fail(commitment.status());
  const v1::Commitment& c = *commitment;
  const std::string key = store::DigestKey(store::AsBytes(r.salt()),
                                           store::AsBytes(r.request_id()));
  const std::vector<int32_t> got_prompt(r.prompt_token_ids().begin(),
                                        r.prompt_token_ids().end());
  const std::vector<int32_t> output(r.output_token_ids().begin(),
                                    r.output_token_ids().end());
  const auto same = [](const store::Sha256Hash& h, const std::string& s) {
    return std::string(h.begin(), h.end()) == s;
  };
  if (c.request_id() != r.request_id() || c.prover_id() != view.prover->id ||
      c.client_nonce() != nonce || got_prompt != prompt ||
      !same(store::TokenDigest(store::AsBytes(key), got_prompt),
            c.prompt_digest()) ||
      !same(store::TokenDigest(store::AsBytes(key), output),
            c.output_digest()) ||
      !same(store::SeedDigest(store::AsBytes(key), r.seed()),
            c.seed_digest()) ||
      r.seed() != store::SeedFromNonce(store::AsBytes(nonce))) {
    return fail(
        absl::DataLossError("the commitment does not match the "
                            "response"));
  }
  v1::LogInclusion inclusion;
  if (r.receipt().has_inclusion()) {
    inclusion = r.receipt().inclusion();
  } else {
    out.promise = true;
    auto fetched = FetchInclusion(view, r.request_id());
    if (!fetched.ok()) return fail(fetched.status());
    inclusion = *std::move(fetched);
  }
  if (absl::Status s = CheckInclusion(view, inclusion, r.commitment_envelope());
      !s.ok()) {
    return fail(s);
  }
  out.ok = true;
  return out;
}

}  // namespace

std::vector<DemoRequest> RunDemoLoad(
    DemoCluster& cluster, const DemoLoadOptions& options,
    const std::function<void(const DemoLoadProgress&)>& on_tick) {
  const store::CheckpointVerifier checkpoints(cluster.verifier().verifier_id(),
                                              cluster.verifier().public_key());
  std::vector<DemoRequest> results(options.requests);
  std::mutex mu;
  DemoLoadProgress progress;
  std::atomic<int> next{0};
  std::vector<std::thread> clients;
  for (int t = 0; t < std::max(1, options.concurrency); ++t) {
    clients.emplace_back([&] {
      // One channel per client thread and prover, as separate clients.
      std::vector<ClientView> views;
      for (const auto& p : cluster.provers()) {
        ClientView view;
        view.prover = p.get();
        view.prover_keys.Add(p->key->public_key());
        view.checkpoints = &checkpoints;
        view.log_origin = cluster.verifier().log_origin();
        auto channel = cluster.Channel(p->address(), DemoCluster::kClient);
        if (channel.ok()) {
          view.inference = v1::Inference::NewStub(*channel);
          view.opening = v1::Opening::NewStub(*channel);
        }
        views.push_back(std::move(view));
      }
      while (true) {
        if (options.stop != nullptr && options.stop->load()) return;
        const int i = next.fetch_add(1);
        if (i >= options.requests) return;
        {
          std::lock_guard<std::mutex> lock(mu);
          ++progress.sent;
        }
        const ClientView& view = views[i % views.size()];
        DemoRequest r;
        if (view.inference == nullptr) {
          r.prover_id = view.prover->id;
          r.error = "cannot make a channel to " + view.prover->id;
        } else {
          r = OneRequest(view, options.seed * 1000003 + i, options.vocab,
                         options.max_new_tokens);
        }
        std::lock_guard<std::mutex> lock(mu);
        results[i] = std::move(r);
        ++progress.done;
        if (!results[i].ok) ++progress.failed;
      }
    });
  }
  // This thread draws the progress while the clients run.
  while (true) {
    DemoLoadProgress now;
    {
      std::lock_guard<std::mutex> lock(mu);
      now = progress;
    }
    if (on_tick) on_tick(now);
    if (now.done >= options.requests ||
        (options.stop != nullptr && options.stop->load() &&
         now.done >= now.sent)) {
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  for (std::thread& t : clients) t.join();
  {
    std::lock_guard<std::mutex> lock(mu);
    if (on_tick) on_tick(progress);
  }
  // Requests never sent (a stop) are dropped.
  results.erase(
      std::remove_if(results.begin(), results.end(),
                     [](const DemoRequest& r) { return r.prover_id.empty(); }),
      results.end());
  return results;
}

}  // namespace layerproof::cli
