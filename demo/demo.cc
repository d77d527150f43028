#include "demo/demo.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <thread>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "cli/engine_setup.h"
#include "cli/progress.h"
#include "demo/demo_artifacts.h"
#include "demo/demo_cluster.h"
#include "demo/demo_load.h"
#include "demo/demo_logs.h"
#include "demo/demo_setup.h"
#include "demo/demo_summary.h"
#include "store/crypto.h"
#include "store/status.h"

namespace layerproof::demo {
namespace {

namespace fs = std::filesystem;
using cli::ProgressBar;

// Waits until every commitment the provers made is logged and every drawn
// audit has a verdict, with a bar of the audits.
absl::Status WaitForAudits(DemoCluster& cluster, int requests,
                           const StopSignals& signals, bool quiet) {
  // Audits run along with the load; what is left takes far less than this.
  const absl::Time deadline =
      absl::Now() + absl::Seconds(120) + absl::Milliseconds(500) * requests;
  const auto expired = [&] {
    return absl::Now() > deadline || signals.stop().load();
  };
  uint64_t committed = 0;
  while (true) {
    committed = 0;
    size_t pending = 0;
    for (const auto& p : cluster.provers()) {
      committed += p->node->committed_requests();
      pending += p->node->pending_submissions();
    }
    if (pending == 0 &&
        cluster.verifier().counters().commitments_logged >= committed) {
      break;
    }
    if (expired()) return absl::DeadlineExceededError("commitments not logged");
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  verifier::VerifierCounters c = cluster.verifier().counters();
  ProgressBar bar("audits", static_cast<int64_t>(c.audits_drawn), "done",
                  quiet);
  while (true) {
    c = cluster.verifier().counters();
    const uint64_t failed =
        c.verdicts[v1::FAIL_MISMATCH] + c.verdicts[v1::FAIL_OPENING] +
        c.verdicts[v1::FAIL_TIMEOUT] + c.verdicts[v1::FAIL_SIGNATURE] +
        c.verdicts[v1::FAIL_MODEL];
    const std::string suffix = std::to_string(c.verdicts[v1::PASS]) +
                               " PASS, " + std::to_string(failed) + " FAIL";
    bar.Update(static_cast<int64_t>(c.audits_done), suffix);
    if (c.audits_done + c.audit_errors >= c.audits_drawn) {
      bar.Finish(suffix);
      break;
    }
    if (expired()) return absl::DeadlineExceededError("audits not finished");
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  if (c.audit_errors > 0) {
    return absl::InternalError(std::to_string(c.audit_errors) +
                               " audits ended in a verifier error");
  }
  return cluster.verifier().WaitIdle(absl::Seconds(30));
}

}  // namespace

int RunDemo(const DemoConfig& config,
            const std::function<int(const std::string&)>& usage) {
  const bool json = config.json;
  const bool quiet = json;
  const std::string& out = config.out;
  // What the nodes load: the HF directory, or its quantized GGUF.
  const std::string model_dir =
      config.quant ? DemoQuantModelPath(config.model, *config.quant)
                   : config.model;

  StopSignals signals;  // before any thread is made
  const absl::Time start = absl::Now();
  DemoOutcome o;
  o.out_dir = out;
  o.model_dir = model_dir;
  o.audit_rate = config.audit_rate;
  o.layers_per_audit = config.layers_per_audit;
  o.tamper_layer = config.tamper_layer;
  o.requests = config.requests;
  o.concurrency = config.concurrency;
  const auto fail = [&](const char* what, const absl::Status& s) {
    std::fprintf(stderr, "layerproof: demo: %s: %s\n", what,
                 s.ToString().c_str());
    return 1;
  };
  if (absl::Status s = PrepareDemoOut(out); !s.ok()) {
    if (absl::IsFailedPrecondition(s)) return usage(std::string(s.message()));
    return fail("--out", s);
  }
  // The nodes' JSON log lines go to OUT/nodes.log (until the return).
  const std::string node_log = (fs::path(out) / "nodes.log").string();
  const std::unique_ptr<NodeLogRedirect> logs =
      NodeLogRedirect::Start(node_log);
  if (absl::Status s = EnsureDemoModel(config.model, quiet); !s.ok()) {
    return fail("model", s);
  }
  if (config.quant) {
    if (absl::Status s =
            EnsureDemoQuantModel(config.model, *config.quant, quiet);
        !s.ok()) {
      return fail("--quant", s);
    }
  }
  // The verifier's engine: the whole context, as `serve verifier`.
  ProgressBar load_bar("loading model", 1, "", quiet);
  auto loaded = cli::LoadEngine(model_dir, config.verifier_backend,
                                config.threads, /*full_context=*/true);
  if (!loaded.ok()) return fail("model", store::ToAbslStatus(loaded.status()));
  // The provers' kernels: the verifier's, unless --verifier-backend differs.
  auto prover_backend = ResolveBackend(config.backend, config.threads);
  if (!prover_backend.ok()) {
    return fail("--backend", store::ToAbslStatus(prover_backend.status()));
  }
  o.backend = std::string((*prover_backend)->name());
  o.verifier_backend = std::string(loaded->backend->name());
  load_bar.Update(1);
  load_bar.Finish("provers on " + o.backend + ", verifier on " +
                  o.verifier_backend);
  const auto& model_config = loaded->model->config();
  o.num_layers = static_cast<uint32_t>(model_config.num_layers);
  // The policy caps s at L (verifier/audit_policy.h); say what it does.
  o.layers_per_audit = std::min(o.layers_per_audit, o.num_layers);
  const std::string digest(loaded->model->digest().root.begin(),
                           loaded->model->digest().root.end());
  o.model_digest = store::HexEncode(store::AsBytes(digest));
  if (o.tamper_layer >= o.num_layers) {
    return usage("--tamper-layer: got " + std::to_string(o.tamper_layer) +
                 ", want 1.." + std::to_string(o.num_layers - 1));
  }
  o.seconds["setup"] = absl::ToDoubleSeconds(absl::Now() - start);

  DemoClusterOptions copts;
  copts.out_dir = out;
  copts.model = loaded->model.get();
  copts.verifier_engine = loaded->engine.get();
  copts.backend = *prover_backend;
  copts.policy = {config.audit_rate, o.layers_per_audit};
  copts.audit_seed = config.audit_seed;
  copts.tamper_layer = o.tamper_layer;
  copts.max_new_tokens = config.max_new_tokens;
  ProgressBar nodes_bar("starting nodes", 4, "", quiet);
  copts.progress = [&](int done, int, const std::string& step) {
    nodes_bar.Update(done, step);
  };
  auto cluster_or = DemoCluster::Start(copts);
  if (!cluster_or.ok()) return fail("start", cluster_or.status());
  nodes_bar.Finish("mTLS, certificates in " + out + "/tls");
  DemoCluster& cluster = **cluster_or;
  if (!json) {
    std::printf(
        "verifier-1 %s  prover-1 %s (honest)  prover-2 %s (tampers "
        "h^%u: DEMO-ONLY fault)\n",
        cluster.verifier_address().c_str(),
        cluster.provers()[0]->address().c_str(),
        cluster.provers()[1]->address().c_str(), o.tamper_layer);
    for (const std::string& line : DetectionLines(o)) {
      std::printf("  %s\n", line.c_str());
    }
    std::fflush(stdout);
  }

  // The load, with the audits as they come in.
  const absl::Time load_start = absl::Now();
  ProgressBar requests_bar("requests", o.requests, "done", quiet);
  DemoLoadOptions lopts;
  lopts.requests = o.requests;
  lopts.concurrency = o.concurrency;
  lopts.max_new_tokens = config.max_new_tokens;
  lopts.vocab = static_cast<int32_t>(model_config.vocab_size);
  lopts.stop = &signals.stop();
  const std::vector<DemoRequest> results =
      RunDemoLoad(cluster, lopts, [&](const DemoLoadProgress& p) {
        const verifier::VerifierCounters c = cluster.verifier().counters();
        requests_bar.Update(p.done, "sent " + std::to_string(p.sent) + ", " +
                                        std::to_string(p.failed) +
                                        " failed; audits " +
                                        std::to_string(c.audits_done) + ": " +
                                        VerdictCounts(c));
      });
  requests_bar.Finish();
  o.seconds["load"] = absl::ToDoubleSeconds(absl::Now() - load_start);
  for (const auto& p : cluster.provers()) {
    DemoProverTally t;
    t.id = p->prover_id;
    t.tampers = DemoCluster::Tampers(*p);
    t.commitments = p->node->committed_requests();
    o.provers.push_back(t);
  }
  for (const DemoRequest& r : results) {
    if (r.ok) ++o.requests_ok;
    if (r.promise) ++o.promises;
    o.output_tokens += r.output_tokens;
    for (DemoProverTally& t : o.provers) {
      if (t.id != r.prover_id) continue;
      ++t.requests;
      if (r.ok) ++t.receipts_ok;
    }
    if (!r.ok && o.errors.size() < 5) {
      o.errors.push_back(r.prover_id + " request: " + r.error);
    }
  }

  const absl::Time audit_start = absl::Now();
  if (absl::Status s = WaitForAudits(cluster, o.requests, signals, quiet);
      !s.ok()) {
    o.errors.push_back("waiting for the audits: " + s.ToString());
  }
  o.seconds["audits"] = absl::ToDoubleSeconds(absl::Now() - audit_start);
  auto verdicts = ListDemoVerdicts(cluster);
  if (!verdicts.ok()) {
    o.errors.push_back(verdicts.status().ToString());
  } else {
    TallyVerdicts(results, *verdicts, o);
  }
  const verifier::VerifierCounters c = cluster.verifier().counters();
  o.audits_drawn = c.audits_drawn;
  o.commitments_logged = c.commitments_logged;

  // The auditor's steps on prover-2's first failed audit.
  const absl::Time artifacts_start = absl::Now();
  const DemoProverTally& cheater = o.provers[1];
  if (!signals.stop() && !cheater.failed_request.empty()) {
    LocaliseFault(cluster, cheater.failed_request, o);
    WriteAndCheckEvidence(cluster, *loaded->engine, digest,
                          cheater.failed_request, cheater.failed_verdict_leaf,
                          quiet, o);
  } else if (!signals.stop()) {
    o.errors.push_back(
        "no drawn audit of prover-2 found a mismatch: nothing to localise");
  }
  if (!signals.stop()) {
    WriteDemoReport(cluster, absl::ToUnixNanos(start - absl::Seconds(1)), o);
  }
  o.log_size = cluster.verifier().counters().log_size;
  o.commitments_logged = cluster.verifier().counters().commitments_logged;
  o.seconds["artifacts"] = absl::ToDoubleSeconds(absl::Now() - artifacts_start);
  o.seconds["total"] = absl::ToDoubleSeconds(absl::Now() - start);
  if (signals.stop()) o.errors.push_back("interrupted by a signal");

  const nlohmann::json summary = DemoSummaryJson(o);
  std::ofstream(fs::path(out) / "summary.json") << summary.dump(2) << "\n";
  if (json) {
    std::printf("%s\n", summary.dump(2).c_str());
    std::fflush(stdout);
  } else {
    PrintDemoSummary(o);
  }
  if (!json && logs != nullptr) {
    std::printf("node logs: %s (%ld lines)\n", node_log.c_str(), logs->lines());
  }
  if (config.keep_running && !signals.stop()) {
    PrintGrpcurl(json ? stderr : stdout, cluster, out);
    signals.Wait();
  }
  if (absl::Status s = cluster.Shutdown(); !s.ok()) {
    return fail("shutdown", s);
  }
  if (!json) std::fprintf(stderr, "all nodes shut down cleanly\n");
  return o.ok() ? 0 : 1;
}

}  // namespace layerproof::demo
