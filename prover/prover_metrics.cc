#include "prover/prover_metrics.h"

#include "rpc/metrics.h"

namespace layerproof::prover {

ProverMetrics::ProverMetrics(prometheus::Registry& registry)
    : prompt_tokens(prometheus::BuildCounter()
                        .Name("layerproof_prompt_tokens_total")
                        .Help("Prompt tokens of committed requests.")
                        .Register(registry)
                        .Add({})),
      output_tokens(prometheus::BuildCounter()
                        .Name("layerproof_output_tokens_total")
                        .Help("Output tokens of committed requests.")
                        .Register(registry)
                        .Add({})),
      time_to_first_token(
          prometheus::BuildHistogram()
              .Name("layerproof_time_to_first_token_seconds")
              .Help("From a request's start to its first sampled token.")
              .Register(registry)
              .Add({}, rpc::LatencyBuckets())),
      time_per_output_token(
          prometheus::BuildHistogram()
              .Name("layerproof_time_per_output_token_seconds")
              .Help("Between consecutive sampled tokens of a request.")
              .Register(registry)
              .Add({}, rpc::LatencyBuckets())),
      batch_size(prometheus::BuildHistogram()
                     .Name("layerproof_batch_size")
                     .Help("Sequences that sampled a token in one engine step.")
                     .Register(registry)
                     .Add({}, rpc::SizeBuckets())),
      requests_(prometheus::BuildCounter()
                    .Name("layerproof_requests_total")
                    .Help("Generation requests finished, by API and status "
                          "code.")
                    .Register(registry)) {}

void ProverMetrics::CountRequest(const char* api, absl::StatusCode code) {
  requests_.Add({{"api", api}, {"code", absl::StatusCodeToString(code)}})
      .Increment();
}

}  // namespace layerproof::prover
