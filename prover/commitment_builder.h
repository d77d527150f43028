// What the prover commits to for one request (DESIGN §1 step 2): the
// per-request secrets, the layer tap that hashes every layer's rows as the
// engine produces them, and the Commitment built from them.
//
// Keys: every salted digest and every layer hash of a request is keyed with
// store::DigestKey(salt, request_id) (records.proto). CommitmentTap keeps one
// kernels::model::LayerHasher per layer (H_0 .. H_L) under that key; rows go
// straight into the hashers, and only when a test fault's RowsTamper is set
// are they first copied and tampered with (the honest path never copies).
//
// Thread safety: a CommitmentTap serves one sequence and is called by the
// engine thread only; Finish is called once the sequence has finished (by
// any one thread). The free functions are pure apart from the CSPRNG.
#ifndef LAYERPROOF_PROVER_COMMITMENT_BUILDER_H_
#define LAYERPROOF_PROVER_COMMITMENT_BUILDER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "kernels/model/engine.h"
#include "kernels/model/layer_hash.h"
#include "kernels/model/model.h"
#include "layerproof/v1/records.pb.h"
#include "prover/internal/prover_faults.h"

namespace layerproof::prover {

// The secrets of one request.
struct RequestSecrets {
  std::string request_id;  // 16 random bytes
  std::string salt;        // 32 random bytes
  std::string key;         // store::DigestKey(salt, request_id)
};

// `n` bytes from OpenSSL's CSPRNG (RAND_bytes); Internal if it fails.
absl::StatusOr<std::string> RandomBytes(size_t n);
// A fresh request id and salt, and their key.
absl::StatusOr<RequestSecrets> NewRequestSecrets();
// A fresh random 64-bit sampling seed.
absl::StatusOr<uint64_t> RandomSeed();

// Hashes h^0 .. h^L of one sequence into H_0 .. H_L.
class CommitmentTap : public kernels::model::LayerTap {
 public:
  // `key`: the request's DigestKey. `tamper` (tests only) may be null.
  CommitmentTap(int64_t num_layers, int64_t width, std::string key,
                std::unique_ptr<RowsTamper> tamper);
  CommitmentTap(const CommitmentTap&) = delete;
  CommitmentTap& operator=(const CommitmentTap&) = delete;

  void OnLayerRows(kernels::model::SequenceId seq, int64_t layer, int64_t pos0,
                   const float* rows, int64_t n, int64_t width) override;

  // Closes every hash. Internal unless every layer covered exactly
  // `positions` rows (the engine's contract: prompt + output - 1).
  absl::StatusOr<std::vector<std::string>> Finish(int64_t positions);

 private:
  std::string key_;
  int64_t width_;
  std::unique_ptr<RowsTamper> tamper_;
  std::vector<kernels::model::LayerHasher> hashers_;
  std::vector<float> scratch_;  // only used with a tamper
};

// Everything a Commitment says, before signing.
struct CommitmentInputs {
  const kernels::model::Model* model = nullptr;
  std::string prover_id;
  RequestSecrets secrets;
  std::vector<int32_t> prompt;
  std::vector<int32_t> output;
  v1::SamplingParams sampling;
  uint64_t seed = 0;
  std::vector<std::string> layer_hashes;  // H_0 .. H_L
  std::string client_nonce;
  int64_t created_at_unix_nanos = 0;
  v1::FinishReason finish_reason = v1::FINISH_REASON_UNSPECIFIED;
  // The stop rule the engine applied (records.proto Commitment 17-20):
  // the request's max_new_tokens, its stop ids (empty: the model's
  // eos_token_ids), ignore_eos, and the engine's max_context.
  uint32_t max_new_tokens = 0;
  std::vector<int32_t> request_stop_token_ids;
  bool ignore_eos = false;
  int64_t max_context = 0;
};

// Fills every field of records.proto Commitment from `in` (digests keyed
// with in.secrets.key; stop_token_ids the effective set: the request's, or
// the model's eos_token_ids when it named none, as the engine stops).
// Does not validate: SignCommitment does.
v1::Commitment BuildCommitment(const CommitmentInputs& in);

// The stop ids the engine applies to a request naming `request_stop_ids`:
// those, or the model's eos_token_ids when it named none.
std::vector<int32_t> EffectiveStopTokenIds(
    const kernels::model::Model& model,
    const std::vector<int32_t>& request_stop_ids);

v1::FinishReason ToProtoFinishReason(kernels::model::FinishReason r);

// Nanoseconds since the Unix epoch, now.
int64_t UnixNanosNow();

}  // namespace layerproof::prover

#endif  // LAYERPROOF_PROVER_COMMITMENT_BUILDER_H_
