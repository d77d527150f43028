// `layerproof serve prover|verifier|auditor`: builds a node from flags, serves
// it with rpc::StartServer until SIGINT or SIGTERM, then shuts down without
// losing anything (docs/protocol.md, docs/security.md). All the logic lives
// in prover/ and verifier/; this file only maps flags to options.
//
// Once serving, one JSON line goes to stdout,
//   {"event":"listening","node":"prover","address":"127.0.0.1:7001"}
// so that scripts and tests started with port 0 learn the port.
#include <algorithm>
#include <charconv>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "cli/engine_setup.h"
#include "cli/file_io.h"
#include "cli/flags.h"
#include "cli/peer_tls.h"
#include "cli/store_commands.h"
#include "prover/prover_node.h"
#include "rpc/metrics.h"
#include "rpc/roles.h"
#include "rpc/server.h"
#include "rpc/tls.h"
#include "store/crypto.h"
#include "store/status.h"
#include "verifier/auditor_worker.h"
#include "verifier/verifier_node.h"

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
    "     [--http-max-in-flight N]]\n"
    "  Serves Inference and Opening; commits to every request and submits\n"
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
    "  Serves Log, Audit and Report; logs commitments from the provers in "
    "FILE\n"
    "  (docs/protocol.md) and audits a random fraction A of them. With\n"
    "  --remote-auditors it also serves AuditWork and leases each audit's\n"
    "  re-execution to `serve auditor` workers (a lease not renewed in N s,\n"
    "  default 60, goes to another); it still signs every verdict.\n"
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

int ServeUsage(const std::string& error) {
  if (!error.empty()) std::fprintf(stderr, "layerproof: %s\n", error.c_str());
  std::fputs(kServeUsage, stderr);
  return 2;
}

int Fail(const char* what, const absl::Status& status) {
  std::fprintf(stderr, "layerproof: %s: %s\n", what, status.ToString().c_str());
  return 1;
}

const std::set<std::string> kTransportFlags = [] {
  std::set<std::string> f = {"--tls-cert", "--tls-key", "--tls-ca", "--roles"};
  f.insert(kPeerTlsFlags.begin(), kPeerTlsFlags.end());
  return f;
}();

const std::set<std::string> kPeerFlags = {"--peer-rate", "--peer-burst",
                                          "--peer-in-flight"};

// The per-peer limits from --peer-*; nullopt with *error naming the flag.
std::optional<rpc::PeerLimits> ParsePeerLimits(const Flags& flags,
                                               std::string* error) {
  const rpc::PeerLimits d;
  const auto rate = flags.GetInt("--peer-rate", int64_t(d.calls_per_second), 1,
                                 1000000, error);
  const auto burst =
      flags.GetInt("--peer-burst", int64_t(d.burst), 1, 10000000, error);
  const auto in_flight =
      flags.GetInt("--peer-in-flight", d.max_in_flight, 1, 1000000, error);
  if (!rate || !burst || !in_flight) return std::nullopt;
  rpc::PeerLimits limits;
  limits.calls_per_second = double(*rate);
  limits.burst = double(*burst);
  limits.max_in_flight = static_cast<int>(*in_flight);
  return limits;
}

std::set<std::string> With(std::set<std::string> a,
                           const std::set<std::string>& b) {
  a.insert(b.begin(), b.end());
  return a;
}

struct Transport {
  rpc::TlsOptions server;
  rpc::TlsOptions client;
  rpc::RoleMap roles;
  bool insecure = false;
};

absl::StatusOr<Transport> ParseTransport(const Flags& flags) {
  Transport t;
  t.insecure = flags.Has("--insecure");
  t.server.insecure = t.client.insecure = t.insecure;
  if (t.insecure) {
    for (const std::string& f : kTransportFlags) {
      if (flags.Has(f)) {
        return absl::InvalidArgumentError(f + " conflicts with --insecure");
      }
    }
    return t;
  }
  if (!flags.Has("--tls-cert") || !flags.Has("--tls-key")) {
    return absl::InvalidArgumentError(
        "--tls-cert and --tls-key are required (or --insecure for "
        "plaintext on loopback)");
  }
  t.server.cert_file = flags.Get("--tls-cert");
  t.server.key_file = flags.Get("--tls-key");
  t.server.ca_file = flags.Get("--tls-ca");
  LP_ASSIGN_OR_RETURN(t.client, ParsePeerTls(flags));
  if (flags.Has("--roles")) {
    LP_ASSIGN_OR_RETURN(t.roles, rpc::RoleMap::Load(flags.Get("--roles")));
  }
  return t;
}

absl::StatusOr<std::shared_ptr<const store::Ed25519PrivateKey>> LoadKey(
    const std::string& path) {
  LP_ASSIGN_OR_RETURN(store::Ed25519PrivateKey key,
                      store::ReadPrivateKeyFile(path));
  return std::make_shared<const store::Ed25519PrivateKey>(std::move(key));
}

// Blocks SIGINT and SIGTERM in every thread created after this call, so that
// WaitForSignal receives them.
sigset_t BlockStopSignals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  return set;
}

int WaitForSignal(const sigset_t& set) {
  int sig = 0;
  sigwait(&set, &sig);
  return sig;
}

void PrintListening(const char* node, const std::string& listen, int port) {
  const std::string host = listen.substr(0, listen.rfind(':'));
  std::printf(
      "{\"event\":\"listening\",\"node\":\"%s\",\"address\":\"%s:%d\"}\n", node,
      host.c_str(), port);
  std::fflush(stdout);
}

// DeadlineExceeded from a node's Shutdown means work was left for the next
// start (commitments in the journal, audits in the store): nothing is
// lost, so it is a clean exit with a notice.
int ShutdownExit(const char* node, const absl::Status& status) {
  if (status.ok()) return 0;
  if (absl::IsDeadlineExceeded(status)) {
    std::fprintf(stderr,
                 "{\"event\":\"stopped_with_pending_work\",\"node\":\"%s\"}\n",
                 node);
    return 0;
  }
  return Fail("shutdown", status);
}

void PrintStopping(const char* node, int sig) {
  std::fprintf(stderr,
               "{\"event\":\"stopping\",\"node\":\"%s\",\"signal\":%d}\n", node,
               sig);
}

// Serves `services` on `listen` until SIGINT or SIGTERM, then marks the
// server not serving, calls `drain` (the node's shutdown) while the server
// still answers the calls in flight, stops the server, and returns the
// exit code.
int ServeUntilSignal(const char* node, const std::string& listen,
                     const rpc::TlsOptions& tls, const sigset_t& stop_signals,
                     const std::vector<grpc::Service*>& services,
                     const std::function<absl::Status()>& drain) {
  rpc::ServerConfig config;
  config.listen = listen;
  config.tls = tls;
  auto server = rpc::StartServer(config, services);
  if (!server.ok()) return Fail(node, server.status());
  PrintListening(node, listen, (*server)->port());
  PrintStopping(node, WaitForSignal(stop_signals));
  (*server)->MarkNotServing();
  const absl::Status drained = drain();
  // The node has drained what matters (requests committed, audits finished
  // or left pending); calls still open now are cut after a second.
  (*server)->Shutdown(std::chrono::seconds(1));
  return ShutdownExit(node, drained);
}

// A usage error naming the first of `required` that is missing, or "".
std::string MissingFlag(const Flags& flags,
                        std::initializer_list<const char*> required) {
  for (const char* flag : required) {
    if (!flags.Has(flag)) return std::string(flag) + " is required";
  }
  return "";
}

// HOST:PORT (HOST may be [v6]) of `flag`'s value; InvalidArgument naming
// the flag otherwise.
absl::StatusOr<std::pair<std::string, int>> HostPort(const Flags& flags,
                                                     const std::string& flag) {
  const std::string value = flags.Get(flag);
  const size_t colon = value.rfind(':');
  int port = -1;
  if (colon != std::string::npos) {
    const char* begin = value.data() + colon + 1;
    const char* end = value.data() + value.size();
    const auto [ptr, ec] = std::from_chars(begin, end, port);
    if (ec != std::errc() || ptr != end || begin == end || port > 65535) {
      port = -1;
    }
  }
  if (port < 0) {
    return absl::InvalidArgumentError(flag + ": got \"" + value +
                                      "\", want HOST:PORT");
  }
  std::string host = value.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  return std::make_pair(host, port);
}

// --metrics-listen: the node's /metrics (plaintext: counts and durations
// only), or null without the flag. Prints its listening line.
absl::StatusOr<std::unique_ptr<rpc::MetricsServer>> StartMetrics(
    const Flags& flags, const char* node, const rpc::NodeMetrics& metrics) {
  if (!flags.Has("--metrics-listen")) return nullptr;
  LP_ASSIGN_OR_RETURN(const auto host_port,
                      HostPort(flags, "--metrics-listen"));
  LP_ASSIGN_OR_RETURN(
      std::unique_ptr<rpc::MetricsServer> server,
      rpc::MetricsServer::Start(host_port.first, host_port.second, metrics));
  PrintListening(node, flags.Get("--metrics-listen"), server->port());
  return server;
}

// The HTTP API's options from --http-* (and the gRPC server's TLS).
absl::StatusOr<prover::HttpApiOptions> HttpApiFromFlags(
    const Flags& flags, const Transport& transport) {
  prover::HttpApiOptions o;
  const std::string listen = flags.Get("--http-listen");
  std::string error;
  LP_ASSIGN_OR_RETURN(const auto host_port, HostPort(flags, "--http-listen"));
  o.host = host_port.first;
  o.port = host_port.second;
  if (transport.insecure) {
    if (!rpc::IsLoopbackListenAddress(listen)) {
      return absl::InvalidArgumentError(
          "--http-listen: --insecure serves plaintext, so only on loopback");
    }
    o.insecure = true;
  } else {
    o.tls_cert_file = transport.server.cert_file;
    o.tls_key_file = transport.server.key_file;
  }
  const std::string model = flags.Get("--model");
  o.model_name = flags.Get(
      "--served-model-name",
      std::filesystem::path(model).lexically_normal().filename().string());
  if (o.model_name.empty()) o.model_name = "model";
  if (flags.Has("--api-keys")) {
    absl::StatusOr<std::string> text =
        ReadWholeFile(flags.Get("--api-keys"), 1 << 20);
    if (!text.ok()) return text.status();
    LP_ASSIGN_OR_RETURN(o.api_keys,
                        prover::ParseApiKeys(*text, flags.Get("--api-keys")));
  }
  const auto in_flight =
      flags.GetInt("--http-max-in-flight", o.max_in_flight, 1, 4096, &error);
  if (!in_flight) return absl::InvalidArgumentError(error);
  o.max_in_flight = static_cast<int>(*in_flight);
  o.threads = std::max(o.threads, o.max_in_flight + 8);
  return o;
}

int RunServeProver(const std::vector<std::string>& args) {
  Flags flags(With({"--model",
                    "--key",
                    "--listen",
                    "--verifier",
                    "--journal",
                    "--log-key",
                    "--verifier-id",
                    "--prover-id",
                    "--backend",
                    "--threads",
                    "--max-sequences",
                    "--max-new-tokens",
                    "--receipt-wait-ms",
                    "--retention-hours",
                    "--max-opening-mb",
                    "--http-listen",
                    "--served-model-name",
                    "--api-keys",
                    "--http-max-in-flight",
                    "--metrics-listen"},
                   With(kTransportFlags, kPeerFlags)),
              {"--insecure", "--help"});
  std::string error;
  if (!flags.Parse(args, &error)) return ServeUsage(error);
  if (flags.Has("--help")) {
    std::fputs(kServeUsage, stdout);
    return 0;
  }
  if (const std::string missing =
          MissingFlag(flags, {"--model", "--key", "--listen", "--verifier",
                              "--journal", "--log-key"});
      !missing.empty()) {
    return ServeUsage(missing);
  }
  const auto threads = flags.GetInt("--threads", 0, 0, 1024, &error);
  const auto max_sequences =
      flags.GetInt("--max-sequences", 64, 1, 4096, &error);
  const auto max_new = flags.GetInt("--max-new-tokens", 1024, 1, 8192, &error);
  const auto receipt_ms =
      flags.GetInt("--receipt-wait-ms", 1500, 0, 600000, &error);
  const auto retention_h =
      flags.GetInt("--retention-hours", 24 * 7, 1, 24 * 3650, &error);
  const auto opening_mb =
      flags.GetInt("--max-opening-mb", 256, 1, 1 << 20, &error);
  const std::optional<rpc::PeerLimits> peer_limits =
      ParsePeerLimits(flags, &error);
  if (!threads || !max_sequences || !max_new || !receipt_ms || !retention_h ||
      !opening_mb || !peer_limits) {
    return ServeUsage(error);
  }
  auto transport = ParseTransport(flags);
  if (!transport.ok())
    return ServeUsage(std::string(transport.status().message()));
  auto key = LoadKey(flags.Get("--key"));
  if (!key.ok()) return Fail("--key", key.status());
  absl::StatusOr<store::Ed25519PublicKey> log_key =
      store::ReadPublicKeyFile(flags.Get("--log-key"));
  if (!log_key.ok()) return Fail("--log-key", log_key.status());
  const std::string verifier_id = flags.Get("--verifier-id", "verifier-1");

  const sigset_t stop_signals = BlockStopSignals();
  // The node builds its own engine (weights are prepared once).
  auto loaded = LoadModel(flags.Get("--model"), flags.Get("--backend"),
                          static_cast<int>(*threads));
  if (!loaded.ok())
    return Fail("--model", store::ToAbslStatus(loaded.status()));

  prover::ProverOptions options;
  options.prover_id = flags.Get("--prover-id", "prover-1");
  options.model = loaded->model.get();
  options.executor = loaded->executor.get();
  options.key = *key;
  options.journal_dir = flags.Get("--journal");
  options.verifier_address = flags.Get("--verifier");
  options.verifier_tls = transport->client;
  // The verifier names its checkpoint key and its log after its id
  // (verifier_node.cc).
  options.log_key =
      std::make_shared<const store::CheckpointVerifier>(verifier_id, *log_key);
  options.log_origin = "layerproof/" + verifier_id;
  options.engine.max_sequences = *max_sequences;
  options.max_new_tokens = static_cast<uint32_t>(*max_new);
  options.receipt_wait = absl::Milliseconds(*receipt_ms);
  options.retention = absl::Hours(*retention_h);
  options.max_opening_bytes = static_cast<uint64_t>(*opening_mb) << 20;
  options.peer_limits = *peer_limits;
  options.roles = transport->roles;
  options.insecure = transport->insecure;
  auto node = prover::ProverNode::Create(std::move(options));
  if (!node.ok()) return Fail("serve prover", node.status());
  if (flags.Has("--http-listen")) {
    absl::StatusOr<prover::HttpApiOptions> http =
        HttpApiFromFlags(flags, *transport);
    if (!http.ok()) return ServeUsage(std::string(http.status().message()));
    absl::StatusOr<int> port = (*node)->StartHttpApi(*std::move(http));
    if (!port.ok()) return Fail("--http-listen", port.status());
    PrintListening("prover-http", flags.Get("--http-listen"), *port);
  }
  // Declared after the node, so destroyed before it.
  auto metrics = StartMetrics(flags, "prover-metrics", (*node)->metrics());
  if (!metrics.ok()) return Fail("--metrics-listen", metrics.status());

  // Drain: finish and commit requests in flight while the server still
  // answers them (and serves openings of the last commitments).
  return ServeUntilSignal(
      "prover", flags.Get("--listen"), transport->server, stop_signals,
      (*node)->services(),
      [&] { return (*node)->Shutdown(absl::Now() + absl::Seconds(30)); });
}

int RunServeVerifier(const std::vector<std::string>& args) {
  Flags flags(With({"--model", "--key", "--db", "--listen", "--provers",
                    "--verifier-id", "--audit-rate", "--layers-per-audit",
                    "--audit-threads", "--opening-timeout-ms", "--backend",
                    "--threads", "--metrics-listen", "--audit-lease-seconds"},
                   With(kTransportFlags, kPeerFlags)),
              {"--insecure", "--help", "--remote-auditors"});
  std::string error;
  if (!flags.Parse(args, &error)) return ServeUsage(error);
  if (flags.Has("--help")) {
    std::fputs(kServeUsage, stdout);
    return 0;
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
  return ServeUntilSignal("verifier", flags.Get("--listen"), transport->server,
                          stop_signals, (*node)->services(),
                          [&] { return (*node)->Shutdown(absl::Seconds(20)); });
}

int RunServeAuditor(const std::vector<std::string>& args) {
  Flags flags(With({"--verifier", "--model", "--worker-id", "--concurrency",
                    "--backend", "--threads", "--metrics-listen"},
                   kPeerTlsFlags),
              {"--insecure", "--help"});
  std::string error;
  if (!flags.Parse(args, &error)) return ServeUsage(error);
  if (flags.Has("--help")) {
    std::fputs(kServeUsage, stdout);
    return 0;
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

}  // namespace

int RunServe(const std::vector<std::string>& args) {
  if (args.empty()) return ServeUsage("serve needs prover or verifier");
  const std::vector<std::string> rest(args.begin() + 1, args.end());
  if (args[0] == "prover") return RunServeProver(rest);
  if (args[0] == "verifier") return RunServeVerifier(rest);
  if (args[0] == "auditor") return RunServeAuditor(rest);
  if (args[0] == "--help") {
    std::fputs(kServeUsage, stdout);
    return 0;
  }
  return ServeUsage("unknown serve target \"" + args[0] + "\"");
}

}  // namespace layerproof::cli
