// Fuzzes chat templates (text/chat_template.h): Parse, then Render over a
// fixed conversation with tools and special tokens, as the HTTP API does.
// Runaway templates must stop at the interpreter's limits.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "tests/fuzz/fuzz_check.h"
#include "text/chat_template.h"

using layerproof::text::ChatInput;
using layerproof::text::ChatTemplate;

namespace {

const ChatInput& Conversation() {
  static const ChatInput* input = [] {
    auto* in = new ChatInput;
    in->messages = nlohmann::ordered_json::parse(R"([
      {"role": "system", "content": "You are terse."},
      {"role": "user", "content": "Hi <b>there</b> \u00e9"},
      {"role": "assistant", "content": "Hello.", "tool_calls": [
        {"type": "function", "function": {"name": "f", "arguments": {"x": 1}}}]},
      {"role": "tool", "content": "{\"ok\": true}"},
      {"role": "user", "content": [{"type": "text", "text": "and?"}]}])");
    in->tools = nlohmann::ordered_json::parse(
        R"([{"type": "function", "function": {"name": "f",
             "parameters": {"type": "object"}}}])");
    in->extra = {{"enable_thinking", false}};
    in->special_tokens = {{"bos_token", "<s>"}, {"eos_token", "</s>"}};
    in->now_unix_seconds = 1796136600;
    return in;
  }();
  return *input;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view source(reinterpret_cast<const char*>(data), size);
  auto parsed = ChatTemplate::Parse(source, "chat_template.jinja");
  LP_FUZZ_CHECK_PRINTABLE(parsed.status());
  if (!parsed.ok()) return 0;
  auto rendered = parsed->Render(Conversation());
  LP_FUZZ_CHECK_PRINTABLE(rendered.status());
  ChatInput plain;
  plain.messages =
      nlohmann::ordered_json::array({{{"role", "user"}, {"content", "x"}}});
  plain.add_generation_prompt = false;
  auto rendered_plain = parsed->Render(plain);
  LP_FUZZ_CHECK_PRINTABLE(rendered_plain.status());
  return 0;
}
