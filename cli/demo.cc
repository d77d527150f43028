// `layerproof demo`: the whole protocol on one machine (DESIGN §8). It
// synthesises the `small` model when absent, starts a verifier and two
// provers in this process on loopback over mutual TLS (cli/demo_cluster.h;
// prover-2 carries the DEMO-ONLY fault of cli/demo_fault.h), drives a
// client load whose receipts the clients check (cli/demo_load.h), waits for
// every drawn audit, localises the tampered layer with an all-layers
// audit, writes the signed report and an evidence bundle and verifies both
// (cli/demo_artifacts.h), prints a summary (cli/demo_summary.h) and shuts
// everything down in the order `layerproof serve` does.
//
// Exit 0 only when the honest prover is all PASS, the tamperer is caught
// and localised at the tampered layer, and the report and the bundle
// verify; 1 otherwise or on a runtime error; 2 on a usage error.

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <thread>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "cli/demo_artifacts.h"
#include "cli/demo_cluster.h"
#include "cli/demo_load.h"
#include "cli/demo_logs.h"
#include "cli/demo_setup.h"
#include "cli/demo_summary.h"
#include "cli/engine_setup.h"
#include "cli/flags.h"
#include "cli/progress.h"
#include "cli/store_commands.h"
#include "kernels/dispatch.h"
#include "kernels/model/quantize_model.h"
#include "kernels/model/synth.h"
#include "store/crypto.h"
#include "store/status.h"

namespace layerproof::cli {
namespace {

namespace fs = std::filesystem;

constexpr char kDemoUsage[] =
    "usage: layerproof demo [flags]\n"
    "  A verifier and two provers in this process on 127.0.0.1, over mutual\n"
    "  TLS with a throwaway CA; prover-2 tampers with one layer (a demo-only\n"
    "  fault). Clients send a load and check their receipts, the verifier\n"
    "  audits a random fraction, the tampered layer is localised, and a\n"
    "  signed report and an evidence bundle are written and verified.\n"
    "\n"
    "  --out DIR              output folder (default layerproof-demo)\n"
    "  --model DIR            model folder; the small preset (seed 1) is\n"
    "                         synthesised there when absent (default\n"
    "                         .layerproof/models/small-seed1)\n"
    "  --quant T              serve the model quantized: q8_0, q4_0, q4_k or\n"
    "                         q6_k (`model quantize` writes DIR-T/model.gguf\n"
    "                         once; provers and verifier load that file)\n"
    "  --requests N           client requests, half to each prover (60)\n"
    "  --concurrency N        client threads (8)\n"
    "  --max-new-tokens N     tokens per request (24)\n"
    "  --audit-rate A         fraction of commitments audited (0.3)\n"
    "  --layers-per-audit S   blocks re-executed per audit (4)\n"
    "  --tamper-layer L       the block prover-2 tampers with, 1..layers-1 "
    "(3)\n"
    "  --threads N            kernel threads (0: the backend's default)\n"
    "  --backend B            kernel backend (default: the fastest)\n"
    "  --verifier-backend B   the verifier's backend, e.g. ref: audits then\n"
    "                         re-execute on other kernels (default: "
    "--backend)\n"
    "  --keep-running         after the summary, serve until SIGINT/SIGTERM\n"
    "                         and print grpcurl commands to try\n"
    "  --json                 the summary as one JSON object on stdout\n"
    "Exit 0 when the honest prover is all PASS, the tamperer is caught at\n"
    "the tampered layer and the report and the bundle verify; 1 otherwise;\n"
    "2 on a usage error.\n";

int DemoUsage(const std::string& error) {
  if (!error.empty()) std::fprintf(stderr, "layerproof: %s\n", error.c_str());
  std::fputs(kDemoUsage, stderr);
  return 2;
}

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

int RunDemo(const std::vector<std::string>& args) {
  Flags flags(
      {"--out", "--model", "--requests", "--concurrency", "--max-new-tokens",
       "--audit-rate", "--layers-per-audit", "--tamper-layer", "--threads",
       "--backend", "--verifier-backend", "--quant"},
      {"--keep-running", "--json", "--help"});
  std::string error;
  if (!flags.Parse(args, &error)) return DemoUsage(error);
  if (flags.Has("--help")) {
    std::fputs(kDemoUsage, stdout);
    return 0;
  }
  const auto requests = flags.GetInt("--requests", 60, 1, 100000, &error);
  const auto concurrency = flags.GetInt("--concurrency", 8, 1, 256, &error);
  const auto max_new = flags.GetInt("--max-new-tokens", 24, 1, 256, &error);
  const auto rate = flags.GetDouble("--audit-rate", 0.3, &error);
  const auto layers = flags.GetInt("--layers-per-audit", 4, 1, 1024, &error);
  const auto tamper = flags.GetInt("--tamper-layer", 3, 1, 1023, &error);
  const auto threads = flags.GetInt("--threads", 0, 0, 1024, &error);
  if (!requests || !concurrency || !max_new || !rate || !layers || !tamper ||
      !threads) {
    return DemoUsage(error);
  }
  if (*rate <= 0 || *rate > 1) {
    return DemoUsage("--audit-rate: got " + flags.Get("--audit-rate") +
                     ", want a fraction in (0, 1]");
  }
  for (const char* flag : {"--backend", "--verifier-backend"}) {
    if (!flags.Has(flag)) continue;
    if (auto kind = kernels::ParseBackendKind(flags.Get(flag)); !kind.ok()) {
      return DemoUsage(std::string(flag) + ": got \"" + flags.Get(flag) +
                       "\", want ref, avx2, avx512, neon, cuda or auto");
    }
  }
  const bool json = flags.Has("--json");
  const bool quiet = json;
  const std::string out = flags.Get("--out", "layerproof-demo");
  const std::string hf_dir =
      flags.Get("--model", ".layerproof/models/small-seed1");
  std::optional<kernels::DType> quant;
  if (flags.Has("--quant")) {
    quant = kernels::model::QuantTypeFromName(flags.Get("--quant"));
    if (!quant) {
      return DemoUsage("--quant: got \"" + flags.Get("--quant") + "\", want " +
                       kernels::model::kQuantTypeNames);
    }
  }
  // What the nodes load: the HF directory, or its quantized GGUF.
  const std::string model_dir =
      quant ? DemoQuantModelPath(hf_dir, *quant) : hf_dir;

  StopSignals signals;  // before any thread is made
  const absl::Time start = absl::Now();
  DemoOutcome o;
  o.out_dir = out;
  o.model_dir = model_dir;
  o.audit_rate = *rate;
  o.layers_per_audit = static_cast<uint32_t>(*layers);
  o.tamper_layer = static_cast<uint32_t>(*tamper);
  o.requests = static_cast<int>(*requests);
  o.concurrency = static_cast<int>(*concurrency);
  const auto fail = [&](const char* what, const absl::Status& s) {
    std::fprintf(stderr, "layerproof: demo: %s: %s\n", what,
                 s.ToString().c_str());
    return 1;
  };
  if (absl::Status s = PrepareDemoOut(out); !s.ok()) {
    if (absl::IsFailedPrecondition(s))
      return DemoUsage(std::string(s.message()));
    return fail("--out", s);
  }
  // The nodes' JSON log lines go to OUT/nodes.log (until the return).
  const std::string node_log = (fs::path(out) / "nodes.log").string();
  const std::unique_ptr<NodeLogRedirect> logs =
      NodeLogRedirect::Start(node_log);
  if (absl::Status s = EnsureDemoModel(hf_dir, quiet); !s.ok()) {
    return fail("model", s);
  }
  if (quant) {
    if (absl::Status s = EnsureDemoQuantModel(hf_dir, *quant, quiet); !s.ok()) {
      return fail("--quant", s);
    }
  }
  // The verifier's engine: the whole context, as `serve verifier`.
  ProgressBar load_bar("loading model", 1, "", quiet);
  auto loaded = LoadEngine(
      model_dir, flags.Get("--verifier-backend", flags.Get("--backend")),
      static_cast<int>(*threads), /*full_context=*/true);
  if (!loaded.ok()) return fail("model", store::ToAbslStatus(loaded.status()));
  // The provers' kernels: the verifier's, unless --verifier-backend differs.
  auto prover_backend = ResolveBackend(flags.Get("--backend"), *threads);
  if (!prover_backend.ok()) {
    return fail("--backend", store::ToAbslStatus(prover_backend.status()));
  }
  o.backend = std::string((*prover_backend)->name());
  o.verifier_backend = std::string(loaded->backend->name());
  load_bar.Update(1);
  load_bar.Finish("provers on " + o.backend + ", verifier on " +
                  o.verifier_backend);
  const auto& config = loaded->model->config();
  o.num_layers = static_cast<uint32_t>(config.num_layers);
  // The policy caps s at L (verifier/audit_policy.h); say what it does.
  o.layers_per_audit = std::min(o.layers_per_audit, o.num_layers);
  const std::string digest(loaded->model->digest().root.begin(),
                           loaded->model->digest().root.end());
  o.model_digest = store::HexEncode(store::AsBytes(digest));
  if (o.tamper_layer >= o.num_layers) {
    return DemoUsage("--tamper-layer: got " + std::to_string(o.tamper_layer) +
                     ", want 1.." + std::to_string(o.num_layers - 1));
  }
  o.seconds["setup"] = absl::ToDoubleSeconds(absl::Now() - start);

  DemoClusterOptions copts;
  copts.out_dir = out;
  copts.model = loaded->model.get();
  copts.verifier_engine = loaded->engine.get();
  copts.backend = *prover_backend;
  copts.policy = {*rate, o.layers_per_audit};
  copts.tamper_layer = o.tamper_layer;
  copts.max_new_tokens = static_cast<uint32_t>(*max_new);
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
  lopts.max_new_tokens = static_cast<uint32_t>(*max_new);
  lopts.vocab = static_cast<int32_t>(config.vocab_size);
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
    t.id = p->id;
    t.tampers = p->tampers;
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
  if (flags.Has("--keep-running") && !signals.stop()) {
    PrintGrpcurl(json ? stderr : stdout, cluster, out);
    signals.Wait();
  }
  if (absl::Status s = cluster.Shutdown(); !s.ok()) {
    return fail("shutdown", s);
  }
  if (!json) std::fprintf(stderr, "all nodes shut down cleanly\n");
  return o.ok() ? 0 : 1;
}

}  // namespace layerproof::cli
