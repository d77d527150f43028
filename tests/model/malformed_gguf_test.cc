// Malformed GGUF files and models: each must give a clear error naming the
// file and the field, key or tensor, and none may crash or read outside the
// image. Images are built byte by byte here, independently of GgufWriter.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "kernels/model/gguf.h"
#include "kernels/model/gguf_model.h"
#include "kernels/model/gguf_writer.h"
#include "tests/model/model_fixture.h"

namespace layerproof::kernels::model {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

// Little-endian bytes.
struct Bytes {
  std::string b;
  Bytes& U8(uint8_t v) {
    b.push_back(char(v));
    return *this;
  }
  Bytes& U32(uint32_t v) {
    for (int i = 0; i < 4; ++i) b.push_back(char(uint8_t(v >> (8 * i))));
    return *this;
  }
  Bytes& U64(uint64_t v) {
    for (int i = 0; i < 8; ++i) b.push_back(char(uint8_t(v >> (8 * i))));
    return *this;
  }
  Bytes& Str(std::string_view s) {
    U64(s.size());
    b.append(s);
    return *this;
  }
  Bytes& Raw(std::string_view s) {
    b.append(s);
    return *this;
  }
};

constexpr uint32_t kU32 = 4, kString = 8, kArray = 9, kBool = 7, kU64 = 10;

std::string KvU32(std::string_view key, uint32_t v) {
  return Bytes().Str(key).U32(kU32).U32(v).b;
}
std::string KvStr(std::string_view key, std::string_view v) {
  return Bytes().Str(key).U32(kString).Str(v).b;
}
std::string Info(std::string_view name, std::vector<uint64_t> ne, uint32_t type,
                 uint64_t offset) {
  Bytes x;
  x.Str(name).U32(uint32_t(ne.size()));
  for (uint64_t n : ne) x.U64(n);
  return x.U32(type).U64(offset).b;
}

// A GGUF image: header, the KVs, the tensor infos, then (when there are
// tensor infos or data) padding to `alignment` and `data_bytes` bytes.
// Counts default to the numbers of kvs and infos.
std::string Image(const std::vector<std::string>& kvs,
                  const std::vector<std::string>& infos, size_t data_bytes,
                  uint64_t alignment = 32, int64_t n_tensors = -1,
                  int64_t n_kv = -1, uint32_t version = 3) {
  Bytes x;
  x.Raw("GGUF").U32(version);
  x.U64(n_tensors >= 0 ? uint64_t(n_tensors) : infos.size());
  x.U64(n_kv >= 0 ? uint64_t(n_kv) : kvs.size());
  for (const std::string& kv : kvs) x.Raw(kv);
  for (const std::string& i : infos) x.Raw(i);
  if (infos.empty() && data_bytes == 0) return x.b;
  while (x.b.size() % alignment != 0) x.U8(0);
  x.b.append(data_bytes, '\x05');
  return x.b;
}

Status Parse(const std::string& image) {
  return GgufFile::FromBytes(
             reinterpret_cast<const unsigned char*>(image.data()), image.size(),
             "mem.gguf")
      .status();
}

// A small valid file as GgufWriter writes it: every value kind, three
// tensors.
std::string ValidImage() {
  fixture::TempDir dir;
  GgufWriter w;
  w.SetString("general.architecture", "llama");
  w.SetUint32("u", 7);
  w.SetInt64("i", -1);
  w.SetFloat32("f", 0.5f);
  w.SetBool("b", true);
  w.SetStringArray("s", {"x", "yz"});
  w.SetFloat32Array("fa", {1, 2});
  w.Declare("a", DType::kF32, {2, 2});
  w.Declare("q", DType::kQ8_0, {1, 32});
  w.Declare("k", DType::kQ4_K, {256});
  EXPECT_TRUE(w.Begin(dir.File("v.gguf")).ok());
  const std::vector<unsigned char> data(144, 1);
  EXPECT_TRUE(w.WriteTensorData(data.data(), 16).ok());
  EXPECT_TRUE(w.WriteTensorData(data.data(), 34).ok());
  EXPECT_TRUE(w.WriteTensorData(data.data(), 144).ok());
  EXPECT_TRUE(w.Finish().ok());
  return fixture::ReadText(dir.File("v.gguf"));
}

TEST(MalformedGgufTest, EveryTruncationIsRefusedAndNeverCrashes) {
  const std::string image = ValidImage();
  ASSERT_TRUE(Parse(image).ok()) << Parse(image).ToString();
  // The last tensor's data ends 144 bytes after its start; the file's last
  // bytes are its padding, which a truncation may cut.
  auto f = GgufFile::FromBytes(
      reinterpret_cast<const unsigned char*>(image.data()), image.size(), "m");
  ASSERT_TRUE(f.ok());
  const TensorView& last = (*f)->tensors().at("k");
  const size_t end = size_t(last.data - (*f)->base()) + size_t(last.bytes);
  for (size_t n = 0; n < image.size(); ++n) {
    // A copy of exactly n bytes, so any read past it is out of bounds.
    const std::vector<unsigned char> cut(image.begin(), image.begin() + n);
    const Status s = GgufFile::FromBytes(cut.data(), n, "cut.gguf").status();
    if (n < end) {
      ASSERT_FALSE(s.ok()) << "truncated to " << n << " bytes";
      EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << n;
      EXPECT_THAT(s.message(), HasSubstr("cut.gguf: ")) << n;
    } else {
      EXPECT_TRUE(s.ok()) << n << ": " << s.ToString();
    }
  }
  EXPECT_THAT(Parse(image.substr(0, end - 1)).message(),
              HasSubstr("mem.gguf: tensor k: offset: got 96 with 144 bytes, "
                        "want the tensor inside the data section of 239 "
                        "bytes (offset past EOF or truncated file?)"));
  EXPECT_THAT(Parse("GGUF").message(),
              HasSubstr("mem.gguf: file is 4 bytes, shorter than the 24-byte "
                        "GGUF header"));
}

TEST(MalformedGgufTest, RandomCorruptionNeverCrashes) {
  // Byte flips: every outcome is a Status, and an accepted file's views
  // and metadata stay inside the image.
  const std::string image = ValidImage();
  uint32_t x = 12345;
  int accepted = 0;
  for (int trial = 0; trial < 4000; ++trial) {
    std::vector<unsigned char> bytes(image.begin(), image.end());
    const int flips = 1 + trial % 4;
    for (int k = 0; k < flips; ++k) {
      x = x * 1664525u + 1013904223u;
      const size_t at = (x >> 8) % bytes.size();
      x = x * 1664525u + 1013904223u;
      bytes[at] = trial % 3 == 0 ? uint8_t(x >> 24)
                                 : bytes[at] ^ uint8_t(1u << (x >> 29));
    }
    auto f = GgufFile::FromBytes(bytes.data(), bytes.size(), "flip.gguf");
    if (!f.ok()) {
      EXPECT_THAT(f.status().message(), HasSubstr("flip.gguf"));
      continue;
    }
    ++accepted;
    const unsigned char* lo = bytes.data();
    const unsigned char* hi = bytes.data() + bytes.size();
    for (const auto& [name, t] : (*f)->tensors()) {
      ASSERT_GE(t.data, lo);
      ASSERT_LE(t.data + t.bytes, hi);
    }
    for (const auto& [key, v] : (*f)->metadata()) {
      for (const GgufValue& e : v.Elements()) {
        if (auto s = e.AsString()) {
          ASSERT_GE(reinterpret_cast<const unsigned char*>(s->data()), lo);
          ASSERT_LE(
              reinterpret_cast<const unsigned char*>(s->data()) + s->size(),
              hi);
        }
      }
    }
  }
  EXPECT_GT(accepted, 0);  // flips in tensor data are harmless
}

TEST(MalformedGgufTest, HeaderErrors) {
  const std::string kv = KvStr("general.architecture", "llama");
  std::string bad_magic = Image({kv}, {}, 0);
  bad_magic[0] = 'X';
  EXPECT_EQ(Parse(bad_magic).message(),
            "mem.gguf: magic: want \"GGUF\" (not a GGUF file)");
  const struct {
    uint32_t version;
    std::string want;
  } versions[] = {
      {1,
       "version: got 1, want 3 (GGUF v1, with 32-bit counts, is not "
       "supported)"},
      {4, "version: got 4, want 3"},
      {0x03000000,
       "version: got 50331648, want 3 (a big-endian GGUF file? "
       "only little-endian is supported)"},
  };
  for (const auto& v : versions) {
    const Status s = Parse(Image({kv}, {}, 0, 32, -1, -1, v.version));
    EXPECT_EQ(s.code(), StatusCode::kUnimplemented) << v.version;
    EXPECT_THAT(s.message(), HasSubstr("mem.gguf: " + v.want));
  }
  // Counts that would need more bytes than the file has are refused before
  // anything is read or allocated.
  EXPECT_THAT(Parse(Image({kv}, {}, 0, 32, int64_t(1) << 60)).message(),
              HasSubstr("mem.gguf: tensor_count: got 1152921504606846976, "
                        "want <= 1 (each tensor info takes >= 33 bytes; the "
                        "file has 45 after the header)"));
  EXPECT_THAT(Parse(Image({kv}, {}, 0, 32, 0, int64_t(1) << 62)).message(),
              HasSubstr("mem.gguf: metadata_kv_count: got "
                        "4611686018427387904, want <= 3 (each key/value takes "
                        ">= 14 bytes"));
  EXPECT_THAT(Parse(Image({kv}, {}, 0, 32, 0, 3)).message(),
              HasSubstr("mem.gguf: metadata key #1: length: needs 8 bytes"));
  // A lying tensor_count that fits the header check but not what is left
  // after the metadata.
  EXPECT_THAT(Parse(Image({kv}, {}, 64, 32, 3)).message(),
              HasSubstr("tensor_count: got 3, want <= 2 (each tensor info "
                        "takes >= 33 bytes; 91 follow the metadata)"));
  EXPECT_TRUE(Parse(Image({kv}, {}, 0)).ok());
  EXPECT_TRUE(Parse(Image({}, {}, 0)).ok());  // an empty file is valid
}

TEST(MalformedGgufTest, MetadataErrorsNameTheKey) {
  const uint64_t huge = uint64_t(1) << 62;
  const struct {
    std::string kv;
    std::string want;
  } cases[] = {
      {Bytes().U64(huge).Raw("padding!").b,
       "metadata key #0: length: got 4611686018427387904, want <= 65535"},
      {Bytes().U64(40).Raw("shortened!").b,
       "metadata key #0: needs 40 bytes at offset 32"},
      {Bytes().Str("").U32(kU32).U32(1).b, "metadata key #0: empty key"},
      {Bytes().Str("k").U32(13).U32(1).b,
       "k: value type: got 13, want a GGUF value type in [0, 12]"},
      {Bytes().Str("k").U32(kString).U64(huge).b,
       "k: length: got 4611686018427387904, want <= 16777216"},
      {Bytes().Str("k").U32(kString).U64(1000).Raw("abc").b,
       "k: needs 1000 bytes"},
      {Bytes().Str("k").U32(kBool).U8(2).b, "k: got 2, want a bool, 0 or 1"},
      {Bytes().Str("k").U32(kU64).U32(1).b, "k: needs 8 bytes"},
      {Bytes().Str("k").U32(kArray).U32(kU32).U64(huge).b,
       "k: array length: got 4611686018427387904, want <= 0 (0 bytes left "
       "for uint32 elements)"},
      {Bytes().Str("k").U32(kArray).U32(kU32).U64(3).U32(1).U32(2).b,
       "k: array length: got 3, want <= 2"},
      {Bytes().Str("k").U32(kArray).U32(99).U64(0).b,
       "k: array element type: got 99"},
      {Bytes().Str("k").U32(kArray).U32(kBool).U64(2).U8(1).U8(7).b,
       "k[1]: got 7, want a bool, 0 or 1"},
      {Bytes().Str("k").U32(kArray).U32(kString).U64(2).Str("ok").U64(huge).b,
       "k[1]: length: got 4611686018427387904"},
      {Bytes()
           .Str("k")
           .U32(kArray)
           .U32(kArray)
           .U64(1)
           .U32(kArray)
           .U64(1)
           .U32(kArray)
           .U64(1)
           .U32(kArray)
           .U64(1)
           .U32(kU32)
           .U64(0)
           .b,
       "k[0][0][0][0]: arrays nested deeper than 4 levels"},
      {Bytes()
           .Str("k")
           .U32(kArray)
           .U32(kArray)
           .U64(1)
           .U32(kString)
           .U64(1)
           .U64(5)
           .Raw("ab")
           .b,
       "k[0][0]: needs 5 bytes"},
      {KvU32("general.alignment", 48),
       "general.alignment: got 48, want a "
       "power of two <= 65536"},
      {KvU32("general.alignment", 0), "general.alignment: got 0"},
      {KvU32("general.alignment", 1u << 20), "general.alignment: got 1048576"},
      {Bytes().Str("general.alignment").U32(kU64).U64(32).b,
       "general.alignment: got uint64 32, want a uint32"},
  };
  for (const auto& c : cases) {
    const Status s = Parse(Image({c.kv}, {}, 0));
    ASSERT_FALSE(s.ok()) << c.want;
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << c.want;
    EXPECT_THAT(s.message(), HasSubstr("mem.gguf: " + c.want));
  }
  const Status dup =
      Parse(Image({KvU32("general.x", 1), KvU32("general.x", 2)}, {}, 0));
  EXPECT_EQ(dup.message(), "mem.gguf: general.x: duplicate key");
  // Four levels are allowed.
  EXPECT_TRUE(Parse(Image({Bytes()
                               .Str("k")
                               .U32(kArray)
                               .U32(kArray)
                               .U64(1)
                               .U32(kArray)
                               .U64(1)
                               .U32(kArray)
                               .U64(1)
                               .U32(kU32)
                               .U64(1)
                               .U32(9)
                               .b},
                          {}, 0))
                  .ok());
}

TEST(MalformedGgufTest, TensorInfoErrorsNameTheTensorAndField) {
  const uint64_t big = uint64_t(1) << 40;
  const struct {
    std::vector<std::string> infos;
    size_t data;
    StatusCode code;
    std::string want;
  } cases[] = {
      {{Info("", {4}, 0, 0)},
       16,
       StatusCode::kInvalidArgument,
       "tensor info #0: empty name"},
      {{Info(std::string(64, 'n'), {4}, 0, 0)},
       16,
       StatusCode::kInvalidArgument,
       "tensor info #0: name: length: got 64"},
      {{Info("t", {}, 0, 0)},
       16,
       StatusCode::kInvalidArgument,
       "tensor t: n_dims: got 0, want 1 to 4"},
      {{Info("t", {1, 1, 1, 1, 1}, 0, 0)},
       16,
       StatusCode::kInvalidArgument,
       "tensor t: n_dims: got 5, want 1 to 4"},
      {{Info("t", {4, 0}, 0, 0)},
       16,
       StatusCode::kInvalidArgument,
       "tensor t: ne[1]: got 0, want an integer in [1, 2^63)"},
      {{Info("t", {4, uint64_t(1) << 63}, 0, 0)},
       16,
       StatusCode::kInvalidArgument,
       "tensor t: ne[1]: got 9223372036854775808"},
      {{Info("t", {big, big}, 0, 0)},
       16,
       StatusCode::kInvalidArgument,
       "tensor t: ne[1]: got 1099511627776, want an element count (product "
       "of ne) that fits in 63 bits"},
      {{Info("t", {uint64_t(1) << 62, 1}, 0, 0)},
       16,
       StatusCode::kInvalidArgument,
       "tensor t: ne: the byte size overflows"},
      {{Info("t", {4}, 13, 0)},
       16,
       StatusCode::kUnimplemented,
       "tensor t: type: got Q5_K (13), want F32, F16, BF16, Q8_0, Q4_0, Q4_K "
       "or Q6_K (this type is not supported)"},
      {{Info("t", {4}, 4, 0)},
       16,
       StatusCode::kInvalidArgument,
       "tensor t: type: got unknown (4), want a ggml type"},
      {{Info("t", {4}, 57, 0)},
       16,
       StatusCode::kInvalidArgument,
       "tensor t: type: got unknown (57)"},
      {{Info("t", {48, 2}, 8, 0)},
       200,
       StatusCode::kInvalidArgument,
       "tensor t: ne[0]: got 48, want a multiple of 32, the Q8_0 block size"},
      {{Info("t", {128}, 12, 0)},
       200,
       StatusCode::kInvalidArgument,
       "tensor t: ne[0]: got 128, want a multiple of 256, the Q4_K block "
       "size"},
      {{Info("t", {4}, 0, 8)},
       64,
       StatusCode::kInvalidArgument,
       "tensor t: offset: got 8, want a multiple of the alignment 32"},
      {{Info("t", {4}, 0, 64)},
       64,
       StatusCode::kInvalidArgument,
       "tensor t: offset: got 64 with 16 bytes, want the tensor inside the "
       "data section of 64 bytes (offset past EOF or truncated file?)"},
      {{Info("t", {32}, 0, 0)},
       64,
       StatusCode::kInvalidArgument,
       "tensor t: offset: got 0 with 128 bytes, want the tensor inside the "
       "data section of 64 bytes"},
      {{Info("t", {4}, 0, uint64_t(-32))},
       64,
       StatusCode::kInvalidArgument,
       "tensor t: offset: got 18446744073709551584 with 16 bytes"},
      {{Info("t", {4}, 0, 0), Info("t", {4}, 0, 32)},
       64,
       StatusCode::kInvalidArgument,
       "tensor t: duplicate tensor name"},
      {{Info("a", {16}, 0, 0), Info("b", {4}, 0, 32)},
       96,
       StatusCode::kInvalidArgument,
       "tensors a and b overlap: bytes [0, 64) and [32, 48) of the data "
       "section"},
      {{Info("big", {64}, 0, 0), Info("x", {8}, 0, 256),
        Info("in", {4}, 0, 64)},
       320,
       StatusCode::kInvalidArgument,
       "tensors big and in overlap"},
  };
  for (const auto& c : cases) {
    const Status s = Parse(Image({}, c.infos, c.data));
    ASSERT_FALSE(s.ok()) << c.want;
    EXPECT_EQ(s.code(), c.code) << c.want << "\n" << s.message();
    EXPECT_THAT(s.message(), HasSubstr("mem.gguf: " + c.want));
  }
  // Tensor infos that end before the padding does.
  const std::string unpadded = Image({}, {Info("t", {4}, 0, 0)}, 0);
  EXPECT_THAT(Parse(unpadded.substr(0, 60)).message(),
              HasSubstr("mem.gguf: data section: starts at 64 (after the "
                        "tensor infos, aligned to 32), past the end of the "
                        "file (60 bytes; truncated file?)"));
  // The alignment comes from general.alignment.
  const std::string a64 = KvU32("general.alignment", 64);
  EXPECT_THAT(Parse(Image({a64}, {Info("t", {4}, 0, 32)}, 128, 64)).message(),
              HasSubstr("offset: got 32, want a multiple of the alignment 64"));
  EXPECT_TRUE(Parse(Image({a64}, {Info("t", {4}, 0, 64)}, 128, 64)).ok());
  // A truncated dims list.
  std::string info = Info("t", {4, 4}, 0, 0);
  info.resize(info.size() - 14);
  EXPECT_THAT(Parse(Image({}, {info}, 0)).message(),
              HasSubstr("tensor t: ne, type, offset: needs 28 bytes"));
  // Adjacent, gapped and out-of-order tensors are fine.
  EXPECT_TRUE(
      Parse(Image({}, {Info("b", {4}, 0, 64), Info("a", {16}, 0, 0)}, 96))
          .ok());
}

// --- Models -----------------------------------------------------------------

// A valid llama GGUF written by WriteGgufModel, then patched.
class MalformedGgufModelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    config_ = fixture::TinyConfig();
    config_.hidden_size = 32;
    config_.intermediate_size = 64;
    config_.head_dim = 8;
    tensors_ = fixture::TinyTensors(config_, DType::kF32);
    for (fixture::TestTensor& t : tensors_) {  // finite values
      for (size_t i = 0; i < t.bytes.size(); i += 4) {
        const float v = float(int(i % 13) - 6) / 8.0f;
        std::memcpy(&t.bytes[i], &v, 4);
      }
      views_[t.name] = TensorView{t.name,         t.dtype,        t.shape,
                                  t.bytes.data(), t.bytes.size(), "mem"};
    }
  }

  // Writes the model with `patch` applied to the writer's metadata.
  Status Load(
      void (*patch)(GgufWriter*) = nullptr, std::vector<std::string> drop = {},
      std::vector<std::pair<std::string, std::vector<int64_t>>> add = {}) {
    const std::string path = dir_.File("m.gguf");
    {
      StatusOr<std::unique_ptr<GgufFile>> f = Write(path);
      if (!f.ok()) return f.status();
      GgufWriter w;
      const GgufFile& src = **f;
      for (const auto& [key, v] : src.metadata()) {
        if (key == "general.alignment") continue;
        CopyValue(key, v, &w);
      }
      if (patch) patch(&w);
      for (const GgufTensorInfo& t : src.tensor_infos()) {
        if (std::find(drop.begin(), drop.end(), t.name) != drop.end()) continue;
        const TensorView& v = src.tensors().at(t.name);
        w.Declare(t.name, v.dtype, v.shape);
      }
      for (const auto& [name, shape] : add) w.Declare(name, DType::kF32, shape);
      LP_RETURN_IF_ERROR(w.Begin(path + ".2"));
      for (const GgufTensorInfo& t : src.tensor_infos()) {
        if (std::find(drop.begin(), drop.end(), t.name) != drop.end()) continue;
        const TensorView& v = src.tensors().at(t.name);
        LP_RETURN_IF_ERROR(w.WriteTensorData(v.data, v.bytes));
      }
      for (const auto& [name, shape] : add) {
        const std::vector<float> zeros(fixture::ElementCount(shape), 0.0f);
        LP_RETURN_IF_ERROR(w.WriteTensorData(zeros.data(), zeros.size() * 4));
      }
      LP_RETURN_IF_ERROR(w.Finish());
    }
    StatusOr<std::unique_ptr<GgufFile>> f = GgufFile::Open(path + ".2");
    if (!f.ok()) return f.status();
    return ReadGgufModel(**f).status();
  }

  StatusOr<std::unique_ptr<GgufFile>> Write(const std::string& path) {
    LP_RETURN_IF_ERROR(WriteGgufModel(config_, views_, DType::kF32, path));
    return GgufFile::Open(path);
  }

  static void CopyValue(const std::string& key, const GgufValue& v,
                        GgufWriter* w) {
    switch (v.type()) {
      case GgufValueType::kString:
        w->SetString(key, *v.AsString());
        break;
      case GgufValueType::kFloat32:
        w->SetFloat32(key, float(*v.AsFloat()));
        break;
      default:
        w->SetUint32(key, uint32_t(*v.AsUint()));
    }
  }

  std::string File() const { return dir_.File("m.gguf.2"); }

  fixture::TempDir dir_;
  ModelConfig config_;
  std::vector<fixture::TestTensor> tensors_;
  std::map<std::string, TensorView> views_;
};

TEST_F(MalformedGgufModelTest, TheUnpatchedFileLoads) {
  EXPECT_TRUE(Load().ok()) << Load().ToString();
}

TEST_F(MalformedGgufModelTest, MetadataErrorsNameTheKey) {
  const struct {
    void (*patch)(GgufWriter*);
    StatusCode code;
    std::string want;
  } cases[] = {
      {[](GgufWriter* w) { w->SetString("general.architecture", "gpt2"); },
       StatusCode::kUnimplemented,
       "general.architecture: got \"gpt2\", want \"llama\", \"qwen2\" or "
       "\"qwen3\""},
      {[](GgufWriter* w) { w->SetUint32("general.architecture", 1); },
       StatusCode::kInvalidArgument,
       "general.architecture: got uint32 1, want a string"},
      {[](GgufWriter* w) { w->SetString("llama.block_count", "two"); },
       StatusCode::kInvalidArgument,
       "llama.block_count: got string \"two\", want an integer in [1, "
       "1073741824]"},
      {[](GgufWriter* w) { w->SetUint32("llama.attention.head_count", 0); },
       StatusCode::kInvalidArgument,
       "llama.attention.head_count: got uint32 0"},
      {[](GgufWriter* w) { w->SetUint32("llama.attention.head_count_kv", 3); },
       StatusCode::kInvalidArgument,
       "llama.attention.head_count_kv: got 3, want a divisor of "
       "llama.attention.head_count (4)"},
      {[](GgufWriter* w) { w->SetUint32("llama.rope.dimension_count", 4); },
       StatusCode::kUnimplemented,
       "llama.rope.dimension_count: got 4, want the head dimension 8 (partial "
       "rotary"},
      {[](GgufWriter* w) { w->SetString("llama.rope.scaling.type", "yarn"); },
       StatusCode::kUnimplemented,
       "llama.rope.scaling.type: got \"yarn\" RoPE scaling, want none"},
      {[](GgufWriter* w) { w->SetFloat32("llama.rope.scaling.factor", 4); },
       StatusCode::kUnimplemented,
       "llama.rope.scaling.factor: got \"linear\" RoPE scaling"},
      {[](GgufWriter* w) { w->SetUint32("llama.vocab_size", 33); },
       StatusCode::kInvalidArgument,
       "llama.vocab_size: got 33, want 32, the rows of token_embd.weight"},
      {[](GgufWriter* w) { w->SetStringArray("tokenizer.ggml.tokens", {"a"}); },
       StatusCode::kInvalidArgument,
       "tokenizer.ggml.tokens: got 1 tokens, want 32"},
      {[](GgufWriter* w) { w->SetUint32("tokenizer.ggml.eos_token_id", 32); },
       StatusCode::kInvalidArgument,
       "tokenizer.ggml.eos_token_id: got uint32 32, want an integer in [0, "
       "31]"},
      {[](GgufWriter* w) { w->SetUint32("llama.context_length", 1u << 21); },
       StatusCode::kInvalidArgument,
       "m.gguf.2 (GGUF metadata as config.json): max_position_embeddings: "
       "got 2097152"},
      {[](GgufWriter* w) { w->SetUint32("llama.attention.key_length", 7); },
       StatusCode::kUnimplemented, "llama.attention.value_length: got 8"},
  };
  for (const auto& c : cases) {
    const Status s = Load(c.patch);
    ASSERT_FALSE(s.ok()) << c.want;
    EXPECT_EQ(s.code(), c.code) << c.want << "\n" << s.message();
    EXPECT_THAT(s.message(), AllOf(HasSubstr(File()), HasSubstr(c.want)))
        << s.message();
  }
}

TEST_F(MalformedGgufModelTest, MissingKeys) {
  // Rebuild without one key at a time (patching can only add).
  for (const char* key : {"llama.embedding_length", "llama.block_count",
                          "llama.attention.layer_norm_rms_epsilon",
                          "llama.context_length", "general.architecture"}) {
    const std::string path = dir_.File("k.gguf");
    auto f = Write(path);
    ASSERT_TRUE(f.ok());
    GgufWriter w;
    for (const auto& [k, v] : (*f)->metadata()) {
      if (k != key && k != "general.alignment") CopyValue(k, v, &w);
    }
    for (const GgufTensorInfo& t : (*f)->tensor_infos()) {
      const TensorView& v = (*f)->tensors().at(t.name);
      w.Declare(t.name, v.dtype, v.shape);
    }
    ASSERT_TRUE(w.Begin(path + ".2").ok());
    for (const GgufTensorInfo& t : (*f)->tensor_infos()) {
      const TensorView& v = (*f)->tensors().at(t.name);
      ASSERT_TRUE(w.WriteTensorData(v.data, v.bytes).ok());
    }
    ASSERT_TRUE(w.Finish().ok());
    auto g = GgufFile::Open(path + ".2");
    ASSERT_TRUE(g.ok());
    const Status s = ReadGgufModel(**g).status();
    EXPECT_THAT(s.message(),
                AllOf(HasSubstr(path + ".2: " + key + ": missing, want")))
        << key;
  }
}

TEST_F(MalformedGgufModelTest, TensorErrorsNameBothNames) {
  Status s = Load(nullptr, {"blk.1.attn_k.weight"});
  EXPECT_THAT(s.message(),
              HasSubstr(File() + ": tensor blk.1.attn_k.weight "
                                 "(model.layers.1.self_attn.k_proj.weight): "
                                 "missing tensor, want shape [16, 32] "
                                 "(llama.attention.head_count_kv 2 x head_dim "
                                 "8, llama.embedding_length 32)"));
  s = Load(nullptr, {"blk.0.ffn_up.weight"},
           {{"blk.0.ffn_up.weight", {64, 16}}});
  EXPECT_THAT(s.message(),
              HasSubstr("tensor blk.0.ffn_up.weight "
                        "(model.layers.0.mlp.up_proj.weight): shape [64, 16], "
                        "want [64, 32] (llama.feed_forward_length 64, "
                        "llama.embedding_length 32)"));
  s = Load(nullptr, {}, {{"blk.0.attn_output.bias", {32}}});
  EXPECT_THAT(s.message(),
              HasSubstr("tensor blk.0.attn_output.bias: unexpected tensor, not "
                        "part of a llama model"));
  s = Load(nullptr, {}, {{"blk.2.attn_norm.weight", {32}}});
  EXPECT_THAT(s.message(),
              HasSubstr("tensor blk.2.attn_norm.weight "
                        "(model.layers.2.input_layernorm.weight): unexpected "
                        "tensor, not part of llama with llama.block_count 2"));
  s = Load(nullptr, {}, {{"blk.0.attn_q.bias", {32}}});
  EXPECT_THAT(s.message(), HasSubstr("(model.layers.0.self_attn.q_proj.bias): "
                                     "unexpected tensor"));
  s = Load(nullptr, {"token_embd.weight"});
  EXPECT_THAT(s.message(), HasSubstr(File() + ": tensor token_embd.weight: "
                                              "missing or not a matrix"));
  s = Load(nullptr, {}, {{"rope_freqs.weight", {3}}});
  EXPECT_THAT(s.message(), HasSubstr("tensor rope_freqs.weight: got F32 [3], "
                                     "want F32 [4] (head_dim / 2)"));
  s = Load(nullptr, {}, {{"rope_freqs.weight", {4}}});  // zeros
  EXPECT_EQ(s.code(), StatusCode::kUnimplemented);
  EXPECT_THAT(s.message(), HasSubstr("rope_freqs.weight[0]: got 0"));
}

TEST_F(MalformedGgufModelTest, QuantizedVectorsAreRefused) {
  // A norm stored as Q8_0 (32 elements: one block).
  const std::string path = dir_.File("q.gguf");
  auto f = Write(path);
  ASSERT_TRUE(f.ok());
  GgufWriter w;
  for (const auto& [k, v] : (*f)->metadata()) {
    if (k != "general.alignment") CopyValue(k, v, &w);
  }
  for (const GgufTensorInfo& t : (*f)->tensor_infos()) {
    const TensorView& v = (*f)->tensors().at(t.name);
    w.Declare(t.name, t.name == "output_norm.weight" ? DType::kQ8_0 : v.dtype,
              v.shape);
  }
  ASSERT_TRUE(w.Begin(path + ".2").ok());
  for (const GgufTensorInfo& t : (*f)->tensor_infos()) {
    const TensorView& v = (*f)->tensors().at(t.name);
    const std::vector<unsigned char> q8(34, 0);
    ASSERT_TRUE((t.name == "output_norm.weight"
                     ? w.WriteTensorData(q8.data(), 34)
                     : w.WriteTensorData(v.data, v.bytes))
                    .ok());
  }
  ASSERT_TRUE(w.Finish().ok());
  auto g = GgufFile::Open(path + ".2");
  ASSERT_TRUE(g.ok());
  const Status s = ReadGgufModel(**g).status();
  EXPECT_EQ(s.code(), StatusCode::kUnimplemented);
  EXPECT_THAT(s.message(),
              HasSubstr("tensor output_norm.weight (model.norm.weight): type "
                        "Q8_0: want F32, F16 or BF16 for a vector"));
}

}  // namespace
}  // namespace layerproof::kernels::model
