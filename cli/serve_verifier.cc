// `layerproof serve verifier`: flags to verifier::VerifierOptions; the node
// serves Log, Audit and Report (and AuditWork with --remote-auditors) until
// SIGINT or SIGTERM, on one listener or with submissions and audit work on
// listeners of their own.
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "cli/engine_setup.h"
#include "cli/serve_common.h"
#include "rpc/server.h"
#include "store/status.h"
#include "verifier/verifier_node.h"

namespace layerproof::cli {
namespace {

// Why the listener flags do not fit together, or "" (checked before
// anything is created).
std::string ListenerFlagsError(const Flags& flags) {
  if (!flags.Has("--audit-work-listen")) return "";
  if (!flags.Has("--submit-listen")) {
    return "--audit-work-listen needs --submit-listen (a verifier that "
           "splits its listeners serves submissions apart too)";
  }
  if (!flags.Has("--remote-auditors")) {
    return "--audit-work-listen needs --remote-auditors";
  }
  return "";
}

// --listen serves everything, unless --submit-listen takes Log.Submit (for
// provers) and --audit-work-listen AuditWork (for auditors) off it, so that
// a network policy can hold each to its role (docs/operations.md).
std::vector<Listener> VerifierListeners(const Flags& flags,
                                        verifier::VerifierNode& node) {
  if (!flags.Has("--submit-listen")) {
    return {{"verifier", flags.Get("--listen"), node.services()}};
  }
  verifier::VerifierNode::SplitServices split = node.split_services();
  std::vector<Listener> out;
  out.push_back(
      {"verifier-submit", flags.Get("--submit-listen"), split.submit});
  if (flags.Has("--audit-work-listen")) {
    out.push_back({"verifier-audit-work", flags.Get("--audit-work-listen"),
                   split.audit_work});
  } else {
    split.open.insert(split.open.end(), split.audit_work.begin(),
                      split.audit_work.end());
  }
  out.push_back({"verifier", flags.Get("--listen"), split.open});
  return out;
}

}  // namespace

int RunServeVerifier(const std::vector<std::string>& args) {
  Flags flags(With({"--model", "--key", "--db", "--listen", "--provers",
                    "--verifier-id", "--audit-rate", "--layers-per-audit",
                    "--audit-threads", "--opening-timeout-ms", "--backend",
                    "--threads", "--metrics-listen", "--audit-lease-seconds",
                    "--submit-listen", "--audit-work-listen"},
                   With(kTransportFlags, kPeerFlags)),
              {"--insecure", "--help", "--remote-auditors"});
  std::string error;
  if (!flags.Parse(args, &error)) return ServeUsage(error);
  if (flags.Has("--help")) {
    return ServeHelp();
  }
  if (const std::string missing = MissingFlag(
          flags, {"--model", "--key", "--db", "--listen", "--provers"});
      !missing.empty()) {
    return ServeUsage(missing);
  }
  const auto rate = flags.GetDouble("--audit-rate", 0.1, &error);
  const auto layers = flags.GetInt("--layers-per-audit", 1, 1, 1024, &error);
  const auto audit_threads = flags.GetInt("--audit-threads", 2, 1, 256, &error);
  const auto timeout_ms =
      flags.GetInt("--opening-timeout-ms", 30000, 1, 3600000, &error);
  const auto threads = flags.GetInt("--threads", 0, 0, 1024, &error);
  const std::optional<rpc::PeerLimits> peer_limits =
      ParsePeerLimits(flags, &error);
  const auto lease_s =
      flags.GetInt("--audit-lease-seconds", 60, 1, 86400, &error);
  if (!rate || !layers || !audit_threads || !timeout_ms || !threads ||
      !peer_limits || !lease_s) {
    return ServeUsage(error);
  }
  if (const std::string bad = ListenerFlagsError(flags); !bad.empty()) {
    return ServeUsage(bad);
  }
  auto transport = ParseTransport(flags);
  if (!transport.ok())
    return ServeUsage(std::string(transport.status().message()));
  auto key = LoadKey(flags.Get("--key"));
  if (!key.ok()) return Fail("--key", key.status());
  auto provers =
      verifier::LoadProverRegistry(flags.Get("--provers"), transport->client);
  if (!provers.ok()) return Fail("--provers", provers.status());

  const sigset_t stop_signals = BlockStopSignals();
  auto loaded = LoadEngine(flags.Get("--model"), flags.Get("--backend"),
                           static_cast<int>(*threads));
  if (!loaded.ok())
    return Fail("--model", store::ToAbslStatus(loaded.status()));

  verifier::VerifierOptions options;
  options.verifier_id = flags.Get("--verifier-id", "verifier-1");
  options.engine = loaded->engine.get();
  options.key = *key;
  options.db_dir = flags.Get("--db");
  options.provers = *std::move(provers);
  options.policy.rate = *rate;
  options.policy.layers_per_audit = static_cast<uint32_t>(*layers);
  options.audit_threads = static_cast<int>(*audit_threads);
  options.opening_timeout = absl::Milliseconds(*timeout_ms);
  options.remote_auditors = flags.Has("--remote-auditors");
  options.audit_lease = absl::Seconds(*lease_s);
  options.peer_limits = *peer_limits;
  options.roles = transport->roles;
  options.insecure = transport->insecure;
  auto node = verifier::VerifierNode::Create(std::move(options));
  if (!node.ok()) return Fail("serve verifier", node.status());
  auto metrics = StartMetrics(flags, "verifier-metrics", (*node)->metrics());
  if (!metrics.ok()) return Fail("--metrics-listen", metrics.status());

  // The node refuses new submissions and audits, lets running audits
  // finish until the grace period ends (the rest stay pending for the next
  // start) and answers the RequestAudit calls waiting on them, so the
  // server's shutdown does not wait behind a backlog of audits.
  return ServeUntilSignal(VerifierListeners(flags, **node), transport->server,
                          stop_signals,
                          [&] { return (*node)->Shutdown(absl::Seconds(20)); });
}

}  // namespace layerproof::cli
