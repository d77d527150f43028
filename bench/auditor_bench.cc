// Audits that scale out (issue 16, BENCHMARKS.md "Auditor workers"): a
// backlog of audits drained by 1 and by 2 auditor workers, each on one
// core. The verifier
// (with --remote-auditors) and a prover run in this process on 127.0.0.1
// (bench/loopback_nodes.h); requests are served with no worker running, so
// every drawn audit waits; then K workers (verifier/auditor_worker.h, each
// with its own executor and engine, as separate `serve auditor` processes
// would have) start and the time until the backlog is empty is measured.
// Each K gets fresh nodes. Not a Google Benchmark: it prints a table.
//
// Usage: auditor_bench [--preset small] [--audits 200] [--layers 1]
//                      [--dir .layerproof/bench-auditors]
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "bench/bench_common.h"
#include "bench/loopback_nodes.h"
#include "bench/synth_model.h"
#include "grpcpp/grpcpp.h"
#include "kernels/dispatch.h"
#include "layerproof/v1/inference.grpc.pb.h"
#include "verifier/auditor_worker.h"

namespace layerproof::bench {
namespace {

struct Drain {
  double seconds = 0;
  uint64_t audits = 0;
};

Drain DrainWith(const kernels::model::Model& model, kernels::Backend* backend,
                const std::string& dir, int workers, int audits, int layers) {
  LoopbackNodes nodes(model, backend, dir,
                      verifier::AuditPolicy{1.0, uint32_t(layers)},
                      /*record_metrics=*/true, /*remote_auditors=*/true);
  // The backlog: `audits` requests, 8 at a time, each drawn for audit.
  const int64_t vocab = model.config().vocab_size;
  std::vector<std::thread> clients;
  for (int c = 0; c < 8; ++c) {
    clients.emplace_back([&, c] {
      auto stub = v1::Inference::NewStub(grpc::CreateChannel(
          nodes.prover_address(), grpc::InsecureChannelCredentials()));
      for (int i = c; i < audits; i += 8) {
        v1::GenerateRequest request;
        const std::vector<int32_t> prompt = Prompt(32, 7000 + i, vocab);
        request.mutable_token_ids()->mutable_ids()->Assign(prompt.begin(),
                                                           prompt.end());
        request.set_max_tokens(16);
        request.mutable_sampling()->set_temperature(0);
        request.mutable_sampling()->set_top_p(1);
        v1::GenerateResponse response;
        grpc::ClientContext context;
        const grpc::Status s = stub->Generate(&context, request, &response);
        if (!s.ok()) Die("Generate", s.error_message());
      }
    });
  }
  for (std::thread& t : clients) t.join();
  // Every commitment logged and drawn; nothing audited yet.
  const absl::Time wait_until = absl::Now() + absl::Seconds(60);
  while (nodes.verifier().counters().audits_drawn < uint64_t(audits) &&
         absl::Now() < wait_until) {
    absl::SleepFor(absl::Milliseconds(10));
  }
  if (nodes.verifier().counters().audits_done != 0) {
    Die("backlog", "audits ran before any worker started");
  }
  // Each worker computes on one core, as a worker pod with a CPU limit of
  // one would (this machine has two: 2 workers can use both).
  backend->SetThreads(1);
  std::vector<std::unique_ptr<kernels::model::Executor>> executors;
  std::vector<std::unique_ptr<kernels::model::Engine>> engines;
  std::vector<std::unique_ptr<verifier::AuditorWorker>> running;
  const absl::Time start = absl::Now();
  for (int w = 0; w < workers; ++w) {
    executors.push_back(
        Must(kernels::model::MakeExecutor(backend), "executor"));
    engines.push_back(
        Must(kernels::model::Engine::Create(model, executors.back().get()),
             "engine"));
    verifier::AuditorWorkerOptions o;
    o.worker_id = "bench-" + std::to_string(w);
    o.verifier_address = nodes.verifier_address();
    o.verifier_tls = LoopbackNodes::tls();
    o.prover_tls = LoopbackNodes::tls();
    o.engine = engines.back().get();
    o.poll_interval = absl::Milliseconds(5);
    running.push_back(Must(verifier::AuditorWorker::Start(std::move(o)),
                           "AuditorWorker::Start"));
  }
  while (nodes.verifier().counters().audits_done < uint64_t(audits)) {
    absl::SleepFor(absl::Milliseconds(5));
  }
  Drain d;
  d.seconds = absl::ToDoubleSeconds(absl::Now() - start);
  d.audits = nodes.verifier().counters().audits_done;
  for (auto& w : running) w->Stop();
  backend->SetThreads(int(std::thread::hardware_concurrency()));
  return d;
}

int RunAuditorBench(int argc, char** argv) {
  std::string preset = "small";
  std::string dir = ".layerproof/bench-auditors";
  int audits = 200;
  int layers = 1;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--preset")) preset = argv[i + 1];
    if (!std::strcmp(argv[i], "--dir")) dir = argv[i + 1];
    if (!std::strcmp(argv[i], "--audits")) audits = std::atoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--layers")) layers = std::atoi(argv[i + 1]);
  }
  auto model =
      Must(LoadOrSynthesize(preset, dir + "/model-" + preset), "model");
  kernels::Backend* backend = Must(kernels::DefaultBackend(), "backend");
  std::printf(
      "model %s, backend %s, %d audits of %d layer(s) + head, "
      "prompt 32 + 16 tokens\n\n",
      preset.c_str(), std::string(backend->name()).c_str(), audits, layers);
  std::printf(
      "| workers | backlog drained in s | audits/s | speed-up |\n"
      "|---|---|---|---|\n");
  double one = 0;
  for (int workers : {1, 2}) {
    const Drain d =
        DrainWith(*model, backend, dir + "/nodes-" + std::to_string(workers),
                  workers, audits, layers);
    const double rate = double(d.audits) / d.seconds;
    if (workers == 1) one = rate;
    std::printf("| %d | %.2f | %.1f | %.2f |\n", workers, d.seconds, rate,
                rate / one);
  }
  return 0;
}

}  // namespace
}  // namespace layerproof::bench

int main(int argc, char** argv) {
  return layerproof::bench::RunAuditorBench(argc, argv);
}
