#include "rpc/roles.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "grpc/grpc_security_constants.h"
#include "grpcpp/security/auth_context.h"
#include "kernels/model/json_fields.h"
#include "kernels/status.h"
#include "store/internal/str_cat.h"
#include "store/status.h"

namespace layerproof::rpc {
namespace {

using Json = kernels::model::internal::Json;
using kernels::model::internal::DescribeJson;
using store::internal::Cat;

// A role map is a handful of names; anything larger is not one.
constexpr std::streamsize kMaxRoleMapBytes = 1 << 20;

std::string Quote(std::string_view s) {
  return DescribeJson(Json(std::string(s)));
}

std::string TypeName(const Json& v) {
  if (v.is_string()) return "a string";
  if (v.is_object()) return "an object";
  if (v.is_array()) return "an array";
  if (v.is_boolean()) return "a boolean";
  if (v.is_number()) return "a number";
  return "null";
}

// Parses `text` strictly (kernels/model/json_fields.h): a key repeated in
// one object is refused, since nlohmann would keep the last one silently
// and hide a typo'd grant.
absl::StatusOr<Json> ParseStrictJson(std::string_view text,
                                     std::string_view source) {
  kernels::StatusOr<Json> j = kernels::model::internal::ParseJson(text, source);
  if (!j.ok()) return store::ToAbslStatus(j.status());
  return *std::move(j);
}

std::optional<Role> ParseRole(std::string_view name) {
  for (Role r : {Role::kProver, Role::kAuditor, Role::kClient, Role::kAdmin}) {
    if (name == RoleName(r)) return r;
  }
  return std::nullopt;
}

}  // namespace

const char* RoleName(Role role) {
  switch (role) {
    case Role::kProver:
      return "prover";
    case Role::kAuditor:
      return "auditor";
    case Role::kClient:
      return "client";
    case Role::kAdmin:
      return "admin";
  }
  return "unknown";
}

absl::StatusOr<RoleMap> RoleMap::Load(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::InvalidArgumentError(
        Cat("--roles: cannot read ", path, ": ", std::strerror(errno)));
  }
  std::string text(kMaxRoleMapBytes + 1, '\0');
  in.read(text.data(), kMaxRoleMapBytes + 1);
  if (in.bad()) {
    return absl::InvalidArgumentError(
        Cat("--roles: cannot read ", path, ": ", std::strerror(errno)));
  }
  text.resize(static_cast<size_t>(in.gcount()));
  if (static_cast<std::streamsize>(text.size()) > kMaxRoleMapBytes) {
    return absl::InvalidArgumentError(Cat("--roles: ", path, ": got more than ",
                                          kMaxRoleMapBytes,
                                          " bytes, want a small JSON object"));
  }
  return Parse(text, path);
}

absl::StatusOr<RoleMap> RoleMap::Parse(std::string_view json,
                                       std::string_view source) {
  absl::StatusOr<RoleMap> result = [&]() -> absl::StatusOr<RoleMap> {
    LP_ASSIGN_OR_RETURN(Json root, ParseStrictJson(json, source));
    if (!root.is_object()) {
      return absl::InvalidArgumentError(
          Cat(source, ": got ", TypeName(root),
              ", want an object mapping certificate common names to role "
              "arrays"));
    }
    RoleMap map;
    for (const auto& [name, roles] : root.items()) {
      if (name.empty()) {
        return absl::InvalidArgumentError(
            Cat(source, ": got an empty common name, want a non-empty one"));
      }
      if (!roles.is_array()) {
        return absl::InvalidArgumentError(
            Cat(source, ": ", Quote(name), ": got ", TypeName(roles), " ",
                DescribeJson(roles), ", want an array of role names"));
      }
      // An empty array is allowed: the name is known and holds no role.
      map.roles_[name];
      for (size_t i = 0; i < roles.size(); ++i) {
        const Json& role = roles[i];
        const std::optional<Role> parsed =
            role.is_string() ? ParseRole(role.get<std::string>())
                             : std::nullopt;
        if (!parsed) {
          return absl::InvalidArgumentError(Cat(
              source, ": ", Quote(name), "[", i, "]: got ", DescribeJson(role),
              ", want one of \"prover\", \"auditor\", \"admin\""));
        }
        map.Grant(name, *parsed);
      }
    }
    return map;
  }();
  if (!result.ok())
    return ::layerproof::store::PrintableStatus(result.status());
  return result;
}

void RoleMap::Grant(const std::string& common_name, Role role) {
  roles_[common_name].insert(role);
}

bool RoleMap::Has(std::string_view common_name, Role role) const {
  const auto it = roles_.find(common_name);
  if (it == roles_.end()) return false;
  return it->second.count(role) > 0 || it->second.count(Role::kAdmin) > 0;
}

std::string RoleMap::RoleNames(std::string_view common_name) const {
  const auto it = roles_.find(common_name);
  if (it == roles_.end() || it->second.empty()) return "none";
  std::string out;
  for (Role r : it->second) {
    if (!out.empty()) out += ", ";
    out += RoleName(r);
  }
  return out;
}

absl::Status Authorizer::Check(const grpc::ServerContextBase& context,
                               Role role, std::string_view method) const {
  if (insecure_) return absl::OkStatus();
  const std::string cn = PeerCommonName(context);
  if (cn.empty()) {
    return absl::UnauthenticatedError(
        Cat(method, " needs a client certificate with role ", RoleName(role)));
  }
  if (roles_.Has(cn, role)) return absl::OkStatus();
  return absl::PermissionDeniedError(Cat(method, " needs role ", RoleName(role),
                                         "; client certificate CN ", Quote(cn),
                                         " has roles: ", roles_.RoleNames(cn)));
}

std::string Authorizer::PeerCommonName(const grpc::ServerContextBase& context) {
  const std::shared_ptr<const grpc::AuthContext> auth = context.auth_context();
  if (auth == nullptr || !auth->IsPeerAuthenticated()) return "";
  const std::vector<grpc::string_ref> cns =
      auth->FindPropertyValues(GRPC_X509_CN_PROPERTY_NAME);
  if (cns.empty()) return "";
  return std::string(cns.front().data(), cns.front().size());
}

}  // namespace layerproof::rpc
