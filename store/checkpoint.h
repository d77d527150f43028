// Log checkpoints in the C2SP formats: the tlog-checkpoint body
// (https://c2sp.org/tlog-checkpoint) inside a signed note
// (https://c2sp.org/signed-note) with Ed25519 signatures.
//
//   <origin>\n
//   <tree size, decimal>\n
//   <base64 root hash>\n
//   [extension lines]\n...
//   \n
//   — <key name> <base64(key id (4 bytes) || Ed25519 signature (64))>\n
//
// The key id is the first 4 bytes of SHA-256(key name || 0x0A || 0x01 ||
// 32-byte public key), big-endian (signed-note §"Signature types",
// algorithm byte 0x01 = Ed25519). The signature is over the note text: every
// line up to and including the newline before the blank line.
//
// Parsing is strict: a malformed note or body is InvalidArgument naming the
// line; a note without a valid signature by the expected key is
// PermissionDenied. Thread safety: signers and verifiers are immutable.
#ifndef LAYERPROOF_STORE_CHECKPOINT_H_
#define LAYERPROOF_STORE_CHECKPOINT_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "store/crypto.h"

namespace layerproof::store {

struct Checkpoint {
  std::string origin;  // the log's unique name, e.g. "layerproof.example/log"
  uint64_t size = 0;
  Sha256Hash root{};
  std::vector<std::string> extensions;  // optional non-empty lines
};

// The note text of `c` (ends with a newline).
std::string CheckpointBody(const Checkpoint& c);
absl::StatusOr<Checkpoint> ParseCheckpointBody(std::string_view text);

// Standard base64 with padding (RFC 4648 §4); decoding is strict.
std::string Base64Encode(Bytes data);
absl::StatusOr<std::string> Base64Decode(std::string_view text);

// The signed-note key id of an Ed25519 key named `name`.
uint32_t NoteKeyId(std::string_view name, const Ed25519PublicKey& key);
// The C2SP verifier key string: <name>+<hex key id>+<base64(0x01 || key)>.
std::string VerifierKey(std::string_view name, const Ed25519PublicKey& key);

class CheckpointSigner {
 public:
  // `name` is the key name of the signature line: non-empty, no spaces or
  // '+'. The key is moved in.
  static absl::StatusOr<CheckpointSigner> Create(std::string name,
                                                 Ed25519PrivateKey key);
  // The signed note of `c`.
  absl::StatusOr<std::string> Sign(const Checkpoint& c) const;
  const std::string& name() const { return name_; }
  const Ed25519PublicKey& public_key() const { return key_.public_key(); }

 private:
  CheckpointSigner(std::string name, Ed25519PrivateKey key)
      : name_(std::move(name)), key_(std::move(key)) {}
  std::string name_;
  Ed25519PrivateKey key_;
};

class CheckpointVerifier {
 public:
  CheckpointVerifier(std::string name, Ed25519PublicKey key)
      : name_(std::move(name)), key_(key) {}
  // Parses `note`, requires a valid signature by this key (signatures by
  // other keys are ignored), and returns the checkpoint; `origin`, when not
  // empty, must match.
  absl::StatusOr<Checkpoint> Verify(std::string_view note,
                                    std::string_view origin = {}) const;

 private:
  std::string name_;
  Ed25519PublicKey key_;
};

}  // namespace layerproof::store

#endif  // LAYERPROOF_STORE_CHECKPOINT_H_
