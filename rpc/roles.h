// Client certificates mapped to roles (DESIGN §7): a prover may submit
// commitments, an auditor may request audits and open a prover's
// activations, a client may generate on a prover that runs mutual TLS, an
// admin may do everything; reads are open to anyone (within the per-peer
// limits of rpc/peer_limiter.h).
//
// The map is a JSON file (the --roles flag) naming each client
// certificate's subject common name and its roles:
//   {"prover-1": ["prover"], "verifier-1": ["auditor"], "app-1": ["client"],
//    "ops": ["admin"]}
// Refused when loading, with InvalidArgument naming the source, the key and
// the value: malformed JSON, a duplicate key, a value that is not an array,
// an unknown role name, an empty common name. An empty array is allowed.
//
// Authorizer::Check on a call:
//   - insecure server (TlsOptions.insecure): OK; there is no identity;
//   - no verified client certificate: UNAUTHENTICATED "Log.Submit needs a
//     client certificate with role prover";
//   - a certificate whose common name lacks the role: PERMISSION_DENIED
//     'Log.Submit needs role prover; client certificate CN "stranger" has
//     roles: none'.
// The identity is the verified certificate's subject CN only (never a SAN),
// read from the call's AuthContext when the peer is authenticated (mTLS).
// Thread safety: immutable after construction; Check may be called from
// any thread.
#ifndef LAYERPROOF_RPC_ROLES_H_
#define LAYERPROOF_RPC_ROLES_H_

#include <map>
#include <set>
#include <string>
#include <string_view>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "grpcpp/server_context.h"

namespace layerproof::rpc {

enum class Role { kProver, kAuditor, kClient, kAdmin };
const char* RoleName(Role role);

class RoleMap {
 public:
  RoleMap() = default;
  // Parses the JSON described above; InvalidArgument naming the file and
  // the offending key or role.
  static absl::StatusOr<RoleMap> Load(const std::string& path);
  static absl::StatusOr<RoleMap> Parse(std::string_view json,
                                       std::string_view source);
  void Grant(const std::string& common_name, Role role);
  // Whether `common_name` holds `role` (an admin holds every role).
  bool Has(std::string_view common_name, Role role) const;
  // The roles granted to `common_name`, e.g. "prover, auditor", or "none".
  std::string RoleNames(std::string_view common_name) const;

 private:
  std::map<std::string, std::set<Role>, std::less<>> roles_;
};

class Authorizer {
 public:
  // `insecure`: the server runs without TLS (every check passes).
  Authorizer(RoleMap roles, bool insecure)
      : roles_(std::move(roles)), insecure_(insecure) {}
  // OK when the caller of `context` holds `role`; `method` (e.g.
  // "Log.Submit") names the call in errors.
  absl::Status Check(const grpc::ServerContextBase& context, Role role,
                     std::string_view method) const;
  // The verified client certificate's common name, or "" (no certificate).
  static std::string PeerCommonName(const grpc::ServerContextBase& context);

 private:
  RoleMap roles_;
  bool insecure_;
};

}  // namespace layerproof::rpc

#endif  // LAYERPROOF_RPC_ROLES_H_
