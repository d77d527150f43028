#include "text/chat_template.h"

#include <ctime>
#include <utility>

#include "kernels/printable.h"
#include "text/internal/jinja_ast.h"
#include "text/internal/jinja_builtins.h"
#include "text/internal/jinja_eval.h"
#include "text/internal/jinja_value.h"

namespace layerproof::text {

namespace jinja = internal::jinja;

struct ChatTemplate::Tree {
  jinja::Body body;
};

StatusOr<ChatTemplate> ChatTemplate::Parse(std::string_view source,
                                           std::string_view file) {
  auto tree = std::make_shared<Tree>();
  auto body = jinja::ParseTemplate(source, file);
  if (!body.ok()) return kernels::PrintableStatus(body.status());
  tree->body = *std::move(body);
  return ChatTemplate(std::move(tree), std::string(file));
}

StatusOr<std::string> ChatTemplate::Render(const ChatInput& input) const {
  if (!input.messages.is_array()) {
    return kernels::InvalidArgument("chat: messages must be an array");
  }
  if (!input.extra.is_object()) {
    return kernels::InvalidArgument("chat: extra variables must be an object");
  }
  jinja::Value globals = jinja::Value::MakeDict();
  for (const auto& [name, token] : input.special_tokens) {
    globals.Set(name, jinja::Value::Str(token));
  }
  for (auto it = input.extra.begin(); it != input.extra.end(); ++it) {
    LP_ASSIGN_OR_RETURN(jinja::Value v, jinja::FromJson(it.value()));
    globals.Set(it.key(), std::move(v));
  }
  LP_ASSIGN_OR_RETURN(jinja::Value messages, jinja::FromJson(input.messages));
  globals.Set("messages", std::move(messages));
  LP_ASSIGN_OR_RETURN(jinja::Value tools, jinja::FromJson(input.tools));
  globals.Set("tools", std::move(tools));
  globals.Set("documents", jinja::Value::None());
  globals.Set("add_generation_prompt",
              jinja::Value::Bool(input.add_generation_prompt));
  if (input.now_unix_seconds.has_value()) {
    const std::time_t now = static_cast<std::time_t>(*input.now_unix_seconds);
    globals.Set(
        "strftime_now",
        jinja::Value::Func([now](jinja::CallArgs& a) -> StatusOr<jinja::Value> {
          if (a.positional.size() != 1 || !a.positional[0].is_string() ||
              a.positional[0].s.size() > 64) {
            return jinja::ErrorAt(a.line,
                                  "strftime_now takes one format string");
          }
          std::tm tm{};
          gmtime_r(&now, &tm);
          char buf[256];
          const size_t n =
              std::strftime(buf, sizeof buf, a.positional[0].s.c_str(), &tm);
          return jinja::Value::Str(std::string(buf, n));
        }));
  }
  StatusOr<std::string> rendered = jinja::Render(tree_->body, globals, file_);
  if (!rendered.ok()) return kernels::PrintableStatus(rendered.status());
  return rendered;
}

}  // namespace layerproof::text
