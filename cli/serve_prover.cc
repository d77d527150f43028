// `layerproof serve prover`: flags to prover::ProverOptions and the HTTP
// API's options; the node serves Inference and Opening (on one listener, or
// Opening on --opening-listen) until SIGINT or SIGTERM.
#include <algorithm>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "cli/engine_setup.h"
#include "cli/file_io.h"
#include "cli/serve_common.h"
#include "prover/prover_node.h"
#include "rpc/server.h"
#include "store/status.h"

namespace layerproof::cli {
namespace {

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

}  // namespace

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
                    "--metrics-listen",
                    "--opening-listen"},
                   With(kTransportFlags, kPeerFlags)),
              {"--insecure", "--help"});
  std::string error;
  if (!flags.Parse(args, &error)) return ServeUsage(error);
  if (flags.Has("--help")) {
    return ServeHelp();
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
  std::vector<Listener> listeners;
  if (flags.Has("--opening-listen")) {
    listeners.push_back({"prover-opening", flags.Get("--opening-listen"),
                         (*node)->opening_services()});
    listeners.push_back(
        {"prover", flags.Get("--listen"), (*node)->inference_services()});
  } else {
    listeners.push_back({"prover", flags.Get("--listen"), (*node)->services()});
  }
  return ServeUntilSignal(listeners, transport->server, stop_signals, [&] {
    return (*node)->Shutdown(absl::Now() + absl::Seconds(30));
  });
}

}  // namespace layerproof::cli
