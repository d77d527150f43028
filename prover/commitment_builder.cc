#include "prover/commitment_builder.h"

#include <openssl/rand.h>

#include <chrono>
#include <utility>

#include "kernels/golden.h"
#include "store/commitment.h"
#include "store/crypto.h"
#include "store/internal/str_cat.h"

namespace layerproof::prover {

namespace model = kernels::model;

absl::StatusOr<std::string> RandomBytes(size_t n) {
  std::string out(n, '\0');
  if (n > 0 && RAND_bytes(reinterpret_cast<unsigned char*>(out.data()),
                          static_cast<int>(n)) != 1) {
    return absl::InternalError(
        store::internal::Cat("RAND_bytes(", n, ") failed"));
  }
  return out;
}

absl::StatusOr<RequestSecrets> NewRequestSecrets() {
  RequestSecrets s;
  LP_ASSIGN_OR_RETURN(s.request_id, RandomBytes(store::kRequestIdBytes));
  LP_ASSIGN_OR_RETURN(s.salt, RandomBytes(store::kSaltBytes));
  s.key =
      store::DigestKey(store::AsBytes(s.salt), store::AsBytes(s.request_id));
  return s;
}

absl::StatusOr<uint64_t> RandomSeed() {
  LP_ASSIGN_OR_RETURN(std::string b, RandomBytes(8));
  uint64_t seed = 0;
  for (int i = 7; i >= 0; --i) seed = (seed << 8) | static_cast<uint8_t>(b[i]);
  return seed;
}

CommitmentTap::CommitmentTap(int64_t num_layers, int64_t width, std::string key,
                             std::unique_ptr<RowsTamper> tamper)
    : key_(std::move(key)), width_(width), tamper_(std::move(tamper)) {
  hashers_.reserve(static_cast<size_t>(num_layers + 1));
  for (int64_t l = 0; l <= num_layers; ++l) {
    hashers_.emplace_back(l, width, store::AsBytes(key_));
  }
}

void CommitmentTap::OnLayerRows(model::SequenceId /*seq*/, int64_t layer,
                                int64_t pos0, const float* rows, int64_t n,
                                int64_t width) {
  // The engine's contract: 0 <= layer <= L, width == hidden (invariants).
  model::LayerHasher& hasher = hashers_[static_cast<size_t>(layer)];
  if (tamper_ == nullptr) {
    hasher.AddRows(rows, n);
    return;
  }
  scratch_.assign(rows, rows + n * width);
  tamper_->Tamper(layer, pos0, scratch_.data(), n, width);
  hasher.AddRows(scratch_.data(), n);
}

absl::StatusOr<std::vector<std::string>> CommitmentTap::Finish(
    int64_t positions) {
  std::vector<std::string> out;
  out.reserve(hashers_.size());
  for (size_t l = 0; l < hashers_.size(); ++l) {
    if (hashers_[l].positions() != positions) {
      return absl::InternalError(store::internal::Cat(
          "layer tap: h^", l, " covered ", hashers_[l].positions(),
          " positions, want ", positions));
    }
    const kernels::Sha256Digest d = hashers_[l].Finish();
    out.emplace_back(reinterpret_cast<const char*>(d.data()), d.size());
  }
  return out;
}

v1::FinishReason ToProtoFinishReason(model::FinishReason r) {
  switch (r) {
    case model::FinishReason::kStop:
      return v1::FINISH_REASON_STOP;
    case model::FinishReason::kMaxTokens:
      return v1::FINISH_REASON_MAX_TOKENS;
    case model::FinishReason::kContextFull:
      return v1::FINISH_REASON_CONTEXT_FULL;
    case model::FinishReason::kCancelled:
      return v1::FINISH_REASON_CANCELLED;
    case model::FinishReason::kNone:
      break;
  }
  return v1::FINISH_REASON_UNSPECIFIED;
}

int64_t UnixNanosNow() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

namespace {
std::string AsString(const store::Sha256Hash& h) {
  return std::string(reinterpret_cast<const char*>(h.data()), h.size());
}
}  // namespace

v1::Commitment BuildCommitment(const CommitmentInputs& in) {
  const model::ModelConfig& config = in.model->config();
  const store::Bytes key = store::AsBytes(in.secrets.key);
  v1::Commitment c;
  c.set_request_id(in.secrets.request_id);
  c.set_prover_id(in.prover_id);
  const kernels::Sha256Digest& root = in.model->digest().root;
  c.set_model_digest(
      std::string(reinterpret_cast<const char*>(root.data()), root.size()));
  c.set_spec_version(kernels::kSpecVersion);
  c.set_prompt_digest(AsString(store::TokenDigest(key, in.prompt)));
  c.set_prompt_tokens(static_cast<uint32_t>(in.prompt.size()));
  c.set_output_digest(AsString(store::TokenDigest(key, in.output)));
  c.set_output_tokens(static_cast<uint32_t>(in.output.size()));
  *c.mutable_sampling() = in.sampling;
  c.set_seed_digest(AsString(store::SeedDigest(key, in.seed)));
  for (const std::string& h : in.layer_hashes) c.add_layer_hashes(h);
  c.set_num_layers(static_cast<uint32_t>(config.num_layers));
  c.set_hidden_size(static_cast<uint32_t>(config.hidden_size));
  c.set_client_nonce(in.client_nonce);
  c.set_created_at_unix_nanos(in.created_at_unix_nanos);
  c.set_finish_reason(in.finish_reason);
  c.set_max_new_tokens(in.max_new_tokens);
  for (int32_t id :
       EffectiveStopTokenIds(*in.model, in.request_stop_token_ids)) {
    c.add_stop_token_ids(id);
  }
  c.set_stop_ids_from_model(in.request_stop_token_ids.empty());
  c.set_ignore_eos(in.ignore_eos);
  c.set_max_context(static_cast<uint32_t>(in.max_context));
  return c;
}

std::vector<int32_t> EffectiveStopTokenIds(
    const model::Model& model, const std::vector<int32_t>& request_stop_ids) {
  // Engine::Step: request.stop_tokens, or the model's eos ids when empty.
  return request_stop_ids.empty() ? model.config().eos_token_ids
                                  : request_stop_ids;
}

}  // namespace layerproof::prover
