// C2SP checkpoints and signed notes (store/checkpoint.h).
#include "store/checkpoint.h"

#include <gtest/gtest.h>

#include <string>

#include "kernels/sha256.h"

namespace layerproof::store {
namespace {

Ed25519PrivateKey TestKey(uint8_t fill) {
  std::array<uint8_t, 32> seed;
  seed.fill(fill);
  return *Ed25519PrivateKey::FromSeed(seed);
}

Checkpoint Example() {
  Checkpoint c;
  c.origin = "layerproof.test/log";
  c.size = 7;
  for (size_t i = 0; i < c.root.size(); ++i) c.root[i] = uint8_t(i);
  return c;
}

// RFC 4648 §10 test vectors.
TEST(Base64, Rfc4648Vectors) {
  const std::pair<std::string, std::string> v[] = {{"", ""},
                                                   {"f", "Zg=="},
                                                   {"fo", "Zm8="},
                                                   {"foo", "Zm9v"},
                                                   {"foob", "Zm9vYg=="},
                                                   {"fooba", "Zm9vYmE="},
                                                   {"foobar", "Zm9vYmFy"}};
  for (const auto& [plain, encoded] : v) {
    EXPECT_EQ(Base64Encode(AsBytes(plain)), encoded);
    absl::StatusOr<std::string> d = Base64Decode(encoded);
    ASSERT_TRUE(d.ok()) << encoded;
    EXPECT_EQ(*d, plain);
  }
}

TEST(Base64, StrictDecoding) {
  for (const char* bad :
       {"Zg=", "Z===", "Zg=a", "Zh==", "Zm9=", "Zm 9", "=Zm9", "Zm9v\n"}) {
    EXPECT_FALSE(Base64Decode(bad).ok()) << bad;
  }
}

TEST(Checkpoint, BodyIsTheC2spFormat) {
  Checkpoint c = Example();
  c.extensions = {"ext one"};
  const std::string body = CheckpointBody(c);
  EXPECT_EQ(body,
            "layerproof.test/log\n7\n"
            "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=\next one\n");
  absl::StatusOr<Checkpoint> back = ParseCheckpointBody(body);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->origin, c.origin);
  EXPECT_EQ(back->size, 7u);
  EXPECT_EQ(back->root, c.root);
  EXPECT_EQ(back->extensions, c.extensions);
}

TEST(Checkpoint, MalformedBodiesNameTheLine) {
  const std::string root = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=";
  const std::pair<std::string, std::string> cases[] = {
      {"o\n7\n" + root, "newline"},
      {"o\n7\n", "fewer than 3"},
      {"o\n007\n" + root + "\n", "tree size"},
      {"o\n-1\n" + root + "\n", "tree size"},
      {"o\n18446744073709551616\n" + root + "\n", "tree size"},
      {"o\n7\nAAAA\n", "root hash"},
      {"o\n7\n" + root + "\n\n", "empty"},
      {"o\x01\n7\n" + root + "\n", "control"},
  };
  for (const auto& [text, want] : cases) {
    absl::StatusOr<Checkpoint> c = ParseCheckpointBody(text);
    ASSERT_FALSE(c.ok()) << text;
    EXPECT_EQ(c.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(std::string(c.status().message()).find(want), std::string::npos)
        << c.status();
  }
}

// The signed-note key id, computed independently with kernels' own SHA-256.
TEST(Checkpoint, KeyIdIsTheSignedNoteKeyHash) {
  const Ed25519PrivateKey key = TestKey(3);
  std::string input = "log.example+v1";
  input += '\n';
  input += '\x01';
  input.append(reinterpret_cast<const char*>(key.public_key().raw().data()),
               32);
  const kernels::Sha256Digest d =
      kernels::Sha256::Hash(input.data(), input.size());
  const uint32_t want = uint32_t{d[0]} << 24 | uint32_t{d[1]} << 16 |
                        uint32_t{d[2]} << 8 | uint32_t{d[3]};
  EXPECT_EQ(NoteKeyId("log.example+v1", key.public_key()), want);
  const std::string vkey = VerifierKey("logkey", key.public_key());
  EXPECT_EQ(vkey.rfind("logkey+", 0), 0u);
  EXPECT_EQ(vkey.size(), 7 + 8 + 1 + 44u);
}

TEST(Checkpoint, SignAndVerify) {
  auto signer = CheckpointSigner::Create("test-log", TestKey(1));
  ASSERT_TRUE(signer.ok());
  const std::string note = *signer->Sign(Example());
  EXPECT_EQ(
      note.rfind(CheckpointBody(Example()) + "\n\xE2\x80\x94 test-log ", 0),
      0u);
  CheckpointVerifier verifier("test-log", signer->public_key());
  absl::StatusOr<Checkpoint> c = verifier.Verify(note, "layerproof.test/log");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->size, 7u);
  EXPECT_EQ(c->root, Example().root);

  // A second signature by another key does not matter.
  auto other = CheckpointSigner::Create("witness", TestKey(2));
  const std::string cosigned =
      note +
      (*other->Sign(Example())).substr(CheckpointBody(Example()).size() + 1);
  EXPECT_TRUE(verifier.Verify(cosigned).ok());
}

TEST(Checkpoint, ForgedOrForeignNotesAreRefused) {
  auto signer = CheckpointSigner::Create("test-log", TestKey(1));
  const std::string note = *signer->Sign(Example());
  CheckpointVerifier verifier("test-log", signer->public_key());

  CheckpointVerifier wrong_key("test-log", TestKey(9).public_key());
  EXPECT_EQ(wrong_key.Verify(note).status().code(),
            absl::StatusCode::kPermissionDenied);
  CheckpointVerifier wrong_name("other-log", signer->public_key());
  EXPECT_EQ(wrong_name.Verify(note).status().code(),
            absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(verifier.Verify(note, "another/origin").status().code(),
            absl::StatusCode::kPermissionDenied);

  std::string tampered = note;
  tampered[tampered.find("\n7\n") + 1] = '8';
  EXPECT_EQ(verifier.Verify(tampered).status().code(),
            absl::StatusCode::kPermissionDenied);

  // Every single-bit flip of the signature block is refused.
  const size_t sig_start = note.rfind(' ') + 1;
  for (size_t i = sig_start; i + 1 < note.size(); ++i) {
    std::string flipped = note;
    flipped[i] ^= 0x01;
    EXPECT_FALSE(verifier.Verify(flipped).ok()) << "byte " << i;
  }
}

TEST(Checkpoint, MalformedNotesAreInvalidArgument) {
  auto signer = CheckpointSigner::Create("test-log", TestKey(1));
  const std::string note = *signer->Sign(Example());
  CheckpointVerifier verifier("test-log", signer->public_key());
  const std::string body = CheckpointBody(Example());
  const std::string sig_line = note.substr(body.size() + 1);
  const std::string cases[] = {
      body,                                     // no signatures
      body + "\n",                              // empty signature block
      body + "\n" + sig_line.substr(4),         // no em dash
      body + "\n\xE2\x80\x94 test-log !!!!\n",  // not base64
      body + "\n" + sig_line.substr(0, sig_line.size() - 1),  // no newline
      std::string(2 << 20, 'a'),                              // oversized
  };
  for (const std::string& c : cases) {
    EXPECT_EQ(verifier.Verify(c).status().code(),
              absl::StatusCode::kInvalidArgument)
        << c.substr(0, 80);
  }
  std::string many = body + "\n";
  for (int i = 0; i < 101; ++i) many += sig_line;
  EXPECT_EQ(verifier.Verify(many).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(Checkpoint, SignerRefusesBadNamesAndLines) {
  EXPECT_FALSE(CheckpointSigner::Create("has space", TestKey(1)).ok());
  EXPECT_FALSE(CheckpointSigner::Create("a+b", TestKey(1)).ok());
  EXPECT_FALSE(CheckpointSigner::Create("", TestKey(1)).ok());
  auto signer = CheckpointSigner::Create("k", TestKey(1));
  Checkpoint c = Example();
  c.origin = "two\nlines";
  EXPECT_FALSE(signer->Sign(c).ok());
  c = Example();
  c.extensions = {""};
  EXPECT_FALSE(signer->Sign(c).ok());
}

}  // namespace
}  // namespace layerproof::store
