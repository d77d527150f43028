// The response bodies (openai/api_response.h): OpenAI's shapes, the
// receipt in the layerproof object and back, and error objects with the
// HTTP status and the field.
#include "openai/api_response.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

namespace layerproof::openai {
namespace {

using Json = nlohmann::json;

Completion MakeCompletion(Endpoint endpoint) {
  Completion c;
  c.endpoint = endpoint;
  c.model = "m";
  c.created_unix_seconds = 1700000000;
  c.text = "hi";
  c.receipt.mutable_request()->set_text("prompt");
  v1::GenerateResponse* r = c.receipt.mutable_response();
  r->set_request_id(std::string("\x01\xab", 2));
  r->add_prompt_token_ids(1);
  r->add_prompt_token_ids(2);
  r->add_output_token_ids(3);
  r->set_finish_reason(v1::FINISH_REASON_MAX_TOKENS);
  r->set_commitment_envelope("envelope");
  return c;
}

TEST(ApiResponse, CompletionCarriesUsageAndTheReceipt) {
  const Completion c = MakeCompletion(Endpoint::kCompletions);
  const Json j = Json::parse(CompletionBody(c));
  EXPECT_EQ(j["id"], "cmpl-01ab");
  EXPECT_EQ(j["object"], "text_completion");
  EXPECT_EQ(j["choices"][0]["text"], "hi");
  EXPECT_EQ(j["choices"][0]["finish_reason"], "length");
  EXPECT_EQ(j["usage"]["prompt_tokens"], 2);
  EXPECT_EQ(j["usage"]["completion_tokens"], 1);
  EXPECT_EQ(j["usage"]["total_tokens"], 3);
  EXPECT_EQ(j["layerproof"]["request_id"], "01ab");
  absl::StatusOr<v1::SavedReceipt> back = ReceiptOfBody(CompletionBody(c));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->SerializeAsString(), c.receipt.SerializeAsString());
}

TEST(ApiResponse, ChatAndStopReason) {
  Completion c = MakeCompletion(Endpoint::kChatCompletions);
  c.stopped_by_text = true;
  c.receipt.mutable_response()->set_finish_reason(v1::FINISH_REASON_CANCELLED);
  const Json j = Json::parse(CompletionBody(c));
  EXPECT_EQ(j["id"], "chatcmpl-01ab");
  EXPECT_EQ(j["object"], "chat.completion");
  EXPECT_EQ(j["choices"][0]["message"]["role"], "assistant");
  EXPECT_EQ(j["choices"][0]["message"]["content"], "hi");
  EXPECT_EQ(j["choices"][0]["finish_reason"], "stop");
}

TEST(ApiResponse, StreamEndsWithTheReceiptOnTheLastChunk) {
  const Completion c = MakeCompletion(Endpoint::kChatCompletions);
  StreamChunk head;
  head.endpoint = Endpoint::kChatCompletions;
  head.id = "chatcmpl-01ab";
  head.model = "m";
  head.finish = "length";
  std::vector<std::string> with_usage = FinalChunkBodies(head, c, true);
  ASSERT_EQ(with_usage.size(), 2u);
  const Json first = Json::parse(with_usage[0]);
  const Json last = Json::parse(with_usage[1]);
  EXPECT_EQ(first["choices"][0]["finish_reason"], "length");
  EXPECT_FALSE(first.contains("layerproof"));
  EXPECT_TRUE(last["choices"].empty());
  EXPECT_EQ(last["usage"]["completion_tokens"], 1);
  EXPECT_TRUE(ReceiptOfBody(with_usage[1]).ok());
  std::vector<std::string> without = FinalChunkBodies(head, c, false);
  ASSERT_EQ(without.size(), 1u);
  EXPECT_FALSE(Json::parse(without[0]).contains("usage"));
  EXPECT_TRUE(ReceiptOfBody(without[0]).ok());
  StreamChunk role = head;
  role.finish.reset();
  role.role_chunk = true;
  EXPECT_EQ(Json::parse(StreamChunkBody(role))["choices"][0]["delta"]["role"],
            "assistant");
}

TEST(ApiResponse, ErrorsMapToStatusAndName) {
  struct Case {
    absl::Status status;
    int http;
    const char* type;
    Json param;
  };
  const Case cases[] = {
      {absl::InvalidArgumentError("body: temperature: got 5, want x"), 400,
       "invalid_request_error", "temperature"},
      {absl::InvalidArgumentError("header X-LayerProof-Nonce: bad"), 400,
       "invalid_request_error", nullptr},
      {absl::UnauthenticatedError("no key"), 401, "authentication_error",
       nullptr},
      {absl::NotFoundError("body: model: got \"x\""), 404,
       "invalid_request_error", nullptr},
      {absl::ResourceExhaustedError("full"), 429, "rate_limit_error", nullptr},
      {absl::UnavailableError("draining"), 503, "server_error", nullptr},
      {absl::InternalError("boom"), 500, "server_error", nullptr},
  };
  for (const Case& c : cases) {
    const ApiError e = ErrorBody(c.status);
    EXPECT_EQ(e.http_status, c.http) << c.status;
    const Json j = Json::parse(e.body);
    EXPECT_EQ(j["error"]["type"], c.type) << c.status;
    EXPECT_EQ(j["error"]["message"], std::string(c.status.message()));
    EXPECT_EQ(j["error"]["param"], c.param) << c.status;
  }
}

TEST(ApiResponse, BodyWithoutAReceiptIsNamed) {
  EXPECT_EQ(ReceiptOfBody("{}").status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_NE(ReceiptOfBody("{}").status().message().find("layerproof.receipt"),
            absl::string_view::npos);
  EXPECT_FALSE(ReceiptOfBody("not json").ok());
  EXPECT_FALSE(
      ReceiptOfBody(R"({"layerproof": {"receipt": {"bogus": 1}}})").ok());
}

}  // namespace
}  // namespace layerproof::openai
