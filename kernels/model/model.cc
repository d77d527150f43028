#include "kernels/model/model.h"

#include <algorithm>
#include <filesystem>
#include <set>
#include <string_view>
#include <utility>

#include "kernels/model/gguf_model.h"
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
constexpr char kGgufSuffix[] = ".gguf";
constexpr uint64_t kMaxJsonFileBytes = 64ull << 20;

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

// What Load reads: a Hugging Face directory, or one GGUF file.
struct ModelSource {
  std::string dir;   // the model directory (tokenizer.json lives here)
  std::string gguf;  // the GGUF file's name in dir, or empty
};

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() &&
         s.substr(s.size() - suffix.size()) == suffix;
}

// A file must be a .gguf; a directory with config.json is a Hugging Face
// model, and one without is the single .gguf file in it.
StatusOr<ModelSource> FindModelSource(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (internal::IsRegularFile(path)) {
    if (!EndsWith(path, kGgufSuffix)) {
      return InvalidArgument(path +
                             ": a file that is not a .gguf; pass a GGUF file "
                             "or a Hugging Face model directory");
    }
    const fs::path p(path);
    const std::string parent = p.parent_path().string();
    return ModelSource{parent.empty() ? "." : parent, p.filename().string()};
  }
  if (internal::IsRegularFile(JoinPath(path, kConfigFile)) ||
      !fs::is_directory(path, ec)) {
    return ModelSource{path, ""};
  }
  std::vector<std::string> ggufs;
  for (fs::directory_iterator it(path, ec), end; !ec && it != end;
       it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (EndsWith(name, kGgufSuffix) && it->is_regular_file(ec)) {
      ggufs.push_back(name);
    }
  }
  std::sort(ggufs.begin(), ggufs.end());
  if (ggufs.size() > 1) {
    std::string list;
    for (const std::string& g : ggufs) list += (list.empty() ? "" : ", ") + g;
    return InvalidArgument(path + ": no " + kConfigFile + " and " +
                           std::to_string(ggufs.size()) + " GGUF files (" +
                           list + "); pass one of them");
  }
  if (ggufs.empty()) return ModelSource{path, ""};  // config.json's error
  return ModelSource{path, ggufs[0]};
}

}  // namespace

Status Model::ReadHfModel(const std::string& dir, Model* m,
                          std::vector<std::string>* keyed) {
  const std::string config_path = JoinPath(dir, kConfigFile);
  LP_ASSIGN_OR_RETURN(std::string config_text,
                      internal::ReadSmallFile(config_path, kMaxJsonFileBytes));
  LP_ASSIGN_OR_RETURN(m->config_, ParseModelConfig(config_text, config_path));
  keyed->push_back(kConfigFile);
  // The stop ids, as generate() takes them (config.h): in the digest
  // through the canonical config.
  const std::string generation_path = JoinPath(dir, kGenerationConfigFile);
  if (internal::IsRegularFile(generation_path)) {
    LP_ASSIGN_OR_RETURN(
        std::string text,
        internal::ReadSmallFile(generation_path, kMaxJsonFileBytes));
    LP_RETURN_IF_ERROR(
        ApplyGenerationConfig(text, generation_path, &m->config_));
    keyed->push_back(kGenerationConfigFile);
  }
  // Like transformers, a single model.safetensors wins over an index.
  const std::string single_path = JoinPath(dir, kSingleFile);
  if (internal::IsRegularFile(single_path)) {
    LP_ASSIGN_OR_RETURN(std::unique_ptr<SafetensorsFile> f,
                        SafetensorsFile::Open(single_path));
    LP_RETURN_IF_ERROR(MergeTensors(*f, &m->tensors_));
    m->files_.push_back(std::move(f));
    keyed->push_back(kSingleFile);
  } else if (internal::IsRegularFile(JoinPath(dir, kIndexFile))) {
    std::vector<std::string> shards;
    LP_RETURN_IF_ERROR(OpenShards(dir, &m->files_, &m->tensors_, &shards));
    keyed->push_back(kIndexFile);
    keyed->insert(keyed->end(), shards.begin(), shards.end());
  } else {
    return internal::NotFoundError(dir + ": no " + kSingleFile + " or " +
                                   kIndexFile);
  }
  return CheckModelTensors(
      m->config_, m->tensors_, ConfigJsonFieldNames(m->config_),
      [&dir](const std::string& name, const TensorView* t) {
        return (t ? t->file : dir) + ": " + name;
      });
}

StatusOr<std::unique_ptr<Model>> Model::Load(const std::string& path,
                                             const LoadOptions& options) {
  LP_ASSIGN_OR_RETURN(const ModelSource source, FindModelSource(path));
  std::unique_ptr<Model> m(new Model());
  const std::string& dir = source.dir;
  m->dir_ = dir;
  // The digest cache is keyed by every file the weights depend on.
  std::vector<std::string> keyed;
  std::string cache_name = kDigestCacheFile;
  if (!source.gguf.empty()) {
    const std::string gguf_path = JoinPath(dir, source.gguf);
    m->source_ = gguf_path;
    LP_ASSIGN_OR_RETURN(m->gguf_, GgufFile::Open(gguf_path));
    // ReadGgufModel checks the tensors (CheckModelTensors) itself.
    LP_ASSIGN_OR_RETURN(GgufModelParts parts, ReadGgufModel(*m->gguf_));
    m->config_ = std::move(parts.config);
    m->tensors_ = std::move(parts.tensors);
    m->owned_ = std::move(parts.owned);
    keyed.push_back(source.gguf);
    cache_name = GgufDigestCacheName(source.gguf);
  } else {
    m->source_ = dir;
    LP_RETURN_IF_ERROR(ReadHfModel(dir, m.get(), &keyed));
  }

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
      LoadOrComputeDigest(dir, cache_name, keyed, m->config_, m->tensors_,
                          options.verify_digest, options.write_digest_cache,
                          options.progress));
  return m;
}

}  // namespace layerproof::kernels::model
