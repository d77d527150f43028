#include "rpc/server.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "grpc/grpc.h"
#include "grpcpp/ext/proto_server_reflection_plugin.h"
#include "grpcpp/health_check_service_interface.h"
#include "grpcpp/impl/server_builder_option.h"
#include "grpcpp/impl/server_builder_plugin.h"
#include "grpcpp/impl/server_initializer.h"
#include "grpcpp/server_builder.h"
#include "kernels/status.h"
#include "store/internal/str_cat.h"

namespace layerproof::rpc {
namespace {

using store::internal::Cat;

// grpc::Service does not expose its name; the server learns each one when
// it is registered. This per-server plugin copies that list out once the
// server has started (every service, health and reflection included, is
// registered by then).
class ServiceNameCollector : public grpc::ServerBuilderPlugin {
 public:
  explicit ServiceNameCollector(std::shared_ptr<std::vector<std::string>> out)
      : out_(std::move(out)) {}
  std::string name() override { return "layerproof_service_names"; }
  void InitServer(grpc::ServerInitializer* /*si*/) override {}
  void Finish(grpc::ServerInitializer* si) override {
    const std::vector<std::string>* names = si->GetServiceList();
    if (names != nullptr) *out_ = *names;
  }
  void ChangeArguments(const std::string& /*name*/, void* /*value*/) override {}

 private:
  std::shared_ptr<std::vector<std::string>> out_;
};

class CollectServiceNames : public grpc::ServerBuilderOption {
 public:
  explicit CollectServiceNames(std::shared_ptr<std::vector<std::string>> out)
      : out_(std::move(out)) {}
  void UpdateArguments(grpc::ChannelArguments* /*args*/) override {}
  void UpdatePlugins(std::vector<std::unique_ptr<grpc::ServerBuilderPlugin>>*
                         plugins) override {
    plugins->push_back(std::make_unique<ServiceNameCollector>(out_));
  }

 private:
  std::shared_ptr<std::vector<std::string>> out_;
};

absl::Status ValidateConfig(const ServerConfig& config,
                            const std::vector<grpc::Service*>& services) {
  if (config.listen.empty()) {
    return absl::InvalidArgumentError(
        "ServerConfig.listen: got \"\", want host:port");
  }
  // Plaintext turns off every role check (roles.h), Opening.Open's salts
  // and activations included, so it may only be reachable from this host.
  if (config.tls.insecure && !IsLoopbackListenAddress(config.listen)) {
    return absl::InvalidArgumentError(
        Cat("ServerConfig.listen: got ", config.listen,
            " with --insecure, want a loopback address (127.0.0.0/8, [::1],"
            " localhost or a unix: socket): plaintext has no roles, so"
            " anything else needs --tls-cert and --tls-key"));
  }
  if (config.max_receive_message_bytes <= 0) {
    return absl::InvalidArgumentError(
        Cat("ServerConfig.max_receive_message_bytes: got ",
            config.max_receive_message_bytes, ", want > 0"));
  }
  if (config.max_send_message_bytes <= 0) {
    return absl::InvalidArgumentError(
        Cat("ServerConfig.max_send_message_bytes: got ",
            config.max_send_message_bytes, ", want > 0"));
  }
  for (size_t i = 0; i < services.size(); ++i) {
    if (services[i] == nullptr) {
      return absl::InvalidArgumentError(
          Cat("services[", i, "]: got null, want a service"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

bool IsLoopbackListenAddress(std::string_view address) {
  if (address.starts_with("unix:") || address.starts_with("unix-abstract:")) {
    return true;  // a local socket
  }
  std::string host;
  if (address.starts_with("[")) {
    const size_t close = address.find(']');
    if (close == std::string_view::npos) return false;
    host = std::string(address.substr(1, close - 1));
  } else {
    const size_t colon = address.rfind(':');
    if (colon == std::string_view::npos) return false;
    host = std::string(address.substr(0, colon));
  }
  if (host == "localhost") return true;  // gRPC binds 127.0.0.1 and ::1
  in_addr v4{};
  if (inet_pton(AF_INET, host.c_str(), &v4) == 1) {
    return (ntohl(v4.s_addr) >> 24) == 127;
  }
  in6_addr v6{};
  if (inet_pton(AF_INET6, host.c_str(), &v6) == 1) {
    if (IN6_IS_ADDR_LOOPBACK(&v6)) return true;
    return IN6_IS_ADDR_V4MAPPED(&v6) && v6.s6_addr[12] == 127;
  }
  return false;  // "", 0.0.0.0, [::], a name: maybe reachable from outside
}

RunningServer::RunningServer(std::unique_ptr<grpc::Server> server, int port,
                             std::vector<std::string> service_names)
    : server_(std::move(server)),
      port_(port),
      service_names_(std::move(service_names)) {}

RunningServer::~RunningServer() { Shutdown(std::chrono::milliseconds(0)); }

void RunningServer::MarkNotServing() {
  // Thread-safe in gRPC; after Shutdown the health service ignores it.
  if (grpc::HealthCheckServiceInterface* health =
          server_->GetHealthCheckService()) {
    health->SetServingStatus(false);
  }
}

void RunningServer::Shutdown(std::chrono::milliseconds grace) {
  std::call_once(shut_down_, [&] {
    MarkNotServing();
    server_->Shutdown(std::chrono::system_clock::now() + grace);
    server_->Wait();
  });
}

absl::StatusOr<std::unique_ptr<RunningServer>> StartServer(
    const ServerConfig& config, const std::vector<grpc::Service*>& services) {
  LP_RETURN_IF_ERROR(ValidateConfig(config, services));
  LP_ASSIGN_OR_RETURN(std::shared_ptr<grpc::ServerCredentials> creds,
                      MakeServerCredentials(config.tls));

  // Both install process-wide defaults read by every ServerBuilder built
  // afterwards; calling them again is harmless. Calling the reflection
  // initialiser also keeps its static registration from being dropped by
  // the linker.
  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();

  auto names = std::make_shared<std::vector<std::string>>();
  int selected_port = 0;
  grpc::ServerBuilder builder;
  builder.AddListeningPort(config.listen, creds, &selected_port);
  builder.SetMaxReceiveMessageSize(config.max_receive_message_bytes);
  builder.SetMaxSendMessageSize(config.max_send_message_bytes);
  builder.SetOption(std::make_unique<CollectServiceNames>(names));
  // A second node on a taken port must fail, not silently share the
  // traffic (gRPC sets SO_REUSEPORT by default).
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  for (grpc::Service* service : services) builder.RegisterService(service);

  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr || selected_port == 0) {
    if (server != nullptr) server->Shutdown();
    return absl::UnavailableError(Cat("cannot listen on ", config.listen));
  }
  if (grpc::HealthCheckServiceInterface* health =
          server->GetHealthCheckService()) {
    health->SetServingStatus("", true);
    for (const std::string& name : *names) {
      health->SetServingStatus(name, true);
    }
  }
  return std::make_unique<RunningServer>(std::move(server), selected_port,
                                         std::move(*names));
}

}  // namespace layerproof::rpc
