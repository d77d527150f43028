// Chat templates: the Jinja template in a model's tokenizer_config.json
// (`chat_template`) or chat_template.jinja, rendered as transformers'
// apply_chat_template(..., tokenize=False) renders it. The interpreter
// (text/internal/jinja_*) covers the subset real templates use (docs/text.md
// lists it, and tests/peer/ compares it with @huggingface/jinja); any other
// construct is refused when the template is parsed, naming it and its line.
//
// Thread safety: immutable after Parse; Render may run concurrently.
#ifndef LAYERPROOF_TEXT_CHAT_TEMPLATE_H_
#define LAYERPROOF_TEXT_CHAT_TEMPLATE_H_

#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "kernels/status.h"

namespace layerproof::text {

using kernels::Status;
using kernels::StatusOr;

namespace internal::jinja {
struct Node;
}

struct ChatInput {
  // [{"role": ..., "content": ..., ...}], passed as `messages`.
  nlohmann::ordered_json messages = nlohmann::ordered_json::array();
  // Passed as `tools`; null renders as None, as transformers passes it.
  nlohmann::ordered_json tools;
  bool add_generation_prompt = true;
  // Further template variables (e.g. {"enable_thinking": false}).
  nlohmann::ordered_json extra = nlohmann::ordered_json::object();
  // bos_token, eos_token, ...: the special tokens transformers passes.
  std::map<std::string, std::string> special_tokens;
  // The time strftime_now(format) formats (Unix seconds, UTC), which
  // transformers takes from the clock (Llama-3.2 prints "Today Date");
  // absent, strftime_now is undefined and such templates use their default.
  std::optional<int64_t> now_unix_seconds;
};

class ChatTemplate {
 public:
  // Parses template source; `file` names it in errors, with the line.
  static StatusOr<ChatTemplate> Parse(std::string_view source,
                                      std::string_view file);

  // The rendered prompt. A template's raise_exception() is
  // FailedPrecondition with its message; runaway templates stop at the
  // interpreter's limits (internal/jinja_eval.h) with InvalidArgument.
  StatusOr<std::string> Render(const ChatInput& input) const;

 private:
  struct Tree;
  ChatTemplate(std::shared_ptr<const Tree> tree, std::string file)
      : tree_(std::move(tree)), file_(std::move(file)) {}
  std::shared_ptr<const Tree> tree_;
  std::string file_;
};

}  // namespace layerproof::text

#endif  // LAYERPROOF_TEXT_CHAT_TEMPLATE_H_
