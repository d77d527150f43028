// kernels/model/config.h: Hugging Face config.json parsing and writing.
//
// The accepted configs are the published config.json files of
// meta-llama/Llama-3.1-8B, meta-llama/Llama-2-7b-hf, TinyLlama-1.1B-Chat-v1.0,
// HuggingFaceTB/SmolLM-135M, mistralai/Mistral-7B-v0.1 / -v0.2 and
// Qwen/Qwen2-0.5B, trimmed of keys the parser ignores where noted.

#include "kernels/model/config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

#include "tests/model/model_fixture.h"

namespace layerproof::kernels::model {
namespace {

using ::testing::HasSubstr;

constexpr char kLlama31_8B[] = R"({
  "architectures": ["LlamaForCausalLM"],
  "attention_bias": false,
  "attention_dropout": 0.0,
  "bos_token_id": 128000,
  "eos_token_id": [128001, 128008, 128009],
  "hidden_act": "silu",
  "hidden_size": 4096,
  "initializer_range": 0.02,
  "intermediate_size": 14336,
  "max_position_embeddings": 131072,
  "mlp_bias": false,
  "model_type": "llama",
  "num_attention_heads": 32,
  "num_hidden_layers": 32,
  "num_key_value_heads": 8,
  "pretraining_tp": 1,
  "rms_norm_eps": 1e-05,
  "rope_scaling": {
    "factor": 8.0,
    "low_freq_factor": 1.0,
    "high_freq_factor": 4.0,
    "original_max_position_embeddings": 8192,
    "rope_type": "llama3"
  },
  "rope_theta": 500000.0,
  "tie_word_embeddings": false,
  "torch_dtype": "bfloat16",
  "transformers_version": "4.43.0.dev0",
  "use_cache": true,
  "vocab_size": 128256
})";

// num_key_value_heads removed to check its default.
constexpr char kLlama2_7B[] = R"({
  "architectures": ["LlamaForCausalLM"], "bos_token_id": 1, "eos_token_id": 2,
  "hidden_act": "silu", "hidden_size": 4096, "initializer_range": 0.02,
  "intermediate_size": 11008, "max_position_embeddings": 4096,
  "model_type": "llama", "num_attention_heads": 32, "num_hidden_layers": 32,
  "pretraining_tp": 1, "rms_norm_eps": 1e-05, "rope_scaling": null,
  "tie_word_embeddings": false, "torch_dtype": "float16",
  "transformers_version": "4.31.0.dev0", "use_cache": true, "vocab_size": 32000
})";

constexpr char kTinyLlama[] = R"({
  "architectures": ["LlamaForCausalLM"], "attention_bias": false,
  "bos_token_id": 1, "eos_token_id": 2, "hidden_act": "silu",
  "hidden_size": 2048, "initializer_range": 0.02, "intermediate_size": 5632,
  "max_position_embeddings": 2048, "model_type": "llama",
  "num_attention_heads": 32, "num_hidden_layers": 22, "num_key_value_heads": 4,
  "pretraining_tp": 1, "rms_norm_eps": 1e-05, "rope_scaling": null,
  "rope_theta": 10000.0, "tie_word_embeddings": false,
  "torch_dtype": "bfloat16", "transformers_version": "4.35.0",
  "use_cache": true, "vocab_size": 32000
})";

constexpr char kSmolLm135M[] = R"({
  "architectures": ["LlamaForCausalLM"], "attention_bias": false,
  "attention_dropout": 0.0, "bos_token_id": 0, "eos_token_id": 0,
  "hidden_act": "silu", "hidden_size": 576, "initializer_range": 0.02,
  "intermediate_size": 1536, "max_position_embeddings": 2048,
  "model_type": "llama", "num_attention_heads": 9, "num_hidden_layers": 30,
  "num_key_value_heads": 3, "pretraining_tp": 1, "rms_norm_eps": 1e-05,
  "rope_scaling": null, "rope_theta": 10000.0, "tie_word_embeddings": true,
  "torch_dtype": "bfloat16", "transformers_version": "4.40.1",
  "use_cache": true, "vocab_size": 49152
})";

constexpr char kMistral7B_v01[] = R"({
  "architectures": ["MistralForCausalLM"], "bos_token_id": 1,
  "eos_token_id": 2, "hidden_act": "silu", "hidden_size": 4096,
  "initializer_range": 0.02, "intermediate_size": 14336,
  "max_position_embeddings": 32768, "model_type": "mistral",
  "num_attention_heads": 32, "num_hidden_layers": 32, "num_key_value_heads": 8,
  "rms_norm_eps": 1e-05, "rope_theta": 10000.0, "sliding_window": 4096,
  "tie_word_embeddings": false, "torch_dtype": "bfloat16",
  "transformers_version": "4.34.0.dev0", "use_cache": true, "vocab_size": 32000
})";

constexpr char kQwen2_05B[] = R"({
  "architectures": ["Qwen2ForCausalLM"], "attention_dropout": 0.0,
  "bos_token_id": 151643, "eos_token_id": 151643, "hidden_act": "silu",
  "hidden_size": 896, "initializer_range": 0.02, "intermediate_size": 4864,
  "max_position_embeddings": 131072, "max_window_layers": 24,
  "model_type": "qwen2", "num_attention_heads": 14, "num_hidden_layers": 24,
  "num_key_value_heads": 2, "rms_norm_eps": 1e-06, "rope_theta": 1000000.0,
  "sliding_window": 131072, "tie_word_embeddings": true,
  "torch_dtype": "bfloat16", "transformers_version": "4.40.1",
  "use_cache": true, "use_sliding_window": false, "vocab_size": 151936
})";

ModelConfig MustParse(const std::string& text) {
  StatusOr<ModelConfig> c = ParseModelConfig(text, "config.json");
  EXPECT_TRUE(c.ok()) << c.status().ToString();
  return c.ok() ? *c : ModelConfig{};
}

// A small Llama config as key -> raw JSON value, rendered with overrides;
// an override of "" removes the key.
std::string ConfigJson(
    const std::map<std::string, std::string>& overrides = {}) {
  std::map<std::string, std::string> fields = {
      {"architectures", R"(["LlamaForCausalLM"])"},
      {"model_type", R"("llama")"},
      {"hidden_size", "4096"},
      {"intermediate_size", "11008"},
      {"num_hidden_layers", "32"},
      {"num_attention_heads", "32"},
      {"num_key_value_heads", "8"},
      {"vocab_size", "32000"},
      {"max_position_embeddings", "4096"},
      {"rms_norm_eps", "1e-05"},
      {"rope_theta", "10000.0"},
      {"bos_token_id", "1"},
      {"eos_token_id", "2"},
  };
  for (const auto& [k, v] : overrides) {
    if (v.empty()) {
      fields.erase(k);
    } else {
      fields[k] = v;
    }
  }
  std::string s = "{";
  for (const auto& [k, v] : fields) {
    s += (s.size() > 1 ? ", \"" : "\"") + k + "\": " + v;
  }
  return s + "}";
}

TEST(ConfigTest, ParsesLlama31WithLlama3RopeScaling) {
  const ModelConfig c = MustParse(kLlama31_8B);
  EXPECT_EQ(c.architecture, "LlamaForCausalLM");
  EXPECT_EQ(c.model_type, "llama");
  EXPECT_EQ(c.hidden_size, 4096);
  EXPECT_EQ(c.intermediate_size, 14336);
  EXPECT_EQ(c.num_layers, 32);
  EXPECT_EQ(c.num_heads, 32);
  EXPECT_EQ(c.num_kv_heads, 8);
  EXPECT_EQ(c.head_dim, 128);
  EXPECT_EQ(c.vocab_size, 128256);
  EXPECT_EQ(c.max_positions, 131072);
  EXPECT_EQ(c.rms_norm_eps, 1e-5);
  EXPECT_EQ(c.rope_theta, 500000.0);
  EXPECT_EQ(c.rope_scaling.type, RopeScaling::Type::kLlama3);
  EXPECT_EQ(c.rope_scaling.factor, 8.0);
  EXPECT_EQ(c.rope_scaling.low_freq_factor, 1.0);
  EXPECT_EQ(c.rope_scaling.high_freq_factor, 4.0);
  EXPECT_EQ(c.rope_scaling.original_max_positions, 8192);
  EXPECT_FALSE(c.tie_word_embeddings);
  EXPECT_FALSE(c.qkv_bias);
  EXPECT_EQ(c.eos_token_ids, (std::vector<int32_t>{128001, 128008, 128009}));
  EXPECT_EQ(c.bos_token_id, 128000);
}

TEST(ConfigTest, ParsesLlama2WithDefaults) {
  const ModelConfig c = MustParse(kLlama2_7B);
  EXPECT_EQ(c.num_kv_heads, 32);  // no GQA: defaults to num_attention_heads
  EXPECT_EQ(c.head_dim, 128);
  EXPECT_EQ(c.rope_theta, 10000.0);  // absent: transformers' default
  EXPECT_EQ(c.rope_scaling.type, RopeScaling::Type::kNone);
  EXPECT_EQ(c.eos_token_ids, std::vector<int32_t>{2});
  EXPECT_EQ(c.bos_token_id, 1);
}

TEST(ConfigTest, ParsesTinyLlamaWithGqa) {
  const ModelConfig c = MustParse(kTinyLlama);
  EXPECT_EQ(c.architecture, "LlamaForCausalLM");
  EXPECT_EQ(c.num_heads, 32);
  EXPECT_EQ(c.num_kv_heads, 4);
  EXPECT_EQ(c.head_dim, 64);
  EXPECT_EQ(c.num_layers, 22);
  EXPECT_FALSE(c.tie_word_embeddings);
}

TEST(ConfigTest, ParsesSmolLmWithTiedEmbeddings) {
  const ModelConfig c = MustParse(kSmolLm135M);
  EXPECT_TRUE(c.tie_word_embeddings);
  EXPECT_EQ(c.num_heads, 9);
  EXPECT_EQ(c.num_kv_heads, 3);
  EXPECT_EQ(c.head_dim, 64);
  EXPECT_EQ(c.bos_token_id, 0);
  EXPECT_EQ(c.eos_token_ids, std::vector<int32_t>{0});
}

TEST(ConfigTest, MistralSlidingWindowCapsMaxPositions) {
  const ModelConfig c = MustParse(kMistral7B_v01);
  EXPECT_EQ(c.architecture, "MistralForCausalLM");
  EXPECT_EQ(c.model_type, "mistral");
  EXPECT_EQ(c.max_positions, 4096);
  EXPECT_FALSE(c.qkv_bias);
}

TEST(ConfigTest, MistralNullSlidingWindowKeepsMaxPositions) {
  // Mistral-7B-v0.2 and later: "sliding_window": null.
  std::string text = kMistral7B_v01;
  text.replace(text.find("\"sliding_window\": 4096"),
               std::string("\"sliding_window\": 4096").size(),
               "\"sliding_window\": null");
  EXPECT_EQ(MustParse(text).max_positions, 32768);
}

TEST(ConfigTest, MistralWithoutSlidingWindowUsesTransformersDefault) {
  std::string text = kMistral7B_v01;
  text.replace(text.find("\"sliding_window\": 4096,"),
               std::string("\"sliding_window\": 4096,").size(), "");
  EXPECT_EQ(MustParse(text).max_positions, 4096);
}

TEST(ConfigTest, ParsesQwen2WithBiasAndTiedEmbeddings) {
  const ModelConfig c = MustParse(kQwen2_05B);
  EXPECT_EQ(c.architecture, "Qwen2ForCausalLM");
  EXPECT_EQ(c.model_type, "qwen2");
  EXPECT_TRUE(c.qkv_bias);
  EXPECT_TRUE(c.tie_word_embeddings);
  EXPECT_EQ(c.num_heads, 14);
  EXPECT_EQ(c.num_kv_heads, 2);
  EXPECT_EQ(c.head_dim, 64);
  EXPECT_EQ(c.max_positions, 131072);  // use_sliding_window false
  EXPECT_EQ(c.rms_norm_eps, 1e-6);
  EXPECT_EQ(c.rope_theta, 1e6);
  EXPECT_EQ(c.eos_token_ids, std::vector<int32_t>{151643});
}

// Qwen3-0.6B's config.json (the published values).
constexpr char kQwen3_06B[] = R"({
  "architectures": ["Qwen3ForCausalLM"], "attention_bias": false,
  "attention_dropout": 0.0, "bos_token_id": 151643, "eos_token_id": 151645,
  "head_dim": 128, "hidden_act": "silu", "hidden_size": 1024,
  "initializer_range": 0.02, "intermediate_size": 3072,
  "max_position_embeddings": 40960, "max_window_layers": 28,
  "model_type": "qwen3", "num_attention_heads": 16, "num_hidden_layers": 28,
  "num_key_value_heads": 8, "rms_norm_eps": 1e-06, "rope_scaling": null,
  "rope_theta": 1000000, "sliding_window": null, "tie_word_embeddings": true,
  "torch_dtype": "bfloat16", "transformers_version": "4.51.0",
  "use_cache": true, "use_sliding_window": false, "vocab_size": 151936
})";

TEST(ConfigTest, ParsesQwen3WithQkNormAndExplicitHeadDim) {
  const ModelConfig c = MustParse(kQwen3_06B);
  EXPECT_EQ(c.architecture, "Qwen3ForCausalLM");
  EXPECT_EQ(c.model_type, "qwen3");
  EXPECT_TRUE(c.qk_norm);
  EXPECT_FALSE(c.qkv_bias);
  EXPECT_TRUE(c.tie_word_embeddings);
  EXPECT_EQ(c.head_dim, 128);  // not 1024 / 16
  EXPECT_EQ(c.num_kv_heads, 8);
  EXPECT_EQ(c.rope_theta, 1e6);
  EXPECT_EQ(c.eos_token_ids, std::vector<int32_t>{151645});
  EXPECT_EQ(MustParse(WriteModelConfig(c)), c);
  // attention_bias would bias o_proj too: refused, naming the field.
  std::string biased = kQwen3_06B;
  biased.replace(biased.find("\"attention_bias\": false"), 23,
                 "\"attention_bias\": true");
  const auto bad = ParseModelConfig(biased, "config.json");
  EXPECT_EQ(bad.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(bad.status().message().find("attention_bias"), std::string::npos);
}

TEST(ConfigTest, GenerationConfigReplacesStopIds) {
  // Qwen2.5's generation_config.json stops on <|im_end|> and <|endoftext|>
  // where config.json names only <|endoftext|>.
  ModelConfig c = MustParse(kQwen2_05B);
  ASSERT_TRUE(ApplyGenerationConfig(
                  R"({"bos_token_id": 151643, "eos_token_id": [151645, 151643],
                      "do_sample": true, "temperature": 0.7})",
                  "generation_config.json", &c)
                  .ok());
  EXPECT_EQ(c.eos_token_ids, (std::vector<int32_t>{151645, 151643}));
  // Without eos_token_id it changes nothing; a bad id names the file.
  ASSERT_TRUE(ApplyGenerationConfig(R"({"top_p": 0.8})", "g.json", &c).ok());
  EXPECT_EQ(c.eos_token_ids, (std::vector<int32_t>{151645, 151643}));
  const Status bad =
      ApplyGenerationConfig(R"({"eos_token_id": 99999999})", "g.json", &c);
  EXPECT_EQ(bad.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.message().find("g.json: eos_token_id"), std::string::npos)
      << bad.message();
  EXPECT_FALSE(ApplyGenerationConfig("[1]", "g.json", &c).ok());
}

TEST(ConfigTest, ExplicitHeadDimNeedNotDivideHidden) {
  const ModelConfig c = MustParse(ConfigJson({{"hidden_size", "3000"},
                                              {"head_dim", "64"},
                                              {"num_attention_heads", "40"},
                                              {"num_key_value_heads", ""}}));
  EXPECT_EQ(c.head_dim, 64);
  EXPECT_EQ(c.num_kv_heads, 40);
}

TEST(ConfigTest, ArchitectureFromModelTypeAlone) {
  const ModelConfig c = MustParse(ConfigJson({{"architectures", ""}}));
  EXPECT_EQ(c.architecture, "LlamaForCausalLM");
}

TEST(ConfigTest, OldStyleRopeScalingTypeKey) {
  const ModelConfig c = MustParse(
      ConfigJson({{"rope_scaling",
                   R"({"type": "llama3", "factor": 32.0, "low_freq_factor": 1.0,
            "high_freq_factor": 4.0, "original_max_position_embeddings": 8192})"}}));
  EXPECT_EQ(c.rope_scaling.type, RopeScaling::Type::kLlama3);
  EXPECT_EQ(c.rope_scaling.factor, 32.0);
}

TEST(ConfigTest, RefusesUnsupportedArchitecture) {
  const StatusOr<ModelConfig> c =
      ParseModelConfig(ConfigJson({{"architectures", R"(["GPT2LMHeadModel"])"},
                                   {"model_type", R"("gpt2")"}}),
                       "config.json");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), StatusCode::kUnimplemented);
  EXPECT_THAT(
      c.status().message(),
      HasSubstr("config.json: architectures: got [\"GPT2LMHeadModel\"]"));
}

TEST(ConfigTest, RefusesUnsupportedFeaturesAsUnimplemented) {
  const struct {
    std::map<std::string, std::string> overrides;
    const char* field;
  } cases[] = {
      {{{"rope_scaling", R"({"rope_type": "linear", "factor": 2.0})"}},
       "rope_scaling: rope_type: got \"linear\""},
      {{{"rope_scaling", R"({"type": "dynamic", "factor": 2.0})"}},
       "rope_scaling: type: got \"dynamic\""},
      {{{"rope_scaling", R"({"rope_type": "yarn", "factor": 4.0})"}},
       "rope_scaling: rope_type: got \"yarn\""},
      {{{"attention_bias", "true"}}, "attention_bias (o_proj bias)"},
      {{{"mlp_bias", "true"}}, "mlp_bias"},
      {{{"hidden_act", R"("gelu")"}}, "hidden_act: got \"gelu\""},
      {{{"architectures", R"(["Qwen2ForCausalLM"])"},
        {"model_type", R"("qwen2")"},
        {"use_sliding_window", "true"}},
       "use_sliding_window"},
  };
  for (const auto& tc : cases) {
    const StatusOr<ModelConfig> c =
        ParseModelConfig(ConfigJson(tc.overrides), "config.json");
    ASSERT_FALSE(c.ok()) << tc.field;
    EXPECT_EQ(c.status().code(), StatusCode::kUnimplemented) << tc.field;
    EXPECT_THAT(c.status().message(), HasSubstr(tc.field));
  }
}

TEST(ConfigTest, RefusesBadFieldsNamingThem) {
  const struct {
    std::map<std::string, std::string> overrides;
    const char* message;
  } cases[] = {
      {{{"num_key_value_heads", "5"}},
       "config.json: num_key_value_heads: got 5, want a divisor of "
       "num_attention_heads (32)"},
      {{{"hidden_size", R"("4096")"}},
       "config.json: hidden_size: got \"4096\", want an integer in [1, 65536]"},
      {{{"hidden_size", "131072"}}, "config.json: hidden_size: got 131072"},
      {{{"hidden_size", "4096.5"}}, "config.json: hidden_size: got 4096.5"},
      {{{"num_hidden_layers", "-2"}}, "config.json: num_hidden_layers: got -2"},
      {{{"num_hidden_layers", "2000"}}, "num_hidden_layers: got 2000"},
      {{{"num_attention_heads", "0"}}, "num_attention_heads: got 0"},
      {{{"vocab_size", "16777217"}}, "vocab_size: got 16777217"},
      {{{"intermediate_size", ""}}, "config.json: intermediate_size: missing"},
      {{{"max_position_embeddings", ""}},
       "config.json: max_position_embeddings: missing"},
      {{{"hidden_size", "4000"},
        {"num_attention_heads", "48"},
        {"num_key_value_heads", "8"}},
       "hidden_size: got 4000, want a multiple of num_attention_heads (48)"},
      {{{"head_dim", "63"}}, "head_dim: got 63, want an even number"},
      {{{"rms_norm_eps", "-1e-5"}}, "rms_norm_eps: got -1e-05"},
      {{{"rms_norm_eps", "\"small\""}}, "rms_norm_eps: got \"small\""},
      {{{"rope_theta", "0.5"}}, "rope_theta: got 0.5"},
      {{{"tie_word_embeddings", "1"}},
       "tie_word_embeddings: got 1, want true "
       "or false"},
      {{{"eos_token_id", R"("</s>")"}}, "eos_token_id: got \"</s>\""},
      {{{"eos_token_id", "[2, 32000]"}}, "eos_token_id: got [2,32000]"},
      {{{"bos_token_id", "1.5"}}, "bos_token_id: got 1.5"},
      {{{"architectures", R"("LlamaForCausalLM")"}},
       "architectures: got \"LlamaForCausalLM\", want a list of one string"},
      {{{"model_type", R"("mistral")"}},
       "model_type: got \"mistral\", want \"llama\" for LlamaForCausalLM"},
      {{{"architectures", ""}, {"model_type", ""}}, "architectures: missing"},
      {{{"rope_scaling", R"({"rope_type": "llama3", "factor": 8.0})"}},
       "rope_scaling: low_freq_factor: missing"},
      {{{"rope_scaling",
         R"({"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 4.0,
             "high_freq_factor": 1.0, "original_max_position_embeddings": 8192})"}},
       "rope_scaling: high_freq_factor: got 1.0, want a number > "
       "low_freq_factor (4.0)"},
      {{{"rope_scaling",
         R"({"rope_type": "llama3", "factor": 0.5, "low_freq_factor": 1.0,
             "high_freq_factor": 4.0, "original_max_position_embeddings": 8192})"}},
       "rope_scaling: factor: got 0.5"},
      {{{"rope_scaling", "[]"}}, "rope_scaling: got [], want an object"},
  };
  for (const auto& tc : cases) {
    const StatusOr<ModelConfig> c =
        ParseModelConfig(ConfigJson(tc.overrides), "config.json");
    ASSERT_FALSE(c.ok()) << tc.message;
    EXPECT_EQ(c.status().code(), StatusCode::kInvalidArgument) << tc.message;
    EXPECT_THAT(c.status().message(), HasSubstr(tc.message));
  }
}

TEST(ConfigTest, BadJsonNamesFileAndPosition) {
  const StatusOr<ModelConfig> c = ParseModelConfig(
      "{\"hidden_size\": 16,\n  \"vocab_size\" 32}", "/models/x/config.json");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(c.status().message(),
              HasSubstr("/models/x/config.json: bad JSON: parse error at "
                        "line 2, column"));
}

TEST(ConfigTest, RefusesNonObjectAndDuplicateKeys) {
  StatusOr<ModelConfig> c = ParseModelConfig("[1, 2]", "config.json");
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(c.status().message(), HasSubstr("want a JSON object"));
  c = ParseModelConfig(ConfigJson({{"vocab_size", "32000, \"vocab_size\": 7"}}),
                       "config.json");
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(c.status().message(), HasSubstr("duplicate key \"vocab_size\""));
}

TEST(ConfigTest, WriteModelConfigRoundTrips) {
  ModelConfig odd = fixture::TinyConfig();
  odd.rms_norm_eps = 0.1 + 0.2;  // needs all 17 digits
  odd.rope_theta = 123456.789;
  odd.eos_token_ids = {};
  odd.bos_token_id = -1;
  ModelConfig multi = fixture::TinyConfig();
  multi.eos_token_ids = {2, 3, 5};
  for (const ModelConfig& c :
       {MustParse(kLlama31_8B), MustParse(kLlama2_7B), MustParse(kSmolLm135M),
        MustParse(kMistral7B_v01), MustParse(kQwen2_05B), fixture::TinyConfig(),
        fixture::TinyQwen2Config(), odd, multi}) {
    const std::string text = WriteModelConfig(c);
    const ModelConfig back = MustParse(text);
    EXPECT_TRUE(back == c) << text;
    EXPECT_EQ(WriteModelConfig(back), text);
  }
}

TEST(ConfigTest, WriteModelConfigIsPrettyHuggingFaceJson) {
  const std::string text = WriteModelConfig(MustParse(kLlama31_8B));
  EXPECT_EQ(
      text.rfind("{\n  \"architectures\": [\n    \"LlamaForCausalLM\"", 0), 0u)
      << text;
  EXPECT_THAT(text, HasSubstr("\n  \"num_key_value_heads\": 8,\n"));
  EXPECT_THAT(text, HasSubstr("\"rope_type\": \"llama3\""));
  EXPECT_THAT(text, HasSubstr("\"rms_norm_eps\": 1e-05"));
  EXPECT_THAT(text, HasSubstr("\"eos_token_id\": [\n    128001,"));
  // A Mistral config states its (already applied) window explicitly, so
  // transformers does not fall back to its 4096 default.
  EXPECT_THAT(WriteModelConfig(MustParse(kMistral7B_v01)),
              HasSubstr("\"sliding_window\": null"));
}

TEST(ConfigTest, EqualityComparesEveryField) {
  const ModelConfig a = fixture::TinyConfig();
  ModelConfig b = a;
  EXPECT_TRUE(a == b);
  b.rope_scaling.type = RopeScaling::Type::kLlama3;
  EXPECT_FALSE(a == b);
  b = a;
  b.eos_token_ids.push_back(3);
  EXPECT_FALSE(a == b);
  b = a;
  b.rms_norm_eps = 1e-6;
  EXPECT_FALSE(a == b);
}

}  // namespace
}  // namespace layerproof::kernels::model
