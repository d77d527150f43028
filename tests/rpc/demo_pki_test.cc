// store/rpc/demo_pki.h: the in-process demo CA and certificates complete a
// mutual-TLS handshake with rpc::StartServer and MakeChannel, the client
// certificate's CN is the identity roles.h sees, and the server is verified
// both by name (localhost) and by IP (127.0.0.1); a client without a
// certificate, or with one from another demo CA, is refused at the
// handshake.
#include "store/rpc/demo_pki.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>

#include "grpcpp/client_context.h"
#include "layerproof/v1/log.grpc.pb.h"
#include "store/rpc/grpc_status.h"
#include "store/rpc/roles.h"
#include "store/rpc/server.h"
#include "store/rpc/tls.h"
#include "tests/store/temp_dir.h"

namespace layerproof::rpc {
namespace {

using store::fixture::TempDir;

// Log.GetCheckpoint answers with the caller's CN when it holds the auditor
// role; the handler finishes on the reactor thread.
class WhoAmIService : public v1::Log::CallbackService {
 public:
  explicit WhoAmIService(RoleMap roles)
      : authorizer_(std::move(roles), false) {}

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
    }
    reactor->Finish(ToGrpcStatus(status));
    return reactor;
  }

 private:
  Authorizer authorizer_;
};

grpc::Status WhoAmI(const std::string& address, const TlsOptions& tls,
                    std::string* cn) {
  auto channel = MakeChannel(address, tls);
  EXPECT_TRUE(channel.ok()) << channel.status();
  if (!channel.ok()) return grpc::Status(grpc::StatusCode::INTERNAL, "");
  auto stub = v1::Log::NewStub(*channel);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::seconds(10));
  v1::GetCheckpointResponse response;
  const grpc::Status status =
      stub->GetCheckpoint(&context, v1::GetCheckpointRequest(), &response);
  *cn = response.checkpoint();
  return status;
}

DemoPkiOptions Options() {
  DemoPkiOptions options;
  options.client_names = {"prover-1", "auditor-1"};
  return options;
}

TEST(DemoPki, WritesEveryFileWithPrivateKeysOwnerOnly) {
  TempDir dir("lp_demo_pki");
  auto pki = DemoPki::Create(dir.path() + "/tls", Options());
  ASSERT_TRUE(pki.ok()) << pki.status();
  for (const char* name : {"ca", "server", "prover-1", "auditor-1"}) {
    ASSERT_TRUE(std::filesystem::exists(pki->Pem(name))) << name;
    struct stat st;
    ASSERT_EQ(stat(pki->Key(name).c_str(), &st), 0) << name;
    EXPECT_EQ(st.st_mode & 0777, 0600) << name;
  }
}

TEST(DemoPki, MutualTlsHandshakeMapsClientCertificateToItsRole) {
  TempDir dir("lp_demo_pki");
  auto pki = DemoPki::Create(dir.path(), Options());
  ASSERT_TRUE(pki.ok()) << pki.status();
  RoleMap roles;
  roles.Grant("auditor-1", Role::kAuditor);
  roles.Grant("prover-1", Role::kProver);
  WhoAmIService service(roles);
  ServerConfig config;
  config.listen = "127.0.0.1:0";
  config.tls = pki->Server(/*mtls=*/true);
  auto server = StartServer(config, {&service});
  ASSERT_TRUE(server.ok()) << server.status();
  const std::string address = "127.0.0.1:" + std::to_string((*server)->port());

  // The auditor completes the handshake, and the server sees its CN.
  std::string cn;
  grpc::Status status = WhoAmI(address, pki->Client("auditor-1"), &cn);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(cn, "auditor-1");

  // Verified by its IP SAN too, without a name override.
  TlsOptions by_ip = pki->Client("auditor-1");
  by_ip.server_name_override.clear();
  status = WhoAmI(address, by_ip, &cn);
  ASSERT_TRUE(status.ok()) << status.error_message();

  // The prover's certificate is authenticated but lacks the role.
  status = WhoAmI(address, pki->Client("prover-1"), &cn);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::PERMISSION_DENIED)
      << status.error_message();

  // No client certificate: refused at the handshake.
  status = WhoAmI(address, pki->Client(""), &cn);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE);

  // A certificate from another demo CA: refused at the handshake.
  auto other = DemoPki::Create(dir.path() + "/other", Options());
  ASSERT_TRUE(other.ok()) << other.status();
  TlsOptions rogue = other->Client("auditor-1");
  rogue.ca_file = pki->Pem("ca");  // trusts the real server
  status = WhoAmI(address, rogue, &cn);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE);

  (*server)->Shutdown(std::chrono::seconds(1));
}

TEST(DemoPki, BadNamesAreInvalidArgument) {
  TempDir dir("lp_demo_pki");
  for (const char* bad : {"", "ca", "server", "a b", "-x"}) {
    DemoPkiOptions options;
    options.client_names = {bad};
    EXPECT_EQ(DemoPki::Create(dir.path(), options).status().code(),
              absl::StatusCode::kInvalidArgument)
        << bad;
  }
  DemoPkiOptions twice;
  twice.client_names = {"p", "p"};
  EXPECT_EQ(DemoPki::Create(dir.path(), twice).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace layerproof::rpc
