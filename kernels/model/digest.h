// The model digest: one SHA-256 that names a model's exact weights and
// architecture, committed by the prover and checked by the verifier.
//
//   tensor hash  T(name) = SHA-256("layerproof.tensor.v1\0" || u32 len(name)
//                          || name || u8 dtype || u32 ndim || u64 dims...
//                          || raw bytes)        (integers little-endian)
//   config hash  C = SHA-256("layerproof.config.v1\0" || WriteModelConfig(c))
//   digest       RFC 6962 Merkle tree hash over the leaves T(name) for the
//                tensors sorted by name, then C (leaf prefix 0x00, node 0x01)
//
// dtype codes: F32 = 0, BF16 = 1, F16 = 2, Q8_0 = 3, Q4_0 = 4, Q4_K = 5,
// Q6_K = 6 (kernels/dtype.h order; a quantized tensor's raw bytes are its
// GGUF blocks, rows in Hugging Face order). The
// config is hashed in its canonical form, so whitespace or unknown keys in
// config.json do not change the digest but every field the engine uses does.
//
// Hashing a multi-GB model takes seconds, so Load caches the digest beside
// the model in `.layerproof-digest.json`, keyed by each file's size and
// mtime; `--verify` re-hashes. Thread safety: pure functions, except the
// cache files they read and write.
#ifndef LAYERPROOF_KERNELS_MODEL_DIGEST_H_
#define LAYERPROOF_KERNELS_MODEL_DIGEST_H_

#include <functional>
#include <map>
#include <string>

#include "kernels/model/config.h"
#include "kernels/model/safetensors.h"
#include "kernels/sha256.h"
#include "kernels/status.h"

namespace layerproof::kernels::model {

struct ModelDigest {
  Sha256Digest root{};
  Sha256Digest config_hash{};
  std::map<std::string, Sha256Digest> tensor_hashes;  // by name
  bool from_cache = false;  // true when read from the cache, not re-hashed
};

inline constexpr char kDigestCacheFile[] = ".layerproof-digest.json";
// The cache of the GGUF file `gguf_name` (a directory may hold several).
inline std::string GgufDigestCacheName(const std::string& gguf_name) {
  return ".layerproof-digest." + gguf_name + ".json";
}

Sha256Digest HashTensor(const TensorView& t);
Sha256Digest HashConfig(const ModelConfig& c);
// Root over the tensor hashes (sorted by name) and the config hash.
Sha256Digest DigestRoot(
    const std::map<std::string, Sha256Digest>& tensor_hashes,
    const Sha256Digest& config_hash);

// Bytes hashed so far and in all; called from the hashing threads (must be
// thread-safe), after each tensor.
using DigestProgress = std::function<void(int64_t done, int64_t total)>;

// Hashes every tensor (in parallel over up to `threads` threads).
ModelDigest ComputeModelDigest(const ModelConfig& config,
                               const std::map<std::string, TensorView>& tensors,
                               int threads,
                               const DigestProgress& progress = {});

// The digest of the model in `dir`, from the cache when every file's size
// and mtime match it (and `verify` is false), else by hashing; with
// `verify`, a cache that disagrees with the fresh hash is FailedPrecondition.
// The cache is `dir`/`cache_name`; `files` are the files the key covers
// (config.json and the safetensors files, or the GGUF file), named relative
// to `dir`. A missing or malformed cache is ignored; writing it is
// best effort (temp file + rename; a read-only directory stays uncached).
StatusOr<ModelDigest> LoadOrComputeDigest(
    const std::string& dir, const std::string& cache_name,
    const std::vector<std::string>& files, const ModelConfig& config,
    const std::map<std::string, TensorView>& tensors, bool verify,
    bool write_cache, const DigestProgress& progress = {});

}  // namespace layerproof::kernels::model

#endif  // LAYERPROOF_KERNELS_MODEL_DIGEST_H_
