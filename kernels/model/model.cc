#include "kernels/model/model.h"

#include <algorithm>
#include <set>
#include <string_view>
#include <utility>

#include "kernels/model/internal/errors.h"
#include "kernels/model/internal/file_io.h"
#include "kernels/model/json_fields.h"

namespace layerproof::kernels::model {
namespace {

using internal::JoinPath;
using internal::Json;

constexpr char kConfigFile[] = "config.json";
constexpr char kGenerationConfigFile[] = "generation_config.json";
constexpr char kSingleFile[] = "model.safetensors";
constexpr char kIndexFile[] = "model.safetensors.index.json";
constexpr uint64_t kMaxJsonFileBytes = 64ull << 20;

// A tensor the config requires, with the config fields its shape comes from
// (for error messages).
struct ExpectedTensor {
  std::string name;
  std::vector<int64_t> shape;
  std::string why;
};

std::string ShapeText(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

std::vector<ExpectedTensor> ExpectedTensors(const ModelConfig& c) {
  const int64_t h = c.hidden_size, q = c.num_heads * c.head_dim,
                kv = c.num_kv_heads * c.head_dim, in = c.intermediate_size;
  const std::string hs = "hidden_size " + std::to_string(h);
  const std::string is = "intermediate_size " + std::to_string(in);
  const std::string qs = "num_attention_heads " + std::to_string(c.num_heads) +
                         " x head_dim " + std::to_string(c.head_dim);
  const std::string kvs = "num_key_value_heads " +
                          std::to_string(c.num_kv_heads) + " x head_dim " +
                          std::to_string(c.head_dim);
  auto why = [](const std::string& a, const std::string& b = "") {
    return "(config " + a + (b.empty() ? "" : ", " + b) + ")";
  };
  const std::string vs = "vocab_size " + std::to_string(c.vocab_size);
  std::vector<ExpectedTensor> out = {
      {"model.embed_tokens.weight", {c.vocab_size, h}, why(vs, hs)},
      {"model.norm.weight", {h}, why(hs)},
  };
  if (!c.tie_word_embeddings) {
    out.push_back({"lm_head.weight", {c.vocab_size, h}, why(vs, hs)});
  }
  for (int64_t l = 0; l < c.num_layers; ++l) {
    const std::string p = "model.layers." + std::to_string(l) + ".";
    out.push_back({p + "input_layernorm.weight", {h}, why(hs)});
    out.push_back({p + "self_attn.q_proj.weight", {q, h}, why(qs, hs)});
    out.push_back({p + "self_attn.k_proj.weight", {kv, h}, why(kvs, hs)});
    out.push_back({p + "self_attn.v_proj.weight", {kv, h}, why(kvs, hs)});
    out.push_back({p + "self_attn.o_proj.weight", {h, q}, why(hs, qs)});
    if (c.qkv_bias) {
      out.push_back({p + "self_attn.q_proj.bias", {q}, why(qs)});
      out.push_back({p + "self_attn.k_proj.bias", {kv}, why(kvs)});
      out.push_back({p + "self_attn.v_proj.bias", {kv}, why(kvs)});
    }
    if (c.qk_norm) {
      const std::string ds = "head_dim " + std::to_string(c.head_dim);
      out.push_back({p + "self_attn.q_norm.weight", {c.head_dim}, why(ds)});
      out.push_back({p + "self_attn.k_norm.weight", {c.head_dim}, why(ds)});
    }
    out.push_back({p + "post_attention_layernorm.weight", {h}, why(hs)});
    out.push_back({p + "mlp.gate_proj.weight", {in, h}, why(is, hs)});
    out.push_back({p + "mlp.up_proj.weight", {in, h}, why(is, hs)});
    out.push_back({p + "mlp.down_proj.weight", {h, in}, why(hs, is)});
  }
  return out;
}

// model.layers.{i}.self_attn.rotary_emb.inv_freq: a buffer old Llama
// checkpoints saved; the engine computes RoPE itself, so it is skipped.
bool IsIgnoredBuffer(std::string_view name) {
  constexpr std::string_view kPrefix = "model.layers.";
  constexpr std::string_view kSuffix = ".self_attn.rotary_emb.inv_freq";
  if (name.size() <= kPrefix.size() + kSuffix.size() ||
      name.substr(0, kPrefix.size()) != kPrefix ||
      name.substr(name.size() - kSuffix.size()) != kSuffix) {
    return false;
  }
  const std::string_view layer = name.substr(
      kPrefix.size(), name.size() - kPrefix.size() - kSuffix.size());
  return std::all_of(layer.begin(), layer.end(),
                     [](char ch) { return ch >= '0' && ch <= '9'; });
}

// Adds the tensors of `file` to `tensors`, refusing one already there.
Status MergeTensors(const SafetensorsFile& file,
                    std::map<std::string, TensorView>* tensors) {
  for (const auto& [name, t] : file.tensors()) {
    if (IsIgnoredBuffer(name)) continue;
    const auto [it, inserted] = tensors->emplace(name, t);
    if (!inserted) {
      return InvalidArgument(name + ": tensor is in two shards, " +
                             it->second.file + " and " + t.file);
    }
  }
  return OkStatus();
}

// The shard index: {"metadata": ..., "weight_map": {tensor: file}}.
StatusOr<std::map<std::string, std::string>> ReadWeightMap(
    const std::string& path) {
  LP_ASSIGN_OR_RETURN(std::string text,
                      internal::ReadSmallFile(path, kMaxJsonFileBytes));
  LP_ASSIGN_OR_RETURN(Json index, internal::ParseJson(text, path));
  if (!index.is_object()) {
    return InvalidArgument(internal::GotWant(
        path, internal::DescribeJson(index), "a JSON object"));
  }
  const internal::FieldReader r(index, path);
  const Json* map = r.Find("weight_map");
  if (map == nullptr || !map->is_object()) {
    return InvalidArgument(internal::GotWant(
        r.Where("weight_map"), map ? internal::DescribeJson(*map) : "nothing",
        "an object {tensor: file}"));
  }
  std::map<std::string, std::string> out;
  for (const auto& [tensor, file] : map->items()) {
    const std::string where = r.Where("weight_map") + ": " + tensor;
    // Shards live beside the index: a plain file name, nothing above it.
    if (!file.is_string() || file.get<std::string>().empty() ||
        file.get<std::string>().find('/') != std::string::npos ||
        file.get<std::string>() == "." || file.get<std::string>() == "..") {
      return InvalidArgument(
          internal::GotWant(where, internal::DescribeJson(file),
                            "the file name of a shard in the model directory"));
    }
    out[tensor] = file.get<std::string>();
  }
  return out;
}

// Opens the shards the index names and checks that every tensor is in
// exactly one shard, the one the index names. `names` gets the shard file
// names, sorted.
Status OpenShards(const std::string& dir,
                  std::vector<std::unique_ptr<SafetensorsFile>>* files,
                  std::map<std::string, TensorView>* tensors,
                  std::vector<std::string>* names) {
  const std::string index_path = JoinPath(dir, kIndexFile);
  LP_ASSIGN_OR_RETURN(auto weight_map, ReadWeightMap(index_path));
  std::map<std::string, std::string> first_tensor;  // shard -> a tensor in it
  for (const auto& [tensor, shard] : weight_map) {
    first_tensor.emplace(shard, tensor);
  }
  std::map<std::string, std::string> found;  // tensor -> shard holding it
  for (const auto& [shard, tensor] : first_tensor) {
    const std::string path = JoinPath(dir, shard);
    if (!internal::IsRegularFile(path)) {
      return internal::NotFoundError(index_path + ": weight_map: " + tensor +
                                     ": shard \"" + shard +
                                     "\" does not exist (" + path + ")");
    }
    LP_ASSIGN_OR_RETURN(std::unique_ptr<SafetensorsFile> f,
                        SafetensorsFile::Open(path));
    for (const auto& [name, t] : f->tensors()) {
      if (IsIgnoredBuffer(name)) continue;
      const auto [it, inserted] = found.emplace(name, shard);
      if (!inserted) {
        return InvalidArgument(name + ": tensor is in two shards, " +
                               JoinPath(dir, it->second) + " and " + path);
      }
    }
    files->push_back(std::move(f));
    names->push_back(shard);
  }
  for (const auto& [name, shard] : found) {
    const std::string path = JoinPath(dir, shard);
    const auto it = weight_map.find(name);
    if (it == weight_map.end()) {
      return InvalidArgument(path + ": " + name + ": tensor is not in " +
                             index_path + "'s weight_map");
    }
    if (it->second != shard) {
      return InvalidArgument(path + ": " + name +
                             ": tensor is in this shard, but the index's "
                             "weight_map puts it in " +
                             it->second);
    }
  }
  for (const auto& [tensor, shard] : weight_map) {
    if (!IsIgnoredBuffer(tensor) && !found.count(tensor)) {
      return InvalidArgument(index_path + ": weight_map: " + tensor +
                             ": the index puts it in " + shard +
                             ", which has no such tensor");
    }
  }
  for (const auto& f : *files) LP_RETURN_IF_ERROR(MergeTensors(*f, tensors));
  return OkStatus();
}

// Every expected tensor present with its shape, and nothing else.
Status CheckTensors(const std::string& dir, const ModelConfig& c,
                    const std::map<std::string, TensorView>& tensors) {
  const std::vector<ExpectedTensor> expected = ExpectedTensors(c);
  std::set<std::string> expected_names;
  for (const ExpectedTensor& e : expected) {
    expected_names.insert(e.name);
    const auto it = tensors.find(e.name);
    if (it == tensors.end()) {
      return InvalidArgument(dir + ": " + e.name + ": missing tensor, want " +
                             "shape " + ShapeText(e.shape) + " " + e.why);
    }
    const TensorView& t = it->second;
    if (t.shape != e.shape) {
      return InvalidArgument(t.file + ": " + e.name + ": shape " +
                             ShapeText(t.shape) + ", want " +
                             ShapeText(e.shape) + " " + e.why);
    }
    if (t.dtype != DType::kBF16 && t.dtype != DType::kF16 &&
        t.dtype != DType::kF32) {
      return InvalidArgument(t.file + ": " + e.name +
                             ": dtype: want BF16, F16 or F32");
    }
  }
  for (const auto& [name, t] : tensors) {
    if (!expected_names.count(name)) {
      return InvalidArgument(
          t.file + ": " + name + ": unexpected tensor, not part of " +
          c.architecture + " with this config (num_hidden_layers " +
          std::to_string(c.num_layers) + ", tie_word_embeddings " +
          (c.tie_word_embeddings ? "true" : "false") + ", q/k/v bias " +
          (c.qkv_bias ? "yes" : "no") + ")");
    }
  }
  return OkStatus();
}

}  // namespace

std::vector<std::string> ExpectedTensorNames(const ModelConfig& config) {
  std::vector<std::string> names;
  for (ExpectedTensor& e : ExpectedTensors(config)) {
    names.push_back(std::move(e.name));
  }
  std::sort(names.begin(), names.end());
  return names;
}

StatusOr<std::unique_ptr<Model>> Model::Load(const std::string& dir,
                                             const LoadOptions& options) {
  std::unique_ptr<Model> m(new Model());
  m->dir_ = dir;
  const std::string config_path = JoinPath(dir, kConfigFile);
  LP_ASSIGN_OR_RETURN(std::string config_text,
                      internal::ReadSmallFile(config_path, kMaxJsonFileBytes));
  LP_ASSIGN_OR_RETURN(m->config_, ParseModelConfig(config_text, config_path));

  // The digest cache is keyed by every file the weights depend on.
  std::vector<std::string> keyed = {kConfigFile};
  // The stop ids, as generate() takes them (config.h): in the digest
  // through the canonical config.
  const std::string generation_path = JoinPath(dir, kGenerationConfigFile);
  if (internal::IsRegularFile(generation_path)) {
    LP_ASSIGN_OR_RETURN(
        std::string text,
        internal::ReadSmallFile(generation_path, kMaxJsonFileBytes));
    LP_RETURN_IF_ERROR(ApplyGenerationConfig(text, generation_path, &m->config_));
    keyed.push_back(kGenerationConfigFile);
  }
  // Like transformers, a single model.safetensors wins over an index.
  const std::string single_path = JoinPath(dir, kSingleFile);
  if (internal::IsRegularFile(single_path)) {
    LP_ASSIGN_OR_RETURN(std::unique_ptr<SafetensorsFile> f,
                        SafetensorsFile::Open(single_path));
    LP_RETURN_IF_ERROR(MergeTensors(*f, &m->tensors_));
    m->files_.push_back(std::move(f));
    keyed.push_back(kSingleFile);
  } else if (internal::IsRegularFile(JoinPath(dir, kIndexFile))) {
    std::vector<std::string> shards;
    LP_RETURN_IF_ERROR(OpenShards(dir, &m->files_, &m->tensors_, &shards));
    keyed.push_back(kIndexFile);
    keyed.insert(keyed.end(), shards.begin(), shards.end());
  } else {
    return internal::NotFoundError(dir + ": no " + kSingleFile + " or " +
                                   kIndexFile);
  }
  LP_RETURN_IF_ERROR(CheckTensors(dir, m->config_, m->tensors_));

  const auto& t = m->tensors_;
  m->embed_tokens_ = t.at("model.embed_tokens.weight");
  m->final_norm_ = t.at("model.norm.weight");
  m->lm_head_ = m->config_.tie_word_embeddings ? m->embed_tokens_
                                               : t.at("lm_head.weight");
  m->blocks_.resize(size_t(m->config_.num_layers));
  for (int64_t l = 0; l < m->config_.num_layers; ++l) {
    const std::string p = "model.layers." + std::to_string(l) + ".";
    BlockWeights& b = m->blocks_[size_t(l)];
    b.input_norm = t.at(p + "input_layernorm.weight");
    b.q_proj = t.at(p + "self_attn.q_proj.weight");
    b.k_proj = t.at(p + "self_attn.k_proj.weight");
    b.v_proj = t.at(p + "self_attn.v_proj.weight");
    b.o_proj = t.at(p + "self_attn.o_proj.weight");
    if (m->config_.qk_norm) {
      b.q_norm = t.at(p + "self_attn.q_norm.weight");
      b.k_norm = t.at(p + "self_attn.k_norm.weight");
    }
    if (m->config_.qkv_bias) {
      b.q_bias = t.at(p + "self_attn.q_proj.bias");
      b.k_bias = t.at(p + "self_attn.k_proj.bias");
      b.v_bias = t.at(p + "self_attn.v_proj.bias");
    }
    b.post_norm = t.at(p + "post_attention_layernorm.weight");
    b.gate_proj = t.at(p + "mlp.gate_proj.weight");
    b.up_proj = t.at(p + "mlp.up_proj.weight");
    b.down_proj = t.at(p + "mlp.down_proj.weight");
  }

  LP_ASSIGN_OR_RETURN(
      m->digest_,
      LoadOrComputeDigest(dir, keyed, m->config_, m->tensors_,
                          options.verify_digest, options.write_digest_cache,
                          options.progress));
  return m;
}

}  // namespace layerproof::kernels::model
