// What the client's receipt check costs (issue 13), against the request it
// checks, measured in the same run on this machine:
//   (a) check::CheckReceipt of a GenerateResponse against its request
//       (envelope signature, request binding, salted digests, stop rule,
//       inclusion against the signed checkpoint), µs per receipt: every
//       response of the run checked --check-reps times in turn, best and
//       median of the per-pass means;
//   (b) peer: the Generate call that produced it, over gRPC loopback to an
//       in-process ProverNode that submits to an in-process VerifierNode
//       (audit rate 0; bench/loopback_nodes.h), one client sending
//       --requests calls back to back (prompt 16, 16 tokens, sampled, a
//       fresh nonce each): p50 and p99 latency.
// The `small` synthetic model (kernels/model/synth.h, seed 1), reused from
// <model dir>/small-seed1 (default <build dir>/models).
// Output: markdown for BENCHMARKS.md on stdout, and in --out FILE.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "bench/bench_common.h"
#include "bench/loopback_nodes.h"
#include "bench/synth_model.h"
#include "check/receipt.h"
#include "layerproof/v1/inference.grpc.pb.h"
#include "store/checkpoint.h"

namespace layerproof::bench {
namespace {

namespace fs = std::filesystem;
namespace km = kernels::model;

struct Options {
  bool quick = false;
  std::string model_dir;
  std::string out;
  int threads = 2;
  int requests = 64;
  int check_reps = 50;
};

void Usage() {
  std::fputs(
      "usage: client_bench [--quick] [--requests N] [--check-reps N]\n"
      "         [--threads N] [--model-dir DIR] [--out FILE]\n",
      stderr);
}

bool ParseArgs(int argc, char** argv, Options* o) {
  for (Args args(argc, argv); args.Next();) {
    if (args.Flag("--quick")) {
      o->quick = true;
      o->requests = 16;
      o->check_reps = 10;
    } else if (const char* v = args.Value("--requests")) {
      o->requests = std::max(2, std::atoi(v));
    } else if (const char* v = args.Value("--check-reps")) {
      o->check_reps = std::max(1, std::atoi(v));
    } else if (const char* v = args.Value("--threads")) {
      o->threads = std::max(1, std::atoi(v));
    } else if (const char* v = args.Value("--model-dir")) {
      o->model_dir = v;
    } else if (const char* v = args.Value("--out")) {
      o->out = v;
    } else {
      return false;
    }
  }
  return true;
}

int Run(const Options& o) {
  const BenchRun run = StartRun(o.model_dir, o.threads, o.quick);
  std::unique_ptr<km::Model> model = Must(
      LoadOrSynthesize("small", (run.models / "small-seed1").string()),
      "model");
  verifier::AuditPolicy policy;
  policy.rate = 0;
  policy.layers_per_audit = 1;
  std::vector<v1::GenerateRequest> requests;
  std::vector<v1::GenerateResponse> responses;
  std::vector<double> latency;
  check::ReceiptTrust trust;
  std::unique_ptr<store::CheckpointVerifier> log_key;
  {
    LoopbackNodes nodes(*model, run.backend, run.tmp / "nodes", policy);
    trust.prover_keys.Add(nodes.prover_key());
    trust.prover_id = "bench-prover";
    log_key = std::make_unique<store::CheckpointVerifier>("bench-verifier",
                                                          nodes.verifier_key());
    trust.log = {log_key.get(), "layerproof/bench-verifier"};
    auto stub = v1::Inference::NewStub(
        Must(rpc::MakeChannel(nodes.prover_address(), LoopbackNodes::tls()),
             "channel"));
    const int64_t vocab = model->config().vocab_size;
    for (int i = -1; i < o.requests; ++i) {  // i = -1: warm-up
      v1::GenerateRequest request;
      for (int32_t id : Prompt(16, 5000 + i, vocab)) {
        request.mutable_token_ids()->add_ids(id);
      }
      request.mutable_sampling()->set_temperature(0.8f);
      request.mutable_sampling()->set_top_k(40);
      request.mutable_sampling()->set_top_p(0.95f);
      request.set_max_tokens(16);
      request.set_ignore_eos(true);
      request.set_client_nonce("client-bench-nonce-" + std::to_string(i));
      v1::GenerateResponse response;
      grpc::ClientContext context;
      const auto t0 = Clock::now();
      const grpc::Status s = stub->Generate(&context, request, &response);
      const double seconds = Seconds(t0);
      if (!s.ok()) Die("Generate", s.error_message());
      if (!response.receipt().has_inclusion()) Die("Generate", "a promise");
      if (i < 0) continue;
      latency.push_back(seconds);
      requests.push_back(std::move(request));
      responses.push_back(std::move(response));
    }
  }
  Times pass;
  for (int rep = 0; rep < o.check_reps; ++rep) {
    const auto t0 = Clock::now();
    for (size_t i = 0; i < responses.size(); ++i) {
      Must(check::CheckReceipt(requests[i], responses[i], trust).status(),
           "CheckReceipt");
    }
    pass.v.push_back(Seconds(t0) / double(responses.size()));
  }
  const double p50 = Percentile(latency, 0.5), p99 = Percentile(latency, 0.99);
  Emit("\n#### Receipt check vs Generate (`small`, %d requests, %d check "
       "passes)\n\n",
       o.requests, o.check_reps);
  Emit("| measured | best | median | p99 |\n|---|---|---|---|\n");
  Emit("| (a) `check::CheckReceipt`, µs per receipt | %.1f | %.1f | — |\n",
       1e6 * pass.best(), 1e6 * pass.median());
  Emit("| (b) Generate over loopback (16 tokens), ms | %.1f | %.1f | %.1f |\n",
       1e3 * *std::min_element(latency.begin(), latency.end()), 1e3 * p50,
       1e3 * p99);
  Emit("\n- the check costs %.3f%% of a median Generate; the envelope is "
       "%zu bytes, its inclusion proof %d hashes at tree size %llu.\n",
       100 * pass.median() / p50, responses.back().commitment_envelope().size(),
       responses.back().receipt().inclusion().inclusion_proof_size(),
       (unsigned long long)responses.back().receipt().inclusion().tree_size());
  Emit("\nload average at the end: %s\n", LoadAverage().c_str());
  return FinishRun(run, o.out);
}

}  // namespace
}  // namespace layerproof::bench

int main(int argc, char** argv) {
  using namespace layerproof::bench;
  return Main<Options>("client_bench", argc, argv, ParseArgs, Usage, Run);
}
