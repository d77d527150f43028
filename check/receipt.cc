#include "check/receipt.h"

#include <algorithm>
#include <bit>
#include <span>
#include <vector>

#include "kernels/status.h"
#include "store/commitment.h"
#include "store/internal/str_cat.h"
#include "store/merkle.h"

namespace layerproof::check {
namespace {

using store::internal::Cat;

// A commitment envelope is ~40 KiB at most (1025 layer hashes); anything
// far larger is refused before it is parsed.
constexpr size_t kMaxCommitmentEnvelopeBytes = 1 << 20;

absl::Status Contradicts(std::string_view field, std::string_view what) {
  return absl::DataLossError(Cat("receipt: ", field, ": ", what));
}

absl::Status Prefixed(const absl::Status& s, std::string_view part) {
  return absl::Status(s.code(),
                      Cat("receipt: ", part, ": ", std::string(s.message())));
}

std::string AsString(const store::Sha256Hash& h) {
  return std::string(h.begin(), h.end());
}

template <typename Ids>
std::vector<int32_t> ToVector(const Ids& ids) {
  return std::vector<int32_t>(ids.begin(), ids.end());
}

// The sampling the prover must have applied: the request's, or greedy.
v1::SamplingParams Requested(const v1::GenerateRequest& request) {
  if (request.has_sampling()) return request.sampling();
  v1::SamplingParams greedy;
  greedy.set_temperature(0);
  greedy.set_top_k(0);
  greedy.set_top_p(1);
  return greedy;
}

absl::Status CheckIdentity(const v1::Commitment& c,
                           const v1::GenerateResponse& r,
                           const ReceiptTrust& trust) {
  if (c.request_id() != r.request_id()) {
    return Contradicts("Commitment.request_id",
                       "differs from GenerateResponse.request_id");
  }
  if (!trust.prover_id.empty() && c.prover_id() != trust.prover_id) {
    return Contradicts("Commitment.prover_id",
                       Cat("got \"", c.prover_id(), "\", want \"",
                           trust.prover_id, "\""));
  }
  if (!trust.model_digest.empty() && c.model_digest() != trust.model_digest) {
    return Contradicts("Commitment.model_digest",
                       Cat("got ", store::HexEncode(store::AsBytes(
                                       c.model_digest())),
                           ", want ",
                           store::HexEncode(
                               store::AsBytes(trust.model_digest))));
  }
  return absl::OkStatus();
}

// The commitment binds the request as it was sent.
absl::Status CheckRequestBinding(const v1::Commitment& c,
                                 const v1::GenerateRequest& q,
                                 const v1::GenerateResponse& r) {
  const v1::SamplingParams want = Requested(q);
  const v1::SamplingParams& got = c.sampling();
  // Bit equality: the sampler's result depends on every bit.
  if (std::bit_cast<uint32_t>(got.temperature()) !=
          std::bit_cast<uint32_t>(want.temperature()) ||
      got.top_k() != want.top_k() ||
      std::bit_cast<uint32_t>(got.top_p()) !=
          std::bit_cast<uint32_t>(want.top_p())) {
    return Contradicts(
        "Commitment.sampling",
        Cat("not the request's (temperature, top_k, top_p) ",
            q.has_sampling() ? "as sent" : "greedy default (0, 0, 1)"));
  }
  if (c.max_new_tokens() != q.max_tokens()) {
    return Contradicts("Commitment.max_new_tokens",
                       Cat("got ", c.max_new_tokens(), ", want ",
                           q.max_tokens(), " (GenerateRequest.max_tokens)"));
  }
  if (c.ignore_eos() != q.ignore_eos()) {
    return Contradicts("Commitment.ignore_eos",
                       Cat("got ", c.ignore_eos() ? "true" : "false",
                           ", want the request's ",
                           q.ignore_eos() ? "true" : "false"));
  }
  if (q.stop_token_ids_size() == 0) {
    if (!c.stop_ids_from_model()) {
      return Contradicts("Commitment.stop_ids_from_model",
                         "false, but the request named no stop ids (the "
                         "model's end-of-sequence ids apply)");
    }
  } else if (c.stop_ids_from_model() ||
             ToVector(c.stop_token_ids()) != ToVector(q.stop_token_ids())) {
    return Contradicts("Commitment.stop_token_ids",
                       "not the request's stop_token_ids");
  }
  if (c.client_nonce() != q.client_nonce()) {
    return Contradicts("Commitment.client_nonce",
                       "not the nonce the request sent");
  }
  if (!q.client_nonce().empty()) {
    if (r.seed() != store::SeedFromNonce(store::AsBytes(q.client_nonce()))) {
      return Contradicts("GenerateResponse.seed",
                         "not the seed the client nonce derives "
                         "(store::SeedFromNonce)");
    }
  } else if (q.has_seed() && r.seed() != q.seed()) {
    return Contradicts("GenerateResponse.seed",
                       Cat("got ", r.seed(), ", want the request's ", q.seed()));
  }
  return absl::OkStatus();
}

// The response's ids and seed are the committed ones.
absl::Status CheckTokens(const v1::Commitment& c, const v1::GenerateRequest& q,
                         const v1::GenerateResponse& r) {
  if (r.salt().size() != store::kSaltBytes) {
    return absl::InvalidArgumentError(
        Cat("receipt: GenerateResponse.salt: ", r.salt().size(),
            " bytes, want ", store::kSaltBytes));
  }
  const std::vector<int32_t> prompt = ToVector(r.prompt_token_ids());
  const std::vector<int32_t> output = ToVector(r.output_token_ids());
  if (q.has_token_ids() && prompt != ToVector(q.token_ids().ids())) {
    return Contradicts("GenerateResponse.prompt_token_ids",
                       "not the prompt ids the request sent");
  }
  if (prompt.size() != c.prompt_tokens() ||
      output.size() != c.output_tokens()) {
    return Contradicts("Commitment.prompt_tokens/output_tokens",
                       Cat("commit ", c.prompt_tokens(), "/", c.output_tokens(),
                           " tokens, the response has ", prompt.size(), "/",
                           output.size()));
  }
  const std::string key = store::DigestKey(store::AsBytes(r.salt()),
                                           store::AsBytes(r.request_id()));
  const store::Bytes k = store::AsBytes(key);
  if (AsString(store::TokenDigest(k, prompt)) != c.prompt_digest()) {
    return Contradicts("Commitment.prompt_digest",
                       "not the salted digest of the response's prompt ids");
  }
  if (AsString(store::TokenDigest(k, output)) != c.output_digest()) {
    return Contradicts("Commitment.output_digest",
                       "not the salted digest of the response's output ids");
  }
  if (AsString(store::SeedDigest(k, r.seed())) != c.seed_digest()) {
    return Contradicts("Commitment.seed_digest",
                       "not the salted digest of GenerateResponse.seed");
  }
  if (r.finish_reason() != c.finish_reason()) {
    return Contradicts("GenerateResponse.finish_reason",
                       "differs from the commitment's");
  }
  size_t allowed = 0;
  const absl::Status rule = store::CheckStopRule(c, output, &allowed);
  if (!rule.ok()) {
    return Contradicts("the stop rule", std::string(rule.message()));
  }
  return absl::OkStatus();
}

absl::Status CheckPromise(const std::string& promise_envelope,
                          const std::string& commitment_envelope,
                          const v1::Commitment& c, const ReceiptTrust& trust,
                          CheckedReceipt* out) {
  absl::StatusOr<store::VerifiedEnvelope> verified = store::VerifyEnvelope(
      promise_envelope, trust.prover_keys, store::kSubmissionPromisePayloadType,
      store::kMaxPromiseEnvelopeBytes);
  if (!verified.ok()) {
    return Prefixed(verified.status(), "Receipt.promise_envelope");
  }
  absl::StatusOr<v1::SubmissionPromise> promise =
      store::ParseSubmissionPromise(verified->payload);
  if (!promise.ok()) {
    return Prefixed(promise.status(), "Receipt.promise_envelope");
  }
  if (promise->request_id() != c.request_id() ||
      promise->prover_id() != c.prover_id()) {
    return Contradicts("SubmissionPromise",
                       "names another request or prover");
  }
  if (promise->commitment_leaf_hash() !=
      AsString(store::LeafHash(commitment_envelope))) {
    return Contradicts("SubmissionPromise.commitment_leaf_hash",
                       "not the leaf of this commitment envelope");
  }
  if (promise->log_origin() != trust.log.origin) {
    return Contradicts("SubmissionPromise.log_origin",
                       Cat("got \"", promise->log_origin(), "\", want \"",
                           trust.log.origin, "\""));
  }
  out->promise = *std::move(promise);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<CheckedReceipt> CheckReceipt(const v1::GenerateRequest& request,
                                            const v1::GenerateResponse& response,
                                            const ReceiptTrust& trust) {
  absl::StatusOr<store::VerifiedEnvelope> verified = store::VerifyEnvelope(
      response.commitment_envelope(), trust.prover_keys,
      store::kCommitmentPayloadType, kMaxCommitmentEnvelopeBytes);
  if (!verified.ok()) {
    return Prefixed(verified.status(), "GenerateResponse.commitment_envelope");
  }
  absl::StatusOr<v1::Commitment> commitment =
      store::ParseCommitment(verified->payload);
  if (!commitment.ok()) {
    return Prefixed(commitment.status(),
                    "GenerateResponse.commitment_envelope");
  }
  CheckedReceipt out;
  out.commitment = *std::move(commitment);
  const v1::Commitment& c = out.commitment;
  LP_RETURN_IF_ERROR(CheckIdentity(c, response, trust));
  LP_RETURN_IF_ERROR(CheckRequestBinding(c, request, response));
  LP_RETURN_IF_ERROR(CheckTokens(c, request, response));
  switch (response.receipt().kind_case()) {
    case v1::Receipt::kInclusion:
      LP_RETURN_IF_ERROR(CheckPromisedInclusion(response.receipt().inclusion(),
                                                response.commitment_envelope(),
                                                trust, &out));
      break;
    case v1::Receipt::kPromiseEnvelope:
      LP_RETURN_IF_ERROR(CheckPromise(response.receipt().promise_envelope(),
                                      response.commitment_envelope(), c, trust,
                                      &out));
      break;
    case v1::Receipt::KIND_NOT_SET:
      return absl::InvalidArgumentError(
          "receipt: GenerateResponse.receipt: neither an inclusion nor a "
          "promise");
  }
  return out;
}

absl::Status CheckPromisedInclusion(const v1::LogInclusion& inclusion,
                                    const std::string& envelope,
                                    const ReceiptTrust& trust,
                                    CheckedReceipt* receipt) {
  LP_ASSIGN_OR_RETURN(store::Checkpoint checkpoint,
                      CheckInclusion(inclusion, envelope, trust.log,
                                     "receipt: LogInclusion"));
  receipt->checkpoint = std::move(checkpoint);
  receipt->leaf_index = inclusion.leaf_index();
  return absl::OkStatus();
}

}  // namespace layerproof::check
