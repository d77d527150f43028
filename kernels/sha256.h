// SHA-256 (FIPS 180-4), self-contained so kernels/ builds without OpenSSL on
// bare GPU machines and in the aarch64 cross build. Used for golden vectors
// and per-layer hashes; store/ uses OpenSSL's for everything else. On x86
// CPUs with the SHA extensions it compresses with them (~6x faster, the
// per-layer hashes are on the prover's engine thread); the digest is the
// same either way, and the tests compare both paths.
// Thread safety: a Sha256 object is not thread-safe; distinct objects are.
#ifndef LAYERPROOF_KERNELS_SHA256_H_
#define LAYERPROOF_KERNELS_SHA256_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace layerproof::kernels {

using Sha256Digest = std::array<uint8_t, 32>;

class Sha256 {
 public:
  // `accelerated`: use the SHA extensions when the CPU has them (false
  // forces the portable code, for tests and benchmarks).
  explicit Sha256(bool accelerated = true);
  // Whether this CPU has the SHA extensions this build can use.
  static bool AcceleratedAvailable();
  void Update(const void* data, size_t len);
  void Update(std::string_view s) { Update(s.data(), s.size()); }
  // Finishes the hash; the object must not be updated afterwards.
  Sha256Digest Final();

  static Sha256Digest Hash(const void* data, size_t len);

 private:
  void Compress(const uint8_t* block);  // portable, one block
  void CompressBlocks(const uint8_t* data, size_t blocks);
  std::array<uint32_t, 8> state_;
  std::array<uint8_t, 64> buffer_;
  size_t buffered_ = 0;
  uint64_t total_bytes_ = 0;
  bool accelerated_ = false;
};

std::string HexDigest(const Sha256Digest& d);

}  // namespace layerproof::kernels

#endif  // LAYERPROOF_KERNELS_SHA256_H_
