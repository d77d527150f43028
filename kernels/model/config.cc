#include "kernels/model/config.h"

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>

#include "kernels/model/internal/errors.h"
#include "kernels/model/json_fields.h"
#include "kernels/printable.h"

namespace layerproof::kernels::model {
namespace {

using internal::FieldReader;
using internal::GotWant;
using internal::Json;
using internal::UnimplementedError;

// Sanity bounds: far above every released Llama-family model, low enough
// that no shape product overflows int64_t.
constexpr int64_t kMaxHidden = 65536;
constexpr int64_t kMaxIntermediate = 1 << 20;
constexpr int64_t kMaxLayers = 1024;
constexpr int64_t kMaxHeads = 1024;
constexpr int64_t kMaxHeadDim = 1024;
constexpr int64_t kMaxVocab = 1 << 24;
constexpr int64_t kMaxPositions = 1 << 20;  // BuildRopeTable's limit
constexpr double kMaxRopeTheta = 1e12;
constexpr double kMaxScale = 1e6;

struct Architecture {
  const char* name;
  const char* model_type;
};
constexpr Architecture kArchitectures[] = {
    {"LlamaForCausalLM", "llama"},
    {"MistralForCausalLM", "mistral"},
    {"Qwen2ForCausalLM", "qwen2"},
    {"Qwen3ForCausalLM", "qwen3"},
};
constexpr char kSupported[] =
    "one of LlamaForCausalLM, MistralForCausalLM, Qwen2ForCausalLM, "
    "Qwen3ForCausalLM";

// architectures (a one-element list) and model_type, which must agree; a
// config with only model_type is accepted.
Status ParseArchitecture(const FieldReader& r, ModelConfig* c) {
  LP_ASSIGN_OR_RETURN(std::optional<std::string> model_type,
                      r.OptionalString("model_type"));
  const Json* archs = r.Find("architectures");
  const Architecture* found = nullptr;
  if (archs != nullptr) {
    if (!archs->is_array() || archs->size() != 1 || !(*archs)[0].is_string()) {
      return r.Error("architectures", *archs, "a list of one string");
    }
    const std::string name = (*archs)[0].get<std::string>();
    for (const Architecture& a : kArchitectures) {
      if (name == a.name) found = &a;
    }
    if (found == nullptr) {
      return UnimplementedError(GotWant(r.Where("architectures"),
                                        internal::DescribeJson(*archs),
                                        kSupported));
    }
  } else if (model_type) {
    for (const Architecture& a : kArchitectures) {
      if (*model_type == a.model_type) found = &a;
    }
    if (found == nullptr) {
      return UnimplementedError(
          GotWant(r.Where("model_type"), internal::DescribeJson(*model_type),
                  "\"llama\", \"mistral\", \"qwen2\" or \"qwen3\""));
    }
  } else {
    return InvalidArgument(r.Where("architectures") + ": missing, want " +
                           kSupported);
  }
  if (model_type && *model_type != found->model_type) {
    return InvalidArgument(GotWant(
        r.Where("model_type"), internal::DescribeJson(*model_type),
        "\"" + std::string(found->model_type) + "\" for " + found->name));
  }
  c->architecture = found->name;
  c->model_type = found->model_type;
  return OkStatus();
}

// Sizes, heads and the attention geometry.
Status ParseDimensions(const FieldReader& r, ModelConfig* c) {
  LP_ASSIGN_OR_RETURN(c->hidden_size,
                      r.RequiredInt("hidden_size", 1, kMaxHidden));
  LP_ASSIGN_OR_RETURN(c->intermediate_size,
                      r.RequiredInt("intermediate_size", 1, kMaxIntermediate));
  LP_ASSIGN_OR_RETURN(c->num_layers,
                      r.RequiredInt("num_hidden_layers", 1, kMaxLayers));
  LP_ASSIGN_OR_RETURN(c->num_heads,
                      r.RequiredInt("num_attention_heads", 1, kMaxHeads));
  LP_ASSIGN_OR_RETURN(std::optional<int64_t> kv,
                      r.OptionalInt("num_key_value_heads", 1, kMaxHeads));
  c->num_kv_heads = kv.value_or(c->num_heads);
  if (c->num_heads % c->num_kv_heads != 0) {
    return InvalidArgument(GotWant(r.Where("num_key_value_heads"),
                                   std::to_string(c->num_kv_heads),
                                   "a divisor of num_attention_heads (" +
                                       std::to_string(c->num_heads) + ")"));
  }
  LP_ASSIGN_OR_RETURN(std::optional<int64_t> head_dim,
                      r.OptionalInt("head_dim", 2, kMaxHeadDim));
  if (head_dim) {
    c->head_dim = *head_dim;
  } else {
    if (c->hidden_size % c->num_heads != 0) {
      return InvalidArgument(GotWant(
          r.Where("hidden_size"), std::to_string(c->hidden_size),
          "a multiple of num_attention_heads (" + std::to_string(c->num_heads) +
              ") when head_dim is not given"));
    }
    c->head_dim = c->hidden_size / c->num_heads;
  }
  if (c->head_dim % 2 != 0 || c->head_dim < 2 || c->head_dim > kMaxHeadDim) {
    return InvalidArgument(GotWant(r.Where("head_dim"),
                                   std::to_string(c->head_dim),
                                   "an even number in [2, 1024] (RoPE rotates "
                                   "pairs)"));
  }
  LP_ASSIGN_OR_RETURN(c->vocab_size, r.RequiredInt("vocab_size", 1, kMaxVocab));
  LP_ASSIGN_OR_RETURN(c->max_positions, r.RequiredInt("max_position_embeddings",
                                                      1, kMaxPositions));
  LP_ASSIGN_OR_RETURN(std::optional<double> eps,
                      r.OptionalNumber("rms_norm_eps", 0.0, 1.0));
  c->rms_norm_eps = eps.value_or(1e-6);  // transformers' default
  return OkStatus();
}

// rope_theta and rope_scaling ("rope_type", or the older "type").
Status ParseRope(const FieldReader& r, ModelConfig* c) {
  LP_ASSIGN_OR_RETURN(std::optional<double> theta,
                      r.OptionalNumber("rope_theta", 1.0, kMaxRopeTheta));
  c->rope_theta = theta.value_or(10000.0);
  c->rope_scaling = RopeScaling{};
  const Json* scaling = r.Find("rope_scaling");
  if (scaling == nullptr) return OkStatus();
  if (!scaling->is_object()) {
    return r.Error("rope_scaling", *scaling, "an object or null");
  }
  const FieldReader s(*scaling, r.Where("rope_scaling"));
  LP_ASSIGN_OR_RETURN(std::optional<std::string> rope_type,
                      s.OptionalString("rope_type"));
  LP_ASSIGN_OR_RETURN(std::optional<std::string> type,
                      s.OptionalString("type"));
  if (rope_type && type && *rope_type != *type) {
    return InvalidArgument(GotWant(
        s.Where("type"), internal::DescribeJson(*type),
        "the same as rope_type (" + internal::DescribeJson(*rope_type) + ")"));
  }
  const std::string kind = rope_type ? *rope_type : type.value_or("");
  const char* kind_field = rope_type ? "rope_type" : "type";
  if (kind.empty()) {
    return InvalidArgument(s.Where("rope_type") + ": missing, want \"llama3\"");
  }
  if (kind == "default") return OkStatus();
  if (kind != "llama3") {
    return UnimplementedError(
        GotWant(s.Where(kind_field), internal::DescribeJson(kind),
                "\"llama3\" (no other RoPE scaling is supported)"));
  }
  RopeScaling& out = c->rope_scaling;
  out.type = RopeScaling::Type::kLlama3;
  for (const char* key : {"factor", "low_freq_factor", "high_freq_factor",
                          "original_max_position_embeddings"}) {
    if (!s.Has(key)) {
      return InvalidArgument(s.Where(key) +
                             ": missing, llama3 RoPE scaling "
                             "needs it");
    }
  }
  LP_ASSIGN_OR_RETURN(std::optional<double> factor,
                      s.OptionalNumber("factor", 0.0, kMaxScale));
  if (*factor < 1.0) {
    return s.Error("factor", Json(*factor), "a number >= 1");
  }
  out.factor = *factor;
  LP_ASSIGN_OR_RETURN(std::optional<double> low,
                      s.OptionalNumber("low_freq_factor", 0.0, kMaxScale));
  out.low_freq_factor = *low;
  LP_ASSIGN_OR_RETURN(std::optional<double> high,
                      s.OptionalNumber("high_freq_factor", 0.0, kMaxScale));
  if (!(*high > *low)) {
    return s.Error("high_freq_factor", Json(*high),
                   "a number > low_freq_factor (" +
                       internal::DescribeJson(Json(*low)) + ")");
  }
  out.high_freq_factor = *high;
  LP_ASSIGN_OR_RETURN(
      std::optional<int64_t> original,
      s.OptionalInt("original_max_position_embeddings", 1, kMaxPositions));
  out.original_max_positions = *original;
  return OkStatus();
}

// Qwen2's and Qwen3's use_sliding_window: true is not implemented.
Status RefuseSlidingWindow(const FieldReader& r) {
  LP_ASSIGN_OR_RETURN(std::optional<bool> sliding,
                      r.OptionalBool("use_sliding_window"));
  if (sliding.value_or(false)) {
    return UnimplementedError(r.Where("use_sliding_window") +
                              ": got true, but sliding-window attention is "
                              "not supported");
  }
  return OkStatus();
}

// Biases, sliding windows and the activation: everything the engine does not
// implement is refused here rather than silently computed wrong.
Status ParseVariant(const FieldReader& r, ModelConfig* c) {
  LP_ASSIGN_OR_RETURN(std::optional<std::string> act,
                      r.OptionalString("hidden_act"));
  if (act && *act != "silu") {
    return UnimplementedError(GotWant(
        r.Where("hidden_act"), internal::DescribeJson(*act), "\"silu\""));
  }
  LP_ASSIGN_OR_RETURN(std::optional<bool> tie,
                      r.OptionalBool("tie_word_embeddings"));
  c->tie_word_embeddings = tie.value_or(false);
  c->qkv_bias = false;
  c->qk_norm = false;
  if (c->model_type == "llama") {
    LP_ASSIGN_OR_RETURN(std::optional<bool> attention_bias,
                        r.OptionalBool("attention_bias"));
    if (attention_bias.value_or(false)) {
      return UnimplementedError(
          r.Where("attention_bias") +
          ": got true, but attention_bias (o_proj bias) is not supported");
    }
    LP_ASSIGN_OR_RETURN(std::optional<bool> mlp_bias,
                        r.OptionalBool("mlp_bias"));
    if (mlp_bias.value_or(false)) {
      return UnimplementedError(r.Where("mlp_bias") +
                                ": got true, but MLP biases are not supported");
    }
  } else if (c->model_type == "mistral") {
    // transformers' MistralConfig defaults sliding_window to 4096; null
    // means full attention. The engine attends to every position, which
    // equals sliding-window attention up to the window, so cap there.
    int64_t window = 4096;
    if (r.Contains("sliding_window")) {
      LP_ASSIGN_OR_RETURN(std::optional<int64_t> w,
                          r.OptionalInt("sliding_window", 1, kMaxPositions));
      window = w.value_or(0);
    }
    if (window > 0 && window < c->max_positions) c->max_positions = window;
  } else if (c->model_type == "qwen3") {
    // Qwen3: RMSNorm over each head of q and k before RoPE; no biases
    // unless attention_bias, which would bias o_proj too.
    c->qk_norm = true;
    LP_ASSIGN_OR_RETURN(std::optional<bool> attention_bias,
                        r.OptionalBool("attention_bias"));
    if (attention_bias.value_or(false)) {
      return UnimplementedError(
          r.Where("attention_bias") +
          ": got true, but attention biases (o_proj's among them) are not "
          "supported");
    }
    LP_RETURN_IF_ERROR(RefuseSlidingWindow(r));
  } else if (c->model_type == "qwen2") {
    c->qkv_bias = true;  // Qwen2 always has q/k/v biases, never o_proj's
    LP_RETURN_IF_ERROR(RefuseSlidingWindow(r));
  }
  return OkStatus();
}

// eos_token_id (an integer, a list of them, or null): replaces
// c->eos_token_ids when present.
Status ParseEosIds(const FieldReader& r, ModelConfig* c) {
  const std::string want_id =
      "a token id in [0, " + std::to_string(c->vocab_size - 1) + "]";
  if (const Json* eos = r.Find("eos_token_id"); eos != nullptr) {
    c->eos_token_ids.clear();
    const Json list = eos->is_array() ? *eos : Json::array({*eos});
    for (const Json& id : list) {
      const std::optional<int64_t> v = internal::JsonInt(id);
      if (!v || *v < 0 || *v >= c->vocab_size) {
        return r.Error("eos_token_id", *eos, want_id + ", or a list of them");
      }
      c->eos_token_ids.push_back(int32_t(*v));
    }
  }
  return OkStatus();
}

// eos_token_id and bos_token_id.
Status ParseTokens(const FieldReader& r, ModelConfig* c) {
  c->eos_token_ids.clear();
  LP_RETURN_IF_ERROR(ParseEosIds(r, c));
  LP_ASSIGN_OR_RETURN(std::optional<int64_t> bos,
                      r.OptionalInt("bos_token_id", 0, c->vocab_size - 1));
  c->bos_token_id = bos ? int32_t(*bos) : -1;
  return OkStatus();
}

}  // namespace

bool operator==(const ModelConfig& a, const ModelConfig& b) {
  const RopeScaling& x = a.rope_scaling;
  const RopeScaling& y = b.rope_scaling;
  return a.architecture == b.architecture && a.model_type == b.model_type &&
         a.hidden_size == b.hidden_size &&
         a.intermediate_size == b.intermediate_size &&
         a.num_layers == b.num_layers && a.num_heads == b.num_heads &&
         a.num_kv_heads == b.num_kv_heads && a.head_dim == b.head_dim &&
         a.vocab_size == b.vocab_size && a.max_positions == b.max_positions &&
         a.rms_norm_eps == b.rms_norm_eps && a.rope_theta == b.rope_theta &&
         x.type == y.type && x.factor == y.factor &&
         x.low_freq_factor == y.low_freq_factor &&
         x.high_freq_factor == y.high_freq_factor &&
         x.original_max_positions == y.original_max_positions &&
         a.tie_word_embeddings == b.tie_word_embeddings &&
         a.qkv_bias == b.qkv_bias && a.qk_norm == b.qk_norm &&
         a.eos_token_ids == b.eos_token_ids && a.bos_token_id == b.bos_token_id;
}

namespace {

StatusOr<ModelConfig> ParseModelConfigUnescaped(std::string_view json_text,
                                                std::string_view file) {
  LP_ASSIGN_OR_RETURN(Json root, internal::ParseJson(json_text, file));
  if (!root.is_object()) {
    return InvalidArgument(
        GotWant(file, internal::DescribeJson(root), "a JSON object"));
  }
  const FieldReader r(root, std::string(file));
  ModelConfig c;
  LP_RETURN_IF_ERROR(ParseArchitecture(r, &c));
  LP_RETURN_IF_ERROR(ParseDimensions(r, &c));
  LP_RETURN_IF_ERROR(ParseRope(r, &c));
  LP_RETURN_IF_ERROR(ParseVariant(r, &c));
  LP_RETURN_IF_ERROR(ParseTokens(r, &c));
  return c;
}

Status ApplyGenerationConfigUnescaped(std::string_view json_text,
                                      std::string_view file, ModelConfig* c) {
  LP_ASSIGN_OR_RETURN(Json root, internal::ParseJson(json_text, file));
  if (!root.is_object()) {
    return InvalidArgument(
        GotWant(file, internal::DescribeJson(root), "a JSON object"));
  }
  return ParseEosIds(FieldReader(root, std::string(file)), c);
}

}  // namespace

StatusOr<ModelConfig> ParseModelConfig(std::string_view json_text,
                                       std::string_view file) {
  return PrintableStatus(ParseModelConfigUnescaped(json_text, file));
}

Status ApplyGenerationConfig(std::string_view json_text, std::string_view file,
                             ModelConfig* c) {
  return PrintableStatus(ApplyGenerationConfigUnescaped(json_text, file, c));
}

std::string WriteModelConfig(const ModelConfig& c) {
  // ordered_json keeps this insertion order; nlohmann prints doubles in
  // their shortest round-trip form, so the text is canonical (HashConfig).
  nlohmann::ordered_json j;
  j["architectures"] = nlohmann::ordered_json::array({c.architecture});
  j["model_type"] = c.model_type;
  j["hidden_size"] = c.hidden_size;
  j["intermediate_size"] = c.intermediate_size;
  j["num_hidden_layers"] = c.num_layers;
  j["num_attention_heads"] = c.num_heads;
  j["num_key_value_heads"] = c.num_kv_heads;
  j["head_dim"] = c.head_dim;
  j["vocab_size"] = c.vocab_size;
  j["max_position_embeddings"] = c.max_positions;
  j["rms_norm_eps"] = c.rms_norm_eps;
  j["rope_theta"] = c.rope_theta;
  if (c.rope_scaling.type == RopeScaling::Type::kLlama3) {
    nlohmann::ordered_json s;
    s["rope_type"] = "llama3";
    s["factor"] = c.rope_scaling.factor;
    s["low_freq_factor"] = c.rope_scaling.low_freq_factor;
    s["high_freq_factor"] = c.rope_scaling.high_freq_factor;
    s["original_max_position_embeddings"] =
        c.rope_scaling.original_max_positions;
    j["rope_scaling"] = s;
  } else {
    j["rope_scaling"] = nullptr;
  }
  j["hidden_act"] = "silu";
  j["tie_word_embeddings"] = c.tie_word_embeddings;
  if (c.model_type == "llama") {
    j["attention_bias"] = c.qkv_bias;
    j["mlp_bias"] = false;
  } else if (c.model_type == "mistral") {
    j["sliding_window"] = nullptr;  // already folded into max_positions
  } else if (c.model_type == "qwen2") {
    j["use_sliding_window"] = false;
  } else if (c.model_type == "qwen3") {
    j["attention_bias"] = false;
    j["use_sliding_window"] = false;
  }
  if (c.bos_token_id >= 0) {
    j["bos_token_id"] = c.bos_token_id;
  } else {
    j["bos_token_id"] = nullptr;
  }
  if (c.eos_token_ids.size() == 1) {
    j["eos_token_id"] = c.eos_token_ids[0];
  } else if (c.eos_token_ids.empty()) {
    j["eos_token_id"] = nullptr;
  } else {
    j["eos_token_id"] = c.eos_token_ids;
  }
  return j.dump(2) + "\n";
}

}  // namespace layerproof::kernels::model
