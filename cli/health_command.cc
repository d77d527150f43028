// `layerproof health ADDR`: asks a node's gRPC health service
// (grpc.health.v1.Health/Check, which every LayerProof server runs) whether
// it is serving, for readiness probes and scripts (Kubernetes' built-in
// gRPC probe cannot speak TLS). The call is made with gRPC's generic stub,
// and the two small messages are encoded here: HealthCheckRequest is field
// 1 (service, a string), HealthCheckResponse field 1 (status, an enum:
// 1 SERVING, 2 NOT_SERVING).
#include <chrono>
#include <cstdio>
#include <future>
#include <set>
#include <string>
#include <vector>

#include "cli/flags.h"
#include "cli/peer_tls.h"
#include "cli/print_error.h"
#include "grpcpp/generic/generic_stub.h"
#include "grpcpp/grpcpp.h"
#include "rpc/tls.h"

namespace layerproof::cli {
namespace {

constexpr char kHealthUsage[] =
    "usage: layerproof health ADDR [--service NAME] [--timeout-ms N]\n"
    "         [--peer-ca FILE] [--peer-name NAME] [--client-cert FILE\n"
    "          --client-key FILE] | --insecure\n"
    "  Asks the gRPC health service at ADDR (host:port) whether the server\n"
    "  (or NAME, e.g. layerproof.v1.Log) is serving.\n"
    "exit: 0 serving, 1 not serving, 2 usage error, 3 the call failed\n";

int Usage(const std::string& error) {
  if (!error.empty()) PrintError("layerproof", error);
  std::fputs(kHealthUsage, stderr);
  return 2;
}

}  // namespace

int RunHealth(const std::vector<std::string>& args) {
  if (WantsHelp(args)) {
    std::fputs(kHealthUsage, stdout);
    return 0;
  }
  if (args.empty() || args[0].rfind("--", 0) == 0) {
    return Usage("health needs ADDR first");
  }
  std::set<std::string> valued = {"--service", "--timeout-ms"};
  valued.insert(kPeerTlsFlags.begin(), kPeerTlsFlags.end());
  Flags flags(valued, {"--insecure"});
  std::string error;
  if (!flags.Parse(std::vector<std::string>(args.begin() + 1, args.end()),
                   &error)) {
    return Usage(error);
  }
  const auto timeout_ms = flags.GetInt("--timeout-ms", 2000, 1, 600000, &error);
  if (!timeout_ms) return Usage(error);
  const std::string service = flags.Get("--service");
  if (service.size() > 127) return Usage("--service: at most 127 bytes");
  const absl::StatusOr<rpc::TlsOptions> tls = ParsePeerTls(flags);
  if (!tls.ok()) return Usage(std::string(tls.status().message()));
  auto channel = rpc::MakeChannel(args[0], *tls);
  if (!channel.ok()) return Usage(std::string(channel.status().message()));

  std::string request;
  if (!service.empty()) {
    request.push_back('\x0a');  // field 1, length-delimited
    request.push_back(static_cast<char>(service.size()));
    request += service;
  }
  grpc::Slice slice(request);
  grpc::ByteBuffer request_buffer(&slice, 1);
  grpc::ByteBuffer response_buffer;
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::milliseconds(*timeout_ms));
  grpc::GenericStub stub(*channel);
  std::promise<grpc::Status> done;
  stub.UnaryCall(&context, "/grpc.health.v1.Health/Check", grpc::StubOptions(),
                 &request_buffer, &response_buffer,
                 [&done](grpc::Status s) { done.set_value(std::move(s)); });
  const grpc::Status status = done.get_future().get();
  if (!status.ok()) {
    std::printf("{\"status\":\"CALL_FAILED\",\"code\":%d,\"message\":\"%s\"}\n",
                static_cast<int>(status.error_code()),
                status.error_code() == grpc::StatusCode::NOT_FOUND
                    ? "unknown service"
                    : "the health call failed");
    return 3;
  }
  std::vector<grpc::Slice> slices;
  (void)response_buffer.Dump(&slices);
  std::string bytes;
  for (const grpc::Slice& s : slices) {
    bytes.append(reinterpret_cast<const char*>(s.begin()), s.size());
  }
  int value = 0;  // UNKNOWN when absent (proto3 default)
  if (bytes.size() >= 2 && bytes[0] == '\x08' &&
      static_cast<unsigned char>(bytes[1]) < 0x80) {
    value = bytes[1];
  }
  const char* names[] = {"UNKNOWN", "SERVING", "NOT_SERVING",
                         "SERVICE_UNKNOWN"};
  std::printf("{\"status\":\"%s\"}\n",
              value >= 0 && value <= 3 ? names[value] : "UNKNOWN");
  return value == 1 ? 0 : 1;
}

}  // namespace layerproof::cli
