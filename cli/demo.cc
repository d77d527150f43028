// `layerproof demo` (demo/demo.h): its flags. The demo itself lives in
// demo/.

#include "demo/demo.h"

#include <cstdio>
#include <string>
#include <vector>

#include "cli/flags.h"
#include "cli/print_error.h"
#include "cli/store_commands.h"
#include "kernels/dispatch.h"
#include "kernels/model/quantize_model.h"

namespace layerproof::cli {
namespace {

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
    "  --audit-seed TEXT      draw the audits from TEXT, not fresh "
    "randomness,\n"
    "                         so that a run is reproducible (a real verifier\n"
    "                         never does: predictable draws let a prover\n"
    "                         know which requests escape audit)\n"
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
  if (!error.empty()) PrintError("layerproof", error);
  std::fputs(kDemoUsage, stderr);
  return 2;
}

}  // namespace

int RunDemo(const std::vector<std::string>& args) {
  Flags flags(
      {"--out", "--model", "--requests", "--concurrency", "--max-new-tokens",
       "--audit-rate", "--layers-per-audit", "--tamper-layer", "--threads",
       "--backend", "--verifier-backend", "--quant", "--audit-seed"},
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
  demo::DemoConfig config;
  config.json = flags.Has("--json");
  config.keep_running = flags.Has("--keep-running");
  config.out = flags.Get("--out", config.out);
  config.model = flags.Get("--model", config.model);
  if (flags.Has("--quant")) {
    config.quant = kernels::model::QuantTypeFromName(flags.Get("--quant"));
    if (!config.quant) {
      return DemoUsage("--quant: got \"" + flags.Get("--quant") + "\", want " +
                       kernels::model::kQuantTypeNames);
    }
  }
  config.requests = static_cast<int>(*requests);
  config.concurrency = static_cast<int>(*concurrency);
  config.max_new_tokens = static_cast<uint32_t>(*max_new);
  config.audit_rate = *rate;
  config.layers_per_audit = static_cast<uint32_t>(*layers);
  config.audit_seed = flags.Get("--audit-seed");
  config.tamper_layer = static_cast<uint32_t>(*tamper);
  config.threads = static_cast<int>(*threads);
  config.backend = flags.Get("--backend");
  config.verifier_backend =
      flags.Get("--verifier-backend", flags.Get("--backend"));
  return demo::RunDemo(config, DemoUsage);
}

}  // namespace layerproof::cli
