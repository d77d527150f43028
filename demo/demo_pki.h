// A throwaway public-key infrastructure for `layerproof demo` and tests,
// made in process with the OpenSSL API (the same material as
// scripts/make-test-certs.sh, without the openssl command): an EC P-256 CA,
// one server certificate (CN and DNS SAN `server_name`, IP SAN 127.0.0.1),
// and one client certificate per name whose subject CN is that name (the
// identity roles.h maps to roles). Every key is a P-256 key in PKCS#8 PEM
// written with mode 0600; certificates are PEM, SHA-256 signed, valid from
// an hour ago for `valid_days`.
//
// Files in `dir` (created if missing; existing files of these names are
// replaced): ca.pem, ca.key, server.pem, server.key, NAME.pem, NAME.key.
// grpcurl takes them as -cacert ca.pem -cert NAME.pem -key NAME.key.
// Never use this material anywhere but a demo or a test.
// Thread safety: Create is thread-safe; a DemoPki is an immutable value.
#ifndef LAYERPROOF_DEMO_DEMO_PKI_H_
#define LAYERPROOF_DEMO_DEMO_PKI_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "rpc/tls.h"

namespace layerproof::demo {

struct DemoPkiOptions {
  // The client certificates' common names: letters, digits, '.', '_' or
  // '-', starting with a letter or digit; not "ca" or "server"; distinct.
  std::vector<std::string> client_names;
  // The server certificate's CN and DNS SAN (it also holds IP 127.0.0.1).
  std::string server_name = "localhost";
  // The CA's common name.
  std::string ca_name = "layerproof-demo-ca";
  int valid_days = 30;
};

class DemoPki {
 public:
  // Makes and writes the CA, the server certificate and the client
  // certificates. InvalidArgument naming a bad name or option; Internal
  // naming the OpenSSL step that failed; an I/O error naming the file.
  static absl::StatusOr<DemoPki> Create(const std::string& dir,
                                        const DemoPkiOptions& options);

  const std::string& dir() const { return dir_; }
  const std::string& server_name() const { return server_name_; }
  // Paths of NAME.pem and NAME.key in dir() ("ca", "server" or a client).
  std::string Pem(std::string_view name) const;
  std::string Key(std::string_view name) const;

  // A server presenting the server certificate; with `mtls` it requires
  // client certificates signed by the CA.
  rpc::TlsOptions Server(bool mtls = true) const;
  // A client trusting the CA, verifying the server as server_name(), and
  // presenting the client certificate `name` (none when empty).
  rpc::TlsOptions Client(std::string_view name) const;

 private:
  DemoPki(std::string dir, std::string server_name)
      : dir_(std::move(dir)), server_name_(std::move(server_name)) {}

  std::string dir_;
  std::string server_name_;
};

}  // namespace layerproof::demo

#endif  // LAYERPROOF_DEMO_DEMO_PKI_H_
