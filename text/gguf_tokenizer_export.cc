#include "text/gguf_tokenizer_export.h"

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string_view>
#include <utility>
#include <vector>

#include "kernels/model/internal/file_io.h"
#include "kernels/printable.h"
#include "text/internal/bpe.h"
#include "text/internal/gguf_families.h"
#include "text/internal/tokenizer_spec.h"
#include "text/internal/unicode.h"
#include "text/model_text.h"

namespace layerproof::text {
namespace {

using Json = nlohmann::json;
using kernels::InvalidArgument;
using kernels::Status;
using kernels::StatusCode;
using kernels::StatusOr;
using kernels::model::GgufTokenizerKeys;

constexpr uint64_t kMaxTokenizerJsonBytes = 256ull << 20;

Status Unimplemented(const std::string& file, const std::string& path,
                     const std::string& why) {
  return Status(StatusCode::kUnimplemented,
                file + ": " + path + ": " + why +
                    "; llama.cpp could not reproduce its ids, so the GGUF "
                    "gets no tokenizer.ggml.* keys");
}

// The JSON with every "trim_offsets" member removed: ByteLevel's
// trim_offsets moves offsets, never ids.
Json WithoutTrimOffsets(Json j) {
  if (j.is_object()) {
    j.erase("trim_offsets");
    for (auto& [k, v] : j.items()) v = WithoutTrimOffsets(v);
  } else if (j.is_array()) {
    for (Json& v : j) v = WithoutTrimOffsets(v);
  }
  return j;
}

// An empty normalizer Sequence is no normalizer, and a Sequence of one is
// that one (DeepSeek-V3's file writes {"type": "Sequence", "normalizers":
// []}).
Json CanonicalNormalizer(Json n) {
  while (n.is_object() && n.value("type", "") == "Sequence" &&
         n.contains("normalizers") && n["normalizers"].is_array() &&
         n["normalizers"].size() <= 1) {
    n = n["normalizers"].empty() ? Json(nullptr) : Json(n["normalizers"][0]);
  }
  return n;
}

Json FamilyJson(const char* text) {
  return text == nullptr ? Json(nullptr) : Json::parse(text);
}

const internal::PreFamily* MatchFamily(const Json& tok) {
  const Json normalizer =
      CanonicalNormalizer(tok.value("normalizer", Json(nullptr)));
  const Json pre = WithoutTrimOffsets(tok.value("pre_tokenizer", Json()));
  const Json decoder = tok.value("decoder", Json());
  for (auto* f = internal::PreFamiliesBegin(); f != internal::PreFamiliesEnd();
       ++f) {
    if (normalizer == FamilyJson(f->normalizer) &&
        pre == WithoutTrimOffsets(FamilyJson(f->pre_tokenizer)) &&
        decoder.is_object() &&
        decoder.value("type", "") == FamilyJson(f->decoder).value("type", "")) {
      return f;
    }
  }
  return nullptr;
}

// A merge as "left right" (tokenizer.json holds a string or a pair).
StatusOr<std::string> MergeText(const Json& m, const std::string& file,
                                size_t i) {
  const std::string where = "model.merges[" + std::to_string(i) + "]";
  const auto sides = internal::MergeSides(m);
  if (!sides.has_value()) {  // ModelText::Load refused it already
    return InvalidArgument(file + ": " + where + ": want \"left right\"");
  }
  if (sides->first.find(' ') != std::string::npos ||
      sides->second.find(' ') != std::string::npos) {
    return Unimplemented(file, where,
                         "a side holds a space, which tokenizer.ggml.merges "
                         "cannot separate");
  }
  return sides->first + " " + sides->second;
}

// Whether ignore_merges can change an id: it only changes words that are
// whole vocabulary tokens, so it cannot when merging each normal token's
// own characters gives back that token.
Status CheckIgnoreMergesIrrelevant(const ModelText& text,
                                   const std::vector<std::string>& merges,
                                   const std::vector<int32_t>& types,
                                   const std::string& file, bool file_flag,
                                   const internal::PreFamily& family) {
  const Tokenizer& tok = text.tokenizer();
  internal::BpeMerges table;
  for (const std::string& m : merges) {
    const size_t space = m.find(' ');
    const std::string left = m.substr(0, space), right = m.substr(space + 1);
    const auto l = tok.TokenId(left), r = tok.TokenId(right),
               both = tok.TokenId(left + right);
    if (l && r && both) table.Add(*l, *r, *both);
  }
  std::vector<int32_t> symbols;
  for (size_t id = 0; id < types.size(); ++id) {
    if (types[id] != internal::kNormal) continue;
    const std::string s = *tok.TokenText(int32_t(id));
    symbols.clear();
    for (size_t at = 0; at < s.size();) {
      size_t len = 1;
      internal::DecodeUtf8(s, at, &len);
      const auto sym = tok.TokenId(s.substr(at, len));
      if (!sym.has_value()) {
        symbols.clear();  // a character with no token: merges cannot make s
        break;
      }
      symbols.push_back(*sym);
      at += len;
    }
    if (!symbols.empty()) table.Apply(&symbols);
    if (symbols.size() != 1 || symbols[0] != int32_t(id)) {
      return Unimplemented(
          file, "model.ignore_merges",
          std::string(file_flag ? "true" : "false") + ", but llama.cpp's \"" +
              family.names[0] + "\" has it " +
              (family.ignore_merges ? "true" : "false") + ", and token " +
              std::to_string(id) +
              " does not merge back to itself, so the two would differ");
    }
  }
  return kernels::OkStatus();
}

StatusOr<GgufTokenizerKeys> KeysFor(const std::string& dir,
                                    const std::string& file) {
  namespace io = kernels::model::internal;
  if (!io::IsRegularFile(file)) {
    return Status(StatusCode::kNotFound, file + ": no such file");
  }
  LP_ASSIGN_OR_RETURN(std::unique_ptr<ModelText> text, ModelText::Load(dir));
  LP_ASSIGN_OR_RETURN(std::string raw,
                      io::ReadSmallFile(file, kMaxTokenizerJsonBytes));
  // ModelText::Load parsed the same bytes, so this cannot throw.
  const Json tok = Json::parse(raw);
  const Json& model = tok.at("model");
  if (model.value("type", "") != "BPE") {
    return Unimplemented(file, "model.type",
                         "want \"BPE\" (byte-level), got " +
                             model.value("type", Json("")).dump());
  }
  for (const char* key :
       {"byte_fallback", "continuing_subword_prefix", "end_of_word_suffix"}) {
    const Json v = model.value(key, Json(nullptr));
    if (!(v.is_null() || v == false || v == "")) {
      return Unimplemented(file, std::string("model.") + key,
                           "set, which byte-level BPE in GGUF cannot say");
    }
  }
  const internal::PreFamily* family = MatchFamily(tok);
  if (family == nullptr) {
    return Unimplemented(file, "normalizer, pre_tokenizer and decoder",
                         "not exactly those of a family llama.cpp names (" +
                             internal::SupportedPreNames() + ")");
  }

  GgufTokenizerKeys keys;
  keys.model = "gpt2";
  keys.pre = family->names[0];
  const Tokenizer& t = text->tokenizer();
  std::vector<bool> added(size_t(t.vocab_size()), false);
  const Json& added_tokens = tok.value("added_tokens", Json::array());
  for (size_t i = 0; i < added_tokens.size(); ++i) {
    const Json& a = added_tokens[i];
    const std::string where = "added_tokens[" + std::to_string(i) + "]";
    for (const char* flag : {"lstrip", "rstrip", "single_word"}) {
      if (a.value(flag, false)) {
        return Unimplemented(file, where + "." + flag,
                             "true; llama.cpp matches added tokens as they "
                             "are");
      }
    }
    if (a.value("normalized", false) &&
        !CanonicalNormalizer(tok.value("normalizer", Json(nullptr)))
             .is_null()) {
      return Unimplemented(file, where + ".normalized",
                           "true with a normalizer; llama.cpp matches added "
                           "tokens in the raw text");
    }
    const size_t id = a.at("id").get<size_t>();
    if (id >= added.size()) {
      return InvalidArgument(file + ": " + where + ".id: out of range");
    }
    added[id] = true;
  }
  for (int32_t id = 0; id < t.vocab_size(); ++id) {
    const std::optional<std::string> s = t.TokenText(id);
    if (!s.has_value()) {
      keys.tokens.push_back("[PAD" + std::to_string(id) + "]");
      keys.token_types.push_back(internal::kUnused);
    } else {
      keys.tokens.push_back(*s);
      keys.token_types.push_back(!added[size_t(id)] ? internal::kNormal
                                 : t.IsSpecial(id)  ? internal::kControl
                                                    : internal::kUserDefined);
    }
  }
  const Json& merges = model.value("merges", Json::array());
  for (size_t i = 0; i < merges.size(); ++i) {
    LP_ASSIGN_OR_RETURN(std::string m, MergeText(merges[i], file, i));
    keys.merges.push_back(std::move(m));
  }
  const bool file_ignore_merges = model.value("ignore_merges", false);
  if (file_ignore_merges != family->ignore_merges) {
    LP_RETURN_IF_ERROR(
        CheckIgnoreMergesIrrelevant(*text, keys.merges, keys.token_types, file,
                                    file_ignore_merges, *family));
  }

  const std::vector<int32_t>& prefix = text->prompt_prefix();
  const std::vector<int32_t>& suffix = text->prompt_suffix();
  if (prefix.size() > 1 || suffix.size() > 1) {
    return Unimplemented(file, "post_processor",
                         "prompts get more than one token before or after "
                         "the text; GGUF adds at most a BOS and an EOS");
  }
  keys.add_bos = !prefix.empty();
  keys.add_eos = !suffix.empty();
  if (keys.add_bos) keys.bos_id = prefix[0];
  if (keys.add_eos) keys.eos_id = suffix[0];
  keys.chat_template = text->chat_template_source();
  return keys;
}

}  // namespace

StatusOr<GgufTokenizerKeys> GgufTokenizerKeysFor(const std::string& dir) {
  const std::string file =
      kernels::model::internal::JoinPath(dir, "tokenizer.json");
  // ModelText::Load has checked what the encoder needs; a field only this
  // writer reads (a flag of another JSON type, say) throws, and is named.
  try {
    return KeysFor(dir, file);
  } catch (const Json::exception& e) {
    return InvalidArgument(file + ": " + kernels::Printable(e.what()));
  }
}

}  // namespace layerproof::text
