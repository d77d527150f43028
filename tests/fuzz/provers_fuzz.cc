// Fuzzes the provers registry file (verifier/prover_registry.h
// ParseProverRegistry), the verifier's provers.json, with key files in a
// temporary directory: prover-1.pub and prover-2.pub (the fixed keys),
// keys/prover-1.pub (the first key again) and bad.pub (not a key). Inputs
// that name a key file outside that directory are skipped, so the fuzzer
// never opens a device or anything else on the machine.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <system_error>

#include "nlohmann/json.hpp"
#include "tests/fuzz/fuzz_check.h"
#include "tests/fuzz/fuzz_keys.h"
#include "verifier/prover_registry.h"

namespace fs = std::filesystem;
namespace fuzz = layerproof::fuzz;

namespace {

// The key directory, made once and removed at exit.
struct KeyDir {
  fs::path path;
  KeyDir() {
    path = fs::temp_directory_path() /
           ("lp_fuzz_provers_" + std::to_string(::getpid()));
    fs::create_directories(path / "keys");
    const std::string k1 = fuzz::ProverKey().public_key().ToPem();
    const std::string k2 = fuzz::VerifierKey().public_key().ToPem();
    std::ofstream(path / "prover-1.pub") << k1;
    std::ofstream(path / "prover-2.pub") << k2;
    std::ofstream(path / "keys" / "prover-1.pub") << k1;
    std::ofstream(path / "bad.pub") << "-----BEGIN PUBLIC KEY-----\nAAAA\n";
  }
  ~KeyDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

const KeyDir& Keys() {
  static const KeyDir dir;
  return dir;
}

// Whether every public_key_file the document names stays inside `base`
// (lexically: the directory holds no links).
bool KeyPathsInside(const nlohmann::json& doc, const fs::path& base) {
  if (!doc.is_object() || !doc.contains("provers")) return true;
  const nlohmann::json& provers = doc["provers"];
  if (!provers.is_array()) return true;
  for (const nlohmann::json& p : provers) {
    if (!p.is_object() || !p.contains("public_key_file")) continue;
    const nlohmann::json& file = p["public_key_file"];
    if (!file.is_string()) continue;
    const fs::path named = file.get<std::string>();
    const fs::path resolved = (base / named).lexically_normal();
    if (named.is_absolute() ||
        resolved.string().rfind(base.string() + "/", 0) != 0) {
      return false;
    }
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view json(reinterpret_cast<const char*>(data), size);
  const KeyDir& keys = Keys();
  const nlohmann::json doc = nlohmann::json::parse(json, nullptr, false);
  if (!doc.is_discarded() && !KeyPathsInside(doc, keys.path)) return 0;
  auto registry = layerproof::verifier::ParseProverRegistry(
      json, "provers.json", keys.path.string());
  LP_FUZZ_CHECK_PRINTABLE(registry.status());
  if (!registry.ok()) return 0;
  layerproof::verifier::ProverDirectory directory;
  for (const auto& prover : *registry) {
    LP_FUZZ_CHECK(!prover.prover_id.empty());
    LP_FUZZ_CHECK_PRINTABLE(directory.Add(prover));
  }
  return 0;
}
