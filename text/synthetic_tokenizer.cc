// BuildSyntheticTokenizerJson(): a deterministic byte-level BPE
// tokenizer.json.
//
// Ids 0..255 are the bytes (id b is byte b's GPT-2 character). Phase one
// trains BPE on internal/synthetic_corpus.cc, pre-tokenized with the
// Llama-3 pattern the file itself declares: each step merges the most
// frequent adjacent pair, ties going to the smallest pair compared as
// (left bytes, right bytes), until the corpus has no pairs left or the
// vocabulary is full. Phase two adds seeded merges: Philox4x32 keyed by the
// seed picks two existing tokens (the right one replaced by a byte when the
// concatenation would pass kMaxSyntheticBytes), skipping concatenations
// that already exist. The last two ids are <|begin_of_text|> and
// <|end_of_text|>. Integer arithmetic and ordered output only, so the JSON
// is byte-identical on every platform.
#include "text/synthetic_tokenizer.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <map>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "kernels/philox.h"
#include "text/internal/pipeline.h"
#include "text/internal/regex.h"
#include "text/internal/synthetic_corpus.h"
#include "text/internal/unicode.h"

namespace layerproof::text {
namespace {

using kernels::Philox4x32;
using kernels::PhiloxCounter;
using kernels::PhiloxKey;

constexpr int64_t kMinVocab = 258;  // The bytes and the two specials.
constexpr size_t kMaxSyntheticBytes = 16;
constexpr char kBos[] = "<|begin_of_text|>";
constexpr char kEos[] = "<|end_of_text|>";
// Llama-3's split pattern.
constexpr std::string_view kPattern =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

// Tokens as raw bytes, with the merges that made them.
struct Vocabulary {
  std::vector<std::string> tokens;
  std::unordered_map<std::string, int32_t> index;  // Look-ups only.
  std::vector<std::pair<int32_t, int32_t>> merges;

  // Records the merge of (a, b); returns the id of the merged token.
  int32_t Merge(int32_t a, int32_t b) {
    merges.emplace_back(a, b);
    std::string merged = tokens[a] + tokens[b];
    auto [it, inserted] =
        index.emplace(merged, static_cast<int32_t>(tokens.size()));
    if (inserted) tokens.push_back(std::move(merged));
    return it->second;
  }
};

uint64_t PairKey(int32_t a, int32_t b) {
  return (static_cast<uint64_t>(static_cast<uint32_t>(a)) << 32) |
         static_cast<uint32_t>(b);
}

// Phase one: BPE training on the corpus until it runs out of pairs or the
// vocabulary holds `target` tokens.
void TrainOnCorpus(size_t target, Vocabulary* vocab) {
  // The pattern is a constant that compiles and the corpus is ASCII, so
  // neither step can fail.
  const std::string_view corpus = internal::SyntheticCorpus();
  std::vector<internal::Match> matches;
  (void)internal::Regex::Compile(kPattern)->FindAll(corpus, &matches);
  const std::vector<std::string_view> pieces = internal::SplitPieces(
      corpus, matches, false, internal::SplitBehavior::kIsolated);
  std::map<std::string_view, int64_t> counts;  // Ordered: deterministic.
  for (std::string_view p : pieces) ++counts[p];

  struct Word {
    std::vector<int32_t> symbols;
    int64_t count;
  };
  std::vector<Word> words;
  for (const auto& [text, count] : counts) {
    if (text.size() < 2) continue;
    Word w{{}, count};
    for (char c : text) w.symbols.push_back(static_cast<uint8_t>(c));
    words.push_back(std::move(w));
  }

  std::unordered_map<uint64_t, int64_t> pair_counts;
  while (vocab->tokens.size() < target) {
    pair_counts.clear();
    for (const Word& w : words) {
      for (size_t i = 0; i + 1 < w.symbols.size(); ++i) {
        pair_counts[PairKey(w.symbols[i], w.symbols[i + 1])] += w.count;
      }
    }
    if (pair_counts.empty()) return;
    // The best pair under a total order, so the hash map's iteration order
    // cannot leak into the result.
    uint64_t best = 0;
    int64_t best_count = -1;
    const auto& t = vocab->tokens;
    for (const auto& [key, count] : pair_counts) {
      const int32_t a = static_cast<int32_t>(key >> 32);
      const int32_t b = static_cast<int32_t>(key & 0xFFFFFFFFu);
      const int32_t ba = static_cast<int32_t>(best >> 32);
      const int32_t bb = static_cast<int32_t>(best & 0xFFFFFFFFu);
      if (count > best_count ||
          (count == best_count &&
           std::tie(t[a], t[b]) < std::tie(t[ba], t[bb]))) {
        best = key;
        best_count = count;
      }
    }
    const int32_t a = static_cast<int32_t>(best >> 32);
    const int32_t b = static_cast<int32_t>(best & 0xFFFFFFFFu);
    const int32_t merged = vocab->Merge(a, b);
    for (Word& w : words) {
      std::vector<int32_t>& s = w.symbols;
      size_t out = 0;
      for (size_t i = 0; i < s.size(); ++i) {
        if (i + 1 < s.size() && s[i] == a && s[i + 1] == b) {
          s[out++] = merged;
          ++i;
        } else {
          s[out++] = s[i];
        }
      }
      s.resize(out);
    }
    words.erase(
        std::remove_if(words.begin(), words.end(),
                       [](const Word& w) { return w.symbols.size() < 2; }),
        words.end());
  }
}

// Phase two: seeded merges of existing tokens until `target` tokens exist.
void AddSeededMerges(size_t target, uint64_t seed, Vocabulary* vocab) {
  const PhiloxKey key = {static_cast<uint32_t>(seed),
                         static_cast<uint32_t>(seed >> 32)};
  // (w * n) >> 32: a deterministic map of a 32-bit word onto [0, n).
  auto pick = [](uint32_t w, size_t n) {
    return static_cast<int32_t>((static_cast<uint64_t>(w) * n) >> 32);
  };
  uint64_t counter = 0;
  while (vocab->tokens.size() < target) {
    const PhiloxCounter block = Philox4x32(
        {static_cast<uint32_t>(counter), static_cast<uint32_t>(counter >> 32),
         0x736E7974u /* "synt" */, 0},
        key);
    ++counter;
    const size_t n = vocab->tokens.size();
    const int32_t a = pick(block[0], n);
    int32_t b = pick(block[1], n);
    const size_t a_len = vocab->tokens[a].size();
    if (a_len + vocab->tokens[b].size() > kMaxSyntheticBytes) {
      b = static_cast<int32_t>(block[2] & 0xFF);
      if (a_len + 1 > kMaxSyntheticBytes) continue;
    }
    if (vocab->index.count(vocab->tokens[a] + vocab->tokens[b]) != 0) continue;
    vocab->Merge(a, b);
  }
}

// JSON string literal of UTF-8 text.
void AppendJsonString(std::string_view s, std::string* out) {
  static const char kHex[] = "0123456789abcdef";
  out->push_back('"');
  for (char c : s) {
    const uint8_t u = static_cast<uint8_t>(c);
    if (c == '"' || c == '\\') {
      out->push_back('\\');
      out->push_back(c);
    } else if (u < 0x20) {
      out->append("\\u00");
      out->push_back(kHex[u >> 4]);
      out->push_back(kHex[u & 15]);
    } else {
      out->push_back(c);
    }
  }
  out->push_back('"');
}

// The GPT-2 unicode form of raw bytes.
std::string ByteLevelForm(std::string_view bytes) {
  std::string out;
  for (char c : bytes) {
    internal::AppendUtf8(internal::ByteToUnicode()[static_cast<uint8_t>(c)],
                         &out);
  }
  return out;
}

std::string AddedTokenJson(int64_t id, const char* content) {
  std::string out = "    {\"id\": " + std::to_string(id) + ", \"content\": ";
  AppendJsonString(content, &out);
  out +=
      ", \"single_word\": false, \"lstrip\": false, \"rstrip\": false, "
      "\"normalized\": false, \"special\": true}";
  return out;
}

std::string ToJson(const Vocabulary& vocab, int64_t bos_id) {
  const std::string bos = std::to_string(bos_id);
  std::string out;
  out.reserve(vocab.tokens.size() * 48);
  out += "{\n  \"version\": \"1.0\",\n  \"truncation\": null,\n";
  out += "  \"padding\": null,\n  \"added_tokens\": [\n";
  out += AddedTokenJson(bos_id, kBos) + ",\n";
  out += AddedTokenJson(bos_id + 1, kEos) + "\n  ],\n";
  out += "  \"normalizer\": null,\n";
  out += "  \"pre_tokenizer\": {\"type\": \"Sequence\", \"pretokenizers\": [";
  out += "{\"type\": \"Split\", \"pattern\": {\"Regex\": ";
  AppendJsonString(kPattern, &out);
  out +=
      "}, \"behavior\": \"Isolated\", \"invert\": false}, {\"type\": "
      "\"ByteLevel\", \"add_prefix_space\": false, \"trim_offsets\": true, "
      "\"use_regex\": false}]},\n";
  const std::string special =
      "{\"SpecialToken\": {\"id\": \"" + std::string(kBos) + "\", ";
  out += "  \"post_processor\": {\"type\": \"TemplateProcessing\", ";
  out += "\"single\": [" + special +
         "\"type_id\": 0}}, {\"Sequence\": {\"id\": \"A\", \"type_id\": 0}}], ";
  out += "\"pair\": [" + special +
         "\"type_id\": 0}}, {\"Sequence\": {\"id\": \"A\", \"type_id\": 0}}, " +
         special +
         "\"type_id\": 1}}, {\"Sequence\": {\"id\": \"B\", \"type_id\": 1}}], ";
  out += "\"special_tokens\": {\"" + std::string(kBos) + "\": {\"id\": \"" +
         kBos + "\", \"ids\": [" + bos + "], \"tokens\": [\"" + kBos +
         "\"]}}},\n";
  out +=
      "  \"decoder\": {\"type\": \"ByteLevel\", \"add_prefix_space\": true, "
      "\"trim_offsets\": true, \"use_regex\": true},\n";
  out +=
      "  \"model\": {\n    \"type\": \"BPE\",\n    \"dropout\": null,\n"
      "    \"unk_token\": null,\n    \"continuing_subword_prefix\": null,\n"
      "    \"end_of_word_suffix\": null,\n    \"fuse_unk\": false,\n"
      "    \"byte_fallback\": false,\n    \"ignore_merges\": false,\n"
      "    \"vocab\": {";
  std::vector<std::string> forms;
  forms.reserve(vocab.tokens.size());
  for (size_t id = 0; id < vocab.tokens.size(); ++id) {
    forms.push_back(ByteLevelForm(vocab.tokens[id]));
    out += id == 0 ? "\n      " : ",\n      ";
    AppendJsonString(forms.back(), &out);
    out += ": " + std::to_string(id);
  }
  out += "\n    },\n    \"merges\": [";
  for (size_t i = 0; i < vocab.merges.size(); ++i) {
    out += i == 0 ? "\n      " : ",\n      ";
    // Byte-level forms never contain U+0020, so "left right" is unambiguous.
    AppendJsonString(
        forms[vocab.merges[i].first] + " " + forms[vocab.merges[i].second],
        &out);
  }
  out += "\n    ]\n  }\n}\n";
  return out;
}

}  // namespace

std::string BuildSyntheticTokenizerJson(int64_t vocab_size, uint64_t seed) {
  vocab_size = std::max(vocab_size, kMinVocab);
  const size_t model_tokens = static_cast<size_t>(vocab_size - 2);
  Vocabulary vocab;
  for (int b = 0; b < 256; ++b) {
    vocab.tokens.emplace_back(1, static_cast<char>(b));
    vocab.index.emplace(vocab.tokens.back(), b);
  }
  TrainOnCorpus(model_tokens, &vocab);
  AddSeededMerges(model_tokens, seed, &vocab);
  return ToJson(vocab, vocab_size - 2);
}

// BOS, then "role: content" lines, then "assistant:" for the reply.
constexpr char kSyntheticChatTemplate[] =
    "<|begin_of_text|>{% for message in messages %}{{ message['role'] }}: "
    "{{ message['content'] }}\n{% endfor %}{% if add_generation_prompt %}"
    "assistant:{% endif %}";

Status SynthesizeTextModel(const kernels::model::ModelConfig& config,
                           const kernels::model::SynthOptions& options,
                           const std::string& out_dir) {
  LP_RETURN_IF_ERROR(kernels::model::SynthesizeModel(config, options, out_dir));
  const std::string path = out_dir + "/tokenizer.json";
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << BuildSyntheticTokenizerJson(config.vocab_size, options.seed);
  out.close();
  if (!out) return kernels::Internal("synth: cannot write " + path);
  // A plain chat template, so that chats (the OpenAI API's
  // /v1/chat/completions, `generate --chat`) work on synthetic models too.
  const std::string jinja = out_dir + "/chat_template.jinja";
  std::ofstream chat(jinja, std::ios::binary | std::ios::trunc);
  chat << kSyntheticChatTemplate;
  chat.close();
  if (!chat) return kernels::Internal("synth: cannot write " + jinja);
  return kernels::OkStatus();
}

}  // namespace layerproof::text
