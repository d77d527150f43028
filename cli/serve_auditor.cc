// `layerproof serve auditor`: a stateless auditor worker
// (verifier/auditor_worker.h) from flags, until SIGINT or SIGTERM.
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "cli/engine_setup.h"
#include "cli/peer_tls.h"
#include "cli/serve_common.h"
#include "rpc/metrics.h"
#include "store/status.h"
#include "verifier/auditor_worker.h"

namespace layerproof::cli {

int RunServeAuditor(const std::vector<std::string>& args) {
  Flags flags(With({"--verifier", "--model", "--worker-id", "--concurrency",
                    "--backend", "--threads", "--metrics-listen"},
                   kPeerTlsFlags),
              {"--insecure", "--help"});
  std::string error;
  if (!flags.Parse(args, &error)) return ServeUsage(error);
  if (flags.Has("--help")) {
    return ServeHelp();
  }
  if (const std::string missing = MissingFlag(flags, {"--verifier", "--model"});
      !missing.empty()) {
    return ServeUsage(missing);
  }
  const auto concurrency = flags.GetInt("--concurrency", 1, 1, 256, &error);
  const auto threads = flags.GetInt("--threads", 0, 0, 1024, &error);
  if (!concurrency || !threads) return ServeUsage(error);
  const absl::StatusOr<rpc::TlsOptions> tls = ParsePeerTls(flags);
  if (!tls.ok()) return ServeUsage(std::string(tls.status().message()));
  const sigset_t stop_signals = BlockStopSignals();
  auto loaded = LoadEngine(flags.Get("--model"), flags.Get("--backend"),
                           static_cast<int>(*threads));
  if (!loaded.ok())
    return Fail("--model", store::ToAbslStatus(loaded.status()));
  verifier::AuditorWorkerOptions options;
  options.worker_id = flags.Get("--worker-id", "auditor-1");
  options.verifier_address = flags.Get("--verifier");
  options.verifier_tls = *tls;
  options.prover_tls = *tls;
  options.engine = loaded->engine.get();
  options.concurrency = static_cast<int>(*concurrency);
  auto worker = verifier::AuditorWorker::Start(std::move(options));
  if (!worker.ok()) return Fail("serve auditor", worker.status());
  rpc::NodeMetrics node_metrics;
  verifier::AuditorWorker* w = worker->get();
  node_metrics.sampled().Add(
      "layerproof_auditor_audits_completed_total",
      "Audits this worker completed under a current lease.",
      rpc::SampledMetrics::Type::kCounter,
      [w] { return double(w->completed()); });
  node_metrics.sampled().Add(
      "layerproof_auditor_completions_refused_total",
      "Completions the verifier refused (the lease had lapsed).",
      rpc::SampledMetrics::Type::kCounter,
      [w] { return double(w->refused()); });
  auto metrics = StartMetrics(flags, "auditor-metrics", node_metrics);
  if (!metrics.ok()) return Fail("--metrics-listen", metrics.status());
  std::printf(
      "{\"event\":\"listening\",\"node\":\"auditor\",\"address\":\"%s\"}\n",
      flags.Get("--verifier").c_str());
  std::fflush(stdout);
  PrintStopping("auditor", WaitForSignal(stop_signals));
  // Running audits finish and are reported; leases not yet taken stay with
  // the verifier for the other workers.
  (*worker)->Stop();
  metrics->reset();
  return 0;
}

}  // namespace layerproof::cli
