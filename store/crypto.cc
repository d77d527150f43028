#include "store/crypto.h"

#include <fcntl.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/objects.h>
#include <openssl/pem.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "store/status.h"

namespace layerproof::store {
namespace {

// RAII owners for OpenSSL handles.
struct MdCtxFree {
  void operator()(EVP_MD_CTX* p) const { EVP_MD_CTX_free(p); }
};
struct PkeyFree {
  void operator()(EVP_PKEY* p) const { EVP_PKEY_free(p); }
};
struct PkeyCtxFree {
  void operator()(EVP_PKEY_CTX* p) const { EVP_PKEY_CTX_free(p); }
};
struct BioFree {
  void operator()(BIO* p) const { BIO_free_all(p); }
};
using MdCtxPtr = std::unique_ptr<EVP_MD_CTX, MdCtxFree>;
using PkeyPtr = std::unique_ptr<EVP_PKEY, PkeyFree>;
using PkeyCtxPtr = std::unique_ptr<EVP_PKEY_CTX, PkeyCtxFree>;
using BioPtr = std::unique_ptr<BIO, BioFree>;

constexpr size_t kEd25519KeyBytes = 32;
constexpr size_t kEd25519SignatureBytes = 64;
// Far larger than any Ed25519 PEM; bounds what a key file read may allocate.
constexpr off_t kMaxKeyFileBytes = 64 * 1024;

// Drains OpenSSL's thread-local error queue into "call: reason; reason".
// Only the library/reason strings are used, never ERR's attached data, so no
// key material can leak into a message.
std::string OpenSslError(absl::string_view call) {
  std::string message(call);
  const char* sep = ": ";
  unsigned long code;
  while ((code = ERR_get_error()) != 0) {
    char buf[256];
    ERR_error_string_n(code, buf, sizeof(buf));
    absl::StrAppend(&message, sep, buf);
    sep = "; ";
  }
  if (*sep == ':') absl::StrAppend(&message, ": failed");
  return message;
}

absl::Status OpenSslStatus(absl::StatusCode code, absl::string_view call) {
  return absl::Status(code, OpenSslError(call));
}

// OpenSSL failing where only memory exhaustion can make it fail (hashing,
// writing to a memory BIO) is not recoverable by the caller.
[[noreturn]] void Fatal(absl::string_view call) {
  const std::string message = OpenSslError(call);
  std::fprintf(stderr, "layerproof: fatal OpenSSL error: %s\n",
               message.c_str());
  std::abort();
}

// A passphrase callback that refuses: an encrypted PEM fails to load
// instead of OpenSSL prompting on the terminal.
int NoPassphrase(char*, int, int, void*) { return -1; }

absl::StatusOr<BioPtr> MemoryBioOf(std::string_view pem) {
  if (pem.size() > static_cast<size_t>(INT_MAX)) {
    return absl::InvalidArgumentError(
        absl::StrCat("PEM: ", pem.size(), " bytes is too large"));
  }
  BioPtr bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  if (!bio) {
    return OpenSslStatus(absl::StatusCode::kResourceExhausted,
                         "BIO_new_mem_buf");
  }
  return bio;
}

// The contents of a memory BIO written by PEM_write_bio_*.
std::string DrainMemoryBio(BIO* bio) {
  char* data = nullptr;
  const long n = BIO_get_mem_data(bio, &data);
  if (n <= 0 || data == nullptr) return std::string();
  return std::string(data, static_cast<size_t>(n));
}

absl::Status CheckIsEd25519(const EVP_PKEY* pkey) {
  if (EVP_PKEY_get_id(pkey) == EVP_PKEY_ED25519) return absl::OkStatus();
  const char* name = EVP_PKEY_get0_type_name(pkey);
  return absl::InvalidArgumentError(absl::StrCat(
      "PEM holds ", name ? name : "an unknown", " key, not an Ed25519 key"));
}

absl::StatusOr<std::array<uint8_t, 32>> RawPublicKeyOf(const EVP_PKEY* pkey) {
  std::array<uint8_t, 32> raw{};
  size_t len = raw.size();
  if (EVP_PKEY_get_raw_public_key(pkey, raw.data(), &len) != 1 ||
      len != raw.size()) {
    return OpenSslStatus(absl::StatusCode::kInternal,
                         "EVP_PKEY_get_raw_public_key");
  }
  return raw;
}

absl::Status ErrnoStatus(int err, absl::string_view what) {
  return absl::Status(absl::ErrnoToStatusCode(err),
                      absl::StrCat(what, ": ", std::strerror(err)));
}

absl::Status WriteAll(int fd, std::string_view data, const std::string& path) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoStatus(errno, absl::StrCat("write ", path));
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
  return absl::OkStatus();
}

// Syncs the directory holding `path` so that new entries survive a crash.
// Filesystems that cannot sync a directory (EINVAL) are not an error.
absl::Status SyncParentDirectory(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  const std::string dir = slash == std::string::npos ? "."
                          : slash == 0               ? "/"
                                                     : path.substr(0, slash);
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus(errno, absl::StrCat("open ", dir));
  absl::Status status;
  if (::fsync(fd) != 0 && errno != EINVAL) {
    status = ErrnoStatus(errno, absl::StrCat("fsync ", dir));
  }
  ::close(fd);
  return status;
}

// Reads a whole (small) key file.
absl::StatusOr<std::string> ReadKeyFile(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus(errno, absl::StrCat("open ", path));
  struct FdCloser {
    int fd;
    ~FdCloser() { ::close(fd); }
  } closer{fd};
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    return ErrnoStatus(errno, absl::StrCat("stat ", path));
  }
  if (!S_ISREG(st.st_mode)) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": not a regular file"));
  }
  if (st.st_size > kMaxKeyFileBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": ", st.st_size,
                     " bytes is too large for a key "
                     "file (at most ",
                     kMaxKeyFileBytes, ")"));
  }
  std::string data;
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      OPENSSL_cleanse(data.data(), data.size());
      return ErrnoStatus(err, absl::StrCat("read ", path));
    }
    if (n == 0) break;
    data.append(buf, static_cast<size_t>(n));
    if (data.size() > static_cast<size_t>(kMaxKeyFileBytes)) {
      OPENSSL_cleanse(data.data(), data.size());
      OPENSSL_cleanse(buf, sizeof(buf));
      return absl::InvalidArgumentError(
          absl::StrCat(path, ": too large for a key file"));
    }
  }
  OPENSSL_cleanse(buf, sizeof(buf));
  return data;
}

}  // namespace

absl::Status CreateFileExclusive(const std::string& path, std::string_view data,
                                 mode_t mode) {
  const int fd =
      ::open(path.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, mode);
  if (fd < 0) {
    if (errno == EEXIST) {
      return absl::AlreadyExistsError(
          absl::StrCat(path, " already exists; not overwriting it"));
    }
    return ErrnoStatus(errno, absl::StrCat("create ", path));
  }
  absl::Status status;
  if (::fchmod(fd, mode) != 0) {
    status = ErrnoStatus(errno, absl::StrCat("fchmod ", path));
  }
  if (status.ok()) status = WriteAll(fd, data, path);
  if (status.ok() && ::fsync(fd) != 0) {
    status = ErrnoStatus(errno, absl::StrCat("fsync ", path));
  }
  if (::close(fd) != 0 && status.ok()) {
    status = ErrnoStatus(errno, absl::StrCat("close ", path));
  }
  if (!status.ok()) ::unlink(path.c_str());
  return status;
}

// ---------------------------------------------------------------------------
// Hex.

std::string HexEncode(Bytes bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out(bytes.size() * 2, '\0');
  for (size_t i = 0; i < bytes.size(); ++i) {
    out[2 * i] = kDigits[bytes[i] >> 4];
    out[2 * i + 1] = kDigits[bytes[i] & 0xf];
  }
  return out;
}

absl::StatusOr<std::string> HexDecode(std::string_view hex) {
  if (hex.size() % 2 != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("hex: odd length ", hex.size()));
  }
  auto nibble = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  std::string out(hex.size() / 2, '\0');
  for (size_t i = 0; i < hex.size(); i += 2) {
    const int hi = nibble(hex[i]);
    const int lo = nibble(hex[i + 1]);
    if (hi < 0 || lo < 0) {
      const size_t at = hi < 0 ? i : i + 1;
      return absl::InvalidArgumentError(
          absl::StrCat("hex: invalid character at offset ", at));
    }
    out[i / 2] = static_cast<char>((hi << 4) | lo);
  }
  return out;
}

// ---------------------------------------------------------------------------
// SHA-256.

struct Sha256Hasher::Ctx {
  MdCtxPtr md;
  bool finished = false;
};

Sha256Hasher::Sha256Hasher() : ctx_(std::make_unique<Ctx>()) {
  ctx_->md.reset(EVP_MD_CTX_new());
  if (!ctx_->md) Fatal("EVP_MD_CTX_new");
  if (EVP_DigestInit_ex(ctx_->md.get(), EVP_sha256(), nullptr) != 1) {
    Fatal("EVP_DigestInit_ex(SHA-256)");
  }
}

Sha256Hasher::~Sha256Hasher() = default;

void Sha256Hasher::Update(Bytes data) {
  if (ctx_->finished) {
    std::fputs("layerproof: Sha256Hasher::Update after Final\n", stderr);
    std::abort();
  }
  if (data.empty()) return;
  if (EVP_DigestUpdate(ctx_->md.get(), data.data(), data.size()) != 1) {
    Fatal("EVP_DigestUpdate");
  }
}

Sha256Hash Sha256Hasher::Final() {
  if (ctx_->finished) {
    std::fputs("layerproof: Sha256Hasher::Final called twice\n", stderr);
    std::abort();
  }
  ctx_->finished = true;
  Sha256Hash out{};
  unsigned int len = 0;
  if (EVP_DigestFinal_ex(ctx_->md.get(), out.data(), &len) != 1 ||
      len != out.size()) {
    Fatal("EVP_DigestFinal_ex");
  }
  return out;
}

Sha256Hash Sha256Hasher::Digest(Bytes data) {
  Sha256Hash out{};
  unsigned int len = 0;
  if (EVP_Digest(data.data(), data.size(), out.data(), &len, EVP_sha256(),
                 nullptr) != 1 ||
      len != out.size()) {
    Fatal("EVP_Digest(SHA-256)");
  }
  return out;
}

bool ConstantTimeEqual(Bytes a, Bytes b) {
  if (a.size() != b.size()) return false;
  if (a.empty()) return true;
  return CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

// ---------------------------------------------------------------------------
// Ed25519 public keys.

absl::StatusOr<Ed25519PublicKey> Ed25519PublicKey::FromRaw(Bytes raw32) {
  if (raw32.size() != kEd25519KeyBytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Ed25519 public key: got ", raw32.size(), " bytes, want 32"));
  }
  Ed25519PublicKey key;
  std::memcpy(key.raw_.data(), raw32.data(), kEd25519KeyBytes);
  return key;
}

absl::StatusOr<Ed25519PublicKey> Ed25519PublicKey::FromPem(
    std::string_view pem) {
  LP_ASSIGN_OR_RETURN(BioPtr bio, MemoryBioOf(pem));
  ERR_clear_error();  // so that a failure reports only its own errors
  PkeyPtr pkey(PEM_read_bio_PUBKEY(bio.get(), nullptr, NoPassphrase, nullptr));
  if (!pkey) {
    return OpenSslStatus(absl::StatusCode::kInvalidArgument,
                         "PEM_read_bio_PUBKEY (want an Ed25519 public key)");
  }
  LP_RETURN_IF_ERROR(CheckIsEd25519(pkey.get()));
  LP_ASSIGN_OR_RETURN(auto raw, RawPublicKeyOf(pkey.get()));
  Ed25519PublicKey key;
  key.raw_ = raw;
  return key;
}

std::string Ed25519PublicKey::ToPem() const {
  PkeyPtr pkey(EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, nullptr,
                                           raw_.data(), raw_.size()));
  if (!pkey) Fatal("EVP_PKEY_new_raw_public_key");
  BioPtr bio(BIO_new(BIO_s_mem()));
  if (!bio) Fatal("BIO_new");
  if (PEM_write_bio_PUBKEY(bio.get(), pkey.get()) != 1) {
    Fatal("PEM_write_bio_PUBKEY");
  }
  return DrainMemoryBio(bio.get());
}

Sha256Hash Ed25519PublicKey::KeyId() const {
  return Sha256Hasher::Digest(Bytes(raw_));
}

absl::Status Ed25519PublicKey::Verify(Bytes message, Bytes signature) const {
  if (signature.size() != kEd25519SignatureBytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Ed25519 signature: got ", signature.size(), " bytes, want 64"));
  }
  PkeyPtr pkey(EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, nullptr,
                                           raw_.data(), raw_.size()));
  if (!pkey) {
    return OpenSslStatus(absl::StatusCode::kInternal,
                         "EVP_PKEY_new_raw_public_key");
  }
  MdCtxPtr ctx(EVP_MD_CTX_new());
  if (!ctx) {
    return OpenSslStatus(absl::StatusCode::kResourceExhausted,
                         "EVP_MD_CTX_new");
  }
  if (EVP_DigestVerifyInit(ctx.get(), nullptr, nullptr, nullptr, pkey.get()) !=
      1) {
    return OpenSslStatus(absl::StatusCode::kInternal, "EVP_DigestVerifyInit");
  }
  // 1: valid; 0: invalid; negative: malformed (e.g. a key that is not a
  // curve point). Everything but 1 is the same answer to the caller.
  const int rc = EVP_DigestVerify(ctx.get(), signature.data(), signature.size(),
                                  message.data(), message.size());
  if (rc != 1) {
    ERR_clear_error();
    return absl::InvalidArgumentError(
        absl::StrCat("Ed25519 signature does not verify under key ",
                     HexEncode(Bytes(KeyId()))));
  }
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------
// Ed25519 private keys.

struct Ed25519PrivateKey::Key {
  PkeyPtr pkey;
};

Ed25519PrivateKey::Ed25519PrivateKey() : key_(std::make_unique<Key>()) {}
Ed25519PrivateKey::~Ed25519PrivateKey() = default;
Ed25519PrivateKey::Ed25519PrivateKey(Ed25519PrivateKey&&) noexcept = default;
Ed25519PrivateKey& Ed25519PrivateKey::operator=(Ed25519PrivateKey&&) noexcept =
    default;

absl::StatusOr<Ed25519PrivateKey> Ed25519PrivateKey::Generate() {
  PkeyCtxPtr ctx(EVP_PKEY_CTX_new_id(EVP_PKEY_ED25519, nullptr));
  if (!ctx) {
    return OpenSslStatus(absl::StatusCode::kInternal, "EVP_PKEY_CTX_new_id");
  }
  if (EVP_PKEY_keygen_init(ctx.get()) != 1) {
    return OpenSslStatus(absl::StatusCode::kInternal, "EVP_PKEY_keygen_init");
  }
  EVP_PKEY* raw = nullptr;
  if (EVP_PKEY_keygen(ctx.get(), &raw) != 1) {
    EVP_PKEY_free(raw);
    return OpenSslStatus(absl::StatusCode::kInternal, "EVP_PKEY_keygen");
  }
  Ed25519PrivateKey key;
  key.key_->pkey.reset(raw);
  LP_ASSIGN_OR_RETURN(const auto pub, RawPublicKeyOf(raw));
  LP_ASSIGN_OR_RETURN(key.public_, Ed25519PublicKey::FromRaw(Bytes(pub)));
  return key;
}

absl::StatusOr<Ed25519PrivateKey> Ed25519PrivateKey::FromSeed(Bytes seed32) {
  if (seed32.size() != kEd25519KeyBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("Ed25519 seed: got ", seed32.size(), " bytes, want 32"));
  }
  Ed25519PrivateKey key;
  key.key_->pkey.reset(EVP_PKEY_new_raw_private_key(
      EVP_PKEY_ED25519, nullptr, seed32.data(), seed32.size()));
  if (!key.key_->pkey) {
    return OpenSslStatus(absl::StatusCode::kInternal,
                         "EVP_PKEY_new_raw_private_key");
  }
  LP_ASSIGN_OR_RETURN(const auto pub, RawPublicKeyOf(key.key_->pkey.get()));
  LP_ASSIGN_OR_RETURN(key.public_, Ed25519PublicKey::FromRaw(Bytes(pub)));
  return key;
}

absl::StatusOr<Ed25519PrivateKey> Ed25519PrivateKey::FromPem(
    std::string_view pem) {
  LP_ASSIGN_OR_RETURN(BioPtr bio, MemoryBioOf(pem));
  ERR_clear_error();  // so that a failure reports only its own errors
  PkeyPtr pkey(
      PEM_read_bio_PrivateKey(bio.get(), nullptr, NoPassphrase, nullptr));
  if (!pkey) {
    return OpenSslStatus(
        absl::StatusCode::kInvalidArgument,
        "PEM_read_bio_PrivateKey (want an unencrypted PKCS#8 Ed25519 key)");
  }
  LP_RETURN_IF_ERROR(CheckIsEd25519(pkey.get()));
  LP_ASSIGN_OR_RETURN(const auto pub, RawPublicKeyOf(pkey.get()));
  Ed25519PrivateKey key;
  LP_ASSIGN_OR_RETURN(key.public_, Ed25519PublicKey::FromRaw(Bytes(pub)));
  key.key_->pkey = std::move(pkey);
  return key;
}

std::string Ed25519PrivateKey::ToPem() const {
  if (!key_ || !key_->pkey) return std::string();  // moved from
  BioPtr bio(BIO_new(BIO_s_mem()));
  if (!bio) Fatal("BIO_new");
  // PKCS#8 PrivateKeyInfo, no cipher. The memory BIO's buffer is cleansed
  // when it is freed.
  if (PEM_write_bio_PrivateKey(bio.get(), key_->pkey.get(), nullptr, nullptr, 0,
                               nullptr, nullptr) != 1) {
    Fatal("PEM_write_bio_PrivateKey");
  }
  return DrainMemoryBio(bio.get());
}

absl::StatusOr<Ed25519Signature> Ed25519PrivateKey::Sign(Bytes message) const {
  if (!key_ || !key_->pkey) {
    return absl::FailedPreconditionError("Ed25519PrivateKey was moved from");
  }
  MdCtxPtr ctx(EVP_MD_CTX_new());
  if (!ctx) {
    return OpenSslStatus(absl::StatusCode::kResourceExhausted,
                         "EVP_MD_CTX_new");
  }
  if (EVP_DigestSignInit(ctx.get(), nullptr, nullptr, nullptr,
                         key_->pkey.get()) != 1) {
    return OpenSslStatus(absl::StatusCode::kInternal, "EVP_DigestSignInit");
  }
  Ed25519Signature sig{};
  size_t len = sig.size();
  if (EVP_DigestSign(ctx.get(), sig.data(), &len, message.data(),
                     message.size()) != 1 ||
      len != sig.size()) {
    return OpenSslStatus(absl::StatusCode::kInternal, "EVP_DigestSign");
  }
  return sig;
}

// ---------------------------------------------------------------------------
// Key files.

absl::Status WriteKeyPair(const Ed25519PrivateKey& key,
                          const std::string& prefix) {
  if (prefix.empty()) {
    return absl::InvalidArgumentError("key file prefix is empty");
  }
  const std::string key_path = prefix + ".key";
  const std::string pub_path = prefix + ".pub";
  std::string private_pem = key.ToPem();
  if (private_pem.empty()) {
    return absl::FailedPreconditionError("Ed25519PrivateKey was moved from");
  }
  absl::Status status = CreateFileExclusive(key_path, private_pem, 0600);
  OPENSSL_cleanse(private_pem.data(), private_pem.size());
  LP_RETURN_IF_ERROR(status);
  // Both files are new or neither is: a failure from here on removes
  // PREFIX.key (and PREFIX.pub once this call has created it).
  status = CreateFileExclusive(pub_path, key.public_key().ToPem(), 0644);
  if (!status.ok()) {
    ::unlink(key_path.c_str());
    return status;
  }
  status = SyncParentDirectory(key_path);
  if (!status.ok()) {
    ::unlink(key_path.c_str());
    ::unlink(pub_path.c_str());
  }
  return status;
}

absl::StatusOr<Ed25519PrivateKey> ReadPrivateKeyFile(const std::string& path) {
  LP_ASSIGN_OR_RETURN(std::string pem, ReadKeyFile(path));
  auto key = Ed25519PrivateKey::FromPem(pem);
  OPENSSL_cleanse(pem.data(), pem.size());
  if (!key.ok()) {
    return absl::Status(key.status().code(),
                        absl::StrCat(path, ": ", key.status().message()));
  }
  return key;
}

absl::StatusOr<Ed25519PublicKey> ReadPublicKeyFile(const std::string& path) {
  LP_ASSIGN_OR_RETURN(std::string pem, ReadKeyFile(path));
  auto key = Ed25519PublicKey::FromPem(pem);
  if (!key.ok()) {
    return absl::Status(key.status().code(),
                        absl::StrCat(path, ": ", key.status().message()));
  }
  return key;
}

}  // namespace layerproof::store
