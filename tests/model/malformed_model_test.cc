// Malformed safetensors files and model directories: each must give a
// clear error naming the file, the tensor and the field, and none may
// crash. Also the loader on well-formed tiny models, since what it accepts
// is the other half of what it refuses.

#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "kernels/model/model.h"
#include "kernels/model/safetensors.h"
#include "tests/model/model_fixture.h"

namespace layerproof::kernels::model {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

Status FromBytesStatus(const std::string& image) {
  return SafetensorsFile::FromBytes(
             reinterpret_cast<const unsigned char*>(image.data()), image.size(),
             "mem.safetensors")
      .status();
}

LoadOptions NoCache() {
  LoadOptions o;
  o.write_digest_cache = false;
  return o;
}

Status LoadStatus(const std::string& dir) {
  return Model::Load(dir, NoCache()).status();
}

// --- safetensors files ---------------------------------------------------

TEST(MalformedSafetensorsTest, HeaderErrorsNameTensorAndField) {
  constexpr char kW[] =
      R"("w":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16]})";
  const struct {
    std::string header;
    size_t data_bytes;
    StatusCode code;
    std::vector<std::string> want;
  } cases[] = {
      {R"({"w": {"dtype": "F32",)",
       16,
       StatusCode::kInvalidArgument,
       {"mem.safetensors: header: bad JSON: parse error at line 1"}},
      {"{\"w\xff\": 1}",
       0,
       StatusCode::kInvalidArgument,
       {"mem.safetensors: header: bad JSON"}},
      {"", 0, StatusCode::kInvalidArgument, {"header: bad JSON"}},
      {"[1]",
       0,
       StatusCode::kInvalidArgument,
       {"mem.safetensors: header: got [1], want a JSON object"}},
      {R"({"w": 5})",
       0,
       StatusCode::kInvalidArgument,
       {"mem.safetensors: w: got 5, want an object"}},
      {R"({"w":{"shape":[1],"data_offsets":[0,4]}})",
       4,
       StatusCode::kInvalidArgument,
       {"mem.safetensors: w: dtype: missing"}},
      {R"({"w":{"dtype":"F32","data_offsets":[0,4]}})",
       4,
       StatusCode::kInvalidArgument,
       {"w: shape: missing"}},
      {R"({"w":{"dtype":"F32","shape":[1]}})",
       4,
       StatusCode::kInvalidArgument,
       {"w: data_offsets: missing"}},
      {R"({"w":{"dtype":1,"shape":[1],"data_offsets":[0,4]}})",
       4,
       StatusCode::kInvalidArgument,
       {"w: dtype: got 1, want a string"}},
      {R"({"w":{"dtype":"F32","shape":"2","data_offsets":[0,8]}})",
       8,
       StatusCode::kInvalidArgument,
       {"w: shape: got \"2\""}},
      {R"({"w":{"dtype":"F32","shape":[2.0,2],"data_offsets":[0,16]}})",
       16,
       StatusCode::kInvalidArgument,
       {"w: shape: got [2.0,2]"}},
      {R"({"w":{"dtype":"F32","shape":[-1,4],"data_offsets":[0,16]}})",
       16,
       StatusCode::kInvalidArgument,
       {"w: shape: got [-1,4], want a list of non-negative integers"}},
      {R"({"w":{"dtype":"I64","shape":[2],"data_offsets":[0,16]}})",
       16,
       StatusCode::kUnimplemented,
       {"mem.safetensors: w: dtype: got \"I64\"", "I64 is not supported"}},
      {R"({"w":{"dtype":"F33","shape":[2],"data_offsets":[0,8]}})",
       8,
       StatusCode::kInvalidArgument,
       {"w: dtype: got \"F33\""}},
      {R"({"w":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,16]}})",
       16,
       StatusCode::kInvalidArgument,
       {"w: shape:", "fits in 64 bits"}},
      {R"({"w":{"dtype":"F32","shape":[2,2],"data_offsets":[0,12]}})",
       16,
       StatusCode::kInvalidArgument,
       {"w: data_offsets: got [0,12], want end - begin = 16"}},
      {R"({"w":{"dtype":"F32","shape":[2,2],"data_offsets":[16,0]}})",
       16,
       StatusCode::kInvalidArgument,
       {"w: data_offsets:", "begin <= end"}},
      {std::string("{") + kW + "}",
       8,
       StatusCode::kInvalidArgument,
       {"mem.safetensors: w: data_offsets: got [0,16], want end <= 8",
        "offsets past EOF"}},
      {R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[0]}})",
       4,
       StatusCode::kInvalidArgument,
       {"w: data_offsets: got [0]"}},
      {R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[-4,0]}})",
       4,
       StatusCode::kInvalidArgument,
       {"w: data_offsets: got [-4,0]"}},
      {R"({"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]},)"
       R"("b":{"dtype":"F32","shape":[4],"data_offsets":[8,24]}})",
       24,
       StatusCode::kInvalidArgument,
       {"mem.safetensors: tensors a and b overlap", "[0, 16] and [8, 24]"}},
      {R"({"big":{"dtype":"F32","shape":[8],"data_offsets":[0,32]},)"
       R"("x":{"dtype":"F32","shape":[1],"data_offsets":[32,36]},)"
       R"("in":{"dtype":"F32","shape":[2],"data_offsets":[8,16]}})",
       36,
       StatusCode::kInvalidArgument,
       {"tensors big and in overlap"}},
      {std::string(R"({"__metadata__":[1],)") + kW + "}",
       16,
       StatusCode::kInvalidArgument,
       {"mem.safetensors: __metadata__: got [1], want an object"}},
      {std::string(R"({"__metadata__":{"k":1},)") + kW + "}",
       16,
       StatusCode::kInvalidArgument,
       {"mem.safetensors: __metadata__: k: got 1, want a string"}},
      {std::string("{") + kW + "," + kW + "}",
       16,
       StatusCode::kInvalidArgument,
       {"duplicate key \"w\""}},
      {R"({"":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})",
       4,
       StatusCode::kInvalidArgument,
       {"empty name"}},
  };
  for (const auto& tc : cases) {
    const Status s =
        FromBytesStatus(fixture::RawSafetensors(tc.header, tc.data_bytes));
    ASSERT_FALSE(s.ok()) << tc.header;
    EXPECT_EQ(s.code(), tc.code) << tc.header << "\n" << s.message();
    for (const std::string& want : tc.want) {
      EXPECT_THAT(s.message(), HasSubstr(want)) << tc.header;
    }
  }
}

TEST(MalformedSafetensorsTest, FileShorterThanLengthPrefix) {
  EXPECT_THAT(FromBytesStatus(std::string(5, '\0')).message(),
              HasSubstr("mem.safetensors: file is 5 bytes, shorter than the "
                        "8-byte header length"));
  fixture::TempDir dir;
  for (const size_t size : {0, 7}) {
    fixture::WriteText(dir.File("short.safetensors"), std::string(size, '{'));
    const Status s =
        SafetensorsFile::Open(dir.File("short.safetensors")).status();
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(s.message(),
                AllOf(HasSubstr("short.safetensors"),
                      HasSubstr("file is " + std::to_string(size) + " bytes")));
  }
}

TEST(MalformedSafetensorsTest, HugeHeaderLength) {
  std::string image = fixture::RawSafetensors("{}", 100);
  const uint64_t huge = 1ull << 40;
  for (int i = 0; i < 8; ++i) image[size_t(i)] = char(uint8_t(huge >> (8 * i)));
  EXPECT_THAT(FromBytesStatus(image).message(),
              HasSubstr("mem.safetensors: header length: got 1099511627776, "
                        "want <= 104857600 (huge header length)"));
  for (int i = 0; i < 8; ++i) image[size_t(i)] = char(0xFF);
  EXPECT_THAT(FromBytesStatus(image).message(),
              HasSubstr("huge header length"));
}

TEST(MalformedSafetensorsTest, HeaderLengthPastEndOfFile) {
  std::string image = fixture::RawSafetensors("{}", 90);  // 100 bytes
  image[0] = char(200);
  image[1] = 0;
  EXPECT_THAT(FromBytesStatus(image).message(),
              HasSubstr("mem.safetensors: header length: got 200, want <= 92"));
}

TEST(MalformedSafetensorsTest, RandomCorruptionNeverCrashes) {
  // Byte flips and truncations of a valid file: every outcome is a Status,
  // and an accepted file's views stay inside the image.
  fixture::TempDir dir;
  const ModelConfig c = fixture::TinyConfig();
  fixture::WriteSafetensors(dir.File("m.safetensors"),
                            fixture::TinyTensors(c, DType::kF32));
  const std::string valid = fixture::ReadText(dir.File("m.safetensors"));
  uint64_t header = 0;
  for (int i = 7; i >= 0; --i)
    header = (header << 8) | uint8_t(valid[size_t(i)]);
  uint32_t x = 12345;
  auto next = [&x] { return x = x * 1664525u + 1013904223u; };
  int accepted = 0;
  for (int iter = 0; iter < 500; ++iter) {
    std::string image = valid;
    if (iter % 3 == 0) {
      image.resize(next() % image.size());
    } else {
      for (int k = 0; k < 1 + iter % 4; ++k) {
        image[(next() >> 8) % (8 + header)] = char(next() >> 24);
      }
    }
    const auto* bytes = reinterpret_cast<const unsigned char*>(image.data());
    StatusOr<std::unique_ptr<SafetensorsFile>> f =
        SafetensorsFile::FromBytes(bytes, image.size(), "fuzz");
    if (!f.ok()) {
      EXPECT_THAT(f.status().message(), HasSubstr("fuzz"));
      continue;
    }
    ++accepted;
    for (const auto& [name, t] : (*f)->tensors()) {
      ASSERT_GE(t.data, bytes);
      ASSERT_LE(t.data + t.bytes, bytes + image.size()) << name;
    }
  }
  EXPECT_GT(accepted, 0);  // some flips land in data or harmless places
}

TEST(MalformedSafetensorsTest, SparseMultiGigabyteFileOpensWithoutReading) {
  // A 6 GiB tensor in a sparse file: Open validates the header and maps the
  // rest without touching it.
  fixture::TempDir dir;
  const uint64_t bytes = 6ull << 30;
  const std::string header = R"({"big":{"dtype":"BF16","shape":[3221225472],)"
                             R"("data_offsets":[0,6442450944]}})";
  const std::string path = dir.File("big.safetensors");
  fixture::WriteText(path, fixture::RawSafetensors(header, 0));
  std::error_code ec;
  std::filesystem::resize_file(path, 8 + header.size() + bytes, ec);
  if (ec) GTEST_SKIP() << "cannot create a sparse file here: " << ec.message();
  StatusOr<std::unique_ptr<SafetensorsFile>> f = SafetensorsFile::Open(path);
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ((*f)->tensors().at("big").bytes, bytes);
}

// --- model directories ---------------------------------------------------

class MalformedModelTest : public ::testing::Test {
 protected:
  // A valid tiny Llama in dir_ with `tensors_` altered by the test first.
  void Write(int shards = 1) {
    fixture::WriteTinyModel(dir_.path(), config_, tensors_, shards);
  }

  fixture::TempDir dir_;
  ModelConfig config_ = fixture::TinyConfig();
  std::vector<fixture::TestTensor> tensors_ = fixture::TinyTensors(config_);
};

TEST_F(MalformedModelTest, ValidUntiedLlamaLoads) {
  Write();
  StatusOr<std::unique_ptr<Model>> m = Model::Load(dir_.path(), NoCache());
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  const Model& model = **m;
  EXPECT_TRUE(model.config() == config_);
  EXPECT_EQ(model.dir(), dir_.path());
  EXPECT_EQ(model.tensors().size(), tensors_.size());
  EXPECT_EQ(model.embed_tokens().name, "model.embed_tokens.weight");
  EXPECT_EQ(model.lm_head().name, "lm_head.weight");
  EXPECT_EQ(model.final_norm().shape, std::vector<int64_t>{16});
  EXPECT_EQ(model.block(1).up_proj.name, "model.layers.1.mlp.up_proj.weight");
  EXPECT_EQ(model.block(0).k_proj.shape, (std::vector<int64_t>{8, 16}));
  EXPECT_EQ(model.block(0).q_bias.data, nullptr);
  // Views point at the file's bytes, unchanged.
  const fixture::TestTensor* down =
      fixture::FindTensor(&tensors_, "model.layers.1.mlp.down_proj.weight");
  ASSERT_NE(down, nullptr);
  ASSERT_EQ(model.block(1).down_proj.bytes, down->bytes.size());
  EXPECT_EQ(std::memcmp(model.block(1).down_proj.data, down->bytes.data(),
                        down->bytes.size()),
            0);
  std::vector<std::string> names;
  for (const auto& [name, t] : model.tensors()) names.push_back(name);
  EXPECT_EQ(names, ExpectedTensorNames(config_));
}

TEST_F(MalformedModelTest, ValidTiedQwen2WithBiasesAndMixedDtypesLoads) {
  config_ = fixture::TinyQwen2Config();
  tensors_ = fixture::TinyTensors(config_, DType::kF16);
  *fixture::FindTensor(&tensors_, "model.norm.weight") =
      fixture::MakeTensor("model.norm.weight", DType::kF32, {16}, 9);
  *fixture::FindTensor(&tensors_, "model.layers.0.self_attn.k_proj.bias") =
      fixture::MakeTensor("model.layers.0.self_attn.k_proj.bias", DType::kBF16,
                          {8}, 9);
  Write(3);
  StatusOr<std::unique_ptr<Model>> m = Model::Load(dir_.path(), NoCache());
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  const Model& model = **m;
  EXPECT_EQ(model.lm_head().data, model.embed_tokens().data);  // tied
  EXPECT_EQ(model.final_norm().dtype, DType::kF32);
  EXPECT_EQ(model.block(0).k_bias.dtype, DType::kBF16);
  EXPECT_EQ(model.block(1).q_bias.shape, std::vector<int64_t>{16});
  EXPECT_EQ(model.block(1).v_bias.name, "model.layers.1.self_attn.v_proj.bias");
  EXPECT_EQ(model.tensors().count("lm_head.weight"), 0u);
}

TEST_F(MalformedModelTest, ExpectedTensorNamesFollowConfig) {
  const std::vector<std::string> untied = ExpectedTensorNames(config_);
  EXPECT_EQ(untied.size(), 3u + 2u * 9u);
  EXPECT_TRUE(std::is_sorted(untied.begin(), untied.end()));
  const std::vector<std::string> qwen =
      ExpectedTensorNames(fixture::TinyQwen2Config());
  EXPECT_EQ(qwen.size(), 2u + 2u * 12u);
  EXPECT_TRUE(std::count(qwen.begin(), qwen.end(),
                         "model.layers.1.self_attn.q_proj.bias"));
  EXPECT_FALSE(std::count(qwen.begin(), qwen.end(), "lm_head.weight"));
}

TEST_F(MalformedModelTest, OldRotaryInvFreqBuffersAreIgnored) {
  tensors_.push_back(fixture::MakeTensor(
      "model.layers.0.self_attn.rotary_emb.inv_freq", DType::kF32, {2}, 1));
  tensors_.push_back(fixture::MakeTensor(
      "model.layers.1.self_attn.rotary_emb.inv_freq", DType::kF32, {2}, 1));
  Write();
  StatusOr<std::unique_ptr<Model>> m = Model::Load(dir_.path(), NoCache());
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(
      (*m)->tensors().count("model.layers.0.self_attn.rotary_emb.inv_freq"),
      0u);
}

TEST_F(MalformedModelTest, TruncatedSafetensorsFile) {
  Write();
  const std::string path = dir_.File("model.safetensors");
  std::filesystem::resize_file(path, std::filesystem::file_size(path) - 10);
  const Status s = LoadStatus(dir_.path());
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  // The writer lays tensors out in declaration order: the last one ends
  // past the shortened file.
  EXPECT_THAT(s.message(),
              AllOf(HasSubstr("model.safetensors: " + tensors_.back().name +
                              ": data_offsets"),
                    HasSubstr("offsets past EOF")));
}

TEST_F(MalformedModelTest, UnsupportedDtype) {
  Write();
  fixture::PatchHeader(dir_.File("model.safetensors"),
                       R"("model.norm.weight":{"dtype":"BF16")",
                       R"("model.norm.weight":{"dtype":"I64")");
  const Status s = LoadStatus(dir_.path());
  EXPECT_EQ(s.code(), StatusCode::kUnimplemented);
  EXPECT_THAT(s.message(),
              HasSubstr("model.safetensors: model.norm.weight: dtype: got "
                        "\"I64\""));
}

TEST_F(MalformedModelTest, OverlappingTensorsInModel) {
  Write();
  // embed_tokens is first at [0, 1024]; make norm claim some of its bytes.
  const std::string norm =
      R"("model.norm.weight":{"dtype":"BF16","shape":[16],"data_offsets":[)";
  const std::string raw = fixture::ReadText(dir_.File("model.safetensors"));
  const size_t at = raw.find(norm);
  ASSERT_NE(at, std::string::npos);
  const size_t end = raw.find(']', at + norm.size());
  fixture::PatchHeader(dir_.File("model.safetensors"),
                       raw.substr(at, end + 1 - at), norm + "32,64]");
  const Status s = LoadStatus(dir_.path());
  EXPECT_THAT(s.message(), HasSubstr("tensors model.embed_tokens.weight and "
                                     "model.norm.weight overlap"));
}

TEST_F(MalformedModelTest, ShapeMismatchAgainstConfig) {
  *fixture::FindTensor(&tensors_, "model.layers.1.mlp.up_proj.weight") =
      fixture::MakeTensor("model.layers.1.mlp.up_proj.weight", DType::kBF16,
                          {24, 20}, 1);
  Write();
  const Status s = LoadStatus(dir_.path());
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(),
              HasSubstr("model.safetensors: model.layers.1.mlp.up_proj.weight: "
                        "shape [24, 20], want [24, 16] (config "
                        "intermediate_size 24, hidden_size 16)"));
}

TEST_F(MalformedModelTest, GqaShapeMismatchNamesHeadFields) {
  // k_proj sized for 4 KV heads while the config has 2.
  *fixture::FindTensor(&tensors_, "model.layers.0.self_attn.k_proj.weight") =
      fixture::MakeTensor("model.layers.0.self_attn.k_proj.weight",
                          DType::kBF16, {16, 16}, 1);
  Write();
  EXPECT_THAT(LoadStatus(dir_.path()).message(),
              HasSubstr("model.layers.0.self_attn.k_proj.weight: shape [16, "
                        "16], want [8, 16] (config num_key_value_heads 2 x "
                        "head_dim 4, hidden_size 16)"));
}

TEST_F(MalformedModelTest, NormWeightMustBeOneDimensional) {
  *fixture::FindTensor(&tensors_, "model.layers.0.input_layernorm.weight") =
      fixture::MakeTensor("model.layers.0.input_layernorm.weight", DType::kBF16,
                          {1, 16}, 1);
  Write();
  EXPECT_THAT(LoadStatus(dir_.path()).message(),
              HasSubstr("model.layers.0.input_layernorm.weight: shape [1, 16], "
                        "want [16]"));
}

TEST_F(MalformedModelTest, MissingTensor) {
  fixture::RemoveTensor(&tensors_, "model.layers.1.self_attn.k_proj.weight");
  Write();
  const Status s = LoadStatus(dir_.path());
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(),
              HasSubstr("model.layers.1.self_attn.k_proj.weight: missing "
                        "tensor, want shape [8, 16]"));
}

TEST_F(MalformedModelTest, ConfigWithMoreLayersThanTheFile) {
  Write();
  ModelConfig three = config_;
  three.num_layers = 3;
  fixture::WriteText(dir_.File("config.json"), WriteModelConfig(three));
  EXPECT_THAT(
      LoadStatus(dir_.path()).message(),
      HasSubstr("model.layers.2.input_layernorm.weight: missing tensor"));
}

TEST_F(MalformedModelTest, Qwen2WithoutBiasIsMissingIt) {
  config_ = fixture::TinyQwen2Config();
  tensors_ = fixture::TinyTensors(config_);
  fixture::RemoveTensor(&tensors_, "model.layers.0.self_attn.v_proj.bias");
  Write();
  EXPECT_THAT(
      LoadStatus(dir_.path()).message(),
      HasSubstr("model.layers.0.self_attn.v_proj.bias: missing tensor"));
}

TEST_F(MalformedModelTest, UnexpectedTensor) {
  tensors_.push_back(fixture::MakeTensor("model.layers.0.self_attn.o_proj.bias",
                                         DType::kBF16, {16}, 1));
  Write();
  const Status s = LoadStatus(dir_.path());
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(),
              HasSubstr("model.safetensors: model.layers.0.self_attn.o_proj."
                        "bias: unexpected tensor"));
}

TEST_F(MalformedModelTest, LmHeadWithTiedEmbeddingsIsUnexpected) {
  config_.tie_word_embeddings = true;
  Write();  // tensors_ still has lm_head.weight
  EXPECT_THAT(LoadStatus(dir_.path()).message(),
              AllOf(HasSubstr("lm_head.weight: unexpected tensor"),
                    HasSubstr("tie_word_embeddings true")));
}

TEST_F(MalformedModelTest, BadConfigJson) {
  Write();
  fixture::WriteText(dir_.File("config.json"), "{\"hidden_size\": 16,,}");
  const Status s = LoadStatus(dir_.path());
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(),
              AllOf(HasSubstr("config.json: bad JSON: parse error at line 1"),
                    HasSubstr(dir_.path())));
}

TEST_F(MalformedModelTest, BadSafetensorsHeaderJson) {
  Write();
  fixture::WriteText(dir_.File("model.safetensors"),
                     fixture::RawSafetensors("{\"a\": [1, 2", 16));
  EXPECT_THAT(LoadStatus(dir_.path()).message(),
              HasSubstr("model.safetensors: header: bad JSON: parse error"));
}

TEST_F(MalformedModelTest, MissingFiles) {
  Status s = LoadStatus(dir_.path());
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_THAT(s.message(), HasSubstr("config.json"));
  fixture::WriteText(dir_.File("config.json"), WriteModelConfig(config_));
  s = LoadStatus(dir_.path());
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_THAT(
      s.message(),
      HasSubstr("no model.safetensors or model.safetensors.index.json"));
}

TEST_F(MalformedModelTest, ShardedModelLoads) {
  Write(2);
  StatusOr<std::unique_ptr<Model>> m = Model::Load(dir_.path(), NoCache());
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ((*m)->tensors().size(), tensors_.size());
  EXPECT_THAT((*m)->embed_tokens().file,
              HasSubstr("model-00001-of-00002.safetensors"));
  EXPECT_THAT((*m)->final_norm().file,
              HasSubstr("model-00002-of-00002.safetensors"));
}

TEST_F(MalformedModelTest, ShardIndexNamesMissingFile) {
  Write(2);
  std::filesystem::remove(dir_.File("model-00002-of-00002.safetensors"));
  const Status s = LoadStatus(dir_.path());
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_THAT(s.message(),
              AllOf(HasSubstr("model.safetensors.index.json: weight_map"),
                    HasSubstr("shard \"model-00002-of-00002.safetensors\" "
                              "does not exist")));
}

TEST_F(MalformedModelTest, ShardIndexPutsTensorInWrongShard) {
  Write(2);
  std::string index =
      fixture::ReadText(dir_.File("model.safetensors.index.json"));
  const std::string from =
      R"("model.norm.weight": "model-00002-of-00002.safetensors")";
  ASSERT_NE(index.find(from), std::string::npos);
  index.replace(index.find(from), from.size(),
                R"("model.norm.weight": "model-00001-of-00002.safetensors")");
  fixture::WriteText(dir_.File("model.safetensors.index.json"), index);
  EXPECT_THAT(LoadStatus(dir_.path()).message(),
              HasSubstr("model-00002-of-00002.safetensors: model.norm.weight: "
                        "tensor is in this shard, but the index's weight_map "
                        "puts it in model-00001-of-00002.safetensors"));
}

TEST_F(MalformedModelTest, TensorInTwoShards) {
  Write(2);
  // Shard 1 gets a copy of model.norm.weight, which lives in shard 2.
  std::vector<fixture::TestTensor> first;
  for (size_t i = 0; i < tensors_.size(); i += 2) first.push_back(tensors_[i]);
  first.push_back(*fixture::FindTensor(&tensors_, "model.norm.weight"));
  fixture::WriteSafetensors(dir_.File("model-00001-of-00002.safetensors"),
                            first);
  EXPECT_THAT(LoadStatus(dir_.path()).message(),
              HasSubstr("model.norm.weight: tensor is in two shards"));
}

TEST_F(MalformedModelTest, ShardIndexErrors) {
  Write(2);
  const std::string index_path = dir_.File("model.safetensors.index.json");
  const std::string index = fixture::ReadText(index_path);
  const struct {
    std::string from, to, want;
  } cases[] = {
      // A listed tensor its shard does not hold.
      {"\"weight_map\": {",
       "\"weight_map\": {\"extra.weight\": "
       "\"model-00001-of-00002.safetensors\",",
       "weight_map: extra.weight: the index puts it in "
       "model-00001-of-00002.safetensors, which has no such tensor"},
      // A shard tensor the index does not list.
      {R"("model.norm.weight": "model-00002-of-00002.safetensors",)", "",
       "model.norm.weight: tensor is not in"},
      // Shards must sit beside the index.
      {"\"weight_map\": {", "\"weight_map\": {\"x\": \"../x.safetensors\",",
       "weight_map: x: got \"../x.safetensors\", want the file name of a "
       "shard"},
      {"\"weight_map\": {", "\"weight_map\": [], \"w\": {",
       "weight_map: got []"},
      {"\"metadata\"", "\"metadata\" 1", "bad JSON"},
  };
  for (const auto& tc : cases) {
    std::string text = index;
    ASSERT_NE(text.find(tc.from), std::string::npos) << tc.from;
    text.replace(text.find(tc.from), tc.from.size(), tc.to);
    fixture::WriteText(index_path, text);
    const Status s = LoadStatus(dir_.path());
    EXPECT_FALSE(s.ok()) << tc.want;
    EXPECT_THAT(s.message(), AllOf(HasSubstr("model.safetensors.index.json"),
                                   HasSubstr(tc.want)))
        << tc.want;
  }
}

}  // namespace
}  // namespace layerproof::kernels::model
