#include "cli/openai_receipt.h"

#include <google/protobuf/util/json_util.h>
#include <google/protobuf/util/message_differencer.h>

#include <limits>
#include <memory>
#include <nlohmann/json.hpp>

#include "openai/api_request.h"
#include "openai/api_response.h"
#include "openai/text_stream.h"
#include "store/status.h"
#include "text/model_text.h"

namespace layerproof::cli {

absl::StatusOr<v1::SavedReceipt> ParseSavedReceipt(const std::string& path,
                                                   const std::string& text) {
  v1::SavedReceipt saved;
  google::protobuf::util::JsonParseOptions parse;
  parse.ignore_unknown_fields = false;
  const auto as_saved =
      google::protobuf::util::JsonStringToMessage(text, &saved, parse);
  if (as_saved.ok()) return saved;
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_object() && j.contains("layerproof")) {
    absl::StatusOr<v1::SavedReceipt> body = openai::ReceiptOfBody(text);
    if (!body.ok()) {
      return absl::InvalidArgumentError(path + ": " +
                                        std::string(body.status().message()));
    }
    return body;
  }
  return absl::InvalidArgumentError(
      path +
      ": neither a SavedReceipt nor an OpenAI API body with a "
      "layerproof receipt: " +
      std::string(as_saved.ToString()));
}

absl::Status CheckOpenAiRequest(const v1::SavedReceipt& saved,
                                const std::string& request_body,
                                const std::string& nonce_hex,
                                const std::string& model_dir) {
  const nlohmann::json body =
      nlohmann::json::parse(request_body, nullptr, false);
  if (!body.is_object()) {
    return absl::InvalidArgumentError("--openai-request: not a JSON object");
  }
  const bool chat = body.contains("messages");
  std::unique_ptr<text::ModelText> text;
  if (!model_dir.empty()) {
    kernels::StatusOr<std::unique_ptr<text::ModelText>> loaded =
        text::ModelText::Load(model_dir);
    if (!loaded.ok()) return store::ToAbslStatus(loaded.status());
    text = *std::move(loaded);
  } else if (chat) {
    return absl::InvalidArgumentError(
        "--openai-request: a chat's prompt is the model's chat template; "
        "pass --model DIR to check it");
  }
  openai::ServedModel served;
  served.name = body.value("model", std::string());
  // The server's limits only set defaults; those come from the receipt.
  served.max_new_tokens = std::numeric_limits<uint32_t>::max();
  served.max_context = std::numeric_limits<int64_t>::max() / 2;
  served.text = text.get();
  absl::StatusOr<openai::ApiRequest> api =
      openai::ParseApiRequest(chat ? openai::Endpoint::kChatCompletions
                                   : openai::Endpoint::kCompletions,
                              request_body, nonce_hex, served);
  if (!api.ok()) {
    return absl::InvalidArgumentError("--openai-request: " +
                                      std::string(api.status().message()));
  }
  v1::GenerateRequest want = api->generate;
  const bool named_max =
      (body.contains("max_tokens") && !body["max_tokens"].is_null()) ||
      (chat && body.contains("max_completion_tokens") &&
       !body["max_completion_tokens"].is_null());
  if (!named_max) want.set_max_tokens(saved.request().max_tokens());
  std::string difference;
  google::protobuf::util::MessageDifferencer differ;
  differ.ReportDifferencesToString(&difference);
  if (!differ.Compare(want, saved.request())) {
    return absl::DataLossError(
        "the receipt's GenerateRequest is not the one the OpenAI request "
        "maps to: " +
        difference);
  }
  if (text == nullptr) return absl::OkStatus();
  const v1::GenerateResponse& r = saved.response();
  return openai::CheckStopStrings(
      std::vector<int32_t>(r.output_token_ids().begin(),
                           r.output_token_ids().end()),
      r.finish_reason(), api->stop, text->tokenizer());
}

}  // namespace layerproof::cli
