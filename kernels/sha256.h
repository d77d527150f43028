// SHA-256 (FIPS 180-4), self-contained so kernels/ builds without OpenSSL on
// bare GPU machines and in the aarch64 cross build. Used for golden vectors
// and per-layer hashes; store/ uses OpenSSL's for everything else.
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
  Sha256();
  void Update(const void* data, size_t len);
  void Update(std::string_view s) { Update(s.data(), s.size()); }
  // Finishes the hash; the object must not be updated afterwards.
  Sha256Digest Final();

  static Sha256Digest Hash(const void* data, size_t len);

 private:
  void Compress(const uint8_t* block);
  std::array<uint32_t, 8> state_;
  std::array<uint8_t, 64> buffer_;
  size_t buffered_ = 0;
  uint64_t total_bytes_ = 0;
};

std::string HexDigest(const Sha256Digest& d);

}  // namespace layerproof::kernels

#endif  // LAYERPROOF_KERNELS_SHA256_H_
