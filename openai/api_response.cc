#include "openai/api_response.h"

#include <google/protobuf/util/json_util.h>

#include <nlohmann/json.hpp>
#include <utility>

#include "store/crypto.h"
#include "store/internal/str_cat.h"

namespace layerproof::openai {
namespace {

using store::internal::Cat;

using Json = nlohmann::ordered_json;

std::string Hex(std::string_view bytes) {
  return store::HexEncode(store::AsBytes(bytes));
}

// Compact JSON; invalid UTF-8 in a string becomes U+FFFD.
std::string Dump(const Json& j) {
  return j.dump(-1, ' ', false, Json::error_handler_t::replace);
}

// OpenAI's error object.
Json ErrorJson(std::string_view type, std::string_view message, Json param,
               Json code) {
  Json e;
  e["message"] = message;
  e["type"] = type;
  e["param"] = std::move(param);
  e["code"] = std::move(code);
  return Json{{"error", std::move(e)}};
}

Json Usage(const v1::GenerateResponse& r) {
  Json u;
  u["prompt_tokens"] = r.prompt_token_ids_size();
  u["completion_tokens"] = r.output_token_ids_size();
  u["total_tokens"] = r.prompt_token_ids_size() + r.output_token_ids_size();
  return u;
}

Json Extension(const v1::SavedReceipt& receipt) {
  std::string json;
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  // A SavedReceipt always prints (it has no Any fields or maps of bad keys).
  (void)google::protobuf::util::MessageToJsonString(receipt, &json, options);
  Json ext;
  ext["request_id"] = Hex(receipt.response().request_id());
  ext["receipt"] = Json::parse(json);
  return ext;
}

Json ChunkHead(const StreamChunk& c) {
  Json j;
  j["id"] = c.id;
  j["object"] = c.endpoint == Endpoint::kCompletions ? "text_completion"
                                                     : "chat.completion.chunk";
  j["created"] = c.created_unix_seconds;
  j["model"] = c.model;
  return j;
}

Json ChunkChoice(const StreamChunk& c) {
  Json choice;
  choice["index"] = 0;
  if (c.endpoint == Endpoint::kCompletions) {
    choice["text"] = c.delta;
    choice["logprobs"] = nullptr;
  } else {
    Json delta = Json::object();
    if (c.role_chunk) delta["role"] = "assistant";
    if (c.role_chunk || !c.delta.empty()) delta["content"] = c.delta;
    choice["delta"] = std::move(delta);
    choice["logprobs"] = nullptr;
  }
  choice["finish_reason"] =
      c.finish.has_value() ? Json(*c.finish) : Json(nullptr);
  return choice;
}

// The param of an InvalidArgument message "body: <field>: ...".
std::string ParamOf(std::string_view message) {
  constexpr std::string_view kBody = "body: ";
  if (message.substr(0, kBody.size()) != kBody) return "";
  message.remove_prefix(kBody.size());
  const size_t colon = message.find(": ");
  return colon == std::string_view::npos
             ? ""
             : std::string(message.substr(0, colon));
}

}  // namespace

std::string FinishReasonName(v1::FinishReason reason, bool stopped_by_text) {
  if (stopped_by_text || reason == v1::FINISH_REASON_STOP) return "stop";
  return "length";
}

std::string CompletionId(Endpoint endpoint, std::string_view request_id) {
  return Cat(endpoint == Endpoint::kCompletions ? "cmpl-" : "chatcmpl-",
             Hex(request_id));
}

std::string CompletionBody(const Completion& c) {
  const v1::GenerateResponse& r = c.receipt.response();
  Json j;
  j["id"] = CompletionId(c.endpoint, r.request_id());
  j["object"] = c.endpoint == Endpoint::kCompletions ? "text_completion"
                                                     : "chat.completion";
  j["created"] = c.created_unix_seconds;
  j["model"] = c.model;
  Json choice;
  choice["index"] = 0;
  if (c.endpoint == Endpoint::kCompletions) {
    choice["text"] = c.text;
  } else {
    choice["message"] = {{"role", "assistant"}, {"content", c.text}};
  }
  choice["logprobs"] = nullptr;
  choice["finish_reason"] =
      FinishReasonName(r.finish_reason(), c.stopped_by_text);
  j["choices"] = Json::array({std::move(choice)});
  j["usage"] = Usage(r);
  j["layerproof"] = Extension(c.receipt);
  return Dump(j);
}

std::string StreamChunkBody(const StreamChunk& c) {
  Json j = ChunkHead(c);
  j["choices"] = Json::array({ChunkChoice(c)});
  return Dump(j);
}

std::vector<std::string> FinalChunkBodies(const StreamChunk& c,
                                          const Completion& done,
                                          bool include_usage) {
  Json j = ChunkHead(c);
  j["choices"] = Json::array({ChunkChoice(c)});
  if (!include_usage) {
    j["layerproof"] = Extension(done.receipt);
    return {Dump(j)};
  }
  Json u = ChunkHead(c);
  u["choices"] = Json::array();
  u["usage"] = Usage(done.receipt.response());
  u["layerproof"] = Extension(done.receipt);
  return {Dump(j), Dump(u)};
}

std::string ModelsBody(std::string_view model, int64_t created_unix_seconds,
                       std::string_view owned_by) {
  Json m;
  m["id"] = model;
  m["object"] = "model";
  m["created"] = created_unix_seconds;
  m["owned_by"] = owned_by;
  Json j;
  j["object"] = "list";
  j["data"] = Json::array({std::move(m)});
  return Dump(j);
}

ApiError ErrorBody(int http_status, std::string_view type,
                   std::string_view message) {
  return ApiError{http_status,
                  Dump(ErrorJson(type, message, nullptr, nullptr))};
}

ApiError ErrorBody(const absl::Status& status) {
  int http = 500;
  std::string type = "server_error";
  std::string code;
  switch (status.code()) {
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kFailedPrecondition:
    case absl::StatusCode::kOutOfRange:
      http = 400, type = "invalid_request_error";
      break;
    case absl::StatusCode::kUnauthenticated:
      http = 401, type = "authentication_error", code = "invalid_api_key";
      break;
    case absl::StatusCode::kPermissionDenied:
      http = 403, type = "permission_error";
      break;
    case absl::StatusCode::kNotFound:
      http = 404, type = "invalid_request_error", code = "model_not_found";
      break;
    case absl::StatusCode::kResourceExhausted:
      http = 429, type = "rate_limit_error", code = "rate_limit_exceeded";
      break;
    case absl::StatusCode::kUnavailable:
      http = 503, type = "server_error", code = "unavailable";
      break;
    case absl::StatusCode::kDeadlineExceeded:
      http = 504, type = "server_error", code = "timeout";
      break;
    default:
      break;
  }
  const std::string message(status.message());
  const std::string param = http == 400 ? ParamOf(message) : "";
  return ApiError{
      http, Dump(ErrorJson(type, message, param.empty() ? Json() : Json(param),
                           code.empty() ? Json() : Json(code)))};
}

absl::StatusOr<v1::SavedReceipt> ReceiptOfBody(std::string_view body) {
  Json j = Json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    return absl::InvalidArgumentError("not a JSON object");
  }
  auto ext = j.find("layerproof");
  if (ext == j.end() || !ext->is_object() || !ext->contains("receipt")) {
    return absl::InvalidArgumentError(
        "layerproof.receipt: missing (not a LayerProof response body or the "
        "last chunk of its stream)");
  }
  v1::SavedReceipt saved;
  google::protobuf::util::JsonParseOptions parse;
  parse.ignore_unknown_fields = false;
  const auto s = google::protobuf::util::JsonStringToMessage(
      (*ext)["receipt"].dump(), &saved, parse);
  if (!s.ok()) {
    return absl::InvalidArgumentError(Cat(
        "layerproof.receipt: not a SavedReceipt: ", std::string(s.ToString())));
  }
  return saved;
}

}  // namespace layerproof::openai
