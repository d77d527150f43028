// `layerproof keygen --out PREFIX`: writes a fresh Ed25519 key pair,
// PREFIX.key (PKCS#8 PEM, mode 0600, never overwritten) and PREFIX.pub
// (SubjectPublicKeyInfo PEM), and prints the key id. Exit 0 on success,
// 1 when the key cannot be made or written, 2 on a usage error.
#include <cstdio>
#include <string>
#include <vector>

#include "cli/flags.h"
#include "cli/print_error.h"
#include "cli/store_commands.h"
#include "store/crypto.h"

namespace layerproof::cli {
namespace {

constexpr char kKeygenUsage[] =
    "usage: layerproof keygen --out PREFIX [--json]\n"
    "  Writes a new Ed25519 key pair: PREFIX.key (private, PKCS#8 PEM,\n"
    "  mode 0600; an existing file is never overwritten) and PREFIX.pub\n"
    "  (public, PEM). Prints the key id: the SHA-256 of the raw public key\n"
    "  (--json: as one JSON object).\n"
    "exit: 0 written, 1 failed (e.g. the files exist), 2 usage\n";

int KeygenUsage(const std::string& error) {
  if (!error.empty()) PrintError("layerproof", error);
  std::fputs(kKeygenUsage, stderr);
  return 2;
}

}  // namespace

int RunKeygen(const std::vector<std::string>& args) {
  Flags flags({"--out"}, {"--help", "--json"});
  std::string error;
  if (!flags.Parse(args, &error)) return KeygenUsage(error);
  if (flags.Has("--help")) {
    std::fputs(kKeygenUsage, stdout);
    return 0;
  }
  const std::string prefix = flags.Get("--out");
  if (prefix.empty()) return KeygenUsage("--out PREFIX is required");

  auto key = store::Ed25519PrivateKey::Generate();
  if (!key.ok()) {
    PrintError("layerproof: keygen", key.status().ToString());
    return 1;
  }
  if (const absl::Status status = store::WriteKeyPair(*key, prefix);
      !status.ok()) {
    PrintError("layerproof: keygen", status.ToString());
    return 1;
  }
  const std::string key_id =
      store::HexEncode(store::Bytes(key->public_key().KeyId()));
  // The prefix is printed as given; --json quotes it (a path with a quote
  // or backslash is refused there rather than escaped).
  if (flags.Has("--json")) {
    if (prefix.find_first_of("\"\\") != std::string::npos) {
      return KeygenUsage("--json: --out must not contain '\"' or '\\'");
    }
    std::printf(
        "{\"key_id\": \"%s\", \"private_key\": \"%s.key\", "
        "\"public_key\": \"%s.pub\"}\n",
        key_id.c_str(), prefix.c_str(), prefix.c_str());
    return 0;
  }
  std::printf("key_id: %s\nprivate_key: %s.key\npublic_key: %s.pub\n",
              key_id.c_str(), prefix.c_str(), prefix.c_str());
  return 0;
}

}  // namespace layerproof::cli
