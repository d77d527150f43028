#include "text/gguf_tokenizer.h"

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "kernels/model/internal/file_io.h"
#include "kernels/printable.h"
#include "text/internal/gguf_families.h"
#include "text/internal/unicode.h"

namespace layerproof::text {
namespace {

// Keys sorted (std::map): ordered_json finds keys by a linear scan, which
// is quadratic over a 200k-token vocabulary; the order means nothing here.
using Json = nlohmann::json;
using kernels::InvalidArgument;
using kernels::model::GgufFile;

using internal::kByte;
using internal::kControl;
using internal::kNormal;
using internal::kUnused;
using internal::kUserDefined;

kernels::Status Unimplemented(std::string m) {
  return kernels::Status(kernels::StatusCode::kUnimplemented, std::move(m));
}

std::string Quote(std::string_view s) {
  return Json(std::string(s))
      .dump(-1, ' ', false, Json::error_handler_t::replace);
}

// An optional token id key: in range and naming a token that exists.
StatusOr<std::optional<int32_t>> OptionalId(const GgufFile& g,
                                            const std::string& key,
                                            const std::vector<int64_t>& types) {
  if (!g.Has(key)) return std::optional<int32_t>();
  // llama.cpp writes -1 (as uint32 0xFFFFFFFF) for "none" in some files.
  const auto& v = g.metadata().at(key);
  if ((v.AsInt().has_value() && *v.AsInt() == -1) ||
      (v.AsUint().has_value() && *v.AsUint() == UINT32_MAX)) {
    return std::optional<int32_t>();
  }
  LP_ASSIGN_OR_RETURN(uint64_t id, g.GetUint(key));
  if (id >= types.size()) {
    return InvalidArgument(g.path() + ": " + key + ": got " +
                           std::to_string(id) + ", want a token id below " +
                           std::to_string(types.size()));
  }
  if (types[id] == kUnused) {
    return InvalidArgument(g.path() + ": " + key + ": token " +
                           std::to_string(id) + " is unused (type 5)");
  }
  return std::optional<int32_t>(static_cast<int32_t>(id));
}

}  // namespace

namespace {

StatusOr<GgufTokenizerFiles> TokenizerFilesUnescaped(const GgufFile& g) {
  const std::string& file = g.path();
  LP_ASSIGN_OR_RETURN(std::string model, g.GetString("tokenizer.ggml.model"));
  if (model != "gpt2") {
    return Unimplemented(file + ": tokenizer.ggml.model: got " + Quote(model) +
                         ", want \"gpt2\" (byte-level BPE); the SentencePiece "
                         "\"llama\" model and the others are not supported, "
                         "put the model's tokenizer.json beside the file");
  }
  if (!g.Has("tokenizer.ggml.pre")) {
    return InvalidArgument(file +
                           ": tokenizer.ggml.pre: missing; want one of " +
                           internal::SupportedPreNames());
  }
  LP_ASSIGN_OR_RETURN(std::string pre, g.GetString("tokenizer.ggml.pre"));
  const internal::PreFamily* family = internal::FindPreFamily(pre);
  if (family == nullptr) {
    return Unimplemented(file + ": tokenizer.ggml.pre: got " + Quote(pre) +
                         ", want one of " + internal::SupportedPreNames());
  }

  if (!g.Has("tokenizer.ggml.tokens")) {
    return InvalidArgument(file + ": tokenizer.ggml.tokens: missing");
  }
  LP_ASSIGN_OR_RETURN(std::vector<std::string> tokens,
                      g.GetStringArray("tokenizer.ggml.tokens"));
  if (tokens.empty()) {
    return InvalidArgument(file + ": tokenizer.ggml.tokens: is empty");
  }
  if (tokens.size() > static_cast<size_t>(INT32_MAX)) {
    return InvalidArgument(file + ": tokenizer.ggml.tokens: too many tokens");
  }
  std::vector<int64_t> types(tokens.size(), kNormal);
  if (g.Has("tokenizer.ggml.token_type")) {
    LP_ASSIGN_OR_RETURN(types, g.GetIntArray("tokenizer.ggml.token_type"));
    if (types.size() != tokens.size()) {
      return InvalidArgument(file + ": tokenizer.ggml.token_type: got " +
                             std::to_string(types.size()) +
                             " entries, want one per token (" +
                             std::to_string(tokens.size()) + ")");
    }
  }

  Json vocab = Json::object();
  Json added = Json::array();
  std::unordered_map<std::string_view, int32_t> ids;
  ids.reserve(tokens.size());
  for (size_t i = 0; i < tokens.size(); ++i) {
    const std::string where = "[" + std::to_string(i) + "]";
    const int64_t t = types[i];
    if (t < kNormal || t > kByte) {
      return InvalidArgument(file + ": tokenizer.ggml.token_type" + where +
                             ": got " + std::to_string(t) +
                             ", want 1 (normal) to 6 (byte)");
    }
    if (t == kByte) {
      return Unimplemented(file + ": tokenizer.ggml.token_type" + where +
                           ": got 6 (byte), which byte-level BPE does not use");
    }
    if (t == kUnused) continue;  // a gap, as in the Hugging Face file
    const std::string& s = tokens[i];
    if (s.empty()) {
      return InvalidArgument(file + ": tokenizer.ggml.tokens" + where +
                             ": is empty");
    }
    if (internal::FindInvalidUtf8(s) != std::string::npos) {
      return InvalidArgument(file + ": tokenizer.ggml.tokens" + where +
                             ": is not valid UTF-8");
    }
    if (!ids.emplace(s, static_cast<int32_t>(i)).second) {
      return InvalidArgument(file + ": tokenizer.ggml.tokens" + where + ": " +
                             Quote(s) + " is also token " +
                             std::to_string(ids[s]));
    }
    if (t == kNormal) {
      vocab[s] = static_cast<int32_t>(i);
    } else {
      // Control and unknown tokens are special; user-defined ones are not.
      // llama.cpp matches both in the raw text.
      added.push_back({{"id", static_cast<int32_t>(i)},
                       {"content", s},
                       {"single_word", false},
                       {"lstrip", false},
                       {"rstrip", false},
                       {"normalized", false},
                       {"special", t != kUserDefined}});
    }
  }

  if (!g.Has("tokenizer.ggml.merges")) {
    return InvalidArgument(file +
                           ": tokenizer.ggml.merges: missing (byte-level "
                           "BPE needs its merges)");
  }
  LP_ASSIGN_OR_RETURN(std::vector<std::string> merges_in,
                      g.GetStringArray("tokenizer.ggml.merges"));
  Json merges = Json::array();
  for (size_t i = 0; i < merges_in.size(); ++i) {
    const std::string where =
        file + ": tokenizer.ggml.merges[" + std::to_string(i) + "]";
    const std::string& m = merges_in[i];
    const size_t space = m.find(' ');
    if (space == std::string::npos || space == 0 || space + 1 == m.size() ||
        m.find(' ', space + 1) != std::string::npos) {
      return InvalidArgument(where + ": want \"left right\", got " + Quote(m));
    }
    const std::string_view left = std::string_view(m).substr(0, space);
    const std::string_view right = std::string_view(m).substr(space + 1);
    const std::string merged = std::string(left) + std::string(right);
    for (std::string_view part : {left, right, std::string_view(merged)}) {
      auto it = ids.find(part);
      if (it == ids.end() || types[it->second] != kNormal) {
        return InvalidArgument(where + ": " + Quote(part) +
                               " is not a normal token of "
                               "tokenizer.ggml.tokens");
      }
    }
    merges.push_back(m);
  }

  // Special tokens and the prompt template.
  Json config = Json::object();
  std::optional<int32_t> special[4];
  const char* const kKeys[4][2] = {
      {"tokenizer.ggml.bos_token_id", "bos_token"},
      {"tokenizer.ggml.eos_token_id", "eos_token"},
      {"tokenizer.ggml.unknown_token_id", "unk_token"},
      {"tokenizer.ggml.padding_token_id", "pad_token"}};
  for (int k = 0; k < 4; ++k) {
    LP_ASSIGN_OR_RETURN(special[k], OptionalId(g, kKeys[k][0], types));
    if (special[k].has_value()) config[kKeys[k][1]] = tokens[*special[k]];
  }
  bool add_bos = family->default_add_bos, add_eos = false;
  if (g.Has("tokenizer.ggml.add_bos_token")) {
    LP_ASSIGN_OR_RETURN(add_bos, g.GetBool("tokenizer.ggml.add_bos_token"));
  }
  if (g.Has("tokenizer.ggml.add_eos_token")) {
    LP_ASSIGN_OR_RETURN(add_eos, g.GetBool("tokenizer.ggml.add_eos_token"));
  }
  Json single = Json::array();
  Json table = Json::object();
  for (auto [add, idx, key] :
       {std::tuple{add_bos, 0, "tokenizer.ggml.bos_token_id"},
        std::tuple{false, -1, ""},
        std::tuple{add_eos, 1, "tokenizer.ggml.eos_token_id"}}) {
    if (idx < 0) {
      single.push_back({{"Sequence", {{"id", "A"}, {"type_id", 0}}}});
      continue;
    }
    if (!add) continue;
    if (!special[idx].has_value()) {
      return InvalidArgument(
          file + ": " + key + ": missing, but tokenizer.ggml." +
          (idx == 0 ? "add_bos_token" : "add_eos_token") + " adds it");
    }
    const std::string& text = tokens[*special[idx]];
    single.push_back({{"SpecialToken", {{"id", text}, {"type_id", 0}}}});
    table[text] = {{"id", text}, {"ids", {*special[idx]}}, {"tokens", {text}}};
  }

  Json model_json = {{"type", "BPE"},
                     {"dropout", nullptr},
                     {"unk_token", nullptr},
                     {"continuing_subword_prefix", nullptr},
                     {"end_of_word_suffix", nullptr},
                     {"fuse_unk", false},
                     {"byte_fallback", false},
                     {"ignore_merges", family->ignore_merges},
                     {"vocab", std::move(vocab)},
                     {"merges", std::move(merges)}};
  Json root = {{"version", "1.0"},
               {"truncation", nullptr},
               {"padding", nullptr},
               {"added_tokens", std::move(added)},
               {"normalizer", family->normalizer != nullptr
                                  ? Json::parse(family->normalizer)
                                  : Json(nullptr)},
               {"pre_tokenizer", Json::parse(family->pre_tokenizer)},
               {"post_processor",
                {{"type", "TemplateProcessing"},
                 {"single", std::move(single)},
                 {"special_tokens", std::move(table)}}},
               {"decoder", Json::parse(family->decoder)},
               {"model", std::move(model_json)}};

  GgufTokenizerFiles out;
  if (g.Has("tokenizer.chat_template")) {
    LP_ASSIGN_OR_RETURN(std::string t, g.GetString("tokenizer.chat_template"));
    if (internal::FindInvalidUtf8(t) != std::string::npos) {
      return InvalidArgument(file +
                             ": tokenizer.chat_template: is not valid "
                             "UTF-8");
    }
    out.chat_template = std::move(t);
  }
  out.tokenizer_json = root.dump();
  out.config_json = config.dump();
  return out;
}

}  // namespace

StatusOr<GgufTokenizerFiles> TokenizerFilesFromGguf(const GgufFile& g) {
  StatusOr<GgufTokenizerFiles> files = TokenizerFilesUnescaped(g);
  if (!files.ok()) return kernels::PrintableStatus(files.status());
  return files;
}

StatusOr<std::string> TokenizerJsonFromGguf(const GgufFile& gguf) {
  LP_ASSIGN_OR_RETURN(GgufTokenizerFiles f, TokenizerFilesFromGguf(gguf));
  return std::move(f.tokenizer_json);
}

StatusOr<std::unique_ptr<ModelText>> ModelTextFromGguf(const GgufFile& gguf) {
  LP_ASSIGN_OR_RETURN(GgufTokenizerFiles f, TokenizerFilesFromGguf(gguf));
  if (f.chat_template.has_value()) {
    // Parsed here first so that an error names the key.
    LP_RETURN_IF_ERROR(
        ChatTemplate::Parse(*f.chat_template,
                            gguf.path() + ": tokenizer.chat_template")
            .status());
  }
  return ModelText::FromJson(f.tokenizer_json, f.config_json,
                             std::move(f.chat_template),
                             gguf.path() + " (tokenizer.ggml.*)");
}

StatusOr<std::unique_ptr<ModelText>> LoadModelTextFor(
    const std::string& dir, const std::string& source) {
  if (kernels::model::internal::IsRegularFile(dir + "/tokenizer.json")) {
    return ModelText::Load(dir);
  }
  if (source == dir || !kernels::model::internal::IsRegularFile(source)) {
    return std::unique_ptr<ModelText>();
  }
  LP_ASSIGN_OR_RETURN(std::unique_ptr<GgufFile> gguf, GgufFile::Open(source));
  if (!gguf->Has("tokenizer.ggml.model")) return std::unique_ptr<ModelText>();
  return ModelTextFromGguf(*gguf);
}

}  // namespace layerproof::text
