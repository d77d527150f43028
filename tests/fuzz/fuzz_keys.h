// The fixed keys and names of the fuzz targets and of their seed corpora
// (tests/fuzz/make_corpus.cc signs the seeds with these keys, so a seed
// passes the signature checks and the fuzzer starts past them). Test keys
// from constant seeds: never use them for anything else.
#ifndef LAYERPROOF_TESTS_FUZZ_FUZZ_KEYS_H_
#define LAYERPROOF_TESTS_FUZZ_FUZZ_KEYS_H_

#include <array>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <utility>

#include "store/checkpoint.h"
#include "store/crypto.h"

namespace layerproof::fuzz {

// The verifier's id; its log's checkpoints are signed under this key name
// and its origin is "layerproof/" + the id (what evidence bundles expect).
inline constexpr char kVerifierId[] = "verifier-1";
inline constexpr char kLogOrigin[] = "layerproof/verifier-1";
inline constexpr char kProverId[] = "prover-1";

inline store::Ed25519PrivateKey FixedKey(uint8_t fill) {
  std::array<uint8_t, 32> seed;
  seed.fill(fill);
  auto key = store::Ed25519PrivateKey::FromSeed(seed);
  if (!key.ok()) std::abort();
  return *std::move(key);
}

// The prover's commitment key and the verifier's (log, verdict, report) key.
inline const store::Ed25519PrivateKey& ProverKey() {
  static const auto* key = new store::Ed25519PrivateKey(FixedKey(0x11));
  return *key;
}
inline const store::Ed25519PrivateKey& VerifierKey() {
  static const auto* key = new store::Ed25519PrivateKey(FixedKey(0x22));
  return *key;
}

inline const store::CheckpointVerifier& LogVerifier() {
  static const auto* v =
      new store::CheckpointVerifier(kVerifierId, VerifierKey().public_key());
  return *v;
}

inline std::shared_ptr<const store::CheckpointSigner> LogSigner() {
  auto signer = store::CheckpointSigner::Create(kVerifierId, FixedKey(0x22));
  if (!signer.ok()) std::abort();
  return std::make_shared<const store::CheckpointSigner>(*std::move(signer));
}

}  // namespace layerproof::fuzz

#endif  // LAYERPROOF_TESTS_FUZZ_FUZZ_KEYS_H_
