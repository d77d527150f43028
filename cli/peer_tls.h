// The client side of TLS from the flags the node commands share for the
// servers they call (`serve`, `serve auditor`, `health`): --peer-ca,
// --peer-name, --client-cert/--client-key, or --insecure, which conflicts
// with them. Thread safety: pure function.
#ifndef LAYERPROOF_CLI_PEER_TLS_H_
#define LAYERPROOF_CLI_PEER_TLS_H_

#include <set>
#include <string>

#include "absl/status/statusor.h"
#include "cli/flags.h"
#include "rpc/tls.h"

namespace layerproof::cli {

inline const std::set<std::string> kPeerTlsFlags = {
    "--peer-ca", "--peer-name", "--client-cert", "--client-key"};

// InvalidArgument naming the flag that conflicts with --insecure.
absl::StatusOr<rpc::TlsOptions> ParsePeerTls(const Flags& flags);

}  // namespace layerproof::cli

#endif  // LAYERPROOF_CLI_PEER_TLS_H_
