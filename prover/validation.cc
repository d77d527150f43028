#include "prover/validation.h"

#include <algorithm>
#include <cmath>
#include <string_view>

#include "kernels/ref/sampling.h"
#include "store/commitment.h"
#include "store/internal/str_cat.h"
#include "store/status.h"

namespace layerproof::prover {
namespace {

using store::internal::Cat;

absl::Status Invalid(std::string_view field, const std::string& detail) {
  return absl::InvalidArgumentError(Cat(field, ": ", detail));
}

absl::Status CheckIds(std::string_view field,
                      const google::protobuf::RepeatedField<int32_t>& ids,
                      int64_t vocab) {
  for (int i = 0; i < ids.size(); ++i) {
    if (ids[i] < 0 || ids[i] >= vocab) {
      return Invalid(Cat(field, "[", i, "]"),
                     Cat("got ", ids[i], ", want 0..", vocab - 1));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckSampling(const v1::SamplingParams& s) {
  kernels::SamplingParams k;
  k.temperature = s.temperature();
  k.top_k = s.top_k();
  k.top_p = s.top_p();
  return store::ToAbslStatus(
      kernels::ValidateSamplingParams(k, "GenerateRequest.sampling"));
}

}  // namespace

absl::StatusOr<GenerationSpec> ValidateGenerateRequest(
    const v1::GenerateRequest& request, const GenerateLimits& limits,
    const text::ModelText* text) {
  GenerationSpec spec;
  switch (request.prompt_case()) {
    case v1::GenerateRequest::kText: {
      const std::string& prompt = request.text();
      if (prompt.empty()) {
        return Invalid("GenerateRequest.text", "got 0 bytes, want >= 1");
      }
      if (prompt.size() > limits.max_prompt_bytes) {
        return Invalid("GenerateRequest.text",
                       Cat("got ", prompt.size(),
                           " bytes, want <= ", limits.max_prompt_bytes));
      }
      if (text == nullptr) {
        return absl::FailedPreconditionError(
            "GenerateRequest.text: this prover has no tokenizer; send "
            "token_ids");
      }
      kernels::StatusOr<std::vector<int32_t>> ids = text->EncodePrompt(prompt);
      if (!ids.ok()) {
        return Invalid("GenerateRequest.text", ids.status().message());
      }
      spec.prompt = *std::move(ids);
      for (int32_t id : spec.prompt) {
        if (id < 0 || id >= limits.vocab_size) {
          return absl::FailedPreconditionError(Cat(
              "GenerateRequest.text: the tokenizer produced id ", id,
              ", outside the model's vocabulary 0..", limits.vocab_size - 1));
        }
      }
      break;
    }
    case v1::GenerateRequest::kTokenIds: {
      const auto& ids = request.token_ids().ids();
      if (ids.empty()) {
        return Invalid("GenerateRequest.token_ids.ids", "got 0 ids, want >= 1");
      }
      LP_RETURN_IF_ERROR(
          CheckIds("GenerateRequest.token_ids.ids", ids, limits.vocab_size));
      spec.prompt.assign(ids.begin(), ids.end());
      break;
    }
    case v1::GenerateRequest::PROMPT_NOT_SET:
      return Invalid("GenerateRequest.prompt",
                     "got neither text nor token_ids, want exactly one");
  }
  const int64_t n = static_cast<int64_t>(spec.prompt.size());
  const int64_t max_prompt =
      std::min<int64_t>(limits.max_prompt_tokens, limits.max_context - 1);
  if (n > max_prompt) {
    return Invalid("GenerateRequest.prompt",
                   Cat("got ", n, " tokens, want <= ", max_prompt));
  }
  if (request.max_tokens() < 1 ||
      request.max_tokens() > limits.max_new_tokens) {
    return Invalid(
        "GenerateRequest.max_tokens",
        Cat("got ", request.max_tokens(), ", want 1..", limits.max_new_tokens));
  }
  spec.max_tokens = request.max_tokens();
  if (request.has_sampling()) {
    LP_RETURN_IF_ERROR(CheckSampling(request.sampling()));
    spec.sampling = request.sampling();
  } else {
    spec.sampling.set_temperature(0);
    spec.sampling.set_top_k(0);
    spec.sampling.set_top_p(1);
  }
  if (request.client_nonce().size() > store::kMaxClientNonceBytes) {
    return Invalid("GenerateRequest.client_nonce",
                   Cat("got ", request.client_nonce().size(),
                       " bytes, want <= ", store::kMaxClientNonceBytes));
  }
  if (!request.client_nonce().empty() && request.has_seed()) {
    return Invalid("GenerateRequest.seed",
                   "got a seed and a client_nonce, want at most one (the "
                   "nonce fixes the seed)");
  }
  spec.client_nonce = request.client_nonce();
  if (request.has_seed()) spec.seed = request.seed();
  if (request.stop_token_ids_size() > kMaxStopTokenIds) {
    return Invalid("GenerateRequest.stop_token_ids",
                   Cat("got ", request.stop_token_ids_size(),
                       " ids, want <= ", kMaxStopTokenIds));
  }
  LP_RETURN_IF_ERROR(CheckIds("GenerateRequest.stop_token_ids",
                              request.stop_token_ids(), limits.vocab_size));
  spec.stop_token_ids.assign(request.stop_token_ids().begin(),
                             request.stop_token_ids().end());
  spec.ignore_eos = request.ignore_eos();
  return spec;
}

absl::Status ValidateOpenRequest(const v1::OpenRequest& request,
                                 uint32_t num_layers) {
  if (request.request_id().size() != store::kRequestIdBytes) {
    return Invalid("OpenRequest.request_id",
                   Cat("got ", request.request_id().size(), " bytes, want ",
                       store::kRequestIdBytes));
  }
  for (int i = 0; i < request.layers_size(); ++i) {
    const uint32_t k = request.layers(i);
    if (k > num_layers) {
      return Invalid(Cat("OpenRequest.layers[", i, "]"),
                     Cat("got ", k, ", want 0..", num_layers));
    }
    if (i > 0 && k <= request.layers(i - 1)) {
      return Invalid(Cat("OpenRequest.layers[", i, "]"),
                     Cat("got ", k, " after ", request.layers(i - 1),
                         ", want strictly ascending"));
    }
  }
  return absl::OkStatus();
}

}  // namespace layerproof::prover
