#include "verifier/prover_registry.h"

#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <utility>

#include "kernels/status.h"
#include "nlohmann/json.hpp"
#include "store/internal/str_cat.h"
#include "store/status.h"

namespace layerproof::verifier {
namespace {

using store::internal::Cat;

constexpr size_t kMaxRegistryBytes = 1 << 20;
// As serve prover's --retention-hours (ten years).
constexpr int64_t kMaxRetentionHours = 24 * 3650;

absl::Status Invalid(std::string_view source, std::string_view field,
                     std::string_view problem) {
  return absl::InvalidArgumentError(Cat(source, ": ", field, ": ", problem));
}

}  // namespace

absl::StatusOr<std::vector<ProverRegistration>> ParseProverRegistry(
    std::string_view json, std::string_view source, const std::string& base_dir,
    const rpc::TlsOptions& opening_tls) {
  absl::StatusOr<std::vector<ProverRegistration>> result =
      [&]() -> absl::StatusOr<std::vector<ProverRegistration>> {
    nlohmann::json doc = nlohmann::json::parse(json, nullptr,
                                               /*allow_exceptions=*/false);
    if (doc.is_discarded()) return Invalid(source, "(file)", "not valid JSON");
    if (!doc.is_object()) return Invalid(source, "(file)", "want an object");
    for (const auto& [key, value] : doc.items()) {
      if (key != "provers") {
        return Invalid(source, key, "unknown key, want only \"provers\"");
      }
    }
    if (!doc.contains("provers") || !doc["provers"].is_array()) {
      return Invalid(source, "provers", "missing or not an array");
    }
    std::vector<ProverRegistration> out;
    std::set<std::string> ids;
    std::set<store::Sha256Hash> keys;
    const nlohmann::json& provers = doc["provers"];
    for (size_t i = 0; i < provers.size(); ++i) {
      const std::string at = Cat("provers[", i, "]");
      const nlohmann::json& p = provers[i];
      if (!p.is_object()) return Invalid(source, at, "want an object");
      for (const auto& [key, value] : p.items()) {
        if (key != "id" && key != "public_key_file" &&
            key != "opening_address" && key != "retention_hours") {
          return Invalid(source, Cat(at, ".", key),
                         "unknown key, want id, public_key_file, "
                         "opening_address or retention_hours");
        }
        if (key == "retention_hours") {
          if (!value.is_number_integer() || value.get<int64_t>() < 1 ||
              value.get<int64_t>() > kMaxRetentionHours) {
            return Invalid(source, Cat(at, ".retention_hours"),
                           Cat("want an integer 1..", kMaxRetentionHours));
          }
          continue;
        }
        if (!value.is_string()) {
          return Invalid(source, Cat(at, ".", key), "want a string");
        }
      }
      ProverRegistration r;
      r.opening_tls = opening_tls;
      if (!p.contains("id") || p["id"].get<std::string>().empty()) {
        return Invalid(source, Cat(at, ".id"), "missing or empty");
      }
      r.prover_id = p["id"].get<std::string>();
      for (char c : r.prover_id) {
        if (c < 0x21 || c > 0x7e) {
          return Invalid(source, Cat(at, ".id"),
                         Cat("\"", r.prover_id,
                             "\": want printable ASCII without spaces"));
        }
      }
      if (!ids.insert(r.prover_id).second) {
        return Invalid(source, Cat(at, ".id"),
                       Cat("\"", r.prover_id, "\" registered twice"));
      }
      if (!p.contains("public_key_file") ||
          p["public_key_file"].get<std::string>().empty()) {
        return Invalid(source, Cat(at, ".public_key_file"), "missing or empty");
      }
      std::filesystem::path key_path = p["public_key_file"].get<std::string>();
      if (key_path.is_relative()) key_path = base_dir / key_path;
      absl::StatusOr<store::Ed25519PublicKey> key =
          store::ReadPublicKeyFile(key_path.string());
      if (!key.ok()) {
        return absl::Status(key.status().code(),
                            Cat(source, ": ", at, ".public_key_file: ",
                                std::string(key.status().message())));
      }
      r.key = *key;
      if (!keys.insert(r.key.KeyId()).second) {
        return Invalid(source, Cat(at, ".public_key_file"),
                       Cat(key_path.string(),
                           ": key already registered for another prover"));
      }
      if (p.contains("opening_address")) {
        r.opening_address = p["opening_address"].get<std::string>();
      }
      if (p.contains("retention_hours")) {
        r.retention = absl::Hours(p["retention_hours"].get<int64_t>());
      }
      out.push_back(std::move(r));
    }
    return out;
  }();
  if (!result.ok())
    return ::layerproof::store::PrintableStatus(result.status());
  return result;
}

absl::StatusOr<std::vector<ProverRegistration>> LoadProverRegistry(
    const std::string& path, const rpc::TlsOptions& opening_tls) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(Cat(path, ": cannot open"));
  std::string text;
  text.resize(kMaxRegistryBytes + 1);
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(in.gcount()));
  if (text.size() > kMaxRegistryBytes) {
    return absl::InvalidArgumentError(
        Cat(path, ": larger than ", kMaxRegistryBytes, " bytes"));
  }
  const std::string base = std::filesystem::path(path).parent_path().string();
  return ParseProverRegistry(text, path, base.empty() ? "." : base,
                             opening_tls);
}

ProverDirectory::ProverDirectory()
    : keys_(std::make_shared<const store::KeyRing>()) {}

absl::Status ProverDirectory::Add(const ProverRegistration& prover) {
  absl::MutexLock lock(&mu_);
  const store::Sha256Hash key_id = prover.key.KeyId();
  auto by_id = by_id_.find(prover.prover_id);
  if (by_id != by_id_.end() && by_id->second.key.KeyId() != key_id) {
    return absl::AlreadyExistsError(
        Cat("prover \"", prover.prover_id,
            "\" is already registered with another key"));
  }
  auto by_key = id_by_key_.find(key_id);
  if (by_key != id_by_key_.end() && by_key->second != prover.prover_id) {
    return absl::AlreadyExistsError(
        Cat("the key of prover \"", prover.prover_id,
            "\" is already registered for prover \"", by_key->second, "\""));
  }
  by_id_[prover.prover_id] = prover;
  id_by_key_[key_id] = prover.prover_id;
  auto ring = std::make_shared<store::KeyRing>(*keys_);
  ring->Add(prover.key);
  keys_ = std::move(ring);
  return absl::OkStatus();
}

std::shared_ptr<const store::KeyRing> ProverDirectory::keys() const {
  absl::MutexLock lock(&mu_);
  return keys_;
}

std::optional<std::string> ProverDirectory::ProverOfKey(
    const store::Sha256Hash& key_id) const {
  absl::MutexLock lock(&mu_);
  auto it = id_by_key_.find(key_id);
  if (it == id_by_key_.end()) return std::nullopt;
  return it->second;
}

std::optional<ProverRegistration> ProverDirectory::Find(
    std::string_view prover_id) const {
  absl::MutexLock lock(&mu_);
  auto it = by_id_.find(prover_id);
  if (it == by_id_.end()) return std::nullopt;
  return it->second;
}

}  // namespace layerproof::verifier
