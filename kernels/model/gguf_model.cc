#include "kernels/model/gguf_model.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <set>
#include <utility>

#include "kernels/model/gguf_writer.h"
#include "kernels/model/internal/errors.h"
#include "kernels/model/quantize.h"
#include "kernels/printable.h"
#include "kernels/quant.h"
#include "kernels/ref/rope_table.h"

namespace layerproof::kernels::model {
namespace {

using internal::GotWant;
using internal::UnimplementedError;

constexpr char kRopeFreqs[] = "rope_freqs.weight";
constexpr uint64_t kMaxDim = 1ull << 30;  // before ParseModelConfig's limits
// llama.cpp's Llama-3 rope_freqs carry the factor only; the other
// parameters are those of every released Llama 3.x.
constexpr double kLlama3LowFreqFactor = 1.0;
constexpr double kLlama3HighFreqFactor = 4.0;
constexpr int64_t kLlama3DefaultOriginal = 8192;
constexpr double kPi = 3.14159265358979323846;

// Hugging Face <-> GGUF names inside a block, and outside.
struct NamePair {
  const char* hf;
  const char* gguf;
};
constexpr NamePair kBlockNames[] = {
    {"input_layernorm.weight", "attn_norm.weight"},
    {"self_attn.q_proj.weight", "attn_q.weight"},
    {"self_attn.q_proj.bias", "attn_q.bias"},
    {"self_attn.k_proj.weight", "attn_k.weight"},
    {"self_attn.k_proj.bias", "attn_k.bias"},
    {"self_attn.v_proj.weight", "attn_v.weight"},
    {"self_attn.v_proj.bias", "attn_v.bias"},
    {"self_attn.o_proj.weight", "attn_output.weight"},
    {"self_attn.q_norm.weight", "attn_q_norm.weight"},
    {"self_attn.k_norm.weight", "attn_k_norm.weight"},
    {"post_attention_layernorm.weight", "ffn_norm.weight"},
    {"mlp.gate_proj.weight", "ffn_gate.weight"},
    {"mlp.up_proj.weight", "ffn_up.weight"},
    {"mlp.down_proj.weight", "ffn_down.weight"},
};
constexpr NamePair kGlobalNames[] = {
    {"model.embed_tokens.weight", "token_embd.weight"},
    {"model.norm.weight", "output_norm.weight"},
    {"lm_head.weight", "output.weight"},
};

// "<prefix><decimal layer>.<rest>": the layer (no sign, no leading zeros,
// at most 6 digits) and the rest.
std::optional<std::pair<std::string, std::string_view>> SplitLayer(
    std::string_view name, std::string_view prefix) {
  if (name.substr(0, prefix.size()) != prefix) return std::nullopt;
  name.remove_prefix(prefix.size());
  size_t n = 0;
  while (n < name.size() && name[n] >= '0' && name[n] <= '9') ++n;
  if (n == 0 || n > 6 || (n > 1 && name[0] == '0') || n >= name.size() ||
      name[n] != '.') {
    return std::nullopt;
  }
  return std::make_pair(std::string(name.substr(0, n)), name.substr(n + 1));
}

// A float32 metadata value as the decimal a config.json would hold: the
// shortest decimal that rounds to it (1e-05f -> 1e-5), read as a double.
double ShortestDecimal(float f) {
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof(buf), f);
  double d = double(f);
  std::from_chars(buf, r.ptr, d);
  return d;
}

// The per-pair RoPE factors llama.cpp's converter writes to rope_freqs for
// Llama-3 scaling (LlamaModel.generate_extra_tensors): 1 for short
// wavelengths, `factor` for long ones, smooth in between. Uses the
// project's fp32 inverse frequencies, so it is the same on every platform.
StatusOr<std::vector<double>> Llama3Factors(int64_t head_dim, double theta,
                                            double factor, int64_t original) {
  LP_ASSIGN_OR_RETURN(std::vector<float> inv,
                      RopeInverseFrequencies(head_dim, theta, RopeScaling{}));
  const double low_wl = double(original) / kLlama3LowFreqFactor;
  const double high_wl = double(original) / kLlama3HighFreqFactor;
  std::vector<double> out;
  for (float f : inv) {
    const double wl = 2.0 * kPi / double(f);
    if (wl < high_wl) {
      out.push_back(1.0);
    } else if (wl > low_wl) {
      out.push_back(factor);
    } else {
      const double smooth = (double(original) / wl - kLlama3LowFreqFactor) /
                            (kLlama3HighFreqFactor - kLlama3LowFreqFactor);
      out.push_back(1.0 / ((1.0 - smooth) / factor + smooth));
    }
  }
  return out;
}

bool NeedsPermute(const ModelConfig& c, const std::string& hf_name,
                  int64_t* n_head) {
  if (c.model_type != "llama" && c.model_type != "mistral") return false;
  const bool q = hf_name.find(".self_attn.q_proj.") != std::string::npos;
  const bool k = hf_name.find(".self_attn.k_proj.") != std::string::npos;
  *n_head = q ? c.num_heads : c.num_kv_heads;
  return q || k;
}

// --- Reading ---------------------------------------------------------------

struct ArchInfo {
  const char* gguf;
  const char* architecture;
  const char* model_type;
};
constexpr ArchInfo kArchs[] = {
    {"llama", "LlamaForCausalLM", "llama"},
    {"qwen2", "Qwen2ForCausalLM", "qwen2"},
    {"qwen3", "Qwen3ForCausalLM", "qwen3"},
};

// RoPE scaling: <arch>.rope.scaling.type (none only) and rope_freqs.weight
// (Llama-3, recovered as Llama3Factors describes).
Status ReadRopeScaling(const GgufFile& f, const std::string& arch,
                       ModelConfig* c) {
  const std::string& file = f.path();
  const std::string type_key = arch + ".rope.scaling.type";
  const std::string factor_key = arch + ".rope.scaling.factor";
  std::string type = f.Has(factor_key) ? "linear" : "none";  // llama.cpp's
  if (f.Has(type_key)) {
    LP_ASSIGN_OR_RETURN(type, f.GetString(type_key));
  }
  if (type == "linear" && f.Has(factor_key)) {
    LP_ASSIGN_OR_RETURN(const double factor, f.GetFloat(factor_key));
    if (factor == 0.0 || factor == 1.0) type = "none";
  }
  if (type != "none") {
    return UnimplementedError(
        GotWant(file + ": " + (f.Has(type_key) ? type_key : factor_key),
                "\"" + type + "\" RoPE scaling",
                "none (only Llama-3 scaling, stored as rope_freqs.weight, is "
                "supported)"));
  }
  const auto it = f.tensors().find(kRopeFreqs);
  if (it == f.tensors().end()) return OkStatus();
  const TensorView& t = it->second;
  const std::string where = file + ": tensor " + kRopeFreqs;
  if (arch != "llama") {
    return UnimplementedError(where +
                              ": RoPE frequency factors are only "
                              "supported for llama");
  }
  const std::vector<int64_t> want = {c->head_dim / 2};
  if (t.dtype != DType::kF32 || t.shape != want) {
    return InvalidArgument(GotWant(
        where, std::string(DTypeName(t.dtype)) + " " + ShapeText(t.shape),
        "F32 " + ShapeText(want) + " (head_dim / 2)"));
  }
  std::vector<float> got(static_cast<size_t>(want[0]));
  std::memcpy(got.data(), t.data, got.size() * 4);
  bool ones = true;
  for (float v : got) ones = ones && v == 1.0f;
  if (ones) return OkStatus();  // the identity: no scaling
  int64_t original = kLlama3DefaultOriginal;
  const std::string orig_key = arch + ".rope.scaling.original_context_length";
  if (f.Has(orig_key)) {
    LP_ASSIGN_OR_RETURN(const uint64_t o, f.GetUint(orig_key, 1, kMaxDim));
    original = int64_t(o);
  }
  const double factor = double(got.back());
  LP_ASSIGN_OR_RETURN(
      std::vector<double> expected,
      Llama3Factors(c->head_dim, c->rope_theta,
                    factor >= 1.0 && std::isfinite(factor) ? factor : 1.0,
                    original));
  for (size_t i = 0; i < got.size(); ++i) {
    if (!(factor >= 1.0) || expected.back() != factor ||
        !(std::fabs(double(got[i]) - expected[i]) <= 1e-5 * expected[i])) {
      return UnimplementedError(GotWant(
          where + "[" + std::to_string(i) + "]", std::to_string(got[i]),
          std::to_string(expected[i]) + ", Llama-3 RoPE scaling with factor " +
              std::to_string(factor) +
              " (the last element), low_freq_factor 1, high_freq_factor 4, "
              "original context " +
              std::to_string(original) +
              " (other frequency factors are not supported)"));
    }
  }
  RopeScaling& s = c->rope_scaling;
  s.type = RopeScaling::Type::kLlama3;
  s.factor = factor;
  s.low_freq_factor = kLlama3LowFreqFactor;
  s.high_freq_factor = kLlama3HighFreqFactor;
  s.original_max_positions = original;
  return OkStatus();
}

// eos: tokenizer.ggml.eos_token_id, then the eot and eom ids llama.cpp also
// stops on; bos: tokenizer.ggml.bos_token_id.
Status ReadTokenIds(const GgufFile& f, ModelConfig* c) {
  const uint64_t max = uint64_t(c->vocab_size - 1);
  for (const char* key :
       {"tokenizer.ggml.eos_token_id", "tokenizer.ggml.eot_token_id",
        "tokenizer.ggml.eom_token_id"}) {
    if (!f.Has(key)) continue;
    LP_ASSIGN_OR_RETURN(const uint64_t id, f.GetUint(key, 0, max));
    bool seen = false;
    for (int32_t e : c->eos_token_ids) seen = seen || e == int32_t(id);
    if (!seen) c->eos_token_ids.push_back(int32_t(id));
  }
  if (f.Has("tokenizer.ggml.bos_token_id")) {
    LP_ASSIGN_OR_RETURN(const uint64_t id,
                        f.GetUint("tokenizer.ggml.bos_token_id", 0, max));
    c->bos_token_id = int32_t(id);
  }
  return OkStatus();
}

StatusOr<ModelConfig> ReadConfig(const GgufFile& f) {
  const std::string& file = f.path();
  LP_ASSIGN_OR_RETURN(const std::string arch,
                      f.GetString("general.architecture"));
  ModelConfig c;
  for (const ArchInfo& a : kArchs) {
    if (arch == a.gguf) {
      c.architecture = a.architecture;
      c.model_type = a.model_type;
    }
  }
  if (c.architecture.empty()) {
    return UnimplementedError(GotWant(file + ": general.architecture",
                                      "\"" + arch + "\"",
                                      "\"llama\", \"qwen2\" or \"qwen3\""));
  }
  const std::string p = arch + ".";
  auto dim = [&](const std::string& key, int64_t* out) -> Status {
    LP_ASSIGN_OR_RETURN(const uint64_t v, f.GetUint(p + key, 1, kMaxDim));
    *out = int64_t(v);
    return OkStatus();
  };
  LP_RETURN_IF_ERROR(dim("embedding_length", &c.hidden_size));
  LP_RETURN_IF_ERROR(dim("feed_forward_length", &c.intermediate_size));
  LP_RETURN_IF_ERROR(dim("block_count", &c.num_layers));
  LP_RETURN_IF_ERROR(dim("attention.head_count", &c.num_heads));
  LP_RETURN_IF_ERROR(dim("context_length", &c.max_positions));
  c.num_kv_heads = c.num_heads;
  if (f.Has(p + "attention.head_count_kv")) {
    LP_RETURN_IF_ERROR(dim("attention.head_count_kv", &c.num_kv_heads));
  }
  if (c.num_heads % c.num_kv_heads != 0) {
    return InvalidArgument(GotWant(file + ": " + p + "attention.head_count_kv",
                                   std::to_string(c.num_kv_heads),
                                   "a divisor of " + p +
                                       "attention.head_count (" +
                                       std::to_string(c.num_heads) + ")"));
  }
  if (f.Has(p + "attention.key_length")) {
    LP_RETURN_IF_ERROR(dim("attention.key_length", &c.head_dim));
  } else if (c.hidden_size % c.num_heads == 0) {
    c.head_dim = c.hidden_size / c.num_heads;
  } else {
    return InvalidArgument(
        file + ": " + p + "attention.key_length: missing, and " + p +
        "embedding_length is not a multiple of " + p + "attention.head_count");
  }
  for (const char* key : {"attention.value_length", "rope.dimension_count"}) {
    if (!f.Has(p + key)) continue;
    LP_ASSIGN_OR_RETURN(const uint64_t v, f.GetUint(p + key, 0, kMaxDim));
    if (int64_t(v) != c.head_dim) {
      return UnimplementedError(GotWant(
          file + ": " + p + key, std::to_string(v),
          "the head dimension " + std::to_string(c.head_dim) +
              " (partial rotary and value heads of another size are not "
              "supported)"));
    }
  }
  LP_ASSIGN_OR_RETURN(const double eps,
                      f.GetFloat(p + "attention.layer_norm_rms_epsilon"));
  c.rms_norm_eps = ShortestDecimal(float(eps));
  c.rope_theta = 10000.0;  // llama.cpp's default
  if (f.Has(p + "rope.freq_base")) {
    LP_ASSIGN_OR_RETURN(const double theta, f.GetFloat(p + "rope.freq_base"));
    c.rope_theta = ShortestDecimal(float(theta));
  }
  // The vocabulary is the embedding's row count.
  const auto embd = f.tensors().find("token_embd.weight");
  if (embd == f.tensors().end() || embd->second.shape.size() != 2) {
    return InvalidArgument(file +
                           ": tensor token_embd.weight: missing or "
                           "not a matrix, want [vocab, " +
                           p + "embedding_length]");
  }
  c.vocab_size = embd->second.shape[0];
  for (const std::string& key :
       {p + "vocab_size", std::string("tokenizer.ggml.tokens")}) {
    if (!f.Has(key)) continue;
    const GgufValue& v = f.metadata().at(key);
    const std::optional<uint64_t> n =
        v.type() == GgufValueType::kArray ? v.array_size() : v.AsUint();
    if (!n || int64_t(*n) != c.vocab_size) {
      return InvalidArgument(GotWant(
          file + ": " + key,
          n ? std::to_string(*n) +
                  (v.type() == GgufValueType::kArray ? " tokens" : "")
            : "a value of another type",
          std::to_string(c.vocab_size) + ", the rows of token_embd.weight"));
    }
  }
  c.tie_word_embeddings = f.tensors().count("output.weight") == 0;
  LP_RETURN_IF_ERROR(ReadRopeScaling(f, arch, &c));
  LP_RETURN_IF_ERROR(ReadTokenIds(f, &c));
  // The rest of config.json's rules (ranges, head_dim even, the
  // architecture's variants), from their one home.
  return ParseModelConfig(WriteModelConfig(c),
                          file + " (GGUF metadata as config.json)");
}

}  // namespace

std::optional<std::string> HfTensorName(std::string_view gguf_name) {
  for (const NamePair& n : kGlobalNames) {
    if (gguf_name == n.gguf) return std::string(n.hf);
  }
  const auto split = SplitLayer(gguf_name, "blk.");
  if (!split) return std::nullopt;
  for (const NamePair& n : kBlockNames) {
    if (split->second == n.gguf) {
      return "model.layers." + split->first + "." + n.hf;
    }
  }
  return std::nullopt;
}

std::optional<std::string> GgufTensorName(std::string_view hf_name) {
  for (const NamePair& n : kGlobalNames) {
    if (hf_name == n.hf) return std::string(n.gguf);
  }
  const auto split = SplitLayer(hf_name, "model.layers.");
  if (!split) return std::nullopt;
  for (const NamePair& n : kBlockNames) {
    if (split->second == n.hf) return "blk." + split->first + "." + n.gguf;
  }
  return std::nullopt;
}

void PermuteQkRows(const unsigned char* in, int64_t n_rows, uint64_t row_bytes,
                   int64_t n_head, bool inverse, unsigned char* out) {
  const int64_t d = n_rows / n_head, half = d / 2;
  for (int64_t h = 0; h < n_head; ++h) {
    for (int64_t i = 0; i < half; ++i) {
      for (int64_t j = 0; j < 2; ++j) {
        const int64_t gguf_row = h * d + 2 * i + j;
        const int64_t hf_row = h * d + j * half + i;
        const int64_t to = inverse ? hf_row : gguf_row;
        const int64_t from = inverse ? gguf_row : hf_row;
        std::memcpy(out + uint64_t(to) * row_bytes,
                    in + uint64_t(from) * row_bytes, row_bytes);
      }
    }
  }
}

namespace {

StatusOr<GgufModelParts> ReadGgufModelUnescaped(const GgufFile& f) {
  const std::string& file = f.path();
  GgufModelParts parts;
  LP_ASSIGN_OR_RETURN(parts.config, ReadConfig(f));
  const ModelConfig& c = parts.config;
  LP_ASSIGN_OR_RETURN(const std::string arch,
                      f.GetString("general.architecture"));
  for (const auto& [name, view] : f.tensors()) {
    if (name == kRopeFreqs) continue;  // read by ReadRopeScaling
    const std::optional<std::string> hf = HfTensorName(name);
    if (!hf) {
      return InvalidArgument(file + ": tensor " + name +
                             ": unexpected tensor, not part of a " + arch +
                             " model");
    }
    TensorView v = view;
    v.name = *hf;
    parts.tensors.emplace(*hf, std::move(v));
  }
  LP_RETURN_IF_ERROR(CheckModelTensors(
      c, parts.tensors, GgufFieldNames(arch),
      [&](const std::string& name, const TensorView*) {
        return file + ": tensor " + GgufTensorName(name).value_or(name) + " (" +
               name + ")";
      }));
  for (auto& [name, t] : parts.tensors) {
    int64_t n_head = 0;
    if (!NeedsPermute(c, name, &n_head)) continue;
    auto buf = std::make_unique<unsigned char[]>(size_t(t.bytes));
    PermuteQkRows(t.data, t.shape[0], t.bytes / uint64_t(t.shape[0]), n_head,
                  /*inverse=*/true, buf.get());
    t.data = buf.get();
    parts.owned.push_back(std::move(buf));
  }
  return parts;
}

}  // namespace

StatusOr<GgufModelParts> ReadGgufModel(const GgufFile& f) {
  return PrintableStatus(ReadGgufModelUnescaped(f));
}

// --- Writing ---------------------------------------------------------------

namespace {

// llama.cpp's llama_ftype for a file whose matrices are `t`.
uint32_t FileType(DType t) {
  switch (t) {
    case DType::kF32:
      return 0;  // ALL_F32
    case DType::kF16:
      return 1;  // MOSTLY_F16
    case DType::kQ4_0:
      return 2;  // MOSTLY_Q4_0
    case DType::kQ8_0:
      return 7;  // MOSTLY_Q8_0
    case DType::kQ4_K:
      return 14;  // MOSTLY_Q4_K_S
    case DType::kQ6_K:
      return 18;  // MOSTLY_Q6_K
    case DType::kBF16:
      return 32;  // MOSTLY_BF16
  }
  return 0;
}

// The type of a matrix with `cols` columns: `want`, or its fallback.
StatusOr<DType> MatrixType(DType want, int64_t cols, bool fallback,
                           const std::string& where) {
  DType t = want;
  while (cols % BlockElems(t) != 0) {
    if (!fallback) {
      return InvalidArgument(where + ": row length " + std::to_string(cols) +
                             " is not a multiple of " +
                             std::to_string(BlockElems(t)) + ", the " +
                             std::string(DTypeName(t)) + " block size");
    }
    t = t == DType::kQ4_K   ? DType::kQ4_0
        : t == DType::kQ6_K ? DType::kQ8_0
                            : DType::kF16;
  }
  return t;
}

// Row r of t (rows of `cols` elements) widened to fp32.
void LoadRow(const TensorView& t, int64_t r, int64_t cols, float* out) {
  const unsigned char* row =
      t.data + uint64_t(r) * uint64_t(RowBytes(t.dtype, cols));
  if (IsBlockQuantized(t.dtype)) {
    quant::DequantizeRow(t.dtype, row, cols, out);
    return;
  }
  for (int64_t i = 0; i < cols; ++i) out[i] = LoadAsFloat(row, t.dtype, i);
}

struct Planned {
  std::string hf, gguf;
  const TensorView* src;
  DType type;
  std::vector<int64_t> shape;
};

// The tensors in llama.cpp's order: embeddings, blocks, final norm, head.
std::vector<std::string> WriteOrder(const ModelConfig& c) {
  std::vector<std::string> out = {"model.embed_tokens.weight"};
  const std::vector<std::string> all = ExpectedTensorNames(c);
  const std::set<std::string> present(all.begin(), all.end());
  for (int64_t l = 0; l < c.num_layers; ++l) {
    const std::string p = "model.layers." + std::to_string(l) + ".";
    for (const NamePair& n : kBlockNames) {
      if (present.count(p + n.hf)) out.push_back(p + n.hf);
    }
  }
  out.push_back("model.norm.weight");
  if (!c.tie_word_embeddings) out.push_back("lm_head.weight");
  return out;
}

void SetConfigMetadata(const ModelConfig& c, const std::string& arch,
                       DType type, const GgufExportOptions& o, GgufWriter* w) {
  const std::string p = arch + ".";
  w->SetString("general.architecture", arch);
  w->SetString("general.type", "model");
  w->SetString("general.name", o.name);
  w->SetUint32("general.file_type", FileType(type));
  if (IsBlockQuantized(type)) w->SetUint32("general.quantization_version", 2);
  w->SetUint32(p + "vocab_size", uint32_t(c.vocab_size));
  w->SetUint32(p + "context_length", uint32_t(c.max_positions));
  w->SetUint32(p + "embedding_length", uint32_t(c.hidden_size));
  w->SetUint32(p + "block_count", uint32_t(c.num_layers));
  w->SetUint32(p + "feed_forward_length", uint32_t(c.intermediate_size));
  w->SetUint32(p + "attention.head_count", uint32_t(c.num_heads));
  w->SetUint32(p + "attention.head_count_kv", uint32_t(c.num_kv_heads));
  w->SetUint32(p + "attention.key_length", uint32_t(c.head_dim));
  w->SetUint32(p + "attention.value_length", uint32_t(c.head_dim));
  w->SetUint32(p + "rope.dimension_count", uint32_t(c.head_dim));
  w->SetFloat32(p + "rope.freq_base", float(c.rope_theta));
  w->SetFloat32(p + "attention.layer_norm_rms_epsilon", float(c.rms_norm_eps));
  if (c.rope_scaling.type == RopeScaling::Type::kLlama3) {
    w->SetUint32(p + "rope.scaling.original_context_length",
                 uint32_t(c.rope_scaling.original_max_positions));
  }
  if (c.bos_token_id >= 0) {
    w->SetUint32("tokenizer.ggml.bos_token_id", uint32_t(c.bos_token_id));
  }
  const char* kEosKeys[] = {"tokenizer.ggml.eos_token_id",
                            "tokenizer.ggml.eot_token_id",
                            "tokenizer.ggml.eom_token_id"};
  for (size_t i = 0; i < c.eos_token_ids.size() && i < 3; ++i) {
    w->SetUint32(kEosKeys[i], uint32_t(c.eos_token_ids[i]));
  }
}

// tokenizer.ggml.* from o.tokenizer, padded to the vocabulary.
Status SetTokenizerMetadata(const ModelConfig& c, const GgufTokenizerKeys& t,
                            const std::string& out_path, GgufWriter* w) {
  if (t.token_types.size() != t.tokens.size()) {
    return InvalidArgument(out_path + ": tokenizer.ggml.token_type: " +
                           std::to_string(t.token_types.size()) +
                           " entries, want one per token (" +
                           std::to_string(t.tokens.size()) + ")");
  }
  if (int64_t(t.tokens.size()) > c.vocab_size) {
    return InvalidArgument(out_path + ": tokenizer.ggml.tokens: " +
                           std::to_string(t.tokens.size()) +
                           " tokens, more than the model's vocab_size " +
                           std::to_string(c.vocab_size));
  }
  if (t.add_bos && t.bos_id != c.bos_token_id) {
    return InvalidArgument(out_path +
                           ": tokenizer.ggml.add_bos_token: the "
                           "tokenizer adds token " +
                           std::to_string(t.bos_id) +
                           ", but the config's bos_token_id is " +
                           std::to_string(c.bos_token_id));
  }
  if (t.add_eos &&
      (c.eos_token_ids.empty() || t.eos_id != c.eos_token_ids[0])) {
    return InvalidArgument(out_path +
                           ": tokenizer.ggml.add_eos_token: the "
                           "tokenizer adds token " +
                           std::to_string(t.eos_id) +
                           ", which is not the config's first eos_token_id");
  }
  constexpr int32_t kUnusedToken = 5;
  std::vector<std::string> tokens = t.tokens;
  std::vector<int32_t> types = t.token_types;
  for (int64_t i = int64_t(tokens.size()); i < c.vocab_size; ++i) {
    tokens.push_back("[PAD" + std::to_string(i) + "]");
    types.push_back(kUnusedToken);
  }
  w->SetString("tokenizer.ggml.model", t.model);
  w->SetString("tokenizer.ggml.pre", t.pre);
  w->SetStringArray("tokenizer.ggml.tokens", tokens);
  w->SetInt32Array("tokenizer.ggml.token_type", types);
  if (!t.merges.empty()) w->SetStringArray("tokenizer.ggml.merges", t.merges);
  w->SetBool("tokenizer.ggml.add_bos_token", t.add_bos);
  w->SetBool("tokenizer.ggml.add_eos_token", t.add_eos);
  if (t.chat_template.has_value()) {
    w->SetString("tokenizer.chat_template", *t.chat_template);
  }
  return OkStatus();
}

// Streams one tensor's rows (permuted for llama q/k) through QuantizeRow.
Status WriteRows(const ModelConfig& c, const Planned& t,
                 const std::string& out_path, GgufWriter* w) {
  const TensorView& src = *t.src;
  const int64_t cols = t.shape.back();
  const int64_t rows = t.shape.size() == 2 ? t.shape[0] : 1;
  int64_t n_head = 0;
  const bool permute = NeedsPermute(c, t.hf, &n_head);
  // A vector is permuted element by element: rows of one.
  const int64_t unit = permute && t.shape.size() == 1 ? 1 : cols;
  const int64_t units = rows * cols / unit;
  const int64_t d = permute ? units / n_head : 0;
  std::vector<float> x(static_cast<size_t>(unit));
  std::vector<unsigned char> y(static_cast<size_t>(RowBytes(t.type, unit)));
  TensorView flat = src;  // the same bytes as rows of `unit`
  for (int64_t g = 0; g < units; ++g) {
    int64_t r = g;
    if (permute) {  // GGUF row h*d + 2i + j holds HF row h*d + j*d/2 + i
      const int64_t h = g / d, i = (g % d) / 2, j = g % 2;
      r = h * d + j * (d / 2) + i;
    }
    if (src.dtype == t.type) {
      LP_RETURN_IF_ERROR(
          w->AppendTensorData(src.data + uint64_t(r) * y.size(), y.size()));
      continue;
    }
    LoadRow(flat, r, unit, x.data());
    const Status s = QuantizeRow(t.type, x.data(), unit, y.data());
    if (!s.ok()) {
      return InvalidArgument(out_path + ": " + t.hf + ": row " +
                             std::to_string(r) + ": " + s.message());
    }
    LP_RETURN_IF_ERROR(w->AppendTensorData(y.data(), y.size()));
  }
  return OkStatus();
}

}  // namespace

Status WriteGgufModel(const ModelConfig& c,
                      const std::map<std::string, TensorView>& tensors,
                      DType type, const std::string& out_path,
                      const GgufExportOptions& options) {
  if (!IsKnownDType(type)) {
    return InvalidArgument(out_path + ": unknown tensor type");
  }
  const bool llama = c.model_type == "llama" || c.model_type == "mistral";
  const std::string arch = llama ? "llama" : c.model_type;
  if (!llama && arch != "qwen2" && arch != "qwen3") {
    return UnimplementedError(out_path + ": model_type " + c.model_type +
                              ": want llama, mistral, qwen2 or qwen3");
  }
  if (c.eos_token_ids.size() > 3) {
    return UnimplementedError(
        out_path + ": " + std::to_string(c.eos_token_ids.size()) +
        " eos_token_ids: GGUF holds at most three (eos, eot, eom)");
  }
  std::vector<float> rope_freqs;
  if (c.rope_scaling.type == RopeScaling::Type::kLlama3) {
    const RopeScaling& s = c.rope_scaling;
    if (!llama || s.low_freq_factor != kLlama3LowFreqFactor ||
        s.high_freq_factor != kLlama3HighFreqFactor) {
      return UnimplementedError(
          out_path +
          ": rope_scaling: llama3 with low_freq_factor 1 and "
          "high_freq_factor 4 on a llama model is the only RoPE "
          "scaling a GGUF file can carry");
    }
    LP_ASSIGN_OR_RETURN(std::vector<double> f,
                        Llama3Factors(c.head_dim, c.rope_theta, s.factor,
                                      s.original_max_positions));
    for (double v : f) rope_freqs.push_back(float(v));
  }
  std::map<std::string, ExpectedTensor> expected;
  for (ExpectedTensor& e : ExpectedTensors(c, GgufFieldNames(arch))) {
    expected.emplace(e.name, std::move(e));
  }
  for (const auto& [name, t] : tensors) {
    if (!expected.count(name)) {
      return InvalidArgument(out_path + ": " + name +
                             ": unexpected tensor for this config");
    }
  }
  std::vector<Planned> plan;
  for (const std::string& hf : WriteOrder(c)) {
    const auto it = tensors.find(hf);
    if (it == tensors.end()) {
      return InvalidArgument(out_path + ": " + hf + ": missing tensor");
    }
    const TensorView& t = it->second;
    const std::vector<int64_t>& shape = expected.at(hf).shape;
    const std::string& why = expected.at(hf).why;
    const int64_t rows = shape.size() == 2 ? shape[0] : 1;
    if (t.shape != shape || !IsKnownDType(t.dtype) ||
        shape.back() % BlockElems(t.dtype) != 0 ||
        t.bytes != uint64_t(rows) * uint64_t(RowBytes(t.dtype, shape.back()))) {
      return InvalidArgument(
          out_path + ": " + hf + ": shape " + ShapeText(t.shape) + " of " +
          std::string(DTypeName(t.dtype)) + " in " + std::to_string(t.bytes) +
          " bytes, want " + ShapeText(shape) + " " + why);
    }
    if (shape.size() == 1 && IsBlockQuantized(t.dtype)) {
      return InvalidArgument(out_path + ": " + hf + ": a vector in " +
                             std::string(DTypeName(t.dtype)) +
                             ", want F32, F16 or BF16");
    }
    Planned p{hf, *GgufTensorName(hf), &t, DType::kF32, shape};
    if (shape.size() == 2) {
      LP_ASSIGN_OR_RETURN(p.type, MatrixType(type, shape[1], options.fallback,
                                             out_path + ": " + hf));
    }
    plan.push_back(std::move(p));
  }
  GgufWriter w;
  SetConfigMetadata(c, arch, type, options, &w);
  if (options.tokenizer.has_value()) {
    LP_RETURN_IF_ERROR(
        SetTokenizerMetadata(c, *options.tokenizer, out_path, &w));
  }
  for (size_t i = 0; i < plan.size(); ++i) {
    w.Declare(plan[i].gguf, plan[i].type, plan[i].shape);
    if (i == 0 && !rope_freqs.empty()) {
      w.Declare(kRopeFreqs, DType::kF32, {int64_t(rope_freqs.size())});
    }
  }
  LP_RETURN_IF_ERROR(w.Begin(out_path));
  for (size_t i = 0; i < plan.size(); ++i) {
    LP_RETURN_IF_ERROR(WriteRows(c, plan[i], out_path, &w));
    if (i == 0 && !rope_freqs.empty()) {
      LP_RETURN_IF_ERROR(
          w.WriteTensorData(rope_freqs.data(), rope_freqs.size() * 4));
    }
  }
  return w.Finish();
}

Status WriteGgufModel(const Model& model, DType type,
                      const std::string& out_path,
                      const GgufExportOptions& options) {
  return WriteGgufModel(model.config(), model.tensors(), type, out_path,
                        options);
}

}  // namespace layerproof::kernels::model
