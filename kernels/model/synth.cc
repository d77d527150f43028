#include "kernels/model/synth.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "kernels/model/model.h"
#include "kernels/model/safetensors.h"
#include "kernels/philox.h"
#include "kernels/sha256.h"

namespace layerproof::kernels::model {
namespace {

ModelConfig Llama(int64_t hidden, int64_t layers, int64_t heads,
                  int64_t kv_heads, int64_t ffn, int64_t vocab, bool tied) {
  ModelConfig c;
  c.architecture = "LlamaForCausalLM";
  c.model_type = "llama";
  c.hidden_size = hidden;
  c.intermediate_size = ffn;
  c.num_layers = layers;
  c.num_heads = heads;
  c.num_kv_heads = kv_heads;
  c.head_dim = hidden / heads;
  c.vocab_size = vocab;
  c.max_positions = 2048;
  c.rms_norm_eps = 1e-5;
  c.rope_theta = 10000.0;
  c.tie_word_embeddings = tied;
  // The synthetic tokenizer's specials are its last two ids.
  c.bos_token_id = static_cast<int32_t>(vocab - 2);
  c.eos_token_ids = {static_cast<int32_t>(vocab - 1)};
  return c;
}

// Qwen3's shape: per-head q/k norms, a head_dim other than hidden / heads,
// tied embeddings, Qwen3's eps and RoPE base.
ModelConfig Qwen3(int64_t hidden, int64_t layers, int64_t heads,
                  int64_t kv_heads, int64_t head_dim, int64_t ffn,
                  int64_t vocab) {
  ModelConfig c = Llama(hidden, layers, heads, kv_heads, ffn, vocab, true);
  c.architecture = "Qwen3ForCausalLM";
  c.model_type = "qwen3";
  c.head_dim = head_dim;
  c.qk_norm = true;
  c.rms_norm_eps = 1e-6;
  c.rope_theta = 1000000.0;
  return c;
}

// The tensor's shape and the standard deviation of its values (0 for a norm
// gamma: 1 + U(-0.1, 0.1)).
struct TensorPlan {
  std::string name;
  std::vector<int64_t> shape;
  double stddev;
};

std::vector<TensorPlan> Plan(const ModelConfig& c) {
  const int64_t h = c.hidden_size, f = c.intermediate_size;
  const int64_t qd = c.num_heads * c.head_dim;
  const int64_t kvd = c.num_kv_heads * c.head_dim;
  const double out_scale = 1.0 / std::sqrt(2.0 * c.num_layers);
  std::vector<TensorPlan> plan;
  // Tied embeddings double as the LM head, so keep their logits O(1).
  plan.push_back({"model.embed_tokens.weight",
                  {c.vocab_size, h},
                  c.tie_word_embeddings ? 1.0 / std::sqrt(double(h)) : 0.5});
  plan.push_back({"model.norm.weight", {h}, 0.0});
  if (!c.tie_word_embeddings) {
    plan.push_back(
        {"lm_head.weight", {c.vocab_size, h}, 1.0 / std::sqrt(double(h))});
  }
  for (int64_t l = 0; l < c.num_layers; ++l) {
    const std::string p = "model.layers." + std::to_string(l) + ".";
    const double in_h = 1.0 / std::sqrt(double(h));
    plan.push_back({p + "input_layernorm.weight", {h}, 0.0});
    plan.push_back({p + "post_attention_layernorm.weight", {h}, 0.0});
    plan.push_back({p + "self_attn.q_proj.weight", {qd, h}, in_h});
    plan.push_back({p + "self_attn.k_proj.weight", {kvd, h}, in_h});
    plan.push_back({p + "self_attn.v_proj.weight", {kvd, h}, in_h});
    plan.push_back({p + "self_attn.o_proj.weight",
                    {h, qd},
                    out_scale / std::sqrt(double(qd))});
    if (c.qk_norm) {
      plan.push_back({p + "self_attn.q_norm.weight", {c.head_dim}, 0.0});
      plan.push_back({p + "self_attn.k_norm.weight", {c.head_dim}, 0.0});
    }
    if (c.qkv_bias) {
      plan.push_back({p + "self_attn.q_proj.bias", {qd}, 0.1});
      plan.push_back({p + "self_attn.k_proj.bias", {kvd}, 0.1});
      plan.push_back({p + "self_attn.v_proj.bias", {kvd}, 0.1});
    }
    plan.push_back({p + "mlp.gate_proj.weight", {f, h}, in_h});
    plan.push_back({p + "mlp.up_proj.weight", {f, h}, in_h});
    plan.push_back(
        {p + "mlp.down_proj.weight", {h, f}, out_scale / std::sqrt(double(f))});
  }
  return plan;
}

int64_t Elements(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

// Values of one tensor: Philox keyed by the seed, the counter's third word
// a hash of the tensor's name, so a tensor's values do not depend on which
// other tensors the model has.
std::vector<float> Values(const TensorPlan& t, uint64_t seed) {
  const Sha256Digest name_hash = Sha256::Hash(t.name.data(), t.name.size());
  const uint32_t name_word =
      uint32_t{name_hash[0]} | uint32_t{name_hash[1]} << 8 |
      uint32_t{name_hash[2]} << 16 | uint32_t{name_hash[3]} << 24;
  const PhiloxKey key = {static_cast<uint32_t>(seed),
                         static_cast<uint32_t>(seed >> 32)};
  // Uniform on (-a, a) has standard deviation a / sqrt(3).
  const bool gamma = t.stddev == 0.0;
  const float a = gamma ? 0.1f : static_cast<float>(t.stddev * std::sqrt(3.0));
  const int64_t n = Elements(t.shape);
  std::vector<float> v(n);
  for (int64_t i = 0; i < n; i += 4) {
    const uint64_t block = static_cast<uint64_t>(i / 4);
    const PhiloxCounter r =
        Philox4x32({static_cast<uint32_t>(block),
                    static_cast<uint32_t>(block >> 32), name_word, 0x4c50u},
                   key);
    for (int64_t j = 0; j < 4 && i + j < n; ++j) {
      const float u = 2.0f * UniformFloat(r[j]) - 1.0f;  // exact
      v[i + j] = gamma ? 1.0f + u * a : u * a;
    }
  }
  return v;
}

Status WriteText(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) return Internal("synth: cannot write " + path.string());
  return OkStatus();
}

}  // namespace

StatusOr<ModelConfig> SynthPreset(std::string_view preset) {
  if (preset == "tiny") return Llama(128, 4, 4, 2, 352, 1024, false);
  if (preset == "small") return Llama(512, 8, 8, 2, 1408, 8192, true);
  if (preset == "medium") return Llama(2048, 16, 32, 8, 5632, 32000, false);
  if (preset == "qwen3-tiny") return Qwen3(128, 4, 4, 2, 64, 352, 1024);
  return InvalidArgument("--preset: got \"" + std::string(preset) +
                         "\", want tiny, small, medium or qwen3-tiny");
}

int64_t ParameterCount(const ModelConfig& config) {
  int64_t n = 0;
  for (const TensorPlan& t : Plan(config)) n += Elements(t.shape);
  return n;
}

Status SynthesizeModel(const ModelConfig& config, const SynthOptions& options,
                       const std::string& out_dir) {
  // The config must be one the loader accepts.
  LP_ASSIGN_OR_RETURN(
      ModelConfig checked,
      ParseModelConfig(WriteModelConfig(config), "config.json"));
  if (checked.vocab_size < 512) {
    return InvalidArgument("synth: vocab_size must be >= 512");
  }
  std::error_code ec;
  std::filesystem::create_directories(out_dir, ec);
  if (ec)
    return Internal("synth: cannot create " + out_dir + ": " + ec.message());
  const std::filesystem::path dir(out_dir);
  // A stale digest cache or index from an earlier model must not survive.
  std::filesystem::remove(dir / kDigestCacheFile, ec);
  std::filesystem::remove(dir / "model.safetensors.index.json", ec);

  std::vector<TensorPlan> plan = Plan(checked);
  SafetensorsWriter writer;
  writer.SetMetadata("format", "pt");
  for (const TensorPlan& t : plan)
    writer.Declare(t.name, options.dtype, t.shape);
  LP_RETURN_IF_ERROR(writer.Begin((dir / "model.safetensors").string()));
  const int64_t total = ParameterCount(checked);
  int64_t done = 0;
  for (const TensorPlan& t : plan) {
    const std::vector<unsigned char> bytes =
        EncodeWeights(Values(t, options.seed), options.dtype);
    LP_RETURN_IF_ERROR(writer.WriteTensorData(bytes.data(), bytes.size()));
    done += Elements(t.shape);
    if (options.progress) options.progress(done, total);
  }
  LP_RETURN_IF_ERROR(writer.Finish());
  return WriteText(dir / "config.json", WriteModelConfig(checked));
}

}  // namespace layerproof::kernels::model
