// The cryptography of the store: SHA-256, Ed25519 and PEM files, on
// OpenSSL's EVP API behind RAII owners (STYLE.md: no owning raw pointers).
//
// Keys are PEM: PKCS#8 for private keys, SubjectPublicKeyInfo for public
// ones. A key's id is the SHA-256 of its 32-byte raw public key; envelopes
// name signers by it. Every function reports OpenSSL errors as a Status
// naming the call; malformed input (PEM, key or signature lengths) is
// InvalidArgument and never reaches an assert.
//
// Thread safety: keys are immutable and may be shared; a Sha256Hasher is
// not thread-safe.
#ifndef LAYERPROOF_STORE_CRYPTO_H_
#define LAYERPROOF_STORE_CRYPTO_H_

#include <sys/types.h>

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace layerproof::store {

using Sha256Hash = std::array<uint8_t, 32>;
using Ed25519Signature = std::array<uint8_t, 64>;
using Bytes = std::span<const uint8_t>;

inline Bytes AsBytes(std::string_view s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

std::string HexEncode(Bytes bytes);
// Lower- or upper-case hex, even length; InvalidArgument otherwise.
absl::StatusOr<std::string> HexDecode(std::string_view hex);

// Incremental SHA-256 (FIPS 180-4) through EVP. OpenSSL failing to hash
// (only possible when memory runs out) and Update or Final after Final are
// programmer errors that abort; no input can cause them.
class Sha256Hasher {
 public:
  Sha256Hasher();
  ~Sha256Hasher();
  Sha256Hasher(const Sha256Hasher&) = delete;
  Sha256Hasher& operator=(const Sha256Hasher&) = delete;

  void Update(Bytes data);
  void Update(std::string_view data) { Update(AsBytes(data)); }
  // Finishes the hash; the hasher must not be updated afterwards.
  Sha256Hash Final();

  static Sha256Hash Digest(Bytes data);
  static Sha256Hash Digest(std::string_view data) {
    return Digest(AsBytes(data));
  }

 private:
  struct Ctx;
  std::unique_ptr<Ctx> ctx_;
};

// Comparison whose time does not depend on where the inputs differ
// (CRYPTO_memcmp); inputs of different lengths compare unequal.
bool ConstantTimeEqual(Bytes a, Bytes b);

// A value type; copies are cheap (32 bytes).
class Ed25519PublicKey {
 public:
  // InvalidArgument unless raw32 is 32 bytes. Whether the bytes encode a
  // curve point is checked by Verify, which rejects every signature under a
  // key that does not.
  static absl::StatusOr<Ed25519PublicKey> FromRaw(Bytes raw32);
  // SubjectPublicKeyInfo PEM ("BEGIN PUBLIC KEY"); InvalidArgument for
  // malformed PEM or a key of another type.
  static absl::StatusOr<Ed25519PublicKey> FromPem(std::string_view pem);

  const std::array<uint8_t, 32>& raw() const { return raw_; }
  std::string ToPem() const;
  // SHA-256 of raw().
  Sha256Hash KeyId() const;
  // OK when `signature` is a valid signature of `message` (RFC 8032);
  // InvalidArgument naming what is wrong otherwise.
  absl::Status Verify(Bytes message, Bytes signature) const;

 private:
  std::array<uint8_t, 32> raw_{};
};

// Owns an EVP_PKEY; move-only. A moved-from key signs nothing (Sign is
// FailedPrecondition) and ToPem returns "".
class Ed25519PrivateKey {
 public:
  // A fresh key from the OS CSPRNG.
  static absl::StatusOr<Ed25519PrivateKey> Generate();
  // The key of a 32-byte RFC 8032 seed (for known-answer tests).
  static absl::StatusOr<Ed25519PrivateKey> FromSeed(Bytes seed32);
  // Unencrypted PKCS#8 PEM ("BEGIN PRIVATE KEY"). InvalidArgument for
  // malformed PEM, an encrypted key (there is never a passphrase prompt) or
  // a key of another type; messages never contain key material.
  static absl::StatusOr<Ed25519PrivateKey> FromPem(std::string_view pem);

  ~Ed25519PrivateKey();
  Ed25519PrivateKey(Ed25519PrivateKey&&) noexcept;
  Ed25519PrivateKey& operator=(Ed25519PrivateKey&&) noexcept;

  std::string ToPem() const;  // PKCS#8, unencrypted
  const Ed25519PublicKey& public_key() const { return public_; }
  absl::StatusOr<Ed25519Signature> Sign(Bytes message) const;

 private:
  struct Key;
  Ed25519PrivateKey();
  std::unique_ptr<Key> key_;
  Ed25519PublicKey public_;
};

// `layerproof keygen`: writes PREFIX.key (mode 0600) and PREFIX.pub (mode
// 0644), whatever the umask, both created exclusively and fsynced, as is
// their directory. Either file existing already is AlreadyExists; on any
// failure neither file is left behind (an existing one is not touched).
absl::Status WriteKeyPair(const Ed25519PrivateKey& key,
                          const std::string& prefix);
// Creates `path` exclusively with `mode` (exactly, whatever the umask),
// writes `data` and syncs it; AlreadyExists when it exists. On failure a
// file this call created is removed again. (WriteKeyPair's files, and the
// demo's certificates and keys.)
absl::Status CreateFileExclusive(const std::string& path, std::string_view data,
                                 mode_t mode);
// Reads a PEM key file (at most 64 KiB). Errors name the path. The private
// key file's permissions are not checked: keep it 0600, as WriteKeyPair
// leaves it.
absl::StatusOr<Ed25519PrivateKey> ReadPrivateKeyFile(const std::string& path);
absl::StatusOr<Ed25519PublicKey> ReadPublicKeyFile(const std::string& path);

}  // namespace layerproof::store

#endif  // LAYERPROOF_STORE_CRYPTO_H_
