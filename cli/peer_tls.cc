#include "cli/peer_tls.h"

namespace layerproof::cli {

absl::StatusOr<rpc::TlsOptions> ParsePeerTls(const Flags& flags) {
  rpc::TlsOptions tls;
  tls.insecure = flags.Has("--insecure");
  if (tls.insecure) {
    for (const std::string& f : kPeerTlsFlags) {
      if (flags.Has(f)) {
        return absl::InvalidArgumentError(f + " conflicts with --insecure");
      }
    }
    return tls;
  }
  tls.ca_file = flags.Get("--peer-ca");
  tls.server_name_override = flags.Get("--peer-name");
  tls.cert_file = flags.Get("--client-cert");
  tls.key_file = flags.Get("--client-key");
  return tls;
}

}  // namespace layerproof::cli
