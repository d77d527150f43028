// What `serve prover`, `serve verifier` and `serve auditor` share: the
// usage text, the transport and per-peer flags, key loading, the stop
// signals, the "listening" lines, and serving a node's listeners until a
// signal. Each command's own flags live in serve_prover.cc,
// serve_verifier.cc and serve_auditor.cc; the logic in prover/ and
// verifier/.
//
// Once serving, one JSON line per listener goes to stdout,
//   {"event":"listening","node":"prover","address":"127.0.0.1:7001"}
// so that scripts and tests started with port 0 learn the ports.
#ifndef LAYERPROOF_CLI_SERVE_COMMON_H_
#define LAYERPROOF_CLI_SERVE_COMMON_H_

#include <csignal>
#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "cli/flags.h"
#include "grpcpp/impl/service_type.h"
#include "rpc/metrics.h"
#include "rpc/peer_limiter.h"
#include "rpc/roles.h"
#include "rpc/tls.h"
#include "store/crypto.h"

namespace layerproof::cli {

// The commands (serve_prover.cc, serve_verifier.cc, serve_auditor.cc).
int RunServeProver(const std::vector<std::string>& args);
int RunServeVerifier(const std::vector<std::string>& args);
int RunServeAuditor(const std::vector<std::string>& args);

// Prints `error` (if any) and the usage to stderr; returns 2.
int ServeUsage(const std::string& error);
// Prints the usage to stdout (--help); returns 0.
int ServeHelp();
// Prints "layerproof: WHAT: STATUS"; returns 1.
int Fail(const char* what, const absl::Status& status);
// "X is required" for the first of `required` missing, or "".
std::string MissingFlag(const Flags& flags,
                        std::initializer_list<const char*> required);
std::set<std::string> With(std::set<std::string> a,
                           const std::set<std::string>& b);

// The server and client TLS flags, and the per-peer limits.
extern const std::set<std::string> kTransportFlags;
extern const std::set<std::string> kPeerFlags;

struct Transport {
  rpc::TlsOptions server;
  rpc::TlsOptions client;
  rpc::RoleMap roles;
  bool insecure = false;
};
// InvalidArgument naming the flag (missing, or conflicting with
// --insecure).
absl::StatusOr<Transport> ParseTransport(const Flags& flags);
// The per-peer limits from --peer-*; nullopt with *error naming the flag.
std::optional<rpc::PeerLimits> ParsePeerLimits(const Flags& flags,
                                               std::string* error);
// HOST:PORT (HOST may be [v6]) of `flag`'s value; InvalidArgument naming
// the flag otherwise.
absl::StatusOr<std::pair<std::string, int>> HostPort(const Flags& flags,
                                                     const std::string& flag);

absl::StatusOr<std::shared_ptr<const store::Ed25519PrivateKey>> LoadKey(
    const std::string& path);

// Blocks SIGINT and SIGTERM in every thread created after this call, so
// that WaitForSignal receives them. Call before starting any thread.
sigset_t BlockStopSignals();
int WaitForSignal(const sigset_t& set);
void PrintListening(const char* node, const std::string& listen, int port);
void PrintStopping(const char* node, int sig);

// --metrics-listen: the node's /metrics (plaintext: counts and durations
// only), or null without the flag. Prints its listening line.
absl::StatusOr<std::unique_ptr<rpc::MetricsServer>> StartMetrics(
    const Flags& flags, const char* node, const rpc::NodeMetrics& metrics);

// One gRPC server of a node: its name in the "listening" line, its address
// and the services it serves.
struct Listener {
  const char* name;
  std::string listen;
  std::vector<grpc::Service*> services;
};

// Serves each of `listeners` (with the same TLS) until SIGINT or SIGTERM,
// then marks them not serving, calls `drain` (the node's shutdown) while
// they still answer the calls in flight, stops them, and returns the exit
// code. The listening lines come in order, so the last listener's is last.
int ServeUntilSignal(const std::vector<Listener>& listeners,
                     const rpc::TlsOptions& tls, const sigset_t& stop_signals,
                     const std::function<absl::Status()>& drain);

}  // namespace layerproof::cli

#endif  // LAYERPROOF_CLI_SERVE_COMMON_H_
