// TLS material for tests: scripts/make-test-certs.sh run once per test
// binary into a temporary directory (removed at exit), and TlsOptions for
// the usual server and client set-ups.
//
// Link layerproof::test_certs (tests/rpc/CMakeLists.txt), which carries the
// script's path. Files: ca, server (CN=localhost, SAN localhost and
// 127.0.0.1), prover-1, prover-2, verifier-1, auditor-1, client-1, stranger (client
// certificates, CN = the name), rogue (signed by rogue-ca, not by ca).
// Thread safety: Get() is thread-safe; the object is immutable.
#ifndef LAYERPROOF_TESTS_RPC_TEST_CERTS_H_
#define LAYERPROOF_TESTS_RPC_TEST_CERTS_H_

#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>
#include <system_error>

#include "rpc/tls.h"

namespace layerproof::rpc::fixture {

class TestCerts {
 public:
  // The certificates, made on first use. A failure to make them fails the
  // calling test (dir() then holds no files, and TLS set-ups fail loudly).
  static const TestCerts& Get() {
    static const TestCerts* certs = new TestCerts();  // lives until exit
    return *certs;
  }

  const std::string& dir() const { return dir_; }
  bool ok() const { return ok_; }
  std::string Pem(std::string_view name) const {
    return dir_ + "/" + std::string(name) + ".pem";
  }
  std::string Key(std::string_view name) const {
    return dir_ + "/" + std::string(name) + ".key";
  }

  // The server's options: TLS with the "server" certificate; with `mtls`,
  // client certificates signed by "ca" are required.
  TlsOptions Server(bool mtls) const {
    TlsOptions tls;
    tls.cert_file = Pem("server");
    tls.key_file = Key("server");
    if (mtls) tls.ca_file = Pem("ca");
    return tls;
  }
  // A client trusting "ca", verifying the server as "localhost", presenting
  // the certificate `name` (none when empty).
  TlsOptions Client(std::string_view name) const {
    TlsOptions tls;
    tls.ca_file = Pem("ca");
    tls.server_name_override = "localhost";
    if (!name.empty()) {
      tls.cert_file = Pem(name);
      tls.key_file = Key(name);
    }
    return tls;
  }

 private:
  TestCerts() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "lp_certs_XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) {
      ADD_FAILURE() << "mkdtemp " << pattern << " failed";
      return;
    }
    dir_ = pattern;
    const std::string command =
        std::string("bash '") + LP_MAKE_TEST_CERTS + "' '" + dir_ + "'";
    const int rc = std::system(command.c_str());
    ok_ = rc == 0;
    if (!ok_) ADD_FAILURE() << command << " exited with " << rc;
    std::atexit([] {
      std::error_code ec;
      std::filesystem::remove_all(Get().dir_, ec);
    });
  }

  std::string dir_;
  bool ok_ = false;
};

}  // namespace layerproof::rpc::fixture

#endif  // LAYERPROOF_TESTS_RPC_TEST_CERTS_H_
