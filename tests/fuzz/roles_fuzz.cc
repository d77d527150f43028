// Fuzzes the roles file (rpc/roles.h RoleMap::Parse), the --roles JSON a
// node reads at start. A map that parsed answers Has and RoleNames for
// every name it grants.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "nlohmann/json.hpp"
#include "rpc/roles.h"
#include "tests/fuzz/fuzz_check.h"

using layerproof::rpc::Role;
using layerproof::rpc::RoleMap;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view json(reinterpret_cast<const char*>(data), size);
  auto roles = RoleMap::Parse(json, "roles.json");
  LP_FUZZ_CHECK_PRINTABLE(roles.status());
  if (!roles.ok()) return 0;
  // The names it holds, read back with a lenient parse.
  const nlohmann::json doc = nlohmann::json::parse(json, nullptr, false);
  if (!doc.is_object()) return 0;
  for (const auto& [name, value] : doc.items()) {
    const bool admin = roles->Has(name, Role::kAdmin);
    for (Role r : {Role::kProver, Role::kAuditor, Role::kClient}) {
      if (admin) LP_FUZZ_CHECK(roles->Has(name, r));
    }
    (void)roles->RoleNames(name);
  }
  LP_FUZZ_CHECK(roles->RoleNames("\x01not a name") == "none");
  return 0;
}
