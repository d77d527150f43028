// The verifier's Prometheus metrics (docs/operations.md "Metrics") counted
// where they happen: the latency of each commitment's append (signature
// checks, the synced write), when the log last signed a checkpoint, the
// re-execution time of each audit and the activation bytes its opening
// carried. Log size, audits drawn, verdicts by outcome and the backlog are
// sampled from VerifierNode::counters() at scrape time (verifier_node.cc).
// Thread safety: prometheus-cpp's metrics and the atomic are thread-safe.
#ifndef LAYERPROOF_VERIFIER_VERIFIER_METRICS_H_
#define LAYERPROOF_VERIFIER_VERIFIER_METRICS_H_

#include <prometheus/counter.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <atomic>
#include <cstdint>

namespace layerproof::verifier {

struct VerifierMetrics {
  explicit VerifierMetrics(prometheus::Registry& registry);

  prometheus::Histogram& log_append_seconds;
  prometheus::Histogram& audit_reexecution_seconds;
  prometheus::Counter& audit_opening_bytes;
  // Unix nanoseconds of the last checkpoint the log signed (0: none yet).
  std::atomic<int64_t> last_checkpoint_unix_nanos{0};
};

}  // namespace layerproof::verifier

#endif  // LAYERPROOF_VERIFIER_VERIFIER_METRICS_H_
