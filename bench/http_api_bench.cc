// The OpenAI-compatible HTTP API against gRPC GenerateStream on the same
// prover (issue 16, BENCHMARKS.md "HTTP API against gRPC"): time to first
// token and tokens per second of streamed greedy completions, the same
// prompt ids and max_tokens on both paths, interleaved trial by trial so
// that drift falls on both alike, at 1 and 4 concurrent streams.
//
// The prover and a verifier run in this process on 127.0.0.1 (plaintext),
// as service_bench stands them up (bench/loopback_nodes.h), with the
// synthetic `small` model (and its synthetic tokenizer, so the HTTP stream
// carries text deltas). Not a Google Benchmark: end-to-end trials, printed
// as a markdown table of medians.
//
// Usage: http_api_bench [--preset small] [--trials 12] [--tokens 64]
//                       [--dir .layerproof/bench-http]
#include <httplib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "bench/bench_common.h"
#include "bench/loopback_nodes.h"
#include "grpcpp/grpcpp.h"
#include "kernels/dispatch.h"
#include "kernels/model/synth.h"
#include "layerproof/v1/inference.grpc.pb.h"
#include "prover/prover_metrics.h"
#include "rpc/metrics.h"
#include "rpc/tls.h"
#include "text/synthetic_tokenizer.h"

namespace layerproof::bench {
namespace {

using Clock = std::chrono::steady_clock;

struct Trial {
  double ttft_ms = 0;
  double total_ms = 0;
  int tokens = 0;
};

Trial GrpcStream(v1::Inference::Stub& stub, const std::vector<int32_t>& prompt,
                 int max_tokens) {
  v1::GenerateRequest request;
  request.mutable_token_ids()->mutable_ids()->Assign(prompt.begin(),
                                                     prompt.end());
  request.set_max_tokens(static_cast<uint32_t>(max_tokens));
  request.mutable_sampling()->set_temperature(0);
  request.mutable_sampling()->set_top_p(1);
  grpc::ClientContext context;
  const auto start = Clock::now();
  auto reader = stub.GenerateStream(&context, request);
  v1::GenerateEvent event;
  Trial t;
  bool first = true;
  while (reader->Read(&event)) {
    if (event.has_tokens() && first) {
      t.ttft_ms =
          std::chrono::duration<double, std::milli>(Clock::now() - start)
              .count();
      first = false;
    }
    if (event.has_done()) t.tokens = event.done().output_token_ids_size();
  }
  const grpc::Status s = reader->Finish();
  if (!s.ok()) Die("GenerateStream", s.error_message());
  t.total_ms =
      std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  return t;
}

Trial HttpStream(int port, const std::vector<int32_t>& prompt, int max_tokens) {
  httplib::Client client("127.0.0.1", port);
  client.set_read_timeout(120);
  const nlohmann::json body = {{"model", "bench"},
                               {"prompt", prompt},
                               {"max_tokens", max_tokens},
                               {"temperature", 0},
                               {"stream", true}};
  httplib::Request req;
  req.method = "POST";
  req.path = "/v1/completions";
  req.body = body.dump();
  req.set_header("Content-Type", "application/json");
  Trial t;
  bool first = true;
  std::string received;
  const auto start = Clock::now();
  req.content_receiver = [&](const char* data, size_t n, uint64_t, uint64_t) {
    if (first && std::string_view(data, n).find("\"text\":\"") !=
                     std::string_view::npos) {
      // The first event with a text delta: the first token's text.
      if (std::string_view(data, n).find("\"text\":\"\"") ==
          std::string_view::npos) {
        t.ttft_ms =
            std::chrono::duration<double, std::milli>(Clock::now() - start)
                .count();
        first = false;
      }
    }
    received.append(data, n);
    return true;
  };
  auto res = client.send(req);
  if (!res || res->status != 200) Die("HTTP stream", received);
  t.total_ms =
      std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  // The receipt on the last chunk holds the output ids.
  const size_t last = received.rfind("data: {");
  const auto j = nlohmann::json::parse(
      received.substr(last + 6, received.find("\n\n", last) - last - 6));
  t.tokens = static_cast<int>(
      j["layerproof"]["receipt"]["response"]["output_token_ids"].size());
  return t;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

struct Totals {
  std::vector<double> ttft;
  std::vector<double> tokens_per_s;  // aggregate over the concurrent streams
};

// `streams` concurrent requests of one kind; returns the per-stream TTFTs
// and the aggregate throughput.
template <typename Run>
void Round(int streams, Run run, int round, Totals& totals) {
  std::vector<Trial> trials(streams);
  std::vector<std::thread> threads;
  const auto start = Clock::now();
  for (int s = 0; s < streams; ++s) {
    threads.emplace_back([&, s] { trials[s] = run(round * 16 + s); });
  }
  for (std::thread& t : threads) t.join();
  const double wall =
      std::chrono::duration<double>(Clock::now() - start).count();
  int tokens = 0;
  for (const Trial& t : trials) {
    totals.ttft.push_back(t.ttft_ms);
    tokens += t.tokens;
  }
  totals.tokens_per_s.push_back(tokens / wall);
}

int RunHttpBench(int argc, char** argv) {
  std::string preset = "small";
  std::string dir = ".layerproof/bench-http";
  int trials = 12;
  int tokens = 64;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--preset")) preset = argv[i + 1];
    if (!std::strcmp(argv[i], "--dir")) dir = argv[i + 1];
    if (!std::strcmp(argv[i], "--trials")) trials = std::atoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--tokens")) tokens = std::atoi(argv[i + 1]);
  }
  namespace km = kernels::model;
  const std::string model_dir = dir + "/model-" + preset;
  if (!std::filesystem::exists(model_dir + "/tokenizer.json")) {
    std::filesystem::remove_all(model_dir);
    km::SynthOptions so;
    so.seed = 1;
    Must(text::SynthesizeTextModel(Must(km::SynthPreset(preset), "preset"), so,
                                   model_dir),
         "synthesize");
  }
  auto model = Must(km::Model::Load(model_dir), "load model");
  kernels::Backend* backend = Must(kernels::DefaultBackend(), "backend");
  LoopbackNodes nodes(*model, backend, dir + "/nodes",
                      verifier::AuditPolicy{0.0, 1});
  prover::HttpApiOptions http;
  http.insecure = true;
  http.model_name = "bench";
  const int port = Must(nodes.prover().StartHttpApi(http), "StartHttpApi");
  auto channel = grpc::CreateChannel(nodes.prover_address(),
                                     grpc::InsecureChannelCredentials());
  auto stub = v1::Inference::NewStub(channel);
  const int64_t vocab = model->config().vocab_size;

  std::printf("model %s, backend %s, %d trials x %d tokens, prompt 32 ids\n\n",
              preset.c_str(), std::string(backend->name()).c_str(), trials,
              tokens);
  std::printf(
      "| streams | gRPC TTFT ms | HTTP TTFT ms | HTTP - gRPC TTFT ms | gRPC "
      "tok/s | HTTP tok/s | HTTP / gRPC throughput |\n|---|---|---|---|---|"
      "---|---|\n");
  for (int streams : {1, 4}) {
    Totals grpc_totals, http_totals;
    // One warm-up of each.
    Round(
        streams,
        [&](int s) { return GrpcStream(*stub, Prompt(32, s, vocab), tokens); },
        999, grpc_totals);
    Round(
        streams,
        [&](int s) { return HttpStream(port, Prompt(32, s, vocab), tokens); },
        999, http_totals);
    grpc_totals = {};
    http_totals = {};
    for (int r = 0; r < trials; ++r) {
      auto grpc_run = [&](int s) {
        return GrpcStream(*stub, Prompt(32, s, vocab), tokens);
      };
      auto http_run = [&](int s) {
        return HttpStream(port, Prompt(32, s, vocab), tokens);
      };
      // Alternate which goes first.
      if (r % 2 == 0) {
        Round(streams, grpc_run, r, grpc_totals);
        Round(streams, http_run, r, http_totals);
      } else {
        Round(streams, http_run, r, http_totals);
        Round(streams, grpc_run, r, grpc_totals);
      }
    }
    const double gt = Median(grpc_totals.ttft), ht = Median(http_totals.ttft);
    const double gs = Median(grpc_totals.tokens_per_s),
                 hs = Median(http_totals.tokens_per_s);
    std::printf("| %d | %.2f | %.2f | %+.2f | %.1f | %.1f | %.3f |\n", streams,
                gt, ht, ht - gt, gs, hs, hs / gs);
  }

  // Metrics: the same gRPC streams on four fresh provers, created in the
  // order counting, bare, bare, counting (bare: ProverOptions::
  // record_metrics = false), so that what a node's place costs (measured:
  // 2-4% between two identical nodes) falls on both sides alike. Rounds
  // visit the four in a rotating order; the counting ones are scraped
  // after every round.
  std::vector<std::unique_ptr<LoopbackNodes>> provers;
  std::vector<std::unique_ptr<v1::Inference::Stub>> stubs;
  std::vector<std::unique_ptr<rpc::MetricsServer>> scraped;
  const bool counts[4] = {true, false, false, true};
  for (int i = 0; i < 4; ++i) {
    provers.push_back(std::make_unique<LoopbackNodes>(
        *model, backend, dir + "/nodes-" + std::to_string(i),
        verifier::AuditPolicy{0.0, 1}, counts[i]));
    stubs.push_back(v1::Inference::NewStub(grpc::CreateChannel(
        provers.back()->prover_address(), grpc::InsecureChannelCredentials())));
    if (counts[i]) {
      scraped.push_back(
          Must(rpc::MetricsServer::Start("127.0.0.1", 0,
                                         provers.back()->prover().metrics()),
               "metrics server"));
    }
  }
  std::printf(
      "\n| streams | tok/s counting nothing | tok/s with metrics (scraped "
      "each round) | with / without |\n|---|---|---|---|\n");
  std::vector<double> on_one_stream_tokens_per_s;
  for (int streams : {1, 4}) {
    Totals on, off;
    for (int r = -1; r < trials; ++r) {  // round -1 warms up
      for (int k = 0; k < 4; ++k) {
        const int i = (r + 4 + k) % 4;
        Totals& t = counts[i] ? on : off;
        Round(
            streams,
            [&](int s) {
              return GrpcStream(*stubs[i], Prompt(32, s, vocab), tokens);
            },
            r, t);
      }
      for (const auto& m : scraped) {
        httplib::Client scraper("127.0.0.1", m->port());
        auto got = scraper.Get("/metrics");
        if (!got || got->status != 200) Die("scrape", "/metrics");
      }
      if (r < 0) on = {}, off = {};
    }
    const double a = Median(off.tokens_per_s), b = Median(on.tokens_per_s);
    std::printf("| %d | %.1f | %.1f | %.3f |\n", streams, a, b, b / a);
    if (streams == 1) on_one_stream_tokens_per_s = on.tokens_per_s;
  }

  // What counting costs, measured directly: the per-token work (a clock
  // read and a histogram observation), the per-request work (the counters)
  // and one scrape, against the time of one token at 1 stream.
  prometheus::Registry registry;
  prover::ProverMetrics m(registry);
  constexpr int kReps = 1000000;
  auto t0 = Clock::now();
  absl::Time last = absl::Now();
  for (int i = 0; i < kReps; ++i) {
    const absl::Time now = absl::Now();
    m.time_per_output_token.Observe(absl::ToDoubleSeconds(now - last));
    last = now;
  }
  const double per_token_ns =
      std::chrono::duration<double, std::nano>(Clock::now() - t0).count() /
      kReps;
  t0 = Clock::now();
  for (int i = 0; i < kReps / 10; ++i) {
    m.CountRequest("grpc", absl::StatusCode::kOk);
    m.prompt_tokens.Increment(32);
    m.output_tokens.Increment(64);
  }
  const double per_request_ns =
      std::chrono::duration<double, std::nano>(Clock::now() - t0).count() /
      (kReps / 10);
  t0 = Clock::now();
  for (int i = 0; i < 100; ++i) {
    (void)provers[0]->prover().metrics().Scrape();
  }
  const double scrape_us =
      std::chrono::duration<double, std::micro>(Clock::now() - t0).count() /
      100;
  const double token_us = 1e6 / Median(on_one_stream_tokens_per_s);
  std::printf(
      "\ncounting: %.0f ns per token, %.0f ns per request, %.0f us per "
      "scrape; one token at 1 stream takes %.0f us, so counting is %.4f%% of "
      "it\n",
      per_token_ns, per_request_ns, scrape_us, token_us,
      100.0 * per_token_ns / (token_us * 1000.0));
  return 0;
}

}  // namespace
}  // namespace layerproof::bench

int main(int argc, char** argv) {
  return layerproof::bench::RunHttpBench(argc, argv);
}
