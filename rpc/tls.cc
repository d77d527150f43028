#include "rpc/tls.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/support/channel_arguments.h"
#include "kernels/status.h"
#include "store/internal/str_cat.h"

namespace layerproof::rpc {
namespace {

using store::internal::Cat;

// PEM files are small; anything larger is not a certificate or key.
constexpr long kMaxPemBytes = 1 << 20;

// The command-line flag each TlsOptions field comes from, for errors.
constexpr std::string_view kCertFlag = "--tls-cert";
constexpr std::string_view kKeyFlag = "--tls-key";
constexpr std::string_view kCaFlag = "--tls-ca";

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};
struct BioFree {
  void operator()(BIO* b) const { BIO_free(b); }
};
struct X509Free {
  void operator()(X509* x) const { X509_free(x); }
};
struct PkeyFree {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};

absl::StatusOr<std::string> ReadPemFile(std::string_view flag,
                                        const std::string& path) {
  std::unique_ptr<std::FILE, FileCloser> f(std::fopen(path.c_str(), "rb"));
  if (!f) {
    return absl::InvalidArgumentError(
        Cat(flag, ": cannot read ", path, ": ", std::strerror(errno)));
  }
  std::string text;
  char buf[16384];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), f.get())) > 0) {
    text.append(buf, n);
    if (static_cast<long>(text.size()) > kMaxPemBytes) {
      return absl::InvalidArgumentError(Cat(flag, ": ", path,
                                            ": got more than ", kMaxPemBytes,
                                            " bytes, want a PEM file"));
    }
  }
  if (std::ferror(f.get())) {
    return absl::InvalidArgumentError(
        Cat(flag, ": cannot read ", path, ": ", std::strerror(errno)));
  }
  return text;
}

// Reads `path` and checks, cheaply, that it holds a PEM block whose label
// ends in `label` ("CERTIFICATE", "PRIVATE KEY").
absl::StatusOr<std::string> ReadPem(std::string_view flag,
                                    const std::string& path,
                                    std::string_view label) {
  LP_ASSIGN_OR_RETURN(std::string text, ReadPemFile(flag, path));
  const size_t begin = text.find("-----BEGIN ");
  const std::string end_of_label = Cat(label, "-----");
  if (begin == std::string::npos ||
      text.find(end_of_label, begin) == std::string::npos) {
    return absl::InvalidArgumentError(Cat(flag, ": ", path, ": not a PEM ",
                                          label, " (no \"-----BEGIN ... ",
                                          label, "-----\" line)"));
  }
  return text;
}

// The first OpenSSL error on this thread's queue, cleared.
std::string OpenSslError() {
  const unsigned long e = ERR_get_error();
  ERR_clear_error();
  if (e == 0) return "unknown OpenSSL error";
  char buf[256];
  ERR_error_string_n(e, buf, sizeof(buf));
  return buf;
}

// Parses the first certificate and the private key and checks that they
// belong together, so that a mismatch is reported here, naming the files,
// rather than as a failed handshake later.
absl::Status CheckKeyMatchesCert(const TlsOptions& tls,
                                 const std::string& cert_pem,
                                 const std::string& key_pem) {
  ERR_clear_error();
  std::unique_ptr<BIO, BioFree> cert_bio(
      BIO_new_mem_buf(cert_pem.data(), static_cast<int>(cert_pem.size())));
  std::unique_ptr<BIO, BioFree> key_bio(
      BIO_new_mem_buf(key_pem.data(), static_cast<int>(key_pem.size())));
  if (!cert_bio || !key_bio) {
    return absl::ResourceExhaustedError(
        Cat("BIO_new_mem_buf: ", OpenSslError()));
  }
  std::unique_ptr<X509, X509Free> cert(
      PEM_read_bio_X509(cert_bio.get(), nullptr, nullptr, nullptr));
  if (!cert) {
    return absl::InvalidArgumentError(Cat(
        kCertFlag, ": ", tls.cert_file, ": bad certificate: ", OpenSslError()));
  }
  std::unique_ptr<EVP_PKEY, PkeyFree> key(
      PEM_read_bio_PrivateKey(key_bio.get(), nullptr, nullptr, nullptr));
  if (!key) {
    return absl::InvalidArgumentError(Cat(
        kKeyFlag, ": ", tls.key_file, ": bad private key: ", OpenSslError()));
  }
  if (X509_check_private_key(cert.get(), key.get()) != 1) {
    ERR_clear_error();
    return absl::InvalidArgumentError(Cat(kKeyFlag, ": ", tls.key_file,
                                          " is not the private key of ",
                                          kCertFlag, " ", tls.cert_file));
  }
  return absl::OkStatus();
}

absl::Status CheckNotInsecureWithFiles(const TlsOptions& tls) {
  if (!tls.insecure) return absl::OkStatus();
  for (const auto& [flag, value] :
       {std::pair{kCertFlag, &tls.cert_file},
        std::pair{kKeyFlag, &tls.key_file}, std::pair{kCaFlag, &tls.ca_file}}) {
    if (!value->empty()) {
      return absl::InvalidArgumentError(
          Cat("--insecure: conflicts with ", flag, " ", *value));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> MakeServerCredentials(
    const TlsOptions& tls) {
  LP_RETURN_IF_ERROR(CheckNotInsecureWithFiles(tls));
  if (tls.insecure) return grpc::InsecureServerCredentials();
  if (tls.cert_file.empty() || tls.key_file.empty()) {
    return absl::InvalidArgumentError(
        Cat(tls.cert_file.empty() ? kCertFlag : kKeyFlag,
            ": required for a server (or --insecure for plaintext)"));
  }
  grpc::SslServerCredentialsOptions::PemKeyCertPair pair;
  LP_ASSIGN_OR_RETURN(pair.cert_chain,
                      ReadPem(kCertFlag, tls.cert_file, "CERTIFICATE"));
  LP_ASSIGN_OR_RETURN(pair.private_key,
                      ReadPem(kKeyFlag, tls.key_file, "PRIVATE KEY"));
  LP_RETURN_IF_ERROR(
      CheckKeyMatchesCert(tls, pair.cert_chain, pair.private_key));

  grpc::SslServerCredentialsOptions options;
  options.pem_key_cert_pairs.push_back(std::move(pair));
  if (!tls.ca_file.empty()) {
    LP_ASSIGN_OR_RETURN(options.pem_root_certs,
                        ReadPem(kCaFlag, tls.ca_file, "CERTIFICATE"));
    options.client_certificate_request =
        GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY;
  } else {
    options.client_certificate_request =
        GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE;
  }
  return grpc::SslServerCredentials(options);
}

absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>>
MakeChannelCredentials(const TlsOptions& tls) {
  LP_RETURN_IF_ERROR(CheckNotInsecureWithFiles(tls));
  if (tls.insecure) return grpc::InsecureChannelCredentials();
  if (tls.cert_file.empty() != tls.key_file.empty()) {
    return absl::InvalidArgumentError(
        Cat(tls.cert_file.empty() ? kCertFlag : kKeyFlag, ": required with ",
            tls.cert_file.empty() ? kKeyFlag : kCertFlag,
            " (a client certificate needs both)"));
  }
  grpc::SslCredentialsOptions options;
  if (!tls.ca_file.empty()) {
    LP_ASSIGN_OR_RETURN(options.pem_root_certs,
                        ReadPem(kCaFlag, tls.ca_file, "CERTIFICATE"));
  }
  if (!tls.cert_file.empty()) {
    LP_ASSIGN_OR_RETURN(options.pem_cert_chain,
                        ReadPem(kCertFlag, tls.cert_file, "CERTIFICATE"));
    LP_ASSIGN_OR_RETURN(options.pem_private_key,
                        ReadPem(kKeyFlag, tls.key_file, "PRIVATE KEY"));
    LP_RETURN_IF_ERROR(CheckKeyMatchesCert(tls, options.pem_cert_chain,
                                           options.pem_private_key));
  }
  return grpc::SslCredentials(options);
}

absl::StatusOr<std::shared_ptr<grpc::Channel>> MakeChannel(
    const std::string& address, const TlsOptions& tls, int max_message_bytes) {
  if (address.empty()) {
    return absl::InvalidArgumentError("address: got \"\", want host:port");
  }
  if (max_message_bytes <= 0) {
    return absl::InvalidArgumentError(
        Cat("max_message_bytes: got ", max_message_bytes, ", want > 0"));
  }
  if (tls.insecure && !tls.server_name_override.empty()) {
    return absl::InvalidArgumentError(
        Cat("--insecure: conflicts with server name override ",
            tls.server_name_override));
  }
  LP_ASSIGN_OR_RETURN(std::shared_ptr<grpc::ChannelCredentials> creds,
                      MakeChannelCredentials(tls));
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(max_message_bytes);
  args.SetMaxSendMessageSize(max_message_bytes);
  if (!tls.server_name_override.empty()) {
    args.SetSslTargetNameOverride(tls.server_name_override);
  }
  return grpc::CreateCustomChannel(address, creds, args);
}

}  // namespace layerproof::rpc
