// The OpenAI request mapping (openai/api_request.h): what each field maps
// to, OpenAI's defaults, and a refusal naming the field for everything
// this server does not do.
#include "openai/api_request.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/openai/text_fixture.h"

namespace layerproof::openai {
namespace {

using ::testing::HasSubstr;

class ApiRequestTest : public ::testing::Test {
 protected:
  ApiRequestTest() : text_(testing::SyntheticText()) {
    served_.name = "m";
    served_.max_new_tokens = 100;
    served_.max_context = 256;
    served_.text = text_.get();
  }
  absl::StatusOr<ApiRequest> Completion(const std::string& body,
                                        const std::string& nonce = "") {
    return ParseApiRequest(Endpoint::kCompletions, body, nonce, served_);
  }
  absl::StatusOr<ApiRequest> Chat(const std::string& body) {
    return ParseApiRequest(Endpoint::kChatCompletions, body, "", served_);
  }

  std::unique_ptr<text::ModelText> text_;
  ServedModel served_;
};

TEST_F(ApiRequestTest, CompletionGetsOpenAiDefaults) {
  absl::StatusOr<ApiRequest> r =
      Completion(R"({"model": "m", "prompt": "hi"})");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->generate.text(), "hi");
  EXPECT_EQ(r->prompt_text, "hi");
  EXPECT_EQ(r->generate.sampling().temperature(), 1.0f);
  EXPECT_EQ(r->generate.sampling().top_p(), 1.0f);
  EXPECT_EQ(r->generate.sampling().top_k(), 0);
  EXPECT_EQ(r->generate.max_tokens(), 16u);
  EXPECT_FALSE(r->generate.has_seed());
  EXPECT_TRUE(r->generate.client_nonce().empty());
  EXPECT_TRUE(r->generate.stop_token_ids().empty());
  EXPECT_FALSE(r->stream);
  EXPECT_TRUE(r->stop.empty());
}

TEST_F(ApiRequestTest, CompletionFieldsMap) {
  absl::StatusOr<ApiRequest> r = Completion(
      R"({"model": "m", "prompt": ["x"], "max_tokens": 7, "temperature": 0.5,
          "top_p": 0.9, "seed": 12, "stop": ["a", "bc"], "n": 1,
          "stream": true, "stream_options": {"include_usage": true},
          "presence_penalty": 0, "logit_bias": {}, "user": "u"})");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->generate.text(), "x");
  EXPECT_EQ(r->generate.max_tokens(), 7u);
  EXPECT_EQ(r->generate.sampling().temperature(), 0.5f);
  EXPECT_EQ(r->generate.sampling().top_p(), 0.9f);
  EXPECT_EQ(r->generate.seed(), 12u);
  EXPECT_EQ(r->stop, (std::vector<std::string>{"a", "bc"}));
  EXPECT_TRUE(r->stream);
  EXPECT_TRUE(r->include_usage);
}

TEST_F(ApiRequestTest, TokenPromptsAreIds) {
  for (const char* prompt : {"[1, 2, 3]", "[[1, 2, 3]]"}) {
    absl::StatusOr<ApiRequest> r =
        Completion(std::string(R"({"model": "m", "prompt": )") + prompt + "}");
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(std::vector<int32_t>(r->generate.token_ids().ids().begin(),
                                   r->generate.token_ids().ids().end()),
              (std::vector<int32_t>{1, 2, 3}));
  }
}

TEST_F(ApiRequestTest, NonceFixesTheSeedSource) {
  absl::StatusOr<ApiRequest> r =
      Completion(R"({"model": "m", "prompt": "hi"})", "00ff10");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->generate.client_nonce(), std::string("\x00\xff\x10", 3));
  EXPECT_THAT(Completion(R"({"model": "m", "prompt": "hi", "seed": 1})", "00")
                  .status()
                  .message(),
              HasSubstr("body: seed: a request with X-LayerProof-Nonce"));
  EXPECT_THAT(
      Completion(R"({"model": "m", "prompt": "hi"})", "0g").status().message(),
      HasSubstr("header X-LayerProof-Nonce"));
  EXPECT_THAT(
      Completion(R"({"model": "m", "prompt": "hi"})", std::string(130, 'a'))
          .status()
          .message(),
      HasSubstr("want 2 to 128 hex digits"));
}

TEST_F(ApiRequestTest, ChatIsTheTemplateEncodedWithoutAddedSpecials) {
  absl::StatusOr<ApiRequest> r = Chat(
      R"({"model": "m", "messages": [{"role": "developer", "content": "Be brief."},
          {"role": "user", "content": [{"type": "text", "text": "Hi"},
                                       {"type": "text", "text": "!"}]}]})");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->prompt_text,
            "<|begin_of_text|>system: Be brief.\nuser: Hi!\nassistant:");
  auto ids = text_->tokenizer().Encode(r->prompt_text, false);
  ASSERT_TRUE(ids.ok());
  EXPECT_EQ(std::vector<int32_t>(r->generate.token_ids().ids().begin(),
                                 r->generate.token_ids().ids().end()),
            *ids);
  // No max_tokens: what the context leaves, up to max_new_tokens.
  EXPECT_EQ(r->generate.max_tokens(), 100u);
  served_.max_context = static_cast<int64_t>(ids->size()) + 9;
  r = Chat(
      R"({"model": "m", "messages": [{"role": "developer", "content": "Be brief."},
          {"role": "user", "content": "Hi!"}]})");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->generate.max_tokens(), 9u);
  // max_completion_tokens wins over the older max_tokens.
  r = Chat(R"({"model": "m", "messages": [{"role": "user", "content": "x"}],
               "max_tokens": 3, "max_completion_tokens": 4})");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->generate.max_tokens(), 4u);
}

TEST_F(ApiRequestTest, ChatNeedsATemplate) {
  auto no_template = testing::SyntheticText(std::nullopt);
  served_.text = no_template.get();
  const absl::Status s =
      Chat(R"({"model": "m", "messages": [{"role": "user", "content": "x"}]})")
          .status();
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(s.message(), HasSubstr("no chat template"));
}

TEST_F(ApiRequestTest, WrongModelIsNotFound) {
  const absl::Status s =
      Completion(R"({"model": "gpt-4", "prompt": "x"})").status();
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(s.message(), HasSubstr("body: model: got \"gpt-4\""));
}

struct Refusal {
  Endpoint endpoint;
  const char* body;
  const char* message;
};

TEST_F(ApiRequestTest, RefusalsNameTheField) {
  const Refusal cases[] = {
      {Endpoint::kCompletions, "[1]", "body: got [1], want a JSON object"},
      {Endpoint::kCompletions,
       R"({"model": "m", "prompt": "x", "prompt": "y"})", "body: bad JSON"},
      {Endpoint::kCompletions, R"({"prompt": "x"})", "body: model: got null"},
      {Endpoint::kCompletions, R"({"model": "m"})", "body: prompt: missing"},
      {Endpoint::kCompletions, R"({"model": "m", "prompt": 5})",
       "body: prompt: got 5"},
      {Endpoint::kCompletions, R"({"model": "m", "prompt": [1, -2]})",
       "body: prompt[1]: got -2"},
      {Endpoint::kCompletions, R"({"model": "m", "prompt": "x", "frob": 1})",
       "body: frob: not a field this server knows"},
      {Endpoint::kCompletions, R"({"model": "m", "prompt": "x", "n": 2})",
       "body: n: got 2, but this server supports only 1"},
      {Endpoint::kCompletions, R"({"model": "m", "prompt": "x", "best_of": 3})",
       "body: best_of: got 3"},
      {Endpoint::kCompletions,
       R"({"model": "m", "prompt": "x", "frequency_penalty": 0.5})",
       "body: frequency_penalty: got 0.5"},
      {Endpoint::kCompletions,
       R"({"model": "m", "prompt": "x", "logit_bias": {"1": 5}})",
       "body: logit_bias: got"},
      {Endpoint::kCompletions,
       R"({"model": "m", "prompt": "x", "logprobs": 2})",
       "body: logprobs: got 2"},
      {Endpoint::kCompletions, R"({"model": "m", "prompt": "x", "echo": true})",
       "body: echo: got true"},
      {Endpoint::kCompletions,
       R"({"model": "m", "prompt": "x", "temperature": 2.5})",
       "body: temperature: got 2.5, want a number in [0, 2]"},
      {Endpoint::kCompletions,
       R"({"model": "m", "prompt": "x", "temperature": "hot"})",
       "body: temperature: got \"hot\""},
      {Endpoint::kCompletions, R"({"model": "m", "prompt": "x", "top_p": 0})",
       "body: top_p: got 0, want a number in (0, 1]"},
      {Endpoint::kCompletions, R"({"model": "m", "prompt": "x", "seed": -1})",
       "body: seed: got -1"},
      {Endpoint::kCompletions,
       R"({"model": "m", "prompt": "x", "max_tokens": 101})",
       "body: max_tokens: got 101, want an integer in [1, 100]"},
      {Endpoint::kCompletions,
       R"({"model": "m", "prompt": "x", "max_tokens": 0})",
       "body: max_tokens: got 0"},
      {Endpoint::kCompletions,
       R"({"model": "m", "prompt": "x", "stop": ["a", "b", "c", "d", "e"]})",
       "body: stop: got"},
      {Endpoint::kCompletions, R"({"model": "m", "prompt": "x", "stop": [""]})",
       "body: stop[0]: got \"\", want 1 to 256 bytes"},
      {Endpoint::kCompletions, R"({"model": "m", "prompt": "x", "stop": [1]})",
       "body: stop[0]: got 1, want a string"},
      {Endpoint::kCompletions, R"({"model": "m", "prompt": "x", "stream": 1})",
       "body: stream: got 1"},
      {Endpoint::kCompletions,
       R"({"model": "m", "prompt": "x", "stream_options": {"include_usage": true}})",
       "body: stream_options: got"},
      {Endpoint::kCompletions,
       R"({"model": "m", "prompt": "x", "stream": true, "stream_options": {"x": 1}})",
       "body: stream_options.x: got 1"},
      {Endpoint::kChatCompletions, R"({"model": "m", "messages": []})",
       "body: messages: got []"},
      {Endpoint::kChatCompletions,
       R"({"model": "m", "messages": [{"role": "tool", "content": "x"}]})",
       "body: messages[0].role: got \"tool\""},
      {Endpoint::kChatCompletions,
       R"({"model": "m", "messages": [{"role": "user"}]})",
       "body: messages[0].content: missing"},
      {Endpoint::kChatCompletions,
       R"({"model": "m", "messages": [{"role": "user", "content": [{"type": "image_url"}]}]})",
       "body: messages[0].content[0]: got"},
      {Endpoint::kChatCompletions,
       R"({"model": "m", "messages": [{"role": "user", "content": "x", "tool_calls": []}]})",
       "body: messages[0].tool_calls: got []"},
      {Endpoint::kChatCompletions,
       R"({"model": "m", "messages": [{"role": "user", "content": "x"}], "tools": []})",
       "body: tools: got []"},
      {Endpoint::kChatCompletions,
       R"({"model": "m", "messages": [{"role": "user", "content": "x"}], "prompt": "x"})",
       "body: prompt: not a field this server knows"},
  };
  for (const Refusal& c : cases) {
    const absl::Status s =
        ParseApiRequest(c.endpoint, c.body, "", served_).status();
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << c.body;
    EXPECT_THAT(s.message(), HasSubstr(c.message)) << c.body;
  }
}

}  // namespace
}  // namespace layerproof::openai
