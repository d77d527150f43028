// A small Log service and the client calls the rpc/ tests make to it
// (tests/rpc/rpc_test.cc, tests/demo/demo_pki_test.cc): a server on
// 127.0.0.1:0 whose GetCheckpoint needs the auditor role and answers with
// the caller's certificate CN. Thread safety: the service's handlers may run
// concurrently; the rest is for one test thread.
#ifndef LAYERPROOF_TESTS_RPC_TEST_LOG_SERVICE_H_
#define LAYERPROOF_TESTS_RPC_TEST_LOG_SERVICE_H_

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>

#include "grpcpp/client_context.h"
#include "layerproof/v1/log.grpc.pb.h"
#include "rpc/grpc_status.h"
#include "rpc/roles.h"
#include "rpc/server.h"
#include "rpc/tls.h"

namespace layerproof::rpc::fixture {

inline constexpr auto kCallDeadline = std::chrono::seconds(10);

// A Log service whose GetCheckpoint needs the auditor role (and returns the
// caller's CN), whose GetEntries is open to anyone, and whose Submit only
// counts envelopes. Every handler is short and finishes on the reactor
// thread.
class TestLogService : public v1::Log::CallbackService {
 public:
  explicit TestLogService(Authorizer authorizer)
      : authorizer_(std::move(authorizer)) {}

  grpc::ServerUnaryReactor* GetCheckpoint(
      grpc::CallbackServerContext* context,
      const v1::GetCheckpointRequest* /*request*/,
      v1::GetCheckpointResponse* response) override {
    // Lifetime: owned by gRPC, from here until Finish completes.
    grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
    const absl::Status status =
        authorizer_.Check(*context, Role::kAuditor, "Log.GetCheckpoint");
    if (status.ok()) {
      response->set_checkpoint(Authorizer::PeerCommonName(*context));
      response->set_tree_size(7);
    }
    reactor->Finish(ToGrpcStatus(status));
    return reactor;
  }

  grpc::ServerUnaryReactor* GetEntries(
      grpc::CallbackServerContext* context,
      const v1::GetEntriesRequest* /*request*/,
      v1::GetEntriesResponse* response) override {
    // Lifetime: owned by gRPC, from here until Finish completes.
    grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
    response->add_entries(Authorizer::PeerCommonName(*context));
    reactor->Finish(grpc::Status::OK);
    return reactor;
  }

  grpc::ServerUnaryReactor* Submit(grpc::CallbackServerContext* context,
                                   const v1::SubmitRequest* request,
                                   v1::SubmitResponse* response) override {
    // Lifetime: owned by gRPC, from here until Finish completes.
    grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
    response->set_tree_size(request->envelopes_size());
    reactor->Finish(grpc::Status::OK);
    return reactor;
  }

 private:
  Authorizer authorizer_;
};

inline RoleMap TestRoles() {
  RoleMap roles;
  roles.Grant("auditor-1", Role::kAuditor);
  roles.Grant("prover-1", Role::kProver);
  roles.Grant("verifier-1", Role::kAdmin);
  return roles;
}

// One server with the test service, started on 127.0.0.1:0.
struct TestServer {
  explicit TestServer(const TlsOptions& tls, ServerConfig config = {})
      : service(Authorizer(TestRoles(), tls.insecure)) {
    config.listen = "127.0.0.1:0";
    config.tls = tls;
    auto started = StartServer(config, {&service});
    EXPECT_TRUE(started.ok()) << started.status();
    if (started.ok()) server = std::move(*started);
  }
  std::string address() const {
    return "127.0.0.1:" + std::to_string(server ? server->port() : 0);
  }

  TestLogService service;
  std::unique_ptr<RunningServer> server;
};

inline std::unique_ptr<v1::Log::Stub> LogStub(const std::string& address,
                                              const TlsOptions& tls) {
  auto channel = MakeChannel(address, tls);
  EXPECT_TRUE(channel.ok()) << channel.status();
  if (!channel.ok()) return nullptr;
  return v1::Log::NewStub(*channel);
}

inline grpc::Status GetCheckpoint(v1::Log::Stub& stub,
                                  v1::GetCheckpointResponse* response) {
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + kCallDeadline);
  return stub.GetCheckpoint(&context, v1::GetCheckpointRequest(), response);
}

inline grpc::Status GetEntries(v1::Log::Stub& stub,
                               v1::GetEntriesResponse* response) {
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + kCallDeadline);
  v1::GetEntriesRequest request;
  request.set_count(1);
  return stub.GetEntries(&context, request, response);
}

}  // namespace layerproof::rpc::fixture

#endif  // LAYERPROOF_TESTS_RPC_TEST_LOG_SERVICE_H_
