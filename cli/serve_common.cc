#include "cli/serve_common.h"

#include <charconv>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "cli/peer_tls.h"
#include "cli/print_error.h"
#include "rpc/server.h"
#include "store/status.h"

namespace layerproof::cli {

int Fail(const char* what, const absl::Status& status) {
  PrintError(std::string("layerproof: ") + what, status.ToString());
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

namespace {

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

}  // namespace

void PrintStopping(const char* node, int sig) {
  std::fprintf(stderr,
               "{\"event\":\"stopping\",\"node\":\"%s\",\"signal\":%d}\n", node,
               sig);
}

int ServeUntilSignal(const std::vector<Listener>& listeners,
                     const rpc::TlsOptions& tls, const sigset_t& stop_signals,
                     const std::function<absl::Status()>& drain) {
  std::vector<std::unique_ptr<rpc::RunningServer>> servers;
  for (const Listener& listener : listeners) {
    rpc::ServerConfig config;
    config.listen = listener.listen;
    config.tls = tls;
    auto server = rpc::StartServer(config, listener.services);
    if (!server.ok()) return Fail(listener.name, server.status());
    PrintListening(listener.name, listener.listen, (*server)->port());
    servers.push_back(*std::move(server));
  }
  const char* node = listeners.back().name;
  PrintStopping(node, WaitForSignal(stop_signals));
  for (auto& server : servers) server->MarkNotServing();
  const absl::Status drained = drain();
  // The node has drained what matters (requests committed, audits finished
  // or left pending); calls still open now are cut after a second.
  for (auto& server : servers) server->Shutdown(std::chrono::seconds(1));
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

}  // namespace layerproof::cli
