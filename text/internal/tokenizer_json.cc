// ParseTokenizerSpec(): tokenizer.json to a TokenizerSpec. Every access to
// the document checks the JSON type first, so no nlohmann exception is
// thrown after parsing; the parse itself is wrapped. Each supported step is
// read with the defaults Hugging Face's deserializers use for absent
// fields; an unsupported step or value is Unimplemented, naming its path.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

#include "kernels/printable.h"
#include "kernels/status.h"
#include "text/internal/tokenizer_spec.h"

namespace layerproof::text::internal {
namespace {

using Json = nlohmann::json;
using kernels::InvalidArgument;
using kernels::OkStatus;
using kernels::StatusCode;

// The split pattern of GPT-2, which a ByteLevel pre-tokenizer with
// use_regex applies (Hugging Face's byte_level.rs).
constexpr std::string_view kGpt2Pattern =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

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

  // A {"String": s} or {"Regex": r} pattern at `path`.pattern.
  Status ReadPattern(const Json& obj, const std::string& path, Pattern* out,
                     bool* reads_unicode) const {
    const Json* p = Member(obj, "pattern");
    if (p == nullptr || !p->is_object() || p->size() != 1) {
      return Invalid(path + ".pattern",
                     "want {\"String\": ...} or {\"Regex\": ...}");
    }
    if (Member(*p, "String") != nullptr) {
      return String(*p, "String", path + ".pattern", &out->literal);
    }
    std::string regex;
    LP_RETURN_IF_ERROR(String(*p, "Regex", path + ".pattern", &regex));
    return CompileInto(regex, path + ".pattern.Regex", out, reads_unicode);
  }

  Status CompileInto(std::string_view regex, const std::string& path,
                     Pattern* out, bool* reads_unicode) const {
    StatusOr<Regex> re = Regex::Compile(regex);
    if (!re.ok()) {
      return Unsupported(path, Quote(regex) + ": " + re.status().message());
    }
    out->regex = *std::move(re);
    *reads_unicode = true;
    return OkStatus();
  }

  Status Normalizer(const Json& j, const std::string& path,
                    std::vector<NormalizerStep>* out, bool* unicode) const;
  Status PreTokenizer(const Json& j, const std::string& path,
                      std::vector<PreTokenizerStep>* out, bool* unicode) const;
  Status Decoder(const Json& j, const std::string& path,
                 std::vector<DecoderStep>* out, bool* unicode) const;
  Status Model(const Json& model, TokenizerSpec* spec) const;
  Status AddedTokens(const Json& root, TokenizerSpec* spec) const;
  Status PostProcessor(const Json& p, const std::string& path,
                       const TokenizerSpec& spec, std::vector<int32_t>* prefix,
                       std::vector<int32_t>* suffix) const;

 private:
  // The items of a Sequence step's `key` list, each read by `read`.
  template <typename Read>
  Status EachOf(const Json& j, const char* key, const std::string& path,
                Read read) const {
    const Json* list = Member(j, key);
    LP_RETURN_IF_ERROR(Array(list, path + "." + key));
    if (Nesting(path) >= kMaxNesting) {
      return Invalid(path, "Sequence nested too deeply");
    }
    for (size_t i = 0; i < list->size(); ++i) {
      LP_RETURN_IF_ERROR(read((*list)[i], Index(path + "." + key, i)));
    }
    return OkStatus();
  }

  std::string file_;
};

Status Reader::Normalizer(const Json& j, const std::string& path,
                          std::vector<NormalizerStep>* out,
                          bool* unicode) const {
  LP_RETURN_IF_ERROR(Object(j, path));
  const std::string type = Type(j);
  if (type == "Sequence") {
    return EachOf(j, "normalizers", path,
                  [&](const Json& s, const std::string& p) {
                    return Normalizer(s, p, out, unicode);
                  });
  }
  NormalizerStep step;
  if (type == "NFC" || type == "NFD" || type == "NFKC" || type == "NFKD") {
    step.type = NormalizerStep::Type::kNormalForm;
    step.form = type == "NFC"    ? NormalForm::kNfc
                : type == "NFD"  ? NormalForm::kNfd
                : type == "NFKC" ? NormalForm::kNfkc
                                 : NormalForm::kNfkd;
    *unicode = true;
  } else if (type == "Prepend") {
    step.type = NormalizerStep::Type::kPrepend;
    LP_RETURN_IF_ERROR(String(j, "prepend", path, &step.content));
  } else if (type == "Replace") {
    step.type = NormalizerStep::Type::kReplace;
    LP_RETURN_IF_ERROR(ReadPattern(j, path, &step.pattern, unicode));
    LP_RETURN_IF_ERROR(String(j, "content", path, &step.content));
  } else if (type == "Strip") {
    step.type = NormalizerStep::Type::kStrip;
    LP_RETURN_IF_ERROR(Bool(j, "strip_left", path, true, &step.strip_left));
    LP_RETURN_IF_ERROR(Bool(j, "strip_right", path, true, &step.strip_right));
    *unicode = true;  // char::is_whitespace.
  } else {
    return Unsupported(path + ".type",
                       "got " + Quote(type) +
                           "; supported: Sequence, NFC, NFD, NFKC, NFKD, "
                           "Prepend, Replace, Strip");
  }
  out->push_back(std::move(step));
  return OkStatus();
}

Status Reader::PreTokenizer(const Json& j, const std::string& path,
                            std::vector<PreTokenizerStep>* out,
                            bool* unicode) const {
  LP_RETURN_IF_ERROR(Object(j, path));
  const std::string type = Type(j);
  if (type == "Sequence") {
    return EachOf(j, "pretokenizers", path,
                  [&](const Json& s, const std::string& p) {
                    return PreTokenizer(s, p, out, unicode);
                  });
  }
  PreTokenizerStep step;
  if (type == "ByteLevel") {
    step.type = PreTokenizerStep::Type::kByteLevel;
    LP_RETURN_IF_ERROR(
        Bool(j, "add_prefix_space", path, true, &step.add_prefix_space));
    LP_RETURN_IF_ERROR(Bool(j, "use_regex", path, true, &step.use_regex));
    if (step.use_regex) {
      LP_RETURN_IF_ERROR(CompileInto(kGpt2Pattern, path + ".use_regex",
                                     &step.pattern, unicode));
    }
  } else if (type == "Split") {
    step.type = PreTokenizerStep::Type::kSplit;
    LP_RETURN_IF_ERROR(ReadPattern(j, path, &step.pattern, unicode));
    std::string behavior;
    LP_RETURN_IF_ERROR(String(j, "behavior", path, &behavior));
    static const std::pair<const char*, SplitBehavior> kBehaviors[] = {
        {"Removed", SplitBehavior::kRemoved},
        {"Isolated", SplitBehavior::kIsolated},
        {"MergedWithPrevious", SplitBehavior::kMergedWithPrevious},
        {"MergedWithNext", SplitBehavior::kMergedWithNext},
        {"Contiguous", SplitBehavior::kContiguous}};
    bool known = false;
    for (const auto& [name, b] : kBehaviors) {
      if (behavior == name) {
        step.behavior = b;
        known = true;
      }
    }
    if (!known) {
      return Invalid(path + ".behavior",
                     "got " + Quote(behavior) +
                         "; want Removed, Isolated, MergedWithPrevious, "
                         "MergedWithNext or Contiguous");
    }
    LP_RETURN_IF_ERROR(Bool(j, "invert", path, false, &step.invert));
  } else if (type == "Metaspace") {
    step.type = PreTokenizerStep::Type::kMetaspace;
    LP_RETURN_IF_ERROR(Replacement(j, path, &step.replacement));
    LP_RETURN_IF_ERROR(Prepend(j, path, &step.prepend_scheme));
    LP_RETURN_IF_ERROR(Bool(j, "split", path, true, &step.split));
  } else if (type == "Digits") {
    step.type = PreTokenizerStep::Type::kDigits;
    LP_RETURN_IF_ERROR(
        Bool(j, "individual_digits", path, false, &step.individual_digits));
    *unicode = true;  // char::is_numeric
  } else {
    return Unsupported(path + ".type",
                       "got " + Quote(type) +
                           "; supported: Sequence, ByteLevel, Split, "
                           "Metaspace, Digits");
  }
  out->push_back(std::move(step));
  return OkStatus();
}

Status Reader::Decoder(const Json& j, const std::string& path,
                       std::vector<DecoderStep>* out, bool* unicode) const {
  LP_RETURN_IF_ERROR(Object(j, path));
  const std::string type = Type(j);
  if (type == "Sequence") {
    return EachOf(j, "decoders", path,
                  [&](const Json& s, const std::string& p) {
                    return Decoder(s, p, out, unicode);
                  });
  }
  DecoderStep step;
  if (type == "ByteLevel") {
    step.type = DecoderStep::Type::kByteLevel;
  } else if (type == "Replace") {
    step.type = DecoderStep::Type::kReplace;
    LP_RETURN_IF_ERROR(ReadPattern(j, path, &step.pattern, unicode));
    LP_RETURN_IF_ERROR(String(j, "content", path, &step.content));
  } else if (type == "ByteFallback") {
    step.type = DecoderStep::Type::kByteFallback;
  } else if (type == "Fuse") {
    step.type = DecoderStep::Type::kFuse;
  } else if (type == "Strip") {
    step.type = DecoderStep::Type::kStrip;
    LP_RETURN_IF_ERROR(String(j, "content", path, &step.content));
    if (CountCodePoints(step.content) != 1) {
      return Invalid(path + ".content", "want one character");
    }
    LP_RETURN_IF_ERROR(Int(j, "start", path, &step.start));
    LP_RETURN_IF_ERROR(Int(j, "stop", path, &step.stop));
    if (step.start < 0 || step.stop < 0) {
      return Invalid(path, "start and stop must be >= 0");
    }
  } else if (type == "Metaspace") {
    step.type = DecoderStep::Type::kMetaspace;
    LP_RETURN_IF_ERROR(Replacement(j, path, &step.replacement));
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
  if (const Json* d = Member(model, "dropout")) {
    // Dropout makes BPE random; only "none" has one answer.
    if (!d->is_number() || d->get<double>() != 0.0) {
      return Unsupported("model.dropout", "want null or 0 (no dropout)");
    }
  }
  for (auto [key, slot] :
       {std::pair{"continuing_subword_prefix",
                  &spec->continuing_subword_prefix},
        std::pair{"end_of_word_suffix", &spec->end_of_word_suffix}}) {
    if (const Json* v = Member(model, key)) {
      if (!v->is_string()) {
        return Invalid(std::string("model.") + key, "want a string or null");
      }
      *slot = v->get<std::string>();
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
  const std::string& prefix = spec->continuing_subword_prefix.value_or("");
  for (size_t i = 0; i < merges->size(); ++i) {
    const Json& m = (*merges)[i];
    const std::string path = Index("model.merges", i);
    std::optional<std::pair<std::string, std::string>> sides = MergeSides(m);
    if (!sides.has_value()) {
      return Invalid(path, m.is_string()
                               ? "want \"left right\", got " +
                                     Quote(m.get_ref<const std::string&>())
                               : "want \"left right\" or [left, right]");
    }
    const std::string& left = sides->first;
    const std::string& right = sides->second;
    // The merged token drops the right side's continuing-subword prefix,
    // as Hugging Face's BPE builder does.
    std::string merged = left;
    merged += std::string_view(right).substr(
        !prefix.empty() && right.compare(0, prefix.size(), prefix) == 0
            ? prefix.size()
            : 0);
    int32_t ids[3];
    const std::string* parts[3] = {&left, &right, &merged};
    for (int k = 0; k < 3; ++k) {
      auto it = spec->vocab.find(*parts[k]);
      if (it == spec->vocab.end()) {
        return Invalid(path, Quote(*parts[k]) + " is not in model.vocab");
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
  std::unordered_set<std::string> seen;
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
    if (FindInvalidUtf8(token.content) != std::string::npos) {
      return Invalid(path + ".content", "is not valid UTF-8");
    }
    LP_RETURN_IF_ERROR(Bool(t, "special", path, false, &token.special));
    // AddedToken's default: normalized unless special.
    LP_RETURN_IF_ERROR(
        Bool(t, "normalized", path, !token.special, &token.normalized));
    LP_RETURN_IF_ERROR(Bool(t, "lstrip", path, false, &token.lstrip));
    LP_RETURN_IF_ERROR(Bool(t, "rstrip", path, false, &token.rstrip));
    LP_RETURN_IF_ERROR(Bool(t, "single_word", path, false, &token.single_word));
    if (!seen.insert(token.content).second) {
      return Invalid(path + ".content",
                     Quote(token.content) + " is added twice");
    }
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

Status Reader::PostProcessor(const Json& p, const std::string& path,
                             const TokenizerSpec& spec,
                             std::vector<int32_t>* prefix,
                             std::vector<int32_t>* suffix) const {
  LP_RETURN_IF_ERROR(Object(p, path));
  const std::string type = Type(p);
  if (type == "Sequence") {
    // Each processor wraps what the ones before it produced.
    return EachOf(
        p, "processors", path, [&](const Json& q, const std::string& where) {
          std::vector<int32_t> pre, suf;
          LP_RETURN_IF_ERROR(PostProcessor(q, where, spec, &pre, &suf));
          prefix->insert(prefix->begin(), pre.begin(), pre.end());
          suffix->insert(suffix->end(), suf.begin(), suf.end());
          return OkStatus();
        });
  }
  if (type == "ByteLevel") return OkStatus();  // Offsets only.
  if (type == "RobertaProcessing" || type == "BertProcessing") {
    for (auto [key, out] :
         {std::pair{"cls", prefix}, std::pair{"sep", suffix}}) {
      const Json* pair = Member(p, key);
      if (pair == nullptr || !pair->is_array() || pair->size() != 2 ||
          !(*pair)[0].is_string()) {
        return Invalid(path + "." + key, "want [token, id]");
      }
      // Hugging Face adds the id given here, whatever the token's text.
      int32_t id;
      LP_RETURN_IF_ERROR(
          TokenIdValue((*pair)[1], path + "." + key + "[1]", &id));
      if (static_cast<size_t>(id) >= spec.has_token.size() ||
          !spec.has_token[id]) {
        return Invalid(path + "." + key,
                       "id " + std::to_string(id) + " is not a token");
      }
      out->push_back(id);
    }
    return OkStatus();
  }
  if (type != "TemplateProcessing") {
    return Unsupported(path + ".type",
                       "got " + Quote(type) +
                           "; supported: TemplateProcessing, ByteLevel, "
                           "Sequence, RobertaProcessing, BertProcessing");
  }
  const Json* single = Member(p, "single");
  LP_RETURN_IF_ERROR(Array(single, path + ".single"));
  const Json* table = Member(p, "special_tokens");
  bool seen_sequence = false;
  for (size_t i = 0; i < single->size(); ++i) {
    const std::string where = Index(path + ".single", i);
    const Json& item = (*single)[i];
    if (const Json* seq = Member(item, "Sequence")) {
      const Json* name = Member(*seq, "id");
      if (seen_sequence || name == nullptr || *name != "A") {
        return Unsupported(where, "want the one sequence \"A\"");
      }
      seen_sequence = true;
      continue;
    }
    const Json* special = Member(item, "SpecialToken");
    const Json* name = special != nullptr ? Member(*special, "id") : nullptr;
    if (name == nullptr || !name->is_string()) {
      return Invalid(where,
                     "want {\"SpecialToken\": {\"id\": ...}} or "
                     "{\"Sequence\": {\"id\": \"A\"}}");
    }
    // The special_tokens table maps the name to its ids (one or more).
    const std::string token = name->get<std::string>();
    const Json* entry =
        table != nullptr ? Member(*table, token.c_str()) : nullptr;
    const Json* ids = entry != nullptr ? Member(*entry, "ids") : nullptr;
    if (ids == nullptr || !ids->is_array()) {
      return Invalid(path + ".special_tokens", Quote(token) + " has no ids");
    }
    std::vector<int32_t>* out = seen_sequence ? suffix : prefix;
    for (size_t k = 0; k < ids->size(); ++k) {
      int32_t id;
      LP_RETURN_IF_ERROR(TokenIdValue(
          (*ids)[k], Index(path + ".special_tokens." + token + ".ids", k),
          &id));
      if (static_cast<size_t>(id) >= spec.has_token.size() ||
          !spec.has_token[id]) {
        return Invalid(path + ".special_tokens." + token,
                       "id " + std::to_string(id) + " is not a token");
      }
      out->push_back(id);
    }
  }
  if (!seen_sequence) return Invalid(path + ".single", "has no sequence A");
  return OkStatus();
}

}  // namespace

Status Pattern::FindAll(std::string_view text, std::vector<Match>* out) const {
  if (regex.has_value()) return regex->FindAll(text, out);
  if (literal.empty()) return OkStatus();
  for (size_t hit = text.find(literal); hit != std::string_view::npos;
       hit = text.find(literal, hit + literal.size())) {
    out->emplace_back(hit, hit + literal.size());
  }
  return OkStatus();
}

std::optional<std::pair<std::string, std::string>> MergeSides(const Json& m) {
  if (m.is_string()) {
    const std::string& s = m.get_ref<const std::string&>();
    const size_t space = s.find(' ');
    if (space == std::string::npos ||
        s.find(' ', space + 1) != std::string::npos) {
      return std::nullopt;
    }
    return std::pair{s.substr(0, space), s.substr(space + 1)};
  }
  if (m.is_array() && m.size() == 2 && m[0].is_string() && m[1].is_string()) {
    return std::pair{m[0].get<std::string>(), m[1].get<std::string>()};
  }
  return std::nullopt;
}

StatusOr<TokenizerSpec> ParseTokenizerSpec(std::string_view json,
                                           std::string_view file) {
  const Reader r(file);
  Json root;
  try {
    root = Json::parse(json.begin(), json.end());
  } catch (const Json::exception& e) {
    // what() may quote the input raw (nlohmann's "last read").
    return r.Invalid("(document)",
                     "not valid JSON: " + kernels::Printable(e.what()));
  }
  LP_RETURN_IF_ERROR(r.Object(root, "(document)"));

  TokenizerSpec spec;
  const Json* model = Reader::Member(root, "model");
  if (model == nullptr) return r.Invalid("model", "missing");
  LP_RETURN_IF_ERROR(r.Model(*model, &spec));
  LP_RETURN_IF_ERROR(r.AddedTokens(root, &spec));
  if (spec.id_to_token.empty()) return r.Invalid("model.vocab", "is empty");

  bool& unicode = spec.reads_unicode_tables;
  if (const Json* n = Reader::Member(root, "normalizer")) {
    LP_RETURN_IF_ERROR(
        r.Normalizer(*n, "normalizer", &spec.normalizers, &unicode));
  }
  if (const Json* p = Reader::Member(root, "pre_tokenizer")) {
    LP_RETURN_IF_ERROR(
        r.PreTokenizer(*p, "pre_tokenizer", &spec.pre_tokenizers, &unicode));
  }
  bool decoder_unicode = false;  // Decoding never refuses text.
  if (const Json* d = Reader::Member(root, "decoder")) {
    LP_RETURN_IF_ERROR(
        r.Decoder(*d, "decoder", &spec.decoders, &decoder_unicode));
  }
  if (const Json* p = Reader::Member(root, "post_processor")) {
    LP_RETURN_IF_ERROR(r.PostProcessor(*p, "post_processor", spec,
                                       &spec.template_prefix,
                                       &spec.template_suffix));
  }
  spec.is_special.assign(spec.id_to_token.size(), false);
  for (const AddedToken& t : spec.added_tokens) {
    if (t.special) spec.is_special[t.id] = true;
  }
  return spec;
}

}  // namespace layerproof::text::internal
