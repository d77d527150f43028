// A synthetic model's text side (tokenizer and chat template), as `model
// synth` writes it, for the openai/ tests.
#ifndef LAYERPROOF_TESTS_OPENAI_TEXT_FIXTURE_H_
#define LAYERPROOF_TESTS_OPENAI_TEXT_FIXTURE_H_

#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>

#include "text/model_text.h"
#include "text/synthetic_tokenizer.h"

namespace layerproof::openai::testing {

inline constexpr char kChatTemplate[] =
    "<|begin_of_text|>{% for message in messages %}{{ message['role'] }}: "
    "{{ message['content'] }}\n{% endfor %}{% if add_generation_prompt %}"
    "assistant:{% endif %}";

inline std::unique_ptr<text::ModelText> SyntheticText(
    std::optional<std::string> chat_template = kChatTemplate) {
  auto text =
      text::ModelText::FromJson(text::BuildSyntheticTokenizerJson(512, 1), "",
                                std::move(chat_template), "synth");
  EXPECT_TRUE(text.ok()) << text.status().ToString();
  return text.ok() ? *std::move(text) : nullptr;
}

}  // namespace layerproof::openai::testing

#endif  // LAYERPROOF_TESTS_OPENAI_TEXT_FIXTURE_H_
