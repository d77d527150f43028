#include "verifier/verifier_metrics.h"

#include <prometheus/family.h>

#include "rpc/metrics.h"

namespace layerproof::verifier {

VerifierMetrics::VerifierMetrics(prometheus::Registry& registry)
    : log_append_seconds(
          prometheus::BuildHistogram()
              .Name("layerproof_log_append_seconds")
              .Help("Appending one submitted commitment: checks and the "
                    "synced write of its batch.")
              .Register(registry)
              .Add({}, rpc::LatencyBuckets())),
      audit_reexecution_seconds(
          prometheus::BuildHistogram()
              .Name("layerproof_audit_reexecution_seconds")
              .Help("One audit: the opening and the re-execution of its "
                    "layers, to a verdict.")
              .Register(registry)
              .Add({}, rpc::LatencyBuckets())),
      audit_opening_bytes(
          prometheus::BuildCounter()
              .Name("layerproof_audit_opening_bytes_total")
              .Help("Activation bytes received in audits' openings.")
              .Register(registry)
              .Add({})) {}

}  // namespace layerproof::verifier
