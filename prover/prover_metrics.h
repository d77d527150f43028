// The prover's Prometheus metrics (docs/operations.md "Metrics"), counted
// where they happen: requests by API and status code (gRPC Generate and
// the HTTP API), prompt and output tokens, time to first token and per
// output token, and the engine's batch size per step. Queue depths are
// sampled at scrape time (prover_node.cc).
// Thread safety: prometheus-cpp's metrics are thread-safe.
#ifndef LAYERPROOF_PROVER_PROVER_METRICS_H_
#define LAYERPROOF_PROVER_PROVER_METRICS_H_

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <string>

#include "absl/status/status.h"

namespace layerproof::prover {

class ProverMetrics {
 public:
  explicit ProverMetrics(prometheus::Registry& registry);

  // One finished request of `api` ("grpc" or "http") with `code`.
  void CountRequest(const char* api, absl::StatusCode code);

  prometheus::Counter& prompt_tokens;
  prometheus::Counter& output_tokens;
  prometheus::Histogram& time_to_first_token;
  prometheus::Histogram& time_per_output_token;
  prometheus::Histogram& batch_size;

 private:
  prometheus::Family<prometheus::Counter>& requests_;
};

}  // namespace layerproof::prover

#endif  // LAYERPROOF_PROVER_PROVER_METRICS_H_
