#include "demo/demo_pki.h"

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <unistd.h>

#include <cctype>
#include <filesystem>
#include <memory>
#include <set>
#include <system_error>
#include <utility>

#include "absl/status/status.h"
#include "store/crypto.h"

namespace layerproof::demo {
namespace {

struct PkeyFree {
  void operator()(EVP_PKEY* p) const { EVP_PKEY_free(p); }
};
struct X509Free {
  void operator()(X509* p) const { X509_free(p); }
};
struct ExtFree {
  void operator()(X509_EXTENSION* p) const { X509_EXTENSION_free(p); }
};
struct BioFree {
  void operator()(BIO* p) const { BIO_free(p); }
};
struct BnFree {
  void operator()(BIGNUM* p) const { BN_free(p); }
};
using PkeyPtr = std::unique_ptr<EVP_PKEY, PkeyFree>;
using X509Ptr = std::unique_ptr<X509, X509Free>;

// Internal naming `step` and OpenSSL's first queued error.
absl::Status OpenSslError(std::string_view step) {
  const unsigned long code = ERR_get_error();
  char text[256] = "unknown error";
  if (code != 0) ERR_error_string_n(code, text, sizeof text);
  ERR_clear_error();
  return absl::InternalError("demo PKI: " + std::string(step) + ": " + text);
}

bool GoodName(const std::string& name) {
  if (name.empty() || name.size() > 64 || !std::isalnum(uint8_t(name[0]))) {
    return false;
  }
  for (char c : name) {
    if (!std::isalnum(uint8_t(c)) && c != '.' && c != '_' && c != '-') {
      return false;
    }
  }
  return true;
}

absl::StatusOr<PkeyPtr> NewP256Key() {
  PkeyPtr key(EVP_EC_gen("P-256"));
  if (!key) return OpenSslError("P-256 key generation");
  return key;
}

// Adds the extension `nid` with the openssl-config `value` (e.g.
// "critical,CA:TRUE"), issuer and subject taken from `ctx`.
absl::Status AddExtension(X509* cert, X509V3_CTX* ctx, int nid,
                          const char* value) {
  std::unique_ptr<X509_EXTENSION, ExtFree> ext(
      X509V3_EXT_conf_nid(nullptr, ctx, nid, value));
  if (!ext || X509_add_ext(cert, ext.get(), -1) != 1) {
    return OpenSslError(std::string("extension ") + OBJ_nid2sn(nid) + "=" +
                        value);
  }
  return absl::OkStatus();
}

struct Extension {
  int nid;
  std::string value;
};

// A certificate for `key` with subject CN `cn`, signed by `issuer_key`
// (issued by `issuer`, or self-signed when `issuer` is null).
absl::StatusOr<X509Ptr> IssueCertificate(const std::string& cn, EVP_PKEY* key,
                                         X509* issuer, EVP_PKEY* issuer_key,
                                         int valid_days,
                                         const std::vector<Extension>& exts) {
  X509Ptr cert(X509_new());
  if (!cert) return OpenSslError("X509_new");
  std::unique_ptr<BIGNUM, BnFree> serial(BN_new());
  if (!serial ||
      BN_rand(serial.get(), 63, BN_RAND_TOP_ANY, BN_RAND_BOTTOM_ANY) != 1 ||
      BN_to_ASN1_INTEGER(serial.get(), X509_get_serialNumber(cert.get())) ==
          nullptr) {
    return OpenSslError("serial number");
  }
  if (X509_set_version(cert.get(), X509_VERSION_3) != 1 ||
      X509_gmtime_adj(X509_getm_notBefore(cert.get()), -3600) == nullptr ||
      X509_gmtime_adj(X509_getm_notAfter(cert.get()),
                      long{valid_days} * 86400) == nullptr ||
      X509_set_pubkey(cert.get(), key) != 1) {
    return OpenSslError("certificate fields");
  }
  X509_NAME* subject = X509_get_subject_name(cert.get());
  if (X509_NAME_add_entry_by_txt(
          subject, "CN", MBSTRING_ASC,
          reinterpret_cast<const unsigned char*>(cn.c_str()), -1, -1, 0) != 1 ||
      X509_set_issuer_name(cert.get(), issuer != nullptr
                                           ? X509_get_subject_name(issuer)
                                           : subject) != 1) {
    return OpenSslError("certificate names");
  }
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer != nullptr ? issuer : cert.get(), cert.get(),
                 nullptr, nullptr, 0);
  for (const Extension& e : exts) {
    if (absl::Status s = AddExtension(cert.get(), &ctx, e.nid, e.value.c_str());
        !s.ok()) {
      return s;
    }
  }
  if (X509_sign(cert.get(), issuer_key, EVP_sha256()) <= 0) {
    return OpenSslError("signing the certificate for " + cn);
  }
  return cert;
}

absl::StatusOr<std::string> ToPem(BIO* bio) {
  BUF_MEM* mem = nullptr;
  BIO_get_mem_ptr(bio, &mem);
  if (mem == nullptr) return OpenSslError("PEM buffer");
  return std::string(mem->data, mem->length);
}

absl::StatusOr<std::string> CertPem(X509* cert) {
  std::unique_ptr<BIO, BioFree> bio(BIO_new(BIO_s_mem()));
  if (!bio || PEM_write_bio_X509(bio.get(), cert) != 1) {
    return OpenSslError("PEM certificate");
  }
  return ToPem(bio.get());
}

absl::StatusOr<std::string> KeyPem(EVP_PKEY* key) {
  std::unique_ptr<BIO, BioFree> bio(BIO_new(BIO_s_mem()));
  if (!bio || PEM_write_bio_PrivateKey(bio.get(), key, nullptr, nullptr, 0,
                                       nullptr, nullptr) != 1) {
    return OpenSslError("PEM private key");
  }
  return ToPem(bio.get());
}

// Writes `contents` to `path` (replacing it) with exactly `mode`.
absl::Status WriteFile(const std::string& path, const std::string& contents,
                       mode_t mode) {
  ::unlink(path.c_str());  // a fresh file gets `mode`; ENOENT is fine
  return store::CreateFileExclusive(path, contents, mode);
}

absl::Status WritePair(const std::string& dir, const std::string& name,
                       X509* cert, EVP_PKEY* key) {
  auto cert_pem = CertPem(cert);
  if (!cert_pem.ok()) return cert_pem.status();
  auto key_pem = KeyPem(key);
  if (!key_pem.ok()) return key_pem.status();
  if (absl::Status s = WriteFile(dir + "/" + name + ".key", *key_pem, 0600);
      !s.ok()) {
    return s;
  }
  return WriteFile(dir + "/" + name + ".pem", *cert_pem, 0644);
}

// The leaf extensions of scripts/make-test-certs.sh plus `extra`.
std::vector<Extension> LeafExtensions(std::vector<Extension> extra) {
  std::vector<Extension> exts = {
      {NID_basic_constraints, "critical,CA:FALSE"},
      {NID_key_usage, "critical,digitalSignature,keyAgreement"},
      {NID_subject_key_identifier, "hash"},
      {NID_authority_key_identifier, "keyid"},
  };
  exts.insert(exts.end(), extra.begin(), extra.end());
  return exts;
}

}  // namespace

absl::StatusOr<DemoPki> DemoPki::Create(const std::string& dir,
                                        const DemoPkiOptions& options) {
  if (!GoodName(options.server_name)) {
    return absl::InvalidArgumentError("DemoPkiOptions.server_name: got \"" +
                                      options.server_name +
                                      "\", want a host name");
  }
  if (options.ca_name.empty() || options.valid_days < 1) {
    return absl::InvalidArgumentError(
        "DemoPkiOptions: want a CA name and valid_days >= 1");
  }
  std::set<std::string> seen;
  for (const std::string& name : options.client_names) {
    if (!GoodName(name) || name == "ca" || name == "server" ||
        !seen.insert(name).second) {
      return absl::InvalidArgumentError(
          "DemoPkiOptions.client_names: bad or repeated name \"" + name +
          "\" (want letters, digits, '.', '_' or '-'; not ca or server)");
    }
  }
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    return absl::PermissionDeniedError("cannot create " + dir + ": " +
                                       ec.message());
  }

  auto ca_key = NewP256Key();
  if (!ca_key.ok()) return ca_key.status();
  auto ca = IssueCertificate(options.ca_name, ca_key->get(), nullptr,
                             ca_key->get(), options.valid_days,
                             {{NID_basic_constraints, "critical,CA:TRUE"},
                              {NID_key_usage, "critical,keyCertSign,cRLSign"},
                              {NID_subject_key_identifier, "hash"}});
  if (!ca.ok()) return ca.status();
  if (absl::Status s = WritePair(dir, "ca", ca->get(), ca_key->get());
      !s.ok()) {
    return s;
  }

  auto server_key = NewP256Key();
  if (!server_key.ok()) return server_key.status();
  auto server = IssueCertificate(
      options.server_name, server_key->get(), ca->get(), ca_key->get(),
      options.valid_days,
      LeafExtensions({{NID_ext_key_usage, "serverAuth"},
                      {NID_subject_alt_name,
                       "DNS:" + options.server_name + ",IP:127.0.0.1"}}));
  if (!server.ok()) return server.status();
  if (absl::Status s =
          WritePair(dir, "server", server->get(), server_key->get());
      !s.ok()) {
    return s;
  }

  for (const std::string& name : options.client_names) {
    auto key = NewP256Key();
    if (!key.ok()) return key.status();
    auto cert = IssueCertificate(
        name, key->get(), ca->get(), ca_key->get(), options.valid_days,
        LeafExtensions({{NID_ext_key_usage, "clientAuth"}}));
    if (!cert.ok()) return cert.status();
    if (absl::Status s = WritePair(dir, name, cert->get(), key->get());
        !s.ok()) {
      return s;
    }
  }
  return DemoPki(dir, options.server_name);
}

std::string DemoPki::Pem(std::string_view name) const {
  return dir_ + "/" + std::string(name) + ".pem";
}

std::string DemoPki::Key(std::string_view name) const {
  return dir_ + "/" + std::string(name) + ".key";
}

rpc::TlsOptions DemoPki::Server(bool mtls) const {
  rpc::TlsOptions tls;
  tls.cert_file = Pem("server");
  tls.key_file = Key("server");
  if (mtls) tls.ca_file = Pem("ca");
  return tls;
}

rpc::TlsOptions DemoPki::Client(std::string_view name) const {
  rpc::TlsOptions tls;
  tls.ca_file = Pem("ca");
  tls.server_name_override = server_name_;
  if (!name.empty()) {
    tls.cert_file = Pem(name);
    tls.key_file = Key(name);
  }
  return tls;
}

}  // namespace layerproof::demo
