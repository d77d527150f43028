// The OpenAI-compatible API's response bodies (docs/openai-api.md): the
// completion and chat completion objects, their stream chunks, the model
// list and OpenAI-style error objects, as JSON text. Every completion
// carries the LayerProof receipt in a `layerproof` extension object that
// OpenAI clients ignore:
//   {"request_id": hex, "receipt": SavedReceipt (inference.proto, in the
//    protobuf JSON mapping: the GenerateRequest the prover ran and its
//    GenerateResponse, with the signed commitment and its inclusion or
//    promise)}
// `layerproof verify-receipt` reads a saved response body (or the last
// stream chunk) as it reads a SavedReceipt.
//
// Thread safety: pure functions.
#ifndef LAYERPROOF_OPENAI_API_RESPONSE_H_
#define LAYERPROOF_OPENAI_API_RESPONSE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "layerproof/v1/inference.pb.h"
#include "openai/api_request.h"

namespace layerproof::openai {

// "stop" or "length" (OpenAI's finish_reason) for a finished request;
// `stopped_by_text` when a stop string ended it (the commitment then says
// FINISH_REASON_CANCELLED: the client's own rule ended generation).
std::string FinishReasonName(v1::FinishReason reason, bool stopped_by_text);

// The `id` of a completion: "cmpl-" or "chatcmpl-" and the request id in
// hex.
std::string CompletionId(Endpoint endpoint, std::string_view request_id);

struct Completion {
  Endpoint endpoint = Endpoint::kCompletions;
  std::string model;
  int64_t created_unix_seconds = 0;
  std::string text;  // cut at the stop string
  bool stopped_by_text = false;
  v1::SavedReceipt receipt;  // request and response
};

// The whole (non-stream) body.
std::string CompletionBody(const Completion& c);

// One stream chunk's `data:` JSON. `delta` text; `role_chunk` the chat's
// first chunk ({"role": "assistant"}). The final chunk has `finish` set;
// `usage_and_receipt` adds usage (when include_usage, as its own last
// chunk with no choices) and the layerproof object.
struct StreamChunk {
  Endpoint endpoint = Endpoint::kCompletions;
  std::string id;
  std::string model;
  int64_t created_unix_seconds = 0;
  std::string delta;
  bool role_chunk = false;
  std::optional<std::string> finish;  // finish_reason
};
std::string StreamChunkBody(const StreamChunk& c);
// The last chunks: the one with finish_reason, then (when include_usage)
// one with no choices and the usage, as OpenAI sends it; the receipt rides
// on whichever is last.
std::vector<std::string> FinalChunkBodies(const StreamChunk& c,
                                          const Completion& done,
                                          bool include_usage);

// GET /v1/models.
std::string ModelsBody(std::string_view model, int64_t created_unix_seconds,
                       std::string_view owned_by);

// An OpenAI error object for `status`, with the HTTP status it maps to:
// InvalidArgument 400 (param: the field the message names), Unauthenticated
// 401, NotFound 404, FailedPrecondition 400, ResourceExhausted 429,
// Unavailable 503, DeadlineExceeded 504, anything else 500.
struct ApiError {
  int http_status = 500;
  std::string body;
};
ApiError ErrorBody(const absl::Status& status);
// The same with an explicit HTTP status and type (413, 405, ...).
ApiError ErrorBody(int http_status, std::string_view type,
                   std::string_view message);

// The receipt a saved response body (or stream chunk) carries: its
// layerproof.receipt. InvalidArgument naming the field when there is none.
absl::StatusOr<v1::SavedReceipt> ReceiptOfBody(std::string_view body);

}  // namespace layerproof::openai

#endif  // LAYERPROOF_OPENAI_API_RESPONSE_H_
