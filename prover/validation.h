// Request validation for the prover's services, kept apart from the
// handlers (STYLE "Errors"): every refusal is INVALID_ARGUMENT naming the
// field, the value and the limit, e.g.
//   "GenerateRequest.max_tokens: got 100000, want <= 8192".
// Thread safety: pure functions (the tokenizer is immutable).
#ifndef LAYERPROOF_PROVER_VALIDATION_H_
#define LAYERPROOF_PROVER_VALIDATION_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "text/model_text.h"
#include "layerproof/v1/inference.pb.h"
#include "layerproof/v1/opening.pb.h"

namespace layerproof::prover {

// The prover's limits (ModelInfoResponse reports them).
struct GenerateLimits {
  int64_t vocab_size = 0;
  int64_t max_context = 0;  // prompt + output
  uint32_t max_new_tokens = 1024;
  uint32_t max_prompt_tokens = 4096;
  uint32_t max_prompt_bytes = 64 << 10;  // of text
};

inline constexpr int kMaxStopTokenIds = 16;

// A validated GenerateRequest.
struct GenerationSpec {
  std::vector<int32_t> prompt;
  v1::SamplingParams sampling;  // defaults filled in (greedy)
  uint32_t max_tokens = 0;
  std::string client_nonce;
  std::optional<uint64_t> seed;  // the request's, if it gave one
  std::vector<int32_t> stop_token_ids;
  bool ignore_eos = false;
};

// Checks `request` against `limits` and tokenizes a text prompt with
// `text` as transformers' tokenizer(text) would (ModelText::EncodePrompt;
// null: text prompts are FAILED_PRECONDITION).
absl::StatusOr<GenerationSpec> ValidateGenerateRequest(
    const v1::GenerateRequest& request, const GenerateLimits& limits,
    const text::ModelText* text);

// request_id 16 bytes; layers strictly ascending within 0..num_layers.
absl::Status ValidateOpenRequest(const v1::OpenRequest& request,
                                 uint32_t num_layers);

}  // namespace layerproof::prover

#endif  // LAYERPROOF_PROVER_VALIDATION_H_
