// Tests of the float64 reference forward (tests/model/reference_forward.h).
//
// ReferenceForwardSelfTest checks the reference on its own: tiny checkpoints
// written here (config.json and safetensors by a writer in this file) whose
// weights make each part of the forward hand-computable. The engine against
// the reference comes last, in its own section.
#include "tests/model/reference_forward.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <numbers>
#include <stdexcept>
#include <string>
#include <vector>

namespace layerproof::testing {
namespace {

using Json = nlohmann::json;
using ::testing::HasSubstr;

// ---------------------------------------------------------------------------
// A tiny checkpoint writer.

struct StoredTensor {
  std::string dtype;  // "F32", "BF16", "F16", or anything for bad inputs
  std::vector<int64_t> shape;
  std::string bytes;  // little-endian
};
using Checkpoint = std::map<std::string, StoredTensor>;

template <typename T>
void Append(std::string* out, T v) {
  char b[sizeof v];
  std::memcpy(b, &v, sizeof v);
  out->append(b, sizeof v);
}

// Encodes values that `dtype` holds exactly; fails the test otherwise.
std::string Encode(const std::vector<double>& values,
                   const std::string& dtype) {
  std::string out;
  for (double v : values) {
    const float f = static_cast<float>(v);
    uint32_t bits;
    std::memcpy(&bits, &f, sizeof bits);
    if (dtype == "F32") {
      Append(&out, f);
    } else if (dtype == "BF16") {
      EXPECT_EQ(bits & 0xffff, 0u) << v << " is not a bf16 value";
      Append(&out, static_cast<uint16_t>(bits >> 16));
    } else {  // F16, normal numbers and zero only
      uint16_t h = (bits >> 16) & 0x8000;
      if (v != 0) {
        int e;
        const double m = std::frexp(std::fabs(v), &e);  // |v| = m * 2^e
        const double mant = (2 * m - 1) * 1024;
        EXPECT_TRUE(e + 14 >= 1 && e + 14 <= 30 && mant == std::floor(mant))
            << v << " is not an f16 value";
        h |= static_cast<uint16_t>(((e + 14) << 10) | static_cast<int>(mant));
      }
      Append(&out, h);
    }
  }
  return out;
}

void WriteFile(const std::filesystem::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(out.good()) << path;
}

void WriteSafetensors(const std::filesystem::path& path, const Checkpoint& ck) {
  Json header = Json::object();
  header["__metadata__"] = {{"format", "pt"}};
  std::string data;
  for (const auto& [name, t] : ck) {
    header[name] = {
        {"dtype", t.dtype},
        {"shape", t.shape},
        {"data_offsets", {data.size(), data.size() + t.bytes.size()}}};
    data += t.bytes;
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');
  std::string file;
  Append(&file, static_cast<uint64_t>(text.size()));
  WriteFile(path, file + text + data);
}

// ---------------------------------------------------------------------------
// Tiny models with hand-friendly weights.

struct Weight {
  std::vector<int64_t> shape;
  std::vector<double> values;
};

struct TinySpec {
  int64_t hidden = 8, intermediate = 12, layers = 1, heads = 4, kv_heads = 2,
          head_dim = 4, vocab = 10;
  bool qkv_bias = false;
  bool tied = false;  // tie_word_embeddings: true, no lm_head.weight
  double rope_theta = 100.0;
  Json rope_scaling = nullptr;
};

struct TinyModel {
  Json config;
  std::map<std::string, Weight> weights;
  Weight& operator[](const std::string& name) { return weights.at(name); }
};

// Multiples of 1/64 in [-1/2, 1/2]: exact in F32, BF16 and F16.
std::vector<double> Grid(int64_t n, uint32_t seed, double offset = 0) {
  std::vector<double> v(n);
  for (double& x : v) {
    seed = seed * 1664525u + 1013904223u;
    x = offset + (static_cast<int>(seed >> 24) % 65 - 32) / 64.0;
  }
  return v;
}

TinyModel MakeTiny(const TinySpec& s) {
  TinyModel m;
  m.config = {{"architectures", {"LlamaForCausalLM"}},
              {"model_type", "llama"},
              {"hidden_size", s.hidden},
              {"intermediate_size", s.intermediate},
              {"num_hidden_layers", s.layers},
              {"num_attention_heads", s.heads},
              {"num_key_value_heads", s.kv_heads},
              {"head_dim", s.head_dim},
              {"vocab_size", s.vocab},
              {"rms_norm_eps", 1e-5},
              {"rope_theta", s.rope_theta},
              {"rope_scaling", s.rope_scaling},
              {"hidden_act", "silu"},
              {"tie_word_embeddings", s.tied}};
  uint32_t seed = 1;
  auto add = [&](const std::string& name, std::vector<int64_t> shape,
                 double offset = 0) {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    m.weights[name] = {shape, Grid(n, seed++, offset)};
  };
  const int64_t q = s.heads * s.head_dim, kv = s.kv_heads * s.head_dim;
  add("model.embed_tokens.weight", {s.vocab, s.hidden});
  add("model.norm.weight", {s.hidden}, 1.0);
  if (!s.tied) add("lm_head.weight", {s.vocab, s.hidden});
  for (int64_t l = 0; l < s.layers; ++l) {
    const std::string p = "model.layers." + std::to_string(l) + ".";
    add(p + "input_layernorm.weight", {s.hidden}, 1.0);
    add(p + "post_attention_layernorm.weight", {s.hidden}, 1.0);
    add(p + "self_attn.q_proj.weight", {q, s.hidden});
    add(p + "self_attn.k_proj.weight", {kv, s.hidden});
    add(p + "self_attn.v_proj.weight", {kv, s.hidden});
    if (s.qkv_bias) {
      add(p + "self_attn.q_proj.bias", {q});
      add(p + "self_attn.k_proj.bias", {kv});
      add(p + "self_attn.v_proj.bias", {kv});
    }
    add(p + "self_attn.o_proj.weight", {s.hidden, q});
    add(p + "mlp.gate_proj.weight", {s.intermediate, s.hidden});
    add(p + "mlp.up_proj.weight", {s.intermediate, s.hidden});
    add(p + "mlp.down_proj.weight", {s.hidden, s.intermediate});
  }
  return m;
}

Checkpoint ToCheckpoint(const TinyModel& m, const std::string& dtype) {
  Checkpoint ck;
  for (const auto& [name, w] : m.weights) {
    ck[name] = {dtype, w.shape, Encode(w.values, dtype)};
  }
  return ck;
}

void Zero(Weight& w) { w.values.assign(w.values.size(), 0.0); }

void Identity(Weight& w) {
  Zero(w);
  for (int64_t i = 0; i < w.shape[0]; ++i) w.values[i * w.shape[1] + i] = 1.0;
}

// Test-side arithmetic, written out again on purpose.
std::vector<double> Row(const Weight& w, int64_t r) {
  const int64_t n = w.shape.size() == 2 ? w.shape[1] : w.shape[0];
  return {w.values.begin() + r * n, w.values.begin() + (r + 1) * n};
}

std::vector<double> NormRow(const std::vector<double>& x, const Weight& w) {
  double ms = 0;
  for (double v : x) ms += v * v / x.size();
  std::vector<double> y(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    y[i] = x[i] / std::sqrt(ms + 1e-5) * w.values[i];
  }
  return y;
}

// W x (+ b) for one row vector x.
std::vector<double> MatVec(const Weight& w, const std::vector<double>& x,
                           const Weight* b = nullptr) {
  std::vector<double> y(w.shape[0]);
  for (int64_t o = 0; o < w.shape[0]; ++o) {
    for (int64_t i = 0; i < w.shape[1]; ++i) {
      y[o] += w.values[o * w.shape[1] + i] * x[i];
    }
    if (b) y[o] += b->values[o];
  }
  return y;
}

std::vector<double> Slice(const std::vector<double>& v, int64_t row,
                          int64_t n) {
  return {v.begin() + row * n, v.begin() + (row + 1) * n};
}

void ExpectNear(const std::vector<double>& got, const std::vector<double>& want,
                double tol, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_NEAR(got[i], want[i], tol) << what << " [" << i << "]";
  }
}

class ReferenceForwardSelfTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ =
        std::filesystem::path(::testing::TempDir()) /
        ("lp_ref_" +
         std::string(
             ::testing::UnitTest::GetInstance()->current_test_info()->name()));
    std::filesystem::remove_all(root_);
  }
  void TearDown() override { std::filesystem::remove_all(root_); }

  // Writes config.json and model.safetensors under root_/sub.
  std::string WriteModel(const Json& config, const Checkpoint& ck,
                         const std::string& sub = "m") {
    const std::filesystem::path dir = root_ / sub;
    std::filesystem::create_directories(dir);
    WriteFile(dir / "config.json", config.dump(2));
    WriteSafetensors(dir / "model.safetensors", ck);
    return dir.string();
  }
  std::string WriteModel(const TinyModel& m, const std::string& dtype = "F32",
                         const std::string& sub = "m") {
    return WriteModel(m.config, ToCheckpoint(m, dtype), sub);
  }

  std::unique_ptr<RefModel> Load(const std::string& dir) {
    std::string error;
    std::unique_ptr<RefModel> model = LoadRefModel(dir, &error);
    EXPECT_NE(model, nullptr) << error;
    return model;
  }

  // The load error for a model that must not load.
  std::string LoadError(const std::string& dir) {
    std::string error;
    EXPECT_EQ(LoadRefModel(dir, &error), nullptr);
    EXPECT_FALSE(error.empty());
    return error;
  }

  std::filesystem::path root_;
};

// ---------------------------------------------------------------------------
// ReferenceForwardSelfTest

TEST_F(ReferenceForwardSelfTest, ZeroBlockOutputsGiveNormedEmbeddingTimesHead) {
  TinySpec spec;
  spec.layers = 2;
  TinyModel tiny = MakeTiny(spec);
  for (const char* l : {"0", "1"}) {
    Zero(tiny[std::string("model.layers.") + l + ".self_attn.o_proj.weight"]);
    Zero(tiny[std::string("model.layers.") + l + ".mlp.down_proj.weight"]);
  }
  auto model = Load(WriteModel(tiny));
  ASSERT_NE(model, nullptr);
  const std::vector<int32_t> tokens = {3, 1, 4, 1, 5, 9};
  const auto states = RefHiddenStates(*model, tokens);
  ASSERT_EQ(states.size(), 3u);
  EXPECT_EQ(states[1], states[0]);
  EXPECT_EQ(states[2], states[0]);
  const auto logits = RefForwardLogits(*model, tokens);
  ASSERT_EQ(logits.size(), tokens.size() * spec.vocab);
  for (size_t t = 0; t < tokens.size(); ++t) {
    const auto x = NormRow(Row(tiny["model.embed_tokens.weight"], tokens[t]),
                           tiny["model.norm.weight"]);
    ExpectNear(Slice(logits, t, spec.vocab), MatVec(tiny["lm_head.weight"], x),
               1e-13, "position " + std::to_string(t));
  }
}

TEST_F(ReferenceForwardSelfTest, LogitsAreFinalNormOfLastHiddenState) {
  TinySpec spec;
  spec.layers = 3;
  spec.qkv_bias = true;
  TinyModel tiny = MakeTiny(spec);
  auto model = Load(WriteModel(tiny, "BF16"));
  ASSERT_NE(model, nullptr);
  const std::vector<int32_t> tokens = {0, 9, 2, 2, 7};
  const auto states = RefHiddenStates(*model, tokens);
  ASSERT_EQ(states.size(), 4u);
  EXPECT_NE(states[3], states[2]);
  const auto logits = RefForwardLogits(*model, tokens);
  for (size_t t = 0; t < tokens.size(); ++t) {
    const auto x =
        NormRow(Slice(states[3], t, spec.hidden), tiny["model.norm.weight"]);
    ExpectNear(Slice(logits, t, spec.vocab), MatVec(tiny["lm_head.weight"], x),
               1e-12, "position " + std::to_string(t));
  }
}

TEST_F(ReferenceForwardSelfTest, SingleTokenAttentionOutputIsV) {
  TinySpec spec;  // 4 query heads share 2 kv heads
  spec.qkv_bias = true;
  TinyModel tiny = MakeTiny(spec);
  const std::string p = "model.layers.0.";
  Zero(tiny[p + "mlp.down_proj.weight"]);
  auto model = Load(WriteModel(tiny));
  ASSERT_NE(model, nullptr);
  const auto h0 = Row(tiny["model.embed_tokens.weight"], 7);
  const auto x = NormRow(h0, tiny[p + "input_layernorm.weight"]);
  const auto v = MatVec(tiny[p + "self_attn.v_proj.weight"], x,
                        &tiny[p + "self_attn.v_proj.bias"]);
  std::vector<double> attn;  // head h reads kv head h / 2
  for (int64_t h = 0; h < spec.heads; ++h) {
    const auto vh = Slice(v, h / 2, spec.head_dim);
    attn.insert(attn.end(), vh.begin(), vh.end());
  }
  auto want = MatVec(tiny[p + "self_attn.o_proj.weight"], attn);
  for (int64_t i = 0; i < spec.hidden; ++i) want[i] += h0[i];
  const auto single = RefHiddenStates(*model, {7});
  ExpectNear(single[1], want, 1e-13, "single token");
  // Position 0 of a longer prompt sees only itself.
  const auto longer = RefHiddenStates(*model, {7, 2, 9});
  EXPECT_EQ(Slice(longer[1], 0, spec.hidden), single[1]);
  EXPECT_NE(Slice(longer[1], 1, spec.hidden), Slice(longer[0], 1, spec.hidden));
}

TEST_F(ReferenceForwardSelfTest, ZeroQueriesAttendUniformlyToThePrefix) {
  TinySpec spec;
  TinyModel tiny = MakeTiny(spec);
  const std::string p = "model.layers.0.";
  Zero(tiny[p + "self_attn.q_proj.weight"]);
  Zero(tiny[p + "mlp.down_proj.weight"]);
  auto model = Load(WriteModel(tiny));
  ASSERT_NE(model, nullptr);
  const std::vector<int32_t> tokens = {5, 3, 8, 0};
  const auto states = RefHiddenStates(*model, tokens);
  const int64_t kv = spec.kv_heads * spec.head_dim;
  std::vector<double> v_sum(kv, 0.0);
  for (size_t t = 0; t < tokens.size(); ++t) {
    const auto h0 = Row(tiny["model.embed_tokens.weight"], tokens[t]);
    const auto v = MatVec(tiny[p + "self_attn.v_proj.weight"],
                          NormRow(h0, tiny[p + "input_layernorm.weight"]));
    for (int64_t i = 0; i < kv; ++i) v_sum[i] += v[i];
    std::vector<double> attn;
    for (int64_t h = 0; h < spec.heads; ++h) {
      for (int64_t d = 0; d < spec.head_dim; ++d) {
        attn.push_back(v_sum[(h / 2) * spec.head_dim + d] / (t + 1));
      }
    }
    auto want = MatVec(tiny[p + "self_attn.o_proj.weight"], attn);
    for (int64_t i = 0; i < spec.hidden; ++i) want[i] += h0[i];
    ExpectNear(Slice(states[1], t, spec.hidden), want, 1e-13,
               "position " + std::to_string(t));
  }
}

TEST_F(ReferenceForwardSelfTest, MlpMatchesHandComputation) {
  TinySpec spec;
  TinyModel tiny = MakeTiny(spec);
  const std::string p = "model.layers.0.";
  Zero(tiny[p + "self_attn.o_proj.weight"]);
  auto model = Load(WriteModel(tiny, "F16"));
  ASSERT_NE(model, nullptr);
  const auto states = RefHiddenStates(*model, {4, 6});
  for (int t = 0; t < 2; ++t) {
    const auto h0 = Row(tiny["model.embed_tokens.weight"], t == 0 ? 4 : 6);
    const auto x = NormRow(h0, tiny[p + "post_attention_layernorm.weight"]);
    const auto g = MatVec(tiny[p + "mlp.gate_proj.weight"], x);
    const auto u = MatVec(tiny[p + "mlp.up_proj.weight"], x);
    std::vector<double> a(spec.intermediate);
    for (int64_t i = 0; i < spec.intermediate; ++i) {
      a[i] = g[i] / (1 + std::exp(-g[i])) * u[i];
    }
    auto want = MatVec(tiny[p + "mlp.down_proj.weight"], a);
    for (int64_t i = 0; i < spec.hidden; ++i) want[i] += h0[i];
    ExpectNear(Slice(states[1], t, spec.hidden), want, 1e-13,
               "position " + std::to_string(t));
  }
}

TEST_F(ReferenceForwardSelfTest, RopeIsIdentityAtZeroAndPairsHalves) {
  const std::vector<double> inv_freq = {1.0, 0.1};
  std::vector<double> x = {1, 2, 3, 4};
  RefApplyRope(inv_freq, 0, x.data(), 4);
  EXPECT_EQ(x, (std::vector<double>{1, 2, 3, 4}));
  RefApplyRope(inv_freq, 3, x.data(), 4);
  // Element i pairs with i + 2, rotated by 3 * inv_freq[i].
  const std::vector<double> want = {1 * std::cos(3.0) - 3 * std::sin(3.0),
                                    2 * std::cos(0.3) - 4 * std::sin(0.3),
                                    3 * std::cos(3.0) + 1 * std::sin(3.0),
                                    4 * std::cos(0.3) + 2 * std::sin(0.3)};
  ExpectNear(x, want, 1e-15, "position 3");
}

// One head, q = k = v = x, o = I: the second position's output is written out
// from the rotation formula, once for plain RoPE and once with llama3 scaling.
TEST_F(ReferenceForwardSelfTest, RopeRotatesQueriesAndKeysByPosition) {
  const double wavelen = 2 * std::numbers::pi * 10;  // of inv_freq[1] = 0.1
  const double smooth = (128 / wavelen - 1) / (4 - 1);
  struct Case {
    const char* name;
    Json rope_scaling;
    double f1;  // inv_freq[1]; inv_freq[0] = 1 either way
  };
  const Case cases[] = {{"plain", nullptr, 0.1},
                        {"llama3",
                         {{"rope_type", "llama3"},
                          {"factor", 4.0},
                          {"low_freq_factor", 1.0},
                          {"high_freq_factor", 4.0},
                          {"original_max_position_embeddings", 128}},
                         (1 - smooth) * 0.1 / 4 + smooth * 0.1}};
  for (const Case& c : cases) {
    TinySpec spec;
    spec.hidden = 4;
    spec.heads = spec.kv_heads = 1;
    spec.rope_scaling = c.rope_scaling;
    TinyModel tiny = MakeTiny(spec);
    const std::string p = "model.layers.0.";
    for (const char* w : {"q", "k", "v", "o"}) {
      Identity(tiny[p + "self_attn." + w + "_proj.weight"]);
    }
    Zero(tiny[p + "mlp.down_proj.weight"]);
    auto model = Load(WriteModel(tiny, "F32", c.name));
    ASSERT_NE(model, nullptr);
    const auto rot = [&](const std::vector<double>& x, double pos) {
      const double a0 = pos * 1.0, a1 = pos * c.f1;
      return std::vector<double>{x[0] * std::cos(a0) - x[2] * std::sin(a0),
                                 x[1] * std::cos(a1) - x[3] * std::sin(a1),
                                 x[2] * std::cos(a0) + x[0] * std::sin(a0),
                                 x[3] * std::cos(a1) + x[1] * std::sin(a1)};
    };
    const auto dot = [](const std::vector<double>& a,
                        const std::vector<double>& b) {
      return a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3];
    };
    const auto h1 = Row(tiny["model.embed_tokens.weight"], 5);
    const auto x0 = NormRow(Row(tiny["model.embed_tokens.weight"], 2),
                            tiny[p + "input_layernorm.weight"]);
    const auto x1 = NormRow(h1, tiny[p + "input_layernorm.weight"]);
    const auto q1 = rot(x1, 1);
    const double s0 = dot(q1, rot(x0, 0)) / 2, s1 = dot(q1, rot(x1, 1)) / 2;
    const double p0 = 1 / (1 + std::exp(s1 - s0)), p1 = 1 - p0;
    std::vector<double> want(4);
    for (int i = 0; i < 4; ++i) want[i] = h1[i] + p0 * x0[i] + p1 * x1[i];
    const auto states = RefHiddenStates(*model, {2, 5});
    ExpectNear(Slice(states[1], 1, 4), want, 1e-13, c.name);
    // Without rotation the answer would differ: the check can fail.
    EXPECT_GT(std::fabs(dot(q1, x0) - dot(x1, x0)), 1e-3);
  }
}

TEST_F(ReferenceForwardSelfTest, Llama3InvFreqMatchesTransformersFormula) {
  // Llama 3.1's rope_scaling, spelled once with rope_type and once with type.
  for (const char* key : {"rope_type", "type"}) {
    TinySpec spec;
    spec.hidden = 256;
    spec.heads = spec.kv_heads = 2;
    spec.head_dim = 128;
    spec.rope_theta = 500000;
    spec.rope_scaling = {{key, "llama3"},
                         {"factor", 8.0},
                         {"low_freq_factor", 1.0},
                         {"high_freq_factor", 4.0},
                         {"original_max_position_embeddings", 8192}};
    auto model = Load(WriteModel(MakeTiny(spec), "BF16", key));
    ASSERT_NE(model, nullptr);
    EXPECT_TRUE(model->config.llama3_rope);
    const auto got = RefRopeInvFreq(model->config);
    ASSERT_EQ(got.size(), 64u);
    int low = 0, mid = 0, high = 0;
    for (int i = 0; i < 64; ++i) {
      const double f = std::pow(500000.0, -i / 64.0);
      const double wavelen = 2 * std::numbers::pi / f;
      double want = f;  // wavelen < 8192 / 4: unchanged
      if (wavelen > 8192.0) {
        want = f / 8, ++low;
      } else if (wavelen >= 2048.0) {
        const double s = (8192.0 / wavelen - 1) / 3;
        want = (1 - s) * f / 8 + s * f, ++mid;
      } else {
        ++high;
      }
      EXPECT_NEAR(got[i], want, 1e-14 * want) << key << " i=" << i;
    }
    EXPECT_EQ(got[0], 1.0);
    EXPECT_GT(low, 0);
    EXPECT_GT(mid, 0);
    EXPECT_GT(high, 0);
  }
}

TEST_F(ReferenceForwardSelfTest, TiedHeadEqualsExplicitCopyOfEmbeddings) {
  TinySpec spec;
  spec.tied = true;
  TinyModel tied = MakeTiny(spec);
  TinyModel explicit_head = tied;
  explicit_head.config["tie_word_embeddings"] = false;
  explicit_head.weights["lm_head.weight"] =
      explicit_head["model.embed_tokens.weight"];
  auto a = Load(WriteModel(tied, "F32", "tied"));
  auto b = Load(WriteModel(explicit_head, "F32", "explicit"));
  ASSERT_TRUE(a && b);
  EXPECT_TRUE(a->lm_head.empty());
  const std::vector<int32_t> tokens = {1, 2, 3};
  EXPECT_EQ(RefForwardLogits(*a, tokens), RefForwardLogits(*b, tokens));
  // A distinct lm_head.weight is what an untied model uses.
  explicit_head.weights["lm_head.weight"] = tied["model.embed_tokens.weight"];
  explicit_head["lm_head.weight"].values[0] += 0.5;
  auto c = Load(WriteModel(explicit_head, "F32", "untied"));
  ASSERT_NE(c, nullptr);
  EXPECT_NE(RefForwardLogits(*c, tokens), RefForwardLogits(*a, tokens));
  // With tie_word_embeddings: true transformers ties lm_head to the
  // embeddings and ignores a stored lm_head.weight.
  explicit_head.config["tie_word_embeddings"] = true;
  auto d = Load(WriteModel(explicit_head, "F32", "tied_with_head"));
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(RefForwardLogits(*d, tokens), RefForwardLogits(*a, tokens));
}

TEST_F(ReferenceForwardSelfTest, F32Bf16AndF16CheckpointsAgreeExactly) {
  TinySpec spec;
  spec.layers = 2;
  spec.qkv_bias = true;
  const TinyModel tiny = MakeTiny(spec);
  const std::vector<int32_t> tokens = {9, 8, 7, 0};
  std::vector<double> logits[3];
  const char* dtypes[] = {"F32", "BF16", "F16"};
  for (int i = 0; i < 3; ++i) {
    auto model = Load(WriteModel(tiny, dtypes[i], dtypes[i]));
    ASSERT_NE(model, nullptr);
    logits[i] = RefForwardLogits(*model, tokens);
  }
  EXPECT_EQ(logits[1], logits[0]);
  EXPECT_EQ(logits[2], logits[0]);
}

TEST_F(ReferenceForwardSelfTest, DecodesBf16AndF16BitPatterns) {
  TinySpec spec;  // hidden 8
  const TinyModel tiny = MakeTiny(spec);
  struct Case {
    const char* dtype;
    std::vector<uint16_t> bits;
    std::vector<double> want;
  };
  const Case cases[] = {
      {"F16",
       {0x3c00, 0x0001, 0x7bff, 0xc000, 0x8000, 0x0400, 0x3555, 0x83ff},
       {1.0, std::ldexp(1.0, -24), 65504.0, -2.0, -0.0, std::ldexp(1.0, -14),
        0.333251953125, -1023 * std::ldexp(1.0, -24)}},
      {"BF16",
       {0x3f80, 0xc040, 0x0001, 0x7f7f, 0x8000, 0x3eab, 0x4049, 0xbf00},
       {1.0, -3.0, std::ldexp(1.0, -133), 0x1.fep127, -0.0, 0.333984375,
        3.140625, -0.5}}};
  for (const Case& c : cases) {
    Checkpoint ck = ToCheckpoint(tiny, "F32");
    std::string bytes;
    for (uint16_t b : c.bits) Append(&bytes, b);
    bytes.append(2 * spec.hidden * (spec.vocab - 1), '\0');
    ck["model.embed_tokens.weight"] = {
        c.dtype, {spec.vocab, spec.hidden}, bytes};
    auto model = Load(WriteModel(tiny.config, ck, c.dtype));
    ASSERT_NE(model, nullptr);
    const auto h0 = RefHiddenStates(*model, {0})[0];
    for (int i = 0; i < 8; ++i) {
      EXPECT_EQ(h0[i], c.want[i]) << c.dtype << " bits " << c.bits[i];
      EXPECT_EQ(std::signbit(h0[i]), std::signbit(c.want[i])) << c.dtype;
    }
  }
}

TEST_F(ReferenceForwardSelfTest, ShardedCheckpointLoadsLikeOneFile) {
  TinySpec spec;
  spec.layers = 2;
  const TinyModel tiny = MakeTiny(spec);
  const std::vector<int32_t> tokens = {3, 3, 1};
  auto single = Load(WriteModel(tiny, "BF16", "single"));
  ASSERT_NE(single, nullptr);
  const Checkpoint ck = ToCheckpoint(tiny, "BF16");
  Checkpoint shards[2];
  Json index = {{"metadata", Json::object()}, {"weight_map", Json::object()}};
  for (const auto& [name, t] : ck) {
    const int s = name.find("layers.1.") != std::string::npos ? 1 : 0;
    shards[s][name] = t;
    index["weight_map"][name] =
        "model-0000" + std::to_string(s + 1) + "-of-00002.safetensors";
  }
  const std::filesystem::path dir = root_ / "sharded";
  std::filesystem::create_directories(dir);
  WriteFile(dir / "config.json", tiny.config.dump());
  WriteFile(dir / "model.safetensors.index.json", index.dump());
  WriteSafetensors(dir / "model-00001-of-00002.safetensors", shards[0]);
  WriteSafetensors(dir / "model-00002-of-00002.safetensors", shards[1]);
  auto sharded = Load(dir.string());
  ASSERT_NE(sharded, nullptr);
  EXPECT_EQ(RefForwardLogits(*sharded, tokens),
            RefForwardLogits(*single, tokens));
}

TEST_F(ReferenceForwardSelfTest, LaterTokensDoNotChangeEarlierLogits) {
  TinySpec spec;
  spec.layers = 2;
  auto model = Load(WriteModel(MakeTiny(spec)));
  ASSERT_NE(model, nullptr);
  const auto full = RefForwardLogits(*model, {1, 5, 2, 8, 3});
  const auto prefix = RefForwardLogits(*model, {1, 5, 2});
  const auto other = RefForwardLogits(*model, {1, 5, 2, 0, 0});
  EXPECT_EQ(std::vector<double>(full.begin(), full.begin() + prefix.size()),
            prefix);
  EXPECT_EQ(std::vector<double>(other.begin(), other.begin() + prefix.size()),
            prefix);
  EXPECT_NE(other, full);
  EXPECT_TRUE(RefForwardLogits(*model, {}).empty());
  EXPECT_THROW(RefForwardLogits(*model, {1, 10}), std::invalid_argument);
  EXPECT_THROW(RefForwardLogits(*model, {-1}), std::invalid_argument);
}

TEST_F(ReferenceForwardSelfTest, LoadRejectsBrokenModels) {
  const TinyModel tiny = MakeTiny(TinySpec{});
  EXPECT_THAT(LoadError((root_ / "absent").string()), HasSubstr("config.json"));

  Checkpoint ck = ToCheckpoint(tiny, "F32");
  ck.erase("model.layers.0.mlp.up_proj.weight");
  EXPECT_THAT(LoadError(WriteModel(tiny.config, ck, "missing")),
              HasSubstr("model.layers.0.mlp.up_proj.weight"));

  ck = ToCheckpoint(tiny, "F32");
  ck["model.norm.weight"].shape = {2, 4};
  EXPECT_THAT(LoadError(WriteModel(tiny.config, ck, "shape")),
              HasSubstr("model.norm.weight"));

  ck = ToCheckpoint(tiny, "F32");
  ck["model.norm.weight"].dtype = "I8";
  EXPECT_THAT(LoadError(WriteModel(tiny.config, ck, "dtype")),
              HasSubstr("unsupported dtype I8"));

  ck = ToCheckpoint(tiny, "F32");
  ck["model.norm.weight"].bytes.resize(4);  // offsets no longer fit shape
  EXPECT_THAT(LoadError(WriteModel(tiny.config, ck, "bytes")),
              HasSubstr("model.norm.weight"));

  Json config = tiny.config;
  config["rope_scaling"] = {{"rope_type", "yarn"}, {"factor", 4.0}};
  EXPECT_THAT(LoadError(WriteModel(config, ToCheckpoint(tiny, "F32"), "yarn")),
              HasSubstr("yarn"));

  config = tiny.config;
  config.erase("vocab_size");
  EXPECT_THAT(LoadError(WriteModel(config, ToCheckpoint(tiny, "F32"), "cfg")),
              HasSubstr("vocab_size"));

  const std::string dir = WriteModel(tiny, "F32", "truncated");
  WriteFile(std::filesystem::path(dir) / "model.safetensors",
            std::string("\xff\xff\x00\x00\x00\x00\x00\x00{}", 10));
  EXPECT_THAT(LoadError(dir), HasSubstr("header length"));
}

}  // namespace

// The engine against this reference: tests/model/engine_reference_test.cc.

}  // namespace layerproof::testing
