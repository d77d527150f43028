// Transport security for every LayerProof server and client (DESIGN §7):
// TLS from PEM files, mutual TLS when a client CA is given, and plaintext
// only when asked for explicitly (loopback tests and the demo).
//
// A server with `ca_file` set requires and verifies a client certificate
// signed by that CA (mTLS); the certificate's subject common name is then
// the peer's identity, which roles.h maps to roles. A client presents
// cert_file/key_file when both are set and verifies the server against
// ca_file (the system roots when empty).
//
// The fields come from the flags --insecure, --tls-cert, --tls-key and
// --tls-ca. Refused with InvalidArgument, naming the flag and the file:
// an unreadable file ("--tls-key: cannot read /etc/lp/key.pem: No such
// file or directory"), a file without the expected PEM block, a key that
// is not the certificate's, a server without cert and key, a client with
// only one of them, and --insecure together with any file. Credentials
// are built once the files pass these checks; a CA that does not sign the
// peer shows only at the handshake (the call fails UNAVAILABLE).
// Thread safety: pure functions.
#ifndef LAYERPROOF_RPC_TLS_H_
#define LAYERPROOF_RPC_TLS_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "grpcpp/security/credentials.h"
#include "grpcpp/security/server_credentials.h"

namespace layerproof::rpc {

struct TlsOptions {
  // Plaintext: no certificate, no encryption, no client identity. Every
  // role check passes (roles.h). For loopback tests and the demo only.
  bool insecure = false;
  // This side's certificate chain and private key, PEM. Required for a
  // server; optional for a client (then no client certificate is sent).
  std::string cert_file{};
  std::string key_file{};
  // Server: the CA that signs client certificates; set, clients must
  // present one (mTLS). Client: the CA that signs the server's certificate.
  std::string ca_file{};
  // Client only: the name to verify the server's certificate against
  // instead of the address's host (e.g. "localhost" for 127.0.0.1).
  std::string server_name_override{};
};

absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> MakeServerCredentials(
    const TlsOptions& tls);

absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>>
MakeChannelCredentials(const TlsOptions& tls);

// A channel to `address` ("host:port") with MakeChannelCredentials(tls),
// the server name override, and message-size limits of `max_message_bytes`
// in both directions. --insecure with a server name override is refused.
absl::StatusOr<std::shared_ptr<grpc::Channel>> MakeChannel(
    const std::string& address, const TlsOptions& tls,
    int max_message_bytes = 64 << 20);

}  // namespace layerproof::rpc

#endif  // LAYERPROOF_RPC_TLS_H_
