#include "kernels/model/digest.h"

#include <algorithm>
#include <atomic>
#include <optional>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "kernels/model/internal/digest_cache.h"
#include "kernels/model/internal/errors.h"
#include "kernels/model/internal/file_io.h"

namespace layerproof::kernels::model {
namespace {

constexpr char kTensorDomain[] = "layerproof.tensor.v1";  // + its NUL
constexpr char kConfigDomain[] = "layerproof.config.v1";
constexpr int kMaxHashThreads = 16;

void PutU32(Sha256& h, uint32_t v) {
  uint8_t b[4];
  for (int i = 0; i < 4; ++i) b[i] = uint8_t(v >> (8 * i));
  h.Update(b, 4);
}

void PutU64(Sha256& h, uint64_t v) {
  uint8_t b[8];
  for (int i = 0; i < 8; ++i) b[i] = uint8_t(v >> (8 * i));
  h.Update(b, 8);
}

// RFC 6962 section 2.1: MTH over leaves [begin, end), end - begin >= 1.
Sha256Digest MerkleTreeHash(const std::vector<Sha256Digest>& leaves,
                            size_t begin, size_t end) {
  Sha256 h;
  const size_t n = end - begin;
  if (n == 1) {
    const uint8_t prefix = 0x00;
    h.Update(&prefix, 1);
    h.Update(leaves[begin].data(), leaves[begin].size());
    return h.Final();
  }
  size_t k = 1;
  while (k * 2 < n) k *= 2;  // the largest power of two < n
  const Sha256Digest left = MerkleTreeHash(leaves, begin, begin + k);
  const Sha256Digest right = MerkleTreeHash(leaves, begin + k, end);
  const uint8_t prefix = 0x01;
  h.Update(&prefix, 1);
  h.Update(left.data(), left.size());
  h.Update(right.data(), right.size());
  return h.Final();
}

int DefaultThreads() {
  const unsigned n = std::thread::hardware_concurrency();
  return std::clamp(int(n), 1, kMaxHashThreads);
}

// With `verify`: the fresh digest against a cache whose file stamps match.
Status CompareWithCache(const std::string& cache_path,
                        const internal::CachedDigest& cached,
                        const ModelDigest& fresh) {
  auto disagree = [&](const std::string& what, const Sha256Digest* was,
                      const Sha256Digest* is) {
    return internal::FailedPreconditionError(
        cache_path + ": the digest cache disagrees with the weights: " + what +
        ": cached " + (was ? HexDigest(*was) : "nothing") + ", computed " +
        (is ? HexDigest(*is) : "nothing"));
  };
  if (cached.config_hash != fresh.config_hash) {
    return disagree("config hash", &cached.config_hash, &fresh.config_hash);
  }
  // The first differing name in sorted order, from either side.
  auto a = cached.tensor_hashes.begin();
  auto b = fresh.tensor_hashes.begin();
  while (a != cached.tensor_hashes.end() || b != fresh.tensor_hashes.end()) {
    if (b == fresh.tensor_hashes.end() ||
        (a != cached.tensor_hashes.end() && a->first < b->first)) {
      return disagree("tensor " + a->first, &a->second, nullptr);
    }
    if (a == cached.tensor_hashes.end() || b->first < a->first) {
      return disagree("tensor " + b->first, nullptr, &b->second);
    }
    if (a->second != b->second) {
      return disagree("tensor " + a->first, &a->second, &b->second);
    }
    ++a;
    ++b;
  }
  if (cached.root != fresh.root) {
    return disagree("root", &cached.root, &fresh.root);
  }
  return OkStatus();
}

}  // namespace

Sha256Digest HashTensor(const TensorView& t) {
  Sha256 h;
  h.Update(kTensorDomain, sizeof(kTensorDomain));  // includes the NUL
  PutU32(h, uint32_t(t.name.size()));
  h.Update(t.name);
  const uint8_t dtype = uint8_t(t.dtype);
  h.Update(&dtype, 1);
  PutU32(h, uint32_t(t.shape.size()));
  for (int64_t d : t.shape) PutU64(h, uint64_t(d));
  if (t.bytes > 0) h.Update(t.data, size_t(t.bytes));
  return h.Final();
}

Sha256Digest HashConfig(const ModelConfig& c) {
  Sha256 h;
  h.Update(kConfigDomain, sizeof(kConfigDomain));
  h.Update(WriteModelConfig(c));
  return h.Final();
}

Sha256Digest DigestRoot(
    const std::map<std::string, Sha256Digest>& tensor_hashes,
    const Sha256Digest& config_hash) {
  std::vector<Sha256Digest> leaves;
  leaves.reserve(tensor_hashes.size() + 1);
  for (const auto& [name, hash] : tensor_hashes) leaves.push_back(hash);
  leaves.push_back(config_hash);
  return MerkleTreeHash(leaves, 0, leaves.size());
}

ModelDigest ComputeModelDigest(const ModelConfig& config,
                               const std::map<std::string, TensorView>& tensors,
                               int threads, const DigestProgress& progress) {
  std::vector<const std::string*> names;
  std::vector<const TensorView*> views;
  for (const auto& [name, t] : tensors) {
    names.push_back(&name);
    views.push_back(&t);
  }
  std::vector<Sha256Digest> hashes(views.size());
  // Largest first, so one huge tensor does not start last.
  std::vector<size_t> order(views.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return views[a]->bytes > views[b]->bytes;
  });
  int64_t total_bytes = 0;
  for (const TensorView* v : views) total_bytes += int64_t(v->bytes);
  std::atomic<size_t> next{0};
  std::atomic<int64_t> done_bytes{0};
  auto work = [&] {
    for (size_t i; (i = next.fetch_add(1)) < order.size();) {
      hashes[order[i]] = HashTensor(*views[order[i]]);
      const int64_t done =
          done_bytes.fetch_add(int64_t(views[order[i]]->bytes)) +
          int64_t(views[order[i]]->bytes);
      if (progress) progress(done, total_bytes);
    }
  };
  std::vector<std::thread> pool;
  const size_t helpers = std::min(size_t(std::max(threads, 1)),
                                  std::max<size_t>(order.size(), 1)) -
                         1;
  for (size_t i = 0; i < helpers; ++i) {
    try {
      pool.emplace_back(work);
    } catch (const std::system_error&) {
      break;  // fewer threads: this one still does the rest
    }
  }
  work();
  for (std::thread& t : pool) t.join();

  ModelDigest d;
  for (size_t i = 0; i < views.size(); ++i) {
    d.tensor_hashes.emplace(*names[i], hashes[i]);
  }
  d.config_hash = HashConfig(config);
  d.root = DigestRoot(d.tensor_hashes, d.config_hash);
  return d;
}

StatusOr<ModelDigest> LoadOrComputeDigest(
    const std::string& dir, const std::string& cache_name,
    const std::vector<std::string>& files, const ModelConfig& config,
    const std::map<std::string, TensorView>& tensors, bool verify,
    bool write_cache, const DigestProgress& progress) {
  // Stamp the files before hashing: a file changed while it is hashed then
  // leaves a stale key, and the next load re-hashes.
  std::vector<internal::CachedFile> stamps;
  bool stamped = true;
  for (const std::string& f : files) {
    StatusOr<internal::FileStamp> s =
        internal::StatFile(internal::JoinPath(dir, f));
    if (!s.ok()) {
      stamped = false;
      break;
    }
    stamps.push_back({f, *s});
  }
  const std::string cache_path = internal::JoinPath(dir, cache_name);
  std::optional<internal::CachedDigest> cached;
  if (stamped) cached = internal::ReadDigestCache(cache_path, stamps);

  const Sha256Digest config_hash = HashConfig(config);
  if (!verify && cached &&
      internal::CacheIsConsistent(*cached, config_hash, tensors)) {
    ModelDigest d;
    d.root = cached->root;
    d.config_hash = cached->config_hash;
    d.tensor_hashes = std::move(cached->tensor_hashes);
    d.from_cache = true;
    return d;
  }
  ModelDigest fresh =
      ComputeModelDigest(config, tensors, DefaultThreads(), progress);
  if (verify && cached) {
    LP_RETURN_IF_ERROR(CompareWithCache(cache_path, *cached, fresh));
  }
  if (write_cache && stamped) {
    // Best effort: a read-only model directory just stays uncached.
    (void)internal::WriteDigestCache(cache_path, stamps, fresh);
  }
  return fresh;
}

}  // namespace layerproof::kernels::model
