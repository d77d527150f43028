// The OpenAI-compatible API's requests (docs/openai-api.md): a
// `POST /v1/completions` or `POST /v1/chat/completions` body, checked
// strictly and mapped to the GenerateRequest the prover runs. This mapping
// is the one home of what an OpenAI request means here: the prover's HTTP
// API serves with it, and `layerproof verify-receipt --openai-request`
// re-derives the GenerateRequest from the body the client sent and
// compares it with the one the receipt binds, so a prover cannot serve a
// different request than the one asked for unseen.
//
// Mapping: `prompt` (a string, or token ids) or the chat template's
// rendering of `messages` (encoded without added special tokens, as
// apply_chat_template(tokenize=True)); temperature (default 1) and top_p
// (default 1) with top_k off; max_tokens (completions: default 16, as
// OpenAI's; chat: `max_completion_tokens` or `max_tokens`, default the
// prover's max_new_tokens within the context); `seed`; the model's own
// end-of-sequence ids as stop ids. `stop` strings stay with the HTTP API
// (stop_text.h). A client nonce (the X-LayerProof-Nonce header, hex) fixes
// the sampling seed through the commitment (records.proto client_nonce).
//
// Refused with a named field (InvalidArgument, "body: <field>: got .., want
// .."): wrong types and ranges, n != 1, best_of != 1, non-zero penalties,
// logit_bias, logprobs, echo, suffix, tools, response_format and any field
// this server does not know. The wrong model is NotFound.
//
// Thread safety: pure functions (ModelText is immutable).
#ifndef LAYERPROOF_OPENAI_API_REQUEST_H_
#define LAYERPROOF_OPENAI_API_REQUEST_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "layerproof/v1/inference.pb.h"
#include "text/model_text.h"

namespace layerproof::openai {

enum class Endpoint { kCompletions, kChatCompletions };

// What the server serves, for the mapping's defaults and checks.
struct ServedModel {
  std::string name;  // the `model` a request must name
  uint32_t max_new_tokens = 1024;
  int64_t max_context = 0;
  const text::ModelText* text = nullptr;  // may be null: ids prompts only
};

inline constexpr size_t kMaxStopSequences = 4;
inline constexpr size_t kMaxStopSequenceBytes = 256;
inline constexpr size_t kMaxNonceBytes = 64;

struct ApiRequest {
  Endpoint endpoint = Endpoint::kCompletions;
  bool stream = false;
  // stream_options.include_usage: a last chunk with the usage.
  bool include_usage = false;
  // Non-empty, at most kMaxStopSequences of at most kMaxStopSequenceBytes.
  std::vector<std::string> stop;
  // What the prover runs and the receipt binds.
  v1::GenerateRequest generate;
  // The prompt as text: the request's `prompt`, or the rendered chat.
  std::string prompt_text;
};

// Parses and checks `body`. `nonce_hex` is the X-LayerProof-Nonce header
// (empty: none). Errors: InvalidArgument naming the field, NotFound for a
// model this server does not serve, FailedPrecondition for a chat on a
// model without a chat template (or a text prompt without a tokenizer).
absl::StatusOr<ApiRequest> ParseApiRequest(Endpoint endpoint,
                                           std::string_view body,
                                           std::string_view nonce_hex,
                                           const ServedModel& served);

}  // namespace layerproof::openai

#endif  // LAYERPROOF_OPENAI_API_REQUEST_H_
