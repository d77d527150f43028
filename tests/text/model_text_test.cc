// text/model_text.h: tokenizer_config.json's special tokens, the
// add_bos_token rule of the classes that rewrite the post-processor, and
// chat templates from the config or chat_template.jinja.
#include "text/model_text.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "text/synthetic_tokenizer.h"

namespace layerproof::text {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr int64_t kVocab = 512;
constexpr int32_t kBos = kVocab - 2;  // <|begin_of_text|>
constexpr int32_t kEos = kVocab - 1;  // <|end_of_text|>

// The synthetic tokenizer: its TemplateProcessing adds <|begin_of_text|>.
const std::string& TokenizerJson() {
  static const std::string json = BuildSyntheticTokenizerJson(kVocab, 1);
  return json;
}

std::unique_ptr<ModelText> Must(const std::string& config,
                                std::optional<std::string> jinja = std::nullopt) {
  auto m = ModelText::FromJson(TokenizerJson(), config, std::move(jinja), "model");
  EXPECT_TRUE(m.ok()) << m.status().ToString();
  return m.ok() ? std::move(*m) : nullptr;
}

TEST(ModelTextTest, WithoutConfigThePostProcessorDecides) {
  auto m = Must("");
  ASSERT_NE(m, nullptr);
  auto ids = m->EncodePrompt("hi");
  ASSERT_TRUE(ids.ok());
  EXPECT_EQ(ids->front(), kBos);
  EXPECT_FALSE(m->has_chat_template());
}

TEST(ModelTextTest, LlamaFastRewritesThePostProcessor) {
  // As transformers' LlamaTokenizerFast.update_post_processor: BOS by
  // add_bos_token (default true), EOS by add_eos_token (default false).
  auto off = Must(R"({"tokenizer_class": "LlamaTokenizerFast", "add_bos_token": false,
                      "bos_token": "<|begin_of_text|>", "eos_token": "<|end_of_text|>"})");
  ASSERT_NE(off, nullptr);
  EXPECT_TRUE(off->prompt_prefix().empty());
  auto both = Must(R"({"tokenizer_class": "LlamaTokenizer", "add_eos_token": true,
                       "bos_token": {"__type": "AddedToken", "content": "<|begin_of_text|>"},
                       "eos_token": "<|end_of_text|>"})");
  ASSERT_NE(both, nullptr);
  EXPECT_THAT(both->prompt_prefix(), ElementsAre(kBos));
  EXPECT_THAT(both->prompt_suffix(), ElementsAre(kEos));
  auto ids = both->EncodePrompt("x");
  ASSERT_TRUE(ids.ok());
  EXPECT_THAT(*ids, ElementsAre(kBos, 'x', kEos));
  // Other classes keep the file's post-processor.
  auto fast = Must(R"({"tokenizer_class": "PreTrainedTokenizerFast", "add_bos_token": false})");
  ASSERT_NE(fast, nullptr);
  EXPECT_THAT(fast->prompt_prefix(), ElementsAre(kBos));
}

TEST(ModelTextTest, BadConfigsNameTheField) {
  for (const auto& [config, field] : std::vector<std::pair<std::string, std::string>>{
           {R"({"tokenizer_class": "GemmaTokenizerFast", "bos_token": "<nope>"})", "bos_token"},
           {R"({"tokenizer_class": "LlamaTokenizerFast"})", "bos_token"},
           {R"({"eos_token": 7})", "eos_token"},
           {R"({"chat_template": 3})", "chat_template"},
           {R"([1])", "tokenizer_config.json"},
           {R"({"chat_template": "{% include 'x' %}"})", "chat_template"}}) {
    auto m = ModelText::FromJson(TokenizerJson(), config, std::nullopt, "model");
    ASSERT_FALSE(m.ok()) << config;
    EXPECT_THAT(m.status().message(), HasSubstr(field)) << config;
  }
}

TEST(ModelTextTest, ChatTemplateWritesTheSpecialTokens) {
  // The template writes bos_token as text; encoding then adds nothing, so
  // the BOS appears once, as apply_chat_template(tokenize=True) gives it.
  auto m = Must(R"({"bos_token": "<|begin_of_text|>",
                    "chat_template": "{{ bos_token }}{% for m in messages %}{{ m.content }}{% endfor %}{% if add_generation_prompt %}!{% endif %}"})");
  ASSERT_NE(m, nullptr);
  ChatInput in;
  in.messages = nlohmann::ordered_json::array({{{"role", "user"}, {"content", "hi"}}});
  EXPECT_EQ(*m->RenderChat(in), "<|begin_of_text|>hi!");
  auto ids = m->EncodeChat(in);
  ASSERT_TRUE(ids.ok());
  EXPECT_EQ(std::count(ids->begin(), ids->end(), kBos), 1);
  EXPECT_EQ(ids->front(), kBos);
  // Named templates: the one called "default".
  auto named = Must(R"({"chat_template": [{"name": "tool_use", "template": "T"},
                                          {"name": "default", "template": "D"}]})");
  ASSERT_NE(named, nullptr);
  EXPECT_EQ(*named->RenderChat(in), "D");
  // No template: FailedPrecondition.
  EXPECT_EQ(Must("")->RenderChat(in).status().code(),
            kernels::StatusCode::kFailedPrecondition);
}

TEST(ModelTextTest, ChatTemplateJinjaFileWins) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / "lp-model-text-test";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "tokenizer.json") << TokenizerJson();
  std::ofstream(dir / "tokenizer_config.json") << R"({"chat_template": "config"})";
  std::ofstream(dir / "chat_template.jinja") << "file\n";
  auto m = ModelText::Load(dir.string());
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(*(*m)->RenderChat({}), "file");
  std::filesystem::remove_all(dir);
  EXPECT_EQ(ModelText::Load(dir.string()).status().code(), kernels::StatusCode::kNotFound);
}

}  // namespace
}  // namespace layerproof::text
