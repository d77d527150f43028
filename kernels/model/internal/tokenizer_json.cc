// ParseTokenizerSpec(): tokenizer.json to a TokenizerSpec. Every access to
// the document checks the JSON type first, so no nlohmann exception is
// thrown after parsing; the parse itself is wrapped.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kernels/model/internal/pretokenize.h"
#include "kernels/model/internal/tokenizer_spec.h"
#include "kernels/status.h"

namespace layerproof::kernels::model::internal {
namespace {

using Json = nlohmann::json;

constexpr std::string_view kMetaspace = "\xE2\x96\x81";  // U+2581 "▁".

// `s` in double quotes, cut to at most ~60 bytes at a character boundary.
std::string Quote(std::string_view s) {
  constexpr size_t kMax = 60;
  std::string out = "\"";
  if (s.size() <= kMax) {
    out.append(s);
  } else {
    size_t cut = kMax;
    while (cut > 0 && (static_cast<uint8_t>(s[cut]) & 0xC0) == 0x80) --cut;
    out.append(s.substr(0, cut));
    out.append("...");
  }
  return out + "\"";
}

// Sequences nest at most this deep (real files nest one level).
constexpr int kMaxNesting = 8;

// How deep `path` lies inside Sequence steps: its "[i]" parts.
int Nesting(const std::string& path) {
  return static_cast<int>(std::count(path.begin(), path.end(), '['));
}

std::string Index(const std::string& path, size_t i) {
  return path + "[" + std::to_string(i) + "]";
}

class Reader {
 public:
  explicit Reader(std::string_view file) : file_(file) {}

  Status Invalid(const std::string& field, const std::string& what) const {
    return InvalidArgument(file_ + ": " + field + ": " + what);
  }
  Status Unsupported(const std::string& field, const std::string& what) const {
    return Status(StatusCode::kUnimplemented,
                  file_ + ": " + field + ": " + what);
  }

  // The member `key` of `obj`, or nullptr when absent or null.
  static const Json* Member(const Json& obj, const char* key) {
    if (!obj.is_object()) return nullptr;
    auto it = obj.find(key);
    if (it == obj.end() || it->is_null()) return nullptr;
    return &*it;
  }

  Status Bool(const Json& obj, const char* key, const std::string& path,
              bool fallback, bool* out) const {
    const Json* v = Member(obj, key);
    if (v == nullptr) {
      *out = fallback;
      return OkStatus();
    }
    if (!v->is_boolean()) return Invalid(path + "." + key, "want a boolean");
    *out = v->get<bool>();
    return OkStatus();
  }

  Status String(const Json& obj, const char* key, const std::string& path,
                std::string* out) const {
    const Json* v = Member(obj, key);
    if (v == nullptr || !v->is_string()) {
      return Invalid(path + "." + key, "want a string");
    }
    *out = v->get<std::string>();
    return OkStatus();
  }

  Status Int(const Json& obj, const char* key, const std::string& path,
             int64_t* out) const {
    const Json* v = Member(obj, key);
    if (v == nullptr || !v->is_number_integer()) {
      return Invalid(path + "." + key, "want an integer");
    }
    *out = v->is_number_unsigned() ? static_cast<int64_t>(std::min<uint64_t>(
                                         v->get<uint64_t>(), uint64_t{1} << 62))
                                   : v->get<int64_t>();
    return OkStatus();
  }

  Status TokenIdValue(const Json& v, const std::string& path,
                      int32_t* out) const {
    if (!v.is_number_integer()) return Invalid(path, "want an integer id");
    const int64_t id = v.is_number_unsigned()
                           ? static_cast<int64_t>(std::min<uint64_t>(
                                 v.get<uint64_t>(), uint64_t{1} << 62))
                           : v.get<int64_t>();
    if (id < 0 || id >= kMaxTokenId) {
      return Invalid(path, "id " + std::to_string(id) + " out of range [0, " +
                               std::to_string(kMaxTokenId) + ")");
    }
    *out = static_cast<int32_t>(id);
    return OkStatus();
  }

  // The "type" member, or "" when absent.
  static std::string Type(const Json& obj) {
    const Json* t = Member(obj, "type");
    return t != nullptr && t->is_string() ? t->get<std::string>() : "";
  }

  Status Object(const Json& v, const std::string& path) const {
    return v.is_object() ? OkStatus() : Invalid(path, "want an object");
  }

  Status Array(const Json* v, const std::string& path) const {
    return v != nullptr && v->is_array() ? OkStatus()
                                         : Invalid(path, "want an array");
  }

  Status Prepend(const Json& obj, const std::string& path,
                 PrependScheme* out) const {
    if (const Json* s = Member(obj, "prepend_scheme")) {
      const std::string v = s->is_string() ? s->get<std::string>() : "";
      if (v == "always") {
        *out = PrependScheme::kAlways;
      } else if (v == "first") {
        *out = PrependScheme::kFirst;
      } else if (v == "never") {
        *out = PrependScheme::kNever;
      } else {
        return Invalid(path + ".prepend_scheme",
                       "want \"always\", \"first\" or \"never\"");
      }
      return OkStatus();
    }
    bool add = true;
    LP_RETURN_IF_ERROR(Bool(obj, "add_prefix_space", path, true, &add));
    *out = add ? PrependScheme::kAlways : PrependScheme::kNever;
    return OkStatus();
  }

  Status Replacement(const Json& obj, const std::string& path,
                     std::string* out) const {
    if (Member(obj, "replacement") == nullptr) {
      *out = std::string(kMetaspace);
      return OkStatus();
    }
    LP_RETURN_IF_ERROR(String(obj, "replacement", path, out));
    if (out->empty()) return Invalid(path + ".replacement", "is empty");
    return OkStatus();
  }

  // A Replace step's {"String": s} pattern.
  Status LiteralPattern(const Json& obj, const std::string& path,
                        std::string* out) const {
    const Json* p = Member(obj, "pattern");
    if (p == nullptr || !p->is_object()) {
      return Invalid(path + ".pattern", "want {\"String\": ...}");
    }
    if (Member(*p, "Regex") != nullptr) {
      return Unsupported(path + ".pattern.Regex",
                         "regex patterns are not supported here");
    }
    LP_RETURN_IF_ERROR(String(*p, "String", path + ".pattern", out));
    if (out->empty()) return Invalid(path + ".pattern.String", "is empty");
    return OkStatus();
  }

  Status Normalizer(const Json& j, const std::string& path,
                    std::vector<NormalizerStep>* out) const;
  Status PreTokenizer(const Json& j, const std::string& path,
                      std::vector<PreTokenizerStep>* out) const;
  Status Decoder(const Json& j, const std::string& path,
                 std::vector<DecoderStep>* out) const;
  Status Model(const Json& model, TokenizerSpec* spec) const;
  Status AddedTokens(const Json& root, TokenizerSpec* spec) const;

 private:
  std::string file_;
};

Status Reader::Normalizer(const Json& j, const std::string& path,
                          std::vector<NormalizerStep>* out) const {
  LP_RETURN_IF_ERROR(Object(j, path));
  const std::string type = Type(j);
  if (type == "Sequence") {
    const Json* list = Member(j, "normalizers");
    LP_RETURN_IF_ERROR(Array(list, path + ".normalizers"));
    if (Nesting(path) >= kMaxNesting) {
      return Invalid(path, "Sequence nested too deeply");
    }
    for (size_t i = 0; i < list->size(); ++i) {
      LP_RETURN_IF_ERROR(
          Normalizer((*list)[i], Index(path + ".normalizers", i), out));
    }
    return OkStatus();
  }
  NormalizerStep step;
  if (type == "Prepend") {
    step.type = NormalizerStep::Type::kPrepend;
    LP_RETURN_IF_ERROR(String(j, "prepend", path, &step.content));
  } else if (type == "Replace") {
    step.type = NormalizerStep::Type::kReplace;
    LP_RETURN_IF_ERROR(LiteralPattern(j, path, &step.pattern));
    LP_RETURN_IF_ERROR(String(j, "content", path, &step.content));
  } else if (type == "NFC") {
    step.type = NormalizerStep::Type::kNfc;
  } else {
    return Unsupported(
        path + ".type",
        "got " + Quote(type) + "; supported: Sequence, Prepend, Replace, NFC");
  }
  out->push_back(std::move(step));
  return OkStatus();
}

Status Reader::PreTokenizer(const Json& j, const std::string& path,
                            std::vector<PreTokenizerStep>* out) const {
  LP_RETURN_IF_ERROR(Object(j, path));
  const std::string type = Type(j);
  if (type == "Sequence") {
    const Json* list = Member(j, "pretokenizers");
    LP_RETURN_IF_ERROR(Array(list, path + ".pretokenizers"));
    if (Nesting(path) >= kMaxNesting) {
      return Invalid(path, "Sequence nested too deeply");
    }
    for (size_t i = 0; i < list->size(); ++i) {
      LP_RETURN_IF_ERROR(
          PreTokenizer((*list)[i], Index(path + ".pretokenizers", i), out));
    }
    return OkStatus();
  }
  PreTokenizerStep step;
  if (type == "ByteLevel") {
    step.type = PreTokenizerStep::Type::kByteLevel;
    LP_RETURN_IF_ERROR(
        Bool(j, "add_prefix_space", path, true, &step.add_prefix_space));
    LP_RETURN_IF_ERROR(Bool(j, "use_regex", path, true, &step.use_regex));
  } else if (type == "Split") {
    step.type = PreTokenizerStep::Type::kSplit;
    const Json* p = Member(j, "pattern");
    if (p == nullptr || !p->is_object()) {
      return Invalid(path + ".pattern", "want {\"Regex\": ...}");
    }
    if (Member(*p, "Regex") == nullptr) {
      return Unsupported(path + ".pattern",
                         "only Regex split patterns are supported");
    }
    std::string regex;
    LP_RETURN_IF_ERROR(String(*p, "Regex", path + ".pattern", &regex));
    std::optional<SplitPattern> known = RecognizeSplitPattern(regex);
    if (!known.has_value()) {
      return Unsupported(path + ".pattern.Regex",
                         "unrecognised pattern " + Quote(regex) +
                             "; supported: the GPT-2, Llama-3 and Qwen2 "
                             "patterns");
    }
    step.pattern = *known;
    std::string behavior;
    LP_RETURN_IF_ERROR(String(j, "behavior", path, &behavior));
    if (behavior != "Isolated") {
      return Unsupported(path + ".behavior",
                         "got " + Quote(behavior) + ", want \"Isolated\"");
    }
    bool invert = false;
    LP_RETURN_IF_ERROR(Bool(j, "invert", path, false, &invert));
    if (invert) return Unsupported(path + ".invert", "want false");
  } else if (type == "Metaspace") {
    step.type = PreTokenizerStep::Type::kMetaspace;
    LP_RETURN_IF_ERROR(Replacement(j, path, &step.replacement));
    LP_RETURN_IF_ERROR(Prepend(j, path, &step.prepend_scheme));
    LP_RETURN_IF_ERROR(Bool(j, "split", path, true, &step.split));
  } else {
    return Unsupported(path + ".type",
                       "got " + Quote(type) +
                           "; supported: Sequence, ByteLevel, Split, "
                           "Metaspace");
  }
  out->push_back(std::move(step));
  return OkStatus();
}

Status Reader::Decoder(const Json& j, const std::string& path,
                       std::vector<DecoderStep>* out) const {
  LP_RETURN_IF_ERROR(Object(j, path));
  const std::string type = Type(j);
  if (type == "Sequence") {
    const Json* list = Member(j, "decoders");
    LP_RETURN_IF_ERROR(Array(list, path + ".decoders"));
    if (Nesting(path) >= kMaxNesting) {
      return Invalid(path, "Sequence nested too deeply");
    }
    for (size_t i = 0; i < list->size(); ++i) {
      LP_RETURN_IF_ERROR(
          Decoder((*list)[i], Index(path + ".decoders", i), out));
    }
    return OkStatus();
  }
  DecoderStep step;
  if (type == "ByteLevel") {
    step.type = DecoderStep::Type::kByteLevel;
  } else if (type == "Replace") {
    step.type = DecoderStep::Type::kReplace;
    LP_RETURN_IF_ERROR(LiteralPattern(j, path, &step.pattern));
    LP_RETURN_IF_ERROR(String(j, "content", path, &step.content));
  } else if (type == "ByteFallback") {
    step.type = DecoderStep::Type::kByteFallback;
  } else if (type == "Fuse") {
    step.type = DecoderStep::Type::kFuse;
  } else if (type == "Strip") {
    step.type = DecoderStep::Type::kStrip;
    LP_RETURN_IF_ERROR(String(j, "content", path, &step.content));
    if (step.content.empty()) return Invalid(path + ".content", "is empty");
    LP_RETURN_IF_ERROR(Int(j, "start", path, &step.start));
    LP_RETURN_IF_ERROR(Int(j, "stop", path, &step.stop));
    if (step.start < 0 || step.stop < 0) {
      return Invalid(path, "start and stop must be >= 0");
    }
  } else if (type == "Metaspace") {
    step.type = DecoderStep::Type::kMetaspace;
    LP_RETURN_IF_ERROR(Replacement(j, path, &step.pattern));
    LP_RETURN_IF_ERROR(Prepend(j, path, &step.prepend_scheme));
  } else {
    return Unsupported(path + ".type",
                       "got " + Quote(type) +
                           "; supported: Sequence, ByteLevel, Replace, "
                           "ByteFallback, Fuse, Strip, Metaspace");
  }
  out->push_back(std::move(step));
  return OkStatus();
}

Status Reader::Model(const Json& model, TokenizerSpec* spec) const {
  LP_RETURN_IF_ERROR(Object(model, "model"));
  const std::string type = Type(model);
  if (type != "BPE" && !(type.empty() && Member(model, "merges") != nullptr)) {
    return Unsupported("model.type", "got " + Quote(type) + ", want \"BPE\"");
  }
  for (const char* key : {"continuing_subword_prefix", "end_of_word_suffix"}) {
    if (const Json* v = Member(model, key)) {
      if (!v->is_string() || !v->get<std::string>().empty()) {
        return Unsupported(std::string("model.") + key, "want null");
      }
    }
  }
  LP_RETURN_IF_ERROR(
      Bool(model, "byte_fallback", "model", false, &spec->byte_fallback));
  LP_RETURN_IF_ERROR(Bool(model, "fuse_unk", "model", false, &spec->fuse_unk));
  LP_RETURN_IF_ERROR(
      Bool(model, "ignore_merges", "model", false, &spec->ignore_merges));

  const Json* vocab = Member(model, "vocab");
  if (vocab == nullptr || !vocab->is_object()) {
    return Invalid("model.vocab", "want an object of token: id");
  }
  int64_t max_id = -1;
  spec->vocab.reserve(vocab->size());
  for (auto it = vocab->begin(); it != vocab->end(); ++it) {
    int32_t id;
    LP_RETURN_IF_ERROR(
        TokenIdValue(it.value(), "model.vocab." + it.key(), &id));
    spec->vocab.emplace(it.key(), id);
    max_id = std::max<int64_t>(max_id, id);
  }
  spec->id_to_token.assign(static_cast<size_t>(max_id + 1), std::string());
  spec->has_token.assign(static_cast<size_t>(max_id + 1), false);
  for (const auto& [token, id] : spec->vocab) {
    if (spec->has_token[id]) {
      return Invalid("model.vocab",
                     "id " + std::to_string(id) + " is given to two tokens");
    }
    spec->has_token[id] = true;
    spec->id_to_token[id] = token;
  }

  if (const Json* unk = Member(model, "unk_token")) {
    if (!unk->is_string()) return Invalid("model.unk_token", "want a string");
    auto it = spec->vocab.find(unk->get<std::string>());
    if (it == spec->vocab.end()) {
      return Invalid("model.unk_token",
                     Quote(unk->get<std::string>()) + " is not in model.vocab");
    }
    spec->unk_id = it->second;
  }

  const Json* merges = Member(model, "merges");
  if (merges == nullptr) return OkStatus();  // A vocabulary without merges.
  LP_RETURN_IF_ERROR(Array(merges, "model.merges"));
  for (size_t i = 0; i < merges->size(); ++i) {
    const Json& m = (*merges)[i];
    const std::string path = Index("model.merges", i);
    std::string left, right;
    if (m.is_string()) {
      const std::string& s = m.get_ref<const std::string&>();
      const size_t space = s.find(' ');
      if (space == std::string::npos ||
          s.find(' ', space + 1) != std::string::npos) {
        return Invalid(path, "want \"left right\", got " + Quote(s));
      }
      left = s.substr(0, space);
      right = s.substr(space + 1);
    } else if (m.is_array() && m.size() == 2 && m[0].is_string() &&
               m[1].is_string()) {
      left = m[0].get<std::string>();
      right = m[1].get<std::string>();
    } else {
      return Invalid(path, "want \"left right\" or [left, right]");
    }
    int32_t ids[3];
    const std::string parts[3] = {left, right, left + right};
    for (int k = 0; k < 3; ++k) {
      auto it = spec->vocab.find(parts[k]);
      if (it == spec->vocab.end()) {
        return Invalid(path, Quote(parts[k]) + " is not in model.vocab");
      }
      ids[k] = it->second;
    }
    spec->merges.Add(ids[0], ids[1], ids[2]);
  }
  return OkStatus();
}

Status Reader::AddedTokens(const Json& root, TokenizerSpec* spec) const {
  const Json* list = Member(root, "added_tokens");
  if (list == nullptr) return OkStatus();
  LP_RETURN_IF_ERROR(Array(list, "added_tokens"));
  for (size_t i = 0; i < list->size(); ++i) {
    const std::string path = Index("added_tokens", i);
    const Json& t = (*list)[i];
    LP_RETURN_IF_ERROR(Object(t, path));
    AddedToken token;
    const Json* id = Member(t, "id");
    if (id == nullptr) return Invalid(path + ".id", "want an integer id");
    LP_RETURN_IF_ERROR(TokenIdValue(*id, path + ".id", &token.id));
    LP_RETURN_IF_ERROR(String(t, "content", path, &token.content));
    if (token.content.empty()) return Invalid(path + ".content", "is empty");
    LP_RETURN_IF_ERROR(Bool(t, "special", path, false, &token.special));
    LP_RETURN_IF_ERROR(Bool(t, "lstrip", path, false, &token.lstrip));
    LP_RETURN_IF_ERROR(Bool(t, "rstrip", path, false, &token.rstrip));
    const size_t need = static_cast<size_t>(token.id) + 1;
    if (spec->id_to_token.size() < need) {
      spec->id_to_token.resize(need);
      spec->has_token.resize(need, false);
    }
    spec->id_to_token[token.id] = token.content;
    spec->has_token[token.id] = true;
    spec->added_tokens.push_back(std::move(token));
  }
  return OkStatus();
}

// The id of the token text `token`: an added token first, then model.vocab.
std::optional<int32_t> LookUp(const TokenizerSpec& spec,
                              const std::string& token) {
  for (const AddedToken& t : spec.added_tokens) {
    if (t.content == token) return t.id;
  }
  auto it = spec.vocab.find(token);
  if (it != spec.vocab.end()) return it->second;
  return std::nullopt;
}

// The id of a TemplateProcessing {"SpecialToken": {"id": name}} item.
std::optional<int32_t> TemplateTokenId(const Json& processor, const Json& item,
                                       const TokenizerSpec& spec) {
  const Json* special = Reader::Member(item, "SpecialToken");
  const Json* name = special ? Reader::Member(*special, "id") : nullptr;
  if (name == nullptr || !name->is_string()) return std::nullopt;
  const std::string token = name->get<std::string>();
  const Json* table = Reader::Member(processor, "special_tokens");
  const Json* entry = table ? Reader::Member(*table, token.c_str()) : nullptr;
  const Json* ids = entry ? Reader::Member(*entry, "ids") : nullptr;
  if (ids != nullptr && ids->is_array() && ids->size() == 1 &&
      (*ids)[0].is_number_integer()) {
    const int64_t id = (*ids)[0].get<int64_t>();
    if (id >= 0 && id < static_cast<int64_t>(spec.has_token.size()) &&
        spec.has_token[id]) {
      return static_cast<int32_t>(id);
    }
  }
  return LookUp(spec, token);
}

// BOS and EOS from a post_processor: a TemplateProcessing's special tokens
// before and after $A, or Roberta/Bert processing's cls and sep.
void FromPostProcessor(const Json& p, const TokenizerSpec& spec,
                       std::optional<int32_t>* bos, std::optional<int32_t>* eos,
                       int depth = 0) {
  const std::string type = Reader::Type(p);
  if (type == "Sequence") {
    const Json* list = Reader::Member(p, "processors");
    if (list == nullptr || !list->is_array() || depth >= kMaxNesting) return;
    for (const Json& q : *list) FromPostProcessor(q, spec, bos, eos, depth + 1);
  } else if (type == "TemplateProcessing") {
    const Json* single = Reader::Member(p, "single");
    if (single == nullptr || !single->is_array()) return;
    bool after_sequence = false;
    for (const Json& item : *single) {
      if (Reader::Member(item, "Sequence") != nullptr) {
        after_sequence = true;
      } else if (std::optional<int32_t> id = TemplateTokenId(p, item, spec)) {
        std::optional<int32_t>* slot = after_sequence ? eos : bos;
        if (!slot->has_value()) *slot = id;
      }
    }
  } else if (type == "RobertaProcessing" || type == "BertProcessing") {
    for (auto [key, slot] : {std::pair{"cls", bos}, std::pair{"sep", eos}}) {
      const Json* pair = Reader::Member(p, key);
      if (pair != nullptr && pair->is_array() && !pair->empty() &&
          (*pair)[0].is_string() && !slot->has_value()) {
        *slot = LookUp(spec, (*pair)[0].get<std::string>());
      }
    }
  }
}

// BOS and EOS: from the post_processor when it names them, else the first
// of the usual special token names that the tokenizer has.
void FindSpecialTokens(const Json& root, TokenizerSpec* spec) {
  spec->is_special.assign(spec->id_to_token.size(), false);
  for (const AddedToken& t : spec->added_tokens) {
    if (t.special) spec->is_special[t.id] = true;
  }
  if (const Json* p = Reader::Member(root, "post_processor")) {
    FromPostProcessor(*p, *spec, &spec->bos_id, &spec->eos_id);
  }
  static const char* const kBos[] = {
      "<|begin_of_text|>", "<s>", "<|startoftext|>", "<bos>", "<|endoftext|>"};
  static const char* const kEos[] = {"</s>", "<|end_of_text|>", "<|endoftext|>",
                                     "<eos>", "<|im_end|>"};
  for (const char* name : kBos) {
    if (!spec->bos_id.has_value()) spec->bos_id = LookUp(*spec, name);
  }
  for (const char* name : kEos) {
    if (!spec->eos_id.has_value()) spec->eos_id = LookUp(*spec, name);
  }
}

}  // namespace

StatusOr<TokenizerSpec> ParseTokenizerSpec(std::string_view json,
                                           std::string_view file) {
  const Reader r(file);
  Json root;
  try {
    root = Json::parse(json.begin(), json.end());
  } catch (const Json::exception& e) {
    return r.Invalid("(document)", std::string("not valid JSON: ") + e.what());
  }
  LP_RETURN_IF_ERROR(r.Object(root, "(document)"));

  TokenizerSpec spec;
  const Json* model = Reader::Member(root, "model");
  if (model == nullptr) return r.Invalid("model", "missing");
  LP_RETURN_IF_ERROR(r.Model(*model, &spec));
  LP_RETURN_IF_ERROR(r.AddedTokens(root, &spec));
  if (spec.id_to_token.empty()) return r.Invalid("model.vocab", "is empty");

  if (const Json* n = Reader::Member(root, "normalizer")) {
    LP_RETURN_IF_ERROR(r.Normalizer(*n, "normalizer", &spec.normalizers));
  }
  if (const Json* p = Reader::Member(root, "pre_tokenizer")) {
    LP_RETURN_IF_ERROR(
        r.PreTokenizer(*p, "pre_tokenizer", &spec.pre_tokenizers));
  }
  if (const Json* d = Reader::Member(root, "decoder")) {
    LP_RETURN_IF_ERROR(r.Decoder(*d, "decoder", &spec.decoders));
  }
  if (spec.decoders.empty()) {
    return r.Unsupported("decoder",
                         "missing; want ByteLevel, Metaspace or a "
                         "Sequence of Replace, ByteFallback, Fuse "
                         "and Strip");
  }

  // Which kind of tokenizer this is.
  const auto& steps = spec.pre_tokenizers;
  auto is = [](PreTokenizerStep::Type t) {
    return [t](const PreTokenizerStep& s) { return s.type == t; };
  };
  const bool byte_level = std::any_of(steps.begin(), steps.end(),
                                      is(PreTokenizerStep::Type::kByteLevel));
  bool metaspace = std::any_of(steps.begin(), steps.end(),
                               is(PreTokenizerStep::Type::kMetaspace));
  for (const NormalizerStep& n : spec.normalizers) {
    if (n.type != NormalizerStep::Type::kNfc &&
        n.content.find(kMetaspace) != std::string::npos) {
      metaspace = true;
    }
  }
  if (byte_level) {
    if (metaspace) {
      return r.Unsupported(
          "pre_tokenizer",
          "ByteLevel together with Metaspace / \"\xE2\x96\x81\" "
          "normalization is not supported");
    }
    if (std::count_if(steps.begin(), steps.end(),
                      is(PreTokenizerStep::Type::kByteLevel)) != 1 ||
        steps.back().type != PreTokenizerStep::Type::kByteLevel) {
      return r.Unsupported("pre_tokenizer",
                           "ByteLevel must appear once, as the last step");
    }
    spec.kind = Tokenizer::Kind::kByteLevelBpe;
  } else if (metaspace) {
    spec.kind = Tokenizer::Kind::kSentencePieceBpe;
  } else {
    return r.Unsupported(
        "pre_tokenizer",
        "want ByteLevel (byte-level BPE) or Metaspace / a \"\xE2\x96\x81\" "
        "normalizer (SentencePiece-style BPE)");
  }

  FindSpecialTokens(root, &spec);
  return spec;
}

}  // namespace layerproof::kernels::model::internal
