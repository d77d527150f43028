// peer_text: LayerProof's side of the text peer tests (tests/peer/*.mjs).
// Answers JSON Lines on stdin, one answer line per request line, in order.
//   peer_text tokenize TOKENIZER_JSON
//     {"encode": TEXT, "special": BOOL}  -> {"ids": [...]} or {"error": MSG}
//     {"decode": [IDS], "skip": BOOL}    -> {"text": TEXT} or {"error": MSG}
//   peer_text chat TEMPLATE_FILE
//     {"messages": [...], "tools": ..., "add_generation_prompt": BOOL,
//      "extra": {...}, "special_tokens": {...}, "now": SECONDS}
//                                        -> {"text": TEXT} or {"error": MSG}
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <nlohmann/json.hpp>
#include <string>

#include "text/chat_template.h"
#include "text/tokenizer.h"

namespace {

using Json = nlohmann::ordered_json;

void Answer(const Json& out) {
  std::cout << out.dump(-1, ' ', false, Json::error_handler_t::replace) << '\n';
}

int Tokenize(const char* file) {
  using layerproof::text::Tokenizer;
  auto tokenizer = Tokenizer::Load(file);
  if (!tokenizer.ok()) {
    std::fprintf(stderr, "peer_text: %s\n", tokenizer.status().ToString().c_str());
    return 1;
  }
  std::string line;
  while (std::getline(std::cin, line)) {
    Json out;
    const Json in = Json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (in.is_object() && in.contains("encode") && in["encode"].is_string()) {
      auto ids = (*tokenizer)->Encode(in["encode"].get<std::string>(),
                                      in.value("special", false));
      if (ids.ok()) {
        out["ids"] = *ids;
      } else {
        out["error"] = ids.status().ToString();
      }
    } else if (in.is_object() && in.contains("decode") && in["decode"].is_array()) {
      auto text = (*tokenizer)->Decode(in["decode"].get<std::vector<int32_t>>(),
                                       in.value("skip", false));
      if (text.ok()) {
        out["text"] = *text;
      } else {
        out["error"] = text.status().ToString();
      }
    } else {
      out["error"] = "bad request line";
    }
    Answer(out);
  }
  return 0;
}

int Chat(const char* file) {
  using layerproof::text::ChatTemplate;
  std::ifstream f(file, std::ios::binary);
  std::stringstream source;
  source << f.rdbuf();
  auto tmpl = ChatTemplate::Parse(source.str(), file);
  if (!tmpl.ok()) {
    std::fprintf(stderr, "peer_text: %s\n", tmpl.status().ToString().c_str());
    return 1;
  }
  std::string line;
  while (std::getline(std::cin, line)) {
    Json out;
    const Json in = Json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (!in.is_object()) {
      out["error"] = "bad request line";
      Answer(out);
      continue;
    }
    layerproof::text::ChatInput input;
    input.messages = in.value("messages", Json::array());
    input.tools = in.value("tools", Json());
    input.add_generation_prompt = in.value("add_generation_prompt", false);
    input.extra = in.value("extra", Json::object());
    const Json special = in.value("special_tokens", Json::object());
    for (const auto& [k, v] : special.items()) {
      if (v.is_string()) input.special_tokens[k] = v.get<std::string>();
    }
    if (in.contains("now") && in["now"].is_number_integer()) {
      input.now_unix_seconds = in["now"].get<int64_t>();
    }
    auto text = tmpl->Render(input);
    if (text.ok()) {
      out["text"] = *text;
    } else {
      out["error"] = text.status().ToString();
    }
    Answer(out);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::ios::sync_with_stdio(false);
  if (argc == 3 && std::string(argv[1]) == "tokenize") return Tokenize(argv[2]);
  if (argc == 3 && std::string(argv[1]) == "chat") return Chat(argv[2]);
  std::fprintf(stderr, "usage: peer_text tokenize TOKENIZER_JSON | chat TEMPLATE_FILE\n");
  return 2;
}
