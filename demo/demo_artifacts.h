// The auditor's steps of `layerproof demo`, over mutual TLS as `auditor-1`
// (the auditor role): fault localisation (an all-layers RequestAudit), the
// signed compliance report (Report.GetComplianceReport, written as
// report.json and report.html and verified against the verifier's key),
// and an evidence bundle (Audit.GetEvidence, written as
// evidence-<request id>.bundle and re-verified offline with the keys
// from the output folder, as a third party would). Each step records its
// result, and any error, in the DemoOutcome; none throws or aborts.
// Thread safety: one call at a time per DemoOutcome.
#ifndef LAYERPROOF_DEMO_DEMO_ARTIFACTS_H_
#define LAYERPROOF_DEMO_DEMO_ARTIFACTS_H_

#include <cstdint>
#include <string>

#include "demo/demo_cluster.h"
#include "demo/demo_summary.h"
#include "kernels/model/engine.h"

namespace layerproof::demo {

// Audits `request_id` on every layer and records the first diverging one
// (localised_*); localised_right when it is the tampered layer.
void LocaliseFault(DemoCluster& cluster, const std::string& request_id,
                   DemoOutcome& outcome);

// The compliance report over [from_unix_nanos, now + 1 s).
void WriteDemoReport(DemoCluster& cluster, int64_t from_unix_nanos,
                     DemoOutcome& outcome);

// Fetches the evidence of the verdict at `verdict_leaf` on `request_id`,
// writes it, and verifies it on `engine` (whose model digest is
// `model_digest`, 32 bytes), printing each check unless `quiet`.
void WriteAndCheckEvidence(DemoCluster& cluster,
                           const kernels::model::Engine& engine,
                           const std::string& model_digest,
                           const std::string& request_id, uint64_t verdict_leaf,
                           bool quiet, DemoOutcome& outcome);

}  // namespace layerproof::demo

#endif  // LAYERPROOF_DEMO_DEMO_ARTIFACTS_H_
