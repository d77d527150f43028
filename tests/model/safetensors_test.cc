// kernels/model/safetensors.h: the writer and the reader on well-formed
// files (malformed ones are in malformed_model_test.cc).

#include "kernels/model/safetensors.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "tests/model/model_fixture.h"

namespace layerproof::kernels::model {
namespace {

using ::testing::HasSubstr;

std::unique_ptr<SafetensorsFile> MustOpen(const std::string& path) {
  StatusOr<std::unique_ptr<SafetensorsFile>> f = SafetensorsFile::Open(path);
  EXPECT_TRUE(f.ok()) << f.status().ToString();
  return f.ok() ? std::move(*f) : nullptr;
}

TEST(SafetensorsTest, WriterReaderRoundTrip) {
  fixture::TempDir dir;
  const std::vector<fixture::TestTensor> tensors = {
      fixture::MakeTensor("z.bf16", DType::kBF16, {3, 5}, 1),
      fixture::MakeTensor("a.f32", DType::kF32, {7}, 2),
      fixture::MakeTensor("m.f16", DType::kF16, {2, 1, 3}, 3),
      fixture::MakeTensor("scalar", DType::kF32, {}, 4),
  };
  SafetensorsWriter w;
  for (const auto& t : tensors) w.Declare(t.name, t.dtype, t.shape);
  w.SetMetadata("format", "pt");
  w.SetMetadata("note", "tiny \"quoted\" \xc3\xa9");
  const std::string path = dir.File("x.safetensors");
  ASSERT_TRUE(w.Begin(path).ok());
  for (const auto& t : tensors) {
    ASSERT_TRUE(w.WriteTensorData(t.bytes.data(), t.bytes.size()).ok());
  }
  ASSERT_TRUE(w.Finish().ok());

  const auto f = MustOpen(path);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->path(), path);
  EXPECT_EQ(f->metadata().at("format"), "pt");
  EXPECT_EQ(f->metadata().at("note"), "tiny \"quoted\" \xc3\xa9");
  ASSERT_EQ(f->tensors().size(), tensors.size());
  std::vector<std::string> names;
  for (const auto& [name, view] : f->tensors()) names.push_back(name);
  EXPECT_EQ(names,
            (std::vector<std::string>{"a.f32", "m.f16", "scalar", "z.bf16"}));
  for (const auto& t : tensors) {
    const TensorView& v = f->tensors().at(t.name);
    EXPECT_EQ(v.name, t.name);
    EXPECT_EQ(v.dtype, t.dtype);
    EXPECT_EQ(v.shape, t.shape);
    EXPECT_EQ(v.file, path);
    ASSERT_EQ(v.bytes, t.bytes.size());
    EXPECT_EQ(std::memcmp(v.data, t.bytes.data(), t.bytes.size()), 0) << t.name;
  }
  // The header is padded so the data section starts 8-byte aligned.
  const std::string raw = fixture::ReadText(path);
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | uint8_t(raw[size_t(i)]);
  EXPECT_EQ(n % 8, 0u);
}

TEST(SafetensorsTest, EmptyTensorsAreAccepted) {
  fixture::TempDir dir;
  const std::vector<fixture::TestTensor> tensors = {
      fixture::MakeTensor("empty", DType::kBF16, {0, 4}, 1),
      fixture::MakeTensor("full", DType::kF32, {4}, 2),
      fixture::MakeTensor("empty2", DType::kF16, {3, 0}, 3),
  };
  fixture::WriteSafetensors(dir.File("e.safetensors"), tensors);
  const auto f = MustOpen(dir.File("e.safetensors"));
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->tensors().at("empty").bytes, 0u);
  EXPECT_EQ(f->tensors().at("empty").shape, (std::vector<int64_t>{0, 4}));
  EXPECT_EQ(f->tensors().at("full").bytes, 16u);
}

TEST(SafetensorsTest, FromBytesAcceptsGapsPaddingAndAnyOrder) {
  // Tensors out of offset order with a gap between them, and a header
  // padded with trailing spaces.
  const std::string header =
      R"({"b":{"dtype":"F32","shape":[2],"data_offsets":[16,24]},)"
      R"("a":{"dtype":"BF16","shape":[2,2],"data_offsets":[0,8]},)"
      R"("__metadata__":{"k":"v"}}    )";
  const std::string image = fixture::RawSafetensors(header, 32, '\x01');
  const auto* bytes = reinterpret_cast<const unsigned char*>(image.data());
  StatusOr<std::unique_ptr<SafetensorsFile>> f =
      SafetensorsFile::FromBytes(bytes, image.size(), "mem");
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  const unsigned char* data = bytes + 8 + header.size();
  EXPECT_EQ((*f)->tensors().at("a").data, data);
  EXPECT_EQ((*f)->tensors().at("b").data, data + 16);
  EXPECT_EQ((*f)->tensors().at("b").bytes, 8u);
  EXPECT_EQ((*f)->metadata().at("k"), "v");
  EXPECT_EQ((*f)->path(), "mem");
}

TEST(SafetensorsTest, EmptyHeaderObjectIsAValidFile) {
  const std::string image = fixture::RawSafetensors("{}", 0);
  StatusOr<std::unique_ptr<SafetensorsFile>> f = SafetensorsFile::FromBytes(
      reinterpret_cast<const unsigned char*>(image.data()), image.size(), "m");
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_TRUE((*f)->tensors().empty());
}

TEST(SafetensorsTest, OpenMissingFileIsNotFound) {
  fixture::TempDir dir;
  StatusOr<std::unique_ptr<SafetensorsFile>> f =
      SafetensorsFile::Open(dir.File("absent.safetensors"));
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.status().code(), StatusCode::kNotFound);
  EXPECT_THAT(f.status().message(), HasSubstr("absent.safetensors"));
}

TEST(SafetensorsTest, WriterRefusesWrongSizeOrderAndMissingData) {
  fixture::TempDir dir;
  const std::string path = dir.File("w.safetensors");
  {
    SafetensorsWriter w;
    w.Declare("first", DType::kF32, {2});
    w.Declare("second", DType::kBF16, {3});
    ASSERT_TRUE(w.Begin(path).ok());
    const float two[2] = {1, 2};
    const Status wrong = w.WriteTensorData(two, 4);
    EXPECT_EQ(wrong.code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(wrong.message(), HasSubstr("first: got 4 bytes, want 8"));
    ASSERT_TRUE(w.WriteTensorData(two, 8).ok());
    const Status unfinished = w.Finish();
    EXPECT_EQ(unfinished.code(), StatusCode::kFailedPrecondition);
    EXPECT_THAT(unfinished.message(), HasSubstr("second"));
  }
  // Destroyed before a successful Finish: no partial file is left behind.
  EXPECT_FALSE(std::filesystem::exists(path));

  SafetensorsWriter w;
  w.Declare("only", DType::kF16, {1});
  ASSERT_TRUE(w.Begin(path).ok());
  const uint16_t one = 0x3C00;
  ASSERT_TRUE(w.WriteTensorData(&one, 2).ok());
  EXPECT_EQ(w.WriteTensorData(&one, 2).code(), StatusCode::kFailedPrecondition);
  ASSERT_TRUE(w.Finish().ok());
  EXPECT_EQ(w.Finish().code(), StatusCode::kFailedPrecondition);
  EXPECT_TRUE(std::filesystem::exists(path));
}

TEST(SafetensorsTest, WriterRefusesBadDeclarations) {
  fixture::TempDir dir;
  {
    SafetensorsWriter w;
    w.Declare("t", DType::kF32, {1});
    w.Declare("t", DType::kF32, {1});
    const Status s = w.Begin(dir.File("dup.safetensors"));
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(s.message(), HasSubstr("t: tensor name"));
  }
  {
    SafetensorsWriter w;
    w.Declare("neg", DType::kF32, {2, -1});
    const Status s = w.Begin(dir.File("neg.safetensors"));
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(s.message(), HasSubstr("neg: shape"));
  }
  {
    SafetensorsWriter w;
    w.Declare("a", DType::kF32, {1});
    ASSERT_TRUE(w.Begin(dir.File("late.safetensors")).ok());
    w.Declare("late", DType::kF32, {1});
    const float x = 0;
    const Status s = w.WriteTensorData(&x, 4);
    EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition);
    EXPECT_THAT(s.message(), HasSubstr("Declare(late) after Begin"));
  }
  SafetensorsWriter w;
  const Status s = w.Begin(dir.File("no/such/dir/x.safetensors"));
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("no/such/dir/x.safetensors"));
}

}  // namespace
}  // namespace layerproof::kernels::model
