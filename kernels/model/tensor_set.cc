#include "kernels/model/tensor_set.h"

#include <algorithm>
#include <set>
#include <utility>

#include "kernels/model/internal/errors.h"

namespace layerproof::kernels::model {

std::string ShapeText(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

ConfigFieldNames ConfigJsonFieldNames(const ModelConfig& c) {
  return {"config ",
          "hidden_size",
          "intermediate_size",
          "num_attention_heads",
          "num_key_value_heads",
          "vocab_size",
          "num_hidden_layers",
          "tie_word_embeddings",
          c.architecture};
}

ConfigFieldNames GgufFieldNames(const std::string& arch) {
  const std::string p = arch + ".";
  return {"",
          p + "embedding_length",
          p + "feed_forward_length",
          p + "attention.head_count",
          p + "attention.head_count_kv",
          "vocab",
          p + "block_count",
          "tied embeddings (no output.weight)",
          arch};
}

std::vector<ExpectedTensor> ExpectedTensors(const ModelConfig& c,
                                            const ConfigFieldNames& n) {
  const int64_t h = c.hidden_size, q = c.num_heads * c.head_dim,
                kv = c.num_kv_heads * c.head_dim, in = c.intermediate_size;
  auto field = [](const std::string& name, int64_t v) {
    return name + " " + std::to_string(v);
  };
  const std::string ds = field("head_dim", c.head_dim);
  const std::string hs = field(n.hidden, h);
  const std::string is = field(n.intermediate, in);
  const std::string qs = field(n.heads, c.num_heads) + " x " + ds;
  const std::string kvs = field(n.kv_heads, c.num_kv_heads) + " x " + ds;
  const std::string vs = field(n.vocab, c.vocab_size);
  auto why = [&](const std::string& a, const std::string& b = "") {
    return "(" + n.prefix + a + (b.empty() ? "" : ", " + b) + ")";
  };
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

std::vector<std::string> ExpectedTensorNames(const ModelConfig& config) {
  std::vector<std::string> names;
  for (ExpectedTensor& e :
       ExpectedTensors(config, ConfigJsonFieldNames(config))) {
    names.push_back(std::move(e.name));
  }
  std::sort(names.begin(), names.end());
  return names;
}

Status CheckModelTensors(const ModelConfig& c,
                         const std::map<std::string, TensorView>& tensors,
                         const ConfigFieldNames& names,
                         const TensorWhere& where) {
  std::set<std::string> expected_names;
  for (const ExpectedTensor& e : ExpectedTensors(c, names)) {
    expected_names.insert(e.name);
    const auto it = tensors.find(e.name);
    if (it == tensors.end()) {
      return InvalidArgument(where(e.name, nullptr) +
                             ": missing tensor, want shape " +
                             ShapeText(e.shape) + " " + e.why);
    }
    const TensorView& t = it->second;
    const std::string at = where(e.name, &t);
    if (t.shape != e.shape) {
      return InvalidArgument(at + ": shape " + ShapeText(t.shape) + ", want " +
                             ShapeText(e.shape) + " " + e.why);
    }
    const std::string type = ": type " + std::string(DTypeName(t.dtype));
    const bool is_float = t.dtype == DType::kBF16 || t.dtype == DType::kF16 ||
                          t.dtype == DType::kF32;
    if (e.shape.size() == 1 && !is_float) {
      // The engine reads norms and biases as floats; llama.cpp never
      // quantizes them either.
      const std::string msg =
          at + type + ": want F32, F16 or BF16 for a vector";
      return IsBlockQuantized(t.dtype) ? internal::UnimplementedError(msg)
                                       : InvalidArgument(msg);
    }
    if (!is_float && !IsBlockQuantized(t.dtype)) {
      return InvalidArgument(at + type +
                             ": want F32, F16, BF16, Q8_0, Q4_0, Q4_K or Q6_K");
    }
  }
  for (const auto& [name, t] : tensors) {
    if (expected_names.count(name)) continue;
    return InvalidArgument(
        where(name, &t) + ": unexpected tensor, not part of " + names.model +
        " with " + names.layers + " " + std::to_string(c.num_layers) + ", " +
        names.tied + " " + (c.tie_word_embeddings ? "true" : "false") +
        ", q/k/v bias " + (c.qkv_bias ? "yes" : "no"));
  }
  return OkStatus();
}

}  // namespace layerproof::kernels::model
