#include "text/model_text.h"

#include <nlohmann/json.hpp>
#include <utility>

#include "kernels/model/internal/file_io.h"
#include "kernels/printable.h"

namespace layerproof::text {
namespace {

using Json = nlohmann::ordered_json;
using kernels::InvalidArgument;

constexpr uint64_t kMaxFileBytes = uint64_t{1} << 30;

// The file's text, or nullopt when it does not exist.
StatusOr<std::optional<std::string>> ReadIfPresent(const std::string& path) {
  if (!kernels::model::internal::IsRegularFile(path))
    return std::optional<std::string>();
  LP_ASSIGN_OR_RETURN(std::string text, kernels::model::internal::ReadSmallFile(
                                            path, kMaxFileBytes));
  return std::optional<std::string>(std::move(text));
}

// A special token entry: "text", {"content": "text", ...}, or null.
StatusOr<std::optional<std::string>> TokenText(const Json& config,
                                               const char* key,
                                               const std::string& where) {
  auto it = config.find(key);
  if (it == config.end() || it->is_null()) return std::optional<std::string>();
  if (it->is_string())
    return std::optional<std::string>(it->get<std::string>());
  if (it->is_object()) {
    auto c = it->find("content");
    if (c != it->end() && c->is_string())
      return std::optional<std::string>(c->get<std::string>());
  }
  return InvalidArgument(where + ": " + key +
                         ": want a string, {\"content\": ...} or null");
}

// The classes whose fast tokenizer rewrites the post-processor from
// add_bos_token / add_eos_token (transformers' update_post_processor).
bool RewritesPostProcessor(std::string cls) {
  constexpr std::string_view kFast = "Fast";
  if (cls.size() > kFast.size() &&
      cls.compare(cls.size() - kFast.size(), kFast.size(), kFast) == 0) {
    cls.resize(cls.size() - kFast.size());
  }
  return cls == "LlamaTokenizer" || cls == "CodeLlamaTokenizer" ||
         cls == "GemmaTokenizer";
}

}  // namespace

StatusOr<std::unique_ptr<ModelText>> ModelText::Load(const std::string& dir) {
  const std::string tokenizer_path = dir + "/tokenizer.json";
  LP_ASSIGN_OR_RETURN(
      std::string tokenizer,
      kernels::model::internal::ReadSmallFile(tokenizer_path, kMaxFileBytes));
  LP_ASSIGN_OR_RETURN(std::optional<std::string> config,
                      ReadIfPresent(dir + "/tokenizer_config.json"));
  LP_ASSIGN_OR_RETURN(std::optional<std::string> jinja,
                      ReadIfPresent(dir + "/chat_template.jinja"));
  return FromJson(tokenizer, config.value_or(""), std::move(jinja), dir);
}

StatusOr<std::unique_ptr<ModelText>> ModelText::FromJson(
    std::string_view tokenizer_json, std::string_view config_json,
    std::optional<std::string> chat_template, std::string_view where) {
  StatusOr<std::unique_ptr<ModelText>> m = FromJsonUnescaped(
      tokenizer_json, config_json, std::move(chat_template), where);
  if (!m.ok()) return kernels::PrintableStatus(m.status());
  return m;
}

StatusOr<std::unique_ptr<ModelText>> ModelText::FromJsonUnescaped(
    std::string_view tokenizer_json, std::string_view config_json,
    std::optional<std::string> chat_template, std::string_view where) {
  std::unique_ptr<ModelText> m(new ModelText());
  const std::string dir(where);
  LP_ASSIGN_OR_RETURN(
      m->tokenizer_,
      Tokenizer::FromJson(tokenizer_json, dir + "/tokenizer.json"));
  m->prefix_ = m->tokenizer_->template_prefix();
  m->suffix_ = m->tokenizer_->template_suffix();
  std::string template_file = dir + "/chat_template.jinja";
  if (!config_json.empty()) {
    const std::string cfg = dir + "/tokenizer_config.json";
    const Json config =
        Json::parse(config_json, nullptr, /*allow_exceptions=*/false);
    if (!config.is_object())
      return InvalidArgument(cfg + ": not a JSON object");
    for (const char* key :
         {"bos_token", "eos_token", "unk_token", "pad_token"}) {
      LP_ASSIGN_OR_RETURN(std::optional<std::string> t,
                          TokenText(config, key, cfg));
      if (t.has_value()) m->special_tokens_[key] = *t;
    }
    if (!chat_template.has_value()) {
      auto it = config.find("chat_template");
      if (it != config.end() && it->is_string()) {
        chat_template = it->get<std::string>();
        template_file = cfg + ": chat_template";
      } else if (it != config.end() && it->is_array()) {
        // Named templates: transformers' default is the one named "default".
        for (const Json& t : *it) {
          const auto name = t.is_object() ? t.find("name") : t.end();
          if (t.is_object() && name != t.end() && *name == "default" &&
              t.contains("template") && t["template"].is_string()) {
            chat_template = t["template"].get<std::string>();
            template_file = cfg + ": chat_template[default]";
          }
        }
      } else if (it != config.end() && !it->is_null()) {
        return InvalidArgument(
            cfg +
            ": chat_template: want a string or a list of named templates");
      }
    }
    const auto cls_it = config.find("tokenizer_class");
    const std::string cls = cls_it != config.end() && cls_it->is_string()
                                ? cls_it->get<std::string>()
                                : std::string();
    if (RewritesPostProcessor(cls)) {
      auto flag = [&](const char* key, bool fallback) -> StatusOr<bool> {
        auto f = config.find(key);
        if (f == config.end() || f->is_null()) return fallback;
        if (!f->is_boolean())
          return InvalidArgument(cfg + ": " + key + ": want a boolean");
        return f->get<bool>();
      };
      LP_ASSIGN_OR_RETURN(const bool add_bos, flag("add_bos_token", true));
      LP_ASSIGN_OR_RETURN(const bool add_eos, flag("add_eos_token", false));
      m->prefix_.clear();
      m->suffix_.clear();
      for (auto [add, key, out] :
           {std::tuple{add_bos, "bos_token", &m->prefix_},
            std::tuple{add_eos, "eos_token", &m->suffix_}}) {
        if (!add) continue;
        auto t = m->special_tokens_.find(key);
        std::optional<int32_t> id = t == m->special_tokens_.end()
                                        ? std::nullopt
                                        : m->tokenizer_->TokenId(t->second);
        if (!id.has_value()) {
          return InvalidArgument(
              cfg + ": " + key + ": " + cls +
              " adds it, but it is not a token of tokenizer.json");
        }
        out->push_back(*id);
      }
    }
  }
  if (chat_template.has_value()) {
    LP_ASSIGN_OR_RETURN(ChatTemplate t,
                        ChatTemplate::Parse(*chat_template, template_file));
    m->chat_template_ = std::move(t);
    m->chat_template_source_ = std::move(chat_template);
  }
  return m;
}

StatusOr<std::vector<int32_t>> ModelText::EncodePrompt(
    std::string_view text) const {
  LP_ASSIGN_OR_RETURN(std::vector<int32_t> body,
                      tokenizer_->Encode(text, /*add_special_tokens=*/false));
  std::vector<int32_t> ids = prefix_;
  ids.insert(ids.end(), body.begin(), body.end());
  ids.insert(ids.end(), suffix_.begin(), suffix_.end());
  return ids;
}

StatusOr<std::string> ModelText::RenderChat(ChatInput input) const {
  if (!chat_template_.has_value()) {
    return kernels::Status(
        kernels::StatusCode::kFailedPrecondition,
        "chat: this model has no chat_template (tokenizer_config.json "
        "or chat_template.jinja)");
  }
  for (const auto& [k, v] : special_tokens_) input.special_tokens.emplace(k, v);
  return chat_template_->Render(input);
}

StatusOr<std::vector<int32_t>> ModelText::EncodeChat(ChatInput input) const {
  LP_ASSIGN_OR_RETURN(std::string text, RenderChat(std::move(input)));
  return tokenizer_->Encode(text, /*add_special_tokens=*/false);
}

}  // namespace layerproof::text
