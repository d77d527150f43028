// Tiny Llama-family models on disk for the model-format tests: a temporary
// directory, configs small enough to hash in microseconds, their tensors
// filled with deterministic bytes, and writers for single-file and sharded
// layouts. The tensor list and shapes are written out here independently of
// kernels/model/model.cc, so the loader is checked against a second source.
#ifndef LAYERPROOF_TESTS_MODEL_MODEL_FIXTURE_H_
#define LAYERPROOF_TESTS_MODEL_MODEL_FIXTURE_H_

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/dtype.h"
#include "kernels/model/config.h"
#include "kernels/model/safetensors.h"

namespace layerproof::kernels::model::fixture {

// A fresh directory under the system temp dir, removed with its contents.
class TempDir {
 public:
  TempDir() {
    static std::atomic<int> counter{0};
    path_ = (std::filesystem::temp_directory_path() /
             ("layerproof_model_test_" + std::to_string(::getpid()) + "_" +
              std::to_string(counter.fetch_add(1))))
                .string();
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::permissions(path_, std::filesystem::perms::owner_all,
                                 std::filesystem::perm_options::add, ec);
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  std::string File(std::string_view name) const {
    return path_ + "/" + std::string(name);
  }

 private:
  std::string path_;
};

inline void WriteText(const std::string& path, std::string_view text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(text.data(), std::streamsize(text.size()));
  ASSERT_TRUE(out.good()) << path;
}

inline std::string ReadText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Llama with GQA: hidden 16, 4 heads of 4, 2 KV heads, 2 layers.
inline ModelConfig TinyConfig() {
  ModelConfig c;
  c.architecture = "LlamaForCausalLM";
  c.model_type = "llama";
  c.hidden_size = 16;
  c.intermediate_size = 24;
  c.num_layers = 2;
  c.num_heads = 4;
  c.num_kv_heads = 2;
  c.head_dim = 4;
  c.vocab_size = 32;
  c.max_positions = 64;
  c.rms_norm_eps = 1e-5;
  c.rope_theta = 10000.0;
  c.eos_token_ids = {2};
  c.bos_token_id = 1;
  return c;
}

inline ModelConfig TinyQwen2Config() {
  ModelConfig c = TinyConfig();
  c.architecture = "Qwen2ForCausalLM";
  c.model_type = "qwen2";
  c.qkv_bias = true;
  c.tie_word_embeddings = true;
  c.rms_norm_eps = 1e-6;
  c.rope_theta = 1000000.0;
  return c;
}

struct TestTensor {
  std::string name;
  DType dtype = DType::kBF16;
  std::vector<int64_t> shape;
  std::vector<unsigned char> bytes;
};

inline uint64_t ElementCount(const std::vector<int64_t>& shape) {
  uint64_t n = 1;
  for (int64_t d : shape) n *= uint64_t(d);
  return n;
}

// A tensor of deterministic bytes (a 32-bit LCG keyed by `seed` and `name`).
inline TestTensor MakeTensor(const std::string& name, DType dtype,
                             std::vector<int64_t> shape, uint32_t seed) {
  TestTensor t{name, dtype, std::move(shape), {}};
  uint32_t x = seed * 2654435761u;
  for (char ch : name) x = x * 31u + uint8_t(ch);
  t.bytes.resize(ElementCount(t.shape) * DTypeSize(dtype));
  for (unsigned char& b : t.bytes) {
    x = x * 1664525u + 1013904223u;
    b = uint8_t(x >> 24);
  }
  return t;
}

// Every tensor `c` requires, in Hugging Face naming.
inline std::vector<TestTensor> TinyTensors(const ModelConfig& c,
                                           DType dtype = DType::kBF16,
                                           uint32_t seed = 1) {
  const int64_t h = c.hidden_size, q = c.num_heads * c.head_dim,
                kv = c.num_kv_heads * c.head_dim, in = c.intermediate_size;
  std::vector<TestTensor> out;
  auto add = [&](const std::string& name, std::vector<int64_t> shape) {
    out.push_back(MakeTensor(name, dtype, std::move(shape), seed));
  };
  add("model.embed_tokens.weight", {c.vocab_size, h});
  add("model.norm.weight", {h});
  if (!c.tie_word_embeddings) add("lm_head.weight", {c.vocab_size, h});
  for (int64_t l = 0; l < c.num_layers; ++l) {
    const std::string p = "model.layers." + std::to_string(l) + ".";
    add(p + "input_layernorm.weight", {h});
    add(p + "self_attn.q_proj.weight", {q, h});
    add(p + "self_attn.k_proj.weight", {kv, h});
    add(p + "self_attn.v_proj.weight", {kv, h});
    add(p + "self_attn.o_proj.weight", {h, q});
    if (c.qkv_bias) {
      add(p + "self_attn.q_proj.bias", {q});
      add(p + "self_attn.k_proj.bias", {kv});
      add(p + "self_attn.v_proj.bias", {kv});
    }
    add(p + "post_attention_layernorm.weight", {h});
    add(p + "mlp.gate_proj.weight", {in, h});
    add(p + "mlp.up_proj.weight", {in, h});
    add(p + "mlp.down_proj.weight", {h, in});
  }
  return out;
}

// Removes the tensor `name` from `tensors`; fails the test if absent.
inline void RemoveTensor(std::vector<TestTensor>* tensors,
                         const std::string& name) {
  for (auto it = tensors->begin(); it != tensors->end(); ++it) {
    if (it->name == name) {
      tensors->erase(it);
      return;
    }
  }
  ADD_FAILURE() << "no tensor " << name;
}

inline TestTensor* FindTensor(std::vector<TestTensor>* tensors,
                              const std::string& name) {
  for (TestTensor& t : *tensors) {
    if (t.name == name) return &t;
  }
  ADD_FAILURE() << "no tensor " << name;
  return nullptr;
}

inline void WriteSafetensors(const std::string& path,
                             const std::vector<TestTensor>& tensors) {
  SafetensorsWriter w;
  for (const TestTensor& t : tensors) w.Declare(t.name, t.dtype, t.shape);
  w.SetMetadata("format", "pt");
  Status s = w.Begin(path);
  ASSERT_TRUE(s.ok()) << s.ToString();
  for (const TestTensor& t : tensors) {
    s = w.WriteTensorData(t.bytes.data(), t.bytes.size());
    ASSERT_TRUE(s.ok()) << s.ToString();
  }
  s = w.Finish();
  ASSERT_TRUE(s.ok()) << s.ToString();
}

// Writes config.json and the weights into `dir`: model.safetensors when
// `shards` is 1, else tensors dealt round-robin into `shards` files named as
// transformers names them, plus model.safetensors.index.json.
inline void WriteTinyModel(const std::string& dir, const ModelConfig& c,
                           const std::vector<TestTensor>& tensors,
                           int shards = 1) {
  WriteText(dir + "/config.json", WriteModelConfig(c));
  if (shards == 1) {
    WriteSafetensors(dir + "/model.safetensors", tensors);
    return;
  }
  std::vector<std::vector<TestTensor>> split(static_cast<size_t>(shards));
  std::ostringstream index;
  index << "{\n  \"metadata\": {\"total_size\": 0},\n  \"weight_map\": {";
  for (size_t i = 0; i < tensors.size(); ++i) {
    const size_t s = i % size_t(shards);
    split[s].push_back(tensors[i]);
    char name[64];
    std::snprintf(name, sizeof(name), "model-%05zu-of-%05d.safetensors", s + 1,
                  shards);
    index << (i ? ",\n" : "\n") << "    \"" << tensors[i].name << "\": \""
          << name << "\"";
  }
  index << "\n  }\n}\n";
  for (size_t s = 0; s < split.size(); ++s) {
    char name[64];
    std::snprintf(name, sizeof(name), "model-%05zu-of-%05d.safetensors", s + 1,
                  shards);
    WriteSafetensors(dir + "/" + name, split[s]);
  }
  WriteText(dir + "/model.safetensors.index.json", index.str());
}

// A raw safetensors image: the 8-byte little-endian length of `header`,
// `header`, then `data_bytes` bytes of `fill`.
inline std::string RawSafetensors(std::string_view header, size_t data_bytes,
                                  char fill = 0) {
  std::string out(8, '\0');
  const uint64_t n = header.size();
  for (int i = 0; i < 8; ++i) out[size_t(i)] = char(uint8_t(n >> (8 * i)));
  out += header;
  out.append(data_bytes, fill);
  return out;
}

// Rewrites the header of the safetensors file at `path`, replacing the
// first `from` with `to`, and fixes the length prefix; the data section is
// kept as it is.
inline void PatchHeader(const std::string& path, std::string_view from,
                        std::string_view to) {
  const std::string raw = ReadText(path);
  ASSERT_GE(raw.size(), 8u);
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | uint8_t(raw[size_t(i)]);
  ASSERT_LE(n, raw.size() - 8);
  std::string header = raw.substr(8, n);
  const size_t at = header.find(from);
  ASSERT_NE(at, std::string::npos) << from << " not in " << header;
  header.replace(at, from.size(), to);
  WriteText(path, RawSafetensors(header, 0) + raw.substr(8 + n));
}

}  // namespace layerproof::kernels::model::fixture

#endif  // LAYERPROOF_TESTS_MODEL_MODEL_FIXTURE_H_
