// rpc/: TLS and mTLS credentials, client-certificate roles, and the
// shared server (health, reflection, size limits, shutdown), exercised over
// real loopback connections with certificates from
// scripts/make-test-certs.sh.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "google/protobuf/unknown_field_set.h"
#include "grpcpp/client_context.h"
#include "grpcpp/completion_queue.h"
#include "grpcpp/generic/generic_stub.h"
#include "grpcpp/support/byte_buffer.h"
#include "layerproof/v1/log.grpc.pb.h"
#include "rpc/grpc_status.h"
#include "rpc/roles.h"
#include "rpc/server.h"
#include "rpc/tls.h"
#include "tests/rpc/test_certs.h"
#include "tests/rpc/test_log_service.h"
#include "tests/store/temp_dir.h"

namespace layerproof::rpc {
namespace {

using fixture::GetCheckpoint;
using fixture::GetEntries;
using fixture::kCallDeadline;
using fixture::LogStub;
using fixture::TestCerts;
using fixture::TestLogService;
using fixture::TestServer;
using ::testing::Contains;
using ::testing::HasSubstr;

// grpc.health.v1.Health/Check through a generic stub: the health protos are
// not generated in this tree, so the request (field 1: service name) and
// the response (field 1: ServingStatus enum) are encoded by hand.
enum HealthStatus { kUnknown = 0, kServing = 1, kNotServing = 2 };

struct HealthReply {
  grpc::Status status;
  int serving_status = -1;
};

HealthReply CheckHealth(const std::shared_ptr<grpc::Channel>& channel,
                        const std::string& service) {
  std::string request;
  if (!service.empty()) {
    request.push_back(0x0a);  // field 1, length-delimited
    request.push_back(static_cast<char>(service.size()));  // < 128 here
    request += service;
  }
  grpc::Slice slice(request);
  grpc::ByteBuffer request_buffer(&slice, 1);
  grpc::ByteBuffer response_buffer;
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + kCallDeadline);
  std::promise<grpc::Status> done;
  grpc::GenericStub stub(channel);
  stub.UnaryCall(&context, "/grpc.health.v1.Health/Check", grpc::StubOptions(),
                 &request_buffer, &response_buffer,
                 [&done](grpc::Status s) { done.set_value(std::move(s)); });
  HealthReply reply;
  reply.status = done.get_future().get();
  if (!reply.status.ok()) return reply;
  std::vector<grpc::Slice> slices;
  EXPECT_TRUE(response_buffer.Dump(&slices).ok());
  std::string bytes;
  for (const grpc::Slice& s : slices) {
    bytes.append(reinterpret_cast<const char*>(s.begin()), s.size());
  }
  if (bytes.empty()) {
    reply.serving_status = kUnknown;                   // proto3 default
  } else if (bytes.size() == 2 && bytes[0] == 0x08) {  // field 1, varint
    reply.serving_status = bytes[1];
  }
  return reply;
}

// The service names server reflection lists, as grpcurl asks for them:
// one ServerReflectionInfo exchange with list_services (field 7) through a
// generic stub, the response's ListServiceResponse (field 6) parsed by
// field number, since the reflection protos are not generated in this tree.
std::vector<std::string> ReflectionServiceNames(
    const std::shared_ptr<grpc::Channel>& channel) {
  std::vector<std::string> names;
  grpc::CompletionQueue cq;
  grpc::GenericStub stub(channel);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + kCallDeadline);
  auto call = stub.PrepareCall(
      &context,
      "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo", &cq);
  // Each step waits for its own completion, so tags come back in order.
  auto step = [&cq](int tag) {
    void* got = nullptr;
    bool ok = false;
    return cq.Next(&got, &ok) && got == reinterpret_cast<void*>(tag) && ok;
  };
  const std::string request("\x3a\x00", 2);  // list_services = ""
  grpc::Slice slice(request);
  grpc::ByteBuffer request_buffer(&slice, 1);
  grpc::ByteBuffer response_buffer;
  call->StartCall(reinterpret_cast<void*>(1));
  EXPECT_TRUE(step(1));
  call->Write(request_buffer, reinterpret_cast<void*>(2));
  EXPECT_TRUE(step(2));
  call->Read(&response_buffer, reinterpret_cast<void*>(3));
  const bool read = step(3);
  EXPECT_TRUE(read);
  call->WritesDone(reinterpret_cast<void*>(4));
  EXPECT_TRUE(step(4));
  grpc::Status status;
  call->Finish(&status, reinterpret_cast<void*>(5));
  EXPECT_TRUE(step(5));
  EXPECT_TRUE(status.ok()) << status.error_message();
  cq.Shutdown();
  if (!read) return names;

  std::vector<grpc::Slice> slices;
  EXPECT_TRUE(response_buffer.Dump(&slices).ok());
  std::string bytes;
  for (const grpc::Slice& s : slices) {
    bytes.append(reinterpret_cast<const char*>(s.begin()), s.size());
  }
  google::protobuf::UnknownFieldSet response;
  EXPECT_TRUE(response.ParseFromString(bytes));
  for (int i = 0; i < response.field_count(); ++i) {
    const google::protobuf::UnknownField& list = response.field(i);
    if (list.number() != 6 ||
        list.type() != google::protobuf::UnknownField::TYPE_LENGTH_DELIMITED) {
      continue;
    }
    google::protobuf::UnknownFieldSet services;
    EXPECT_TRUE(services.ParseFromString(list.length_delimited()));
    for (int j = 0; j < services.field_count(); ++j) {
      google::protobuf::UnknownFieldSet service;
      if (services.field(j).number() != 1 ||
          services.field(j).type() !=
              google::protobuf::UnknownField::TYPE_LENGTH_DELIMITED ||
          !service.ParseFromString(services.field(j).length_delimited())) {
        continue;
      }
      for (int k = 0; k < service.field_count(); ++k) {
        if (service.field(k).number() == 1 &&
            service.field(k).type() ==
                google::protobuf::UnknownField::TYPE_LENGTH_DELIMITED) {
          names.push_back(service.field(k).length_delimited());
        }
      }
    }
  }
  return names;
}

std::shared_ptr<grpc::Channel> InsecureChannel(const std::string& address) {
  TlsOptions tls;
  tls.insecure = true;
  auto channel = MakeChannel(address, tls);
  EXPECT_TRUE(channel.ok()) << channel.status();
  return channel.ok() ? *channel : nullptr;
}

TlsOptions Insecure() {
  TlsOptions tls;
  tls.insecure = true;
  return tls;
}

// --- transports ---------------------------------------------------------

TEST(RpcServer, InsecureRoundTripSkipsRoleChecks) {
  TestServer server(Insecure());
  ASSERT_NE(server.server, nullptr);
  EXPECT_GT(server.server->port(), 0);
  auto stub = LogStub(server.address(), Insecure());
  v1::GetCheckpointResponse response;
  const grpc::Status status = GetCheckpoint(*stub, &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(response.tree_size(), 7u);
  EXPECT_EQ(response.checkpoint(), "");  // no identity in plaintext
}

TEST(RpcServer, TlsRoundTripWithServerNameOverride) {
  const TestCerts& certs = TestCerts::Get();
  ASSERT_TRUE(certs.ok());
  TestServer server(certs.Server(/*mtls=*/false));
  ASSERT_NE(server.server, nullptr);
  auto stub = LogStub(server.address(), certs.Client(""));
  v1::GetEntriesResponse entries;
  const grpc::Status status = GetEntries(*stub, &entries);
  ASSERT_TRUE(status.ok()) << status.error_message();
  ASSERT_EQ(entries.entries_size(), 1);
  EXPECT_EQ(entries.entries(0), "");  // no client certificate

  // A role-checked call without a client certificate is unauthenticated.
  v1::GetCheckpointResponse checkpoint;
  const grpc::Status denied = GetCheckpoint(*stub, &checkpoint);
  EXPECT_EQ(denied.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(denied.error_message(),
            "Log.GetCheckpoint needs a client certificate with role auditor");
}

TEST(RpcServer, TlsClientRefusesServerNotMatchingTheName) {
  const TestCerts& certs = TestCerts::Get();
  ASSERT_TRUE(certs.ok());
  TestServer server(certs.Server(/*mtls=*/false));
  ASSERT_NE(server.server, nullptr);
  TlsOptions client = certs.Client("");
  client.server_name_override = "example.com";
  auto stub = LogStub(server.address(), client);
  v1::GetEntriesResponse entries;
  EXPECT_EQ(GetEntries(*stub, &entries).error_code(),
            grpc::StatusCode::UNAVAILABLE);
}

TEST(RpcServer, TlsClientRefusesServerFromAnotherCa) {
  const TestCerts& certs = TestCerts::Get();
  ASSERT_TRUE(certs.ok());
  TestServer server(certs.Server(/*mtls=*/false));
  ASSERT_NE(server.server, nullptr);
  TlsOptions client = certs.Client("");
  client.ca_file = certs.Pem("rogue-ca");
  auto stub = LogStub(server.address(), client);
  v1::GetEntriesResponse entries;
  EXPECT_EQ(GetEntries(*stub, &entries).error_code(),
            grpc::StatusCode::UNAVAILABLE);
}

TEST(RpcServer, MutualTlsMapsCertificatesToRoles) {
  const TestCerts& certs = TestCerts::Get();
  ASSERT_TRUE(certs.ok());
  TestServer server(certs.Server(/*mtls=*/true));
  ASSERT_NE(server.server, nullptr);

  // An auditor passes, and the handler sees its CN.
  {
    auto stub = LogStub(server.address(), certs.Client("auditor-1"));
    v1::GetCheckpointResponse response;
    const grpc::Status status = GetCheckpoint(*stub, &response);
    ASSERT_TRUE(status.ok()) << status.error_message();
    EXPECT_EQ(response.checkpoint(), "auditor-1");
  }
  // An admin holds every role.
  {
    auto stub = LogStub(server.address(), certs.Client("verifier-1"));
    v1::GetCheckpointResponse response;
    const grpc::Status status = GetCheckpoint(*stub, &response);
    ASSERT_TRUE(status.ok()) << status.error_message();
    EXPECT_EQ(response.checkpoint(), "verifier-1");
  }
  // A prover is known but lacks the role.
  {
    auto stub = LogStub(server.address(), certs.Client("prover-1"));
    v1::GetCheckpointResponse response;
    const grpc::Status status = GetCheckpoint(*stub, &response);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::PERMISSION_DENIED);
    EXPECT_EQ(status.error_message(),
              "Log.GetCheckpoint needs role auditor; client certificate CN "
              "\"prover-1\" has roles: prover");
  }
  // A stranger (signed by the CA, in no role) is denied, but may read.
  {
    auto stub = LogStub(server.address(), certs.Client("stranger"));
    v1::GetCheckpointResponse response;
    const grpc::Status status = GetCheckpoint(*stub, &response);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::PERMISSION_DENIED);
    EXPECT_EQ(status.error_message(),
              "Log.GetCheckpoint needs role auditor; client certificate CN "
              "\"stranger\" has roles: none");
    v1::GetEntriesResponse entries;
    const grpc::Status read = GetEntries(*stub, &entries);
    ASSERT_TRUE(read.ok()) << read.error_message();
    ASSERT_EQ(entries.entries_size(), 1);
    EXPECT_EQ(entries.entries(0), "stranger");
  }
}

TEST(RpcServer, MutualTlsRefusesClientWithoutCertificate) {
  const TestCerts& certs = TestCerts::Get();
  ASSERT_TRUE(certs.ok());
  TestServer server(certs.Server(/*mtls=*/true));
  ASSERT_NE(server.server, nullptr);
  auto stub = LogStub(server.address(), certs.Client(""));
  v1::GetEntriesResponse entries;
  // The handshake fails before any handler runs, even an open one.
  EXPECT_EQ(GetEntries(*stub, &entries).error_code(),
            grpc::StatusCode::UNAVAILABLE);
}

TEST(RpcServer, MutualTlsRefusesCertificateFromAnotherCa) {
  const TestCerts& certs = TestCerts::Get();
  ASSERT_TRUE(certs.ok());
  TestServer server(certs.Server(/*mtls=*/true));
  ASSERT_NE(server.server, nullptr);
  auto stub = LogStub(server.address(), certs.Client("rogue"));
  v1::GetEntriesResponse entries;
  EXPECT_EQ(GetEntries(*stub, &entries).error_code(),
            grpc::StatusCode::UNAVAILABLE);
}

// --- the server ---------------------------------------------------------

TEST(RpcServer, HealthServingUntilShutdownAndReflectionRegistered) {
  TestServer server(Insecure());
  ASSERT_NE(server.server, nullptr);
  EXPECT_THAT(server.server->service_names(), Contains("layerproof.v1.Log"));
  EXPECT_THAT(server.server->service_names(),
              Contains("grpc.health.v1.Health"));
  EXPECT_THAT(server.server->service_names(),
              Contains("grpc.reflection.v1alpha.ServerReflection"));

  auto channel = InsecureChannel(server.address());
  // What grpcurl's "list" sees.
  const std::vector<std::string> listed = ReflectionServiceNames(channel);
  EXPECT_THAT(listed, Contains("layerproof.v1.Log"));
  EXPECT_THAT(listed, Contains("grpc.health.v1.Health"));

  for (const std::string service :
       {"", "layerproof.v1.Log", "grpc.reflection.v1alpha.ServerReflection"}) {
    const HealthReply reply = CheckHealth(channel, service);
    ASSERT_TRUE(reply.status.ok())
        << service << ": " << reply.status.error_message();
    EXPECT_EQ(reply.serving_status, kServing) << service;
  }
  EXPECT_EQ(CheckHealth(channel, "no.such.Service").status.error_code(),
            grpc::StatusCode::NOT_FOUND);

  // Draining: health says NOT_SERVING while calls still work.
  server.server->MarkNotServing();
  for (const std::string service : {"", "layerproof.v1.Log"}) {
    const HealthReply reply = CheckHealth(channel, service);
    ASSERT_TRUE(reply.status.ok()) << reply.status.error_message();
    EXPECT_EQ(reply.serving_status, kNotServing) << service;
  }
  auto stub = v1::Log::NewStub(channel);
  v1::GetCheckpointResponse response;
  EXPECT_TRUE(GetCheckpoint(*stub, &response).ok());

  server.server->Shutdown(std::chrono::milliseconds(100));
  EXPECT_EQ(CheckHealth(channel, "").status.error_code(),
            grpc::StatusCode::UNAVAILABLE);
}

TEST(RpcServer, ShutdownIsIdempotentAndThreadSafe) {
  TestServer server(Insecure());
  ASSERT_NE(server.server, nullptr);
  std::thread other(
      [&] { server.server->Shutdown(std::chrono::milliseconds(50)); });
  server.server->Shutdown(std::chrono::milliseconds(50));
  other.join();
  server.server->Shutdown(std::chrono::milliseconds(0));
  server.server->MarkNotServing();
  auto stub = LogStub(server.address(), Insecure());
  v1::GetCheckpointResponse response;
  EXPECT_EQ(GetCheckpoint(*stub, &response).error_code(),
            grpc::StatusCode::UNAVAILABLE);
  server.server.reset();  // the destructor's Shutdown is a no-op now
}

TEST(RpcServer, TakenPortIsUnavailable) {
  TestServer first(Insecure());
  ASSERT_NE(first.server, nullptr);
  TestLogService service(Authorizer(RoleMap(), true));
  ServerConfig config;
  config.tls = Insecure();
  config.listen = first.address();
  auto second = StartServer(config, {&service});
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(second.status().message(), "cannot listen on " + first.address());
}

TEST(RpcServer, RequestOverTheLimitIsRefused) {
  ServerConfig config;
  config.max_receive_message_bytes = 1024;
  TestServer server(Insecure(), config);
  ASSERT_NE(server.server, nullptr);
  auto stub = LogStub(server.address(), Insecure());

  v1::SubmitRequest small;
  small.add_envelopes(std::string(100, 'x'));
  v1::SubmitResponse response;
  {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + kCallDeadline);
    ASSERT_TRUE(stub->Submit(&context, small, &response).ok());
    EXPECT_EQ(response.tree_size(), 1u);
  }
  v1::SubmitRequest large;
  large.add_envelopes(std::string(2000, 'x'));
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + kCallDeadline);
  EXPECT_EQ(stub->Submit(&context, large, &response).error_code(),
            grpc::StatusCode::RESOURCE_EXHAUSTED);
}

TEST(RpcServer, BadConfigIsInvalidArgument) {
  TestLogService service(Authorizer(RoleMap(), true));
  ServerConfig config;
  config.tls = Insecure();
  config.max_send_message_bytes = 0;
  auto started = StartServer(config, {&service});
  ASSERT_FALSE(started.ok());
  EXPECT_EQ(started.status().message(),
            "ServerConfig.max_send_message_bytes: got 0, want > 0");

  ServerConfig no_tls;  // neither certificates nor --insecure
  started = StartServer(no_tls, {&service});
  ASSERT_FALSE(started.ok());
  EXPECT_EQ(started.status().message(),
            "--tls-cert: required for a server (or --insecure for plaintext)");
}

// Regression (issue 13, item 10): `--insecure --listen 0.0.0.0` turned off
// every role check, Opening.Open included, for anyone on the network.
TEST(RpcServer, InsecureServerListensOnLoopbackOnly) {
  TestLogService service(Authorizer(RoleMap(), true));
  for (const char* address : {"0.0.0.0:0", "[::]:0", ":0", "10.1.2.3:0",
                              "example.com:0", "[::ffff:10.0.0.1]:0"}) {
    ServerConfig config;
    config.tls = Insecure();
    config.listen = address;
    auto started = StartServer(config, {&service});
    ASSERT_FALSE(started.ok()) << address;
    EXPECT_EQ(started.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_TRUE(std::string(started.status().message())
                    .starts_with(std::string("ServerConfig.listen: got ") +
                                 address + " with --insecure"))
        << started.status();
  }
  for (const char* address :
       {"127.0.0.1:0", "127.3.4.5:0", "[::1]:0", "localhost:0",
        "[::ffff:127.0.0.1]:0", "unix:/tmp/lp.sock"}) {
    EXPECT_TRUE(IsLoopbackListenAddress(address)) << address;
  }
  ServerConfig loopback;
  loopback.tls = Insecure();
  loopback.listen = "127.0.0.1:0";
  auto started = StartServer(loopback, {&service});
  EXPECT_TRUE(started.ok()) << started.status();
}

// --- credentials --------------------------------------------------------

TEST(RpcTls, MissingFileErrorNamesFlagAndPath) {
  const TestCerts& certs = TestCerts::Get();
  TlsOptions tls = certs.Server(false);
  tls.key_file = "/nonexistent/lp/key.pem";
  auto creds = MakeServerCredentials(tls);
  ASSERT_FALSE(creds.ok());
  EXPECT_EQ(creds.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(creds.status().message(),
            "--tls-key: cannot read /nonexistent/lp/key.pem: No such file or "
            "directory");

  TlsOptions client = certs.Client("auditor-1");
  client.ca_file = "/nonexistent/lp/ca.pem";
  auto channel = MakeChannel("127.0.0.1:1", client);
  ASSERT_FALSE(channel.ok());
  EXPECT_EQ(channel.status().message(),
            "--tls-ca: cannot read /nonexistent/lp/ca.pem: No such file or "
            "directory");
}

TEST(RpcTls, NotPemErrorNamesPath) {
  const TestCerts& certs = TestCerts::Get();
  ASSERT_TRUE(certs.ok());
  store::fixture::TempDir dir("lp_rpc");
  const std::string junk = dir.path() + "/junk.pem";
  std::ofstream(junk) << "not a certificate\n";
  TlsOptions tls = certs.Server(false);
  tls.cert_file = junk;
  auto creds = MakeServerCredentials(tls);
  ASSERT_FALSE(creds.ok());
  EXPECT_EQ(creds.status().message(),
            "--tls-cert: " + junk +
                ": not a PEM CERTIFICATE (no \"-----BEGIN ... "
                "CERTIFICATE-----\" line)");

  // A certificate where the key belongs.
  tls = certs.Server(false);
  tls.key_file = certs.Pem("server");
  creds = MakeServerCredentials(tls);
  ASSERT_FALSE(creds.ok());
  EXPECT_THAT(creds.status().message(), HasSubstr(certs.Pem("server")));
  EXPECT_THAT(creds.status().message(), HasSubstr("PRIVATE KEY"));
}

TEST(RpcTls, KeyNotMatchingCertificateIsRefused) {
  const TestCerts& certs = TestCerts::Get();
  ASSERT_TRUE(certs.ok());
  TlsOptions tls = certs.Server(false);
  tls.key_file = certs.Key("stranger");
  auto creds = MakeServerCredentials(tls);
  ASSERT_FALSE(creds.ok());
  EXPECT_EQ(creds.status().message(),
            "--tls-key: " + certs.Key("stranger") +
                " is not the private key of --tls-cert " + certs.Pem("server"));
}

TEST(RpcTls, InconsistentOptionsAreRefused) {
  const TestCerts& certs = TestCerts::Get();
  TlsOptions half = certs.Client("auditor-1");
  half.key_file.clear();
  auto creds = MakeChannelCredentials(half);
  ASSERT_FALSE(creds.ok());
  EXPECT_EQ(creds.status().message(),
            "--tls-key: required with --tls-cert (a client certificate needs "
            "both)");

  TlsOptions both = certs.Server(false);
  both.insecure = true;
  auto server_creds = MakeServerCredentials(both);
  ASSERT_FALSE(server_creds.ok());
  EXPECT_EQ(server_creds.status().message(),
            "--insecure: conflicts with --tls-cert " + certs.Pem("server"));

  auto channel = MakeChannel("127.0.0.1:1", Insecure(), 0);
  ASSERT_FALSE(channel.ok());
  EXPECT_EQ(channel.status().message(), "max_message_bytes: got 0, want > 0");
}

// --- roles --------------------------------------------------------------

TEST(RpcRoles, ParsesGrantsAndAdminHoldsEveryRole) {
  auto roles = RoleMap::Parse(
      R"({"prover-1": ["prover"], "verifier-1": ["auditor", "prover"],
          "ops": ["admin"], "idle": []})",
      "roles.json");
  ASSERT_TRUE(roles.ok()) << roles.status();
  EXPECT_TRUE(roles->Has("prover-1", Role::kProver));
  EXPECT_FALSE(roles->Has("prover-1", Role::kAuditor));
  EXPECT_TRUE(roles->Has("verifier-1", Role::kAuditor));
  EXPECT_TRUE(roles->Has("verifier-1", Role::kProver));
  EXPECT_FALSE(roles->Has("verifier-1", Role::kAdmin));
  for (Role r : {Role::kProver, Role::kAuditor, Role::kAdmin}) {
    EXPECT_TRUE(roles->Has("ops", r)) << RoleName(r);
    EXPECT_FALSE(roles->Has("idle", r)) << RoleName(r);
    EXPECT_FALSE(roles->Has("nobody", r)) << RoleName(r);
  }
  EXPECT_EQ(roles->RoleNames("verifier-1"), "prover, auditor");
  EXPECT_EQ(roles->RoleNames("idle"), "none");
}

TEST(RpcRoles, ParseErrorsNameSourceKeyAndValue) {
  const struct {
    const char* json;
    const char* message;
  } cases[] = {
      {R"({"a": ["prover"], "a": ["auditor"]})",
       "roles.json: bad JSON: duplicate key \"a\""},
      {R"({"a": ["superuser"]})",
       "roles.json: \"a\"[0]: got \"superuser\", want one of \"prover\", "
       "\"auditor\", \"admin\""},
      {R"({"a": ["prover", 3]})",
       "roles.json: \"a\"[1]: got 3, want one of \"prover\", \"auditor\", "
       "\"admin\""},
      {R"({"a": "prover"})",
       "roles.json: \"a\": got a string \"prover\", want an array of role "
       "names"},
      {R"(["prover"])",
       "roles.json: got an array, want an object mapping certificate common "
       "names to role arrays"},
      {R"({"": ["prover"]})",
       "roles.json: got an empty common name, want a non-empty one"},
  };
  for (const auto& c : cases) {
    auto roles = RoleMap::Parse(c.json, "roles.json");
    ASSERT_FALSE(roles.ok()) << c.json;
    EXPECT_EQ(roles.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(roles.status().message(), c.message) << c.json;
  }
  auto truncated = RoleMap::Parse(R"({"a": ["prover"])", "roles.json");
  ASSERT_FALSE(truncated.ok());
  EXPECT_THAT(truncated.status().message(),
              HasSubstr("roles.json: bad JSON: "));
}

TEST(RpcRoles, LoadReadsFileAndNamesMissingPath) {
  store::fixture::TempDir dir("lp_rpc");
  const std::string path = dir.path() + "/roles.json";
  std::ofstream(path) << R"({"auditor-1": ["auditor"]})";
  auto roles = RoleMap::Load(path);
  ASSERT_TRUE(roles.ok()) << roles.status();
  EXPECT_TRUE(roles->Has("auditor-1", Role::kAuditor));

  auto missing = RoleMap::Load(dir.path() + "/missing.json");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().message(), "--roles: cannot read " + dir.path() +
                                            "/missing.json: No such file or "
                                            "directory");
}

}  // namespace
}  // namespace layerproof::rpc
