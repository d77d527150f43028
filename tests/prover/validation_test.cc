// Request validation: every refusal names the field, the value and the
// limit, exactly.
#include "prover/validation.h"

#include <gtest/gtest.h>

#include <string>

namespace layerproof::prover {
namespace {

GenerateLimits Limits() {
  GenerateLimits l;
  l.vocab_size = 1024;
  l.max_context = 256;
  l.max_new_tokens = 64;
  l.max_prompt_tokens = 100;
  l.max_prompt_bytes = 1000;
  return l;
}

v1::GenerateRequest Valid() {
  v1::GenerateRequest r;
  r.mutable_token_ids()->add_ids(1);
  r.mutable_token_ids()->add_ids(2);
  r.set_max_tokens(4);
  return r;
}

std::string Message(const v1::GenerateRequest& r) {
  return std::string(
      ValidateGenerateRequest(r, Limits(), nullptr).status().message());
}

TEST(ValidationTest, AcceptsAValidRequestWithGreedyDefaults) {
  auto spec = ValidateGenerateRequest(Valid(), Limits(), nullptr);
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->prompt, (std::vector<int32_t>{1, 2}));
  EXPECT_EQ(spec->sampling.temperature(), 0.0f);
  EXPECT_EQ(spec->sampling.top_p(), 1.0f);
  EXPECT_FALSE(spec->seed.has_value());
}

TEST(ValidationTest, GenerateRequestMessages) {
  v1::GenerateRequest r = Valid();
  r.set_max_tokens(100000);
  EXPECT_EQ(Message(r), "GenerateRequest.max_tokens: got 100000, want 1..64");
  r.set_max_tokens(0);
  EXPECT_EQ(Message(r), "GenerateRequest.max_tokens: got 0, want 1..64");

  r = Valid();
  r.clear_prompt();
  EXPECT_EQ(Message(r),
            "GenerateRequest.prompt: got neither text nor token_ids, want "
            "exactly one");
  r.mutable_token_ids();
  EXPECT_EQ(Message(r), "GenerateRequest.token_ids.ids: got 0 ids, want >= 1");
  r.mutable_token_ids()->add_ids(5);
  r.mutable_token_ids()->add_ids(1024);
  EXPECT_EQ(Message(r),
            "GenerateRequest.token_ids.ids[1]: got 1024, want 0..1023");
  r.mutable_token_ids()->clear_ids();
  for (int i = 0; i < 101; ++i) r.mutable_token_ids()->add_ids(3);
  EXPECT_EQ(Message(r), "GenerateRequest.prompt: got 101 tokens, want <= 100");

  r = Valid();
  r.mutable_sampling()->set_temperature(0.5f);
  r.mutable_sampling()->set_top_p(0);
  EXPECT_EQ(Message(r),
            "GenerateRequest.sampling.top_p: got 0, want 0 < top_p <= 1 (1: "
            "no nucleus cut)");
  r.mutable_sampling()->set_top_p(1);
  r.mutable_sampling()->set_temperature(-1);
  EXPECT_EQ(Message(r),
            "GenerateRequest.sampling.temperature: got -1, want 0 (greedy) "
            "or 0.001..1000");
  r.mutable_sampling()->set_temperature(1);
  r.mutable_sampling()->set_top_k(-2);
  EXPECT_EQ(Message(r), "GenerateRequest.sampling.top_k: got -2, want >= 0");

  r = Valid();
  r.set_client_nonce(std::string(65, 'n'));
  EXPECT_EQ(Message(r),
            "GenerateRequest.client_nonce: got 65 bytes, want <= 64");
  r.set_client_nonce("nonce");
  r.set_seed(7);
  EXPECT_EQ(Message(r),
            "GenerateRequest.seed: got a seed and a client_nonce, want at "
            "most one (the nonce fixes the seed)");

  r = Valid();
  for (int i = 0; i < 17; ++i) r.add_stop_token_ids(2);
  EXPECT_EQ(Message(r),
            "GenerateRequest.stop_token_ids: got 17 ids, want <= 16");
  r.clear_stop_token_ids();
  r.add_stop_token_ids(-1);
  EXPECT_EQ(Message(r),
            "GenerateRequest.stop_token_ids[0]: got -1, want 0..1023");

  r = Valid();
  r.set_text("hello");
  auto status = ValidateGenerateRequest(r, Limits(), nullptr).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  r.set_text(std::string(1001, 'x'));
  EXPECT_EQ(Message(r), "GenerateRequest.text: got 1001 bytes, want <= 1000");
}

TEST(ValidationTest, OpenRequestMessages) {
  v1::OpenRequest r;
  r.set_request_id(std::string(15, 'x'));
  EXPECT_EQ(ValidateOpenRequest(r, 4).message(),
            "OpenRequest.request_id: got 15 bytes, want 16");
  r.set_request_id(std::string(16, 'x'));
  EXPECT_TRUE(ValidateOpenRequest(r, 4).ok());
  r.add_layers(0);
  r.add_layers(3);
  r.add_layers(4);
  EXPECT_TRUE(ValidateOpenRequest(r, 4).ok());
  r.add_layers(5);
  EXPECT_EQ(ValidateOpenRequest(r, 4).message(),
            "OpenRequest.layers[3]: got 5, want 0..4");
  r.set_layers(3, 4);
  EXPECT_EQ(ValidateOpenRequest(r, 4).message(),
            "OpenRequest.layers[3]: got 4 after 4, want strictly ascending");
}

}  // namespace
}  // namespace layerproof::prover
