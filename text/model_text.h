// A model directory's text side, loaded as transformers' AutoTokenizer
// loads it: tokenizer.json, with tokenizer_config.json (special tokens,
// add_bos_token / add_eos_token, chat_template) and chat_template.jinja
// when present.
//
// Prompts: EncodePrompt is transformers' tokenizer(text) (special tokens
// added). That is the post-processor's template, except for the
// tokenizer classes whose fast tokenizer rewrites it at load
// (LlamaTokenizerFast, CodeLlamaTokenizerFast, GemmaTokenizerFast:
// `update_post_processor`): there BOS is added when add_bos_token (default
// true) and EOS when add_eos_token (default false). So DeepSeek-V3's file,
// whose post-processor adds nothing, gets its BOS as transformers gives it.
//
// Chats: EncodeChat renders the chat template with the special tokens and
// encodes the result without adding special tokens, as
// apply_chat_template(..., tokenize=True) does (the template writes them).
//
// Thread safety: immutable after Load.
#ifndef LAYERPROOF_TEXT_MODEL_TEXT_H_
#define LAYERPROOF_TEXT_MODEL_TEXT_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/status.h"
#include "text/chat_template.h"
#include "text/tokenizer.h"

namespace layerproof::text {

class ModelText {
 public:
  // Reads DIR/tokenizer.json (required), DIR/tokenizer_config.json and
  // DIR/chat_template.jinja (optional; the .jinja file wins over the
  // config's chat_template, as in transformers). Errors name the file and
  // the field.
  static StatusOr<std::unique_ptr<ModelText>> Load(const std::string& dir);
  // The same from text already read (config_json may be empty: absent).
  static StatusOr<std::unique_ptr<ModelText>> FromJson(
      std::string_view tokenizer_json, std::string_view config_json,
      std::optional<std::string> chat_template, std::string_view where);

  const Tokenizer& tokenizer() const { return *tokenizer_; }

  // transformers' tokenizer(text) ids.
  StatusOr<std::vector<int32_t>> EncodePrompt(std::string_view text) const;

  bool has_chat_template() const { return chat_template_.has_value(); }
  // The template's source text (chat_template.jinja, or the config's
  // chat_template / its "default"), when there is one.
  const std::optional<std::string>& chat_template_source() const {
    return chat_template_source_;
  }
  // The rendered chat; input.special_tokens is filled from the config.
  StatusOr<std::string> RenderChat(ChatInput input) const;
  StatusOr<std::vector<int32_t>> EncodeChat(ChatInput input) const;

  // bos_token, eos_token, unk_token, pad_token as tokenizer_config.json
  // names them (absent when null or not given).
  const std::map<std::string, std::string>& special_tokens() const {
    return special_tokens_;
  }
  // The template's prefix and suffix ids EncodePrompt adds.
  const std::vector<int32_t>& prompt_prefix() const { return prefix_; }
  const std::vector<int32_t>& prompt_suffix() const { return suffix_; }

 private:
  ModelText() = default;
  // FromJson, its errors not yet made printable.
  static StatusOr<std::unique_ptr<ModelText>> FromJsonUnescaped(
      std::string_view tokenizer_json, std::string_view config_json,
      std::optional<std::string> chat_template, std::string_view where);

  std::unique_ptr<Tokenizer> tokenizer_;
  std::map<std::string, std::string> special_tokens_;
  std::optional<ChatTemplate> chat_template_;
  std::optional<std::string> chat_template_source_;
  std::vector<int32_t> prefix_, suffix_;
};

}  // namespace layerproof::text

#endif  // LAYERPROOF_TEXT_MODEL_TEXT_H_
