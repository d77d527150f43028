// Tests for store/crypto: SHA-256 and Ed25519 known answers, PEM handling,
// hex, and key files.
//
// Known-answer sources:
//   - SHA-256: FIPS 180-4 / NIST "Cryptographic Standards and Guidelines:
//     Examples with Intermediate Values" (SHA-256 "abc", the 448-bit
//     two-block message, the empty string) and the one-million-'a' vector
//     of FIPS 180-2 Appendix B.3.
//   - Ed25519: RFC 8032 §7.1, TEST 1, TEST 2, TEST 3, TEST 1024 and
//     TEST SHA(abc).
#include "store/crypto.h"

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace layerproof::store {
namespace {

using ::testing::HasSubstr;

std::string Unhex(std::string_view hex) {
  auto bytes = HexDecode(hex);
  EXPECT_TRUE(bytes.ok()) << bytes.status();
  return bytes.ok() ? *bytes : std::string();
}

template <size_t N>
std::string HexOf(const std::array<uint8_t, N>& a) {
  return HexEncode(Bytes(a));
}

// ---------------------------------------------------------------------------
// SHA-256.

struct Sha256Vector {
  const char* name;
  std::string message;
  const char* digest_hex;
};

std::vector<Sha256Vector> Sha256Vectors() {
  return {
      {"abc", "abc",
       "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
      {"two_block_448_bits",
       "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
       "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
      {"empty", "",
       "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
      {"million_a", std::string(1000000, 'a'),
       "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"},
  };
}

TEST(Sha256Test, FipsKnownAnswersOneShot) {
  for (const auto& v : Sha256Vectors()) {
    EXPECT_EQ(HexOf(Sha256Hasher::Digest(v.message)), v.digest_hex) << v.name;
  }
}

TEST(Sha256Test, IncrementalInOddPiecesEqualsOneShot) {
  for (const auto& v : Sha256Vectors()) {
    for (size_t piece : {1u, 3u, 7u, 63u, 65u, 1000u}) {
      Sha256Hasher hasher;
      std::string_view rest = v.message;
      while (!rest.empty()) {
        const size_t n = std::min(piece, rest.size());
        hasher.Update(rest.substr(0, n));
        rest.remove_prefix(n);
      }
      hasher.Update(std::string_view());  // an empty update changes nothing
      EXPECT_EQ(HexOf(hasher.Final()), v.digest_hex)
          << v.name << " in pieces of " << piece;
    }
  }
}

// ---------------------------------------------------------------------------
// ConstantTimeEqual and hex.

TEST(ConstantTimeEqualTest, ComparesContentsAndLengths) {
  const std::string a = "layerproof";
  const std::string b = "layerprooF";
  EXPECT_TRUE(ConstantTimeEqual(AsBytes(a), AsBytes(a)));
  EXPECT_FALSE(ConstantTimeEqual(AsBytes(a), AsBytes(b)));
  EXPECT_FALSE(ConstantTimeEqual(AsBytes(a), AsBytes("layerproo")));
  EXPECT_FALSE(ConstantTimeEqual(AsBytes(""), AsBytes("x")));
  EXPECT_TRUE(ConstantTimeEqual(AsBytes(""), AsBytes("")));
}

TEST(HexTest, RoundTripsEveryByte) {
  std::string all;
  for (int i = 0; i < 256; ++i) all.push_back(static_cast<char>(i));
  const std::string hex = HexEncode(AsBytes(all));
  EXPECT_EQ(hex.substr(0, 8), "00010203");
  EXPECT_EQ(hex.substr(hex.size() - 4), "feff");
  auto back = HexDecode(hex);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, all);
  EXPECT_EQ(HexEncode(Bytes()), "");
}

TEST(HexTest, DecodesUpperCase) {
  auto bytes = HexDecode("DEADbeef");
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  EXPECT_EQ(*bytes, "\xde\xad\xbe\xef");
}

TEST(HexTest, RejectsOddLength) {
  auto bytes = HexDecode("abc");
  ASSERT_FALSE(bytes.ok());
  EXPECT_EQ(bytes.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(bytes.status().message()), HasSubstr("odd length"));
}

TEST(HexTest, RejectsBadCharacters) {
  for (const char* bad : {"0g", "g0", "12 4", "0x12", "+1"}) {
    auto bytes = HexDecode(bad);
    ASSERT_FALSE(bytes.ok()) << bad;
    EXPECT_EQ(bytes.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(bytes.status().message()),
                HasSubstr("invalid character"));
  }
}

// ---------------------------------------------------------------------------
// Ed25519: RFC 8032 §7.1.

struct Ed25519Vector {
  const char* name;
  const char* secret_key;
  const char* public_key;
  std::string message_hex;
  const char* signature;
};

constexpr char kTest1024Message[] =
    "08b8b2b733424243760fe426a4b54908632110a66c2f6591eabd3345e3e4eb98"
    "fa6e264bf09efe12ee50f8f54e9f77b1e355f6c50544e23fb1433ddf73be84d8"
    "79de7c0046dc4996d9e773f4bc9efe5738829adb26c81b37c93a1b270b20329d"
    "658675fc6ea534e0810a4432826bf58c941efb65d57a338bbd2e26640f89ffbc"
    "1a858efcb8550ee3a5e1998bd177e93a7363c344fe6b199ee5d02e82d522c4fe"
    "ba15452f80288a821a579116ec6dad2b3b310da903401aa62100ab5d1a36553e"
    "06203b33890cc9b832f79ef80560ccb9a39ce767967ed628c6ad573cb116dbef"
    "efd75499da96bd68a8a97b928a8bbc103b6621fcde2beca1231d206be6cd9ec7"
    "aff6f6c94fcd7204ed3455c68c83f4a41da4af2b74ef5c53f1d8ac70bdcb7ed1"
    "85ce81bd84359d44254d95629e9855a94a7c1958d1f8ada5d0532ed8a5aa3fb2"
    "d17ba70eb6248e594e1a2297acbbb39d502f1a8c6eb6f1ce22b3de1a1f40cc24"
    "554119a831a9aad6079cad88425de6bde1a9187ebb6092cf67bf2b13fd65f270"
    "88d78b7e883c8759d2c4f5c65adb7553878ad575f9fad878e80a0c9ba63bcbcc"
    "2732e69485bbc9c90bfbd62481d9089beccf80cfe2df16a2cf65bd92dd597b07"
    "07e0917af48bbb75fed413d238f5555a7a569d80c3414a8d0859dc65a46128ba"
    "b27af87a71314f318c782b23ebfe808b82b0ce26401d2e22f04d83d1255dc51a"
    "ddd3b75a2b1ae0784504df543af8969be3ea7082ff7fc9888c144da2af58429e"
    "c96031dbcad3dad9af0dcbaaaf268cb8fcffead94f3c7ca495e056a9b47acdb7"
    "51fb73e666c6c655ade8297297d07ad1ba5e43f1bca32301651339e22904cc8c"
    "42f58c30c04aafdb038dda0847dd988dcda6f3bfd15c4b4c4525004aa06eeff8"
    "ca61783aacec57fb3d1f92b0fe2fd1a85f6724517b65e614ad6808d6f6ee34df"
    "f7310fdc82aebfd904b01e1dc54b2927094b2db68d6f903b68401adebf5a7e08"
    "d78ff4ef5d63653a65040cf9bfd4aca7984a74d37145986780fc0b16ac451649"
    "de6188a7dbdf191f64b5fc5e2ab47b57f7f7276cd419c17a3ca8e1b939ae49e4"
    "88acba6b965610b5480109c8b17b80e1b7b750dfc7598d5d5011fd2dcc5600a3"
    "2ef5b52a1ecc820e308aa342721aac0943bf6686b64b2579376504ccc493d97e"
    "6aed3fb0f9cd71a43dd497f01f17c0e2cb3797aa2a2f256656168e6c496afc5f"
    "b93246f6b1116398a346f1a641f3b041e989f7914f90cc2c7fff357876e506b5"
    "0d334ba77c225bc307ba537152f3f1610e4eafe595f6d9d90d11faa933a15ef1"
    "369546868a7f3a45a96768d40fd9d03412c091c6315cf4fde7cb68606937380d"
    "b2eaaa707b4c4185c32eddcdd306705e4dc1ffc872eeee475a64dfac86aba41c"
    "0618983f8741c5ef68d3a101e8a3b8cac60c905c15fc910840b94c00a0b9d0";

std::vector<Ed25519Vector> Rfc8032Vectors() {
  return {
      {"TEST 1",
       "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60",
       "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a", "",
       "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e06522490155"
       "5fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b"},
      {"TEST 2",
       "4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb",
       "3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c", "72",
       "92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da"
       "085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00"},
      {"TEST 3",
       "c5aa8df43f9f837bedb7442f31dcb7b166d38535076f094b85ce3a2e0b4458f7",
       "fc51cd8e6218a1a38da47ed00230f0580816ed13ba3303ac5deb911548908025",
       "af82",
       "6291d657deec24024827e69c3abe01a30ce548a284743a445e3680d7db5ac3ac"
       "18ff9b538d16f290ae67f760984dc6594a7c15e9716ed28dc027beceea1ec40a"},
      {"TEST 1024",
       "f5e5767cf153319517630f226876b86c8160cc583bc013744c6bf255f5cc0ee5",
       "278117fc144c72340f67d0f2316e8386ceffbf2b2428c9c51fef7c597f1d426e",
       kTest1024Message,
       "0aab4c900501b3e24d7cdf4663326a3a87df5e4843b2cbdb67cbf6e460fec350"
       "aa5371b1508f9f4528ecea23c436d94b5e8fcd4f681e30a6ac00a9704a188a03"},
      {"TEST SHA(abc)",
       "833fe62409237b9d62ec77587520911e9a759cec1d19755b7da901b96dca3d42",
       "ec172b93ad5e563bf4932c70e1245034c35467ef2efd4d64ebf819683467e2bf",
       "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a"
       "2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f",
       "dc2a4459e7369633a52b1bf277839a00201009a3efbf3ecb69bea2186c26b589"
       "09351fc9ac90b3ecfdfbc7c66431e0303dca179c138ac17ad9bef1177331a704"},
  };
}

TEST(Ed25519Test, Rfc8032KnownAnswers) {
  for (const auto& v : Rfc8032Vectors()) {
    SCOPED_TRACE(v.name);
    const std::string seed = Unhex(v.secret_key);
    const std::string message = Unhex(v.message_hex);
    const std::string signature = Unhex(v.signature);
    auto key = Ed25519PrivateKey::FromSeed(AsBytes(seed));
    ASSERT_TRUE(key.ok()) << key.status();
    EXPECT_EQ(HexOf(key->public_key().raw()), v.public_key);
    auto sig = key->Sign(AsBytes(message));
    ASSERT_TRUE(sig.ok()) << sig.status();
    EXPECT_EQ(HexOf(*sig), v.signature);

    auto pub = Ed25519PublicKey::FromRaw(AsBytes(Unhex(v.public_key)));
    ASSERT_TRUE(pub.ok()) << pub.status();
    EXPECT_TRUE(pub->Verify(AsBytes(message), AsBytes(signature)).ok());
  }
}

TEST(Ed25519Test, Test1024MessageIs1023Bytes) {
  EXPECT_EQ(Unhex(kTest1024Message).size(), 1023u);
}

void ExpectDoesNotVerify(const absl::Status& status) {
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_THAT(std::string(status.message()), HasSubstr("does not verify"));
}

TEST(Ed25519Test, FlippedBitsFailToVerify) {
  for (const auto& v : Rfc8032Vectors()) {
    SCOPED_TRACE(v.name);
    const std::string message = Unhex(v.message_hex);
    const std::string signature = Unhex(v.signature);
    const std::string raw = Unhex(v.public_key);
    auto pub = Ed25519PublicKey::FromRaw(AsBytes(raw));
    ASSERT_TRUE(pub.ok()) << pub.status();

    if (!message.empty()) {
      for (size_t byte : {size_t{0}, message.size() - 1}) {
        std::string bad = message;
        bad[byte] ^= 0x01;
        ExpectDoesNotVerify(pub->Verify(AsBytes(bad), AsBytes(signature)));
      }
    }
    // A message one byte longer.
    ExpectDoesNotVerify(
        pub->Verify(AsBytes(message + '\0'), AsBytes(signature)));
    // R (first half) and S (second half) of the signature.
    for (size_t byte : {0, 31, 32, 63}) {
      std::string bad = signature;
      bad[byte] ^= 0x01;
      ExpectDoesNotVerify(pub->Verify(AsBytes(message), AsBytes(bad)));
    }
    for (size_t byte : {0, 31}) {
      std::string bad_raw = raw;
      bad_raw[byte] ^= 0x01;
      auto bad_pub = Ed25519PublicKey::FromRaw(AsBytes(bad_raw));
      ASSERT_TRUE(bad_pub.ok()) << bad_pub.status();
      ExpectDoesNotVerify(
          bad_pub->Verify(AsBytes(message), AsBytes(signature)));
    }
  }
}

TEST(Ed25519Test, WrongLengthSignatureIsAClearError) {
  const auto v = Rfc8032Vectors()[1];
  auto pub = Ed25519PublicKey::FromRaw(AsBytes(Unhex(v.public_key)));
  ASSERT_TRUE(pub.ok()) << pub.status();
  const std::string message = Unhex(v.message_hex);
  const std::string signature = Unhex(v.signature);
  for (size_t len : {0, 63, 65}) {
    std::string sig = signature;
    sig.resize(len, '\0');
    const absl::Status status = pub->Verify(AsBytes(message), AsBytes(sig));
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(status.message()),
                HasSubstr("got " + std::to_string(len) + " bytes, want 64"));
  }
}

TEST(Ed25519Test, WrongLengthKeysAndSeedsAreRejected) {
  const std::string short_key(31, '\x01');
  auto pub = Ed25519PublicKey::FromRaw(AsBytes(short_key));
  ASSERT_FALSE(pub.ok());
  EXPECT_EQ(pub.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(pub.status().message()), HasSubstr("want 32"));
  auto key = Ed25519PrivateKey::FromSeed(AsBytes(std::string(33, '\x01')));
  ASSERT_FALSE(key.ok());
  EXPECT_EQ(key.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(Ed25519Test, GeneratedKeysSignAndVerifyAndDiffer) {
  auto a = Ed25519PrivateKey::Generate();
  auto b = Ed25519PrivateKey::Generate();
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_NE(a->public_key().raw(), b->public_key().raw());
  auto sig = a->Sign(AsBytes("checkpoint"));
  ASSERT_TRUE(sig.ok()) << sig.status();
  EXPECT_TRUE(a->public_key().Verify(AsBytes("checkpoint"), Bytes(*sig)).ok());
  ExpectDoesNotVerify(
      b->public_key().Verify(AsBytes("checkpoint"), Bytes(*sig)));
}

TEST(Ed25519Test, KeyIdIsSha256OfRawPublicKey) {
  const auto v = Rfc8032Vectors()[0];
  auto pub = Ed25519PublicKey::FromRaw(AsBytes(Unhex(v.public_key)));
  ASSERT_TRUE(pub.ok()) << pub.status();
  EXPECT_EQ(pub->KeyId(), Sha256Hasher::Digest(Bytes(pub->raw())));
  // Independently: SHA-256 of TEST 1's public key bytes via the hex text.
  EXPECT_EQ(HexOf(pub->KeyId()),
            HexOf(Sha256Hasher::Digest(Unhex(v.public_key))));
}

// ---------------------------------------------------------------------------
// PEM.

struct PkeyFree {
  void operator()(EVP_PKEY* p) const { EVP_PKEY_free(p); }
};
struct BioFree {
  void operator()(BIO* p) const { BIO_free_all(p); }
};
using PkeyPtr = std::unique_ptr<EVP_PKEY, PkeyFree>;
using BioPtr = std::unique_ptr<BIO, BioFree>;

std::string BioText(BIO* bio) {
  char* data = nullptr;
  const long n = BIO_get_mem_data(bio, &data);
  return std::string(data, static_cast<size_t>(n));
}

// A foreign key as PEM: private (PKCS#8) and public (SPKI).
struct ForeignPem {
  std::string private_pem;
  std::string public_pem;
};

ForeignPem ForeignKeyPem(PkeyPtr pkey) {
  ForeignPem out;
  EXPECT_TRUE(pkey != nullptr);
  if (!pkey) return out;
  BioPtr priv(BIO_new(BIO_s_mem()));
  EXPECT_EQ(PEM_write_bio_PrivateKey(priv.get(), pkey.get(), nullptr, nullptr,
                                     0, nullptr, nullptr),
            1);
  out.private_pem = BioText(priv.get());
  BioPtr pub(BIO_new(BIO_s_mem()));
  EXPECT_EQ(PEM_write_bio_PUBKEY(pub.get(), pkey.get()), 1);
  out.public_pem = BioText(pub.get());
  return out;
}

Ed25519PrivateKey Test1Key() {
  auto key = Ed25519PrivateKey::FromSeed(
      AsBytes(Unhex(Rfc8032Vectors()[0].secret_key)));
  EXPECT_TRUE(key.ok()) << key.status();
  return std::move(key).value();
}

TEST(PemTest, PrivateKeyRoundTrips) {
  const Ed25519PrivateKey key = Test1Key();
  const std::string pem = key.ToPem();
  EXPECT_THAT(pem, HasSubstr("-----BEGIN PRIVATE KEY-----"));
  auto back = Ed25519PrivateKey::FromPem(pem);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->public_key().raw(), key.public_key().raw());
  auto sig = back->Sign(Bytes());
  ASSERT_TRUE(sig.ok()) << sig.status();
  EXPECT_EQ(HexOf(*sig), Rfc8032Vectors()[0].signature);
  EXPECT_EQ(back->ToPem(), pem);
}

TEST(PemTest, PublicKeyRoundTrips) {
  const Ed25519PrivateKey key = Test1Key();
  const std::string pem = key.public_key().ToPem();
  EXPECT_THAT(pem, HasSubstr("-----BEGIN PUBLIC KEY-----"));
  auto back = Ed25519PublicKey::FromPem(pem);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->raw(), key.public_key().raw());
  EXPECT_EQ(back->ToPem(), pem);
}

TEST(PemTest, GarbageIsRejected) {
  for (const char* garbage :
       {"", "hello",
        "-----BEGIN PRIVATE KEY-----\n!!!!\n-----END PRIVATE "
        "KEY-----\n"}) {
    auto key = Ed25519PrivateKey::FromPem(garbage);
    ASSERT_FALSE(key.ok());
    EXPECT_EQ(key.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(key.status().message()),
                HasSubstr("PEM_read_bio_PrivateKey"));
    auto pub = Ed25519PublicKey::FromPem(garbage);
    ASSERT_FALSE(pub.ok());
    EXPECT_EQ(pub.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(pub.status().message()),
                HasSubstr("PEM_read_bio_PUBKEY"));
  }
}

TEST(PemTest, TruncatedPemIsRejected) {
  const Ed25519PrivateKey key = Test1Key();
  const std::string pem = key.ToPem();
  const std::string pub_pem = key.public_key().ToPem();
  for (size_t cut : {size_t{10}, pem.size() / 2, pem.size() - 20}) {
    auto back = Ed25519PrivateKey::FromPem(pem.substr(0, cut));
    ASSERT_FALSE(back.ok()) << "cut at " << cut;
    EXPECT_EQ(back.status().code(), absl::StatusCode::kInvalidArgument);
  }
  for (size_t cut : {size_t{10}, pub_pem.size() / 2, pub_pem.size() - 20}) {
    auto back = Ed25519PublicKey::FromPem(pub_pem.substr(0, cut));
    ASSERT_FALSE(back.ok()) << "cut at " << cut;
    EXPECT_EQ(back.status().code(), absl::StatusCode::kInvalidArgument);
  }
}

TEST(PemTest, ErrorsDoNotContainKeyMaterial) {
  const std::string pem = Test1Key().ToPem();
  auto back = Ed25519PrivateKey::FromPem(pem.substr(0, pem.size() - 20));
  ASSERT_FALSE(back.ok());
  const std::string body = pem.substr(28, 20);  // inside the base64
  EXPECT_THAT(std::string(back.status().message()),
              ::testing::Not(HasSubstr(body)));
}

TEST(PemTest, EcKeyIsNotAnEd25519Key) {
  const ForeignPem ec = ForeignKeyPem(
      PkeyPtr(EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256")));
  auto key = Ed25519PrivateKey::FromPem(ec.private_pem);
  ASSERT_FALSE(key.ok());
  EXPECT_EQ(key.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(key.status().message()), HasSubstr("EC key"));
  EXPECT_THAT(std::string(key.status().message()),
              HasSubstr("not an Ed25519 key"));
  auto pub = Ed25519PublicKey::FromPem(ec.public_pem);
  ASSERT_FALSE(pub.ok());
  EXPECT_EQ(pub.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(pub.status().message()),
              HasSubstr("not an Ed25519 key"));
}

TEST(PemTest, X25519KeyIsNotAnEd25519Key) {
  const ForeignPem x =
      ForeignKeyPem(PkeyPtr(EVP_PKEY_Q_keygen(nullptr, nullptr, "X25519")));
  auto key = Ed25519PrivateKey::FromPem(x.private_pem);
  ASSERT_FALSE(key.ok());
  EXPECT_THAT(std::string(key.status().message()), HasSubstr("X25519"));
  EXPECT_THAT(std::string(key.status().message()),
              HasSubstr("not an Ed25519 key"));
  auto pub = Ed25519PublicKey::FromPem(x.public_pem);
  ASSERT_FALSE(pub.ok());
  EXPECT_THAT(std::string(pub.status().message()),
              HasSubstr("not an Ed25519 key"));
}

TEST(PemTest, PublicPemIsNotAPrivateKey) {
  const Ed25519PrivateKey key = Test1Key();
  auto back = Ed25519PrivateKey::FromPem(key.public_key().ToPem());
  ASSERT_FALSE(back.ok());
  EXPECT_EQ(back.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(PemTest, EncryptedPrivateKeyIsRejectedWithoutPrompting) {
  const Ed25519PrivateKey key = Test1Key();
  // Re-read through OpenSSL and write it encrypted under a passphrase.
  const std::string pem = key.ToPem();
  BioPtr in(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  PkeyPtr pkey(PEM_read_bio_PrivateKey(in.get(), nullptr, nullptr, nullptr));
  ASSERT_TRUE(pkey != nullptr);
  BioPtr out(BIO_new(BIO_s_mem()));
  char pass[] = "passphrase";
  ASSERT_EQ(
      PEM_write_bio_PKCS8PrivateKey(out.get(), pkey.get(), EVP_aes_256_cbc(),
                                    pass, sizeof(pass) - 1, nullptr, nullptr),
      1);
  const std::string encrypted = BioText(out.get());
  EXPECT_THAT(encrypted, HasSubstr("ENCRYPTED PRIVATE KEY"));
  auto back = Ed25519PrivateKey::FromPem(encrypted);
  ASSERT_FALSE(back.ok());
  EXPECT_EQ(back.status().code(), absl::StatusCode::kInvalidArgument);
}

// ---------------------------------------------------------------------------
// Key files.

class KeyFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = ::testing::TempDir() + "crypto_test_XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    prefix_ = dir_ + "/signer";
  }
  void TearDown() override {
    for (const char* ext : {".key", ".pub"}) {
      ::unlink((prefix_ + ext).c_str());
    }
    ::rmdir(dir_.c_str());
  }

  static mode_t ModeOf(const std::string& path) {
    struct stat st;
    EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
    return st.st_mode & 07777;
  }
  static bool Exists(const std::string& path) {
    return ::access(path.c_str(), F_OK) == 0;
  }

  std::string dir_;
  std::string prefix_;
};

TEST_F(KeyFileTest, WritesBothFilesWithModesAndReadsThemBack) {
  auto key = Ed25519PrivateKey::Generate();
  ASSERT_TRUE(key.ok()) << key.status();
  ASSERT_TRUE(WriteKeyPair(*key, prefix_).ok());
  EXPECT_EQ(ModeOf(prefix_ + ".key"), 0600);
  EXPECT_EQ(ModeOf(prefix_ + ".pub"), 0644);

  auto priv = ReadPrivateKeyFile(prefix_ + ".key");
  ASSERT_TRUE(priv.ok()) << priv.status();
  auto pub = ReadPublicKeyFile(prefix_ + ".pub");
  ASSERT_TRUE(pub.ok()) << pub.status();
  EXPECT_EQ(priv->public_key().raw(), key->public_key().raw());
  EXPECT_EQ(pub->raw(), key->public_key().raw());
  auto sig = priv->Sign(AsBytes("envelope"));
  ASSERT_TRUE(sig.ok()) << sig.status();
  EXPECT_TRUE(pub->Verify(AsBytes("envelope"), Bytes(*sig)).ok());
}

TEST_F(KeyFileTest, ModesDoNotDependOnUmask) {
  auto key = Ed25519PrivateKey::Generate();
  ASSERT_TRUE(key.ok()) << key.status();
  const mode_t old = ::umask(0077);
  const absl::Status status = WriteKeyPair(*key, prefix_);
  ::umask(old);
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_EQ(ModeOf(prefix_ + ".key"), 0600);
  EXPECT_EQ(ModeOf(prefix_ + ".pub"), 0644);
}

TEST_F(KeyFileTest, SecondWriteIsAlreadyExistsAndKeepsTheFirstKey) {
  auto first = Ed25519PrivateKey::Generate();
  auto second = Ed25519PrivateKey::Generate();
  ASSERT_TRUE(first.ok() && second.ok());
  ASSERT_TRUE(WriteKeyPair(*first, prefix_).ok());
  const absl::Status status = WriteKeyPair(*second, prefix_);
  EXPECT_EQ(status.code(), absl::StatusCode::kAlreadyExists) << status;
  auto priv = ReadPrivateKeyFile(prefix_ + ".key");
  ASSERT_TRUE(priv.ok()) << priv.status();
  EXPECT_EQ(priv->public_key().raw(), first->public_key().raw());
  auto pub = ReadPublicKeyFile(prefix_ + ".pub");
  ASSERT_TRUE(pub.ok()) << pub.status();
  EXPECT_EQ(pub->raw(), first->public_key().raw());
}

TEST_F(KeyFileTest, ExistingPublicFileLeavesNoPrivateKeyBehind) {
  { std::ofstream(prefix_ + ".pub") << "someone else's\n"; }
  auto key = Ed25519PrivateKey::Generate();
  ASSERT_TRUE(key.ok()) << key.status();
  const absl::Status status = WriteKeyPair(*key, prefix_);
  EXPECT_EQ(status.code(), absl::StatusCode::kAlreadyExists) << status;
  EXPECT_FALSE(Exists(prefix_ + ".key"));
  std::ifstream in(prefix_ + ".pub");
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line, "someone else's");
}

TEST_F(KeyFileTest, MissingAndMalformedFilesAreErrors) {
  auto missing = ReadPrivateKeyFile(prefix_ + ".key");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(missing.status().message()),
              HasSubstr(prefix_ + ".key"));

  { std::ofstream(prefix_ + ".pub") << "not a key\n"; }
  auto bad = ReadPublicKeyFile(prefix_ + ".pub");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(bad.status().message()), HasSubstr(prefix_ + ".pub"));
}

TEST_F(KeyFileTest, MissingDirectoryIsAnError) {
  auto key = Ed25519PrivateKey::Generate();
  ASSERT_TRUE(key.ok()) << key.status();
  const absl::Status status = WriteKeyPair(*key, dir_ + "/no/such/dir/k");
  EXPECT_EQ(status.code(), absl::StatusCode::kNotFound) << status;
}

}  // namespace
}  // namespace layerproof::store
