// `layerproof serve prover|verifier|auditor`: the usage and the dispatch.
// Each node's flags are mapped in serve_prover.cc, serve_verifier.cc and
// serve_auditor.cc; what they share is in serve_common.h.
#include <cstdio>
#include <string>
#include <vector>

#include "cli/print_error.h"
#include "cli/serve_common.h"
#include "cli/store_commands.h"

namespace layerproof::cli {
namespace {

constexpr char kServeUsage[] =
    "usage: layerproof serve prover|verifier|auditor [flags]\n"
    "\n"
    "layerproof serve prover --model DIR --key KEY --listen ADDR\n"
    "    --verifier ADDR --log-key FILE --journal DIR [--verifier-id ID]\n"
    "    [--prover-id ID] [--backend B]\n"
    "    [--threads N] [--max-sequences N] [--max-new-tokens N]\n"
    "    [--receipt-wait-ms N] [--retention-hours N] [--max-opening-mb N]\n"
    "    [--http-listen ADDR [--served-model-name NAME] [--api-keys FILE]\n"
    "     [--http-max-in-flight N]] [--opening-listen ADDR]\n"
    "  Serves Inference and Opening (Opening alone on --opening-listen when\n"
    "  given, so that a network policy can keep all but auditors off it);\n"
    "  commits to every request and submits\n"
    "  the commitments to the verifier's log at --verifier. Every checkpoint\n"
    "  the log sends must be signed by --log-key (the verifier's public key,\n"
    "  PEM; key name and origin layerproof/ID from --verifier-id, default\n"
    "  verifier-1) and extend the last one before a client sees it.\n"
    "  --http-listen also serves the OpenAI-compatible HTTP API there\n"
    "  (docs/openai-api.md), with the --tls-cert/--tls-key of the gRPC\n"
    "  server (plaintext with --insecure, loopback only); requests name the\n"
    "  model NAME (default: the --model directory's name); --api-keys FILE\n"
    "  ({\"<key>\": \"<client>\"}) requires Authorization: Bearer <key>.\n"
    "\n"
    "layerproof serve verifier --model DIR --key KEY --db DIR --listen ADDR\n"
    "    --provers FILE [--verifier-id ID] [--audit-rate A]\n"
    "    [--layers-per-audit S] [--audit-threads N] [--opening-timeout-ms N]\n"
    "    [--backend B] [--threads N]\n"
    "    [--remote-auditors [--audit-lease-seconds N]]\n"
    "    [--submit-listen ADDR [--audit-work-listen ADDR]]\n"
    "  Serves Log, Audit and Report; logs commitments from the provers in "
    "FILE\n"
    "  (docs/protocol.md) and audits a random fraction A of them. With\n"
    "  --remote-auditors it also serves AuditWork and leases each audit's\n"
    "  re-execution to `serve auditor` workers (a lease not renewed in N s,\n"
    "  default 60, goes to another); it still signs every verdict.\n"
    "  --submit-listen serves Log (with Submit) there and refuses Submit on\n"
    "  --listen; --audit-work-listen serves AuditWork alone there: listeners\n"
    "  a network policy can hold to provers and auditors.\n"
    "\n"
    "layerproof serve auditor --verifier ADDR --model DIR [--worker-id ID]\n"
    "    [--concurrency N] [--backend B] [--threads N]\n"
    "  A stateless auditor worker: leases audits from the verifier, opens\n"
    "  them at the provers, re-executes them and reports the outcome\n"
    "  (docs/operations.md \"Auditors\"). TLS: --peer-ca, --peer-name,\n"
    "  --client-cert/--client-key (role auditor), or --insecure.\n"
    "\n"
    "Metrics (both; docs/operations.md): --metrics-listen ADDR serves\n"
    "  Prometheus metrics on GET /metrics there (plaintext: counts and\n"
    "  durations, never request contents or keys).\n"
    "\n"
    "Transport (both; docs/security.md):\n"
    "  --tls-cert FILE --tls-key FILE  this server's certificate and key\n"
    "  --tls-ca FILE       require client certificates signed by this CA\n"
    "  --roles FILE        client certificate names -> roles (JSON)\n"
    "  --peer-ca FILE      CA of the servers this node calls\n"
    "  --peer-name NAME    name to verify their certificates against\n"
    "  --client-cert FILE --client-key FILE  certificate this node presents\n"
    "  --insecure          plaintext everywhere; --listen must be loopback\n"
    "\n"
    "Callers without a client certificate (both; docs/security.md):\n"
    "  --peer-rate N       calls per second per peer address (default 500)\n"
    "  --peer-burst N      calls at once before the rate applies (1000)\n"
    "  --peer-in-flight N  calls admitted and not finished per peer (256)\n"
    "On start one JSON line {\"event\":\"listening\",\"node\":...} per server\n"
    "goes to stdout (prover-http, prover-metrics, verifier-metrics), the\n"
    "gRPC server's (node prover or verifier) last.\n"
    "SIGINT or SIGTERM shuts down gracefully. Exit 0 after a clean\n"
    "shutdown, 1 on a runtime error, 2 on a usage error.\n";

}  // namespace

int ServeUsage(const std::string& error) {
  if (!error.empty()) PrintError("layerproof", error);
  std::fputs(kServeUsage, stderr);
  return 2;
}

int ServeHelp() {
  std::fputs(kServeUsage, stdout);
  return 0;
}

int RunServe(const std::vector<std::string>& args) {
  if (args.empty()) return ServeUsage("serve needs prover or verifier");
  const std::vector<std::string> rest(args.begin() + 1, args.end());
  if (args[0] == "prover") return RunServeProver(rest);
  if (args[0] == "verifier") return RunServeVerifier(rest);
  if (args[0] == "auditor") return RunServeAuditor(rest);
  if (args[0] == "--help") return ServeHelp();
  return ServeUsage("unknown serve target \"" + args[0] + "\"");
}

}  // namespace layerproof::cli
