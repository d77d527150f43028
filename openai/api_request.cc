#include "openai/api_request.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <set>
#include <utility>

#include "absl/strings/escaping.h"
#include "kernels/model/json_fields.h"
#include "store/internal/str_cat.h"
#include "store/status.h"

namespace layerproof::openai {
namespace {

using store::internal::Cat;

using kernels::model::internal::DescribeJson;
using kernels::model::internal::FieldReader;
using kernels::model::internal::Json;
using kernels::model::internal::JsonInt;

constexpr std::string_view kWhere = "body";

absl::Status Bad(std::string_view field, const Json& got,
                 std::string_view want) {
  return absl::InvalidArgumentError(
      Cat(kWhere, ": ", field, ": got ", DescribeJson(got), ", want ", want));
}

absl::Status Unsupported(std::string_view field, const Json& got,
                         std::string_view want) {
  return absl::InvalidArgumentError(
      Cat(kWhere, ": ", field, ": got ", DescribeJson(got),
          ", but this server supports only ", want));
}

// The fields each endpoint knows. Anything else is refused by name, so a
// client never gets an answer to a request other than the one it meant.
const std::set<std::string, std::less<>>& KnownFields(Endpoint e) {
  using Fields = std::set<std::string, std::less<>>;
  static const auto with = [](std::initializer_list<const char*> own) {
    Fields f = {"model",
                "max_tokens",
                "temperature",
                "top_p",
                "seed",
                "stop",
                "n",
                "stream",
                "stream_options",
                "user",
                "logprobs",
                "presence_penalty",
                "frequency_penalty",
                "logit_bias"};
    f.insert(own.begin(), own.end());
    return f;
  };
  static const Fields completions =
      with({"prompt", "echo", "suffix", "best_of"});
  static const Fields chat =
      with({"messages", "max_completion_tokens", "top_logprobs", "tools",
            "tool_choice", "parallel_tool_calls", "response_format", "store",
            "metadata"});
  return e == Endpoint::kCompletions ? completions : chat;
}

// Fields accepted only at the value that changes nothing.
absl::Status CheckNeutralFields(const Json& body) {
  for (const char* key : {"presence_penalty", "frequency_penalty"}) {
    auto it = body.find(key);
    if (it == body.end() || it->is_null()) continue;
    if (!it->is_number() || it->get<double>() != 0.0) {
      return Unsupported(key, *it, "0 (no penalty)");
    }
  }
  for (const char* key : {"n", "best_of"}) {
    auto it = body.find(key);
    if (it == body.end() || it->is_null()) continue;
    if (JsonInt(*it) != std::optional<int64_t>(1)) {
      return Unsupported(key, *it, "1");
    }
  }
  if (auto it = body.find("logit_bias");
      it != body.end() && !it->is_null() && !(it->is_object() && it->empty())) {
    return Unsupported("logit_bias", *it, "none");
  }
  for (const char* key : {"logprobs", "top_logprobs", "echo", "suffix", "tools",
                          "tool_choice", "response_format"}) {
    auto it = body.find(key);
    if (it == body.end() || it->is_null()) continue;
    if (it->is_boolean() && !it->get<bool>()) continue;  // logprobs: false
    return Unsupported(key, *it, "its absence");
  }
  for (const char* key : {"parallel_tool_calls", "store"}) {
    auto it = body.find(key);
    if (it == body.end() || it->is_null()) continue;
    if (!it->is_boolean()) return Bad(key, *it, "true or false");
  }
  if (auto it = body.find("metadata");
      it != body.end() && !it->is_null() && !it->is_object()) {
    return Bad("metadata", *it, "an object");
  }
  if (auto it = body.find("user");
      it != body.end() && !it->is_null() && !it->is_string()) {
    return Bad("user", *it, "a string");
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<std::string>> ParseStop(const Json& body) {
  std::vector<std::string> stop;
  auto it = body.find("stop");
  if (it == body.end() || it->is_null()) return stop;
  constexpr std::string_view kWant =
      "a non-empty string of at most 256 bytes, or an array of at most 4";
  if (it->is_string()) {
    stop.push_back(it->get<std::string>());
  } else if (it->is_array() && it->size() <= kMaxStopSequences) {
    for (size_t i = 0; i < it->size(); ++i) {
      const Json& s = (*it)[i];
      if (!s.is_string()) {
        return Bad(Cat("stop[", i, "]"), s, "a string");
      }
      stop.push_back(s.get<std::string>());
    }
  } else {
    return Bad("stop", *it, kWant);
  }
  for (size_t i = 0; i < stop.size(); ++i) {
    if (stop[i].empty() || stop[i].size() > kMaxStopSequenceBytes) {
      return Bad(it->is_string() ? "stop" : Cat("stop[", i, "]"), Json(stop[i]),
                 "1 to 256 bytes");
    }
  }
  return stop;
}

// The sampling fields, with OpenAI's defaults (temperature 1, top_p 1).
absl::Status ParseSampling(const Json& body, v1::GenerateRequest& g) {
  double temperature = 1.0;
  double top_p = 1.0;
  if (auto it = body.find("temperature"); it != body.end() && !it->is_null()) {
    if (!it->is_number() || !std::isfinite(it->get<double>()) ||
        it->get<double>() < 0 || it->get<double>() > 2) {
      return Bad("temperature", *it, "a number in [0, 2]");
    }
    temperature = it->get<double>();
  }
  if (auto it = body.find("top_p"); it != body.end() && !it->is_null()) {
    if (!it->is_number() || !std::isfinite(it->get<double>()) ||
        it->get<double>() <= 0 || it->get<double>() > 1) {
      return Bad("top_p", *it, "a number in (0, 1]");
    }
    top_p = it->get<double>();
  }
  v1::SamplingParams* s = g.mutable_sampling();
  s->set_temperature(static_cast<float>(temperature));
  s->set_top_k(0);
  s->set_top_p(static_cast<float>(top_p));
  if (auto it = body.find("seed"); it != body.end() && !it->is_null()) {
    const std::optional<int64_t> seed = JsonInt(*it);
    if (!seed || *seed < 0) {
      return Bad("seed", *it, "an integer in [0, 2^63 - 1]");
    }
    g.set_seed(static_cast<uint64_t>(*seed));
  }
  return absl::OkStatus();
}

// The prompt of /v1/completions: one string, or one list of token ids.
absl::Status ParseCompletionPrompt(const Json& body, ApiRequest& r) {
  auto it = body.find("prompt");
  constexpr std::string_view kWant =
      "a string, a list of token ids, or a list holding one of them";
  if (it == body.end() || it->is_null()) {
    return absl::InvalidArgumentError(
        Cat(kWhere, ": prompt: missing, want ", kWant));
  }
  const Json* p = &*it;
  if (p->is_array() && p->size() == 1 &&
      ((*p)[0].is_string() || (*p)[0].is_array())) {
    p = &(*p)[0];  // a batch of one
  }
  if (p->is_string()) {
    // Tokenized by the prover (ValidateGenerateRequest), which refuses a
    // text prompt when the model has no tokenizer.
    r.prompt_text = p->get<std::string>();
    r.generate.set_text(r.prompt_text);
    return absl::OkStatus();
  }
  if (p->is_array() && !p->empty()) {
    v1::TokenIds* ids = r.generate.mutable_token_ids();
    for (size_t i = 0; i < p->size(); ++i) {
      const std::optional<int64_t> id = JsonInt((*p)[i]);
      if (!id || *id < 0 || *id > std::numeric_limits<int32_t>::max()) {
        return Bad(Cat("prompt[", i, "]"), (*p)[i],
                   "a token id (an integer >= 0)");
      }
      ids->add_ids(static_cast<int32_t>(*id));
    }
    return absl::OkStatus();
  }
  return Bad("prompt", *it, kWant);
}

// One message's content: a string, or text parts.
absl::StatusOr<std::string> MessageContent(const Json& m, size_t i) {
  const std::string field = Cat("messages[", i, "].content");
  auto it = m.find("content");
  if (it == m.end() || it->is_null()) {
    return absl::InvalidArgumentError(
        Cat(kWhere, ": ", field, ": missing, want a string"));
  }
  if (it->is_string()) return it->get<std::string>();
  if (!it->is_array()) return Bad(field, *it, "a string or a list of parts");
  std::string text;
  for (size_t k = 0; k < it->size(); ++k) {
    const Json& part = (*it)[k];
    const std::string where = Cat(field, "[", k, "]");
    if (!part.is_object() || part.value("type", Json()) != Json("text") ||
        !part.contains("text") || !part["text"].is_string()) {
      return Unsupported(where, part, "{\"type\": \"text\", \"text\": ...}");
    }
    text += part["text"].get<std::string>();
  }
  return text;
}

absl::Status ParseChatPrompt(const Json& body, const ServedModel& served,
                             ApiRequest& r) {
  auto it = body.find("messages");
  if (it == body.end() || !it->is_array() || it->empty()) {
    return Bad("messages", it == body.end() ? Json() : *it,
               "a non-empty list of {role, content}");
  }
  if (served.text == nullptr || !served.text->has_chat_template()) {
    return absl::FailedPreconditionError(
        "body: messages: this model has no chat template "
        "(tokenizer_config.json chat_template or chat_template.jinja)");
  }
  text::ChatInput input;
  for (size_t i = 0; i < it->size(); ++i) {
    const Json& m = (*it)[i];
    if (!m.is_object()) {
      return Bad(Cat("messages[", i, "]"), m, "an object");
    }
    auto role = m.find("role");
    static const std::set<std::string, std::less<>> kRoles = {
        "system", "developer", "user", "assistant"};
    if (role == m.end() || !role->is_string() ||
        kRoles.count(role->get<std::string>()) == 0) {
      return Bad(Cat("messages[", i, "].role"),
                 role == m.end() ? Json() : *role,
                 "\"system\", \"developer\", \"user\" or \"assistant\"");
    }
    for (const auto& [key, value] : m.items()) {
      if (key != "role" && key != "content" && key != "name") {
        return Unsupported(Cat("messages[", i, "].", key), value,
                           "role, content and name");
      }
    }
    LP_ASSIGN_OR_RETURN(std::string content, MessageContent(m, i));
    nlohmann::ordered_json message;
    // The template sees "system" for OpenAI's newer "developer" role.
    message["role"] = role->get<std::string>() == "developer"
                          ? std::string("system")
                          : role->get<std::string>();
    message["content"] = std::move(content);
    input.messages.push_back(std::move(message));
  }
  kernels::StatusOr<std::string> rendered = served.text->RenderChat(input);
  if (!rendered.ok()) {
    return absl::InvalidArgumentError(
        Cat(kWhere, ": messages: the chat template refused them: ",
            std::string(rendered.status().message())));
  }
  kernels::StatusOr<std::vector<int32_t>> ids =
      served.text->EncodeChat(std::move(input));
  if (!ids.ok()) return store::ToAbslStatus(ids.status());
  r.prompt_text = *std::move(rendered);
  r.generate.mutable_token_ids()->mutable_ids()->Assign(ids->begin(),
                                                        ids->end());
  return absl::OkStatus();
}

absl::Status ParseMaxTokens(const Json& body, const ServedModel& served,
                            ApiRequest& r) {
  const char* key = "max_tokens";
  const Json* j = nullptr;
  if (r.endpoint == Endpoint::kChatCompletions) {
    auto it = body.find("max_completion_tokens");
    if (it != body.end() && !it->is_null()) {
      key = "max_completion_tokens";
      j = &*it;
    }
  }
  if (j == nullptr) {
    auto it = body.find("max_tokens");
    if (it != body.end() && !it->is_null()) j = &*it;
  }
  if (j != nullptr) {
    const std::optional<int64_t> n = JsonInt(*j);
    if (!n || *n < 1 || *n > served.max_new_tokens) {
      return Bad(key, *j,
                 Cat("an integer in [1, ", served.max_new_tokens,
                     "] (this server's max_new_tokens)"));
    }
    r.generate.set_max_tokens(static_cast<uint32_t>(*n));
    return absl::OkStatus();
  }
  if (r.endpoint == Endpoint::kCompletions) {
    r.generate.set_max_tokens(std::min<uint32_t>(16, served.max_new_tokens));
    return absl::OkStatus();
  }
  // Chat: as much as the context leaves, up to max_new_tokens. The prompt's
  // length is known (the chat is token ids); a prompt that fills the
  // context is refused by the prover's validation, naming it.
  const int64_t left = served.max_context - r.generate.token_ids().ids_size();
  r.generate.set_max_tokens(static_cast<uint32_t>(
      std::clamp<int64_t>(left, 1, served.max_new_tokens)));
  return absl::OkStatus();
}

absl::Status ParseStream(const Json& body, ApiRequest& r) {
  if (auto it = body.find("stream"); it != body.end() && !it->is_null()) {
    if (!it->is_boolean()) return Bad("stream", *it, "true or false");
    r.stream = it->get<bool>();
  }
  auto it = body.find("stream_options");
  if (it == body.end() || it->is_null()) return absl::OkStatus();
  if (!r.stream) {
    return Bad("stream_options", *it, "absent unless stream is true");
  }
  if (!it->is_object()) return Bad("stream_options", *it, "an object");
  for (const auto& [key, value] : it->items()) {
    if (key != "include_usage" || !value.is_boolean()) {
      return Unsupported(Cat("stream_options.", key), value,
                         "include_usage: true or false");
    }
    r.include_usage = value.get<bool>();
  }
  return absl::OkStatus();
}

absl::Status ParseNonce(std::string_view nonce_hex, ApiRequest& r) {
  if (nonce_hex.empty()) return absl::OkStatus();
  std::string nonce;
  if (nonce_hex.size() % 2 != 0 || nonce_hex.size() > 2 * kMaxNonceBytes ||
      !std::all_of(nonce_hex.begin(), nonce_hex.end(), absl::ascii_isxdigit)) {
    return absl::InvalidArgumentError(
        Cat("header X-LayerProof-Nonce: got ", nonce_hex.size(),
            " characters, want 2 to 128 hex digits (1 to 64 bytes)"));
  }
  nonce = absl::HexStringToBytes(
      absl::string_view(nonce_hex.data(), nonce_hex.size()));
  if (r.generate.has_seed()) {
    return absl::InvalidArgumentError(
        "body: seed: a request with X-LayerProof-Nonce gets its seed from "
        "the nonce; send one or the other");
  }
  r.generate.set_client_nonce(nonce);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<ApiRequest> ParseApiRequest(Endpoint endpoint,
                                           std::string_view body_text,
                                           std::string_view nonce_hex,
                                           const ServedModel& served) {
  absl::StatusOr<ApiRequest> result = [&]() -> absl::StatusOr<ApiRequest> {
    kernels::StatusOr<Json> parsed =
        kernels::model::internal::ParseJson(body_text, kWhere);
    if (!parsed.ok()) return store::ToAbslStatus(parsed.status());
    const Json& body = *parsed;
    if (!body.is_object()) {
      return absl::InvalidArgumentError(
          Cat(kWhere, ": got ", DescribeJson(body), ", want a JSON object"));
    }
    const auto& known = KnownFields(endpoint);
    for (const auto& [key, value] : body.items()) {
      if (known.count(key) == 0) {
        return absl::InvalidArgumentError(
            Cat(kWhere, ": ", key, ": not a field this server knows"));
      }
    }
    auto model = body.find("model");
    if (model == body.end() || !model->is_string()) {
      return Bad("model", model == body.end() ? Json() : *model, "a string");
    }
    if (model->get<std::string>() != served.name) {
      return absl::NotFoundError(
          Cat(kWhere, ": model: got ", DescribeJson(*model),
              ", but this server serves only \"", served.name, "\""));
    }
    LP_RETURN_IF_ERROR(CheckNeutralFields(body));

    ApiRequest r;
    r.endpoint = endpoint;
    LP_RETURN_IF_ERROR(ParseStream(body, r));
    LP_ASSIGN_OR_RETURN(r.stop, ParseStop(body));
    LP_RETURN_IF_ERROR(ParseSampling(body, r.generate));
    if (endpoint == Endpoint::kCompletions) {
      LP_RETURN_IF_ERROR(ParseCompletionPrompt(body, r));
    } else {
      LP_RETURN_IF_ERROR(ParseChatPrompt(body, served, r));
    }
    LP_RETURN_IF_ERROR(ParseMaxTokens(body, served, r));
    LP_RETURN_IF_ERROR(ParseNonce(nonce_hex, r));
    return r;
  }();
  if (!result.ok())
    return ::layerproof::store::PrintableStatus(result.status());
  return result;
}

}  // namespace layerproof::openai
