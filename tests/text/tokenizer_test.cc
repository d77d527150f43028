// text/tokenizer.h: tokenizer.json tokenizers (byte-level and
// SentencePiece-style BPE, every pipeline step), and the synthetic
// tokenizer. tests/peer/ compares real model files with Hugging Face.
//
// The known answers come from tiny tokenizer.json files built below, with
// the expected ids worked out by hand in the comments (the merge order
// decides: lowest rank first, leftmost on ties). They were also confirmed
// with Hugging Face tokenizers 0.23.2 (its Node binding) on the same files.

#include "text/tokenizer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kernels/sha256.h"
#include "kernels/status.h"
#include "text/internal/pipeline.h"
#include "text/internal/regex.h"
#include "text/internal/unicode.h"
#include "text/synthetic_tokenizer.h"

namespace layerproof::text {
namespace {

using kernels::HexDigest;
using kernels::Sha256;
using kernels::StatusCode;
using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

using Ids = std::vector<int32_t>;
using Merges = std::vector<std::pair<std::string, std::string>>;

// GPT-2's bytes_to_unicode(), written out again here rather than taken
// from the library: printable bytes map to themselves, the other 68 to
// U+0100 upward in byte order.
std::string ByteChar(int b) {
  auto printable = [](int x) {
    return (x >= 0x21 && x <= 0x7E) || (x >= 0xA1 && x <= 0xAC) ||
           (x >= 0xAE && x <= 0xFF);
  };
  int cp = b;
  if (!printable(b)) {
    cp = 256;
    for (int x = 0; x < b; ++x) cp += printable(x) ? 0 : 1;
  }
  std::string out;
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
  return out;
}

std::string ByteForm(std::string_view raw) {
  std::string out;
  for (char c : raw) out += ByteChar(static_cast<uint8_t>(c));
  return out;
}

std::string Quoted(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else {
      out += c;
    }
  }
  return out + "\"";
}

// tokenizer.json around a model, with the given sections (JSON text).
struct Sections {
  std::string normalizer = "null";
  std::string pre_tokenizer = "null";
  std::string post_processor = "null";
  std::string decoder = "null";
  std::string added_tokens = "[]";
};

std::string ModelJson(
    const std::vector<std::string>& vocab,
    const std::vector<std::pair<std::string, std::string>>& merges,
    const std::string& options, bool pair_merges) {
  std::string out = "{\"type\": \"BPE\", " + options + "\"vocab\": {";
  for (size_t i = 0; i < vocab.size(); ++i) {
    out += (i ? ", " : "") + Quoted(vocab[i]) + ": " + std::to_string(i);
  }
  out += "}, \"merges\": [";
  for (size_t i = 0; i < merges.size(); ++i) {
    out += i ? ", " : "";
    out += pair_merges ? "[" + Quoted(merges[i].first) + ", " +
                             Quoted(merges[i].second) + "]"
                       : Quoted(merges[i].first + " " + merges[i].second);
  }
  return out + "]}";
}

std::string TokenizerJson(const Sections& s, const std::string& model) {
  return "{\"version\": \"1.0\", \"truncation\": null, \"padding\": null, "
         "\"added_tokens\": " +
         s.added_tokens + ", \"normalizer\": " + s.normalizer +
         ", \"pre_tokenizer\": " + s.pre_tokenizer +
         ", \"post_processor\": " + s.post_processor +
         ", \"decoder\": " + s.decoder + ", \"model\": " + model + "}";
}

std::string AddedToken(int id, std::string_view content, bool special = true,
                       bool lstrip = false) {
  return "{\"id\": " + std::to_string(id) +
         ", \"content\": " + Quoted(content) +
         ", \"single_word\": false, \"lstrip\": " +
         (lstrip ? "true" : "false") +
         ", \"rstrip\": false, \"normalized\": false, \"special\": " +
         (special ? "true" : "false") + "}";
}

constexpr char kGpt2ByteLevel[] =
    R"({"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": true})";
constexpr char kLlama3Split[] =
    R"({"type": "Sequence", "pretokenizers": [{"type": "Split", "pattern": {"Regex": "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"}, "behavior": "Isolated", "invert": false}, {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": false}]})";
constexpr char kQwen2Split[] =
    R"({"type": "Sequence", "pretokenizers": [{"type": "Split", "pattern": {"Regex": "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"}, "behavior": "Isolated", "invert": false}, {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": false}]})";
constexpr char kByteLevelDecoder[] =
    R"({"type": "ByteLevel", "add_prefix_space": true, "trim_offsets": true, "use_regex": true})";

// The byte-level merges (raw bytes); merge i makes token 256 + i.
const Merges& ByteMerges() {
  static const Merges kMerges = {
      {"h", "e"},      // 256 he
      {"l", "l"},      // 257 ll
      {"he", "ll"},    // 258 hell
      {"hell", "o"},   // 259 hello
      {" ", "w"},      // 260 " w"
      {"o", "r"},      // 261 or
      {" w", "or"},    // 262 " wor"
      {"l", "d"},      // 263 ld
      {" wor", "ld"},  // 264 " world"
      {"'", "s"},      // 265 's
      {"3", "4"},      // 266 34
      {"\n", "\n"},    // 267 \n\n
      {" ", "h"},      // 268 " h"
      {" h", "i"},     // 269 " hi"
  };
  return kMerges;
}

// A byte-level tokenizer: id b (0..255) is byte b, then one token per
// ByteMerges() entry, then `extra` tokens (raw bytes) without merges.
struct ByteLevelOptions {
  std::string pre_tokenizer = kGpt2ByteLevel;
  Sections sections;
  std::vector<std::string> extra;
  bool ignore_merges = false;
  bool pair_merges = false;
};

ByteLevelOptions WithPre(const std::string& pre_tokenizer) {
  ByteLevelOptions o;
  o.pre_tokenizer = pre_tokenizer;
  return o;
}

std::string ByteLevelJson(ByteLevelOptions o) {
  std::vector<std::string> vocab;
  for (int b = 0; b < 256; ++b) vocab.push_back(ByteChar(b));
  std::vector<std::pair<std::string, std::string>> merges;
  for (const auto& [l, r] : ByteMerges()) {
    merges.emplace_back(ByteForm(l), ByteForm(r));
    vocab.push_back(ByteForm(l + r));
  }
  for (const std::string& e : o.extra) vocab.push_back(ByteForm(e));
  o.sections.pre_tokenizer = o.pre_tokenizer;
  if (o.sections.decoder == "null") o.sections.decoder = kByteLevelDecoder;
  const std::string options =
      std::string("\"dropout\": null, \"unk_token\": null, ") +
      "\"byte_fallback\": false, \"ignore_merges\": " +
      (o.ignore_merges ? "true" : "false") + ", ";
  return TokenizerJson(o.sections,
                       ModelJson(vocab, merges, options, o.pair_merges));
}

std::unique_ptr<Tokenizer> MustLoad(const std::string& json) {
  StatusOr<std::unique_ptr<Tokenizer>> t =
      Tokenizer::FromJson(json, "test.json");
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  return t.ok() ? std::move(t).value() : nullptr;
}

Ids MustEncode(const Tokenizer& t, std::string_view text, bool bos = false) {
  StatusOr<Ids> ids = t.Encode(text, bos);
  EXPECT_TRUE(ids.ok()) << ids.status().ToString();
  return ids.ok() ? *ids : Ids{};
}

std::string MustDecode(const Tokenizer& t, const Ids& ids,
                       bool skip_special = false) {
  StatusOr<std::string> text = t.Decode(ids, skip_special);
  EXPECT_TRUE(text.ok()) << text.status().ToString();
  return text.ok() ? *text : "";
}

// The split patterns of GPT-2 (ByteLevel's use_regex), Llama-3 and Qwen2.
constexpr char kGpt2Re[] =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";
constexpr char kLlama3Re[] =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr char kQwen2Re[] =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

std::vector<std::string> Split(
    std::string_view pattern, std::string_view text,
    internal::SplitBehavior behavior = internal::SplitBehavior::kIsolated,
    bool invert = false) {
  StatusOr<internal::Regex> re = internal::Regex::Compile(pattern);
  EXPECT_TRUE(re.ok()) << re.status().ToString();
  std::vector<internal::Match> m;
  if (re.ok()) {
    EXPECT_TRUE(re->FindAll(text, &m).ok());
  }
  std::vector<std::string_view> views =
      internal::SplitPieces(text, m, invert, behavior);
  return std::vector<std::string>(views.begin(), views.end());
}

// ---------------------------------------------------------------------------
// Pre-tokenizer patterns.

TEST(PreTokenizeTest, Gpt2Pattern) {
  // Contractions are lowercase only; a lone space joins the next run;
  // a whitespace run before a word leaves its last space to the word.
  EXPECT_THAT(Split(kGpt2Re, "it's IT'S  a 12345!!\n"),
              ElementsAre("it", "'s", " IT", "'", "S", " ", " a", " 12345",
                          "!!", "\n"));
  EXPECT_THAT(Split(kGpt2Re, "naïve café,\tΓειά"),
              ElementsAre("naïve", " café", ",", "\t", "Γειά"));
}

TEST(PreTokenizeTest, Llama3Pattern) {
  // Case-insensitive contractions, digits in threes, "\n\n" on its own, a
  // punctuation run takes the newlines after it.
  EXPECT_THAT(Split(kLlama3Re, "I'M 1234567 ok\n\n  hi"),
              ElementsAre("I", "'M", " ", "123", "456", "7", " ok", "\n\n", " ",
                          " hi"));
  EXPECT_THAT(
      Split(kLlama3Re, "(hello) it's ok!!\n\nx  "),
      ElementsAre("(hello", ")", " it", "'s", " ok", "!!\n\n", "x", "  "));
  // One non-letter (space, tab, punctuation) may lead a letter run.
  EXPECT_THAT(Split(kLlama3Re, "a\tb.c\r\nd"),
              ElementsAre("a", "\tb", ".c", "\r\n", "d"));
}

TEST(PreTokenizeTest, Llama3UnicodeClasses) {
  // Letters of several scripts, fullwidth digits (\p{N}), superscript two
  // (\p{N}), emoji (neither), Devanagari signs (marks, not letters).
  EXPECT_THAT(Split(kLlama3Re, "naïve Привет 日本語 ２０２４年 x² hi 🎉🎉! नमस्ते"),
              ElementsAre("naïve", " Привет", " 日本語", " ", "２０２", "４",
                          "年", " x", "²", " hi", " 🎉🎉!", " नमस", "्त", "े"));
  // U+3000 and U+00A0 are whitespace.
  EXPECT_THAT(Split(kLlama3Re, "a\u3000\u00a0b"),
              ElementsAre("a", "\u3000", "\u00a0b"));
}

TEST(PreTokenizeTest, Qwen2PatternSplitsDigitsSingly) {
  EXPECT_THAT(Split(kQwen2Re, "x 2024"),
              ElementsAre("x", " ", "2", "0", "2", "4"));
}

TEST(PreTokenizeTest, SplitBehaviors) {
  // Hugging Face's own example (tokenizer/normalizer.rs), splitting
  // "the-final--countdown" on '-'.
  using B = internal::SplitBehavior;
  const char* text = "the-final--countdown";
  EXPECT_THAT(Split("-", text, B::kRemoved),
              ElementsAre("the", "final", "countdown"));
  EXPECT_THAT(Split("-", text, B::kIsolated),
              ElementsAre("the", "-", "final", "-", "-", "countdown"));
  EXPECT_THAT(Split("-", text, B::kMergedWithPrevious),
              ElementsAre("the-", "final-", "-", "countdown"));
  EXPECT_THAT(Split("-", text, B::kMergedWithNext),
              ElementsAre("the", "-final", "-", "-countdown"));
  EXPECT_THAT(Split("-", text, B::kContiguous),
              ElementsAre("the", "-", "final", "--", "countdown"));
  // cl100k and o200k: the word pattern, inverted, matches removed.
  EXPECT_THAT(Split(kLlama3Re, "it's 2024!", B::kRemoved, /*invert=*/true),
              ElementsAre("it", "'s", " ", "202", "4", "!"));
}

TEST(PreTokenizeTest, UnicodeClassesAreTheRegexEngines) {
  // Georgian Mtavruli (U+1C90..) and Javanese are letters, so "'s" after
  // them stays one piece (hand tables once classed them "other").
  EXPECT_THAT(Split(kLlama3Re, "ᲡᲐ's x"),
              ElementsAre("ᲡᲐ", "'s", " x"));
  EXPECT_THAT(Split(kLlama3Re, "ꦏꦐ's"), ElementsAre("ꦏꦐ", "'s"));
  // (?i) folds case by Unicode: the long s U+017F matches 's.
  EXPECT_THAT(Split(kLlama3Re, "x'ſ"), ElementsAre("x", "'ſ"));
}

// ---------------------------------------------------------------------------
// Byte-level BPE.

TEST(ByteLevelBpeTest, Gpt2KnownAnswers) {
  std::unique_ptr<Tokenizer> t = MustLoad(ByteLevelJson({}));
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->vocab_size(), 256 + 14);
  // "hello": h e l l o -> he (rank 0) -> ll (1) -> hell (2) -> hello (3).
  // " world": " w" (4), or (5), " wor" (6), ld (7), " world" (8).
  // "'s": merge 9.
  EXPECT_THAT(MustEncode(*t, "hello world's"), ElementsAre(259, 264, 265));
  // "Hello": no (H, e) merge, so only ll. "  world" leaves one space
  // alone. "!!" and "\n" are bytes 33 33 10.
  EXPECT_THAT(MustEncode(*t, "Hello  world!!\n"),
              ElementsAre(72, 101, 257, 111, 32, 264, 33, 33, 10));
  // GPT-2: "'M" is no contraction; " 1234567" is one piece, so (3, 4)
  // merges; "\n\n  hi" -> "\n\n " (merge 11, then space) and " hi"
  // (merges 12, 13).
  EXPECT_THAT(MustEncode(*t, "I'M 1234567 ok\n\n  hi"),
              ElementsAre(73, 39, 77, 32, 49, 50, 266, 53, 54, 55, 32, 111, 107,
                          267, 32, 269));
}

TEST(ByteLevelBpeTest, AddPrefixSpace) {
  ByteLevelOptions o;
  o.pre_tokenizer =
      R"({"type": "ByteLevel", "add_prefix_space": true, "trim_offsets": true, "use_regex": true})";
  std::unique_ptr<Tokenizer> t = MustLoad(ByteLevelJson(o));
  ASSERT_NE(t, nullptr);
  // " hello": (h, e) outranks (" ", h), so the space stays alone.
  EXPECT_THAT(MustEncode(*t, "hello"), ElementsAre(32, 259));
  EXPECT_THAT(MustEncode(*t, " hello"), ElementsAre(32, 259));
}

TEST(ByteLevelBpeTest, Llama3KnownAnswers) {
  std::unique_ptr<Tokenizer> t = MustLoad(ByteLevelJson(WithPre(kLlama3Split)));
  ASSERT_NE(t, nullptr);
  // Pieces "I" "'M" " " "123" "456" "7" " ok" "\n\n" " " " hi": (3, 4)
  // cannot merge across "123" | "456".
  EXPECT_THAT(MustEncode(*t, "I'M 1234567 ok\n\n  hi"),
              ElementsAre(73, 39, 77, 32, 49, 50, 51, 52, 53, 54, 55, 32, 111,
                          107, 267, 32, 269));
  // " 2345" -> " " "234" "5": (3, 4) merges inside "234".
  EXPECT_THAT(MustEncode(*t, " 2345"), ElementsAre(32, 50, 266, 53));
  // "(hello" is one piece; "!!\n\n" keeps its newlines (merge 11).
  EXPECT_THAT(MustEncode(*t, "(hello) it's ok!!\n\nx"),
              ElementsAre(40, 259, 41, 32, 105, 116, 265, 32, 111, 107, 33, 33,
                          267, 120));
}

TEST(ByteLevelBpeTest, Qwen2DigitsSingly) {
  std::unique_ptr<Tokenizer> t = MustLoad(ByteLevelJson(WithPre(kQwen2Split)));
  ASSERT_NE(t, nullptr);
  EXPECT_THAT(MustEncode(*t, " 2345"), ElementsAre(32, 50, 51, 52, 53));
}

TEST(ByteLevelBpeTest, PairMergesReadLikeStringMerges) {
  ByteLevelOptions o;
  o.pair_merges = true;
  std::unique_ptr<Tokenizer> t = MustLoad(ByteLevelJson(o));
  ASSERT_NE(t, nullptr);
  EXPECT_THAT(MustEncode(*t, "hello world's"), ElementsAre(259, 264, 265));
}

TEST(ByteLevelBpeTest, IgnoreMergesTakesWholeVocabWords) {
  // "xyz" is token 270 with no merges leading to it.
  ByteLevelOptions o = WithPre(kLlama3Split);
  o.extra = {"xyz"};
  std::unique_ptr<Tokenizer> plain = MustLoad(ByteLevelJson(o));
  o.ignore_merges = true;
  std::unique_ptr<Tokenizer> whole = MustLoad(ByteLevelJson(o));
  ASSERT_NE(plain, nullptr);
  ASSERT_NE(whole, nullptr);
  EXPECT_THAT(MustEncode(*plain, "xyz"), ElementsAre(120, 121, 122));
  EXPECT_THAT(MustEncode(*whole, "xyz"), ElementsAre(270));
  EXPECT_THAT(MustEncode(*whole, "hello"), ElementsAre(259));
}

TEST(ByteLevelBpeTest, AddedTokensSplitFirstLongestMatch) {
  ByteLevelOptions o;
  o.sections.added_tokens =
      "[" + AddedToken(270, "<|begin_of_text|>") + ", " +
      AddedToken(271, "<|end_of_text|>") + ", " + AddedToken(272, "<|end|>") +
      ", " + AddedToken(273, "<mask>", /*special=*/false, /*lstrip=*/true) +
      "]";
  std::unique_ptr<Tokenizer> t = MustLoad(ByteLevelJson(o));
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->vocab_size(), 274);
  EXPECT_THAT(MustEncode(*t, "<|begin_of_text|>hello<|end_of_text|><|end|>"),
              ElementsAre(270, 259, 271, 272));
  // "<mask>" absorbs the whitespace before it (lstrip).
  EXPECT_THAT(MustEncode(*t, "hello <mask> world"), ElementsAre(259, 273, 264));
  EXPECT_EQ(t->TokenId("<|end|>"), 272);
  EXPECT_EQ(t->TokenId("hello"), 259);
  EXPECT_FALSE(t->TokenId("nope").has_value());
  // Without a post_processor, special tokens add nothing.
  EXPECT_TRUE(t->template_prefix().empty());
  EXPECT_THAT(MustEncode(*t, "hello", /*bos=*/true), ElementsAre(259));
  // Special tokens decode as their text unless skipped.
  EXPECT_EQ(MustDecode(*t, {270, 259, 271}),
            "<|begin_of_text|>hello<|end_of_text|>");
  EXPECT_EQ(MustDecode(*t, {270, 259, 273, 271}, /*skip_special=*/true),
            "hello<mask>");
}

TEST(ByteLevelBpeTest, BosFromTemplateProcessing) {
  ByteLevelOptions o;
  o.sections.added_tokens = "[" + AddedToken(270, "<|endoftext|>") + ", " +
                            AddedToken(271, "<|start|>") + "]";
  std::unique_ptr<Tokenizer> gpt2 = MustLoad(ByteLevelJson(o));
  ASSERT_NE(gpt2, nullptr);
  // GPT-2 style: no template, so nothing is added.
  EXPECT_TRUE(gpt2->template_prefix().empty());
  EXPECT_THAT(MustEncode(*gpt2, "hi", /*bos=*/true), ElementsAre(104, 105));
  o.sections.post_processor =
      R"({"type": "Sequence", "processors": [{"type": "ByteLevel", "add_prefix_space": true, "trim_offsets": false, "use_regex": true}, {"type": "TemplateProcessing", "single": [{"SpecialToken": {"id": "<|start|>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}], "pair": [], "special_tokens": {"<|start|>": {"id": "<|start|>", "ids": [271], "tokens": ["<|start|>"]}}}]})";
  std::unique_ptr<Tokenizer> t = MustLoad(ByteLevelJson(o));
  ASSERT_NE(t, nullptr);
  EXPECT_THAT(t->template_prefix(), ElementsAre(271));
  EXPECT_TRUE(t->template_suffix().empty());
  EXPECT_THAT(MustEncode(*t, "hi", /*bos=*/true), ElementsAre(271, 104, 105));
}

TEST(ByteLevelBpeTest, NoSpecialsMeansNoBos) {
  std::unique_ptr<Tokenizer> t = MustLoad(ByteLevelJson({}));
  ASSERT_NE(t, nullptr);
  EXPECT_TRUE(t->template_prefix().empty());
  EXPECT_THAT(MustEncode(*t, "hi", /*bos=*/true), ElementsAre(104, 105));
}

TEST(ByteLevelBpeTest, DecodeReplacesPartialUtf8) {
  std::unique_ptr<Tokenizer> t = MustLoad(ByteLevelJson({}));
  ASSERT_NE(t, nullptr);
  // "€" is E2 82 AC; its first byte alone is U+FFFD, as from_utf8_lossy.
  EXPECT_EQ(MustDecode(*t, {0xE2}), "\uFFFD");
  EXPECT_EQ(MustDecode(*t, {'a', 0xE2, 0x82, 'b'}), "a\uFFFDb");
  EXPECT_EQ(MustDecode(*t, {0xE2, 0x82, 0xAC}), "€");
}

// ---------------------------------------------------------------------------
// SentencePiece-style BPE.

constexpr char kLlama2Normalizer[] =
    R"({"type": "Sequence", "normalizers": [{"type": "Prepend", "prepend": "▁"}, {"type": "Replace", "pattern": {"String": " "}, "content": "▁"}]})";
constexpr char kLlama2Decoder[] =
    R"({"type": "Sequence", "decoders": [{"type": "Replace", "pattern": {"String": "▁"}, "content": " "}, {"type": "ByteFallback"}, {"type": "Fuse"}, {"type": "Strip", "content": " ", "start": 1, "stop": 0}]})";
constexpr char kLlama2Template[] =
    R"({"type": "TemplateProcessing", "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}], "pair": [], "special_tokens": {"<s>": {"id": "<s>", "ids": [1], "tokens": ["<s>"]}}})";

// Ids: <unk> 0, <s> 1, </s> 2, <0x00>..<0xFF> 3..258, then:
//   ▁ 259, h 260, e 261, l 262, o 263, w 264, r 265, d 266,
//   ▁h 267, ll 268, ▁he 269, ▁hell 270, ▁hello 271, ▁w 272, or 273.
Sections Llama2Sections() {
  Sections s;
  s.normalizer = kLlama2Normalizer;
  s.post_processor = kLlama2Template;
  s.decoder = kLlama2Decoder;
  return s;
}

struct SentencePieceOptions {
  Sections sections = Llama2Sections();
  bool byte_fallback = true;
  bool fuse_unk = true;
};

SentencePieceOptions WithFallback(bool byte_fallback, bool fuse_unk) {
  SentencePieceOptions o;
  o.byte_fallback = byte_fallback;
  o.fuse_unk = fuse_unk;
  return o;
}

std::string SentencePieceJson(SentencePieceOptions o) {
  std::vector<std::string> vocab = {"<unk>", "<s>", "</s>"};
  static const char kHex[] = "0123456789ABCDEF";
  for (int b = 0; b < 256; ++b) {
    vocab.push_back(std::string("<0x") + kHex[b >> 4] + kHex[b & 15] + ">");
  }
  for (const char* p : {"▁", "h", "e", "l", "o", "w", "r", "d", "▁h", "ll",
                        "▁he", "▁hell", "▁hello", "▁w", "or"}) {
    vocab.push_back(p);
  }
  const std::vector<std::pair<std::string, std::string>> merges = {
      {"▁", "h"},     {"l", "l"}, {"▁h", "e"}, {"▁he", "ll"},
      {"▁hell", "o"}, {"▁", "w"}, {"o", "r"}};
  o.sections.added_tokens = "[" + AddedToken(0, "<unk>") + ", " +
                            AddedToken(1, "<s>") + ", " +
                            AddedToken(2, "</s>") + "]";
  const std::string options =
      std::string("\"unk_token\": \"<unk>\", \"fuse_unk\": ") +
      (o.fuse_unk ? "true" : "false") +
      ", \"byte_fallback\": " + (o.byte_fallback ? "true" : "false") + ", ";
  return TokenizerJson(o.sections, ModelJson(vocab, merges, options, false));
}

TEST(SentencePieceBpeTest, KnownAnswers) {
  std::unique_ptr<Tokenizer> t = MustLoad(SentencePieceJson({}));
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->vocab_size(), 274);
  // "▁hello▁world": ▁h (rank 0), ll (1), ▁he (2), ▁hell (3), ▁hello (4),
  // ▁w (5), or (6); "l" "d" stay.
  EXPECT_THAT(MustEncode(*t, "hello world"),
              ElementsAre(271, 272, 273, 262, 266));
  // A leading space becomes a second ▁, which stays alone.
  EXPECT_THAT(MustEncode(*t, " hello"), ElementsAre(259, 271));
  // "€" is not in the vocabulary: its bytes E2 82 AC are <0xE2> (3 + 0xE2 =
  // 229), <0x82> (133), <0xAC> (175).
  EXPECT_THAT(MustEncode(*t, "he€"), ElementsAre(269, 229, 133, 175));
  EXPECT_THAT(MustEncode(*t, "€"), ElementsAre(259, 229, 133, 175));
  EXPECT_EQ(MustDecode(*t, {269, 229, 133, 175}), "he€");
  EXPECT_EQ(MustDecode(*t, {271, 272, 273, 262, 266}), "hello world");
}

TEST(SentencePieceBpeTest, SpecialTokensAndBos) {
  std::unique_ptr<Tokenizer> t = MustLoad(SentencePieceJson({}));
  ASSERT_NE(t, nullptr);
  EXPECT_THAT(t->template_prefix(), ElementsAre(1));
  // Each stretch between added tokens is normalized alone (gets its ▁).
  EXPECT_THAT(MustEncode(*t, "<s>hello</s>hello"), ElementsAre(1, 271, 2, 271));
  EXPECT_THAT(MustEncode(*t, "hello", /*bos=*/true), ElementsAre(1, 271));
  EXPECT_EQ(MustDecode(*t, {1, 271, 2}), "<s> hello</s>");
  EXPECT_EQ(MustDecode(*t, {1, 271, 2}, /*skip_special=*/true), "hello");
}

TEST(SentencePieceBpeTest, MetaspacePrependFirst) {
  SentencePieceOptions o;
  o.sections.normalizer = "null";
  o.sections.pre_tokenizer =
      R"({"type": "Metaspace", "replacement": "▁", "prepend_scheme": "first", "split": false})";
  o.sections.decoder =
      R"({"type": "Metaspace", "replacement": "▁", "prepend_scheme": "first", "split": false})";
  std::unique_ptr<Tokenizer> t = MustLoad(SentencePieceJson(o));
  ASSERT_NE(t, nullptr);
  // Only the stretch at the start of the text gets the ▁; "hello" after
  // </s> merges as h e ll o.
  EXPECT_THAT(MustEncode(*t, "hello</s>hello"),
              ElementsAre(271, 2, 260, 261, 268, 263));
  EXPECT_EQ(MustDecode(*t, {271, 272, 273, 262, 266}), "hello world");
}

TEST(SentencePieceBpeTest, UnknownWithoutByteFallback) {
  // "▁hezz": ▁ h e <unk> <unk>; fused to one <unk> when fuse_unk is set.
  std::unique_ptr<Tokenizer> fused =
      MustLoad(SentencePieceJson(WithFallback(false, true)));
  std::unique_ptr<Tokenizer> unfused =
      MustLoad(SentencePieceJson(WithFallback(false, false)));
  ASSERT_NE(fused, nullptr);
  ASSERT_NE(unfused, nullptr);
  EXPECT_THAT(MustEncode(*fused, "hezz"), ElementsAre(269, 0));
  EXPECT_THAT(MustEncode(*unfused, "hezz"), ElementsAre(269, 0, 0));
}

TEST(SentencePieceBpeTest, DecodeReplacesPartialUtf8PerByte) {
  std::unique_ptr<Tokenizer> t = MustLoad(SentencePieceJson({}));
  ASSERT_NE(t, nullptr);
  // ByteFallback: a run of byte tokens that is not UTF-8 is one U+FFFD per
  // byte.
  EXPECT_EQ(MustDecode(*t, {269, 229}), "he\uFFFD");
  EXPECT_EQ(MustDecode(*t, {269, 229, 133}), "he\uFFFD\uFFFD");
}

// ---------------------------------------------------------------------------
// Round trips.

const std::vector<std::string>& RoundTripTexts() {
  static const std::vector<std::string> kTexts = {
      "hello world",
      "The transparency log grew to 1234567 entries in 2024.",
      "  leading and trailing spaces   ",
      "tabs\tand\nnewlines\r\n\n\nand   runs",
      "I'm sure it's fine, isn't it? YOU'LL see; we'd've known.",
      "naïve café, Ελληνικά, русский, עברית, العربية, हिन्दी",
      "日本語のテキストと中文，한국어 문장",
      "emoji 🎉🚀👍🏽 and ZWJ 👩‍💻 and flags 🇫🇷",
      "math: ∑ x² ≠ ½ · ∞ — “quotes” ‘single’ «guillemets»",
      "ｆｕｌｌｗｉｄｔｈ　ＡＢＣ１２３",
      "<s> looks special but </s> is not, <|x|>",
      "",
  };
  return kTexts;
}

TEST(RoundTripTest, ByteLevel) {
  for (const char* pre : {kGpt2ByteLevel, kLlama3Split, kQwen2Split}) {
    std::unique_ptr<Tokenizer> t = MustLoad(ByteLevelJson(WithPre(pre)));
    ASSERT_NE(t, nullptr);
    for (const std::string& text : RoundTripTexts()) {
      EXPECT_EQ(MustDecode(*t, MustEncode(*t, text)), text) << pre;
    }
  }
}

TEST(RoundTripTest, SentencePiece) {
  std::unique_ptr<Tokenizer> t = MustLoad(SentencePieceJson({}));
  ASSERT_NE(t, nullptr);
  for (const std::string& text : RoundTripTexts()) {
    // Added tokens (<s>, </s>) are matched, so the texts containing them
    // come back with the space SentencePiece puts after a special token.
    if (text.find("<s>") != std::string::npos) continue;
    EXPECT_EQ(MustDecode(*t, MustEncode(*t, text)), text);
  }
}

// ---------------------------------------------------------------------------
// Errors.

Status LoadError(const std::string& json) {
  StatusOr<std::unique_ptr<Tokenizer>> t =
      Tokenizer::FromJson(json, "bad.json");
  return t.status();
}

TEST(TokenizerErrorTest, BadJson) {
  Status s = LoadError("{\"model\": ");
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("bad.json"));
  EXPECT_EQ(LoadError("[1, 2]").code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(LoadError("{}").code(), StatusCode::kInvalidArgument);
}

TEST(TokenizerErrorTest, UnknownModelType) {
  std::string json = ByteLevelJson({});
  json.replace(json.find("\"type\": \"BPE\""), 13, "\"type\": \"Unigram\"");
  Status s = LoadError(json);
  EXPECT_EQ(s.code(), StatusCode::kUnimplemented);
  EXPECT_THAT(s.message(), HasSubstr("model.type"));
  EXPECT_THAT(s.message(), HasSubstr("Unigram"));
}

TEST(TokenizerErrorTest, BadPreTokenizerPattern) {
  const std::string pre =
      R"({"type": "Sequence", "pretokenizers": [{"type": "Split", "pattern": {"Regex": "(\\s+"}, "behavior": "Isolated", "invert": false}, {"type": "ByteLevel", "add_prefix_space": false, "use_regex": false}]})";
  Status s = LoadError(ByteLevelJson(WithPre(pre)));
  EXPECT_EQ(s.code(), StatusCode::kUnimplemented);
  EXPECT_THAT(s.message(),
              HasSubstr("pre_tokenizer.pretokenizers[0].pattern.Regex"));
  Status t = LoadError(ByteLevelJson(WithPre(R"({"type": "Whitespace"})")));
  EXPECT_EQ(t.code(), StatusCode::kUnimplemented);
  EXPECT_THAT(t.message(), HasSubstr("pre_tokenizer.type"));
}

TEST(TokenizerErrorTest, MalformedModel) {
  std::string json = ByteLevelJson({});
  // A merge of tokens that are not in the vocabulary.
  const size_t m = json.find("\"merges\": [") + 11;
  Status s = LoadError(json.substr(0, m) + "\"q@ z@\", " + json.substr(m));
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("model.merges[0]"));
  // A negative id.
  std::string neg = ByteLevelJson({});
  neg.replace(neg.find(": 0,"), 4, ": -5,");
  EXPECT_EQ(LoadError(neg).code(), StatusCode::kInvalidArgument);
  // No decoder: Hugging Face joins the tokens with spaces.
  std::string no_decoder = ByteLevelJson({});
  no_decoder.replace(no_decoder.find(kByteLevelDecoder),
                     std::string_view(kByteLevelDecoder).size(), "null");
  std::unique_ptr<Tokenizer> plain = MustLoad(no_decoder);
  ASSERT_NE(plain, nullptr);
  EXPECT_EQ(MustDecode(*plain, {259, 264}), "hello \xC4\xA0world");
}

TEST(TokenizerErrorTest, DeeplyNestedSequenceIsRefused) {
  std::string pre = kGpt2ByteLevel;
  for (int i = 0; i < 20; ++i) {
    pre = R"({"type": "Sequence", "pretokenizers": [)" + pre + "]}";
  }
  Status s = LoadError(ByteLevelJson(WithPre(pre)));
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("nested too deeply"));
}

TEST(TokenizerErrorTest, InvalidUtf8NamesTheOffset) {
  std::unique_ptr<Tokenizer> t = MustLoad(ByteLevelJson({}));
  ASSERT_NE(t, nullptr);
  for (const auto& [text, offset] :
       std::vector<std::pair<std::string, std::string>>{
           {"ab\xC3(", "offset 2"},             // Truncated sequence.
           {"x\xC0\x80", "offset 1"},           // Overlong NUL.
           {"\xED\xA0\x80", "offset 0"},        // Surrogate.
           {"ok\xF4\x90\x80\x80", "offset 2"},  // Above U+10FFFF.
           {"\x80", "offset 0"}}) {
    StatusOr<Ids> ids = t->Encode(text, false);
    ASSERT_FALSE(ids.ok());
    EXPECT_EQ(ids.status().code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(ids.status().message(), HasSubstr(offset));
  }
}

TEST(TokenizerErrorTest, DecodeOutOfRangeIdNamesIt) {
  std::unique_ptr<Tokenizer> t = MustLoad(ByteLevelJson({}));
  ASSERT_NE(t, nullptr);
  for (int32_t id : {270, 5000, -1}) {
    StatusOr<std::string> text = t->Decode({104, id}, false);
    ASSERT_FALSE(text.ok());
    EXPECT_EQ(text.status().code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(text.status().message(), HasSubstr(std::to_string(id)));
  }
}

TEST(TokenizerErrorTest, CatastrophicPatternFailsInsteadOfHanging) {
  // (a+)+$ backtracks exponentially on a run of a's that ends in "!": the
  // search stops at Oniguruma's limit and Encode says so.
  const std::string pre =
      R"({"type": "Sequence", "pretokenizers": [{"type": "Split", "pattern": {"Regex": "(a+)+$"}, "behavior": "Isolated", "invert": false}, {"type": "ByteLevel", "add_prefix_space": false, "use_regex": false}]})";
  std::unique_ptr<Tokenizer> t = MustLoad(ByteLevelJson(WithPre(pre)));
  ASSERT_NE(t, nullptr);
  StatusOr<Ids> ids = t->Encode(std::string(40, 'a') + "!", false);
  ASSERT_FALSE(ids.ok());
  EXPECT_EQ(ids.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(ids.status().message(), HasSubstr("backtracks"));
}

TEST(TokenizerErrorTest, LoadMissingFile) {
  StatusOr<std::unique_ptr<Tokenizer>> t =
      Tokenizer::Load("/nonexistent/tokenizer.json");
  EXPECT_EQ(t.status().code(), StatusCode::kNotFound);
}

// ---------------------------------------------------------------------------
// The synthetic tokenizer.

TEST(SyntheticTokenizerTest, ExactVocabWithSpecialsLast) {
  for (int64_t vocab : {512, 8192, 32000}) {
    std::unique_ptr<Tokenizer> t =
        MustLoad(BuildSyntheticTokenizerJson(vocab, 7));
    ASSERT_NE(t, nullptr);
    EXPECT_EQ(t->vocab_size(), vocab);
    EXPECT_EQ(t->TokenId("<|begin_of_text|>"), vocab - 2);
    EXPECT_EQ(t->TokenId("<|end_of_text|>"), vocab - 1);
    EXPECT_THAT(t->template_prefix(), ElementsAre(vocab - 2));
    // Ids 0..255 are the bytes.
    EXPECT_EQ(t->TokenId(ByteChar(' ')), ' ');
    EXPECT_EQ(t->TokenId(ByteChar(0xFF)), 0xFF);
    EXPECT_THAT(MustEncode(*t, "<|begin_of_text|>x", /*bos=*/true),
                ElementsAre(vocab - 2, vocab - 2, 'x'));
  }
}

TEST(SyntheticTokenizerTest, Deterministic) {
  EXPECT_EQ(BuildSyntheticTokenizerJson(8192, 3),
            BuildSyntheticTokenizerJson(8192, 3));
  EXPECT_NE(BuildSyntheticTokenizerJson(32000, 1),
            BuildSyntheticTokenizerJson(32000, 2));
  // Pinned, so a platform or compiler that changes one byte is caught.
  const std::string json = BuildSyntheticTokenizerJson(8192, 7);
  EXPECT_EQ(HexDigest(Sha256::Hash(json.data(), json.size())),
            "290b2d64a0e3e59c839928456cf0bf9acdd411c743aada31e56dabd98ab9ef11");
}

TEST(SyntheticTokenizerTest, RoundTripsAndCompressesEnglish) {
  for (int64_t vocab : {512, 32000}) {
    std::unique_ptr<Tokenizer> t =
        MustLoad(BuildSyntheticTokenizerJson(vocab, 1));
    ASSERT_NE(t, nullptr);
    for (const std::string& text : RoundTripTexts()) {
      EXPECT_EQ(MustDecode(*t, MustEncode(*t, text)), text);
    }
    const std::string english = "the transparency log";
    const Ids ids = MustEncode(*t, english);
    EXPECT_LT(ids.size(), english.size() / (vocab == 512 ? 1 : 3)) << vocab;
    // " the" is learned from the corpus as one token.
    EXPECT_EQ(MustEncode(*t, " the").size(), 1u);
  }
}

}  // namespace
}  // namespace layerproof::text
