// demo/demo_pki.h: the in-process demo CA and certificates complete a
// mutual-TLS handshake with rpc::StartServer and MakeChannel, the client
// certificate's CN is the identity roles.h sees, and the server is verified
// both by name (localhost) and by IP (127.0.0.1); a client without a
// certificate, or with one from another demo CA, is refused at the
// handshake.
#include "demo/demo_pki.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>

#include "layerproof/v1/log.grpc.pb.h"
#include "rpc/tls.h"
#include "tests/rpc/test_log_service.h"
#include "tests/store/temp_dir.h"

namespace layerproof::rpc {
namespace {

using demo::DemoPki;
using demo::DemoPkiOptions;
using fixture::GetCheckpoint;
using fixture::LogStub;
using fixture::TestServer;
using store::fixture::TempDir;

// Log.GetCheckpoint through `tls`: the server's answer is the caller's CN.
grpc::Status WhoAmI(const std::string& address, const TlsOptions& tls,
                    std::string* cn) {
  std::unique_ptr<v1::Log::Stub> stub = LogStub(address, tls);
  if (stub == nullptr) return grpc::Status(grpc::StatusCode::INTERNAL, "");
  v1::GetCheckpointResponse response;
  const grpc::Status status = GetCheckpoint(*stub, &response);
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
  // auditor-1 holds the auditor role, prover-1 only the prover role.
  TestServer server(pki->Server(/*mtls=*/true));
  ASSERT_NE(server.server, nullptr);
  const std::string address = server.address();

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

  server.server->Shutdown(std::chrono::seconds(1));
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
