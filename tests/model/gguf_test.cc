// kernels/model/gguf.h, gguf_writer.h and gguf_model.h on well-formed
// files: writer -> reader round trips of every value type and tensor type,
// alignment, the llama q/k permutation, the name mapping, and whole models
// (malformed files are in malformed_gguf_test.cc).

#include "kernels/model/gguf.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "kernels/model/gguf_model.h"
#include "kernels/model/gguf_writer.h"
#include "kernels/model/model.h"
#include "kernels/model/quantize.h"
#include "kernels/model/quantize_model.h"
#include "kernels/model/synth.h"
#include "kernels/quant.h"
#include "tests/model/model_fixture.h"

namespace layerproof::kernels::model {
namespace {

using ::testing::HasSubstr;

std::unique_ptr<GgufFile> MustOpen(const std::string& path) {
  StatusOr<std::unique_ptr<GgufFile>> f = GgufFile::Open(path);
  EXPECT_TRUE(f.ok()) << f.status().ToString();
  return f.ok() ? std::move(*f) : nullptr;
}

// Uniform values in [-1, 1) from a 32-bit LCG keyed by seed and name.
std::vector<float> Values(const std::string& name, size_t n, uint32_t seed) {
  uint32_t x = seed * 2654435761u + 7;
  for (char ch : name) x = x * 31u + uint8_t(ch);
  std::vector<float> v(n);
  for (float& f : v) {
    x = x * 1664525u + 1013904223u;
    f = float(x >> 8) / float(1 << 23) - 1.0f;
  }
  return v;
}

// --- Files: metadata and tensors -----------------------------------------

TEST(GgufTest, EveryValueTypeRoundTrips) {
  fixture::TempDir dir;
  GgufWriter w;
  w.SetUint8("t.u8", 200);
  w.SetInt8("t.i8", -100);
  w.SetUint16("t.u16", 60000);
  w.SetInt16("t.i16", -30000);
  w.SetUint32("t.u32", 4000000000u);
  w.SetInt32("t.i32", -2000000000);
  w.SetUint64("t.u64", 18000000000000000000ull);
  w.SetInt64("t.i64", -9000000000000000000ll);
  w.SetFloat32("t.f32", 1e-5f);
  w.SetFloat64("t.f64", 0.1);
  w.SetBool("t.true", true);
  w.SetBool("t.false", false);
  w.SetString("t.str", "h\xc3\xa9llo \"quoted\"");
  w.SetString("t.empty", "");
  w.SetStringArray("t.strs", {"a", "", "<0x0A>"});
  w.SetInt32Array("t.i32s", {-1, 0, 2147483647});
  w.SetUint32Array("t.u32s", {7, 4294967295u});
  w.SetFloat32Array("t.f32s", {0.5f, -2.0f});
  w.SetInt32Array("t.none", {});
  w.SetString("t.replaced", "first");
  w.SetString("t.replaced", "second");
  // [[1, 2], [], [3]] as uint16, encoded by hand: nested arrays.
  std::string nested;
  auto put = [&](uint64_t v, int n) {
    for (int i = 0; i < n; ++i) nested.push_back(char(uint8_t(v >> (8 * i))));
  };
  put(uint32_t(GgufValueType::kArray), 4);
  put(3, 8);
  for (const std::vector<uint16_t>& inner :
       std::vector<std::vector<uint16_t>>{{1, 2}, {}, {3}}) {
    put(uint32_t(GgufValueType::kUint16), 4);
    put(inner.size(), 8);
    for (uint16_t v : inner) put(v, 2);
  }
  w.SetEncoded("t.nested", GgufValueType::kArray, nested);
  const std::string path = dir.File("kv.gguf");
  ASSERT_TRUE(w.Begin(path).ok());
  ASSERT_TRUE(w.Finish().ok());

  const auto f = MustOpen(path);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->version(), 3u);
  EXPECT_EQ(f->alignment(), 32u);
  EXPECT_EQ(f->metadata().size(), 22u);  // 21 keys and general.alignment
  EXPECT_EQ(*f->GetUint("general.alignment"), 32u);
  EXPECT_EQ(*f->GetUint("t.u8"), 200u);
  EXPECT_EQ(*f->GetInt("t.i8"), -100);
  EXPECT_EQ(*f->GetUint("t.u16"), 60000u);
  EXPECT_EQ(*f->GetInt("t.i16"), -30000);
  EXPECT_EQ(*f->GetUint("t.u32"), 4000000000u);
  EXPECT_EQ(*f->GetInt("t.u32"), 4000000000ll);
  EXPECT_EQ(*f->GetInt("t.i32"), -2000000000);
  EXPECT_EQ(*f->GetUint("t.u64"), 18000000000000000000ull);
  EXPECT_EQ(*f->GetInt("t.i64"), -9000000000000000000ll);
  EXPECT_EQ(*f->GetFloat("t.f32"), double(1e-5f));
  EXPECT_EQ(*f->GetFloat("t.f64"), 0.1);
  EXPECT_TRUE(*f->GetBool("t.true"));
  EXPECT_FALSE(*f->GetBool("t.false"));
  EXPECT_EQ(*f->GetString("t.str"), "h\xc3\xa9llo \"quoted\"");
  EXPECT_EQ(*f->GetString("t.empty"), "");
  EXPECT_EQ(*f->GetString("t.replaced"), "second");
  EXPECT_EQ(*f->GetStringArray("t.strs"),
            (std::vector<std::string>{"a", "", "<0x0A>"}));
  EXPECT_EQ(*f->GetIntArray("t.i32s"),
            (std::vector<int64_t>{-1, 0, 2147483647}));
  EXPECT_EQ(*f->GetIntArray("t.u32s"), (std::vector<int64_t>{7, 4294967295}));
  EXPECT_EQ(*f->GetFloatArray("t.f32s"), (std::vector<double>{0.5, -2.0}));
  EXPECT_TRUE(f->GetIntArray("t.none")->empty());
  const GgufValue& n = f->metadata().at("t.nested");
  EXPECT_EQ(n.type(), GgufValueType::kArray);
  EXPECT_EQ(n.array_type(), GgufValueType::kArray);
  const std::vector<GgufValue> outer = n.Elements();
  ASSERT_EQ(outer.size(), 3u);
  std::vector<std::vector<uint64_t>> got;
  for (const GgufValue& inner : outer) {
    EXPECT_EQ(inner.array_type(), GgufValueType::kUint16);
    got.emplace_back();
    for (const GgufValue& e : inner.Elements())
      got.back().push_back(*e.AsUint());
  }
  EXPECT_EQ(got, (std::vector<std::vector<uint64_t>>{{1, 2}, {}, {3}}));
  // Keys in the order first set, general.alignment first: checked through
  // the raw bytes (the first key after the 24-byte header).
  const std::string raw = fixture::ReadText(path);
  EXPECT_EQ(raw.substr(32, 17), "general.alignment");
  EXPECT_EQ(raw.substr(24 + 8 + 17 + 4 + 4 + 8, 4), "t.u8");
}

TEST(GgufTest, GettersNameTheKeyAndTheType) {
  fixture::TempDir dir;
  GgufWriter w;
  w.SetString("s", "text");
  w.SetInt32("neg", -3);
  w.SetUint64("huge", 18000000000000000000ull);
  w.SetUint32("seven", 7);
  w.SetStringArray("strs", {"a"});
  w.SetFloat32("f", 1.5f);
  ASSERT_TRUE(w.Begin(dir.File("g.gguf")).ok());
  ASSERT_TRUE(w.Finish().ok());
  const auto f = MustOpen(dir.File("g.gguf"));
  ASSERT_NE(f, nullptr);
  const std::string p = dir.File("g.gguf") + ": ";
  EXPECT_EQ(f->GetUint("s").status().message(),
            p + "s: got string \"text\", want an integer in [0, "
                "18446744073709551615]");
  EXPECT_EQ(f->GetUint("neg").status().message(),
            p + "neg: got int32 -3, want an integer in [0, "
                "18446744073709551615]");
  EXPECT_EQ(f->GetUint("seven", 8, 10).status().message(),
            p + "seven: got uint32 7, want an integer in [8, 10]");
  EXPECT_EQ(f->GetInt("huge").status().message(),
            p + "huge: got uint64 18000000000000000000, want an integer "
                "that fits in int64");
  EXPECT_EQ(f->GetString("missing").status().message(),
            p + "missing: missing, want a string");
  EXPECT_EQ(f->GetFloat("seven").status().message(),
            p + "seven: got uint32 7, want a float32 or float64");
  EXPECT_EQ(f->GetBool("f").status().message(),
            p + "f: got float32 1.5, want a bool");
  EXPECT_EQ(f->GetIntArray("strs").status().message(),
            p + "strs: got array of 1 string, want an array of integers "
                "that fit in int64");
  EXPECT_THAT(f->GetStringArray("s").status().message(),
              HasSubstr("s: got string \"text\", want an array of string"));
  EXPECT_THAT(f->GetFloatArray("strs").status().message(),
              HasSubstr("want an array of float32 or float64"));
  EXPECT_TRUE(f->Has("s"));
  EXPECT_FALSE(f->Has("t"));
}

TEST(GgufTest, TensorsOfEveryTypeRoundTrip) {
  fixture::TempDir dir;
  struct T {
    std::string name;
    DType dtype;
    std::vector<int64_t> shape;
    std::vector<unsigned char> bytes;
  };
  std::vector<T> ts = {
      {"vec.f32", DType::kF32, {5}, {}},
      {"mat.f16", DType::kF16, {3, 7}, {}},
      {"mat.bf16", DType::kBF16, {2, 3}, {}},
      {"q8", DType::kQ8_0, {3, 64}, {}},
      {"q4", DType::kQ4_0, {2, 32}, {}},
      {"q4k", DType::kQ4_K, {2, 256}, {}},
      {"q6k", DType::kQ6_K, {1, 512}, {}},
      {"cube", DType::kF32, {2, 3, 4}, {}},
      {"four.q8", DType::kQ8_0, {2, 1, 3, 32}, {}},
  };
  GgufWriter w;
  uint8_t fill = 1;
  for (T& t : ts) {
    t.bytes.resize(size_t(GgufWriter::TensorBytes(t.dtype, t.shape)));
    for (unsigned char& b : t.bytes) b = fill++;
    w.Declare(t.name, t.dtype, t.shape);
  }
  const std::string path = dir.File("t.gguf");
  ASSERT_TRUE(w.Begin(path).ok());
  for (const T& t : ts) {
    ASSERT_TRUE(w.WriteTensorData(t.bytes.data(), t.bytes.size()).ok());
  }
  ASSERT_TRUE(w.Finish().ok());

  const auto f = MustOpen(path);
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(f->tensor_infos().size(), ts.size());
  EXPECT_EQ(f->data_offset() % 32, 0u);
  uint64_t offset = 0;
  for (size_t i = 0; i < ts.size(); ++i) {
    const T& t = ts[i];
    const GgufTensorInfo& info = f->tensor_infos()[i];
    EXPECT_EQ(info.name, t.name);
    EXPECT_EQ(info.ggml_type, GgmlTypeOf(t.dtype));
    EXPECT_EQ(info.ne, std::vector<int64_t>(t.shape.rbegin(), t.shape.rend()));
    EXPECT_EQ(info.offset, offset) << t.name;  // contiguous, padded to 32
    offset += (t.bytes.size() + 31) / 32 * 32;
    const TensorView& v = f->tensors().at(t.name);
    EXPECT_EQ(v.dtype, t.dtype);
    EXPECT_EQ(v.shape, t.shape);
    EXPECT_EQ(v.file, path);
    EXPECT_EQ(uint64_t(v.data - f->base()), f->data_offset() + info.offset);
    ASSERT_EQ(v.bytes, t.bytes.size()) << t.name;
    EXPECT_EQ(std::memcmp(v.data, t.bytes.data(), t.bytes.size()), 0);
  }
  EXPECT_EQ(std::filesystem::file_size(path), f->data_offset() + offset);
  EXPECT_EQ(f->tensors().at("q6k").bytes, 2u * 210u);
}

TEST(GgufTest, AlignmentIsHonoured) {
  fixture::TempDir dir;
  for (uint32_t a : {1u, 8u, 64u, 4096u}) {
    GgufWriter w(a);
    w.SetString("k", "v");
    w.Declare("a", DType::kF32, {3});
    w.Declare("b", DType::kQ8_0, {32});
    const std::string path = dir.File("a" + std::to_string(a) + ".gguf");
    ASSERT_TRUE(w.Begin(path).ok());
    const float three[3] = {1, 2, 3};
    ASSERT_TRUE(w.WriteTensorData(three, 12).ok());
    const std::vector<unsigned char> q8(34, 0);
    ASSERT_TRUE(w.WriteTensorData(q8.data(), 34).ok());
    ASSERT_TRUE(w.Finish().ok());
    const auto f = MustOpen(path);
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(f->alignment(), a);
    EXPECT_EQ(f->data_offset() % a, 0u);
    EXPECT_EQ(f->tensor_infos()[1].offset, (12 + a - 1) / a * a);
    float back[3];
    std::memcpy(back, f->tensors().at("a").data, 12);
    EXPECT_EQ(back[2], 3.0f);
  }
  GgufWriter bad(48);
  const Status s = bad.Begin(dir.File("bad.gguf"));
  EXPECT_THAT(s.message(), HasSubstr("alignment 48: want a power of two"));
  EXPECT_FALSE(std::filesystem::exists(dir.File("bad.gguf")));
}

TEST(GgufTest, WriterStreamsTensorsInPieces) {
  fixture::TempDir dir;
  GgufWriter w;
  w.Declare("m", DType::kF32, {4, 8});
  w.Declare("v", DType::kF16, {3});
  const std::string path = dir.File("p.gguf");
  ASSERT_TRUE(w.Begin(path).ok());
  const std::vector<float> rows = Values("m", 32, 1);
  for (int r = 0; r < 4; ++r) {
    ASSERT_TRUE(w.AppendTensorData(rows.data() + 8 * r, 32).ok());
  }
  const uint16_t v[3] = {1, 2, 3};
  EXPECT_THAT(w.AppendTensorData(v, 8).message(),
              HasSubstr("v: got 8 more bytes, want at most 6"));
  ASSERT_TRUE(w.AppendTensorData(v, 2).ok());
  EXPECT_THAT(w.WriteTensorData(v, 4).message(),
              HasSubstr("v: WriteTensorData after AppendTensorData wrote 2 "
                        "of its 6 bytes"));
  ASSERT_TRUE(w.AppendTensorData(v + 1, 4).ok());
  EXPECT_EQ(w.AppendTensorData(v, 2).code(), StatusCode::kFailedPrecondition);
  ASSERT_TRUE(w.Finish().ok());
  const auto f = MustOpen(path);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(std::memcmp(f->tensors().at("m").data, rows.data(), 128), 0);
  EXPECT_EQ(std::memcmp(f->tensors().at("v").data, v, 6), 0);
}

TEST(GgufTest, WriterRefusesMisuseAndRemovesPartialFiles) {
  fixture::TempDir dir;
  const std::string path = dir.File("w.gguf");
  {
    GgufWriter w;
    w.Declare("first", DType::kF32, {2});
    w.Declare("second", DType::kF32, {2});
    ASSERT_TRUE(w.Begin(path).ok());
    const float two[2] = {1, 2};
    EXPECT_THAT(w.WriteTensorData(two, 4).message(),
                HasSubstr("first: got 4 bytes, want 8"));
    ASSERT_TRUE(w.WriteTensorData(two, 8).ok());
    const Status unfinished = w.Finish();
    EXPECT_EQ(unfinished.code(), StatusCode::kFailedPrecondition);
    EXPECT_THAT(unfinished.message(), HasSubstr("second: declared but never"));
  }
  EXPECT_FALSE(std::filesystem::exists(path));
  const struct {
    std::vector<int64_t> shape;
    DType dtype;
    std::string name;
  } bad[] = {
      {{2, 48}, DType::kQ8_0, "ok_name"},  // 48 is not whole Q8_0 blocks
      {{0, 32}, DType::kQ8_0, "zero"},
      {{1, 1, 1, 1, 1}, DType::kF32, "five_dims"},
      {{}, DType::kF32, "no_dims"},
      {{-1}, DType::kF32, "negative"},
      {{4}, DType::kF32, std::string(64, 'n')},
      {{4}, DType::kF32, ""},
  };
  for (const auto& b : bad) {
    GgufWriter w;
    w.Declare(b.name, b.dtype, b.shape);
    const Status s = w.Begin(path);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << b.name;
    EXPECT_FALSE(std::filesystem::exists(path)) << b.name;
  }
  {
    GgufWriter w;
    w.Declare("t", DType::kF32, {1});
    w.Declare("t", DType::kF32, {1});
    EXPECT_THAT(w.Begin(path).message(), HasSubstr("t: tensor name"));
  }
  {
    GgufWriter w;
    w.SetUint32("general.alignment", 64);
    EXPECT_THAT(w.Begin(path).message(),
                HasSubstr("general.alignment is the writer's own key"));
  }
  {
    GgufWriter w;
    w.SetString("", "x");
    EXPECT_THAT(w.Begin(path).message(), HasSubstr("metadata key \"\""));
  }
  {
    GgufWriter w;
    w.Declare("a", DType::kF32, {1});
    ASSERT_TRUE(w.Begin(path).ok());
    w.SetString("late", "x");
    const float x = 0;
    EXPECT_THAT(w.WriteTensorData(&x, 4).message(),
                HasSubstr("metadata late set after Begin"));
    EXPECT_EQ(w.Begin(path).code(), StatusCode::kFailedPrecondition);
  }
  EXPECT_FALSE(std::filesystem::exists(path));
  GgufWriter w;
  EXPECT_THAT(w.Begin(dir.File("no/such/dir/x.gguf")).message(),
              HasSubstr("no/such/dir/x.gguf: cannot create"));
}

TEST(GgufTest, OpenMatchesFromBytesAndVersion2IsRead) {
  fixture::TempDir dir;
  GgufWriter w;
  w.SetString("general.architecture", "llama");
  w.Declare("x", DType::kF32, {2, 2});
  const std::string path = dir.File("o.gguf");
  ASSERT_TRUE(w.Begin(path).ok());
  const float x[4] = {1, 2, 3, 4};
  ASSERT_TRUE(w.WriteTensorData(x, 16).ok());
  ASSERT_TRUE(w.Finish().ok());
  std::string raw = fixture::ReadText(path);
  raw[4] = 2;  // version 2: the same little-endian layout
  auto mem = GgufFile::FromBytes(
      reinterpret_cast<const unsigned char*>(raw.data()), raw.size(), "v2");
  ASSERT_TRUE(mem.ok()) << mem.status().ToString();
  const auto f = MustOpen(path);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ((*mem)->version(), 2u);
  EXPECT_EQ((*mem)->path(), "v2");
  EXPECT_EQ((*mem)->data_offset(), f->data_offset());
  EXPECT_EQ((*mem)->tensors().at("x").shape, f->tensors().at("x").shape);
  EXPECT_EQ(*(*mem)->GetString("general.architecture"), "llama");
  const auto missing = GgufFile::Open(dir.File("absent.gguf"));
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_THAT(missing.status().message(), HasSubstr("absent.gguf"));
}

TEST(GgufTest, TypeNames) {
  EXPECT_EQ(GgmlTypeName(13), "Q5_K (13)");
  EXPECT_EQ(GgmlTypeName(30), "BF16 (30)");
  EXPECT_EQ(GgmlTypeName(4), "unknown (4)");
  EXPECT_EQ(GgmlTypeName(1000), "unknown (1000)");
  EXPECT_EQ(GgufValueTypeName(GgufValueType::kFloat64), "float64");
  EXPECT_EQ(GgufValueTypeName(GgufValueType(13)), "type 13");
  for (DType t : {DType::kF32, DType::kF16, DType::kBF16, DType::kQ8_0,
                  DType::kQ4_0, DType::kQ4_K, DType::kQ6_K}) {
    EXPECT_EQ(DTypeFromGgmlType(GgmlTypeOf(t)), t);
  }
  EXPECT_EQ(GgmlTypeOf(DType::kQ4_K), 12u);
  EXPECT_EQ(GgmlTypeOf(DType::kBF16), 30u);
  EXPECT_FALSE(DTypeFromGgmlType(13).has_value());
}

// --- The q/k permutation and the name mapping ------------------------------

TEST(GgufPermuteTest, HandCheckedSmallCase) {
  // convert_hf_to_gguf.py: w.reshape(n_head, 2, d/2, ...).swapaxes(1, 2).
  // Two heads of 4 rows: out = rows [0, 2, 1, 3, 4, 6, 5, 7] of in.
  std::vector<unsigned char> in(8 * 3), out(8 * 3), back(8 * 3);
  for (size_t r = 0; r < 8; ++r) {
    for (size_t c = 0; c < 3; ++c) in[3 * r + c] = uint8_t(10 * r + c);
  }
  PermuteQkRows(in.data(), 8, 3, 2, /*inverse=*/false, out.data());
  const int want[8] = {0, 2, 1, 3, 4, 6, 5, 7};
  for (size_t r = 0; r < 8; ++r) {
    for (size_t c = 0; c < 3; ++c) {
      EXPECT_EQ(out[3 * r + c], uint8_t(10 * want[r] + c)) << r;
    }
  }
  // One head of 8 rows: the halves [0..3] and [4..7] interleave.
  std::vector<unsigned char> h8(8), p8(8);
  for (int i = 0; i < 8; ++i) h8[size_t(i)] = uint8_t(i);
  PermuteQkRows(h8.data(), 8, 1, 1, false, p8.data());
  EXPECT_EQ(p8, (std::vector<unsigned char>{0, 4, 1, 5, 2, 6, 3, 7}));
  PermuteQkRows(out.data(), 8, 3, 2, /*inverse=*/true, back.data());
  EXPECT_EQ(back, in);
}

TEST(GgufPermuteTest, InverseUndoesItForEveryShape) {
  for (int64_t n_head : {1, 2, 3, 8}) {
    for (int64_t d : {2, 4, 6, 64}) {
      for (uint64_t row_bytes : {1u, 34u, 210u}) {
        const int64_t rows = n_head * d;
        std::vector<unsigned char> in(size_t(rows) * row_bytes), mid(in.size()),
            back(in.size());
        for (size_t i = 0; i < in.size(); ++i) in[i] = uint8_t(i * 131 + 7);
        PermuteQkRows(in.data(), rows, row_bytes, n_head, false, mid.data());
        PermuteQkRows(mid.data(), rows, row_bytes, n_head, true, back.data());
        EXPECT_EQ(back, in) << n_head << " " << d << " " << row_bytes;
        if (d > 2) {
          EXPECT_NE(mid, in);
        }
      }
    }
  }
}

TEST(GgufNamesTest, MappingRoundTripsAndRefusesOtherNames) {
  ModelConfig c = fixture::TinyQwen2Config();
  c.qk_norm = true;  // every block tensor kind at once
  c.tie_word_embeddings = false;
  std::vector<std::string> names = ExpectedTensorNames(c);
  ASSERT_GT(names.size(), 20u);
  for (const std::string& hf : names) {
    const std::optional<std::string> g = GgufTensorName(hf);
    ASSERT_TRUE(g.has_value()) << hf;
    EXPECT_EQ(HfTensorName(*g), hf);
  }
  EXPECT_EQ(GgufTensorName("model.layers.12.mlp.down_proj.weight"),
            "blk.12.ffn_down.weight");
  EXPECT_EQ(HfTensorName("blk.0.attn_k_norm.weight"),
            "model.layers.0.self_attn.k_norm.weight");
  EXPECT_EQ(HfTensorName("output.weight"), "lm_head.weight");
  for (const char* bad :
       {"blk.01.attn_q.weight", "blk..attn_q.weight", "blk.-1.attn_q.weight",
        "blk.1234567.attn_q.weight", "blk.0.attn_qkv.weight", "blk.0",
        "rope_freqs.weight", "token_embd", "blk.0.attn_q.weight.extra"}) {
    EXPECT_FALSE(HfTensorName(bad).has_value()) << bad;
  }
  EXPECT_FALSE(GgufTensorName("model.layers.0.self_attn.rotary_emb.inv_freq"));
}

// --- Whole models ------------------------------------------------------------

// A config whose every row length is whole Q4_K / Q6_K blocks.
ModelConfig LlamaConfig() {
  ModelConfig c = fixture::TinyConfig();
  c.hidden_size = 256;
  c.intermediate_size = 512;
  c.num_heads = 4;
  c.num_kv_heads = 2;
  c.head_dim = 64;
  c.vocab_size = 48;
  c.max_positions = 128;
  return c;
}

ModelConfig Qwen3Config() {
  ModelConfig c = LlamaConfig();
  c.architecture = "Qwen3ForCausalLM";
  c.model_type = "qwen3";
  c.qk_norm = true;
  c.head_dim = 128;  // != hidden / heads
  c.tie_word_embeddings = true;
  c.rms_norm_eps = 1e-6;
  c.rope_theta = 1000000.0;
  c.eos_token_ids = {45, 46};
  return c;
}

ModelConfig Qwen2Config() {
  ModelConfig c = LlamaConfig();
  c.architecture = "Qwen2ForCausalLM";
  c.model_type = "qwen2";
  c.qkv_bias = true;
  c.tie_word_embeddings = true;
  c.bos_token_id = -1;
  return c;
}

// A model's tensors held in memory: values, their bytes and views.
struct MemModel {
  ModelConfig config;
  std::map<std::string, std::vector<float>> values;
  std::map<std::string, std::vector<unsigned char>> bytes;
  std::map<std::string, TensorView> views;
};

std::vector<int64_t> ShapeOf(const ModelConfig& c, const std::string& n) {
  auto has = [&](const char* s) { return n.find(s) != std::string::npos; };
  const int64_t h = c.hidden_size, q = c.num_heads * c.head_dim,
                kv = c.num_kv_heads * c.head_dim, in = c.intermediate_size;
  if (has("embed_tokens") || has("lm_head")) return {c.vocab_size, h};
  if (has("q_proj.weight")) return {q, h};
  if (has("k_proj.weight") || has("v_proj.weight")) return {kv, h};
  if (has("o_proj")) return {h, q};
  if (has("q_proj.bias")) return {q};
  if (has("k_proj.bias") || has("v_proj.bias")) return {kv};
  if (has("q_norm") || has("k_norm")) return {c.head_dim};
  if (has("gate_proj") || has("up_proj")) return {in, h};
  if (has("down_proj")) return {h, in};
  return {h};
}

MemModel MakeModel(const ModelConfig& c, DType dtype, uint32_t seed = 1) {
  MemModel m;
  m.config = c;
  for (const std::string& name : ExpectedTensorNames(c)) {
    const std::vector<int64_t> shape = ShapeOf(c, name);
    m.values[name] = Values(name, fixture::ElementCount(shape), seed);
    std::vector<unsigned char>& b = m.bytes[name];
    b = EncodeWeights(m.values[name], dtype);
    m.values[name].clear();  // the stored values, exactly
    for (size_t i = 0; i < b.size() / size_t(DTypeSize(dtype)); ++i) {
      m.values[name].push_back(LoadAsFloat(b.data(), dtype, int64_t(i)));
    }
    m.views[name] = TensorView{name, dtype, shape, b.data(), b.size(), "mem"};
  }
  return m;
}

struct Loaded {
  std::unique_ptr<GgufFile> file;
  GgufModelParts parts;
};

Loaded WriteAndRead(const MemModel& m, DType type, const std::string& path,
                    const GgufExportOptions& options = {}) {
  Loaded out;
  const Status s = WriteGgufModel(m.config, m.views, type, path, options);
  EXPECT_TRUE(s.ok()) << s.ToString();
  if (!s.ok()) return out;
  out.file = MustOpen(path);
  if (out.file == nullptr) return out;
  StatusOr<GgufModelParts> parts = ReadGgufModel(*out.file);
  EXPECT_TRUE(parts.ok()) << parts.status().ToString();
  if (parts.ok()) out.parts = std::move(*parts);
  return out;
}

// What tensor `name` of m reads back as after a GGUF of `type`: each row
// quantized on its own (the permutation moves whole rows, so the reader's
// rows are the Hugging Face rows).
std::vector<unsigned char> ExpectedBytes(const MemModel& m,
                                         const std::string& name, DType type) {
  const std::vector<int64_t>& shape = m.views.at(name).shape;
  const std::vector<float>& x = m.values.at(name);
  const int64_t cols = shape.back();
  const int64_t rows = int64_t(x.size()) / cols;
  std::vector<unsigned char> out(size_t(rows * RowBytes(type, cols)));
  for (int64_t r = 0; r < rows; ++r) {
    EXPECT_TRUE(QuantizeRow(type, x.data() + r * cols, cols,
                            out.data() + r * RowBytes(type, cols))
                    .ok());
  }
  return out;
}

void ExpectSameModel(const MemModel& m, const Loaded& l, DType type) {
  EXPECT_TRUE(l.parts.config == m.config)
      << WriteModelConfig(l.parts.config) << "\nwant\n"
      << WriteModelConfig(m.config);
  ASSERT_EQ(l.parts.tensors.size(), m.views.size());
  for (const auto& [name, want] : m.views) {
    const TensorView& got = l.parts.tensors.at(name);
    const DType t = want.shape.size() == 2 ? type : DType::kF32;
    EXPECT_EQ(got.name, name);
    EXPECT_EQ(got.dtype, t) << name;
    EXPECT_EQ(got.shape, want.shape) << name;
    const std::vector<unsigned char> bytes = ExpectedBytes(m, name, t);
    ASSERT_EQ(got.bytes, bytes.size()) << name;
    EXPECT_EQ(std::memcmp(got.data, bytes.data(), bytes.size()), 0)
        << name << " in " << DTypeName(type);
  }
}

TEST(GgufModelTest, LlamaRoundTripsInEveryType) {
  fixture::TempDir dir;
  const MemModel m = MakeModel(LlamaConfig(), DType::kBF16);
  for (DType t : {DType::kF32, DType::kF16, DType::kBF16, DType::kQ8_0,
                  DType::kQ4_0, DType::kQ4_K, DType::kQ6_K}) {
    SCOPED_TRACE(DTypeName(t));
    const Loaded l = WriteAndRead(m, t, dir.File("m.gguf"));
    ASSERT_NE(l.file, nullptr);
    ExpectSameModel(m, l, t);
    // Un-permuted q/k live in owned buffers; everything else in the map.
    EXPECT_EQ(l.parts.owned.size(), 4u);  // 2 layers x q, k
    const TensorView& v =
        l.parts.tensors.at("model.layers.0.self_attn.v_proj.weight");
    EXPECT_GE(v.data, l.file->base());
  }
}

TEST(GgufModelTest, LlamaFileHoldsWhatLlamaCppsConverterWrites) {
  fixture::TempDir dir;
  MemModel m = MakeModel(LlamaConfig(), DType::kF32);
  const std::string path = dir.File("l.gguf");
  GgufExportOptions o;
  o.name = "tiny test";
  ASSERT_TRUE(WriteGgufModel(m.config, m.views, DType::kF32, path, o).ok());
  const auto f = MustOpen(path);
  ASSERT_NE(f, nullptr);
  // q rows permuted per head (n_head 4), k rows per KV head (n_head_kv 2).
  for (const auto& [name, heads] : std::vector<std::pair<std::string, int64_t>>{
           {"attn_q", 4}, {"attn_k", 2}}) {
    const TensorView& g = f->tensors().at("blk.1." + name + ".weight");
    const std::vector<float>& hf = m.values.at("model.layers.1.self_attn." +
                                               name.substr(5) + "_proj.weight");
    const int64_t d = 64, cols = 256;
    for (int64_t row = 0; row < heads * d; ++row) {
      const int64_t h = row / d, i = (row % d) / 2, j = row % 2;
      const int64_t src = h * d + j * (d / 2) + i;
      EXPECT_EQ(std::memcmp(g.data + row * cols * 4, &hf[size_t(src * cols)],
                            size_t(cols) * 4),
                0)
          << name << " row " << row;
    }
  }
  // v is not permuted.
  EXPECT_EQ(
      std::memcmp(f->tensors().at("blk.1.attn_v.weight").data,
                  m.values.at("model.layers.1.self_attn.v_proj.weight").data(),
                  128 * 256 * 4),
      0);
  EXPECT_EQ(*f->GetString("general.architecture"), "llama");
  EXPECT_EQ(*f->GetString("general.name"), "tiny test");
  EXPECT_EQ(*f->GetUint("general.file_type"), 0u);
  EXPECT_FALSE(f->Has("general.quantization_version"));
  EXPECT_EQ(*f->GetUint("llama.block_count"), 2u);
  EXPECT_EQ(*f->GetUint("llama.embedding_length"), 256u);
  EXPECT_EQ(*f->GetUint("llama.feed_forward_length"), 512u);
  EXPECT_EQ(*f->GetUint("llama.attention.head_count"), 4u);
  EXPECT_EQ(*f->GetUint("llama.attention.head_count_kv"), 2u);
  EXPECT_EQ(*f->GetUint("llama.rope.dimension_count"), 64u);
  EXPECT_EQ(*f->GetUint("llama.context_length"), 128u);
  EXPECT_EQ(*f->GetFloat("llama.attention.layer_norm_rms_epsilon"),
            double(1e-5f));
  EXPECT_EQ(*f->GetFloat("llama.rope.freq_base"), 10000.0);
  EXPECT_EQ(*f->GetUint("tokenizer.ggml.eos_token_id"), 2u);
  EXPECT_EQ(*f->GetUint("tokenizer.ggml.bos_token_id"), 1u);
  EXPECT_EQ(f->tensor_infos().front().name, "token_embd.weight");
  EXPECT_EQ(f->tensor_infos().back().name, "output.weight");
  EXPECT_EQ(f->tensor_infos()[1].name, "blk.0.attn_norm.weight");

  // A quantized file says so.
  ASSERT_TRUE(WriteGgufModel(m.config, m.views, DType::kQ4_K, path).ok());
  const auto q = MustOpen(path);
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(*q->GetUint("general.file_type"), 14u);
  EXPECT_EQ(*q->GetUint("general.quantization_version"), 2u);
  EXPECT_EQ(q->tensors().at("blk.0.ffn_norm.weight").dtype, DType::kF32);
  EXPECT_EQ(q->tensors().at("token_embd.weight").dtype, DType::kQ4_K);
}

TEST(GgufModelTest, Qwen2AndQwen3RoundTrip) {
  fixture::TempDir dir;
  for (const ModelConfig& c : {Qwen2Config(), Qwen3Config()}) {
    SCOPED_TRACE(c.model_type);
    const MemModel m = MakeModel(c, DType::kF16);
    for (DType t : {DType::kF16, DType::kQ8_0, DType::kQ6_K}) {
      const Loaded l = WriteAndRead(m, t, dir.File("q.gguf"));
      ASSERT_NE(l.file, nullptr);
      ExpectSameModel(m, l, t);
      EXPECT_TRUE(l.parts.owned.empty());  // no permutation outside llama
      EXPECT_EQ(*l.file->GetString("general.architecture"), c.model_type);
      EXPECT_FALSE(l.file->tensors().count("output.weight"));  // tied
    }
  }
}

TEST(GgufModelTest, Llama3RopeScalingTravelsAsRopeFreqs) {
  fixture::TempDir dir;
  ModelConfig c = LlamaConfig();
  c.head_dim = 16;  // wavelengths on both sides of the smooth band
  c.num_heads = 16;
  c.num_kv_heads = 4;
  c.rope_theta = 10000.0;
  c.rope_scaling.type = RopeScaling::Type::kLlama3;
  c.rope_scaling.factor = 8.0;
  c.rope_scaling.low_freq_factor = 1.0;
  c.rope_scaling.high_freq_factor = 4.0;
  c.rope_scaling.original_max_positions = 4096;
  c.eos_token_ids = {2, 40, 41};
  const MemModel m = MakeModel(c, DType::kBF16);
  const Loaded l = WriteAndRead(m, DType::kQ8_0, dir.File("r.gguf"));
  ASSERT_NE(l.file, nullptr);
  ExpectSameModel(m, l, DType::kQ8_0);
  const TensorView& f = l.file->tensors().at("rope_freqs.weight");
  ASSERT_EQ(f.shape, (std::vector<int64_t>{8}));
  std::vector<float> got(8);
  std::memcpy(got.data(), f.data, 32);
  // wavelength 2 pi 10000^(i/8): <= 1024 -> 1, > 4096 -> 8, between smooth.
  for (int i = 0; i < 5; ++i) EXPECT_EQ(got[size_t(i)], 1.0f) << i;
  EXPECT_GT(got[5], 1.0f);
  EXPECT_LT(got[5], 8.0f);
  EXPECT_EQ(got[6], 8.0f);
  EXPECT_EQ(got[7], 8.0f);
  EXPECT_EQ(*l.file->GetUint("tokenizer.ggml.eot_token_id"), 40u);
  EXPECT_EQ(*l.file->GetUint("tokenizer.ggml.eom_token_id"), 41u);
  EXPECT_EQ(l.file->tensor_infos()[1].name, "rope_freqs.weight");
}

TEST(GgufModelTest, RowsThatAreNotWholeBlocksFallBackOrAreRefused) {
  fixture::TempDir dir;
  ModelConfig c = LlamaConfig();
  c.intermediate_size = 352;  // down_proj rows: 11 blocks of 32, not 256
  const MemModel m = MakeModel(c, DType::kBF16);
  const std::string path = dir.File("f.gguf");
  ASSERT_TRUE(WriteGgufModel(c, m.views, DType::kQ4_K, path).ok());
  const auto f = MustOpen(path);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->tensors().at("blk.0.ffn_down.weight").dtype, DType::kQ4_0);
  EXPECT_EQ(f->tensors().at("blk.0.ffn_up.weight").dtype, DType::kQ4_K);
  ASSERT_TRUE(WriteGgufModel(c, m.views, DType::kQ6_K, path).ok());
  EXPECT_EQ(MustOpen(path)->tensors().at("blk.1.ffn_down.weight").dtype,
            DType::kQ8_0);
  c.intermediate_size = 24;  // not even whole blocks of 32: F16
  const MemModel small = MakeModel(c, DType::kBF16);
  ASSERT_TRUE(WriteGgufModel(c, small.views, DType::kQ4_K, path).ok());
  EXPECT_EQ(MustOpen(path)->tensors().at("blk.1.ffn_down.weight").dtype,
            DType::kF16);
  GgufExportOptions strict;
  strict.fallback = false;
  std::filesystem::remove(path);
  const Status s = WriteGgufModel(c, small.views, DType::kQ8_0, path, strict);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(),
              HasSubstr("model.layers.0.mlp.down_proj.weight: row length 24 "
                        "is not a multiple of 32, the Q8_0 block size"));
  EXPECT_FALSE(std::filesystem::exists(path));
}

TEST(GgufModelTest, WriterRefusesBadWeightsAndLeavesNoFile) {
  fixture::TempDir dir;
  MemModel m = MakeModel(LlamaConfig(), DType::kF32);
  const std::string name = "model.layers.1.mlp.up_proj.weight";
  const float nan = std::nanf("");
  std::memcpy(m.bytes[name].data() + (3 * 256 + 17) * 4, &nan, 4);
  const std::string path = dir.File("bad.gguf");
  Status s = WriteGgufModel(m.config, m.views, DType::kQ8_0, path);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(),
              HasSubstr(path + ": " + name + ": row 3: element 17: got nan"));
  EXPECT_FALSE(std::filesystem::exists(path));
  // Missing and unexpected tensors, and a wrong shape.
  MemModel ok = MakeModel(LlamaConfig(), DType::kF32);
  auto views = ok.views;
  views.erase("model.norm.weight");
  EXPECT_THAT(WriteGgufModel(ok.config, views, DType::kQ8_0, path).message(),
              HasSubstr("model.norm.weight: missing tensor"));
  views = ok.views;
  views["model.layers.0.self_attn.o_proj.bias"] = views["model.norm.weight"];
  EXPECT_THAT(WriteGgufModel(ok.config, views, DType::kQ8_0, path).message(),
              HasSubstr("o_proj.bias: unexpected tensor"));
  views = ok.views;
  views["model.norm.weight"].shape = {128};
  EXPECT_THAT(WriteGgufModel(ok.config, views, DType::kQ8_0, path).message(),
              HasSubstr("model.norm.weight: shape [128] of F32 in 1024 bytes, "
                        "want [256]"));
  ModelConfig four = ok.config;
  four.eos_token_ids = {1, 2, 3, 4};
  EXPECT_EQ(WriteGgufModel(four, ok.views, DType::kQ8_0, path).code(),
            StatusCode::kUnimplemented);
  EXPECT_FALSE(std::filesystem::exists(path));
}

// GgufExportOptions::tokenizer: padded to the vocabulary with unused
// "[PADn]" tokens; more tokens than the vocabulary, a type list of another
// length, or a BOS / EOS the config does not name are refused, leaving no
// file.
TEST(GgufModelTest, TokenizerKeysArePaddedAndChecked) {
  fixture::TempDir dir;
  MemModel m = MakeModel(LlamaConfig(), DType::kF32);
  GgufExportOptions o;
  o.tokenizer.emplace();
  GgufTokenizerKeys& t = *o.tokenizer;
  t.model = "gpt2";
  t.pre = "llama-bpe";
  t.tokens = {"a", "b", "ab"};
  t.token_types = {1, 1, 1};
  t.merges = {"a b"};
  const std::string path = dir.File("tok.gguf");
  ASSERT_TRUE(WriteGgufModel(m.config, m.views, DType::kQ8_0, path, o).ok());
  auto f = GgufFile::Open(path);
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  auto tokens = (*f)->GetStringArray("tokenizer.ggml.tokens");
  ASSERT_TRUE(tokens.ok());
  ASSERT_EQ(int64_t(tokens->size()), m.config.vocab_size);
  EXPECT_EQ((*tokens)[2], "ab");
  EXPECT_EQ((*tokens)[3], "[PAD3]");
  auto types = (*f)->GetIntArray("tokenizer.ggml.token_type");
  ASSERT_TRUE(types.ok());
  EXPECT_EQ((*types)[2], 1);
  EXPECT_EQ((*types)[3], 5);
  EXPECT_EQ(*(*f)->GetString("tokenizer.ggml.pre"), "llama-bpe");
  f->reset();
  std::filesystem::remove(path);

  GgufExportOptions big = o;
  big.tokenizer->tokens.assign(size_t(m.config.vocab_size) + 1, "x");
  big.tokenizer->token_types.assign(size_t(m.config.vocab_size) + 1, 1);
  EXPECT_THAT(
      WriteGgufModel(m.config, m.views, DType::kQ8_0, path, big).message(),
      HasSubstr(
          "tokenizer.ggml.tokens: " + std::to_string(m.config.vocab_size + 1) +
          " tokens, more than the model's vocab_size"));
  GgufExportOptions short_types = o;
  short_types.tokenizer->token_types.pop_back();
  EXPECT_THAT(WriteGgufModel(m.config, m.views, DType::kQ8_0, path, short_types)
                  .message(),
              HasSubstr("tokenizer.ggml.token_type: 2 entries, want one per "
                        "token (3)"));
  GgufExportOptions bos = o;
  bos.tokenizer->add_bos = true;
  bos.tokenizer->bos_id = m.config.bos_token_id + 1;
  EXPECT_THAT(
      WriteGgufModel(m.config, m.views, DType::kQ8_0, path, bos).message(),
      HasSubstr("tokenizer.ggml.add_bos_token: the tokenizer adds token"));
  GgufExportOptions eos = o;
  eos.tokenizer->add_eos = true;
  eos.tokenizer->eos_id = 0;
  ModelConfig no_eos = m.config;
  no_eos.eos_token_ids.clear();
  EXPECT_THAT(
      WriteGgufModel(no_eos, m.views, DType::kQ8_0, path, eos).message(),
      HasSubstr("tokenizer.ggml.add_eos_token"));
  EXPECT_FALSE(std::filesystem::exists(path));
}

TEST(GgufModelTest, SynthesizedModelThroughGgufKeepsEveryWeight) {
  // `model synth`'s tiny preset (bf16, FFN 352): as a BF16 GGUF every byte
  // comes back; as Q8_0 every weight within its block's bound.
  fixture::TempDir dir;
  StatusOr<ModelConfig> preset = SynthPreset("tiny");
  ASSERT_TRUE(preset.ok());
  SynthOptions so;
  so.seed = 5;
  ASSERT_TRUE(SynthesizeModel(*preset, so, dir.path()).ok());
  LoadOptions lo;
  lo.write_digest_cache = false;
  StatusOr<std::unique_ptr<Model>> model = Model::Load(dir.path(), lo);
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  const Model& mdl = **model;
  for (DType t : {DType::kBF16, DType::kQ8_0}) {
    const std::string path = dir.File("tiny.gguf");
    ASSERT_TRUE(WriteGgufModel(mdl, t, path).ok());
    const auto f = MustOpen(path);
    ASSERT_NE(f, nullptr);
    StatusOr<GgufModelParts> parts = ReadGgufModel(*f);
    ASSERT_TRUE(parts.ok()) << parts.status().ToString();
    EXPECT_TRUE(parts->config == mdl.config());
    for (const auto& [name, want] : mdl.tensors()) {
      const TensorView& got = parts->tensors.at(name);
      ASSERT_EQ(got.shape, want.shape) << name;
      if (t == DType::kBF16 && want.shape.size() == 2) {
        ASSERT_EQ(got.bytes, want.bytes);
        EXPECT_EQ(std::memcmp(got.data, want.data, want.bytes), 0) << name;
        continue;
      }
      const int64_t cols = want.shape.back();
      const int64_t rows = want.shape.size() == 2 ? want.shape[0] : 1;
      std::vector<float> y(static_cast<size_t>(cols));
      for (int64_t r = 0; r < rows; ++r) {
        const unsigned char* row = got.data + r * RowBytes(got.dtype, cols);
        if (IsBlockQuantized(got.dtype)) {
          quant::DequantizeRow(got.dtype, row, cols, y.data());
        } else {
          for (int64_t i = 0; i < cols; ++i)
            y[i] = LoadAsFloat(row, got.dtype, i);
        }
        for (int64_t i = 0; i < cols; ++i) {
          const float x = LoadAsFloat(want.data + r * cols * 2, want.dtype, i);
          if (!IsBlockQuantized(got.dtype)) {
            ASSERT_EQ(y[size_t(i)], x) << name;
            continue;
          }
          quant::WeightUnit u;
          quant::DecodeUnit(got.dtype, row, i / 32, &u);
          ASSERT_LE(std::fabs(y[size_t(i)] - x), 0.57 * std::fabs(u.d) + 1e-6)
              << name << " row " << r << " col " << i;
        }
      }
    }
  }
}

// --- Model::Load of GGUF files and `model quantize` -------------------------

// The tiny preset synthesised into dir/hf, with a tokenizer file to copy.
std::unique_ptr<Model> SynthTiny(const fixture::TempDir& dir) {
  StatusOr<ModelConfig> preset = SynthPreset("tiny");
  EXPECT_TRUE(preset.ok());
  SynthOptions so;
  so.seed = 3;
  const std::string hf = dir.File("hf");
  EXPECT_TRUE(SynthesizeModel(*preset, so, hf).ok());
  fixture::WriteText(hf + "/tokenizer.json", "{\"model\": {}}");
  StatusOr<std::unique_ptr<Model>> m = Model::Load(hf);
  EXPECT_TRUE(m.ok()) << m.status().ToString();
  return m.ok() ? std::move(*m) : nullptr;
}

TEST(GgufLoadTest, AFileOrTheOneGgufInADirectoryLoads) {
  fixture::TempDir dir;
  const std::unique_ptr<Model> hf = SynthTiny(dir);
  ASSERT_NE(hf, nullptr);
  const std::string q = dir.File("q");
  std::filesystem::create_directories(q);
  StatusOr<QuantizeResult> r =
      QuantizeModelDir(dir.File("hf"), DType::kQ8_0, q + "/m.gguf");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->copied, std::vector<std::string>{"tokenizer.json"});
  EXPECT_EQ(r->tensors, int64_t(hf->tensors().size()));
  EXPECT_EQ(fixture::ReadText(q + "/tokenizer.json"), "{\"model\": {}}");

  StatusOr<std::unique_ptr<Model>> by_file = Model::Load(q + "/m.gguf");
  ASSERT_TRUE(by_file.ok()) << by_file.status().ToString();
  EXPECT_EQ((*by_file)->dir(), q);
  EXPECT_EQ((*by_file)->source(), q + "/m.gguf");
  EXPECT_TRUE((*by_file)->config() == hf->config());
  EXPECT_FALSE((*by_file)->digest().from_cache);
  // The quantized model is another model: another digest.
  EXPECT_NE((*by_file)->digest().root, hf->digest().root);
  EXPECT_EQ((*by_file)->block(0).q_proj.dtype, DType::kQ8_0);
  EXPECT_EQ((*by_file)->block(0).input_norm.dtype, DType::kF32);
  // The cache is the file's own, and the next load reads it.
  EXPECT_TRUE(std::filesystem::exists(q + "/" + GgufDigestCacheName("m.gguf")));
  StatusOr<std::unique_ptr<Model>> by_dir = Model::Load(q);
  ASSERT_TRUE(by_dir.ok()) << by_dir.status().ToString();
  EXPECT_TRUE((*by_dir)->digest().from_cache);
  EXPECT_EQ((*by_dir)->digest().root, (*by_file)->digest().root);
  LoadOptions verify;
  verify.verify_digest = true;
  StatusOr<std::unique_ptr<Model>> verified = Model::Load(q, verify);
  ASSERT_TRUE(verified.ok()) << verified.status().ToString();
  EXPECT_EQ((*verified)->digest().root, (*by_file)->digest().root);

  // The digest changes with any weight byte: flip one in the file (the
  // cache is keyed by size and mtime, so --verify-style re-hashing sees it).
  {
    const std::string path = q + "/m.gguf";
    std::string bytes = fixture::ReadText(path);
    bytes[bytes.size() - 1] = char(bytes[bytes.size() - 1] ^ 1);
    fixture::WriteText(path, bytes);
  }
  LoadOptions fresh;
  fresh.write_digest_cache = false;
  std::filesystem::remove(q + "/" + GgufDigestCacheName("m.gguf"));
  StatusOr<std::unique_ptr<Model>> flipped = Model::Load(q, fresh);
  ASSERT_TRUE(flipped.ok()) << flipped.status().ToString();
  EXPECT_NE((*flipped)->digest().root, (*by_file)->digest().root);
}

TEST(GgufLoadTest, AmbiguousOrWrongPathsNameTheProblem) {
  fixture::TempDir dir;
  ASSERT_NE(SynthTiny(dir), nullptr);
  const std::string q = dir.File("q");
  std::filesystem::create_directories(q);
  ASSERT_TRUE(
      QuantizeModelDir(dir.File("hf"), DType::kQ4_0, q + "/a.gguf").ok());
  ASSERT_TRUE(
      QuantizeModelDir(dir.File("hf"), DType::kQ8_0, q + "/b.gguf").ok());
  Status s = Model::Load(q).status();
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(),
              HasSubstr("2 GGUF files (a.gguf, b.gguf); pass one"));
  s = Model::Load(q + "/tokenizer.json").status();
  EXPECT_THAT(s.message(), HasSubstr("a file that is not a .gguf"));
  // A directory with config.json is a Hugging Face model, GGUF or not.
  ASSERT_TRUE(QuantizeModelDir(dir.File("hf"), DType::kQ4_0,
                               dir.File("hf") + "/model.gguf")
                  .ok());
  StatusOr<std::unique_ptr<Model>> hf = Model::Load(dir.File("hf"));
  ASSERT_TRUE(hf.ok());
  EXPECT_EQ((*hf)->block(0).q_proj.dtype, DType::kBF16);
  // An empty directory: config.json's error, as before GGUF.
  std::filesystem::create_directories(dir.File("empty"));
  EXPECT_THAT(Model::Load(dir.File("empty")).status().message(),
              HasSubstr("config.json"));
}

TEST(GgufLoadTest, QuantizeRefusesWhatItCannotDoAndKeepsNoWrongTokenizer) {
  fixture::TempDir dir;
  ASSERT_NE(SynthTiny(dir), nullptr);
  const std::string hf = dir.File("hf");
  EXPECT_EQ(QuantTypeFromName("Q4_K"), DType::kQ4_K);
  EXPECT_EQ(QuantTypeFromName("q6_k"), DType::kQ6_K);
  EXPECT_EQ(QuantTypeFromName("bf16"), std::nullopt);
  EXPECT_EQ(QuantTypeFromName("q5_1"), std::nullopt);
  EXPECT_THAT(
      QuantizeModelDir(hf, DType::kBF16, dir.File("x.gguf")).status().message(),
      HasSubstr("type: BF16, want one of q8_0"));
  EXPECT_THAT(
      QuantizeModelDir(hf, DType::kQ4_0, dir.File("x.bin")).status().message(),
      HasSubstr("must end in .gguf"));
  ASSERT_TRUE(QuantizeModelDir(hf, DType::kQ4_0, dir.File("x.gguf")).ok());
  EXPECT_THAT(
      QuantizeModelDir(dir.File("x.gguf"), DType::kQ4_0, dir.File("y.gguf"))
          .status()
          .message(),
      HasSubstr("already a GGUF file"));
  // Another model's tokenizer beside the output is refused, not replaced.
  const std::string other = dir.File("other");
  std::filesystem::create_directories(other);
  fixture::WriteText(other + "/tokenizer.json", "{\"other\": 1}");
  const Status s =
      QuantizeModelDir(hf, DType::kQ4_0, other + "/m.gguf").status();
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(s.message(), HasSubstr("already exists and differs"));
  EXPECT_EQ(fixture::ReadText(other + "/tokenizer.json"), "{\"other\": 1}");
}

}  // namespace
}  // namespace layerproof::kernels::model
