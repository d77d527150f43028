#include "demo/demo_load.h"

#include <algorithm>
#include <chrono>
#include <mutex>
#include <random>
#include <thread>

#include "absl/time/time.h"
#include "check/receipt.h"
#include "cli/prover_client.h"
#include "layerproof/v1/inference.grpc.pb.h"
#include "layerproof/v1/opening.grpc.pb.h"
#include "store/checkpoint.h"

namespace layerproof::demo {
namespace {

using cli::CheckedGeneration;
using cli::ClientTimeouts;
using cli::GenerateChecked;
using cli::ProverClient;
using cli::RandomNonce;

// What a client verifies about one client, one prover and the log.
struct ClientView {
  const cluster::LocalProver* prover;
  check::ReceiptTrust trust;
  ProverClient client;
};

// One request with a client's checks.
DemoRequest OneRequest(const ClientView& view, uint64_t seed, int32_t vocab,
                       uint32_t max_new_tokens) {
  DemoRequest out;
  out.prover_id = view.prover->prover_id;
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
  request.set_client_nonce(RandomNonce());
  out.prompt_tokens = static_cast<uint32_t>(len);

  ClientTimeouts timeouts;
  timeouts.follow = absl::Seconds(30);
  timeouts.poll = absl::Milliseconds(50);
  const CheckedGeneration g =
      GenerateChecked(view.client, request, view.trust, timeouts);
  out.request_id = g.response.request_id();
  out.output_tokens = static_cast<uint32_t>(g.response.output_token_ids_size());
  out.promise = g.receipt.has_value() && g.receipt->promise.has_value();
  if (!g.status.ok()) {
    out.error = g.status.ToString();
    return out;
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
        view.trust.prover_keys.Add(p->key->public_key());
        view.trust.prover_id = p->prover_id;
        view.trust.log = {&checkpoints, cluster.verifier().log_origin()};
        auto channel = cluster.Channel(p->address(), DemoCluster::kClient);
        if (channel.ok()) {
          view.client.inference = v1::Inference::NewStub(*channel);
          view.client.opening = v1::Opening::NewStub(*channel);
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
        if (view.client.inference == nullptr) {
          r.prover_id = view.prover->prover_id;
          r.error = "cannot make a channel to " + view.prover->prover_id;
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

}  // namespace layerproof::demo
