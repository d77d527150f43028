#include "kernels/model/internal/digest_cache.h"

#include <cstdint>
#include <utility>

#include "kernels/model/json_fields.h"

namespace layerproof::kernels::model::internal {
namespace {

constexpr char kFormat[] = "layerproof.digest-cache.v1";
constexpr char kSpec[] = "layerproof.tensor.v1 layerproof.config.v1 rfc6962";
constexpr uint64_t kMaxCacheBytes = 256ull << 20;

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::optional<Sha256Digest> ParseHex(const Json& v) {
  if (!v.is_string()) return std::nullopt;
  const std::string& s = v.get_ref<const std::string&>();
  Sha256Digest d;
  if (s.size() != 2 * d.size()) return std::nullopt;
  for (size_t i = 0; i < d.size(); ++i) {
    const int hi = HexValue(s[2 * i]), lo = HexValue(s[2 * i + 1]);
    if (hi < 0 || lo < 0) return std::nullopt;
    d[i] = uint8_t(hi * 16 + lo);
  }
  return d;
}

std::optional<CachedFile> ParseFile(const Json& v) {
  if (!v.is_object() || !v.contains("name") || !v.contains("size") ||
      !v.contains("mtime_ns") || !v["name"].is_string()) {
    return std::nullopt;
  }
  const std::optional<int64_t> size = JsonInt(v["size"]);
  const std::optional<int64_t> mtime = JsonInt(v["mtime_ns"]);
  if (!size || *size < 0 || !mtime) return std::nullopt;
  CachedFile f;
  f.name = v["name"].get<std::string>();
  f.stamp.size = uint64_t(*size);
  f.stamp.mtime_ns = *mtime;
  return f;
}

}  // namespace

std::optional<CachedDigest> ReadDigestCache(
    const std::string& path, const std::vector<CachedFile>& files) {
  StatusOr<std::string> text = ReadSmallFile(path, kMaxCacheBytes);
  if (!text.ok()) return std::nullopt;
  StatusOr<Json> parsed = ParseJson(*text, path);
  if (!parsed.ok()) return std::nullopt;
  const Json& j = *parsed;
  if (!j.is_object() || j.value("format", Json()) != kFormat ||
      j.value("spec", Json()) != kSpec || !j.contains("files") ||
      !j["files"].is_array() || !j.contains("tensors") ||
      !j["tensors"].is_object()) {
    return std::nullopt;
  }
  std::vector<CachedFile> keyed;
  for (const Json& f : j["files"]) {
    std::optional<CachedFile> parsed_file = ParseFile(f);
    if (!parsed_file) return std::nullopt;
    keyed.push_back(std::move(*parsed_file));
  }
  if (keyed != files) return std::nullopt;
  CachedDigest c;
  const std::optional<Sha256Digest> config_hash =
      ParseHex(j.value("config_hash", Json()));
  const std::optional<Sha256Digest> root = ParseHex(j.value("root", Json()));
  if (!config_hash || !root) return std::nullopt;
  c.config_hash = *config_hash;
  c.root = *root;
  for (const auto& [name, hex] : j["tensors"].items()) {
    const std::optional<Sha256Digest> h = ParseHex(hex);
    if (!h) return std::nullopt;
    c.tensor_hashes.emplace(name, *h);
  }
  return c;
}

bool CacheIsConsistent(const CachedDigest& cached,
                       const Sha256Digest& config_hash,
                       const std::map<std::string, TensorView>& tensors) {
  if (cached.config_hash != config_hash ||
      cached.tensor_hashes.size() != tensors.size()) {
    return false;
  }
  for (const auto& [name, t] : tensors) {
    if (!cached.tensor_hashes.count(name)) return false;
  }
  return DigestRoot(cached.tensor_hashes, config_hash) == cached.root;
}

Status WriteDigestCache(const std::string& path,
                        const std::vector<CachedFile>& files,
                        const ModelDigest& digest) {
  Json j = Json::object();
  j["format"] = kFormat;
  j["spec"] = kSpec;
  Json list = Json::array();
  for (const CachedFile& f : files) {
    list.push_back({{"name", f.name},
                    {"size", f.stamp.size},
                    {"mtime_ns", f.stamp.mtime_ns}});
  }
  j["files"] = std::move(list);
  j["config_hash"] = HexDigest(digest.config_hash);
  j["root"] = HexDigest(digest.root);
  Json tensors = Json::object();
  for (const auto& [name, h] : digest.tensor_hashes)
    tensors[name] = HexDigest(h);
  j["tensors"] = std::move(tensors);
  return WriteFileAtomically(path, j.dump(2) + "\n");
}

}  // namespace layerproof::kernels::model::internal
