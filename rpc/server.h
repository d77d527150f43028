// Starts a gRPC server the way every LayerProof node runs one (DESIGN §7):
// TLS or mTLS from TlsOptions, explicit message-size limits,
// grpc.health.v1 (every service SERVING while up) and server reflection,
// so that grpcurl works. Health reports SERVING for "" and for every
// registered service's full name (e.g. "layerproof.v1.Log") while up.
// Graceful shutdown marks health NOT_SERVING, stops accepting calls, lets
// calls in flight finish until the deadline, then cancels the rest.
//
// Thread safety: MarkNotServing and Shutdown may be called from any thread,
// any number of times; Shutdown returns once the server has shut down
// (a concurrent second call waits for the first).
#ifndef LAYERPROOF_RPC_SERVER_H_
#define LAYERPROOF_RPC_SERVER_H_

#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "grpcpp/server.h"
#include "rpc/tls.h"

namespace layerproof::rpc {

// Whether a listen address ("host:port", "[v6]:port", "unix:path") can only
// be reached from this host: 127.0.0.0/8, ::1 (or v4-mapped 127/8),
// "localhost", or a unix socket. StartServer refuses a plaintext server
// (TlsOptions.insecure) on any other address.
bool IsLoopbackListenAddress(std::string_view address);

struct ServerConfig {
  // "host:port"; port 0 picks a free one (RunningServer::port). With
  // tls.insecure it must be a loopback address (IsLoopbackListenAddress).
  std::string listen = "127.0.0.1:0";
  TlsOptions tls;
  // Largest request and response message, in bytes.
  int max_receive_message_bytes = 16 << 20;
  int max_send_message_bytes = 64 << 20;
};

class RunningServer {
 public:
  // `server` is started; `service_names` are the full names health reports.
  RunningServer(std::unique_ptr<grpc::Server> server, int port,
                std::vector<std::string> service_names = {});
  ~RunningServer();  // Shutdown with a zero deadline if not yet shut down
  RunningServer(const RunningServer&) = delete;
  RunningServer& operator=(const RunningServer&) = delete;

  int port() const { return port_; }
  grpc::Server& server() { return *server_; }
  // The full names of the services health reports on, including
  // grpc.health.v1.Health and the reflection service.
  const std::vector<std::string>& service_names() const {
    return service_names_;
  }
  // Marks health NOT_SERVING (so that load balancers drain this node) while
  // still serving calls. Idempotent.
  void MarkNotServing();
  // Marks health NOT_SERVING, stops accepting calls and waits for calls in
  // flight until `grace` has passed, then cancels them and returns once
  // every call has finished. Idempotent. Must not be called from a
  // reactor or handler thread of this server (it waits for those).
  void Shutdown(std::chrono::milliseconds grace);

 private:
  std::unique_ptr<grpc::Server> server_;
  int port_;
  std::vector<std::string> service_names_;
  std::once_flag shut_down_;
};

// Builds and starts a server for `services` (not owned; they must outlive
// the server). Errors: bad credentials (as MakeServerCredentials),
// InvalidArgument for a non-positive message-size limit or a null
// service, or Unavailable naming the address when it cannot be bound.
absl::StatusOr<std::unique_ptr<RunningServer>> StartServer(
    const ServerConfig& config, const std::vector<grpc::Service*>& services);

}  // namespace layerproof::rpc

#endif  // LAYERPROOF_RPC_SERVER_H_
