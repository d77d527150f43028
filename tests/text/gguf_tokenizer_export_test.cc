// text/gguf_tokenizer_export.h: tokenizer.json to tokenizer.ggml.* keys.
// On the peer packages' real files the keys must equal what the emulated
// convert_hf_to_gguf.py (tests/text/llama_cpp_convert.h) writes, with the
// family detected by name; a synthetic model quantized with its keys must
// tokenize from the GGUF alone exactly as from its tokenizer.json; and
// every tokenizer llama.cpp could not reproduce is refused naming the
// field. (tests/peer/llama_cpp_peer.mjs then has llama.cpp itself read
// such a file.)
#include "text/gguf_tokenizer_export.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "kernels/model/quantize_model.h"
#include "kernels/model/synth.h"
#include "tests/text/llama_cpp_convert.h"
#include "text/gguf_tokenizer.h"
#include "text/synthetic_tokenizer.h"

namespace layerproof::text {
namespace {

using Json = nlohmann::json;
using kernels::StatusCode;
using kernels::model::GgufTokenizerKeys;
using testing::ConvertDirLikeLlamaCpp;
using ::testing::HasSubstr;
using testing::PeerModels;
using testing::SampleTexts;
using testing::TempDir;

namespace fs = std::filesystem;

class RealFileExport : public ::testing::TestWithParam<testing::RealFamily> {};

TEST_P(RealFileExport, EqualsWhatConvertHfToGgufWrites) {
  const testing::RealFamily& f = GetParam();
  const fs::path dir = PeerModels(f.name);
  if (!fs::exists(dir / "tokenizer.json")) {
    GTEST_SKIP() << dir.string()
                 << "/tokenizer.json is not installed (scripts/setup.sh)";
  }
  auto keys = GgufTokenizerKeysFor(dir.string());
  ASSERT_TRUE(keys.ok()) << keys.status().ToString();
  const testing::ConvertedTokenizer want = ConvertDirLikeLlamaCpp(dir);
  EXPECT_EQ(keys->model, "gpt2");
  EXPECT_EQ(keys->pre, f.pre);
  EXPECT_EQ(keys->tokens, want.tokens);
  EXPECT_EQ(keys->token_types, want.types);
  EXPECT_EQ(keys->merges, want.merges);
  EXPECT_FALSE(keys->add_eos);
  if (keys->add_bos) {
    ASSERT_TRUE(want.special_ids.count("bos_token_id"));
    EXPECT_EQ(uint32_t(keys->bos_id), want.special_ids.at("bos_token_id"));
  }
  if (want.chat_template.has_value()) {
    EXPECT_EQ(keys->chat_template, want.chat_template);
  }
}

INSTANTIATE_TEST_SUITE_P(Families, RealFileExport,
                         ::testing::ValuesIn(testing::RealFamilies()),
                         [](const auto& info) { return info.param.name; });

// The synthetic model's tokenizer, quantized into a GGUF with its keys:
// the file alone tokenizes as tokenizer.json does.
TEST(GgufTokenizerExport, SyntheticModelRoundTripsThroughTheGguf) {
  const fs::path tmp = TempDir("export-synth");
  auto config = kernels::model::SynthPreset("tiny");
  ASSERT_TRUE(config.ok());
  kernels::model::SynthOptions so;
  so.seed = 3;
  ASSERT_TRUE(SynthesizeTextModel(*config, so, (tmp / "hf").string()).ok());
  auto keys = GgufTokenizerKeysFor((tmp / "hf").string());
  ASSERT_TRUE(keys.ok()) << keys.status().ToString();
  EXPECT_EQ(keys->pre, "llama-bpe");
  EXPECT_TRUE(keys->add_bos);

  fs::create_directories(tmp / "q");
  const std::string gguf = (tmp / "q" / "m.gguf").string();
  auto r = kernels::model::QuantizeModelDir((tmp / "hf").string(),
                                            kernels::DType::kQ8_0, gguf, *keys);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  fs::remove(tmp / "q" / "tokenizer.json");  // the file's keys alone
  auto from_gguf = LoadModelTextFor((tmp / "q").string(), gguf);
  ASSERT_TRUE(from_gguf.ok()) << from_gguf.status().ToString();
  ASSERT_NE(*from_gguf, nullptr);
  auto original = ModelText::Load((tmp / "hf").string());
  ASSERT_TRUE(original.ok());
  const ModelText& a = **original;
  const ModelText& b = **from_gguf;
  ASSERT_EQ(b.tokenizer().vocab_size(), config->vocab_size);
  std::vector<std::string> texts = SampleTexts();
  texts.push_back("<|begin_of_text|>x<|end_of_text|> y");
  for (const std::string& text : texts) {
    auto pa = a.EncodePrompt(text);
    auto pb = b.EncodePrompt(text);
    ASSERT_TRUE(pa.ok() && pb.ok()) << Json(text).dump();
    EXPECT_EQ(*pa, *pb) << Json(text).dump();
  }
  fs::remove_all(tmp);
}

// A model directory holding `tok` (the synthetic tokenizer, changed).
std::string WriteDir(const std::string& name, const Json& tok) {
  const fs::path dir = TempDir("export-" + name);
  std::ofstream(dir / "tokenizer.json") << tok.dump();
  return dir.string();
}

Json Synthetic() { return Json::parse(BuildSyntheticTokenizerJson(512, 1)); }

TEST(GgufTokenizerExport, RefusesWhatLlamaCppWouldTokenizeOtherwise) {
  struct Case {
    const char* name;
    std::function<void(Json&)> change;
    std::string want;
  };
  const std::vector<Case> cases = {
      {"byte_fallback", [](Json& t) { t["model"]["byte_fallback"] = true; },
       "tokenizer.json: model.byte_fallback"},
      {"suffix", [](Json& t) { t["model"]["end_of_word_suffix"] = "</w>"; },
       "tokenizer.json: model.end_of_word_suffix"},
      {"wordpiece", [](Json& t) { t["model"]["type"] = "WordPiece"; },
       "tokenizer.json: model.type"},
      {"other_split",
       [](Json& t) {
         t["pre_tokenizer"]["pretokenizers"][0]["pattern"]["Regex"] = "\\s+";
       },
       "tokenizer.json: normalizer, pre_tokenizer and decoder"},
      {"nfkc",
       [](Json& t) {
         t["normalizer"] = {{"type", "NFKC"}};
       },
       "normalizer, pre_tokenizer and decoder"},
      {"lstrip", [](Json& t) { t["added_tokens"][0]["lstrip"] = true; },
       "tokenizer.json: added_tokens[0].lstrip"},
      {"single_word",
       [](Json& t) { t["added_tokens"][1]["single_word"] = true; },
       "tokenizer.json: added_tokens[1].single_word"},
      // "QXZ" is a token, but merging Q, X, Z takes "X Z" (lower rank)
      // first and never reaches it: with ignore_merges false the file
      // encodes "QXZ" as [Q, XZ], llama.cpp's llama-bpe as [QXZ].
      {"merges_matter",
       [](Json& t) {
         Json& v = t["model"]["vocab"];
         const int64_t n = int64_t(v.size()) + 2;  // after the specials
         v["XZ"] = n;
         v["QX"] = n + 1;
         v["QXZ"] = n + 2;
         t["model"]["merges"].push_back("X Z");
         t["model"]["merges"].push_back("Q X");
         t["model"]["merges"].push_back("QX Z");
       },
       "tokenizer.json: model.ignore_merges: false, but llama.cpp's "
       "\"llama-bpe\" has it true"},
  };
  for (const Case& c : cases) {
    Json tok = Synthetic();
    c.change(tok);
    auto keys = GgufTokenizerKeysFor(WriteDir(c.name, tok));
    ASSERT_FALSE(keys.ok()) << c.name;
    EXPECT_EQ(keys.status().code(), StatusCode::kUnimplemented)
        << c.name << ": " << keys.status().ToString();
    EXPECT_THAT(keys.status().message(), HasSubstr(c.want)) << c.name;
  }
  // The same ignore_merges test passes when the flag cannot matter: the
  // synthetic file as written says false, llama-bpe true.
  EXPECT_TRUE(GgufTokenizerKeysFor(WriteDir("plain", Synthetic())).ok());
  auto none = GgufTokenizerKeysFor(TempDir("export-none").string());
  EXPECT_EQ(none.status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace layerproof::text
