// peer_tokenize: LayerProof's side of the tokenizer peer test
// (tests/peer/tokenizers_peer.mjs). Loads one tokenizer.json and answers
// JSON Lines on stdin, one answer line per request line, in order:
//   {"encode": TEXT, "special": BOOL}  -> {"ids": [...]} or {"error": MSG}
//   {"decode": [IDS], "skip": BOOL}    -> {"text": TEXT} or {"error": MSG}
// Usage: peer_tokenize TOKENIZER_JSON
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>

#include "text/tokenizer.h"

int main(int argc, char** argv) {
  using layerproof::text::Tokenizer;
  using Json = nlohmann::json;
  if (argc != 2) {
    std::fprintf(stderr, "usage: peer_tokenize TOKENIZER_JSON\n");
    return 2;
  }
  auto tokenizer = Tokenizer::Load(argv[1]);
  if (!tokenizer.ok()) {
    std::fprintf(stderr, "peer_tokenize: %s\n",
                 tokenizer.status().ToString().c_str());
    return 1;
  }
  std::ios::sync_with_stdio(false);
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
    } else if (in.is_object() && in.contains("decode") &&
               in["decode"].is_array()) {
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
    std::cout << out.dump(-1, ' ', false, Json::error_handler_t::replace)
              << '\n';
  }
  std::cout.flush();
  return 0;
}
